/* core/report/cache.c: a cache entry is text someone else may have
 * written (a CI cache restored from another branch). Its `log`, whose
 * last lines every report attaches, is restored only when it is a file
 * of the state folder's runs/<run>/ (the entry's own run, of the usual
 * form), whatever links and ".." it holds; any other log restores no
 * log and no tail. And an entry too big to restore in bounded memory is
 * refused, and never stored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "report/cache.h"
#include "kind/pytest/kind.h"

static char dir[256];
static const char *const K1 = "1111111111111111111111111111111111111111111111111111111111111111";
static const char *const RUN = "20261204-161212-f7a3";

static int setup(void **state) {
  char path[512];
  FILE *f;
  (void) state;
  snprintf(dir, sizeof(dir), "/tmp/tpuci-trust.XXXXXX");
  if (mkdtemp(dir) == NULL) return -1;
  snprintf(path, sizeof(path), "%s/runs/%s/unit", dir, RUN);
  if (tpuci__mkdir_p(path, 0755) != 0) return -1;
  snprintf(path, sizeof(path), "%s/runs/%s/unit/attempt-1.log", dir, RUN);
  f = fopen(path, "w");
  if (f == NULL) return -1;
  fputs("the log of the pass\n", f);
  fclose(f);
  /* A link inside the run folder that leads out of it. */
  snprintf(path, sizeof(path), "%s/runs/%s/unit/link.log", dir, RUN);
  if (symlink("/etc/passwd", path) != 0) return -1;
  /* A file of runs/ in a folder whose name is not a run id. */
  snprintf(path, sizeof(path), "%s/runs/latest-ish", dir);
  mkdir(path, 0755);
  snprintf(path, sizeof(path), "%s/runs/latest-ish/x.log", dir);
  f = fopen(path, "w");
  if (f == NULL) return -1;
  fclose(f);
  /* Another run's folder. */
  snprintf(path, sizeof(path), "%s/runs/20261204-161212-0000", dir);
  mkdir(path, 0755);
  snprintf(path, sizeof(path), "%s/runs/20261204-161212-0000/x.log", dir);
  f = fopen(path, "w");
  if (f == NULL) return -1;
  fclose(f);
  return 0;
}

static int teardown(void **state) {
  char cmd[300];
  (void) state;
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* Writes an entry of run RUN whose log is `log`, reads it back as a hit
 * and restores it: the log it keeps (a new string), or NULL. */
static char *restored_log(const char *log) {
  char path[400];
  tpuci__instance_t inst;
  tpuci__instance_result_t back;
  tpuci__err_t e = {0, NULL};
  json_t *entry = json_object(), *got = NULL;
  char *text, *kept;
  FILE *f;
  json_object_set_new(entry, "format", json_integer(TPUCI__CACHE_FORMAT));
  json_object_set_new(entry, "key", json_string(K1));
  json_object_set_new(entry, "instance", json_string("unit"));
  json_object_set_new(entry, "run", json_string(RUN));
  json_object_set_new(entry, "duration_ms", json_integer(1500));
  json_object_set_new(entry, "log", json_string(log));
  text = json_dumps(entry, 0);
  json_decref(entry);
  snprintf(path, sizeof(path), "%s/cache", dir);
  mkdir(path, 0755);
  snprintf(path, sizeof(path), "%s/cache/%s.json", dir, K1);
  f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  free(text);
  assert_int_equal(tpuci__cache_get(dir, K1, "unit", 0, &got, &e), 1);
  memset(&inst, 0, sizeof(inst));
  inst.name = "unit";
  tpuci__cache_restore(got, &inst, &back);
  json_decref(got);
  assert_int_equal(back.outcome, TPUCI_OUTCOME_CACHED);
  kept = back.attempts[0].log_path ? strdup(back.attempts[0].log_path) : NULL;
  tpuci__instance_result_free(&back);
  return kept;
}

static void assert_dropped(const char *log) {
  char *kept = restored_log(log);
  if (kept != NULL) fail_msg("log '%s' restored as '%s'", log, kept);
}

static void test_log_of_the_run(void **state) {
  char path[512], *kept;
  (void) state;
  snprintf(path, sizeof(path), "%s/runs/%s/unit/attempt-1.log", dir, RUN);
  kept = restored_log(path);
  assert_non_null(kept);
  assert_string_equal(kept, path);
  free(kept);
}

static void test_log_elsewhere(void **state) {
  char path[512];
  (void) state;
  assert_dropped("/etc/passwd");
  assert_dropped("/etc/shadow");
  assert_dropped("etc/passwd");
  snprintf(path, sizeof(path), "%s/runs/%s/../../../../../../etc/passwd", dir, RUN);
  assert_dropped(path);
  snprintf(path, sizeof(path), "%s/runs/%s/unit/link.log", dir, RUN);
  assert_dropped(path);
  snprintf(path, sizeof(path), "%s/runs/%s/unit", dir, RUN);
  assert_dropped(path);  /* a folder */
  snprintf(path, sizeof(path), "%s/runs/latest-ish/x.log", dir);
  assert_dropped(path);
  snprintf(path, sizeof(path), "%s/runs/20261204-161212-0000/x.log", dir);
  assert_dropped(path);  /* another run's */
  snprintf(path, sizeof(path), "%s/cache/%s.json", dir, K1);
  assert_dropped(path);  /* in the state folder, not in runs/ */
}

static long peak_rss_kb(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

/* An entry file of n tests, each with an id of about `pad` bytes. */
static void write_tests_entry(int n, int pad) {
  char path[400];
  FILE *f;
  int i;
  snprintf(path, sizeof(path), "%s/cache", dir);
  mkdir(path, 0755);
  snprintf(path, sizeof(path), "%s/cache/%s.json", dir, K1);
  f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "{\"format\":1,\"key\":\"%s\",\"instance\":\"unit\",\"run\":\"%s\","
             "\"duration_ms\":1,\"tests\":[", K1, RUN);
  for (i = 0; i < n; i++)
    fprintf(f, "%s{\"id\":\"tests/t.py::test_%0*d\",\"classname\":\"tests.t\","
               "\"name\":\"test_%d\",\"outcome\":\"passed\",\"time\":0.01}",
            i ? "," : "", pad, i, i);
  fputs("]}", f);
  fclose(f);
}

/* A huge entry (the 250,000 tests, 50 MB that took 877 MB to restore) is
 * refused before it is read; one of more tests than an entry may hold is
 * refused too, and never stored. */
static void test_caps(void **state) {
  tpuci__err_t e = {0, NULL};
  json_t *got = NULL, *entry, *tests;
  long before;
  int i;
  (void) state;
  write_tests_entry(250000, 80);
  before = peak_rss_kb();
  assert_int_equal(tpuci__cache_get(dir, K1, "unit", 0, &got, &e), -1);
  assert_null(got);
  assert_non_null(strstr(e.msg, "over the 16 MiB an entry may have"));
  tpuci__err_clear(&e);
  if (peak_rss_kb() - before > 32 * 1024)
    fail_msg("refusing the entry took %ld kB", peak_rss_kb() - before);

  write_tests_entry(TPUCI__CACHE_TESTS_MAX + 1, 1);
  assert_int_equal(tpuci__cache_get(dir, K1, "unit", 0, &got, &e), -1);
  assert_non_null(strstr(e.msg, "more tests than an entry may hold (50000)"));
  tpuci__err_clear(&e);
  write_tests_entry(TPUCI__CACHE_TESTS_MAX, 1);
  assert_int_equal(tpuci__cache_get(dir, K1, "unit", 0, &got, &e), 1);
  json_decref(got);

  /* Storing: over the cap is not stored. */
  entry = json_object();
  tests = json_array();
  json_object_set_new(entry, "instance", json_string("unit"));
  for (i = 0; i <= TPUCI__CACHE_TESTS_MAX; i++) json_array_append_new(tests, json_object());
  json_object_set_new(entry, "tests", tests);
  assert_int_equal(tpuci__cache_put(dir, K1, entry, &e), TPUCI_ELIMIT);
  assert_non_null(strstr(e.msg, "'unit' not stored: 50001 tests, at most 50000"));
  tpuci__err_clear(&e);
  json_decref(entry);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_log_of_the_run, setup, teardown),
      cmocka_unit_test_setup_teardown(test_log_elsewhere, setup, teardown),
      cmocka_unit_test_setup_teardown(test_caps, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
