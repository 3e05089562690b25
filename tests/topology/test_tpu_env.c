/* Reading a value of the Compute Engine metadata's `tpu-env` text
 * (core/runtime/tpuvm.c, for `tpuci doctor --real`): the form torch_xla's
 * tests show ("KEY: 'value'" lines), without quotes, with double quotes
 * and CRLF, a key that is a prefix of another, and a key it lacks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/tpuvm.h"

static void check_value(const char *text, const char *key, const char *want) {
  char *got = tpuci__tpu_env_value(text, key);
  if (want == NULL) {
    assert_null(got);
    return;
  }
  assert_non_null(got);
  assert_string_equal(got, want);
  free(got);
}

static void test_quoted(void **state) {
  static const char text[] = "ACCELERATOR_TYPE: 'v4-16'\n"
                             "CHIPS_PER_HOST_BOUNDS: '2,2,1'\n"
                             "WORKER_ID: '0'\n";
  (void) state;
  check_value(text, "ACCELERATOR_TYPE", "v4-16");
  check_value(text, "CHIPS_PER_HOST_BOUNDS", "2,2,1");
  check_value(text, "WORKER_ID", "0");
}

static void test_other_forms(void **state) {
  (void) state;
  check_value("WORKER_ID: 3", "WORKER_ID", "3");
  check_value("ZONE: \"us-central2-b\"\r\nWORKER_ID: '1'\r\n", "ZONE", "us-central2-b");
  check_value("ZONE: \"us-central2-b\"\r\nWORKER_ID: '1'\r\n", "WORKER_ID", "1");
  /* A quote that opens and never closes is the value's own. */
  check_value("ZONE: 'us", "ZONE", "'us");
  check_value("ZONE: ''", "ZONE", "");
  /* A key with nothing after it but spaces: the empty value. */
  check_value("WORKER_ID: ", "WORKER_ID", "");
  check_value("WORKER_ID:\r\n", "WORKER_ID", "");
  check_value("WORKER_ID:", "WORKER_ID", "");
}

static void test_absent(void **state) {
  (void) state;
  /* ACCELERATOR_TYPE_X is not ACCELERATOR_TYPE; a key inside a value is
   * not a key. */
  check_value("ACCELERATOR_TYPE_X: 'v4-8'\n", "ACCELERATOR_TYPE", NULL);
  check_value("ZONE: 'ACCELERATOR_TYPE: v4-8'\n", "ACCELERATOR_TYPE", NULL);
  check_value("", "WORKER_ID", NULL);
  check_value("WORKER_ID\n", "WORKER_ID", NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_quoted),
      cmocka_unit_test(test_other_forms),
      cmocka_unit_test(test_absent),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
