/* The timings store (.tpuci/timings.json) and shard balancing, with the
 * parser of `pytest --collect-only -q` output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kind/pytest/collection.h"
#include "kind/pytest/shard.h"
#include "kind/pytest/timings.h"

#ifndef TPUCI_JUNIT_DATA
#error "TPUCI_JUNIT_DATA must name the test data folder"
#endif

static void assert_near(double a, double b) {
  if (a - b > 1e-6 || b - a > 1e-6) fail_msg("%.9f != %.9f", a, b);
}

static char *tmpdir(void) {
  char *d = tpuci__strdup("/tmp/tpuci-timings-XXXXXX");
  assert_non_null(mkdtemp(d));
  return d;
}

static void rm_rf(const char *dir) {
  char *cmd = tpuci__printf("rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
  free(cmd);
}

/* ------------------------------------------------------------------ */
/* Timings                                                             */

static void test_timings_record_and_average(void **state) {
  tpuci__timings_t t;
  double d = -1;
  (void) state;

  tpuci__timings_init(&t);
  assert_int_equal(tpuci__timings_get(&t, "a", &d), 0);
  tpuci__timings_record(&t, "a", 1.0);
  assert_int_equal(tpuci__timings_get(&t, "a", &d), 1);
  assert_near(d, 1.0);
  tpuci__timings_record(&t, "a", 2.0);
  assert_int_equal(tpuci__timings_get(&t, "a", &d), 1);
  assert_near(d, 0.7 * 1.0 + 0.3 * 2.0);
  assert_near(t.items[0].last_s, 2.0);
  assert_int_equal(t.items[0].runs, 2);
  tpuci__timings_record(&t, "a", -1); /* ignored */
  tpuci__timings_record(&t, "a", 1.0 / 0.0);
  assert_int_equal(t.items[0].runs, 2);
  assert_int_equal(t.len, 1);
  tpuci__timings_free(&t);
}

static void test_timings_update_from_reports(void **state) {
  tpuci__timings_t t;
  tpuci__junit_t j = {0};
  tpuci__history_t h;
  tpuci__junit_attempt_t a;
  tpuci__err_t err = {0};
  double d;
  (void) state;

  tpuci__timings_init(&t);
  assert_int_equal(tpuci__junit_parse_file(TPUCI_JUNIT_DATA "/bare_testsuite.xml", &j, &err), 0);
  assert_int_equal(tpuci__timings_update(&t, &j), 4);
  assert_int_equal(tpuci__timings_get(&t, "tests/test_api.py::TestPost::test_create[json]", &d), 1);
  assert_near(d, 0.125);
  tpuci__junit_free(&j);

  /* Errors (setup failures) are not recorded. */
  assert_int_equal(tpuci__junit_parse_file(TPUCI_JUNIT_DATA "/pytest7_xunit2.xml", &j, &err), 0);
  memset(&a, 0, sizeof(a));
  a.outcome = TPUCI_OUTCOME_FAILED;
  a.exit_code = 1;
  tpuci__history_init(&h, "unit");
  tpuci__history_add(&h, &a, &j);
  assert_int_equal(tpuci__timings_update_history(&t, &h), 19);
  assert_int_equal(tpuci__timings_get(&t, "suite/test_mod.py::test_error_in_fixture", &d), 0);
  assert_int_equal(tpuci__timings_get(&t, "suite/test_mod.py::test_param[1-a]", &d), 1);
  /* The 3 errors are kept for failing first only: no duration. */
  assert_int_equal(t.len, 4 + 19 + 3);
  {
    tpuci__strv_t f = {0};
    size_t n = tpuci__timings_failed(&t, NULL, 1 << 20, &f), k;
    assert_true(n > 3);
    assert_int_equal(n, f.len);
    for (k = 0; k < f.len; k++)
      if (strcmp(f.items[k], "suite/test_mod.py::test_error_in_fixture") == 0) break;
    assert_true(k < f.len);
    tpuci__strv_free(&f);
    /* A byte cap keeps the list short. */
    assert_int_equal(tpuci__timings_failed(&t, NULL, 10, &f), 0);
  }
  tpuci__history_free(&h);
  tpuci__junit_free(&j);
  tpuci__timings_free(&t);
}

static void test_timings_save_load(void **state) {
  tpuci__timings_t t, u;
  tpuci__err_t err = {0};
  char *dir = tmpdir(), *path = tpuci__printf("%s/.tpuci/timings.json", dir), *text;
  size_t len, i;
  (void) state;

  tpuci__timings_init(&t);
  tpuci__timings_init(&u);
  /* A missing file is an empty store. */
  assert_int_equal(tpuci__timings_load(&u, path, &err), 0);
  assert_int_equal(u.len, 0);

  tpuci__timings_record(&t, "tests/b.py::t[\"q\"]", 0.123456);
  tpuci__timings_record(&t, "tests/a.py::t", 2.0);
  tpuci__timings_record(&t, "tests/a.py::t", 4.0);
  assert_int_equal(tpuci__timings_save(&t, path, &err), 0); /* makes .tpuci/ */
  assert_int_equal(tpuci__read_file(path, &text, &len), 0);
  assert_string_equal(text, "{\n"
                            " \"tests\": {\n"
                            "  \"tests/a.py::t\": {\n"
                            "   \"avg\": 2.6,\n"
                            "   \"last\": 4.0,\n"
                            "   \"runs\": 2\n"
                            "  },\n"
                            "  \"tests/b.py::t[\\\"q\\\"]\": {\n"
                            "   \"avg\": 0.1235,\n"
                            "   \"last\": 0.1235,\n"
                            "   \"runs\": 1\n"
                            "  }\n"
                            " },\n"
                            " \"version\": 1\n"
                            "}\n");
  free(text);
  {
    char *tmp = tpuci__printf("%s.tmp", path);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(access(tmp, F_OK), -1); /* renamed into place */
    free(tmp);
  }

  assert_int_equal(tpuci__timings_load(&u, path, &err), 0);
  assert_int_equal(u.len, 2);
  for (i = 0; i < t.len; i++) {
    double d;
    assert_int_equal(tpuci__timings_get(&u, t.items[i].id, &d), 1);
    if (d - t.items[i].avg_s > 1e-4 || t.items[i].avg_s - d > 1e-4) fail();
  }
  assert_int_equal(u.items[tpuci__idmap_get(&u.map, "tests/a.py::t")].runs, 2);
  tpuci__timings_free(&t);
  tpuci__timings_free(&u);
  rm_rf(dir);
  free(path);
  free(dir);
}

/* Durations a recording run measured (a tracer in the process) are kept
 * apart: they predict a run that records, never a plain run's split
 * (issue 44); they survive a save and a load, and a split says which it
 * planned with. */
static void test_timings_traced_apart(void **state) {
  tpuci__timings_t t, u;
  tpuci__junit_t j = {0};
  tpuci__history_t h;
  tpuci__junit_attempt_t a;
  tpuci__err_t err = {0};
  tpuci__shard_plan_t p;
  const char *ids[2] = {"t.py::slow", "t.py::fast"};
  char *dir = tmpdir(), *path = tpuci__printf("%s/timings.json", dir);
  double d;
  (void) state;
  tpuci__timings_init(&t);
  tpuci__timings_init(&u);
  assert_int_equal(tpuci__junit_parse_file(TPUCI_JUNIT_DATA "/bare_testsuite.xml", &j, &err), 0);
  memset(&a, 0, sizeof(a));
  a.outcome = TPUCI_OUTCOME_PASSED;
  tpuci__history_init(&h, "unit");
  h.traced = 1;
  tpuci__history_add(&h, &a, &j);
  assert_int_equal(tpuci__timings_update_history(&t, &h), 4);
  /* Known only traced: a plain run does not know it. */
  assert_int_equal(tpuci__timings_get(&t, "tests/test_api.py::TestPost::test_create[json]", &d), 0);
  assert_int_equal(
      tpuci__timings_get_traced(&t, "tests/test_api.py::TestPost::test_create[json]", &d), 1);
  assert_near(d, 0.125);
  /* A plain duration beside it: each run takes its own. */
  tpuci__timings_record(&t, "tests/test_api.py::TestPost::test_create[json]", 0.05);
  assert_int_equal(tpuci__timings_get(&t, "tests/test_api.py::TestPost::test_create[json]", &d), 1);
  assert_near(d, 0.05);
  assert_int_equal(
      tpuci__timings_get_traced(&t, "tests/test_api.py::TestPost::test_create[json]", &d), 1);
  assert_near(d, 0.125);
  /* A recording run without traced durations takes the plain ones. */
  tpuci__timings_record(&t, "t.py::plain_only", 2.0);
  assert_int_equal(tpuci__timings_get_traced(&t, "t.py::plain_only", &d), 1);
  assert_near(d, 2.0);
  assert_int_equal(tpuci__timings_save(&t, path, &err), 0);
  assert_int_equal(tpuci__timings_load(&u, path, &err), 0);
  assert_int_equal(
      tpuci__timings_get_traced(&u, "tests/test_api.py::TestPost::test_create[json]", &d), 1);
  assert_near(d, 0.125);
  assert_int_equal(tpuci__timings_get(&u, "tests/test_api.py::TestPost::test_create[json]", &d), 1);
  assert_near(d, 0.05);
  /* The split: "slow" is slow only under the tracer. */
  tpuci__timings_free(&t);
  tpuci__timings_init(&t);
  tpuci__timings_record(&t, "t.py::slow", 1.0);
  tpuci__timings_record(&t, "t.py::fast", 1.0);
  {
    tpuci__shard_ask_t ask = {
        .ids = ids, .n = 2, .timings = &t, .shards = 2, .by = TPUCI__SHARD_BY_TEST};
    tpuci__timings_t *tt = &t;
    size_t k = tpuci__idmap_get(&tt->map, "t.py::slow");
    tt->items[k].traced_s = 9.0;
    tt->items[k].traced_runs = 1;
    assert_int_equal(tpuci__shard_plan(&ask, &p, &err), 0);
    assert_near(p.total_s, 2.0);
    tpuci__shard_plan_free(&p);
    ask.traced = 1;
    assert_int_equal(tpuci__shard_plan(&ask, &p, &err), 0);
    assert_near(p.total_s, 10.0);
    tpuci__shard_plan_free(&p);
  }
  tpuci__history_free(&h);
  tpuci__junit_free(&j);
  tpuci__timings_free(&t);
  tpuci__timings_free(&u);
  rm_rf(dir);
  free(path);
  free(dir);
}

static void test_timings_corrupt(void **state) {
  static const char *const bad[][2] = {
      {"{\"version\": 1, \"tests\": {", "x.json:1:"},
      {"[1, 2]", "x.json: not a JSON object"},
      {"{\"version\": 2, \"tests\": {}}", "\"version\" must be 1"},
      {"{\"version\": 1, \"tests\": []}", "\"tests\" must be an object"},
      {"{\"version\": 1, \"tests\": {\"a\": {\"last\": -1}}}", "tests[\"a\"]"},
      {"{\"version\": 1, \"tests\": {\"a\": {\"last\": 1, \"avg\": \"x\"}}}", "tests[\"a\"]"},
      {"{\"version\": 1, \"tests\": {\"a\": {\"last\": 1, \"runs\": -1}}}", "tests[\"a\"]"},
      {"{\"version\": 1, \"tests\": {\"a\": 3}}", "tests[\"a\"]"},
      {"{\"version\": 1, \"tests\": {\"a\": {\"last\": 1, \"traced_runs\": 1}}}", "\"traced\")"},
      {"{\"version\": 1, \"tests\": {\"a\": {\"last\": 1, \"traced\": 1, \"traced_runs\": -2}}}",
       "tests[\"a\"]"},
      {"{\"a::b\": 1, \"a::b\": 2}", "duplicate"},
      {"{\"a::b\": \"slow\"}", "\"a::b\": a duration"},
  };
  tpuci__timings_t t;
  tpuci__err_t err = {0};
  char *dir = tmpdir(), *path = tpuci__printf("%s/timings.json", dir);
  size_t i;
  double d;
  (void) state;

  tpuci__timings_init(&t);
  tpuci__timings_record(&t, "keep", 5);
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    assert_int_equal(tpuci__timings_load_string(&t, bad[i][0], strlen(bad[i][0]), "x.json", &err),
                     TPUCI_EIO);
    if (strstr(err.msg, bad[i][1]) == NULL) fail_msg("case %zu: %s", i, err.msg);
    tpuci__err_clear(&err);
    /* A bad file changes nothing. */
    assert_int_equal(t.len, 1);
  }
  assert_int_equal(tpuci__write_file_atomic(path, "{oops", 5), 0);
  assert_int_equal(tpuci__timings_load(&t, path, &err), TPUCI_EIO);
  assert_non_null(strstr(err.msg, path));
  tpuci__err_clear(&err);

  /* pytest-split's flat .test_durations loads too. */
  {
    const char *flat = "{\"tests/a.py::t\": 1.5, \"tests/b.py::t\": 0}";
    assert_int_equal(tpuci__timings_load_string(&t, flat, strlen(flat), "d", &err), 0);
    assert_int_equal(tpuci__timings_get(&t, "tests/a.py::t", &d), 1);
    assert_near(d, 1.5);
    assert_int_equal(t.len, 3);
  }
  tpuci__timings_free(&t);
  rm_rf(dir);
  free(path);
  free(dir);
}

/* ------------------------------------------------------------------ */
/* --collect-only -q                                                   */

static int collect_file(const char *name, tpuci__strv_t *ids, tpuci__err_t *err) {
  char *p = tpuci__printf("%s/%s", TPUCI_JUNIT_DATA, name), *text;
  size_t len;
  int r;
  assert_int_equal(tpuci__read_file(p, &text, &len), 0);
  r = tpuci__collect_parse(text, len, ids, err);
  free(text);
  free(p);
  return r;
}

static void test_collect_parse(void **state) {
  tpuci__strv_t ids = {0};
  tpuci__err_t err = {0};
  const char *crlf = "a.py::t1\r\na.py::t2\r\na.py::t1\r\n\r\n2 tests collected in 0.01s\r\n";
  (void) state;

  assert_int_equal(collect_file("collect_ok.txt", &ids, &err), 0);
  assert_int_equal(ids.len, 21);
  assert_string_equal(ids.items[0], "suite/test_mod.py::test_pass");
  assert_string_equal(ids.items[10], "suite/test_mod.py::test_param[3-x::y]");
  assert_string_equal(ids.items[11], "suite/test_mod.py::test_param[4-<&>\"]");
  assert_string_equal(ids.items[20], "suite/sub/test_deep.py::TestDeep::test_long_message");
  tpuci__strv_free(&ids);

  assert_int_equal(collect_file("collect_errors.txt", &ids, &err), TPUCI_EIO);
  assert_non_null(strstr(err.msg, "errors during collection (21 node ids listed)"));
  assert_int_equal(ids.len, 21);
  tpuci__err_clear(&err);
  tpuci__strv_free(&ids);

  assert_int_equal(collect_file("collect_warnings.txt", &ids, &err), 0);
  assert_int_equal(ids.len, 2);
  assert_string_equal(ids.items[1], "test_w.py::TestX::test_b");
  tpuci__strv_free(&ids);

  assert_int_equal(collect_file("collect_qq.txt", &ids, &err), TPUCI_EIO);
  assert_non_null(strstr(err.msg, "not -qq"));
  tpuci__err_clear(&err);
  assert_int_equal(ids.len, 0);

  assert_int_equal(tpuci__collect_parse(crlf, strlen(crlf), &ids, &err), 0);
  assert_int_equal(ids.len, 2);
  assert_string_equal(ids.items[1], "a.py::t2");
  tpuci__strv_free(&ids);

  assert_int_equal(tpuci__collect_parse("no tests ran in 0.01s\n", 22, &ids, &err), 0);
  assert_int_equal(ids.len, 0);
  assert_int_equal(tpuci__collect_parse("hello\nworld\n", 12, &ids, &err), TPUCI_EIO);
  tpuci__err_clear(&err);
  assert_int_equal(tpuci__collect_parse("", 0, &ids, &err), TPUCI_EIO);
  tpuci__err_clear(&err);
}

/* ------------------------------------------------------------------ */
/* Shards                                                              */

/* 200 tests: five long ones and 195 between 0.1 and 2.0 s. */
static void skewed_suite(tpuci__strv_t *ids, tpuci__timings_t *t) {
  static const double longs[] = {30, 25, 20, 15, 10};
  unsigned seed = 12345;
  size_t i;
  for (i = 0; i < 200; i++) {
    char *id = tpuci__printf("tests/test_%02zu.py::test_%03zu", i % 17, i);
    double d;
    seed = seed * 1103515245u + 12345u;
    d = i % 40 == 7 ? longs[i / 40] : 0.1 + (double) ((seed >> 16) % 1900) / 1000.0;
    tpuci__timings_record(t, id, d);
    tpuci__strv_take(ids, id);
  }
}

static void check_partition(const tpuci__shard_plan_t *p, const tpuci__strv_t *ids) {
  tpuci__idmap_t seen;
  size_t s, i, total = 0;
  tpuci__idmap_init(&seen);
  for (s = 0; s < p->n; s++) {
    for (i = 0; i < p->shards[s].ids.len; i++) {
      assert_true(tpuci__idmap_get(&seen, p->shards[s].ids.items[i]) == TPUCI__IDMAP_NONE);
      tpuci__idmap_put(&seen, p->shards[s].ids.items[i], s);
      total++;
    }
  }
  assert_int_equal(total, ids->len);
  for (i = 0; i < ids->len; i++)
    assert_true(tpuci__idmap_get(&seen, ids->items[i]) != TPUCI__IDMAP_NONE);
  tpuci__idmap_free(&seen);
}

static void test_shard_balance_skewed(void **state) {
  tpuci__strv_t ids = {0};
  tpuci__timings_t t;
  tpuci__err_t err = {0};
  size_t ns[] = {2, 3, 4, 6, 8}, k;
  (void) state;

  tpuci__timings_init(&t);
  skewed_suite(&ids, &t);
  for (k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
    tpuci__shard_plan_t p, rr;
    double imb, rr_imb;
    size_t s;
    assert_int_equal(tpuci__shard_plan(&(tpuci__shard_ask_t){.ids = (const char *const *) ids.items,
                                                             .n = ids.len,
                                                             .timings = &t,
                                                             .shards = ns[k],
                                                             .by = TPUCI__SHARD_BY_TEST},
                                       &p, &err),
                     0);
    assert_false(p.by_count);
    assert_int_equal(p.known, 200);
    check_partition(&p, &ids);
    imb = tpuci__shard_imbalance(&p);
    /* Round-robin by count, what tpuci does when nothing is known. */
    assert_int_equal(tpuci__shard_plan(&(tpuci__shard_ask_t){.ids = (const char *const *) ids.items,
                                                             .n = ids.len,
                                                             .timings = NULL,
                                                             .shards = ns[k],
                                                             .by = TPUCI__SHARD_BY_TEST},
                                       &rr, &err),
                     0);
    {
      double max = 0, sum = 0;
      for (s = 0; s < rr.n; s++) {
        double load = 0;
        size_t i;
        for (i = 0; i < rr.shards[s].ids.len; i++) {
          double d;
          tpuci__timings_get(&t, rr.shards[s].ids.items[i], &d);
          load += d;
        }
        if (load > max) max = load;
        sum += load;
      }
      rr_imb = max / (sum / (double) rr.n);
    }
    print_message(
        "%zu shards: total %.1f s, ideal %.2f s, longest %.2f s: LPT %.4fx, by count %.4fx\n",
        ns[k], p.total_s, p.total_s / (double) ns[k], imb * p.total_s / (double) ns[k], imb,
        rr_imb);
    assert_true(imb <= 1.1);
    assert_true(imb >= 1.0);
    tpuci__shard_plan_free(&p);
    tpuci__shard_plan_free(&rr);
  }
  tpuci__strv_free(&ids);
  tpuci__timings_free(&t);
}

static void test_shard_deterministic(void **state) {
  tpuci__strv_t ids = {0}, shuffled = {0};
  tpuci__timings_t t;
  tpuci__err_t err = {0};
  tpuci__shard_plan_t a, b;
  size_t i, s;
  unsigned seed = 7;
  (void) state;

  tpuci__timings_init(&t);
  skewed_suite(&ids, &t);
  /* Many equal durations make the tie-break matter. */
  for (i = 0; i < 50; i++) t.items[i].avg_s = 1.0;
  tpuci__strv_copy(&shuffled, &ids);
  for (i = shuffled.len - 1; i > 0; i--) {
    size_t r;
    char *tmp;
    seed = seed * 1103515245u + 12345u;
    r = (seed >> 16) % (i + 1);
    tmp = shuffled.items[i];
    shuffled.items[i] = shuffled.items[r];
    shuffled.items[r] = tmp;
  }
  assert_int_equal(tpuci__shard_plan(&(tpuci__shard_ask_t){.ids = (const char *const *) ids.items,
                                                           .n = ids.len,
                                                           .timings = &t,
                                                           .shards = 5,
                                                           .by = TPUCI__SHARD_BY_TEST},
                                     &a, &err),
                   0);
  assert_int_equal(
      tpuci__shard_plan(&(tpuci__shard_ask_t){.ids = (const char *const *) shuffled.items,
                                              .n = shuffled.len,
                                              .timings = &t,
                                              .shards = 5,
                                              .by = TPUCI__SHARD_BY_TEST},
                        &b, &err),
      0);
  for (s = 0; s < 5; s++) {
    tpuci__idmap_t m;
    assert_int_equal(a.shards[s].ids.len, b.shards[s].ids.len);
    assert_true(a.shards[s].predicted_s == b.shards[s].predicted_s);
    tpuci__idmap_init(&m);
    for (i = 0; i < a.shards[s].ids.len; i++) tpuci__idmap_put(&m, a.shards[s].ids.items[i], i);
    for (i = 0; i < b.shards[s].ids.len; i++)
      assert_true(tpuci__idmap_get(&m, b.shards[s].ids.items[i]) != TPUCI__IDMAP_NONE);
    tpuci__idmap_free(&m);
    /* Each shard lists its tests in the order given (here: sorted). */
    for (i = 1; i < a.shards[s].ids.len; i++)
      assert_true(strcmp(a.shards[s].ids.items[i - 1] + 20, a.shards[s].ids.items[i] + 20) < 0);
  }
  tpuci__shard_plan_free(&a);
  tpuci__shard_plan_free(&b);
  tpuci__strv_free(&ids);
  tpuci__strv_free(&shuffled);
  tpuci__timings_free(&t);
}

static void test_shard_ties_by_id(void **state) {
  const char *ids[] = {"t::d", "t::b", "t::c", "t::a"};
  tpuci__timings_t t;
  tpuci__err_t err = {0};
  tpuci__shard_plan_t p;
  size_t i;
  (void) state;

  tpuci__timings_init(&t);
  for (i = 0; i < 4; i++) tpuci__timings_record(&t, ids[i], 1.0);
  assert_int_equal(
      tpuci__shard_plan(
          &(tpuci__shard_ask_t){
              .ids = ids, .n = 4, .timings = &t, .shards = 2, .by = TPUCI__SHARD_BY_TEST},
          &p, &err),
      0);
  /* Sorted a b c d, dealt to the least loaded, lowest index on ties;
   * listed in the order given. */
  assert_int_equal(p.shards[0].ids.len, 2);
  assert_string_equal(p.shards[0].ids.items[0], "t::c");
  assert_string_equal(p.shards[0].ids.items[1], "t::a");
  assert_string_equal(p.shards[1].ids.items[0], "t::d");
  assert_string_equal(p.shards[1].ids.items[1], "t::b");
  tpuci__shard_plan_free(&p);
  tpuci__timings_free(&t);
}

/* Tests recorded at 0 s (too quick to measure) still spread over the
 * shards: on equal loads the shard given fewer tests takes the next. */
static void test_shard_zero_durations(void **state) {
  const char *ids[] = {"t/a.py::test_1", "t/a.py::test_2", "t/b.py::test_1", "t/c.py::test_1"};
  tpuci__timings_t t;
  tpuci__err_t err = {0};
  tpuci__shard_plan_t p;
  size_t i;
  (void) state;

  tpuci__timings_init(&t);
  for (i = 0; i < 4; i++) tpuci__timings_record(&t, ids[i], 0);
  assert_int_equal(
      tpuci__shard_plan(
          &(tpuci__shard_ask_t){
              .ids = ids, .n = 4, .timings = &t, .shards = 2, .by = TPUCI__SHARD_BY_FILE},
          &p, &err),
      0);
  assert_false(p.by_count);
  /* Files a b c by name: a (2 tests) to shard 1, b to shard 2, then c
   * to shard 2, which has fewer tests. */
  assert_int_equal(p.shards[0].ids.len, 2);
  assert_int_equal(p.shards[1].ids.len, 2);
  assert_string_equal(p.shards[1].ids.items[0], "t/b.py::test_1");
  assert_string_equal(p.shards[1].ids.items[1], "t/c.py::test_1");
  tpuci__shard_plan_free(&p);
  assert_int_equal(
      tpuci__shard_plan(
          &(tpuci__shard_ask_t){
              .ids = ids, .n = 4, .timings = &t, .shards = 4, .by = TPUCI__SHARD_BY_TEST},
          &p, &err),
      0);
  for (i = 0; i < 4; i++) assert_int_equal(p.shards[i].ids.len, 1);
  tpuci__shard_plan_free(&p);
  tpuci__timings_free(&t);
}

static void test_shard_count_fallback(void **state) {
  tpuci__strv_t ids = {0};
  tpuci__timings_t t;
  tpuci__err_t err = {0};
  tpuci__shard_plan_t p;
  size_t i;
  (void) state;

  for (i = 0; i < 10; i++) tpuci__strv_take(&ids, tpuci__printf("t.py::t%zu", i));
  tpuci__strv_push(&ids, "t.py::t3"); /* a duplicate counts once */
  tpuci__timings_init(&t);
  tpuci__timings_record(&t, "other.py::x", 50); /* known, but not in this suite */
  assert_int_equal(tpuci__shard_plan(&(tpuci__shard_ask_t){.ids = (const char *const *) ids.items,
                                                           .n = ids.len,
                                                           .timings = &t,
                                                           .shards = 3,
                                                           .by = TPUCI__SHARD_BY_TEST},
                                     &p, &err),
                   0);
  assert_true(p.by_count);
  assert_int_equal(p.known, 0);
  assert_int_equal(p.unknown, 10);
  assert_near(p.unknown_s, 1.0);
  assert_int_equal(p.shards[0].ids.len, 4);
  assert_int_equal(p.shards[1].ids.len, 3);
  assert_int_equal(p.shards[2].ids.len, 3);
  assert_string_equal(p.shards[0].ids.items[1], "t.py::t3");
  assert_string_equal(p.shards[1].ids.items[0], "t.py::t1");
  assert_near(p.shards[0].predicted_s, 4);
  assert_near(p.total_s, 10);
  tpuci__shard_plan_free(&p);

  /* More shards than tests: some stay empty. */
  assert_int_equal(tpuci__shard_plan(&(tpuci__shard_ask_t){.ids = (const char *const *) ids.items,
                                                           .n = 2,
                                                           .timings = NULL,
                                                           .shards = 4,
                                                           .by = TPUCI__SHARD_BY_TEST},
                                     &p, &err),
                   0);
  assert_int_equal(p.shards[3].ids.len, 0);
  tpuci__shard_plan_free(&p);
  assert_int_equal(
      tpuci__shard_plan(
          &(tpuci__shard_ask_t){
              .ids = NULL, .n = 0, .timings = NULL, .shards = 2, .by = TPUCI__SHARD_BY_TEST},
          &p, &err),
      0);
  assert_near(tpuci__shard_imbalance(&p), 0);
  tpuci__shard_plan_free(&p);

  assert_int_equal(tpuci__shard_plan(&(tpuci__shard_ask_t){.ids = (const char *const *) ids.items,
                                                           .n = ids.len,
                                                           .timings = NULL,
                                                           .shards = 0,
                                                           .by = TPUCI__SHARD_BY_TEST},
                                     &p, &err),
                   TPUCI_EUSAGE);
  tpuci__err_clear(&err);
  assert_int_equal(tpuci__shard_plan(&(tpuci__shard_ask_t){.ids = (const char *const *) ids.items,
                                                           .n = ids.len,
                                                           .timings = NULL,
                                                           .shards = 5000,
                                                           .by = TPUCI__SHARD_BY_TEST},
                                     &p, &err),
                   TPUCI_EUSAGE);
  tpuci__err_clear(&err);
  tpuci__strv_free(&ids);
  tpuci__timings_free(&t);
}

static void test_shard_median_for_unknown(void **state) {
  const char *ids[] = {"a::1", "a::2", "a::3", "a::new1", "a::new2"};
  tpuci__timings_t t;
  tpuci__err_t err = {0};
  tpuci__shard_plan_t p;
  (void) state;

  tpuci__timings_init(&t);
  tpuci__timings_record(&t, "a::1", 1);
  tpuci__timings_record(&t, "a::2", 10);
  tpuci__timings_record(&t, "a::3", 3);
  assert_int_equal(
      tpuci__shard_plan(
          &(tpuci__shard_ask_t){
              .ids = ids, .n = 5, .timings = &t, .shards = 2, .by = TPUCI__SHARD_BY_TEST},
          &p, &err),
      0);
  assert_false(p.by_count);
  assert_int_equal(p.known, 3);
  assert_int_equal(p.unknown, 2);
  assert_near(p.unknown_s, 3); /* median of 1, 3, 10 */
  assert_near(p.total_s, 1 + 10 + 3 + 3 + 3);
  /* LPT: 10 | 3 3 3 1 -> loads 10 and 10. */
  assert_int_equal(p.shards[0].ids.len, 1);
  assert_string_equal(p.shards[0].ids.items[0], "a::2");
  assert_near(p.shards[1].predicted_s, 10);
  tpuci__shard_plan_free(&p);

  tpuci__timings_record(&t, "a::new1", 5); /* even count: mean of the middle two */
  assert_int_equal(
      tpuci__shard_plan(
          &(tpuci__shard_ask_t){
              .ids = ids, .n = 5, .timings = &t, .shards = 2, .by = TPUCI__SHARD_BY_TEST},
          &p, &err),
      0);
  assert_near(p.unknown_s, 4);
  tpuci__shard_plan_free(&p);
  tpuci__timings_free(&t);
}

/* A file's tests go to one shard, in their order; a class's with
 * shard_by "class", the file's functions one by one. */
static void test_shard_by_file_and_class(void **state) {
  const char *ids[] = {"t/a.py::test_1",        "t/b.py::TestX::test_1", "t/a.py::test_2",
                       "t/b.py::TestX::test_2", "t/b.py::test_f[p::q]",  "t/c.py::test_1",
                       "t/b.py::TestY::test_1"};
  tpuci__timings_t t;
  tpuci__err_t err = {0};
  tpuci__shard_plan_t p;
  size_t s, k;
  (void) state;

  /* Nothing known: whole files dealt by their counts (b 4, a 2, c 1). */
  assert_int_equal(
      tpuci__shard_plan(
          &(tpuci__shard_ask_t){
              .ids = ids, .n = 7, .timings = NULL, .shards = 2, .by = TPUCI__SHARD_BY_FILE},
          &p, &err),
      0);
  assert_true(p.by_count);
  assert_int_equal(p.shards[0].ids.len, 4);
  assert_string_equal(p.shards[0].ids.items[0], "t/b.py::TestX::test_1");
  assert_string_equal(p.shards[0].ids.items[3], "t/b.py::TestY::test_1");
  assert_int_equal(p.shards[1].ids.len, 3);
  /* In the order given: a's first test before c's, a's two in order. */
  assert_string_equal(p.shards[1].ids.items[0], "t/a.py::test_1");
  assert_string_equal(p.shards[1].ids.items[1], "t/a.py::test_2");
  assert_string_equal(p.shards[1].ids.items[2], "t/c.py::test_1");
  tpuci__shard_plan_free(&p);

  /* Known durations: the files' sums (a 9, b 4, c 5). */
  tpuci__timings_init(&t);
  tpuci__timings_record(&t, "t/a.py::test_1", 4);
  tpuci__timings_record(&t, "t/a.py::test_2", 5);
  tpuci__timings_record(&t, "t/b.py::TestX::test_1", 1);
  tpuci__timings_record(&t, "t/b.py::TestX::test_2", 1);
  tpuci__timings_record(&t, "t/b.py::test_f[p::q]", 1);
  tpuci__timings_record(&t, "t/b.py::TestY::test_1", 1);
  tpuci__timings_record(&t, "t/c.py::test_1", 5);
  assert_int_equal(
      tpuci__shard_plan(
          &(tpuci__shard_ask_t){
              .ids = ids, .n = 7, .timings = &t, .shards = 2, .by = TPUCI__SHARD_BY_FILE},
          &p, &err),
      0);
  assert_false(p.by_count);
  assert_near(p.shards[0].predicted_s, 9);
  assert_int_equal(p.shards[0].ids.len, 2);
  assert_near(p.shards[1].predicted_s, 9);
  assert_int_equal(p.shards[1].ids.len, 5);
  tpuci__shard_plan_free(&p);

  /* By class: TestX's two together, TestY and b's function on their own. */
  assert_int_equal(
      tpuci__shard_plan(
          &(tpuci__shard_ask_t){
              .ids = ids, .n = 7, .timings = &t, .shards = 5, .by = TPUCI__SHARD_BY_CLASS},
          &p, &err),
      0);
  for (s = 0; s < p.n; s++) {
    int x = 0;
    for (k = 0; k < p.shards[s].ids.len; k++)
      x += strncmp(p.shards[s].ids.items[k], "t/b.py::TestX::", 15) == 0;
    assert_true(x == 0 || x == 2);
  }
  tpuci__shard_plan_free(&p);

  /* By test: the two of a.py may part. */
  assert_int_equal(
      tpuci__shard_plan(
          &(tpuci__shard_ask_t){
              .ids = ids, .n = 7, .timings = &t, .shards = 2, .by = TPUCI__SHARD_BY_TEST},
          &p, &err),
      0);
  assert_near(p.shards[0].predicted_s, 9);
  tpuci__shard_plan_free(&p);
  tpuci__timings_free(&t);
}

/* Planning retries: two quick tests failed last time (a retry runs them
 * again at 3 s of its own), three long ones passed. */
static void test_shard_retry(void **state) {
  const char *ids[] = {"t/w1.py::test", "t/f1.py::test_x", "t/w2.py::test", "t/f2.py::test_y",
                       "t/w3.py::test"};
  tpuci__timings_t t;
  tpuci__err_t err = {0};
  tpuci__shard_plan_t p;
  (void) state;

  tpuci__timings_init(&t);
  tpuci__timings_record(&t, "t/w1.py::test", 6);
  tpuci__timings_record(&t, "t/w2.py::test", 6);
  tpuci__timings_record(&t, "t/w3.py::test", 4);
  tpuci__timings_record(&t, "t/f1.py::test_x", 1);
  tpuci__timings_record(&t, "t/f2.py::test_y", 1);
  t.items[3].failed = t.items[4].failed = 1;

  /* Without: LPT puts both failing tests beside w2 (8 s), whose retry
   * (3 s + 2 s) would end the run at 13 s. */
  assert_int_equal(
      tpuci__shard_plan(
          &(tpuci__shard_ask_t){
              .ids = ids, .n = 5, .timings = &t, .shards = 2, .by = TPUCI__SHARD_BY_FILE},
          &p, &err),
      0);
  assert_int_equal(p.retrying, 0);
  assert_near(p.shards[0].predicted_s, 10);
  assert_near(p.shards[1].predicted_s, 8);
  tpuci__shard_plan_free(&p);

  /* With: both in one shard that starts with its retry's 3 s, so it gets
   * w3 (4 s) and the other w1 and w2: 11 s and 12 s, retry included. */
  assert_int_equal(tpuci__shard_plan_retry(ids, 5, &t, 2, TPUCI__SHARD_BY_FILE, 3, &p, &err), 0);
  assert_int_equal(p.retrying, 1);
  assert_near(p.shards[0].predicted_s, 3 + 2 * 2 + 4);
  assert_int_equal(p.shards[0].ids.len, 3);
  assert_string_equal(p.shards[0].ids.items[0], "t/f1.py::test_x");
  assert_string_equal(p.shards[0].ids.items[1], "t/f2.py::test_y");
  assert_string_equal(p.shards[0].ids.items[2], "t/w3.py::test");
  assert_near(p.shards[1].predicted_s, 12);
  tpuci__shard_plan_free(&p);

  /* Both fail steadily (not retried): no retry to plan for, the split
   * is the plain one. */
  {
    tpuci__strv_t steady = {0};
    tpuci__shard_ask_t ask = {
        .ids = ids, .n = 5, .timings = &t, .shards = 2, .by = TPUCI__SHARD_BY_FILE};
    tpuci__strv_push(&steady, "t/f1.py::test_x");
    tpuci__strv_push(&steady, "t/f2.py::test_y");
    ask.no_retry = &steady;
    assert_int_equal(tpuci__shard_plan_ask_retry(&ask, 3, &p, &err), 0);
    assert_int_equal(p.retrying, 0);
    assert_near(p.shards[0].predicted_s, 10);
    assert_near(p.shards[1].predicted_s, 8);
    tpuci__shard_plan_free(&p);
    /* One of them only: the other's retry is planned. */
    steady.len = 1;
    assert_int_equal(tpuci__shard_plan_ask_retry(&ask, 3, &p, &err), 0);
    assert_int_equal(p.retrying, 1);
    tpuci__shard_plan_free(&p);
    steady.len = 2;
    tpuci__strv_free(&steady);
  }

  /* Failing work longer than a shard: spread over as few as hold it. */
  t.items[0].failed = t.items[1].failed = t.items[2].failed = 1;
  assert_int_equal(tpuci__shard_plan_retry(ids, 5, &t, 3, TPUCI__SHARD_BY_FILE, 3, &p, &err), 0);
  assert_int_equal(p.retrying, 3);
  tpuci__shard_plan_free(&p);
  t.items[0].failed = t.items[1].failed = t.items[2].failed = 0;

  /* Nothing failed: the same split as without. */
  t.items[3].failed = t.items[4].failed = 0;
  assert_int_equal(tpuci__shard_plan_retry(ids, 5, &t, 2, TPUCI__SHARD_BY_FILE, 3, &p, &err), 0);
  assert_int_equal(p.retrying, 0);
  assert_near(p.shards[0].predicted_s, 10);
  tpuci__shard_plan_free(&p);
  tpuci__timings_free(&t);
}

/* A shard's assignment: its number, the shards with tests, each unit
 * once with its shard. */
static void test_shard_assignment(void **state) {
  const char *ids[] = {"t/a.py::test_1", "t/b.py::TestX::test_1[x::y]", "t/a.py::test_2",
                       "t/b.py::TestX::test_2"};
  tpuci__err_t err = {0};
  tpuci__shard_plan_t p;
  char *a;
  (void) state;

  assert_int_equal(
      tpuci__shard_plan(
          &(tpuci__shard_ask_t){
              .ids = ids, .n = 4, .timings = NULL, .shards = 3, .by = TPUCI__SHARD_BY_FILE},
          &p, &err),
      0);
  a = tpuci__shard_assignment(&p, TPUCI__SHARD_BY_FILE, 2);
  assert_string_equal(a, "file 2 1,2\n1\tt/a.py\n2\tt/b.py");
  free(a);
  a = tpuci__shard_assignment(&p, TPUCI__SHARD_BY_CLASS, 1);
  assert_string_equal(a, "class 1 1,2\n1\tt/a.py::test_1\n1\tt/a.py::test_2\n2\tt/b.py::TestX");
  free(a);
  tpuci__shard_plan_free(&p);
  assert_int_equal(tpuci__shard_unit_len("t/b.py::TestX::test_1[x::y]", TPUCI__SHARD_BY_CLASS),
                   strlen("t/b.py::TestX"));
  assert_int_equal(tpuci__shard_unit_len("t/b.py::test_1[x::y]", TPUCI__SHARD_BY_FILE),
                   strlen("t/b.py"));
}

/* .tpuci/collections.json: a record is found under its key only, and a
 * bad file changes nothing. */
static void test_collections_store(void **state) {
  char *dir = tmpdir(), *path = tpuci__printf("%s/sub/collections.json", dir);
  tpuci__collections_t c, back;
  tpuci__strv_t ids = {0};
  tpuci__err_t err = {0};
  const tpuci__collection_t *r;
  (void) state;

  tpuci__collections_init(&c);
  assert_int_equal(tpuci__collections_load(&c, path, &err), 0); /* missing: empty */
  assert_int_equal(c.len, 0);
  tpuci__strv_push(&ids, "t/a.py::test_1");
  tpuci__strv_push(&ids, "t/b.py::test_2");
  tpuci__collection_put(&c, "suite", "k1", &ids, 2.5);
  tpuci__collection_put(&c, "other", "k2", &ids, -1);
  tpuci__collection_put(&c, "suite", "k3", &ids, 1.25); /* replaces */
  assert_int_equal(c.len, 2);
  assert_null(tpuci__collection_get(&c, "suite", "k1"));
  assert_int_equal(tpuci__collections_save(&c, path, &err), 0);
  tpuci__collections_init(&back);
  assert_int_equal(tpuci__collections_load(&back, path, &err), 0);
  r = tpuci__collection_get(&back, "suite", "k3");
  assert_non_null(r);
  assert_int_equal(r->ids.len, 2);
  assert_string_equal(r->ids.items[1], "t/b.py::test_2");
  assert_near(r->overhead_s, 1.25);
  r = tpuci__collection_get(&back, "other", "k2");
  assert_non_null(r);
  assert_true(r->overhead_s < 0);
  assert_null(tpuci__collection_get(&back, "nothing", "k3"));
  tpuci__collections_free(&back);

  tpuci__collections_init(&back);
  {
    const char *bad = "{\"version\": 1, \"groups\": {\"s\": {\"key\": \"k\", \"ids\": [1]}}}";
    assert_int_equal(tpuci__collections_load_string(&back, bad, strlen(bad), "c.json", &err),
                     TPUCI_EIO);
  }
  assert_non_null(strstr(err.msg, "c.json: groups[\"s\"]: needs \"key\""));
  tpuci__err_clear(&err);
  assert_int_equal(back.len, 0);
  assert_int_equal(tpuci__collections_load_string(&back, "{\"version\": 2}", 14, "c.json", &err),
                   TPUCI_EIO);
  tpuci__err_clear(&err);
  assert_int_equal(tpuci__collections_load_string(&back, "{\"version\"", 11, "c.json", &err),
                   TPUCI_EIO);
  assert_non_null(strstr(err.msg, "c.json:1:"));
  tpuci__err_clear(&err);
  tpuci__collections_free(&back);
  tpuci__collections_free(&c);
  tpuci__strv_free(&ids);
  free(path);
  rm_rf(dir);
  free(dir);
}

/* The key: the same for every shard of a group, another for another
 * selection. */
static void test_collection_key(void **state) {
  tpuci__plan_t plan;
  tpuci__instance_t a, b;
  char *ka, *kb;
  (void) state;

  memset(&plan, 0, sizeof(plan));
  memset(&a, 0, sizeof(a));
  a.image = -1;
  tpuci__strv_push(&a.argv, "python3");
  tpuci__strv_push(&a.argv, "-m");
  tpuci__strv_push(&a.argv, "pytest");
  tpuci__strv_push(&a.argv, "tests/");
  tpuci__kv_set(&a.env, "TEST_SHARD_INDEX", "0");
  tpuci__kv_set(&a.env, "TEST_TOTAL_SHARDS", "2");
  memset(&b, 0, sizeof(b));
  b.image = -1;
  tpuci__strv_copy(&b.argv, &a.argv);
  tpuci__kv_set(&b.env, "TEST_SHARD_INDEX", "1");
  tpuci__kv_set(&b.env, "TEST_TOTAL_SHARDS", "2");
  ka = tpuci__collection_key(&plan, &a);
  kb = tpuci__collection_key(&plan, &b);
  assert_string_equal(ka, kb);
  free(kb);
  tpuci__kv_set(&b.env, "PYTEST_ADDOPTS", "-m slow");
  kb = tpuci__collection_key(&plan, &b);
  assert_string_not_equal(ka, kb);
  free(kb);
  free(b.argv.items[3]);
  b.argv.items[3] = tpuci__strdup("tests/unit");
  tpuci__kv_free(&b.env);
  tpuci__kv_set(&b.env, "TEST_SHARD_INDEX", "1");
  tpuci__kv_set(&b.env, "TEST_TOTAL_SHARDS", "2");
  kb = tpuci__collection_key(&plan, &b);
  assert_string_not_equal(ka, kb);
  free(ka);
  free(kb);
  tpuci__strv_free(&a.argv);
  tpuci__strv_free(&b.argv);
  tpuci__kv_free(&a.env);
  tpuci__kv_free(&b.env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_timings_record_and_average),
      cmocka_unit_test(test_timings_update_from_reports),
      cmocka_unit_test(test_timings_save_load),
      cmocka_unit_test(test_timings_corrupt),
      cmocka_unit_test(test_timings_traced_apart),
      cmocka_unit_test(test_collect_parse),
      cmocka_unit_test(test_shard_balance_skewed),
      cmocka_unit_test(test_shard_deterministic),
      cmocka_unit_test(test_shard_ties_by_id),
      cmocka_unit_test(test_shard_zero_durations),
      cmocka_unit_test(test_shard_count_fallback),
      cmocka_unit_test(test_shard_median_for_unknown),
      cmocka_unit_test(test_shard_by_file_and_class),
      cmocka_unit_test(test_shard_retry),
      cmocka_unit_test(test_shard_assignment),
      cmocka_unit_test(test_collections_store),
      cmocka_unit_test(test_collection_key),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
