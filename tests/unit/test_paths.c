/* core/base/util.c tpuci__path_component(): the folder name of an instance in
 * the run folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/util.h"

static void assert_component(const char *name, const char *want) {
  char *got = tpuci__path_component(name);
  if (strcmp(got, want) != 0) fail_msg("'%s': want '%s', got '%s'", name, want, got);
  free(got);
}

/* A changed name: valid as one file name, with '~' and 16 hex digits. */
static void assert_hashed(const char *name) {
  char *got = tpuci__path_component(name);
  size_t n = strlen(got), k;
  const char *tilde = strrchr(got, '~');
  if (n == 0 || n > 81 || strchr(got, '/') || got[0] == '.' || tilde == NULL ||
      strlen(tilde) != 17)
    fail_msg("'%.40s...': bad folder name '%s'", name, got);
  for (k = 1; k < 17; k++)
    if (strchr("0123456789abcdef", tilde[k]) == NULL) fail_msg("'%s': not hex", got);
  free(got);
}

static void test_kept(void **state) {
  (void) state;
  assert_component("lint_ruff", "lint_ruff");
  assert_component("build-1.2", "build-1.2");
  assert_component("a=b,c+d", "a=b,c+d");
}

static void test_changed(void **state) {
  char name[301];
  (void) state;
  assert_component("lint/ruff", "lint_ruff~69d2ded2a182d860");
  assert_component("unit[python=3.11]", "unit_python=3.11_~38cb551fbcbe7f19");
  assert_hashed("");
  assert_hashed(".");
  assert_hashed("..");
  assert_hashed(".hidden");
  assert_hashed("summary.json");
  assert_hashed("attempts.jsonl");
  assert_hashed("a b");
  assert_hashed("m[v=../../../escape]");
  assert_hashed("caf\xc3\xa9");
  memset(name, 'x', 300);
  name[300] = '\0';
  assert_hashed(name);
  name[101] = '\0';
  assert_hashed(name);
  name[100] = '\0';
  assert_component(name, name); /* 100 bytes: kept */
}

/* Names that used to share a folder do not any more. */
static void test_distinct(void **state) {
  static const char *const names[] = {"lint/ruff", "lint_ruff", "lint:ruff", "lint ruff",
                                      "lint_ruff~69d2ded2a182d860", ".", "..", "_", "",
                                      "summary.json", NULL};
  char *got[16];
  size_t i, j;
  (void) state;
  for (i = 0; names[i]; i++) got[i] = tpuci__path_component(names[i]);
  for (i = 0; names[i]; i++)
    for (j = i + 1; names[j]; j++)
      if (strcmp(got[i], got[j]) == 0)
        fail_msg("'%s' and '%s' share folder '%s'", names[i], names[j], got[i]);
  for (i = 0; names[i]; i++) free(got[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kept),
      cmocka_unit_test(test_changed),
      cmocka_unit_test(test_distinct),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
