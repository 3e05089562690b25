/* core/kind/pytest/live.c: following a running attempt's progress files from
 * where the last look stopped: a line cut between two looks, the test a
 * host is in and when it ends, the collection line passed over, a gang's
 * hosts as one text, and a file that is not there yet. */
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
#include "kind/pytest/live.h"

static char dir[] = "/tmp/tpuci-live-XXXXXX";

static void append(const char *rel, const char *text) {
  char *path = tpuci__printf("%s/%s", dir, rel);
  FILE *f = fopen(path, "a");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  free(path);
}

static void expect_text(const tpuci__live_t *lv, const char *want, uint64_t want_since) {
  uint64_t since = 12345;
  char *got = tpuci__live_text(lv, &since);
  if (want == NULL) {
    assert_null(got);
    assert_int_equal(since, 0);
    return;
  }
  assert_non_null(got);
  assert_string_equal(got, want);
  assert_int_equal(since, want_since);
  free(got);
}

static void test_one_host(void **state) {
  tpuci__live_t lv;
  (void) state;
  tpuci__live_init(&lv, dir, 1);
  tpuci__live_poll(&lv, 1000);  /* no file yet */
  expect_text(&lv, NULL, 0);
  append("progress.jsonl", "{\"rootdir\": \"/src\"}\n{\"collected\": [\"t.py::a\", \"t.py::b\"]}\n");
  append("progress.jsonl", "{\"start\": \"t.py::a\", \"t\": 5.5}\n{\"id\": \"t.py::a\", \"wh");
  tpuci__live_poll(&lv, 9000);
  expect_text(&lv, "t.py::a", 5500);  /* the start's own time */
  /* The cut line ends: a's teardown; then b starts (no "t": the look's). */
  append("progress.jsonl", "en\": \"teardown\", \"outcome\": \"passed\"}\n");
  tpuci__live_poll(&lv, 9100);
  expect_text(&lv, NULL, 0);
  append("progress.jsonl", "{\"start\": \"t.py::b\"}\n");
  tpuci__live_poll(&lv, 9200);
  expect_text(&lv, "t.py::b", 9200);
  /* A teardown of another test does not end b. */
  append("progress.jsonl", "{\"id\": \"t.py::a\", \"when\": \"teardown\", \"outcome\": \"passed\"}\nnot json\n");
  tpuci__live_poll(&lv, 9300);
  expect_text(&lv, "t.py::b", 9200);
  tpuci__live_free(&lv);
}

static void test_gang(void **state) {
  tpuci__live_t lv;
  char *w0 = tpuci__printf("%s/worker-0", dir), *w1 = tpuci__printf("%s/worker-1", dir);
  (void) state;
  assert_int_equal(mkdir(w0, 0755), 0);
  assert_int_equal(mkdir(w1, 0755), 0);
  tpuci__live_init(&lv, dir, 2);
  append("worker-0/progress.jsonl", "{\"start\": \"g.py::x\", \"t\": 2}\n");
  tpuci__live_poll(&lv, 3000);
  expect_text(&lv, "g.py::x on worker-0", 2000);
  append("worker-1/progress.jsonl", "{\"start\": \"g.py::x\", \"t\": 1}\n");
  tpuci__live_poll(&lv, 3000);
  expect_text(&lv, "g.py::x on all 2 hosts", 1000);
  append("worker-0/progress.jsonl", "{\"id\": \"g.py::x\", \"when\": \"teardown\", \"outcome\": \"passed\"}\n"
                                    "{\"start\": \"g.py::y\", \"t\": 4}\n");
  tpuci__live_poll(&lv, 5000);
  expect_text(&lv, "g.py::y on worker-0, g.py::x on worker-1", 1000);
  tpuci__live_free(&lv);
  free(w0);
  free(w1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_host),
      cmocka_unit_test(test_gang),
  };
  return run_in_tmpdir(dir, tests, sizeof(tests) / sizeof(tests[0]));
}
