/* Loading a spec through the public API: what tpuci_load_file() accepts
 * as a file (regular files of at most 4 MiB; never a FIFO, a device or a
 * folder, which must fail at once), and that a spec must declare a job. */
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
#include <uv.h>

#include "spec/spec.h"
#include "tpuci.h"

static char dir[] = "/tmp/tpuci-load-XXXXXX";
static tpuci_ctx_t *ctx;

static int setup(void **state) {
  (void) state;
  if (mkdtemp(dir) == NULL) return -1;
  return tpuci_ctx_new(&ctx, NULL);
}

static int teardown(void **state) {
  char cmd[128];
  (void) state;
  tpuci_ctx_free(ctx);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static char *path_of(const char *name) {
  return tpuci__printf("%s/%s", dir, name);
}

static char *write_spec(const char *name, const char *text, size_t len) {
  char *path = path_of(name);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
  return path;
}

/* Loads path, expecting `code` and a message containing `want`. */
static void load_fails(const char *path, int code, const char *want) {
  int r = tpuci_load_file(ctx, path);
  if (r != code || strstr(tpuci_last_error(ctx), want) == NULL)
    fail_msg("%s: expected %d with '%s', got %d: %s", path, code, want, r,
             tpuci_last_error(ctx));
}

static void test_not_regular(void **state) {
  char *fifo = path_of("fifo.lua"), *want;
  (void) state;

  /* A FIFO nobody writes to: refused at once (ctest's timeout catches a
   * load that waits for a writer). */
  assert_int_equal(mkfifo(fifo, 0600), 0);
  want = tpuci__printf("%s: cannot read spec: it is a FIFO, not a regular file", fifo);
  load_fails(fifo, UV_EFTYPE, want);
  free(want);
  load_fails("/dev/zero", UV_EFTYPE,
             "/dev/zero: cannot read spec: it is a character device, not a regular file");
  want = tpuci__printf("%s: cannot read spec: it is a folder, not a regular file", dir);
  load_fails(dir, UV_EISDIR, want);
  free(want);
  free(fifo);
}

static void test_size(void **state) {
  size_t n = TPUCI__SPEC_MAX_BYTES;
  char *text = malloc(n + 1), *path, *want;
  const char *job = "\njob \"a\" { run = \"true\" }\n";
  (void) state;

  /* Exactly the limit loads. */
  assert_non_null(text);
  memset(text, ' ', n + 1);
  memcpy(text, "--", 2);
  memcpy(text + n - strlen(job), job, strlen(job));
  path = write_spec("max.lua", text, n);
  assert_int_equal(tpuci_load_file(ctx, path), 0);
  assert_int_equal(tpuci_instance_count(ctx), 1);
  free(path);
  /* One byte more does not. */
  path = write_spec("big.lua", text, n + 1);
  want = tpuci__printf("%s: the spec is larger than 4 MiB (the most a spec may have)",
                       path);
  load_fails(path, TPUCI_ELIMIT, want);
  free(want);
  free(path);
  free(text);
}

static void test_no_jobs(void **state) {
  static const char *const specs[] = {
    "",
    "-- nothing yet\n",
    "\xef\xbb\xbf#!/usr/bin/env tpuci\n",
    "image \"py\" { ref = \"python:3.11\" }\ntopology \"v4-8\" {}\n",
  };
  size_t i;
  (void) state;

  for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
    char *path = write_spec("empty.lua", specs[i], strlen(specs[i]));
    char *want = tpuci__printf("%s: the spec declares no jobs", path);
    load_fails(path, TPUCI_ESPEC, want);
    assert_string_equal(tpuci_last_error(ctx), want);
    free(want);
    free(path);
  }
  assert_int_equal(tpuci_load_string(ctx, "", 0, "inline.lua"), TPUCI_ESPEC);
  assert_string_equal(tpuci_last_error(ctx), "inline.lua: the spec declares no jobs");
  /* The same spec with a job loads. */
  assert_int_equal(tpuci_load_string(ctx, "job 'a' { run = 'true' }", 24, "inline.lua"), 0);
  assert_int_equal(tpuci_instance_count(ctx), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_not_regular),
    cmocka_unit_test(test_size),
    cmocka_unit_test(test_no_jobs),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
