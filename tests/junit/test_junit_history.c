/* Tests across attempts: final results, flaky detection, what to re-run,
 * abnormal attempts, and the merged report (re-parsed with our parser;
 * check_merged.py re-parses it with Python's xml.etree).
 *
 * `test_junit_history --emit FILE` writes the merged report of a fixed
 * four-instance run instead of running the tests; `--emit-all FILE` the
 * same run with five command jobs added (tests/junit/schemas.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kind/pytest/junit.h"
#include "kind/pytest/pytest_run.h"

#ifndef TPUCI_JUNIT_DATA
#error "TPUCI_JUNIT_DATA must name the test data folder"
#endif

/* A report built in code: "id=outcome" words, e.g. "a=passed b=failed". */
static void report(tpuci__junit_t *j, const char *spec) {
  char *copy = tpuci__strdup(spec), *save = NULL, *w;
  for (w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
    char *eq = strchr(w, '=');
    tpuci__test_t *t;
    if (j->len == j->cap) {
      j->cap = j->cap ? j->cap * 2 : 8;
      j->items = tpuci__realloc(j->items, j->cap * sizeof(*j->items));
    }
    t = &j->items[j->len++];
    memset(t, 0, sizeof(*t));
    *eq = '\0';
    t->id = tpuci__printf("tests/test_m.py::%s", w);
    t->classname = tpuci__strdup("tests.test_m");
    t->name = tpuci__strdup(w);
    t->line = -1;
    t->time_s = 0.5;
    if (strcmp(eq + 1, "passed") == 0) {
      t->outcome = TPUCI_TEST_PASSED;
    } else if (strcmp(eq + 1, "failed") == 0) {
      t->outcome = TPUCI_TEST_FAILED;
      t->message = tpuci__printf("assert %s", w);
      t->text = tpuci__strdup("E   assert 1 == 2\x1b <&>");
    } else if (strcmp(eq + 1, "error") == 0) {
      t->outcome = TPUCI_TEST_ERROR;
      t->message = tpuci__strdup("failed on setup with \"RuntimeError\"");
      t->text = tpuci__strdup("fixture broke");
    } else if (strcmp(eq + 1, "skipped") == 0) {
      t->outcome = TPUCI_TEST_SKIPPED;
      t->type = tpuci__strdup("pytest.skip");
      t->message = tpuci__strdup("nope");
    } else {
      fail_msg("bad outcome %s", eq + 1);
    }
  }
  free(copy);
}

static void add(tpuci__history_t *h, tpuci_outcome_t o, int exit_code, const char *cause,
                const char *spec, const char *const *selected, size_t n_selected) {
  tpuci__junit_attempt_t a;
  tpuci__junit_t j = {0};
  memset(&a, 0, sizeof(a));
  a.outcome = o;
  a.exit_code = exit_code;
  a.cause = cause;
  a.time_s = 10;
  a.selected = selected;
  a.n_selected = n_selected;
  if (spec == NULL) {
    tpuci__history_add(h, &a, NULL);
  } else {
    report(&j, spec);
    tpuci__history_add(h, &a, &j);
    assert_int_equal(j.len, 0);  /* moved */
    tpuci__junit_free(&j);
  }
}

static const tpuci__test_hist_t *hist(const tpuci__history_t *h, const char *name) {
  char *id = tpuci__printf("tests/test_m.py::%s", name);
  size_t k = tpuci__idmap_get(&h->map, id);
  free(id);
  assert_true(k != TPUCI__IDMAP_NONE);
  return &h->tests[k];
}

/* The failed ids as "a b c" (names without the module). */
static char *failed(const tpuci__history_t *h, int *crashed) {
  tpuci__strv_t v = {0};
  tpuci__buf_t b;
  size_t i, n = tpuci__history_failed_ids(h, &v, crashed);
  assert_int_equal(n, v.len);
  tpuci__buf_init(&b);
  for (i = 0; i < v.len; i++) {
    const char *s = strstr(v.items[i], "::");
    if (i) tpuci__buf_adds(&b, " ");
    tpuci__buf_adds(&b, s ? s + 2 : v.items[i]);
  }
  tpuci__strv_free(&v);
  return tpuci__buf_steal(&b);
}

static char *merged(const tpuci__history_t *h) {
  tpuci__buf_t b;
  tpuci__buf_init(&b);
  tpuci__junit_write_merged(&b, &h, 1);
  return tpuci__buf_steal(&b);
}

static size_t count(const char *hay, const char *needle) {
  size_t n = 0;
  const char *p = hay;
  while ((p = strstr(p, needle)) != NULL) {
    n++;
    p += strlen(needle);
  }
  return n;
}

/* Re-parses a merged report with our own parser. */
static void reparse(const char *xml, tpuci__junit_t *j) {
  tpuci__err_t err = {0};
  int r = tpuci__junit_parse(xml, strlen(xml), j, &err);
  if (r != 0) fail_msg("merged report does not parse: %s\n%s", err.msg, xml);
}

static const tpuci__test_t *by_name(const tpuci__junit_t *j, const char *name) {
  size_t i;
  for (i = 0; i < j->len; i++)
    if (strcmp(j->items[i].name, name) == 0) return &j->items[i];
  fail_msg("no test case %s", name);
  return NULL;
}


/* An attempt pytest was cut short in: it had collected `collected`
 * ("a b c" names, NULL: it said nothing), reported `spec` (NULL: nothing)
 * and was running `running` (a name, or NULL) when it ended. */
static void add_cut(tpuci__history_t *h, tpuci_outcome_t o, const char *cause,
                    const char *collected, const char *spec, const char *running,
                    const tpuci__strv_t *selected) {
  tpuci__junit_attempt_t a;
  tpuci__junit_t j = {0};
  tpuci__strv_t ids = {0};
  char *copy = collected ? tpuci__strdup(collected) : NULL, *save = NULL, *w;
  char *run = running ? tpuci__printf("tests/test_m.py::%s", running) : NULL;
  for (w = copy ? strtok_r(copy, " ", &save) : NULL; w; w = strtok_r(NULL, " ", &save))
    tpuci__strv_take(&ids, tpuci__printf("tests/test_m.py::%s", w));
  memset(&a, 0, sizeof(a));
  a.outcome = o;
  a.exit_code = -1;
  a.cause = cause;
  a.time_s = 15;
  a.running = run;
  a.cut = 1;
  a.has_collection = collected != NULL;
  a.collected = (const char *const *) ids.items;
  a.n_collected = ids.len;
  if (selected != NULL) {
    a.selected = (const char *const *) selected->items;
    a.n_selected = selected->len;
  }
  if (spec != NULL) report(&j, spec);
  tpuci__history_add(h, &a, spec ? &j : NULL);
  tpuci__junit_free(&j);
  tpuci__strv_free(&ids);
  free(run);
  free(copy);
}

/* The node ids to run next, as tpuci__pytest_next_selection() gets them. */
static void next_ids(const tpuci__history_t *h, tpuci__strv_t *out) {
  int unknown = -1;
  tpuci__strv_free(out);
  tpuci__history_failed_ids(h, out, &unknown);
  assert_int_equal(unknown, 0);
}

/* ------------------------------------------------------------------ */

static void test_flaky_after_rerun_of_failures(void **state) {
  tpuci__history_t h;
  tpuci__history_summary_t s;
  tpuci__junit_t j = {0};
  const char *sel[] = {"tests/test_m.py::b", "tests/test_m.py::c"};
  char *ids, *xml;
  int crashed = -1;
  (void) state;

  tpuci__history_init(&h, "unit");
  add(&h, TPUCI_OUTCOME_FAILED, 1, "exit 1", "a=passed b=failed c=error d=skipped", NULL, 0);
  ids = failed(&h, &crashed);
  assert_string_equal(ids, "b c");
  assert_int_equal(crashed, 0);
  free(ids);
  add(&h, TPUCI_OUTCOME_PASSED, 0, NULL, "b=passed c=passed", sel, 2);

  assert_int_equal(tpuci__history_final(hist(&h, "a"))->outcome, TPUCI_TEST_PASSED);
  assert_int_equal(tpuci__history_final(hist(&h, "b"))->outcome, TPUCI_TEST_PASSED);
  assert_int_equal(hist(&h, "b")->len, 2);  /* the failure is kept */
  assert_true(tpuci__history_flaky(hist(&h, "b")));
  assert_true(tpuci__history_flaky(hist(&h, "c")));
  assert_false(tpuci__history_flaky(hist(&h, "a")));
  assert_false(tpuci__history_flaky(hist(&h, "d")));
  ids = failed(&h, &crashed);
  assert_string_equal(ids, "");
  free(ids);
  tpuci__history_summarize(&h, &s);
  assert_int_equal(s.tests, 4);
  assert_int_equal(s.passed, 3);
  assert_int_equal(s.skipped, 1);
  assert_int_equal(s.flaky, 2);
  assert_int_equal(s.abnormal_attempts, 0);

  xml = merged(&h);
  assert_non_null(strstr(xml, "<testsuite name=\"unit\" tests=\"4\" failures=\"0\" errors=\"0\" skipped=\"1\" time=\"20.000\">"));
  assert_non_null(strstr(xml, "<testsuites name=\"tpuci\" tests=\"4\" failures=\"0\" errors=\"0\" time=\"20.000\">"));
  assert_int_equal(count(xml, "<flakyFailure message=\"assert b\" type=\"pytest.failure\">"), 1);
  assert_int_equal(count(xml, "<flakyError message=\"failed on setup with &quot;RuntimeError&quot;\" type=\"pytest.error\">"), 1);
  assert_int_equal(count(xml, "<stackTrace>[attempt 1]\nE   assert 1 == 2#x1B &lt;&amp;&gt;</stackTrace>"), 1);
  assert_int_equal(count(xml, "<rerunFailure"), 0);
  assert_int_equal(count(xml, "<failure"), 0);
  assert_non_null(strstr(xml, "<property name=\"tpuci.flaky\" value=\"2\"/>"));
  assert_non_null(strstr(xml, "<testcase classname=\"tests.test_m\" name=\"a\" time=\"0.500\"/>"));

  reparse(xml, &j);
  assert_int_equal(j.len, 4);
  assert_int_equal(by_name(&j, "b")->outcome, TPUCI_TEST_PASSED);
  assert_int_equal(by_name(&j, "b")->reruns, 1);
  assert_int_equal(by_name(&j, "c")->reruns, 1);
  assert_int_equal(by_name(&j, "d")->outcome, TPUCI_TEST_SKIPPED);
  /* <skipped> has no attribute (Jenkins' schema): the reason is its text. */
  assert_null(by_name(&j, "d")->type);
  assert_non_null(strstr(xml, "<skipped>"));
  assert_int_equal(count(xml, "<skipped "), 0);
  assert_int_equal(count(xml, " file=\""), 0);
  assert_int_equal(count(xml, " line=\""), 0);
  assert_non_null(strstr(xml, "<property name=\"tpuci.kind\" value=\"pytest\"/>"));
  assert_string_equal(by_name(&j, "b")->id, "tests/test_m.py::b");
  tpuci__junit_free(&j);
  free(xml);
  tpuci__history_free(&h);
}

static void test_still_failing_is_rerun_failure(void **state) {
  tpuci__history_t h;
  tpuci__junit_t j = {0};
  char *ids, *xml;
  (void) state;

  tpuci__history_init(&h, "unit");
  add(&h, TPUCI_OUTCOME_FAILED, 1, NULL, "a=passed b=failed c=error", NULL, 0);
  add(&h, TPUCI_OUTCOME_FAILED, 1, NULL, "a=passed b=failed c=error", NULL, 0);
  add(&h, TPUCI_OUTCOME_FAILED, 1, NULL, "a=passed b=failed c=passed", NULL, 0);
  assert_false(tpuci__history_flaky(hist(&h, "b")));
  assert_true(tpuci__history_flaky(hist(&h, "c")));
  ids = failed(&h, NULL);
  assert_string_equal(ids, "b");
  free(ids);

  xml = merged(&h);
  assert_non_null(strstr(xml, "tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"0\""));
  assert_int_equal(count(xml, "<failure message=\"assert b\" type=\"pytest.failure\">"), 1);
  assert_int_equal(count(xml, "<rerunFailure message=\"assert b\" type=\"pytest.failure\">"), 2);
  assert_int_equal(count(xml, "<stackTrace>[attempt 1]"), 2);  /* b and c */
  assert_int_equal(count(xml, "<stackTrace>[attempt 2]"), 2);
  assert_int_equal(count(xml, "<flakyError"), 2);
  /* The final failure comes before the earlier ones. */
  assert_true(strstr(xml, "<failure message=\"assert b\"") < strstr(xml, "<rerunFailure"));
  reparse(xml, &j);
  assert_int_equal(by_name(&j, "b")->outcome, TPUCI_TEST_FAILED);
  assert_int_equal(by_name(&j, "b")->reruns, 2);
  assert_int_equal(by_name(&j, "c")->outcome, TPUCI_TEST_PASSED);
  tpuci__junit_free(&j);
  free(xml);
  tpuci__history_free(&h);
}

static void test_timeout_keeps_finished_tests(void **state) {
  tpuci__history_t h;
  tpuci__history_summary_t s;
  tpuci__junit_t j = {0};
  const char *sel[] = {"tests/test_m.py::a", "tests/test_m.py::b", "tests/test_m.py::c",
                       "tests/test_m.py::d"};
  char *ids, *xml;
  int crashed = -1;
  const tpuci__test_t *t;
  (void) state;

  tpuci__history_init(&h, "unit");
  /* A shard of four; pytest finished two before the timeout. */
  add(&h, TPUCI_OUTCOME_TIMEOUT, -1, "timed out after 25m", "a=passed b=failed", sel, 4);
  assert_int_equal(h.attempts[0].missing, 2);
  assert_true(tpuci__attempt_abnormal(&h.attempts[0]));
  ids = failed(&h, &crashed);
  assert_string_equal(ids, "b c d");
  assert_int_equal(crashed, 0);
  free(ids);
  tpuci__history_summarize(&h, &s);
  assert_int_equal(s.abnormal_attempts, 1);
  assert_int_equal(s.abnormal_failing, 1);

  xml = merged(&h);
  /* a, b, c and d never ran (errors), and the attempt: the timeout
   * fails the report. */
  assert_non_null(strstr(xml, "tests=\"5\" failures=\"2\" errors=\"2\""));
  assert_int_equal(count(xml, "type=\"tpuci.not-run\""), 2);
  assert_int_equal(s.not_run, 2);
  assert_false(tpuci__history_all_pass(&h));
  assert_non_null(strstr(xml, "<testcase classname=\"tpuci\" name=\"unit attempt 1\" time=\"10.000\">"));
  assert_non_null(strstr(xml, "<failure message=\"timeout: timed out after 25m; 2 tests did not report\" type=\"tpuci.timeout\">"));
  assert_non_null(strstr(xml, "  tests/test_m.py::c\n  tests/test_m.py::d\n"));
  reparse(xml, &j);
  assert_int_equal(j.len, 5);
  assert_int_equal(by_name(&j, "c")->outcome, TPUCI_TEST_ERROR);
  t = by_name(&j, "unit attempt 1");
  assert_int_equal(t->outcome, TPUCI_TEST_FAILED);
  assert_string_equal(t->classname, "tpuci");
  assert_true(strstr(t->text, "Its report has 2 test cases, 1 failing.") != NULL);
  assert_int_equal(by_name(&j, "a")->outcome, TPUCI_TEST_PASSED);
  tpuci__junit_free(&j);
  free(xml);
  tpuci__history_free(&h);
}

static void test_crash_before_report_then_pass(void **state) {
  tpuci__history_t h;
  tpuci__junit_t j = {0};
  char *ids, *xml;
  int crashed = -1;
  (void) state;

  tpuci__history_init(&h, "unit");
  add(&h, TPUCI_OUTCOME_FAILED, 139, NULL, NULL, NULL, 0);
  ids = failed(&h, &crashed);
  assert_string_equal(ids, "");  /* nothing known: run everything */
  assert_int_equal(crashed, 1);
  free(ids);
  xml = merged(&h);
  assert_non_null(strstr(xml, "tests=\"1\" failures=\"1\""));
  assert_non_null(strstr(xml, "<failure message=\"failed: exit 139; no JUnit report\" type=\"tpuci.failed\">"));
  free(xml);

  add(&h, TPUCI_OUTCOME_PASSED, 0, NULL, "a=passed b=passed", NULL, 0);
  ids = failed(&h, &crashed);
  assert_string_equal(ids, "");
  assert_int_equal(crashed, 0);
  free(ids);
  xml = merged(&h);
  /* Retried away: shown, not counted as a failure. */
  assert_non_null(strstr(xml, "tests=\"3\" failures=\"0\" errors=\"0\""));
  assert_non_null(strstr(xml, "<flakyFailure message=\"failed: exit 139; no JUnit report\" type=\"tpuci.failed\">"));
  assert_non_null(strstr(xml, "A later attempt completed normally."));
  reparse(xml, &j);
  assert_int_equal(by_name(&j, "unit attempt 1")->outcome, TPUCI_TEST_PASSED);
  assert_int_equal(by_name(&j, "unit attempt 1")->reruns, 1);
  tpuci__junit_free(&j);
  free(xml);
  tpuci__history_free(&h);
}

static void test_last_attempt_crashed_counts_absent_as_not_run(void **state) {
  tpuci__history_t h;
  char *ids, *xml;
  int crashed = -1;
  (void) state;

  /* A full run, then a full re-run killed for memory before reporting. */
  tpuci__history_init(&h, "unit");
  add(&h, TPUCI_OUTCOME_FAILED, 1, NULL, "a=passed b=failed c=passed", NULL, 0);
  add(&h, TPUCI_OUTCOME_OOM, 137, "killed for memory", NULL, NULL, 0);
  ids = failed(&h, &crashed);
  /* It ran the whole suite and said nothing: everything again. */
  assert_string_equal(ids, "b");
  assert_int_equal(crashed, 1);
  free(ids);
  /* Final results stay those of attempt 1. */
  assert_int_equal(tpuci__history_final(hist(&h, "a"))->outcome, TPUCI_TEST_PASSED);
  xml = merged(&h);
  assert_non_null(strstr(xml, "tests=\"4\" failures=\"2\""));
  assert_non_null(strstr(xml, "<failure message=\"oom: killed for memory; no JUnit report\" type=\"tpuci.oom\">"));
  free(xml);
  tpuci__history_free(&h);

  /* A re-run of two failures that timed out after reporting one of them:
   * only the other one still needs to run, not the earlier passes. */
  {
    const char *sel[] = {"tests/test_m.py::b", "tests/test_m.py::c"};
    tpuci__history_init(&h, "unit");
    add(&h, TPUCI_OUTCOME_FAILED, 1, NULL, "a=passed b=failed c=failed d=passed", NULL, 0);
    add(&h, TPUCI_OUTCOME_TIMEOUT, -1, "timed out after 1m", "b=passed", sel, 2);
    ids = failed(&h, &crashed);
    assert_string_equal(ids, "c");
    assert_int_equal(crashed, 0);
    free(ids);
    assert_true(tpuci__history_flaky(hist(&h, "b")));
    assert_int_equal(h.attempts[1].missing, 1);
    tpuci__history_free(&h);
  }

  /* The same re-run crashing before it reported anything. */
  {
    const char *sel[] = {"tests/test_m.py::b", "tests/test_m.py::c", "tests/test_m.py::new"};
    tpuci__history_init(&h, "unit");
    add(&h, TPUCI_OUTCOME_FAILED, 1, NULL, "a=passed b=failed c=failed d=passed", NULL, 0);
    add(&h, TPUCI_OUTCOME_FAILED, 134, NULL, NULL, sel, 3);
    ids = failed(&h, &crashed);
    assert_string_equal(ids, "b c new");  /* selected, never seen, last */
    assert_int_equal(crashed, 0);         /* its selection says what */
    free(ids);
    tpuci__history_free(&h);
  }
}

static void test_abnormal_kinds(void **state) {
  tpuci__history_t h;
  tpuci__junit_t j = {0};
  char *xml;
  (void) state;

  /* Infrastructure: an error, not a failure. */
  tpuci__history_init(&h, "lint");
  add(&h, TPUCI_OUTCOME_INFRA, -1, "image pull failed", NULL, NULL, 0);
  xml = merged(&h);
  assert_non_null(strstr(xml, "tests=\"1\" failures=\"0\" errors=\"1\""));
  assert_non_null(strstr(xml, "<error message=\"infra: image pull failed; no JUnit report\" type=\"tpuci.infra\">"));
  free(xml);
  tpuci__history_free(&h);

  /* pytest failed, yet no test did (exit 2: interrupted). */
  tpuci__history_init(&h, "unit");
  add(&h, TPUCI_OUTCOME_FAILED, 2, NULL, "a=passed", NULL, 0);
  assert_true(tpuci__attempt_abnormal(&h.attempts[0]));
  xml = merged(&h);
  assert_non_null(strstr(xml, "<failure message=\"failed: exit 2; the report shows no failing test\""));
  free(xml);
  tpuci__history_free(&h);

  /* An ordinary failure is not abnormal: no extra test case. */
  tpuci__history_init(&h, "unit");
  add(&h, TPUCI_OUTCOME_FAILED, 1, NULL, "a=failed", NULL, 0);
  assert_false(tpuci__attempt_abnormal(&h.attempts[0]));
  xml = merged(&h);
  assert_int_equal(count(xml, "classname=\"tpuci\""), 0);
  free(xml);
  tpuci__history_free(&h);

  /* Passed without a report: an error (the report went missing). */
  tpuci__history_init(&h, "unit [py3] <&>\"");
  add(&h, TPUCI_OUTCOME_PASSED, 0, "exit 0\n\t\x01", NULL, NULL, 0);
  xml = merged(&h);
  assert_non_null(strstr(xml, "<testsuite name=\"unit [py3] &lt;&amp;&gt;&quot;\""));
  assert_non_null(strstr(xml, "<error message=\"passed: exit 0&#10;&#9;#x01; no JUnit report\" type=\"tpuci.noreport\">"));
  reparse(xml, &j);
  assert_string_equal(j.items[0].name, "unit [py3] <&>\" attempt 1");
  assert_int_equal(j.items[0].outcome, TPUCI_TEST_ERROR);
  tpuci__junit_free(&j);
  free(xml);
  tpuci__history_free(&h);
}

static void test_empty_and_multiple(void **state) {
  tpuci__history_t a, b;
  const tpuci__history_t *hs[2];
  tpuci__buf_t out;
  tpuci__junit_t j = {0};
  char path[] = "/tmp/tpuci-merged-XXXXXX";
  tpuci__err_t err = {0};
  int fd;
  (void) state;

  tpuci__history_init(&a, "one");
  tpuci__history_init(&b, "two");
  add(&b, TPUCI_OUTCOME_FAILED, 1, NULL, "x=failed y=skipped", NULL, 0);
  hs[0] = &a;
  hs[1] = &b;
  tpuci__buf_init(&out);
  tpuci__junit_write_merged(&out, hs, 2);
  assert_non_null(strstr(out.data, "<testsuite name=\"one\" tests=\"0\" failures=\"0\" errors=\"0\" skipped=\"0\" time=\"0.000\">"));
  assert_non_null(strstr(out.data, "<testsuites name=\"tpuci\" tests=\"2\" failures=\"1\" errors=\"0\" time="));
  reparse(out.data, &j);
  assert_int_equal(j.suites, 2);
  assert_int_equal(j.len, 2);
  tpuci__junit_free(&j);

  fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(tpuci__junit_write_merged_file(path, hs, 2, &err), 0);
  assert_int_equal(tpuci__junit_parse_file(path, &j, &err), 0);
  assert_int_equal(j.len, 2);
  tpuci__junit_free(&j);
  unlink(path);
  assert_true(tpuci__junit_write_merged_file("/nonexistent-dir/x.xml", hs, 2, &err) < 0);
  assert_non_null(strstr(err.msg, "/nonexistent-dir/x.xml: cannot write"));
  tpuci__err_clear(&err);
  tpuci__buf_free(&out);
  tpuci__history_free(&a);
  tpuci__history_free(&b);
}

/* Jobs that are not pytest jobs: one test case each, with the outcome. */
static const tpuci__junit_run_t cmd_runs[] = {
    {TPUCI_OUTCOME_PASSED, 0, "exit 0", 1.5, "r/ok/attempt-1.log", NULL, 0},
    {TPUCI_OUTCOME_FAILED, 3, "exit 3", 2, "r/flaky/attempt-1.log", "broken <&>\n", 11},
    {TPUCI_OUTCOME_INFRA, -1, "image pull failed", 0, NULL, NULL, 0},
    {TPUCI_OUTCOME_PASSED, 0, "exit 0", 1, "r/flaky/attempt-3.log", NULL, 0},
    {TPUCI_OUTCOME_FAILED, 1, "exit 1", 1, "r/bad/attempt-1.log", "first\n", 6},
    {TPUCI_OUTCOME_TIMEOUT, -1, "timed out after 2s", 2, "r/bad/attempt-2.log", "slow\0 still\n", 12},
    {TPUCI_OUTCOME_CANCELLED, -1, "cancelled: interrupted", 1, NULL, NULL, 0},
};
static const tpuci__junit_command_t cmds[] = {
    {"ok", TPUCI_OUTCOME_PASSED, NULL, &cmd_runs[0], 1},
    {"flaky", TPUCI_OUTCOME_FLAKY, NULL, &cmd_runs[1], 3},
    {"bad", TPUCI_OUTCOME_TIMEOUT, NULL, &cmd_runs[4], 2},
    {"later", TPUCI_OUTCOME_CANCELLED, NULL, NULL, 0},
    {"never", TPUCI_OUTCOME_NONE, "the engine is unreachable", NULL, 0},
    {"stopped", TPUCI_OUTCOME_CANCELLED, NULL, &cmd_runs[6], 1},
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static void test_commands_and_running(void **state) {
  tpuci__junit_suite_t suites[NCMDS + 1];
  tpuci__history_t h;
  tpuci__junit_attempt_t a;
  tpuci__buf_t out;
  size_t i;
  const char *xml;
  (void) state;

  /* A pytest attempt killed in the middle of a test names it. */
  tpuci__history_init(&h, "py");
  memset(&a, 0, sizeof(a));
  a.outcome = TPUCI_OUTCOME_TIMEOUT;
  a.exit_code = -1;
  a.cause = "timed out after 2s while running tests/test_m.py::slow";
  a.running = "tests/test_m.py::slow";
  tpuci__history_add(&h, &a, NULL);
  memset(suites, 0, sizeof(suites));
  for (i = 0; i < NCMDS; i++) {
    suites[i].history = NULL;
    suites[i].command = &cmds[i];
  }
  suites[NCMDS].history = &h;
  suites[NCMDS].command = NULL;
  tpuci__buf_init(&out);
  tpuci__junit_write_run(&out, suites, NCMDS + 1);
  xml = out.data;
  /* 8 test cases: the test cut short, 1 timeout and 3 errors fail, the
   * rest pass. */
  assert_non_null(strstr(xml, "<testsuites name=\"tpuci\" tests=\"8\" failures=\"3\" errors=\"3\" time="));
  /* A cause that starts with its outcome says it once. */
  assert_non_null(strstr(xml, "<error message=\"cancelled: interrupted\" type=\"tpuci.cancelled\">"));
  assert_null(strstr(xml, "cancelled: cancelled"));
  assert_non_null(strstr(xml, "<testcase classname=\"tpuci\" name=\"ok\" time=\"1.500\"/>"));
  assert_non_null(strstr(xml, "<property name=\"tpuci.kind\" value=\"command\"/>"));
  /* flaky: a failure and an infra error, each kept, failures first. */
  assert_non_null(strstr(xml, "<flakyFailure message=\"failed: exit 3\" type=\"tpuci.failed\">\n"
                              "        <stackTrace>[attempt 1]\nAttempt 1 of 3 of 'flaky': failed: exit 3.\n"
                              "Exit code: 3.\nLog: r/flaky/attempt-1.log\n</stackTrace>\n"
                              "        <system-out>broken &lt;&amp;&gt;\n</system-out>"));
  assert_true(strstr(xml, "<flakyFailure") < strstr(xml, "<flakyError message=\"infra: image pull failed\" type=\"tpuci.infra\">"));
  assert_non_null(strstr(xml, "<testsuite name=\"flaky\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"0\" time=\"3.000\">"));
  /* bad: the timeout, then the earlier failure as a rerun, then its log. */
  assert_non_null(strstr(xml, "<failure message=\"timeout: timed out after 2s\" type=\"tpuci.timeout\">"
                              "Attempt 2 of 2 of 'bad': timeout: timed out after 2s.\nExit code: -1.\n"
                              "Log: r/bad/attempt-2.log\n</failure>\n      <rerunFailure message=\"failed: exit 1\""));
  assert_non_null(strstr(xml, "</rerunFailure>\n      <system-out>slow#x00 still\n</system-out>\n    </testcase>"));
  assert_non_null(strstr(xml, "<error message=\"cancelled: it never started\" type=\"tpuci.cancelled\">"));
  assert_non_null(strstr(xml, "<error message=\"not run: the engine is unreachable\" type=\"tpuci.not-run\">"));
  assert_non_null(strstr(xml, "It was running tests/test_m.py::slow when it ended."));
  assert_non_null(strstr(xml, "message=\"timeout: timed out after 2s while running tests/test_m.py::slow; no JUnit report\""));
  tpuci__buf_free(&out);
  tpuci__history_free(&h);
}

/* ------------------------------------------------------------------ */
/* The run check_merged.py reads                                       */

static void add_file(tpuci__history_t *h, tpuci_outcome_t o, int exit_code, const char *cause,
                     const char *file, const char *const *sel, size_t n_sel) {
  tpuci__junit_attempt_t a;
  tpuci__junit_t j = {0};
  tpuci__err_t err = {0};
  char *p = tpuci__printf("%s/%s", TPUCI_JUNIT_DATA, file);
  memset(&a, 0, sizeof(a));
  a.outcome = o;
  a.exit_code = exit_code;
  a.cause = cause;
  a.time_s = 60;
  a.selected = sel;
  a.n_selected = n_sel;
  if (tpuci__junit_parse_file(p, &j, &err) != 0) {
    fprintf(stderr, "%s\n", err.msg);
    exit(1);
  }
  tpuci__history_add(h, &a, &j);
  tpuci__junit_free(&j);
  free(p);
}

static int emit(const char *path, int with_commands) {
  tpuci__junit_suite_t suites[4 + NCMDS];
  tpuci__history_t h[4];
  const tpuci__history_t *hs[4];
  tpuci__strv_t again = {0};
  tpuci__junit_attempt_t a;
  tpuci__junit_t j = {0};
  tpuci__err_t err = {0};
  const char *sel12[] = {"tests/test_api.py::test_get", "tests/test_api.py::TestPost::test_create[json]",
                         "tests/test_api.py::test_offline", "tests/test_api.py::test_time",
                         "tests/test_api.py::test_slow"};
  size_t i;
  int r;

  /* py[3.11]: the real pytest report, then a re-run of what failed in
   * which all but test_fail pass. */
  tpuci__history_init(&h[0], "py[3.11]");
  add_file(&h[0], TPUCI_OUTCOME_FAILED, 1, "exit 1", "pytest7_xunit2.xml", NULL, 0);
  tpuci__history_failed_ids(&h[0], &again, NULL);
  for (i = 0; i < again.len; i++) {
    size_t k = tpuci__idmap_get(&h[0].map, again.items[i]);
    const tpuci__test_t *f = tpuci__history_final(&h[0].tests[k]);
    tpuci__test_t *t;
    if (j.len == j.cap) {
      j.cap = j.cap ? j.cap * 2 : 16;
      j.items = tpuci__realloc(j.items, j.cap * sizeof(*j.items));
    }
    t = &j.items[j.len++];
    memset(t, 0, sizeof(*t));
    t->id = tpuci__strdup(f->id);
    t->classname = tpuci__strdup(f->classname);
    t->name = tpuci__strdup(f->name);
    t->line = -1;
    t->time_s = 0.25;
    if (strcmp(f->name, "test_fail") == 0) {
      t->outcome = TPUCI_TEST_FAILED;
      t->message = tpuci__strdup("AssertionError: x should be 2 (again)");
      t->text = tpuci__strdup("E   assert 1 == 2");
    }
  }
  memset(&a, 0, sizeof(a));
  a.outcome = TPUCI_OUTCOME_FAILED;
  a.exit_code = 1;
  a.time_s = 30;
  a.selected = (const char *const *) again.items;
  a.n_selected = again.len;
  tpuci__history_add(&h[0], &a, &j);
  tpuci__junit_free(&j);
  tpuci__strv_free(&again);

  /* py[3.12]: a shard that timed out after reporting four of five, then
   * timed out again without a report. */
  tpuci__history_init(&h[1], "py[3.12]");
  add_file(&h[1], TPUCI_OUTCOME_TIMEOUT, -1, "timed out after 25m", "bare_testsuite.xml", sel12, 5);
  memset(&a, 0, sizeof(a));
  a.outcome = TPUCI_OUTCOME_TIMEOUT;
  a.exit_code = -1;
  a.cause = "timed out after 25m";
  a.time_s = 1500;
  a.selected = sel12;
  a.n_selected = 5;
  tpuci__history_add(&h[1], &a, NULL);

  /* lint <&>: the image failed to pull, then it passed. */
  tpuci__history_init(&h[2], "lint <&>");
  memset(&a, 0, sizeof(a));
  a.outcome = TPUCI_OUTCOME_INFRA;
  a.exit_code = -1;
  a.cause = "image pull failed: \"tpuci/py\" <not found>";
  tpuci__history_add(&h[2], &a, NULL);
  add_file(&h[2], TPUCI_OUTCOME_PASSED, 0, NULL, "doctype_only.xml", NULL, 0);

  /* crash: a segfault before pytest wrote anything. */
  tpuci__history_init(&h[3], "crash");
  memset(&a, 0, sizeof(a));
  a.outcome = TPUCI_OUTCOME_FAILED;
  a.exit_code = 139;
  a.time_s = 2;
  tpuci__history_add(&h[3], &a, NULL);

  for (i = 0; i < 4; i++) hs[i] = &h[i];
  if (with_commands) {
    /* The same run with the command jobs above (the schema tests). */
    memset(suites, 0, sizeof(suites));
    for (i = 0; i < 4 + NCMDS; i++) {
      suites[i].history = i < 4 ? &h[i] : NULL;
      suites[i].command = i < 4 ? NULL : &cmds[i - 4];
    }
    r = tpuci__junit_write_run_file(path, suites, 4 + NCMDS, &err);
  } else {
    r = tpuci__junit_write_merged_file(path, hs, 4, &err);
  }
  if (r != 0) fprintf(stderr, "%s\n", err.msg);
  for (i = 0; i < 4; i++) tpuci__history_free(&h[i]);
  return r != 0;
}

/* Issue 18's reproduction: a fails, b hangs in attempt 1, c and d come
 * after it. The retry runs a, b (the test it hung in), c and d (never
 * reached), in collection order; every collected test stays in the
 * report. */
static void test_timeout_retries_running_and_unfinished(void **state) {
  tpuci__history_t h;
  tpuci__history_summary_t s;
  tpuci__strv_t sel = {0};
  tpuci__junit_t j = {0};
  char *ids, *xml;
  (void) state;

  tpuci__history_init(&h, "hang");
  add_cut(&h, TPUCI_OUTCOME_TIMEOUT, "timed out after 15s while running tests/test_m.py::b",
          "a b c d", "a=failed", "b", NULL);
  ids = failed(&h, NULL);
  assert_string_equal(ids, "a b c d");
  free(ids);
  assert_true(tpuci__attempt_abnormal(&h.attempts[0]));
  assert_int_equal(h.attempts[0].missing, 2);  /* c and d */
  assert_int_equal(tpuci__history_final(hist(&h, "b"))->outcome, TPUCI_TEST_FAILED);
  assert_string_equal(tpuci__history_final(hist(&h, "b"))->type, "tpuci.timeout");
  assert_null(tpuci__history_final(hist(&h, "c")));
  tpuci__history_summarize(&h, &s);
  assert_int_equal(s.tests, 4);
  assert_int_equal(s.failed, 2);
  assert_int_equal(s.not_run, 2);

  /* Attempt 2 runs them: a fails again, b passes (flaky, attempt 1's
   * timeout kept as its earlier run), c and d pass. */
  next_ids(&h, &sel);
  add(&h, TPUCI_OUTCOME_FAILED, 1, NULL, "a=failed b=passed c=passed d=passed",
      (const char *const *) sel.items, sel.len);
  assert_true(tpuci__history_flaky(hist(&h, "b")));
  assert_false(tpuci__history_all_pass(&h));
  tpuci__history_summarize(&h, &s);
  assert_int_equal(s.tests, 4);
  assert_int_equal(s.failed, 1);
  assert_int_equal(s.passed, 3);
  assert_int_equal(s.flaky, 1);
  assert_int_equal(s.not_run, 0);
  xml = merged(&h);
  assert_non_null(strstr(xml, "<flakyFailure message=\"timed out after 15s while running "
                              "tests/test_m.py::b\" type=\"tpuci.timeout\">"));
  assert_non_null(strstr(xml, "; pytest did not finish; 2 tests did not report"));
  reparse(xml, &j);
  assert_int_equal(j.len, 5);  /* four tests and attempt 1 */
  assert_int_equal(by_name(&j, "b")->outcome, TPUCI_TEST_PASSED);
  assert_int_equal(by_name(&j, "b")->reruns, 1);
  tpuci__junit_free(&j);
  free(xml);
  tpuci__strv_free(&sel);
  tpuci__history_free(&h);
}

/* The XPASS variant: d passes, b hangs, c never runs. The retry runs b
 * and c only; the instance passes only when both did. */
static void test_flaky_only_when_every_collected_test_passed(void **state) {
  tpuci__history_t h;
  tpuci__strv_t sel = {0};
  char *ids;
  (void) state;

  tpuci__history_init(&h, "hang-xpass");
  add_cut(&h, TPUCI_OUTCOME_TIMEOUT, "timed out after 15s", "d b c", "d=passed", "b", NULL);
  ids = failed(&h, NULL);
  assert_string_equal(ids, "b c");  /* collection order, not a's */
  free(ids);
  next_ids(&h, &sel);
  /* A retry that passes but leaves c without a result. */
  add(&h, TPUCI_OUTCOME_PASSED, 0, NULL, "b=passed", (const char *const *) sel.items, sel.len);
  assert_false(tpuci__history_all_pass(&h));
  ids = failed(&h, NULL);
  assert_string_equal(ids, "c");
  free(ids);
  tpuci__history_free(&h);

  tpuci__history_init(&h, "hang-xpass");
  add_cut(&h, TPUCI_OUTCOME_TIMEOUT, "timed out after 15s", "d b c", "d=passed", "b", NULL);
  next_ids(&h, &sel);
  add(&h, TPUCI_OUTCOME_PASSED, 0, NULL, "b=passed c=passed", (const char *const *) sel.items,
      sel.len);
  assert_true(tpuci__history_all_pass(&h));
  assert_true(tpuci__history_flaky(hist(&h, "b")));
  assert_false(tpuci__history_flaky(hist(&h, "c")));  /* not run is no failure */
  tpuci__strv_free(&sel);
  tpuci__history_free(&h);
}

/* Cut short in other ways: a crash (SIGABRT) in the middle of a suite, a
 * test whose call passed but whose teardown hung, an infra end, a shard
 * without a collection, and a whole-suite attempt that said nothing. */
static void test_cut_short_kinds(void **state) {
  tpuci__history_t h;
  tpuci__history_summary_t s;
  tpuci__strv_t sel = {0};
  const tpuci__test_t *f;
  char *ids, *xml;
  int unknown = -1;
  (void) state;

  tpuci__history_init(&h, "abort");
  add_cut(&h, TPUCI_OUTCOME_FAILED, "exit 134", "a b c d e", "a=passed b=failed", "c", NULL);
  assert_true(tpuci__attempt_abnormal(&h.attempts[0]));  /* though b failed */
  f = tpuci__history_final(hist(&h, "c"));
  assert_int_equal(f->outcome, TPUCI_TEST_FAILED);
  assert_string_equal(f->type, "tpuci.crash");
  assert_string_equal(f->message, "exit 134");
  tpuci__history_summarize(&h, &s);
  assert_int_equal(s.tests, 5);
  assert_int_equal(s.not_run, 2);
  ids = failed(&h, NULL);
  assert_string_equal(ids, "b c d e");
  free(ids);
  tpuci__history_free(&h);

  tpuci__history_init(&h, "teardown");
  add_cut(&h, TPUCI_OUTCOME_TIMEOUT, "timed out after 15s", "a b", "a=passed", "a", NULL);
  f = tpuci__history_final(hist(&h, "a"));
  assert_int_equal(f->outcome, TPUCI_TEST_ERROR);
  assert_string_equal(f->type, "tpuci.timeout");
  tpuci__history_free(&h);

  tpuci__history_init(&h, "infra");
  add_cut(&h, TPUCI_OUTCOME_INFRA, "engine went away", "a b", NULL, "a", NULL);
  assert_int_equal(tpuci__history_final(hist(&h, "a"))->outcome, TPUCI_TEST_ERROR);
  xml = merged(&h);
  assert_non_null(strstr(xml, "type=\"tpuci.infra\""));
  assert_int_equal(count(xml, "type=\"tpuci.not-run\""), 1);
  free(xml);
  tpuci__history_free(&h);

  /* A shard killed before pytest had collected: its selection is what it
   * was to run. */
  tpuci__strv_push(&sel, "tests/test_m.py::x");
  tpuci__strv_push(&sel, "tests/test_m.py::y");
  tpuci__history_init(&h, "shard");
  add_cut(&h, TPUCI_OUTCOME_TIMEOUT, "timed out after 15s", NULL, NULL, NULL, &sel);
  ids = failed(&h, &unknown);
  assert_string_equal(ids, "x y");
  assert_int_equal(unknown, 0);
  free(ids);
  tpuci__history_summarize(&h, &s);
  assert_int_equal(s.not_run, 2);
  tpuci__history_free(&h);
  tpuci__strv_free(&sel);

  /* The whole suite, killed before pytest had collected: nothing is
   * known of what it was to run, so all of it again. */
  tpuci__history_init(&h, "whole");
  add_cut(&h, TPUCI_OUTCOME_TIMEOUT, "timed out after 15s", NULL, NULL, NULL, NULL);
  ids = failed(&h, &unknown);
  assert_string_equal(ids, "");
  assert_int_equal(unknown, 1);
  free(ids);
  tpuci__history_free(&h);
}

/* retries.rerun = "unfinished": after a timeout in b, the retry runs b
 * (cut) and d (never reached), not a, which failed and finished; once
 * everything finished there is nothing to run. */
static void test_unfinished_ids(void **state) {
  tpuci__history_t h;
  tpuci__strv_t v = {0}, sel = {0};
  int unknown = -1;
  (void) state;
  tpuci__history_init(&h, "unit");
  add_cut(&h, TPUCI_OUTCOME_TIMEOUT, "timed out after 1s", "a b c d", "a=failed c=passed", "b", NULL);
  assert_int_equal(tpuci__history_unfinished_ids(&h, &v, &unknown), 2);
  assert_int_equal(unknown, 0);
  assert_string_equal(v.items[0], "tests/test_m.py::b");
  assert_string_equal(v.items[1], "tests/test_m.py::d");
  assert_int_equal(tpuci__pytest_next_selection(&h, NULL, 1, &sel), 1);
  assert_int_equal(sel.len, 2);
  tpuci__strv_free(&sel);
  /* The default reruns a too. */
  assert_int_equal(tpuci__pytest_next_selection(&h, NULL, 0, &sel), 1);
  assert_int_equal(sel.len, 3);
  tpuci__strv_free(&sel);
  /* The retry of b and d finishes both (b fails): nothing unfinished. */
  {
    const char *s2[] = {"tests/test_m.py::b", "tests/test_m.py::d"};
    tpuci__strv_t prev = {0};
    add(&h, TPUCI_OUTCOME_FAILED, 1, "exit 1", "b=failed d=passed", s2, 2);
    tpuci__strv_push(&prev, s2[0]);
    tpuci__strv_push(&prev, s2[1]);
    assert_int_equal(tpuci__pytest_next_selection(&h, &prev, 1, &sel), -1);
    assert_int_equal(sel.len, 0);
    tpuci__strv_free(&prev);
  }
  tpuci__strv_free(&v);
  tpuci__history_free(&h);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_flaky_after_rerun_of_failures),
    cmocka_unit_test(test_still_failing_is_rerun_failure),
    cmocka_unit_test(test_timeout_keeps_finished_tests),
    cmocka_unit_test(test_crash_before_report_then_pass),
    cmocka_unit_test(test_last_attempt_crashed_counts_absent_as_not_run),
    cmocka_unit_test(test_abnormal_kinds),
    cmocka_unit_test(test_empty_and_multiple),
    cmocka_unit_test(test_commands_and_running),
    cmocka_unit_test(test_timeout_retries_running_and_unfinished),
    cmocka_unit_test(test_flaky_only_when_every_collected_test_passed),
    cmocka_unit_test(test_cut_short_kinds),
    cmocka_unit_test(test_unfinished_ids),
  };
  if (argc == 3 && strcmp(argv[1], "--emit") == 0) return emit(argv[2], 0);
  if (argc == 3 && strcmp(argv[1], "--emit-all") == 0) return emit(argv[2], 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
