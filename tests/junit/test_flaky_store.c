/* core/pytest/flaky.c's store: bounded to the last TPUCI__FLAKY_MAX_RUNS
 * runs, damaged lines dropped, the newest run always kept; the recent
 * outcomes an append hands back are what a read of the store says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tmpdir_main.h"
#include "pytest/flaky.h"

static char dir[] = "/tmp/tpuci-flaky-XXXXXX";

static size_t lines_of(const char *path) {
  char *text = NULL;
  size_t len = 0, n = 0, i;
  assert_int_equal(tpuci__read_file(path, &text, &len), 0);
  for (i = 0; i < len; i++) n += text[i] == '\n';
  free(text);
  return n;
}

static void test_cap_and_damage(void **state) {
  char *path = tpuci__printf("%s/history.jsonl", dir), *id, *report = NULL;
  tpuci__history_t h;
  const tpuci__history_t *hs[1] = {&h};
  tpuci__flaky_run_t run;
  tpuci__err_t err = {0, NULL};
  FILE *f;
  int i;
  (void) state;
  tpuci__history_init(&h, "unit");
  memset(&run, 0, sizeof(run));
  run.histories = hs;
  run.n = 1;
  for (i = 0; i < TPUCI__FLAKY_MAX_RUNS + 5; i++) {
    id = tpuci__printf("run-%03d", i);
    run.run_id = id;
    assert_int_equal(tpuci__flaky_append(path, &run, 0, NULL, &err), 0);
    free(id);
    if (i == 3) {
      /* A damaged line (a crash mid-write of another tool) is dropped. */
      f = fopen(path, "a");
      assert_non_null(f);
      fputs("{\"run\": \"cut\n", f);
      fclose(f);
    }
  }
  assert_int_equal(lines_of(path), TPUCI__FLAKY_MAX_RUNS);
  assert_int_equal(tpuci__flaky_report(path, 0, 1, &report, &err), 0);
  /* The oldest five went; the newest is there. */
  assert_null(strstr(report, "\"run-004\""));
  assert_non_null(strstr(report, "\"run-005\""));
  assert_non_null(strstr(report, "\"run-104\""));
  free(report);
  tpuci__history_free(&h);
  free(path);
}

/* A history of one attempt: test_a fails when `fail_a`, test_b passes. */
static void one_attempt(tpuci__history_t *h, int fail_a) {
  static const char pass_a[] = "<testsuite><testcase classname=\"t\" name=\"test_a\"/>"
                               "<testcase classname=\"t\" name=\"test_b\"/></testsuite>";
  static const char failed_a[] = "<testsuite><testcase classname=\"t\" name=\"test_a\">"
                                 "<failure message=\"boom\"/></testcase>"
                                 "<testcase classname=\"t\" name=\"test_b\"/></testsuite>";
  const char *xml = fail_a ? failed_a : pass_a;
  tpuci__junit_attempt_t a;
  tpuci__junit_t j;
  tpuci__err_t err = {0, NULL};
  memset(&a, 0, sizeof(a));
  memset(&j, 0, sizeof(j));
  a.outcome = fail_a ? TPUCI_OUTCOME_FAILED : TPUCI_OUTCOME_PASSED;
  a.exit_code = fail_a;
  assert_int_equal(tpuci__junit_parse(xml, strlen(xml), &j, &err), 0);
  tpuci__history_add(h, &a, &j);
  tpuci__junit_free(&j);
}

static void test_append_hands_back_recent(void **state) {
  char *path = tpuci__printf("%s/recent.jsonl", dir), *id, *want, *got;
  tpuci__flaky_run_t run;
  tpuci__err_t err = {0, NULL};
  json_t *recent = NULL, *read;
  int i;
  (void) state;
  memset(&run, 0, sizeof(run));
  for (i = 0; i < 6; i++) {
    tpuci__history_t h;
    const tpuci__history_t *hs[1] = {&h};
    tpuci__history_init(&h, "unit");
    one_attempt(&h, i % 2 == 1);
    id = tpuci__printf("run-%d", i);
    run.run_id = id;
    run.histories = hs;
    run.n = 1;
    json_decref(recent);
    assert_int_equal(tpuci__flaky_append(path, &run, 4, &recent, &err), 0);
    tpuci__history_free(&h);
    free(id);
  }
  assert_non_null(recent);
  /* The last 4 runs, this one last: test_a failed in runs 3 and 5. */
  assert_string_equal(json_string_value(json_object_get(recent, "unit\x1ft.py::test_a")), "pfpf");
  assert_string_equal(json_string_value(json_object_get(recent, "unit\x1ft.py::test_b")), "pppp");
  read = tpuci__flaky_recent(path, 4);
  assert_non_null(read);
  want = json_dumps(read, JSON_SORT_KEYS | JSON_COMPACT);
  got = json_dumps(recent, JSON_SORT_KEYS | JSON_COMPACT);
  assert_string_equal(got, want);
  free(want);
  free(got);
  json_decref(read);
  json_decref(recent);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_cap_and_damage),
                                     cmocka_unit_test(test_append_hands_back_recent)};
  return run_in_tmpdir(dir, tests, sizeof(tests) / sizeof(tests[0]));
}
