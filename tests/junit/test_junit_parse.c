/* JUnit XML parsing: real pytest 7 reports (xunit1 and xunit2), other
 * shapes, hostile and broken input, node ids, escaping.
 *
 * `test_junit_parse --dump FILE` prints "id<TAB>outcome" per test case
 * instead of running the tests (check_real_pytest.sh compares a fresh
 * pytest run with the committed fixture that way). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "kind/pytest/junit.h"
#include "kind/pytest/shard.h"

#ifndef TPUCI_JUNIT_DATA
#error "TPUCI_JUNIT_DATA must name the test data folder"
#endif

static char *data_path(const char *name) {
  return tpuci__printf("%s/%s", TPUCI_JUNIT_DATA, name);
}

static int parse_data(const char *name, tpuci__junit_t *j, tpuci__err_t *err) {
  char *p = data_path(name);
  int r = tpuci__junit_parse_file(p, j, err);
  free(p);
  return r;
}

static const tpuci__test_t *find(const tpuci__junit_t *j, const char *id) {
  size_t i;
  for (i = 0; i < j->len; i++)
    if (strcmp(j->items[i].id, id) == 0) return &j->items[i];
  print_error("no test %s\n", id);
  fail();
  return NULL;
}

static int contains(const char *hay, const char *needle) {
  return hay != NULL && strstr(hay, needle) != NULL;
}

static void assert_near(double a, double b) {
  if (a - b > 1e-9 || b - a > 1e-9) {
    print_error("%.9f != %.9f\n", a, b);
    fail();
  }
}

/* Every byte sequence is valid UTF-8. */
static int valid_utf8(const char *s) {
  const unsigned char *p = (const unsigned char *) s;
  while (*p) {
    int n = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2
            : (*p & 0xF8) == 0xF0 ? 3 : -1;
    if (n < 0) return 0;
    p++;
    while (n-- > 0) {
      if ((*p & 0xC0) != 0x80) return 0;
      p++;
    }
  }
  return 1;
}

static void count_outcomes(const tpuci__junit_t *j, size_t counts[TPUCI_TEST__COUNT]) {
  size_t i;
  memset(counts, 0, sizeof(size_t) * TPUCI_TEST__COUNT);
  for (i = 0; i < j->len; i++) counts[j->items[i].outcome]++;
}

/* ------------------------------------------------------------------ */

/* The node ids pytest itself listed for the same suite. */
static void assert_ids_match_collection(const tpuci__junit_t *j) {
  char *p = data_path("collect_ok.txt"), *text;
  size_t len, i;
  tpuci__strv_t ids = {0};
  tpuci__err_t err = {0};

  assert_int_equal(tpuci__read_file(p, &text, &len), 0);
  assert_int_equal(tpuci__collect_parse(text, len, &ids, &err), 0);
  assert_int_equal(ids.len, 21);
  for (i = 0; i < ids.len; i++) find(j, ids.items[i]);
  /* ... plus the module that failed to import. */
  assert_int_equal(j->len, ids.len + 1);
  tpuci__strv_free(&ids);
  free(text);
  free(p);
}

static void test_pytest_xunit2(void **state) {
  tpuci__junit_t j = {0};
  tpuci__err_t err = {0};
  const tpuci__test_t *t;
  size_t c[TPUCI_TEST__COUNT];
  (void) state;

  assert_int_equal(parse_data("pytest7_xunit2.xml", &j, &err), 0);
  assert_null(err.msg);
  assert_int_equal(j.suites, 1);
  assert_int_equal(j.len, 22);  /* 23 <testcase>s, one test twice */
  count_outcomes(&j, c);
  assert_int_equal(c[TPUCI_TEST_PASSED], 9);
  assert_int_equal(c[TPUCI_TEST_FAILED], 7);
  assert_int_equal(c[TPUCI_TEST_ERROR], 3);
  assert_int_equal(c[TPUCI_TEST_SKIPPED], 2);
  assert_int_equal(c[TPUCI_TEST_XFAIL], 1);

  t = &j.items[0];  /* report order is kept */
  assert_string_equal(t->id, "suite/test_broken_import.py");
  assert_string_equal(t->classname, "");
  assert_string_equal(t->name, "suite.test_broken_import");
  assert_null(t->file);
  assert_int_equal(t->line, -1);
  assert_int_equal(t->outcome, TPUCI_TEST_ERROR);
  assert_string_equal(t->message, "collection failure");
  assert_true(contains(t->text, "ModuleNotFoundError: No module named 'not_a_real_module'"));
  assert_true(contains(t->text, "in <module>"));  /* entities decoded */

  t = find(&j, "suite/test_mod.py::test_pass");
  assert_int_equal(t->outcome, TPUCI_TEST_PASSED);
  assert_string_equal(t->classname, "suite.test_mod");
  assert_string_equal(t->name, "test_pass");
  assert_null(t->message);
  assert_null(t->text);
  assert_true(contains(t->system_out, "Captured Out"));
  assert_true(contains(t->system_err, "Captured Err"));

  t = find(&j, "suite/test_mod.py::test_fail");
  assert_int_equal(t->outcome, TPUCI_TEST_FAILED);
  assert_string_equal(t->message, "AssertionError: x should be 2\nassert 1 == 2");
  assert_null(t->type);
  assert_true(contains(t->text, ">       assert x == 2, \"x should be 2\""));
  assert_true(contains(t->text, "suite/test_mod.py:13: AssertionError"));
  assert_true(contains(t->system_out, "some captured output"));

  t = find(&j, "suite/test_mod.py::test_error_in_fixture");
  assert_int_equal(t->outcome, TPUCI_TEST_ERROR);
  assert_string_equal(t->message, "failed on setup with \"RuntimeError: database is down\"");
  assert_true(contains(t->text, "conftest.py:14: RuntimeError"));

  t = find(&j, "suite/test_mod.py::test_skip");
  assert_int_equal(t->outcome, TPUCI_TEST_SKIPPED);
  assert_string_equal(t->type, "pytest.skip");
  assert_string_equal(t->message, "not on this platform");
  assert_string_equal(t->text, "/src/suite/test_mod.py:21: not on this platform");
  t = find(&j, "suite/test_mod.py::test_skipif");
  assert_int_equal(t->outcome, TPUCI_TEST_SKIPPED);
  assert_string_equal(t->message, "never here");

  t = find(&j, "suite/test_mod.py::test_xfail");
  assert_int_equal(t->outcome, TPUCI_TEST_XFAIL);
  assert_string_equal(t->type, "pytest.xfail");
  assert_string_equal(t->message, "known bug #12");
  assert_null(t->text);

  t = find(&j, "suite/test_mod.py::test_xpass_strict");
  assert_int_equal(t->outcome, TPUCI_TEST_FAILED);
  assert_string_equal(t->message, "[XPASS(strict)] fixed upstream");
  assert_int_equal(find(&j, "suite/test_mod.py::test_xpass")->outcome, TPUCI_TEST_PASSED);

  assert_int_equal(find(&j, "suite/test_mod.py::test_param[1-a]")->outcome, TPUCI_TEST_PASSED);
  assert_int_equal(find(&j, "suite/test_mod.py::test_param[2-b/c]")->outcome, TPUCI_TEST_PASSED);
  t = find(&j, "suite/test_mod.py::test_param[3-x::y]");
  assert_int_equal(t->outcome, TPUCI_TEST_FAILED);
  assert_string_equal(t->message, "assert 3 != 3");
  t = find(&j, "suite/test_mod.py::test_param[4-<&>\"]");
  assert_string_equal(t->name, "test_param[4-<&>\"]");
  assert_int_equal(t->outcome, TPUCI_TEST_PASSED);

  /* A call failure and a teardown error: two <testcase>s, one test. */
  t = find(&j, "suite/test_mod.py::test_call_fail_and_teardown_error");
  assert_int_equal(t->outcome, TPUCI_TEST_FAILED);
  assert_string_equal(t->message, "assert 1 == 2");
  assert_true(contains(t->text, "suite/test_mod.py:50: AssertionError"));
  assert_true(contains(t->text, "--- also error: failed on teardown with \"ValueError: teardown exploded\" ---"));
  assert_true(contains(t->text, "conftest.py:20: ValueError"));
  t = find(&j, "suite/test_mod.py::test_pass_and_teardown_error");
  assert_int_equal(t->outcome, TPUCI_TEST_ERROR);
  assert_string_equal(t->message, "failed on teardown with \"ValueError: teardown exploded\"");

  t = find(&j, "suite/test_mod.py::test_unicode_\xc3\xbcn\xc3\xaf");
  assert_int_equal(t->outcome, TPUCI_TEST_FAILED);
  assert_true(contains(t->message, "assert '\xc3\xa9' == 'e'"));
  /* pytest writes the ESC it cannot put in XML as "#x1B". */
  assert_true(contains(t->system_err, "control char #x1B[31m and \xc3\xa9"));

  assert_int_equal(find(&j, "suite/test_mod.py::TestCls::test_method")->outcome, TPUCI_TEST_PASSED);
  assert_int_equal(find(&j, "suite/test_mod.py::TestCls::test_values[0.5]")->outcome,
                   TPUCI_TEST_PASSED);
  t = find(&j, "suite/test_mod.py::TestCls::test_values[1.5]");
  assert_string_equal(t->classname, "suite.test_mod.TestCls");
  assert_int_equal(t->outcome, TPUCI_TEST_FAILED);
  t = find(&j, "suite/test_mod.py::TestCls::TestInner::test_nested");
  assert_string_equal(t->classname, "suite.test_mod.TestCls.TestInner");
  assert_int_equal(t->outcome, TPUCI_TEST_PASSED);
  assert_int_equal(find(&j, "suite/sub/test_deep.py::test_deep")->outcome, TPUCI_TEST_PASSED);
  t = find(&j, "suite/sub/test_deep.py::TestDeep::test_long_message");
  assert_int_equal(t->outcome, TPUCI_TEST_FAILED);
  assert_true(contains(t->message, "...Full output truncated"));

  assert_ids_match_collection(&j);
  tpuci__junit_free(&j);
}

static void test_pytest_xunit1(void **state) {
  tpuci__junit_t j = {0}, j2 = {0};
  tpuci__err_t err = {0};
  const tpuci__test_t *t;
  size_t c[TPUCI_TEST__COUNT], i;
  (void) state;

  assert_int_equal(parse_data("pytest7_xunit1.xml", &j, &err), 0);
  assert_int_equal(j.len, 22);
  count_outcomes(&j, c);
  assert_int_equal(c[TPUCI_TEST_PASSED], 9);
  assert_int_equal(c[TPUCI_TEST_FAILED], 7);
  assert_int_equal(c[TPUCI_TEST_ERROR], 3);

  t = &j.items[0];
  assert_string_equal(t->id, "suite/test_broken_import.py");
  assert_string_equal(t->file, "suite/test_broken_import.py");
  t = find(&j, "suite/test_mod.py::test_pass");
  assert_string_equal(t->file, "suite/test_mod.py");
  assert_int_equal(t->line, 5);  /* pytest's line numbers are 0-based */
  t = find(&j, "suite/test_mod.py::TestCls::TestInner::test_nested");
  assert_string_equal(t->file, "suite/test_mod.py");
  assert_true(t->line > 60);
  assert_ids_match_collection(&j);

  /* Same ids and outcomes as the xunit2 report of the same run. */
  assert_int_equal(parse_data("pytest7_xunit2.xml", &j2, &err), 0);
  for (i = 0; i < j.len; i++) {
    assert_string_equal(j.items[i].id, j2.items[i].id);
    assert_int_equal(j.items[i].outcome, j2.items[i].outcome);
  }
  tpuci__junit_free(&j);
  tpuci__junit_free(&j2);
}

static void test_bare_testsuite(void **state) {
  tpuci__junit_t j = {0};
  tpuci__err_t err = {0};
  const tpuci__test_t *t;
  (void) state;

  assert_int_equal(parse_data("bare_testsuite.xml", &j, &err), 0);
  assert_int_equal(j.suites, 1);
  assert_int_equal(j.len, 4);
  t = &j.items[0];
  assert_string_equal(t->id, "tests/test_api.py::test_get");
  assert_int_equal(t->line, 10);
  assert_near(t->time_s, 0.25);
  t = &j.items[1];
  assert_string_equal(t->id, "tests/test_api.py::TestPost::test_create[json]");
  assert_int_equal(t->outcome, TPUCI_TEST_FAILED);
  assert_near(t->time_s, 0.125);
  assert_string_equal(t->message, "assert 201 == 500");
  assert_true(contains(t->text, ">       assert resp.status == 500"));
  assert_string_equal(t->system_out, "request sent");
  t = &j.items[2];
  assert_int_equal(t->outcome, TPUCI_TEST_SKIPPED);
  assert_string_equal(t->text, "tests/test_api.py:31: no network");
  assert_near(j.items[3].time_s, 0.001);  /* "1e-3" */
  tpuci__junit_free(&j);
}

static void test_nested_latin1(void **state) {
  tpuci__junit_t j = {0};
  tpuci__err_t err = {0};
  (void) state;

  assert_int_equal(parse_data("nested_latin1.xml", &j, &err), 0);
  assert_int_equal(j.suites, 2);
  assert_int_equal(j.len, 2);
  /* ISO-8859-1 comes out as UTF-8. */
  assert_string_equal(j.items[0].id, "pkg/test_caf\xc3\xa9.py::test_cr\xc3\xa8me");
  assert_near(j.items[0].time_s, 2.5);
  assert_string_equal(j.items[1].id, "pkg/test_b.py::test_b");
  assert_int_equal(j.items[1].outcome, TPUCI_TEST_ERROR);
  assert_string_equal(j.items[1].type, "RuntimeError");
  assert_string_equal(j.items[1].text, "trace");
  assert_near(j.items[1].time_s, 0);  /* time="bogus" */
  tpuci__junit_free(&j);
}

static void test_truncated_keeps_complete_cases(void **state) {
  tpuci__junit_t j = {0};
  tpuci__err_t err = {0};
  (void) state;

  assert_int_equal(parse_data("truncated.xml", &j, &err), TPUCI_EIO);
  assert_non_null(err.msg);
  assert_true(contains(err.msg, "truncated.xml:39:"));
  assert_true(contains(err.msg, "unclosed token") || contains(err.msg, "no element found"));
  assert_int_equal(j.len, 4);
  assert_string_equal(j.items[3].id, "suite/test_mod.py::test_error_in_fixture");
  tpuci__junit_free(&j);
  tpuci__err_clear(&err);
}

static void test_malformed_position(void **state) {
  tpuci__junit_t j = {0};
  tpuci__err_t err = {0};
  (void) state;

  assert_int_equal(parse_data("malformed.xml", &j, &err), TPUCI_EIO);
  assert_true(contains(err.msg, "malformed.xml:5:"));
  assert_true(contains(err.msg, "mismatched tag"));
  assert_int_equal(j.len, 1);
  tpuci__junit_free(&j);
  tpuci__err_clear(&err);

  assert_int_equal(parse_data("wrong_root.xml", &j, &err), TPUCI_EIO);
  assert_true(contains(err.msg, "wrong_root.xml:2:1: the root element is <html>"));
  tpuci__junit_free(&j);
  tpuci__err_clear(&err);

  assert_int_equal(tpuci__junit_parse("", 0, &j, &err), TPUCI_EIO);
  assert_true(contains(err.msg, "junit:1:"));
  tpuci__err_clear(&err);
  assert_int_equal(tpuci__junit_parse("\x00\xff\xfe garbage", 11, &j, &err), TPUCI_EIO);
  tpuci__err_clear(&err);
  assert_int_equal(tpuci__junit_parse("<testsuite>", 11, &j, &err), TPUCI_EIO);
  assert_true(contains(err.msg, "no element found"));
  tpuci__err_clear(&err);
  assert_int_equal(j.len, 0);

  {
    char *p = data_path("no-such-file.xml");
    assert_int_equal(tpuci__junit_parse_file(p, &j, &err), -2 /* -ENOENT */);
    assert_true(contains(err.msg, "no-such-file.xml: cannot read"));
    tpuci__err_clear(&err);
    free(p);
  }
}

static void test_entities_refused(void **state) {
  tpuci__junit_t j = {0};
  tpuci__err_t err = {0};
  clock_t t0 = clock();
  (void) state;

  assert_int_equal(parse_data("billion_laughs.xml", &j, &err), TPUCI_EIO);
  assert_true(contains(err.msg, "billion_laughs.xml:3:"));
  assert_true(contains(err.msg, "entity declarations are not allowed (<!ENTITY lol>)"));
  assert_int_equal(j.len, 0);
  assert_true((double) (clock() - t0) / CLOCKS_PER_SEC < 1.0);
  tpuci__err_clear(&err);

  assert_int_equal(parse_data("xxe.xml", &j, &err), TPUCI_EIO);
  assert_true(contains(err.msg, "<!ENTITY secret>"));
  assert_int_equal(j.len, 0);
  tpuci__err_clear(&err);

  /* A DOCTYPE alone is fine. */
  assert_int_equal(parse_data("doctype_only.xml", &j, &err), 0);
  assert_int_equal(j.len, 1);
  tpuci__junit_free(&j);
}

static void test_huge_attribute_and_body(void **state) {
  const size_t big = (size_t) 32 << 20;
  tpuci__buf_t b;
  tpuci__junit_t j = {0};
  tpuci__err_t err = {0};
  char *fill = malloc(big);
  const tpuci__test_t *t;
  size_t i;
  clock_t t0;
  double secs;
  (void) state;

  /* A 32 MiB message attribute: "HEAD" + x... + "TAIL". */
  memset(fill, 'x', big);
  memcpy(fill, "HEAD", 4);
  memcpy(fill + big - 4, "TAIL", 4);
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "<testsuites><testsuite><testcase classname=\"m\" name=\"t\"><failure message=\"");
  tpuci__buf_add(&b, fill, big);
  tpuci__buf_adds(&b, "\">");
  /* A 10 MB body of two-byte characters, then the assertion. */
  for (i = 0; i < 5 * 1024 * 1024; i++) tpuci__buf_add(&b, "\xc3\xa9", 2);
  tpuci__buf_adds(&b, "E   assert 1 == 2</failure></testcase></testsuite></testsuites>");
  t0 = clock();
  assert_int_equal(tpuci__junit_parse(b.data, b.len, &j, &err), 0);
  secs = (double) (clock() - t0) / CLOCKS_PER_SEC;
  print_message("parsed %zu MiB with a 32 MiB attribute in %.2f s\n", b.len >> 20, secs);
  assert_int_equal(j.len, 1);
  t = &j.items[0];
  assert_true(strlen(t->message) < TPUCI__JUNIT_MESSAGE_MAX + 64);
  assert_true(strncmp(t->message, "HEADxxx", 7) == 0);
  assert_true(contains(t->message, "bytes truncated by tpuci"));
  assert_string_equal(t->message + strlen(t->message) - 7, "xxxTAIL");
  assert_true(strlen(t->text) < TPUCI__JUNIT_TEXT_MAX + 64);
  assert_true(contains(t->text, "bytes truncated by tpuci"));
  assert_string_equal(t->text + strlen(t->text) - 17, "E   assert 1 == 2");
  assert_true(valid_utf8(t->text));
  /* How long it took is printed, not checked: machines are shared. */
  tpuci__junit_free(&j);
  tpuci__buf_free(&b);
  free(fill);
}

static void test_deep_nesting(void **state) {
  tpuci__buf_t b;
  tpuci__junit_t j = {0};
  tpuci__err_t err = {0};
  int i;
  (void) state;

  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "<testsuites><testsuite><testcase classname=\"a\" name=\"ok\"/><testcase>");
  for (i = 0; i < 200000; i++) tpuci__buf_adds(&b, "<x>");
  assert_int_equal(tpuci__junit_parse(b.data, b.len, &j, &err), TPUCI_EIO);
  assert_true(contains(err.msg, "nested deeper than 64"));
  assert_int_equal(j.len, 1);
  tpuci__junit_free(&j);
  tpuci__err_clear(&err);
  tpuci__buf_free(&b);
}

static void test_parse_appends_and_merges(void **state) {
  tpuci__junit_t j = {0};
  tpuci__err_t err = {0};
  const char *a = "<testsuite><testcase classname=\"t.test_a\" name=\"x\" time=\"1\"/></testsuite>";
  const char *b = "<testsuite><testcase classname=\"t.test_a\" name=\"x\" time=\"2\">"
                  "<skipped message=\"s\"/></testcase>"
                  "<testcase classname=\"t.test_a\" name=\"y\"/></testsuite>";
  (void) state;

  /* Two outcome elements in one test case: the worse one, else the first. */
  {
    const char *two = "<testsuite><testcase classname=\"t.test_b\" name=\"z\">"
                      "<error message=\"e1\">E</error><failure message=\"f1\">F1</failure>"
                      "<failure message=\"f2\">F2</failure></testcase></testsuite>";
    assert_int_equal(tpuci__junit_parse(two, strlen(two), &j, &err), 0);
    assert_int_equal(j.items[0].outcome, TPUCI_TEST_FAILED);
    assert_string_equal(j.items[0].message, "f1");
    assert_string_equal(j.items[0].text, "E\n--- failure: f1 ---\nF1\n--- failure: f2 ---\nF2");
    tpuci__junit_free(&j);
  }

  /* Shards of one run parse into one result; a repeated test merges. */
  assert_int_equal(tpuci__junit_parse(a, strlen(a), &j, &err), 0);
  assert_int_equal(tpuci__junit_parse(b, strlen(b), &j, &err), 0);
  assert_int_equal(j.len, 2);
  assert_int_equal(j.suites, 2);
  assert_int_equal(j.items[0].outcome, TPUCI_TEST_SKIPPED);
  assert_near(j.items[0].time_s, 3);
  tpuci__junit_free(&j);
}

static void test_many_repeats_and_tests(void **state) {
  tpuci__buf_t b;
  tpuci__junit_t j = {0};
  tpuci__err_t err = {0};
  char body[1024];
  int i;
  clock_t t0;
  double secs;
  (void) state;

  /* 100k copies of one failing test case: merging stays cheap. */
  memset(body, 'y', sizeof(body) - 1);
  body[sizeof(body) - 1] = '\0';
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "<testsuite>");
  for (i = 0; i < 100000; i++)
    tpuci__buf_addf(&b, "<testcase classname=\"t.test_a\" name=\"x\" time=\"0.001\">"
                        "<failure message=\"m%d\">%s</failure></testcase>", i, body);
  tpuci__buf_adds(&b, "</testsuite>");
  t0 = clock();
  assert_int_equal(tpuci__junit_parse(b.data, b.len, &j, &err), 0);
  secs = (double) (clock() - t0) / CLOCKS_PER_SEC;
  print_message("100k repeats of one test case (%zu MiB) in %.2f s\n", b.len >> 20, secs);
  assert_int_equal(j.len, 1);
  assert_int_equal(j.items[0].outcome, TPUCI_TEST_FAILED);
  assert_string_equal(j.items[0].message, "m0");
  assert_near(j.items[0].time_s, 100.0);
  assert_true(strlen(j.items[0].text) < TPUCI__JUNIT_TEXT_MAX + 64);
  tpuci__junit_free(&j);
  tpuci__buf_free(&b);

  /* 200k distinct tests. */
  tpuci__buf_adds(&b, "<testsuite>");
  for (i = 0; i < 200000; i++)
    tpuci__buf_addf(&b, "<testcase classname=\"t.test_%d\" name=\"test_%d\"/>", i % 100, i);
  tpuci__buf_adds(&b, "</testsuite>");
  t0 = clock();
  assert_int_equal(tpuci__junit_parse(b.data, b.len, &j, &err), 0);
  secs = (double) (clock() - t0) / CLOCKS_PER_SEC;
  print_message("200k test cases in %.2f s\n", secs);
  assert_int_equal(j.len, 200000);
  assert_string_equal(j.items[199999].id, "t/test_99.py::test_199999");
  tpuci__junit_free(&j);
  tpuci__buf_free(&b);
}

static void test_node_ids(void **state) {
  static const char *const cases[][4] = {
    /* classname, name, file, id */
    {"tests.test_mod.TestCls", "test_x[param]", NULL, "tests/test_mod.py::TestCls::test_x[param]"},
    {"tests.test_mod", "test_x[a.b::c]", NULL, "tests/test_mod.py::test_x[a.b::c]"},
    {"test_top", "test_a", NULL, "test_top.py::test_a"},
    {"a.b.c.test_m.TestA.TestB", "test_x", NULL, "a/b/c/test_m.py::TestA::TestB::test_x"},
    {"", "tests.test_broken", NULL, "tests/test_broken.py"},
    {"pytest", "internal", NULL, "pytest::internal"},
    {"tests.test_mod", "test_x", "tests/test_mod.py", "tests/test_mod.py::test_x"},
    {"tests.test_mod.TestA.TestB", "t[1]", "tests/test_mod.py", "tests/test_mod.py::TestA::TestB::t[1]"},
    {"prefix.tests.test_mod.TestA", "t", "tests/test_mod.py", "tests/test_mod.py::TestA::t"},
    {"suite.test_mod", "suite.test_mod.func", "suite/test_mod.py", "suite/test_mod.py::suite.test_mod.func"},
    {"docs.readme.txt", "readme.txt", "docs/readme.txt", "docs/readme.txt::readme.txt"},
    {"", "tests.test_broken", "tests/test_broken.py", "tests/test_broken.py"},
    /* Documented limits: an upper-case module reads as a class. */
    {"tests.TestUpper", "test_x", NULL, "tests.py::TestUpper::test_x"},
    {"tests.TestUpper", "test_x", "tests/TestUpper.py", "tests/TestUpper.py::test_x"},
  };
  size_t i;
  (void) state;

  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *id = tpuci__junit_node_id(cases[i][0], cases[i][1], cases[i][2]);
    assert_string_equal(id, cases[i][3]);
    free(id);
  }
}

static void test_mangle_roundtrip_and_resolve(void **state) {
  char *p = data_path("collect_ok.txt"), *text, *cls, *name, *id;
  size_t len, i;
  tpuci__strv_t ids = {0}, known = {0};
  tpuci__err_t err = {0};
  tpuci__junit_t j = {0};
  const char *xml = "<testsuite><testcase classname=\"tests.TestUpper\" name=\"test_x\"/>"
                    "<testcase classname=\"tests.test_ok\" name=\"test_y\"/></testsuite>";
  (void) state;

  assert_int_equal(tpuci__read_file(p, &text, &len), 0);
  assert_int_equal(tpuci__collect_parse(text, len, &ids, &err), 0);
  for (i = 0; i < ids.len; i++) {
    tpuci__junit_mangle(ids.items[i], &cls, &name);
    id = tpuci__junit_node_id(cls, name, NULL);
    assert_string_equal(id, ids.items[i]);
    free(id);
    free(cls);
    free(name);
  }
  tpuci__junit_mangle("suite/test_mod.py::test_param[3-x::y]", &cls, &name);
  assert_string_equal(cls, "suite.test_mod");
  assert_string_equal(name, "test_param[3-x::y]");
  free(cls);
  free(name);
  tpuci__junit_mangle("tests/test_m.py", &cls, &name);
  assert_string_equal(cls, "");
  assert_string_equal(name, "tests.test_m");
  free(cls);
  free(name);

  /* The collected ids fix what the heuristic gets wrong. */
  assert_int_equal(tpuci__junit_parse(xml, strlen(xml), &j, &err), 0);
  assert_string_equal(j.items[0].id, "tests.py::TestUpper::test_x");
  tpuci__strv_push(&known, "tests/TestUpper.py::test_x");
  tpuci__strv_push(&known, "tests/test_ok.py::test_y");
  assert_int_equal(tpuci__junit_resolve_ids(&j, &known), 1);
  assert_string_equal(j.items[0].id, "tests/TestUpper.py::test_x");
  assert_string_equal(j.items[1].id, "tests/test_ok.py::test_y");
  tpuci__junit_free(&j);
  tpuci__strv_free(&known);
  tpuci__strv_free(&ids);
  free(text);
  free(p);
}

static void test_escape(void **state) {
  tpuci__buf_t b;
  const char in[] = "a&b<c>d\"e'f\tg\nh\ri\x1bj\x7fk\xff\xc3\xa9\xef\xbf\xbe\xed\xa0\x80z";
  (void) state;

  tpuci__buf_init(&b);
  tpuci__xml_escape(&b, in, sizeof(in) - 1, 1);
  assert_string_equal(b.data, "a&amp;b&lt;c&gt;d&quot;e'f&#9;g&#10;h&#13;i#x1Bj\x7fk\xef\xbf\xbd"
                              "\xc3\xa9#xFFFE\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz");
  tpuci__buf_free(&b);
  tpuci__xml_escape(&b, in, sizeof(in) - 1, 0);
  assert_true(strncmp(b.data, "a&amp;b&lt;c&gt;d\"e'f\tg\nh&#13;i#x1B", 35) == 0);
  tpuci__buf_free(&b);
}

static int dump(const char *path) {
  tpuci__junit_t j = {0};
  tpuci__err_t err = {0};
  size_t i;
  int r = tpuci__junit_parse_file(path, &j, &err);
  if (r != 0) {
    fprintf(stderr, "%s\n", err.msg);
    tpuci__err_clear(&err);
  }
  for (i = 0; i < j.len; i++)
    printf("%s\t%s\n", j.items[i].id, tpuci__test_outcome_name(j.items[i].outcome));
  tpuci__junit_free(&j);
  return r != 0;
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_pytest_xunit2),
    cmocka_unit_test(test_pytest_xunit1),
    cmocka_unit_test(test_bare_testsuite),
    cmocka_unit_test(test_nested_latin1),
    cmocka_unit_test(test_truncated_keeps_complete_cases),
    cmocka_unit_test(test_malformed_position),
    cmocka_unit_test(test_entities_refused),
    cmocka_unit_test(test_huge_attribute_and_body),
    cmocka_unit_test(test_deep_nesting),
    cmocka_unit_test(test_parse_appends_and_merges),
    cmocka_unit_test(test_many_repeats_and_tests),
    cmocka_unit_test(test_node_ids),
    cmocka_unit_test(test_mangle_roundtrip_and_resolve),
    cmocka_unit_test(test_escape),
  };
  if (argc == 3 && strcmp(argv[1], "--dump") == 0) return dump(argv[2]);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
