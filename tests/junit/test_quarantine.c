/* core/kind/pytest/quarantine.c: reading tpuci-quarantine.yaml (every error
 * names the file, the line and the key), dates, expiry, matching node
 * ids (exactly, or as globs), and the history's "ready to release". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kind/pytest/quarantine.h"

static const char good[] =
    "# quarantined tests\n"
    "- test: \"tests/test_a.py::test_x\"\n"
    "  reason: flaky on the CPU emulation\n"
    "  owner: \"@alice\"\n"
    "  until: 2027-01-31\n"
    "- test: tests/net/*\n"
    "  reason: the network is down\n"
    "  owner: bob\n"
    "  until: 2020-01-01\n"
    "- test: \"tests/test_p.py::test_p[1-2]\"\n"
    "  reason: r\n"
    "  owner: o\n"
    "  until: 2099-12-31\n";

static void test_parse_and_match(void **state) {
  tpuci__quarantine_t q;
  tpuci__err_t err = {0, NULL};
  tpuci__strv_t warn = {0};
  (void) state;
  tpuci__quarantine_init(&q);
  assert_int_equal(tpuci__quarantine_parse(good, strlen(good), "q.yaml", &q, &err), 0);
  assert_int_equal(q.n, 3);
  assert_string_equal(q.entries[0].test, "tests/test_a.py::test_x");
  assert_string_equal(q.entries[0].owner, "@alice");
  assert_string_equal(q.entries[0].where, "q.yaml:2");
  assert_string_equal(q.entries[1].where, "q.yaml:6");
  assert_int_equal(q.entries[0].until_day, 20849);

  /* Before expiry every entry holds: a glob crosses '/' and '::'. */
  tpuci__quarantine_expire(&q, 18000, &warn);
  assert_int_equal(warn.len, 0);
  assert_ptr_equal(tpuci__quarantine_match(&q, "tests/test_a.py::test_x"), &q.entries[0]);
  assert_null(tpuci__quarantine_match(&q, "tests/test_a.py::test_xy"));
  assert_ptr_equal(tpuci__quarantine_match(&q, "tests/net/test_b.py::test_y"), &q.entries[1]);
  /* A node id with parameters matches itself, not as a bracket glob. */
  assert_ptr_equal(tpuci__quarantine_match(&q, "tests/test_p.py::test_p[1-2]"), &q.entries[2]);

  /* On 2026-12-04 the second entry has expired: a warning, no match. */
  tpuci__quarantine_expire(&q, tpuci__quarantine_day("2026-12-04"), &warn);
  assert_int_equal(warn.len, 1);
  assert_string_equal(warn.items[0], "q.yaml:6: the quarantine of 'tests/net/*' (owner bob) "
                                     "expired on 2020-01-01: it counts again");
  assert_null(tpuci__quarantine_match(&q, "tests/net/test_b.py::test_y"));
  assert_non_null(tpuci__quarantine_match(&q, "tests/test_a.py::test_x"));
  /* The last day still holds. */
  tpuci__quarantine_expire(&q, 20849, NULL);
  assert_false(q.entries[0].expired);
  tpuci__quarantine_expire(&q, 20850, NULL);
  assert_true(q.entries[0].expired);
  tpuci__strv_free(&warn);
  tpuci__quarantine_free(&q);
}

/* Parses `text` and expects it refused with exactly `want`. */
static void refused(const char *text, const char *want) {
  tpuci__quarantine_t q;
  tpuci__err_t err = {0, NULL};
  tpuci__quarantine_init(&q);
  assert_int_equal(tpuci__quarantine_parse(text, strlen(text), "q.yaml", &q, &err), TPUCI_ESPEC);
  assert_string_equal(err.msg, want);
  assert_int_equal(q.n, 0);
  tpuci__err_clear(&err);
}

static void test_errors(void **state) {
  (void) state;
  refused("- test: a\n  reason: r\n  until: 2027-01-31\n",
          "q.yaml:1: 'owner' is missing (every entry has test, reason, owner and until)");
  refused("- test: a\n  reason: r\n  owner: o\n  until: 2027-01-31\n"
          "- test: b\n  reasn: r\n  owner: o\n  until: 2027-01-31\n",
          "q.yaml:6: 'reasn': unknown key (an entry has test, reason, owner and until)");
  refused("- test: a\n  reason: r\n  owner: o\n  until: 2027-02-30\n",
          "q.yaml:4: 'until': '2027-02-30' is not a date YYYY-MM-DD (the last day the "
          "quarantine holds)");
  refused("- test: a\n  reason: \"\"\n  owner: o\n  until: 2027-01-31\n",
          "q.yaml:2: 'reason' must be a non-empty string");
  refused("- test: a\n  test: b\n  reason: r\n  owner: o\n  until: 2027-01-31\n",
          "q.yaml:2: 'test' given twice");
  refused("test: a\n", "q.yaml:1: the file is a list of entries (- test: ..., reason: ..., "
                       "owner: ..., until: ...)");
  refused("- just a string\n",
          "q.yaml:1: an entry is a mapping with the keys test, reason, owner and until");
  refused("- test: [a\n", "q.yaml:2:1: did not find expected ',' or ']'");
}

/* One document: a second list is refused, not left out (as tpuci.yaml
 * refuses one); an empty first document does not hide it either. */
static void test_second_document(void **state) {
  (void) state;
  refused("- test: a\n  reason: r\n  owner: o\n  until: 2027-01-31\n"
          "---\n- test: b\n  reason: r\n  owner: o\n  until: 2027-01-31\n",
          "q.yaml:6: a second document (the quarantine is one list of entries; remove the "
          "'---' or join the lists)");
  refused("---\n---\n- test: b\n  reason: r\n  owner: o\n  until: 2027-01-31\n",
          "q.yaml:3: a second document (the quarantine is one list of entries; remove the "
          "'---' or join the lists)");
  refused("[]\n--- [a\n", "q.yaml:3:1: did not find expected ',' or ']'");
}

/* test: "*" covers every test: a warning; a narrower glob none. */
static void test_lint(void **state) {
  static const char text[] =
      "- test: \"*\"\n  reason: r\n  owner: bob\n  until: 2099-01-31\n"
      "- test: \"tests/*\"\n  reason: r\n  owner: o\n  until: 2099-01-31\n"
      "- test: \"**\"\n  reason: r\n  owner: o\n  until: 2001-01-31\n";
  tpuci__quarantine_t q;
  tpuci__err_t err = {0, NULL};
  tpuci__strv_t warn = {0};
  (void) state;
  tpuci__quarantine_init(&q);
  assert_int_equal(tpuci__quarantine_parse(text, strlen(text), "q.yaml", &q, &err), 0);
  tpuci__quarantine_expire(&q, 20000, NULL);
  tpuci__quarantine_lint(&q, &warn);
  assert_int_equal(warn.len, 1);  /* the expired "**" says nothing */
  assert_string_equal(warn.items[0], "q.yaml:1: test '*' covers every test: no test failure "
                                     "fails a pytest job while it holds (until 2099-01-31, "
                                     "owner bob)");
  tpuci__strv_free(&warn);
  tpuci__quarantine_free(&q);
}

static void test_empty_and_dates(void **state) {
  tpuci__quarantine_t q;
  tpuci__err_t err = {0, NULL};
  (void) state;
  tpuci__quarantine_init(&q);
  assert_int_equal(tpuci__quarantine_parse("", 0, "q.yaml", &q, &err), 0);
  assert_int_equal(q.n, 0);
  tpuci__quarantine_free(&q);
  assert_int_equal(tpuci__quarantine_parse("[]\n", 3, "q.yaml", &q, &err), 0);
  assert_int_equal(q.n, 0);
  tpuci__quarantine_free(&q);
  assert_int_equal(tpuci__quarantine_day("1970-01-01"), 0);
  assert_int_equal(tpuci__quarantine_day("2000-02-29"), 11016);
  assert_int_equal(tpuci__quarantine_day("2001-02-29"), -1);
  assert_int_equal(tpuci__quarantine_day("2027-1-31"), -1);
  assert_int_equal(tpuci__quarantine_day("2027-13-01"), -1);
  assert_int_equal(tpuci__quarantine_day(NULL), -1);
}

static void test_released(void **state) {
  (void) state;
  assert_true(tpuci__quarantine_released("fppp", 3));
  assert_false(tpuci__quarantine_released("pfpp", 3));
  /* Skips and runs without the test are left out; a flaky run is no pass. */
  assert_true(tpuci__quarantine_released("pp-ps-p", 4));
  assert_false(tpuci__quarantine_released("ppkp", 3));
  assert_false(tpuci__quarantine_released("pp", 3));
  assert_false(tpuci__quarantine_released(NULL, 1));
}

static void test_release_report(void **state) {
  tpuci__quarantine_t q;
  tpuci__err_t err = {0, NULL};
  json_t *recent = json_object();
  char *text;
  size_t n;
  (void) state;
  tpuci__quarantine_init(&q);
  assert_int_equal(tpuci__quarantine_parse(good, strlen(good), "q.yaml", &q, &err), 0);
  tpuci__quarantine_expire(&q, 18000, NULL);
  json_object_set_new(recent, "u\x1ftests/test_a.py::test_x", json_string("fppp"));
  json_object_set_new(recent, "u\x1ftests/net/a.py::t", json_string("ppp"));
  json_object_set_new(recent, "u\x1ftests/net/b.py::t", json_string("pfp"));
  text = tpuci__quarantine_release_report(&q, recent, 3, &n);
  /* test_x can go; the glob holds a test that failed; test_p never ran. */
  assert_int_equal(n, 1);
  assert_string_equal(text, "q.yaml:2: tests/test_a.py::test_x (owner @alice, until "
                            "2027-01-31): passed its last 3 runs: remove the entry\n");
  free(text);
  json_object_set_new(recent, "u\x1ftests/net/b.py::t", json_string("ppp"));
  text = tpuci__quarantine_release_report(&q, recent, 3, &n);
  assert_int_equal(n, 2);
  assert_non_null(strstr(text, "q.yaml:6: tests/net/* (owner bob, until 2020-01-01): its 2 "
                               "tests passed their last 3 runs: remove the entry\n"));
  free(text);
  json_decref(recent);
  tpuci__quarantine_free(&q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_and_match), cmocka_unit_test(test_errors),
      cmocka_unit_test(test_second_document), cmocka_unit_test(test_lint),
      cmocka_unit_test(test_empty_and_dates), cmocka_unit_test(test_released),
      cmocka_unit_test(test_release_report)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
