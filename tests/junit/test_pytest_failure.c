/* The line a failure's message is made of when only the clipped tail of
 * its traceback is known (progress.jsonl of an attempt that left no
 * JUnit file): tpuci__pytest_failure_line(). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kind/pytest/pytest_run.h"

static void check(const char *tail, const char *want) {
  char *got = tpuci__pytest_failure_line(tail);
  if (want == NULL) {
    if (got != NULL) fail_msg("got \"%s\", want NULL", got);
    return;
  }
  if (got == NULL || strcmp(got, want) != 0)
    fail_msg("got \"%s\", want \"%s\"", got ? got : "(null)", want);
  free(got);
}

/* The tail starts in the middle of a frame (4000 bytes of a long torch
 * traceback): its first line is not the message. */
static void test_e_lines(void **state) {
  (void) state;
  check("=True)(torch.rand(2))\n"
        "\n"
        "    def test_all_reduce():\n"
        ">       assert out.sum() == 3\n"
        "E       AssertionError: assert tensor(2.) == 3\n"
        "E        +  where tensor(2.) = <built-in method sum>()\n"
        "\n"
        "tests/test_dist.py:12: AssertionError\n",
        "AssertionError: assert tensor(2.) == 3");
}

/* A chained exception: the last group of E lines is the one raised. */
static void test_last_group(void **state) {
  (void) state;
  check("E   KeyError: 'a'\n"
        "\n"
        "tests/t.py:3: KeyError\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        ">       raise RuntimeError('lookup failed')\n"
        "E       RuntimeError: lookup failed\n"
        "\n"
        "tests/t.py:5: RuntimeError",
        "RuntimeError: lookup failed");
}

/* --tb=native: no E lines; the last line that names an exception. */
static void test_native(void **state) {
  (void) state;
  check("  File \"/src/tests/t.py\", line 4, in test_x\n"
        "    torch.ops.xla.boom()\n"
        "torch.OutOfMemoryError: CUDA out of memory\n",
        "torch.OutOfMemoryError: CUDA out of memory");
  check("Traceback (most recent call last):\n"
        "ValueError: first\n"
        "  File \"t.py\", line 2\n"
        "KeyboardInterrupt\n",
        "KeyboardInterrupt");
}

static void test_none(void **state) {
  (void) state;
  check("nothing that names an exception\nat all: here\n", NULL);
  check("", NULL);
  check(NULL, NULL);
  check("tests/t.py:12: AssertionError\n", NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_e_lines),
    cmocka_unit_test(test_last_group),
    cmocka_unit_test(test_native),
    cmocka_unit_test(test_none),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
