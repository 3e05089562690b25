/* What a pytest traceback says (pytest/trace.h): its frames in every
 * --tb style, the exception's class (the failure's JUnit type), and
 * where a test failed in the project (the innermost frame there, mapped
 * through a container's mounts; not an installed package's). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kind/pytest/trace.h"

/* pytest 7.2's long traceback of a test whose helper failed. */
static const char long_tb[] =
    "def test_edge():\n"
    ">       helper(2)\n"
    "\n"
    "tests/test_edge.py:10: \n"
    "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n"
    "\n"
    "x = 2\n"
    "\n"
    "    def helper(x):\n"
    ">       assert x == 1, \"x was %r\" % x\n"
    "E       AssertionError: x was 2\n"
    "E       assert 2 == 1\n"
    "\n"
    "tests/helpers.py:4: AssertionError";

/* A failure inside an installed package, called from the test. */
static const char deep_tb[] =
    "    def test_load():\n"
    ">       torch.load(\"x\")\n"
    "\n"
    "tests/test_io.py:7: \n"
    "_ _ _ _\n"
    "../usr/lib/python3/dist-packages/torch/serialization.py:791: in load\n"
    "    with _open_file_like(f, 'rb') as opened_file:\n"
    "/usr/lib/python3/dist-packages/torch/serialization.py:271: FileNotFoundError\n";

static const char short_tb[] =
    "tests/test_edge.py:10: in test_edge\n"
    "    helper(2)\n"
    "tests/helpers.py:4: in helper\n"
    "    assert x == 1\n"
    "E   AssertionError: x was 2\n";

static const char native_tb[] =
    "Traceback (most recent call last):\n"
    "  File \"/src/tests/test_edge.py\", line 10, in test_edge\n"
    "    helper(2)\n"
    "  File \"/src/tests/helpers.py\", line 4, in helper\n"
    "    assert x == 1\n"
    "AssertionError: x was 2\n";

static void want_frames(const char *text, size_t n, const char *const *paths,
                        const int *lines) {
  tpuci__trace_frame_t *f = NULL;
  size_t got = 0, i;
  assert_int_equal(tpuci__trace_frames(text, &f, &got), n);
  assert_int_equal(got, n);
  for (i = 0; i < n; i++) {
    assert_string_equal(f[i].path, paths[i]);
    assert_int_equal(f[i].line, lines[i]);
  }
  tpuci__trace_frames_free(f, got);
}

static void test_frames(void **state) {
  static const char *const lp[] = {"tests/test_edge.py", "tests/helpers.py"};
  static const int ll[] = {10, 4};
  static const char *const np[] = {"/src/tests/test_edge.py", "/src/tests/helpers.py"};
  static const char *const dp[] = {"tests/test_io.py",
                                   "../usr/lib/python3/dist-packages/torch/serialization.py",
                                   "/usr/lib/python3/dist-packages/torch/serialization.py"};
  static const int dl[] = {7, 791, 271};
  tpuci__trace_frame_t *f = NULL;
  size_t n = 0;
  (void) state;
  want_frames(long_tb, 2, lp, ll);
  want_frames(short_tb, 2, lp, ll);
  want_frames(native_tb, 2, np, ll);
  want_frames(deep_tb, 3, dp, dl);
  /* Source lines, E lines, "x = 2" and captured text are not frames. */
  assert_int_equal(tpuci__trace_frames("    d = {1: 2}\nE   k:1: v\n> a:2: b\nplain text\n"
                                       "a:b: c\n:3: x\nf.py:0: x\nf.py:12x: y\n", &f, &n), 0);
  assert_int_equal(tpuci__trace_frames(NULL, &f, &n), 0);
  /* CR LF line ends, and a CR that ends the text (it once looped). */
  assert_int_equal(tpuci__trace_frames("t.py:1: in a\r\nt.py:2: X\r", &f, &n), 2);
  assert_int_equal(f[1].line, 2);
  tpuci__trace_frames_free(f, n);
  f = NULL;
  n = 0;
  /* --tb=line: the location and the message on one line. */
  assert_int_equal(tpuci__trace_frames("/src/t.py:8: ValueError: no\n", &f, &n), 1);
  assert_string_equal(f[0].path, "/src/t.py");
  assert_int_equal(f[0].line, 8);
  tpuci__trace_frames_free(f, n);
}

static void want_exc(const char *text, const char *message, const char *want) {
  char *got = tpuci__trace_exception(text, message);
  if (want == NULL) {
    if (got != NULL) fail_msg("want no class, got %s", got);
    return;
  }
  if (got == NULL || strcmp(got, want) != 0) fail_msg("got %s, want %s", got ? got : "NULL", want);
  free(got);
}

static void test_exception(void **state) {
  (void) state;
  /* pytest's crash line. */
  want_exc(long_tb, "AssertionError: x was 2\nassert 2 == 1", "AssertionError");
  want_exc(deep_tb, NULL, "FileNotFoundError");
  want_exc("tests/t.py:3: Oops", NULL, "Oops");
  /* No crash line: the message, then the E lines. */
  want_exc(short_tb, NULL, "AssertionError");
  want_exc("", "mypkg.errors.Oops: it broke", "mypkg.errors.Oops");
  want_exc(NULL, "Failed: DID NOT RAISE <class 'ValueError'>", "Failed");
  want_exc("E   KeyboardInterrupt\n", NULL, "KeyboardInterrupt");
  /* The last group of E lines names it; its later lines do not. */
  want_exc("E   ValueError: a\nE   TypeError: b\n\nmore\nE   KeyError: 'k'\nE   x: y\n", NULL,
           "KeyError");
  /* --tb=line: the crash line holds the message; the message names it. */
  want_exc("/src/t.py:8: ValueError: no", "ValueError: no", "ValueError");
  want_exc("E   ValueError: x\r\n\r", NULL, "ValueError");
  want_exc("t.py:1: OSError\r", NULL, "OSError");
  /* Nothing that names a class. */
  want_exc("assert 1 == 2\n", "assert 1 == 2", NULL);
  want_exc(NULL, "failed on setup with \"x\"", NULL);
  want_exc("t.py:3: not a class", "pkg.: x", NULL);
  want_exc(NULL, NULL, NULL);
}

static tpuci__mount_t mounts[] = {{"/home/u/repo", "/src", 1}};

/* A history with one failing test whose final text is `text`. */
static void one_failure(tpuci__history_t *h, const char *id, const char *text) {
  tpuci__junit_attempt_t a;
  tpuci__junit_t j;
  memset(&a, 0, sizeof(a));
  memset(&j, 0, sizeof(j));
  a.outcome = TPUCI_OUTCOME_FAILED;
  a.exit_code = 1;
  j.items = calloc(1, sizeof(*j.items));
  j.len = j.cap = 1;
  j.items[0].id = strdup(id);
  j.items[0].line = -1;
  j.items[0].outcome = TPUCI_TEST_FAILED;
  j.items[0].text = strdup(text);
  tpuci__history_add(h, &a, &j);
  tpuci__junit_free(&j);
}

static void test_locate(void **state) {
  tpuci__instance_t inst;
  tpuci__history_t h;
  (void) state;
  memset(&inst, 0, sizeof(inst));
  inst.runtime = TPUCI__RUNTIME_DOCKER;
  inst.mounts = mounts;
  inst.nmounts = 1;

  /* pytest ran in /src: the helper's line, in the project. */
  tpuci__history_init(&h, "unit");
  h.rootdir = strdup("/src");
  one_failure(&h, "tests/test_edge.py::test_edge", long_tb);
  tpuci__trace_locate(&h, &inst, "/src", "/home/u/repo");
  assert_string_equal(h.tests[0].fail_path, "/home/u/repo/tests/helpers.py");
  assert_int_equal(h.tests[0].fail_line, 4);
  /* Not placed by its report: its node id's file, from the rootdir. */
  assert_string_equal(h.tests[0].path, "/home/u/repo/tests/test_edge.py");
  tpuci__history_free(&h);

  /* The innermost frames are an installed package's (mounted or not):
   * the test's own line. */
  tpuci__history_init(&h, "unit");
  h.rootdir = strdup("/src");
  one_failure(&h, "tests/test_io.py::test_load", deep_tb);
  tpuci__trace_locate(&h, &inst, "/src", "/home/u/repo");
  assert_string_equal(h.tests[0].fail_path, "/home/u/repo/tests/test_io.py");
  assert_int_equal(h.tests[0].fail_line, 7);
  tpuci__history_free(&h);

  /* The workdir is /src/python: paths are relative to it; a root that
   * holds none of the frames leaves no location. */
  tpuci__history_init(&h, "unit");
  h.rootdir = strdup("/src/python");
  one_failure(&h, "tests/test_edge.py::test_edge", short_tb);
  tpuci__trace_locate(&h, &inst, "/src/python", "/home/u/repo/python");
  assert_string_equal(h.tests[0].fail_path, "/home/u/repo/python/tests/helpers.py");
  tpuci__trace_locate(&h, &inst, "/src/python", "/home/u/other");
  assert_null(h.tests[0].fail_path);
  assert_int_equal(h.tests[0].fail_line, 0);
  tpuci__history_free(&h);
}

static void test_below(void **state) {
  (void) state;
  assert_true(tpuci__path_below("/a/b/c", "/a/b"));
  assert_true(tpuci__path_below("/a/b/c", "/a/b/"));
  assert_true(tpuci__path_below("/a/b", "/a/b"));
  assert_true(tpuci__path_below("/x", "/"));
  assert_false(tpuci__path_below("/a/bc", "/a/b"));
  assert_false(tpuci__path_below("/a", "/a/b"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_frames),
    cmocka_unit_test(test_exception),
    cmocka_unit_test(test_locate),
    cmocka_unit_test(test_below),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
