/* core/pytest/flaky.c's store: bounded to the last TPUCI__FLAKY_MAX_RUNS
 * runs, damaged lines dropped, the newest run always kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tmpdir_main.h"
#include "pytest/flaky.h"

static char dir[] = "/tmp/tpuci-flaky-XXXXXX";

static size_t lines_of(const char *path) {
  char *text = NULL;
  size_t len = 0, n = 0, i;
  assert_int_equal(tpuci__read_file(path, &text, &len), 0);
  for (i = 0; i < len; i++) n += text[i] == '\n';
  free(text);
  return n;
}

static void test_cap_and_damage(void **state) {
  char *path = tpuci__printf("%s/history.jsonl", dir), *id, *report = NULL;
  tpuci__history_t h;
  const tpuci__history_t *hs[1] = {&h};
  tpuci__flaky_run_t run;
  tpuci__err_t err = {0, NULL};
  FILE *f;
  int i;
  (void) state;
  tpuci__history_init(&h, "unit");
  memset(&run, 0, sizeof(run));
  run.histories = hs;
  run.n = 1;
  for (i = 0; i < TPUCI__FLAKY_MAX_RUNS + 5; i++) {
    id = tpuci__printf("run-%03d", i);
    run.run_id = id;
    assert_int_equal(tpuci__flaky_append(path, &run, &err), 0);
    free(id);
    if (i == 3) {
      /* A damaged line (a crash mid-write of another tool) is dropped. */
      f = fopen(path, "a");
      assert_non_null(f);
      fputs("{\"run\": \"cut\n", f);
      fclose(f);
    }
  }
  assert_int_equal(lines_of(path), TPUCI__FLAKY_MAX_RUNS);
  assert_int_equal(tpuci__flaky_report(path, 0, 1, &report, &err), 0);
  /* The oldest five went; the newest is there. */
  assert_null(strstr(report, "\"run-004\""));
  assert_non_null(strstr(report, "\"run-005\""));
  assert_non_null(strstr(report, "\"run-104\""));
  free(report);
  tpuci__history_free(&h);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_cap_and_damage)};
  return run_in_tmpdir(dir, tests, sizeof(tests) / sizeof(tests[0]));
}
