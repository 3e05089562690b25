/* core/base/wildmatch.c: the globs of `inputs`, select_always, CODEOWNERS,
 * quarantine and --only. Path globs by table; plain globs against
 * fnmatch(3) over every pattern of a small alphabet; and patterns that
 * make a backtracking matcher run for ever (ctest's timeout would end
 * this test if the matcher backtracked: no clock is read here). */
#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/wildmatch.h"

#define PATHS (TPUCI__WM_PATH | TPUCI__WM_FOLDER)

static void expect(const char *pattern, const char *text, int flags, int want) {
  int got = tpuci__wildmatch(pattern, text, flags);
  if (got != want) fail_msg("'%s' ~ '%s' (flags %d): %d, want %d", pattern, text, flags, got, want);
}

static void test_paths(void **state) {
  (void) state;
  expect("src/**", "src/a.py", PATHS, 1);
  expect("src/**", "src/x/y/a.py", PATHS, 1);
  expect("src/**", "srcx/a.py", PATHS, 0);
  expect("src/**", "src", PATHS, 0);
  expect("src", "src/x/a.py", PATHS, 1);
  expect("src", "src", PATHS, 1);
  expect("sr", "src/x", PATHS, 0);
  expect("src", "src/x/a.py", TPUCI__WM_PATH, 0); /* no folder rule */
  expect("**/test_*.py", "test_a.py", PATHS, 1);
  expect("**/test_*.py", "tests/unit/test_a.py", PATHS, 1);
  expect("**/test_*.py", "tests/unit/a_test.py", PATHS, 0);
  expect("a/**/b", "a/b", PATHS, 1);
  expect("a/**/b", "a/x/y/b", PATHS, 1);
  expect("a/**/b", "a/xb", PATHS, 0);
  expect("a/**/b", "ax/b", PATHS, 0);
  expect("tests/*.py", "tests/a.py", PATHS, 1);
  expect("tests/*.py", "tests/sub/a.py", PATHS, 0);
  expect("tests/**/*.py", "tests/a.py", PATHS, 1);
  expect("tests/**/*.py", "tests/x/y/a.py", PATHS, 1);
  expect("tests/*", "tests/sub/a.py", PATHS, 1); /* the folder tests/sub */
  expect("?.md", "a.md", PATHS, 1);
  expect("?.md", "ab.md", PATHS, 0);
  expect("a?b", "a/b", PATHS, 0);
  expect("a[/]b", "a/b", PATHS, 0);
  expect("[a-c]x", "bx", PATHS, 1);
  expect("[!a-c]x", "bx", PATHS, 0);
  expect("[^a-c]x", "dx", PATHS, 1);
  expect("[]]", "]", PATHS, 1);
  expect("[a", "[a", PATHS, 1); /* unclosed: an ordinary '[' */
  expect("\\*", "*", PATHS, 1);
  expect("\\*", "a", PATHS, 0);
  expect("**", "anything/at/all", PATHS, 1);
  expect("**", "", PATHS, 1);
  expect("*.md", "docs/a.md", PATHS, 0);
  expect("a**b", "axxb", PATHS, 1); /* not a whole segment: a star */
  expect("a**b", "ax/b", PATHS, 0);
  expect("../data/**", "../data/x.csv", PATHS, 1);
  expect("*", "", PATHS, 1);
  expect("", "", PATHS, 1);
  expect("", "a", PATHS, 0);
}

/* Every pattern of up to 4 symbols over {a, b, *, ?, [ab], [!a]} on
 * every text of up to 6 letters over {a, b, /}: the same answers as
 * fnmatch without flags. */
static void test_plain_is_fnmatch(void **state) {
  static const char *const sym[] = {"a", "b", "*", "?", "[ab]", "[!a]", "/"};
  static const char letters[] = "ab/";
  char pat[64], text[8];
  unsigned long p, t, np = 1, nt = 1;
  int len, k;
  (void) state;
  for (len = 0; len <= 4; len++, np *= 7) {
    for (p = 0; p < np; p++) {
      unsigned long x = p;
      pat[0] = '\0';
      for (k = 0; k < len; k++, x /= 7) strcat(pat, sym[x % 7]);
      for (nt = 1, k = 0; k <= 6; k++, nt *= 3) {
        for (t = 0; t < nt; t++) {
          unsigned long y = t;
          int j;
          for (j = 0; j < k; j++, y /= 3) text[j] = letters[y % 3];
          text[k] = '\0';
          if (tpuci__wildmatch(pat, text, 0) != (fnmatch(pat, text, 0) == 0))
            fail_msg("'%s' ~ '%s': %d, fnmatch says %d", pat, text,
                     tpuci__wildmatch(pat, text, 0), fnmatch(pat, text, 0) == 0);
        }
      }
    }
  }
}

/* Stars that a backtracking matcher tries in every split: 40 of them
 * against 4 KiB with no match at the end, in both modes. */
static void test_many_stars(void **state) {
  char pattern[256], text[4097], line[512];
  int k;
  (void) state;
  pattern[0] = '\0';
  for (k = 0; k < 40; k++) strcat(pattern, "*a");
  strcat(pattern, "b");
  memset(text, 'a', 4096);
  text[4096] = '\0';
  expect(pattern, text, 0, 0);
  expect(pattern, text, PATHS, 0);
  text[4095] = 'b';
  expect(pattern, text, 0, 1);
  /* A CODEOWNERS line of 40 stars, and `**` runs. */
  line[0] = '\0';
  for (k = 0; k < 40; k++) strcat(line, "*");
  strcat(line, "/x");
  expect(line, "src/x", PATHS, 1);
  line[0] = '\0';
  for (k = 0; k < 20; k++) strcat(line, "**/a");
  memset(text, 'a', 4096);
  for (k = 1; k < 4096; k += 2) text[k] = '/';
  text[4095] = 'a';
  expect(line, text, PATHS, 1);
  strcat(line, "b");
  expect(line, text, PATHS, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_paths),
                                     cmocka_unit_test(test_plain_is_fnmatch),
                                     cmocka_unit_test(test_many_stars)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
