/* core/kind/pytest/order.c and the failing-first process in a history
 * (issue 31): the cases of order dependence, the checks' search for the
 * polluter (or a brittle test's setter), and a history that keeps
 * pytest's order whatever process reported first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kind/pytest/order.h"

/* One attempt (or, with `first`, the failing-first process) that
 * collected `ids` in that order and reported each: failed when its
 * letter in `fails` is 'f', passed otherwise. */
static void add(tpuci__history_t *h, int first, const char *const *ids, size_t n,
                const char *fails, int selected) {
  tpuci__junit_attempt_t a;
  tpuci__junit_t j;
  size_t i;
  memset(&a, 0, sizeof(a));
  memset(&j, 0, sizeof(j));
  a.outcome = strchr(fails, 'f') ? TPUCI_OUTCOME_FAILED : TPUCI_OUTCOME_PASSED;
  a.exit_code = a.outcome == TPUCI_OUTCOME_FAILED;
  a.first = first;
  a.has_collection = 1;
  a.collected = ids;
  a.n_collected = n;
  if (selected) {
    a.selected = ids;
    a.n_selected = n;
  }
  j.items = calloc(n, sizeof(*j.items));
  j.len = j.cap = n;
  for (i = 0; i < n; i++) {
    j.items[i].id = tpuci__strdup(ids[i]);
    j.items[i].classname = tpuci__strdup("");
    j.items[i].name = tpuci__strdup("");
    j.items[i].line = -1;
    j.items[i].outcome = fails[i] == 'f' ? TPUCI_TEST_FAILED : TPUCI_TEST_PASSED;
    if (fails[i] == 'f') j.items[i].message = tpuci__strdup("AssertionError: dirty");
  }
  tpuci__history_add(h, &a, &j);
  tpuci__junit_free(&j);
}

static const char *const suite[] = {"t/a.py::test_p", "t/a.py::test_by", "t/b.py::test_other",
                                    "t/b.py::test_victim"};

/* Runs the search for `c` against a suite in which the victim fails
 * after every test of `culprits` (NULL-ended) ran before it; returns
 * the checks it took. */
static int search(const tpuci__order_case_t *c, tpuci__order_search_t *s,
                  const char *const *culprits) {
  tpuci__strv_t run = {0};
  int checks = 0;
  tpuci__order_search_init(s, c);
  while (tpuci__order_search_next(s, c, &run)) {
    size_t k, i;
    int all = 1;
    assert_string_equal(run.items[run.len - 1], c->id);
    for (k = 0; culprits[k]; k++) {
      int in = 0;
      for (i = 0; i + 1 < run.len; i++) in |= strcmp(run.items[i], culprits[k]) == 0;
      all &= in;
    }
    tpuci__order_search_result(s, all);
    tpuci__strv_free(&run);
    checks++;
    assert_true(checks <= 16);
  }
  return checks;
}

static void victim_history(tpuci__history_t *h) {
  tpuci__history_init(h, "unit");
  add(h, 0, suite, 4, "pppf", 0);
  add(h, 0, suite + 3, 1, "p", 1);
}

static void test_polluter_found(void **state) {
  static const char *const first[] = {"t/a.py::test_p", NULL};
  static const char *const third[] = {"t/b.py::test_other", NULL};
  static const char *const both[] = {"t/a.py::test_p", "t/b.py::test_other", NULL};
  static const char *const none[] = {"t/nowhere", NULL};
  tpuci__history_t h;
  tpuci__order_cases_t cases;
  tpuci__order_search_t s;
  const tpuci__test_hist_t *t;
  char *text;
  (void) state;
  victim_history(&h);
  assert_int_equal(tpuci__order_find(&h, &cases), 1);
  assert_string_equal(cases.items[0].id, "t/b.py::test_victim");
  assert_int_equal(cases.items[0].fail_attempt, 1);
  assert_int_equal(cases.items[0].pass_attempt, 2);
  assert_int_equal(cases.items[0].before_fail.len, 3);
  assert_int_equal(cases.items[0].before_pass.len, 0);
  assert_false(cases.items[0].brittle);
  tpuci__order_mark(&h, &cases);
  t = &h.tests[cases.items[0].test];
  assert_true(t->order_dep);
  assert_false(tpuci__history_flaky(t));

  /* The first candidate: confirmed (it fails after them all, passes
   * alone twice), then one half. */
  assert_int_equal(search(&cases.items[0], &s, first), 2 + TPUCI__ORDER_APART_RUNS);
  assert_true(s.confirmed);
  assert_int_equal(s.apart, TPUCI__ORDER_APART_RUNS);
  assert_string_equal(s.culprit, "t/a.py::test_p");
  tpuci__order_search_apply(&s, &cases.items[0], &h);
  tpuci__order_search_free(&s);
  h.tests[cases.items[0].test].order_checks = 4;
  text = tpuci__order_text(&h, t);
  assert_string_equal(text, "failed after 3 tests in attempt 1, passed in attempt 2; it fails "
                            "after t/a.py::test_p (found by 4 checks; it passed alone in 2 of "
                            "2 runs)");
  free(text);
  /* The last one: the other half, then halves of it. */
  assert_int_equal(search(&cases.items[0], &s, third), 5 + TPUCI__ORDER_APART_RUNS);
  assert_string_equal(s.culprit, "t/b.py::test_other");
  tpuci__order_search_free(&s);
  /* Two tests together: confirmed, no one named. */
  search(&cases.items[0], &s, both);
  assert_true(s.confirmed);
  assert_null(s.culprit);
  tpuci__order_search_free(&s);
  /* Chance: it fails after all of them again, then once alone: flaky
   * (a test that fails one run in five whatever ran before it). */
  {
    static const int said[] = {1, 0, 1};
    tpuci__strv_t run = {0};
    int k = 0;
    tpuci__order_search_init(&s, &cases.items[0]);
    while (tpuci__order_search_next(&s, &cases.items[0], &run)) {
      if (k > 0) assert_int_equal(run.len, 1); /* alone */
      tpuci__order_search_result(&s, said[k++]);
      tpuci__strv_free(&run);
    }
    assert_int_equal(k, 3);
    assert_true(s.flaky);
    assert_true(s.failed_apart);
    assert_false(s.confirmed);
    tpuci__order_search_free(&s);
  }
  /* Chance: it passes after all of them again: flaky. */
  assert_int_equal(search(&cases.items[0], &s, none), 1);
  assert_true(s.flaky);
  tpuci__order_search_apply(&s, &cases.items[0], &h);
  assert_false(t->order_dep);
  assert_true(tpuci__history_flaky(t));
  tpuci__order_search_free(&s);
  tpuci__order_cases_free(&cases);
  tpuci__history_free(&h);
}

/* The failing-first process ran test_victim alone first, reported before
 * attempt 1: it is attempt 0, its runs come first, the tests keep
 * pytest's order (attempt 1's collection) and a retry's ids are in it. */
static void test_first_process(void **state) {
  static const char *const ff[] = {"t/b.py::test_victim", "t/b.py::test_other"};
  tpuci__history_t h;
  tpuci__strv_t again = {0};
  tpuci__order_cases_t cases;
  size_t i;
  int unknown = 0;
  (void) state;
  tpuci__history_init(&h, "unit");
  /* pytest's order: other before victim; both failed last time. */
  add(&h, 1, ff, 2, "fp", 0);
  assert_string_equal(h.tests[0].id, "t/b.py::test_victim");
  add(&h, 0, suite, 4, "pppp", 0);
  assert_int_equal(h.n_attempts, 1);
  assert_non_null(h.first);
  for (i = 0; i < 4; i++) assert_string_equal(h.tests[i].id, suite[i]);
  assert_int_equal(h.tests[3].runs[0].attempt, 0);
  assert_int_equal(h.tests[3].runs[1].attempt, 1);
  assert_int_equal(tpuci__history_run_in(&h.tests[3], 0)->result.outcome, TPUCI_TEST_FAILED);
  assert_int_equal(tpuci__history_final(&h.tests[3])->outcome, TPUCI_TEST_PASSED);
  /* Failed alone, passed after 3: brittle, its candidates those 3. */
  assert_int_equal(tpuci__order_find(&h, &cases), 1);
  assert_true(cases.items[0].brittle);
  assert_int_equal(cases.items[0].fail_attempt, 0);
  assert_int_equal(cases.items[0].before_pass.len, 3);
  tpuci__order_cases_free(&cases);
  /* Nothing to run again; a failing attempt 2 of both is in pytest's
   * order, whatever came first. */
  assert_int_equal(tpuci__history_failed_ids(&h, &again, &unknown), 0);
  add(&h, 0, suite, 4, "ppff", 0);
  assert_int_equal(tpuci__history_failed_ids(&h, &again, &unknown), 2);
  assert_string_equal(again.items[0], "t/b.py::test_other");
  assert_string_equal(again.items[1], "t/b.py::test_victim");
  tpuci__strv_free(&again);
  tpuci__history_free(&h);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_polluter_found),
                                     cmocka_unit_test(test_first_process)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
