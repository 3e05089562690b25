/* tpuci_plan_select_unpassed(), what `tpuci rerun --failed` runs, against
 * summaries written by hand: it selects exactly the instances that did not
 * pass, and a summary that does not say which those are is an error that
 * names the file, never "everything passed". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "tpuci.h"
#include "base/util.h"

static const char spec[] =
    "job 'ok' { run = 'true' }\n"
    "job 'bad' { run = 'false' }\n"
    "job 'm' { run = 'true', matrix = { v = { 'a', 'b' } } }\n";

static char state_dir[] = "/tmp/tpuci-rerun-XXXXXX";
static tpuci_ctx_t *ctx;

static int setup(void **state) {
  (void) state;
  if (mkdtemp(state_dir) == NULL) return -1;
  if (tpuci_ctx_new(&ctx, NULL) != 0) return -1;
  return tpuci_load_string(ctx, spec, strlen(spec), "spec.lua");
}

static int teardown(void **state) {
  char cmd[128];
  (void) state;
  tpuci_ctx_free(ctx);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", state_dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* Writes state_dir/runs/<id>/summary.json. */
static void write_summary(const char *id, const char *json) {
  char *path = tpuci__printf("%s/runs/%s", state_dir, id);
  FILE *f;
  assert_int_equal(tpuci__mkdir_p(path, 0755), 0);
  free(path);
  path = tpuci__printf("%s/runs/%s/summary.json", state_dir, id);
  f = fopen(path, "w");
  assert_non_null(f);
  fputs(json, f);
  assert_int_equal(fclose(f), 0);
  free(path);
}

/* The selection as "ok,bad,..." (selected names, in plan order). */
static char *selected(void) {
  tpuci__buf_t b;
  size_t i;
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "");
  for (i = 0; i < tpuci_instance_count(ctx); i++)
    if (tpuci_instance_selected(ctx, i))
      tpuci__buf_addf(&b, "%s%s", b.len ? "," : "", tpuci_instance_name(ctx, i));
  return tpuci__buf_steal(&b);
}

static void assert_selected(const char *want) {
  char *got = selected();
  assert_string_equal(got, want);
  free(got);
}

static void test_selects_what_did_not_pass(void **state) {
  (void) state;
  write_summary("r1", "{\"exit_code\": 1, \"counts\": {\"passed\": 1, \"failed\": 1,"
                      " \"timeout\": 1, \"flaky\": 1, \"not-run\": 0, \"total\": 4},"
                      " \"instances\": ["
                      "{\"name\": \"ok\", \"outcome\": \"passed\"},"
                      "{\"name\": \"bad\", \"outcome\": \"failed\"},"
                      "{\"name\": \"m[v=a]\", \"outcome\": \"timeout\"},"
                      "{\"name\": \"m[v=b]\", \"outcome\": \"flaky\"}]}");
  assert_int_equal(tpuci_plan_select_unpassed(ctx, state_dir, "r1"), 2);
  assert_selected("bad,m[v=a]");

  /* Everything passed: nothing to run, and that is not an error. */
  write_summary("r2", "{\"exit_code\": 0, \"counts\": {\"passed\": 2, \"flaky\": 1,"
                      " \"failed\": 0, \"total\": 3}, \"instances\": ["
                      "{\"name\": \"ok\", \"outcome\": \"passed\"},"
                      "{\"name\": \"m[v=a]\", \"outcome\": \"passed\"},"
                      "{\"name\": \"m[v=b]\", \"outcome\": \"flaky\"}]}");
  assert_int_equal(tpuci_plan_select_unpassed(ctx, state_dir, "r2"), 0);
  /* Interrupted after everything had passed. */
  write_summary("r3", "{\"exit_code\": 130, \"counts\": {\"passed\": 1, \"total\": 1},"
                      " \"instances\": [{\"name\": \"ok\", \"outcome\": \"passed\"}]}");
  assert_int_equal(tpuci_plan_select_unpassed(ctx, state_dir, "r3"), 0);
}

/* Each summary must be refused with `code` and a message that starts with
 * its path and contains `want`; the selection stays as it was. */
static void assert_refused(const char *json, int code, const char *want) {
  char *path = tpuci__printf("%s/runs/bad/summary.json", state_dir);
  const char *msg;
  int r;

  write_summary("bad", json);
  assert_int_equal(tpuci_plan_select(ctx, NULL, 0), 4);
  r = tpuci_plan_select_unpassed(ctx, state_dir, "bad");
  msg = tpuci_last_error(ctx);
  if (r != code || strncmp(msg, path, strlen(path)) != 0 || strstr(msg, want) == NULL)
    fail_msg("want %d with '%s: ...%s...', got %d: %s", code, path, want, r, msg);
  assert_selected("ok,bad,m[v=a],m[v=b]");
  free(path);
}

static void test_refuses_what_it_cannot_match(void **state) {
  (void) state;
  /* The name was lost (Jansson drops a string that is not UTF-8). */
  assert_refused("{\"exit_code\": 1, \"counts\": {\"failed\": 1, \"total\": 1},"
                 " \"instances\": [{\"job\": \"j\", \"outcome\": \"failed\"}]}",
                 TPUCI_EIO, ": instance record 1 (failed) has no name");
  assert_refused("{\"exit_code\": 1, \"instances\": [{\"name\": \"ok\", \"outcome\": "
                 "\"passed\"}, {\"name\": \"\", \"outcome\": \"oom\"}]}",
                 TPUCI_EIO, ": instance record 2 (oom) has no name");
  /* A name the spec does not have (renamed since). */
  assert_refused("{\"exit_code\": 1, \"instances\": [{\"name\": \"bad\", \"outcome\": "
                 "\"failed\"}, {\"name\": \"gone\", \"outcome\": \"infra\"}]}",
                 TPUCI_ENOMATCH, ": instance 'gone' did not pass (infra), but "
                 "spec.lua has no instance of that name");
  /* Counts of failures that no record names. */
  assert_refused("{\"exit_code\": 1, \"counts\": {\"passed\": 0, \"failed\": 1,"
                 " \"total\": 1}, \"instances\": []}",
                 TPUCI_EIO, ": its counts say 1 instance did not pass, but 0 "
                 "instance records say which");
  assert_refused("{\"exit_code\": 1, \"counts\": {\"failed\": 2, \"total\": 2},"
                 " \"instances\": [{\"name\": \"bad\", \"outcome\": \"failed\"}]}",
                 TPUCI_EIO, ": its counts say 2 instances did not pass, but 1 "
                 "instance record says which");
  /* A failed run whose records all passed. */
  assert_refused("{\"exit_code\": 1, \"instances\": [{\"name\": \"ok\", \"outcome\": "
                 "\"passed\"}]}",
                 TPUCI_EIO, ": the run failed (exit 1) but no instance record "
                 "says which did not pass");
  /* --strict-flaky failed it: the flaky instances are not "passed". */
  assert_refused("{\"exit_code\": 1, \"counts\": {\"flaky\": 1, \"total\": 1},"
                 " \"instances\": [{\"name\": \"m[v=b]\", \"outcome\": \"flaky\"}]}",
                 TPUCI_EIO, "its 1 flaky instance failed it under --strict-flaky");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_selects_what_did_not_pass),
    cmocka_unit_test(test_refuses_what_it_cannot_match),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
