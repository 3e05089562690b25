/* The main() of a cmocka test that works in a temporary folder of its
 * own: `dir` (a "/tmp/...-XXXXXX" template) is made before the tests and
 * removed after them. Include it once, after cmocka.h. */
#ifndef TPUCI_TESTS_JUNIT_TMPDIR_MAIN_H
#define TPUCI_TESTS_JUNIT_TMPDIR_MAIN_H

#include <stdlib.h>

#include "base/util.h"

static int run_in_tmpdir(char *dir, const struct CMUnitTest *tests, size_t n) {
  char *cmd;
  int r;
  if (mkdtemp(dir) == NULL) return 1;
  r = _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
  cmd = tpuci__printf("rm -rf '%s'", dir);
  if (system(cmd) != 0) r = 1;
  free(cmd);
  return r;
}

#endif
