/* Where a test's file is on the host (tpuci__pytest_host_path()): pytest
 * writes it relative to its rootdir, inside the container for a docker
 * job; GitHub annotations need it relative to the repository. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kind/pytest/pytest_run.h"

static tpuci__mount_t mounts[] = {
    {"/home/u/repo", "/src", 0},
    {"/home/u/repo/data", "/src/data/", 1},
    {"/tmp/cache", "/cache", 0},
};

static void check(const tpuci__instance_t *inst, const char *rootdir, const char *file,
                  const char *want) {
  char *got = tpuci__pytest_host_path(inst, rootdir, file);
  if (want == NULL) {
    if (got != NULL)
      fail_msg("%s + %s: got %s, want NULL", rootdir ? rootdir : "(null)", file ? file : "(null)",
               got);
    return;
  }
  if (got == NULL || strcmp(got, want) != 0)
    fail_msg("%s + %s: got %s, want %s", rootdir ? rootdir : "(null)", file ? file : "(null)",
             got ? got : "NULL", want);
  free(got);
}

static void test_docker_mounts(void **state) {
  tpuci__instance_t inst;
  (void) state;
  memset(&inst, 0, sizeof(inst));
  inst.runtime = TPUCI__RUNTIME_DOCKER;
  inst.mounts = mounts;
  inst.nmounts = 3;
  /* "." is mounted at /src; pytest ran in /src. */
  check(&inst, "/src", "tests/test_x.py", "/home/u/repo/tests/test_x.py");
  /* The workdir is below the mount: rootdir /src/python. */
  check(&inst, "/src/python", "tests/test_x.py", "/home/u/repo/python/tests/test_x.py");
  /* Relative paths that climb out of the rootdir, and absolute files. */
  check(&inst, "/src/python", "../tests/./test_y.py", "/home/u/repo/tests/test_y.py");
  check(&inst, "/elsewhere", "/src/tests/test_z.py", "/home/u/repo/tests/test_z.py");
  /* The longest mount wins, with or without a trailing slash. */
  check(&inst, "/src", "data/test_d.py", "/home/u/repo/data/test_d.py");
  check(&inst, "/cache", "t.py", "/tmp/cache/t.py");
  /* /srcx is not under /src; files no mount holds stay unknown. */
  check(&inst, "/srcx", "t.py", NULL);
  check(&inst, "/opt/app", "tests/t.py", NULL);
  /* No rootdir: only an absolute file can be placed. */
  check(&inst, NULL, "tests/t.py", NULL);
  check(&inst, NULL, "/src/tests/t.py", "/home/u/repo/tests/t.py");
  check(&inst, "/src", NULL, NULL);
  check(&inst, "/src", "", NULL);
}

static void test_local(void **state) {
  tpuci__instance_t inst;
  (void) state;
  memset(&inst, 0, sizeof(inst));
  inst.runtime = TPUCI__RUNTIME_LOCAL;
  /* The rootdir is a host path already; mounts play no part. */
  inst.mounts = mounts;
  inst.nmounts = 3;
  check(&inst, "/home/u/repo", "tests/test_x.py", "/home/u/repo/tests/test_x.py");
  check(&inst, "/home/u/repo/", "./a//b/../c.py", "/home/u/repo/a/c.py");
  check(&inst, "/", "../../x.py", "/x.py");
  check(&inst, "relative/root", "x.py", NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_docker_mounts),
    cmocka_unit_test(test_local),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
