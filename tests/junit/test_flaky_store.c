/* core/pytest/flaky.c's store: bounded to the last TPUCI__FLAKY_MAX_RUNS
 * runs, damaged lines dropped, the newest run always kept; the recent
 * outcomes an append hands back are what a read of the store says; a
 * cancelled run's unreached tests are absent; a test's identity leaves
 * its shard out. */
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

/* An attempt of `instance` that ran test_a (failing or not) and was
 * cancelled while test_b ran, before test_c and test_d (issue 31.4). */
static void cancelled_attempt(tpuci__history_t *h, int fail_a, tpuci_outcome_t o) {
  static const char *const ids[] = {"t.py::test_a", "t.py::test_b", "t.py::test_c",
                                    "t.py::test_d"};
  const char *xml = fail_a ? "<testsuite><testcase classname=\"t\" name=\"test_a\">"
                             "<failure message=\"boom\"/></testcase></testsuite>"
                           : "<testsuite><testcase classname=\"t\" name=\"test_a\"/></testsuite>";
  tpuci__junit_attempt_t a;
  tpuci__junit_t j;
  tpuci__err_t err = {0, NULL};
  memset(&a, 0, sizeof(a));
  memset(&j, 0, sizeof(j));
  a.outcome = o;
  a.exit_code = -1;
  a.cause = o == TPUCI_OUTCOME_CANCELLED ? "cancelled: interrupted" : "timed out after 1s";
  a.running = "t.py::test_b";
  a.cut = 1;
  a.has_collection = 1;
  a.collected = ids;
  a.n_collected = 4;
  assert_int_equal(tpuci__junit_parse(xml, strlen(xml), &j, &err), 0);
  tpuci__history_add(h, &a, &j);
  tpuci__junit_free(&j);
}

static void append(const char *path, const char *id, const tpuci__history_t *const *hs, size_t n) {
  tpuci__flaky_run_t run;
  tpuci__err_t err = {0, NULL};
  memset(&run, 0, sizeof(run));
  run.run_id = id;
  run.histories = hs;
  run.n = n;
  assert_int_equal(tpuci__flaky_append(path, &run, 0, NULL, &err), 0);
}

/* A cancelled run says nothing of the tests it did not reach or cut
 * short; a timed-out one fails them (issue 31.4). */
static void test_cancelled_is_absent(void **state) {
  char *path = tpuci__printf("%s/cancel.jsonl", dir);
  json_t *recent;
  tpuci__history_t h1, h2;
  const tpuci__history_t *hs1[1] = {&h1}, *hs2[1] = {&h2};
  (void) state;
  tpuci__history_init(&h1, "unit");
  tpuci__history_init(&h2, "unit");
  cancelled_attempt(&h1, 1, TPUCI_OUTCOME_CANCELLED);
  cancelled_attempt(&h2, 0, TPUCI_OUTCOME_TIMEOUT);
  append(path, "run-1", hs1, 1);
  append(path, "run-2", hs2, 1);
  recent = tpuci__flaky_recent(path, 0);
  assert_non_null(recent);
  assert_string_equal(json_string_value(json_object_get(recent, "unit\x1ft.py::test_a")), "fp");
  assert_string_equal(json_string_value(json_object_get(recent, "unit\x1ft.py::test_b")), "-f");
  assert_string_equal(json_string_value(json_object_get(recent, "unit\x1ft.py::test_c")), "-f");
  assert_string_equal(json_string_value(json_object_get(recent, "unit\x1ft.py::test_d")), "-f");
  json_decref(recent);
  tpuci__history_free(&h1);
  tpuci__history_free(&h2);
  free(path);
}

/* A test's history is one whichever shard ran it: rows are written under
 * the identity without the shard, and rows written with it read alike
 * (issue 31.5); the failures of each identity's last run are found. */
static void test_identity_without_shard(void **state) {
  char *path = tpuci__printf("%s/shards.jsonl", dir), *report = NULL;
  tpuci__err_t err = {0, NULL};
  json_t *recent;
  tpuci__strv_t got[2] = {{0}, {0}};
  const char *identities[2] = {"unit[py=3]", "other"};
  FILE *f;
  int i;
  (void) state;
  f = fopen(path, "w");
  assert_non_null(f);
  /* Runs 1 to 4 as written before: fpfp, in shard 1 and then shard 2. */
  fputs("{\"run\":\"r1\",\"tests\":[[\"unit[py=3,shard=1/2]\",\"t.py::test_a\",\"f\",0,null]]}\n"
        "{\"run\":\"r2\",\"tests\":[[\"unit[py=3,shard=2/2]\",\"t.py::test_a\",\"p\",0,null]]}\n"
        "{\"run\":\"r3\",\"tests\":[[\"unit[py=3,shard=2/2]\",\"t.py::test_a\",\"f\",0,null]]}\n"
        "{\"run\":\"r4\",\"tests\":[[\"unit[py=3,shard=1/2]\",\"t.py::test_a\",\"p\",0,null]]}\n",
        f);
  fclose(f);
  for (i = 0; i < 2; i++) {
    /* Run 5: test_a fails in shard 1 (the history says "f" once). */
    tpuci__history_t h;
    const tpuci__history_t *hs[1] = {&h};
    tpuci__history_init(&h, i == 0 ? "unit[py=3,shard=1/2]" : "unit[py=3,shard=2/2]");
    if (i == 0) one_attempt(&h, 1);
    append(path, i == 0 ? "r5" : "r5b", hs, i == 0 ? 1 : 0);
    tpuci__history_free(&h);
  }
  recent = tpuci__flaky_recent(path, 0);
  assert_non_null(recent);
  assert_string_equal(json_string_value(json_object_get(recent, "unit[py=3]\x1ft.py::test_a")),
                      "fpfpf-");
  assert_null(json_object_get(recent, "unit[py=3,shard=1/2]\x1ft.py::test_a"));
  json_decref(recent);
  assert_int_equal(tpuci__flaky_report(path, 0, 0, &report, &err), 0);
  assert_non_null(strstr(report, "     0.80      3/5     fpfpf-"));
  assert_non_null(strstr(report, "t.py::test_a [unit[py=3]]\n"));
  assert_null(strstr(report, "shard="));
  free(report);
  tpuci__flaky_last_failed(path, identities, 2, got);
  assert_int_equal(got[0].len, 1);
  assert_string_equal(got[0].items[0], "t.py::test_a");
  assert_int_equal(got[1].len, 0);
  tpuci__strv_free(&got[0]);
  tpuci__strv_free(&got[1]);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_cap_and_damage),
                                     cmocka_unit_test(test_append_hands_back_recent),
                                     cmocka_unit_test(test_cancelled_is_absent),
                                     cmocka_unit_test(test_identity_without_shard)};
  return run_in_tmpdir(dir, tests, sizeof(tests) / sizeof(tests[0]));
}
