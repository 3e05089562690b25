/* core/report/cache.c: the results cache's store. What may be stored
 * (passes only), entries read back whole or refused (a corrupt or foreign
 * file is a miss with a reason, never a hit), the bounds and their
 * eviction order, and a pytest instance's tests restored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include <cmocka.h>

#include "report/cache.h"
#include "kind/pytest/config.h"
#include "kind/pytest/kind.h"

static char dir[256];
static const char *const K1 = "1111111111111111111111111111111111111111111111111111111111111111";
static const char *const K2 = "2222222222222222222222222222222222222222222222222222222222222222";

static int setup(void **state) {
  (void) state;
  snprintf(dir, sizeof(dir), "/tmp/tpuci-store.XXXXXX");
  return mkdtemp(dir) == NULL ? -1 : 0;
}

static int teardown(void **state) {
  char cmd[300];
  (void) state;
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void write_entry_file(const char *key, const char *text) {
  char path[400];
  FILE *f;
  snprintf(path, sizeof(path), "%s/cache", dir);
  mkdir(path, 0755);
  snprintf(path, sizeof(path), "%s/cache/%s.json", dir, key);
  f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* A command instance that passed on its one attempt. */
static void passed_result(tpuci__instance_result_t *r, tpuci_outcome_t final,
                          tpuci_outcome_t first) {
  memset(r, 0, sizeof(*r));
  r->outcome = final;
  r->attempts = calloc(2, sizeof(*r->attempts));
  r->nattempts = 1;
  r->attempts[0].outcome = first;
  r->attempts[0].duration_ms = 1500;
  r->attempts[0].log_path = strdup("/nonexistent/attempt-1.log");
}

static void test_storable(void **state) {
  tpuci__instance_result_t r;
  static const tpuci_outcome_t bad[] = {TPUCI_OUTCOME_FAILED, TPUCI_OUTCOME_TIMEOUT,
                                        TPUCI_OUTCOME_OOM, TPUCI_OUTCOME_INFRA,
                                        TPUCI_OUTCOME_CANCELLED, TPUCI_OUTCOME_FLAKY,
                                        TPUCI_OUTCOME_CACHED, TPUCI_OUTCOME_NONE};
  size_t k;
  (void) state;
  passed_result(&r, TPUCI_OUTCOME_PASSED, TPUCI_OUTCOME_PASSED);
  assert_true(tpuci__cache_storable(&r));
  tpuci__instance_result_free(&r);
  for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
    passed_result(&r, bad[k], bad[k]);
    assert_false(tpuci__cache_storable(&r));
    tpuci__instance_result_free(&r);
  }
  /* A pass after a failed attempt is flaky, whatever says otherwise. */
  passed_result(&r, TPUCI_OUTCOME_PASSED, TPUCI_OUTCOME_PASSED);
  r.attempts[0].outcome = TPUCI_OUTCOME_FAILED;
  r.attempts[1].outcome = TPUCI_OUTCOME_PASSED;
  r.nattempts = 2;
  assert_false(tpuci__cache_storable(&r));
  tpuci__instance_result_free(&r);
}

/* A pytest instance: stored only when no test failed on any attempt. */
static void add_attempt(tpuci__history_t *h, tpuci_outcome_t o, const char *id,
                        tpuci__test_outcome_t to) {
  tpuci__junit_t rep;
  tpuci__junit_attempt_t a;
  memset(&rep, 0, sizeof(rep));
  rep.items = calloc(1, sizeof(*rep.items));
  rep.len = rep.cap = 1;
  rep.items[0].id = strdup(id);
  rep.items[0].classname = strdup("tests.t");
  rep.items[0].name = strdup(strrchr(id, ':') + 1);
  rep.items[0].outcome = to;
  rep.items[0].line = -1;
  rep.items[0].time_s = 0.25;
  memset(&a, 0, sizeof(a));
  a.outcome = o;
  a.exit_code = o == TPUCI_OUTCOME_PASSED ? 0 : 1;
  tpuci__history_add(h, &a, &rep);
}

static void test_pytest(void **state) {
  tpuci__instance_result_t r, back;
  tpuci__instance_t inst;
  tpuci__pytest_t py;
  tpuci__err_t e = {0, NULL};
  json_t *entry, *got;
  (void) state;
  memset(&inst, 0, sizeof(inst));
  memset(&py, 0, sizeof(py));
  inst.name = "unit";
  inst.kind = &tpuci__pytest_config; /* the stack's record: never freed */
  inst.kind_config = &py;

  /* Failed, then passed: flaky, not stored. */
  passed_result(&r, TPUCI_OUTCOME_PASSED, TPUCI_OUTCOME_PASSED);
  tpuci__res_pytest(&r)->history = calloc(1, sizeof(tpuci__history_t));
  tpuci__history_init(tpuci__res_history(&r), "unit");
  add_attempt(tpuci__res_history(&r), TPUCI_OUTCOME_FAILED, "tests/t.py::test_a", TPUCI_TEST_FAILED);
  add_attempt(tpuci__res_history(&r), TPUCI_OUTCOME_PASSED, "tests/t.py::test_a", TPUCI_TEST_PASSED);
  assert_false(tpuci__cache_storable(&r));
  tpuci__instance_result_free(&r);

  /* A clean pass: stored, read back, restored with its tests. */
  passed_result(&r, TPUCI_OUTCOME_PASSED, TPUCI_OUTCOME_PASSED);
  tpuci__res_pytest(&r)->history = calloc(1, sizeof(tpuci__history_t));
  tpuci__history_init(tpuci__res_history(&r), "unit");
  add_attempt(tpuci__res_history(&r), TPUCI_OUTCOME_PASSED, "tests/t.py::test_a", TPUCI_TEST_PASSED);
  assert_true(tpuci__cache_storable(&r));
  entry = tpuci__cache_entry(&inst, &r, K1, "20261204-000000-abcd");
  assert_int_equal(tpuci__cache_put(dir, K1, entry, &e), 0);
  json_decref(entry);
  tpuci__instance_result_free(&r);
  assert_int_equal(tpuci__cache_get(dir, K1, "unit", 1, &got, &e), 1);
  tpuci__cache_restore(got, &inst, &back);
  json_decref(got);
  assert_int_equal(back.outcome, TPUCI_OUTCOME_CACHED);
  assert_int_equal(back.nattempts, 1);
  assert_int_equal(back.attempts[0].outcome, TPUCI_OUTCOME_CACHED);
  assert_int_equal(back.attempts[0].duration_ms, 0);
  assert_non_null(strstr(back.attempts[0].cause, "passed in run 20261204-000000-abcd (1.5s)"));
  assert_null(back.attempts[0].log_path);  /* that log is gone */
  assert_non_null(tpuci__res_history(&back));
  assert_int_equal(tpuci__res_history(&back)->len, 1);
  assert_string_equal(tpuci__res_history(&back)->tests[0].id, "tests/t.py::test_a");
  assert_true(tpuci__history_all_pass(tpuci__res_history(&back)));
  tpuci__instance_result_free(&back);
  /* Another instance's name under that key is refused. */
  assert_int_equal(tpuci__cache_get(dir, K1, "other", 1, &got, &e), -1);
  assert_non_null(strstr(e.msg, "another instance"));
  tpuci__err_clear(&e);
}

/* Files that are not whole, or not ours, or hold a failure: misses with
 * a reason. */
static void test_refused(void **state) {
  static const struct {
    const char *text;
    const char *why;
  } cases[] = {
      {"{\"format\": 1, \"key\": \"", NULL},  /* cut short */
      {"[1, 2]", "not a JSON object"},
      {"{\"format\": 2}", "another format"},
      {"{\"format\": 1, \"key\": \"2222\"}", "another key"},
      {"{\"format\": 1, \"key\": \"%s\", \"instance\": \"x\", \"run\": \"r\", "
       "\"duration_ms\": 1, \"tests\": [{\"id\": \"t\", \"outcome\": \"failed\"}]}",
       "did not pass"},
  };
  char text[512];
  json_t *got;
  size_t k;
  (void) state;
  for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    tpuci__err_t e = {0, NULL};
    snprintf(text, sizeof(text), cases[k].text, K1);
    write_entry_file(K1, text);
    assert_int_equal(tpuci__cache_get(dir, K1, "x", 1, &got, &e), -1);
    assert_null(got);
    assert_non_null(e.msg);
    if (cases[k].why != NULL && strstr(e.msg, cases[k].why) == NULL)
      fail_msg("case %zu: '%s' does not say '%s'", k, e.msg, cases[k].why);
    tpuci__err_clear(&e);
  }
  /* Nothing there: a plain miss; a key that is not one: never a file. */
  assert_int_equal(tpuci__cache_get(dir, K2, "x", 1, &got, NULL), 0);
  assert_int_equal(tpuci__cache_get(dir, "../../etc/passwd", "x", 1, &got, NULL), 0);
}

/* Least recently used first, within the count and the bytes. */
static void test_trim(void **state) {
  tpuci__instance_result_t r;
  tpuci__instance_t inst;
  tpuci__err_t e = {0, NULL};
  char key[65], path[400], tmp[400];
  struct timespec ts[2];
  json_t *entry, *got;
  int k, fd;
  (void) state;
  memset(&inst, 0, sizeof(inst));
  inst.name = "c";
  passed_result(&r, TPUCI_OUTCOME_PASSED, TPUCI_OUTCOME_PASSED);
  for (k = 0; k < 5; k++) {
    memset(key, '0' + k, 64);
    key[64] = '\0';
    entry = tpuci__cache_entry(&inst, &r, key, "run");
    assert_int_equal(tpuci__cache_put(dir, key, entry, &e), 0);
    json_decref(entry);
    /* Entry k was last used at hour k: 0 is the oldest. */
    snprintf(path, sizeof(path), "%s/cache/%s.json", dir, key);
    ts[0].tv_sec = ts[1].tv_sec = 1000000 + k * 3600;
    ts[0].tv_nsec = ts[1].tv_nsec = 0;
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
  }
  tpuci__instance_result_free(&r);
  /* A hit makes the oldest the newest. */
  memset(key, '0', 64);
  assert_int_equal(tpuci__cache_get(dir, key, "c", 1, &got, &e), 1);
  json_decref(got);
  /* A temporary file of a run killed long ago goes too. */
  snprintf(tmp, sizeof(tmp), "%s/cache/%s.json.123.0.tmp", dir, key);
  fd = open(tmp, O_CREAT | O_WRONLY, 0644);
  close(fd);
  ts[0].tv_sec = ts[1].tv_sec = 1000;
  utimensat(AT_FDCWD, tmp, ts, 0);
  assert_int_equal(tpuci__cache_trim(dir, 3, (uint64_t) 1 << 30), 2);
  assert_int_equal(access(tmp, F_OK), -1);
  for (k = 0; k < 5; k++) {
    memset(key, '0' + k, 64);
    snprintf(path, sizeof(path), "%s/cache/%s.json", dir, key);
    /* Gone: 1 and 2, the least recently used. */
    assert_int_equal(access(path, F_OK) == 0, k == 0 || k >= 3);
  }
  /* The byte bound: down to one entry. */
  {
    struct stat st;
    memset(key, '0', 64);
    snprintf(path, sizeof(path), "%s/cache/%s.json", dir, key);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(tpuci__cache_trim(dir, 100, (uint64_t) st.st_size), 2);
  }
}

/* Two runs that share the folder: one writes an entry again and again
 * while the other reads it; a read sees a whole entry or none, never a
 * torn one. */
static void test_shared(void **state) {
  tpuci__instance_result_t r;
  tpuci__instance_t inst;
  tpuci__err_t e = {0, NULL};
  json_t *entry, *got;
  pid_t pid;
  int k, status, torn = 0;
  (void) state;
  memset(&inst, 0, sizeof(inst));
  inst.name = "c";
  passed_result(&r, TPUCI_OUTCOME_PASSED, TPUCI_OUTCOME_PASSED);
  entry = tpuci__cache_entry(&inst, &r, K1, "run");
  tpuci__instance_result_free(&r);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    for (k = 0; k < 300; k++)
      if (tpuci__cache_put(dir, K1, entry, NULL) != 0) _exit(1);
    _exit(0);
  }
  for (k = 0; k < 300; k++) {
    int g = tpuci__cache_get(dir, K1, "c", 1, &got, &e);
    if (g < 0) torn++;
    tpuci__err_clear(&e);
    json_decref(got);
    if (tpuci__cache_put(dir, K1, entry, NULL) != 0) torn++;
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(torn, 0);
  json_decref(entry);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_storable),
      cmocka_unit_test_setup_teardown(test_pytest, setup, teardown),
      cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_trim, setup, teardown),
      cmocka_unit_test_setup_teardown(test_shared, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
