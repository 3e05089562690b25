/* core/kind/pytest/flaky.c's store: bounded to the last TPUCI__FLAKY_MAX_RUNS
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpdir_main.h"
#include "kind/pytest/flaky.h"

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
    assert_int_equal(tpuci__flaky_append(path, &run, 0, NULL, NULL, &err), 0);
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
    assert_int_equal(tpuci__flaky_append(path, &run, 4, &recent, NULL, &err), 0);
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
  static const char *const ids[] = {"t.py::test_a", "t.py::test_b", "t.py::test_c", "t.py::test_d"};
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
  assert_int_equal(tpuci__flaky_append(path, &run, 0, NULL, NULL, &err), 0);
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
  /* Runs 1 to 4 as written before: fpfp, in shard 1 and then shard 2,
   * all of one tree. */
  fputs("{\"run\":\"r1\",\"tree\":\"t\",\"tests\":[[\"unit[py=3,shard=1/2]\",\"t.py::test_a\","
        "\"f\",0,null]]}\n"
        "{\"run\":\"r2\",\"tree\":\"t\",\"tests\":[[\"unit[py=3,shard=2/2]\",\"t.py::test_a\","
        "\"p\",0,null]]}\n"
        "{\"run\":\"r3\",\"tree\":\"t\",\"tests\":[[\"unit[py=3,shard=2/2]\",\"t.py::test_a\","
        "\"f\",0,null]]}\n"
        "{\"run\":\"r4\",\"tree\":\"t\",\"tests\":[[\"unit[py=3,shard=1/2]\",\"t.py::test_a\","
        "\"p\",0,null]]}\n",
        f);
  fclose(f);
  for (i = 0; i < 2; i++) {
    /* Run 5: test_a fails in shard 1 (the history says "f" once). */
    tpuci__history_t h;
    const tpuci__history_t *hs[1] = {&h};
    tpuci__history_init(&h, i == 0 ? "unit[py=3,shard=1/2]" : "unit[py=3,shard=2/2]");
    h.tree = tpuci__strdup("t"); /* the same files, no commit */
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
  tpuci__flaky_last_failed(path, identities, 2, got, NULL);
  assert_int_equal(got[0].len, 1);
  assert_string_equal(got[0].items[0], "t.py::test_a");
  assert_int_equal(got[1].len, 0);
  tpuci__strv_free(&got[0]);
  tpuci__strv_free(&got[1]);
  free(path);
}

/* Writes `text` (lines of runs) as the store at `path`. */
static void write_store(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* A run of tree `tree` (NULL: none recorded) in which test_fixed, test_same
 * and test_k have the codes fixed, same and k ('-': no row). */
static char *run_line(const char *run, const char *tree, char fixed, char same, char k) {
  tpuci__buf_t b;
  const char *names[3] = {"test_fixed", "test_same", "test_k"};
  char codes[3];
  int i, n = 0;
  codes[0] = fixed;
  codes[1] = same;
  codes[2] = k;
  tpuci__buf_init(&b);
  tpuci__buf_addf(&b, "{\"run\":\"%s\",\"commit\":null,", run);
  if (tree) tpuci__buf_addf(&b, "\"tree\":\"%s\",", tree);
  tpuci__buf_adds(&b, "\"tests\":[");
  for (i = 0; i < 3; i++) {
    if (codes[i] == '-') continue;
    tpuci__buf_addf(&b, "%s[\"unit\",\"t.py::%s\",\"%c\",0.1,%s]", n++ ? "," : "", names[i],
                    codes[i], strchr("fko", codes[i]) ? "\"boom\"" : "null");
  }
  tpuci__buf_adds(&b, "]}\n");
  return tpuci__buf_steal(&b);
}

#define TREE_A "1a2b3c4d5e6f1a2b3c4d5e6f1a2b3c4d5e6f1a2b:aaaaaaaa11111111"
#define TREE_B "9f8e7d6c5b4a9f8e7d6c5b4a9f8e7d6c5b4a9f8e:bbbbbbbb22222222"

/* The test's [flips, runs] and its flip_runs joined by spaces, from the
 * report's JSON. */
static char *flips_of(json_t *report, const char *name) {
  json_t *t;
  size_t i;
  json_array_foreach(json_object_get(report, "tests"), i, t) {
    const char *id = json_string_value(json_object_get(t, "id"));
    tpuci__buf_t b;
    json_t *r;
    size_t j;
    if (strcmp(id + strlen("t.py::"), name) != 0) continue;
    tpuci__buf_init(&b);
    tpuci__buf_addf(&b, "%d/%d:", (int) json_integer_value(json_object_get(t, "flips")),
                    (int) json_integer_value(json_object_get(t, "runs")));
    json_array_foreach(json_object_get(t, "flip_runs"), j, r) {
      tpuci__buf_addf(&b, " %s", json_string_value(r));
    }
    return tpuci__buf_steal(&b);
  }
  return tpuci__strdup("not listed");
}

/* A flip is a flip on one tree (issue 42.6): a test that failed twice on
 * tree A and passed on tree B after its fix has no flip and is not
 * proposed; changes between runs of one tree count, also with runs of
 * another tree between them; a change from or to a run of no known tree
 * (outside git, a line written before trees were) is none; a run flaky
 * within itself is one whatever its tree. */
static void test_flips_of_one_tree(void **state) {
  char *path = tpuci__printf("%s/trees.jsonl", dir), *text = NULL, *got;
  const char *lines[8][5] = {/* run, tree, test_fixed, test_same, test_k */
                             {"r1", TREE_A, "f", "p", "p"}, {"r2", TREE_A, "f", "f", "p"},
                             {"r3", TREE_B, "p", "p", "-"}, {"r4", TREE_B, "p", "f", "p"},
                             {"r5", NULL, "p", "p", "k"},   {"r6", TREE_A, "-", "p", "p"},
                             {"r7", NULL, "p", "f", "p"},   {"r8", TREE_B, "p", "f", "p"}};
  tpuci__buf_t b;
  tpuci__err_t err = {0, NULL};
  tpuci__flaky_propose_t o;
  json_t *report;
  size_t i, count = 0;
  (void) state;
  tpuci__buf_init(&b);
  for (i = 0; i < 8; i++) {
    char *line = run_line(lines[i][0], lines[i][1], lines[i][2][0], lines[i][3][0], lines[i][4][0]);
    tpuci__buf_adds(&b, line);
    free(line);
  }
  write_store(path, b.data);
  tpuci__buf_free(&b);

  assert_int_equal(tpuci__flaky_report(path, 0, 1, &text, &err), 0);
  report = json_loads(text, 0, NULL);
  assert_non_null(report);
  free(text);
  /* The trees, run by run. */
  assert_string_equal(json_string_value(json_array_get(json_object_get(report, "trees"), 0)),
                      TREE_A);
  assert_true(json_is_null(json_array_get(json_object_get(report, "trees"), 4)));
  /* Fixed on tree B: its failures on A and passes on B are no flip. */
  got = flips_of(report, "test_fixed");
  assert_string_equal(got, "0/7:");
  free(got);
  /* A: p f (r1 r2), then p again in r6 after B's runs; B: p f (r3 r4);
   * r7 (no tree) counts as a run but flips nothing; r8 f after B's f. */
  got = flips_of(report, "test_same");
  assert_string_equal(got, "3/8: r1 r2 r3 r4 r6");
  free(got);
  /* Flaky within r5, of no known tree: one flip. */
  got = flips_of(report, "test_k");
  assert_string_equal(got, "1/7: r5");
  free(got);
  json_decref(report);

  memset(&o, 0, sizeof(o));
  o.min_rate = 0.1;
  o.today = 20000;
  assert_int_equal(tpuci__flaky_propose(path, &o, &text, &count, &err), 0);
  assert_int_equal(count, 2);
  assert_null(strstr(text, "test_fixed"));
  assert_non_null(strstr(text, "- test: \"t.py::test_same\"\n"
                               "  # tree 1a2b3c4:aaaaaaaa: run r1 p, run r2 f, run r6 p\n"
                               "  # tree 9f8e7d6:bbbbbbbb: run r3 p, run r4 f\n"
                               "  reason: \"flaky: flip rate 0.38 (3 flips in 8 runs of unit)"));
  assert_non_null(strstr(text, "- test: \"t.py::test_k\"\n"
                               "  # no known tree: run r5 k\n"));
  free(text);
  free(path);
}

/* Lines written before trees were: every change of result is of no known
 * tree, so none is a flip, and the report says why. */
static void test_old_lines_no_flips(void **state) {
  char *path = tpuci__printf("%s/old.jsonl", dir), *text = NULL;
  tpuci__err_t err = {0, NULL};
  tpuci__flaky_propose_t o;
  size_t count = 1;
  (void) state;
  write_store(path,
              "{\"run\":\"o1\",\"commit\":null,\"tests\":[[\"u\",\"t.py::x\",\"f\",0,null]]}\n"
              "{\"run\":\"o2\",\"commit\":null,\"tests\":[[\"u\",\"t.py::x\",\"p\",0,null]]}\n"
              "{\"run\":\"o3\",\"commit\":null,\"tests\":[[\"u\",\"t.py::x\",\"f\",0,null]]}\n");
  assert_int_equal(tpuci__flaky_report(path, 0, 0, &text, &err), 0);
  assert_non_null(strstr(text, "3 of them of no known tree (outside git, or recorded before "
                               "trees were): a change of result from or to one is no flip\n"));
  assert_non_null(strstr(text, "     0.00      2/3     fpf "));
  free(text);
  memset(&o, 0, sizeof(o));
  o.min_rate = 0.1;
  assert_int_equal(tpuci__flaky_propose(path, &o, &text, &count, &err), 0);
  assert_int_equal(count, 0);
  assert_null(strstr(text, "- test:"));
  free(text);
  free(path);
}

/* Runs of different trees whose instance ran from the same inputs (the
 * same results cache key): a change of result is a flip all the same;
 * with another key, or none, it is not. */
static void test_same_inputs_flip(void **state) {
  char *path = tpuci__printf("%s/inputs.jsonl", dir), *text = NULL;
  tpuci__err_t err = {0, NULL};
  (void) state;
  write_store(
      path,
      "{\"run\":\"i1\",\"commit\":\"a\",\"tree\":\"a:1\",\"inputs\":{\"u\":\"K\"},"
      "\"tests\":[[\"u\",\"t.py::x\",\"f\",0,null],[\"v\",\"t.py::y\",\"f\",0,null]]}\n"
      "{\"run\":\"i2\",\"commit\":\"b\",\"tree\":\"b:2\",\"inputs\":{\"u\":\"K\",\"v\":\"L\"},"
      "\"tests\":[[\"u\",\"t.py::x\",\"p\",0,null],[\"v\",\"t.py::y\",\"p\",0,null]]}\n"
      "{\"run\":\"i3\",\"commit\":\"c\",\"tree\":\"c:3\",\"inputs\":{\"u\":\"K2\",\"v\":\"L\"},"
      "\"tests\":[[\"u\",\"t.py::x\",\"f\",0,null],[\"v\",\"t.py::y\",\"f\",0,null]]}\n");
  assert_int_equal(tpuci__flaky_report(path, 0, 1, &text, &err), 0);
  /* x: i1 -> i2 same key K (a flip), i2 -> i3 another key (none).
   * y: i1 had no key (none), i2 -> i3 same key L (a flip). */
  {
    json_t *r = json_loads(text, 0, NULL), *t;
    size_t k;
    assert_non_null(r);
    assert_int_equal(json_array_size(json_object_get(r, "tests")), 2);
    json_array_foreach(json_object_get(r, "tests"), k, t) {
      const char *id = json_string_value(json_object_get(t, "id"));
      json_t *fr = json_object_get(t, "flip_runs");
      assert_non_null(id);
      assert_int_equal(json_array_size(fr), 2);
      if (strcmp(id, "t.py::x") == 0) {
        assert_string_equal(json_string_value(json_array_get(fr, 0)), "i1");
        assert_string_equal(json_string_value(json_array_get(fr, 1)), "i2");
      } else {
        assert_string_equal(json_string_value(json_array_get(fr, 0)), "i2");
        assert_string_equal(json_string_value(json_array_get(fr, 1)), "i3");
      }
    }
    json_decref(r);
  }
  free(text);
  free(path);
}

/* The line an append writes says its tree: the commit and the files
 * (a history's tree), the files alone without a commit, null when no
 * history knows them. */
static void test_append_writes_tree(void **state) {
  char *path = tpuci__printf("%s/written.jsonl", dir), *text = NULL;
  const char *want[3] = {"\"tree\":\"c0ffee:f11e5\"", "\"tree\":\"f11e5\"", "\"tree\":null"};
  size_t len, i;
  (void) state;
  for (i = 0; i < 3; i++) {
    tpuci__history_t h;
    const tpuci__history_t *hs[1] = {&h};
    tpuci__flaky_run_t run;
    tpuci__err_t err = {0, NULL};
    tpuci__history_init(&h, "unit");
    one_attempt(&h, 0);
    if (i < 2) h.tree = tpuci__strdup("f11e5");
    memset(&run, 0, sizeof(run));
    run.run_id = "w";
    run.commit = i == 0 ? "c0ffee" : NULL;
    run.histories = hs;
    run.n = 1;
    unlink(path);
    assert_int_equal(tpuci__flaky_append(path, &run, 0, NULL, NULL, &err), 0);
    assert_int_equal(tpuci__read_file(path, &text, &len), 0);
    if (strstr(text, want[i]) == NULL) fail_msg("line %zu: no %s in %s", i, want[i], text);
    free(text);
    tpuci__history_free(&h);
  }
  free(path);
}

/* A store over its read cap keeps its newest runs and says so; one that
 * cannot be read is left alone: never a history started afresh. */
static void test_oversize_keeps_newest(void **state) {
  char *path = tpuci__printf("%s/big.jsonl", dir), *warning = NULL, *text = NULL;
  char *pad = tpuci__malloc(4097);
  tpuci__history_t h;
  const tpuci__history_t *hs[1] = {&h};
  tpuci__flaky_run_t run;
  tpuci__err_t err = {0, NULL};
  size_t len = 0, i, n = (TPUCI__FLAKY_MAX_BYTES * 2) / 4096 + 64;
  FILE *f;
  (void) state;
  memset(pad, 'x', 4096);
  pad[4096] = '\0';
  f = fopen(path, "w");
  assert_non_null(f);
  /* Runs "old-0" .. of about 4 KiB each: more than twice the cap. */
  for (i = 0; i < n; i++)
    fprintf(f, "{\"run\":\"old-%zu\",\"time\":%zu,\"commit\":null,\"pad\":\"%s\",\"tests\":[]}\n",
            i, i, pad);
  fclose(f);
  tpuci__history_init(&h, "unit");
  memset(&run, 0, sizeof(run));
  run.histories = hs;
  run.n = 1;
  run.run_id = "newest";
  assert_int_equal(tpuci__flaky_append(path, &run, 0, NULL, &warning, &err), 0);
  assert_non_null(warning);
  assert_non_null(strstr(warning, "only its newest runs are kept"));
  assert_int_equal(tpuci__read_file_max(path, TPUCI__FLAKY_MAX_BYTES * 2, &text, &len), 0);
  assert_true(len <= TPUCI__FLAKY_MAX_BYTES + 8192);
  /* The last old run and the new one; not the first. */
  {
    char *last = tpuci__printf("\"old-%zu\"", n - 1);
    assert_non_null(strstr(text, last));
    free(last);
  }
  assert_non_null(strstr(text, "\"newest\""));
  assert_null(strstr(text, "\"old-0\""));
  free(text);
  free(warning);
  warning = NULL;
  /* A store that cannot be read (a folder here): kept, and an error. */
  free(path);
  path = tpuci__printf("%s/folder.jsonl", dir);
  assert_int_equal(mkdir(path, 0755), 0);
  assert_int_not_equal(tpuci__flaky_append(path, &run, 0, NULL, &warning, &err), 0);
  assert_non_null(err.msg);
  assert_non_null(strstr(err.msg, "the file is kept"));
  tpuci__err_clear(&err);
  assert_int_equal(rmdir(path), 0);
  tpuci__history_free(&h);
  free(pad);
  free(path);
}

/* Appends to `b` the row of `id` with `code` in identity `ident` ('-':
 * none; 'n': failed, not reached). */
static void row(tpuci__buf_t *b, const char *ident, const char *id, char code) {
  if (code == '-') return;
  tpuci__buf_addf(b, "%s[\"%s\",\"%s\",\"%c\",0,%s]", b->data[b->len - 1] == '[' ? "" : ",", ident,
                  id, code == 'n' ? 'f' : code,
                  code == 'n'   ? "\"" TPUCI__FLAKY_NOT_RUN "\""
                  : code == 'f' ? "\"boom\""
                                : "null");
}

/* Failing first's list (issue 44): a test no attempt reached is not in
 * it, nor is anything after a run in which most tests failed; a test
 * that failed in each of its last TPUCI__FLAKY_STEADY_RUNS runs (a skip
 * between says nothing) is apart, in `steady`. */
static void test_last_failed_rules(void **state) {
  /* Runs oldest first: test_steady fails in the last 5, test_four in the
   * last 4 after a pass, test_skip in 5 with a skip between, test_fresh
   * only in the last, test_notrun was not reached in the last. Identity
   * "v": its last run failed 5 tests of 5. */
  static const char *const codes[6] = {"pffppfn", "ffppp-p", "fffpppp",
                                       "fffpppp", "fsfpp-p", "fffppfn"};
  static const char *const ids[7] = {"t.py::test_steady", "t.py::test_skip", "t.py::test_four",
                                     "t.py::test_x",      "t.py::test_y",    "t.py::test_fresh",
                                     "t.py::test_notrun"};
  char *path = tpuci__printf("%s/rules.jsonl", dir);
  const char *identities[2] = {"u", "v"};
  tpuci__strv_t got[2] = {{0}, {0}}, steady[2] = {{0}, {0}};
  tpuci__buf_t b;
  size_t r, t;
  (void) state;
  tpuci__buf_init(&b);
  for (r = 0; r < 6; r++) {
    tpuci__buf_addf(&b, "{\"run\":\"r%zu\",\"tests\":[", r + 1);
    for (t = 0; t < 7; t++) row(&b, "u[shard=1/2]", ids[t], codes[r][t]);
    for (t = 0; t < 4; t++) {
      char p[32];
      snprintf(p, sizeof(p), "t.py::test_pass_%zu", t);
      row(&b, "u[shard=2/2]", p, 'p');
    }
    for (t = 0; t < 5; t++) row(&b, "v", ids[t], r == 5 ? 'f' : t == 0 ? 'f' : 'p');
    tpuci__buf_adds(&b, "]}\n");
  }
  write_store(path, b.data);
  tpuci__buf_free(&b);
  tpuci__flaky_last_failed(path, identities, 2, got, steady);
  /* test_four failed 4 times, then passed; test_skip 5 times around a skip. */
  assert_int_equal(got[0].len, 2);
  assert_string_equal(got[0].items[0], "t.py::test_four");
  assert_string_equal(got[0].items[1], "t.py::test_fresh");
  assert_int_equal(steady[0].len, 2);
  assert_string_equal(steady[0].items[0], "t.py::test_steady");
  assert_string_equal(steady[0].items[1], "t.py::test_skip");
  assert_int_equal(got[1].len, 0);
  assert_int_equal(steady[1].len, 0);
  for (t = 0; t < 2; t++) {
    tpuci__strv_free(&got[t]);
    tpuci__strv_free(&steady[t]);
  }
  /* Without `steady`, those too are in the list. */
  tpuci__flaky_last_failed(path, identities, 2, got, NULL);
  assert_int_equal(got[0].len, 4);
  assert_int_equal(got[1].len, 0);
  tpuci__strv_free(&got[0]);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cap_and_damage),      cmocka_unit_test(test_append_hands_back_recent),
      cmocka_unit_test(test_cancelled_is_absent), cmocka_unit_test(test_identity_without_shard),
      cmocka_unit_test(test_flips_of_one_tree),   cmocka_unit_test(test_old_lines_no_flips),
      cmocka_unit_test(test_append_writes_tree),  cmocka_unit_test(test_oversize_keeps_newest),
      cmocka_unit_test(test_same_inputs_flip),    cmocka_unit_test(test_last_failed_rules)};
  return run_in_tmpdir(dir, tests, sizeof(tests) / sizeof(tests[0]));
}
