/* libFuzzer harness for the one glob matcher (core/base/wildmatch.c),
 * whose patterns come from specs, CODEOWNERS and quarantine files.
 *
 * Input: a flags byte (its low two bits: TPUCI__WM_PATH, _FOLDER), the
 * pattern, a 0xFF byte, the text (to the end; without the 0xFF, the text
 * is the pattern). Oracles beyond "no crash, no sanitizer report, no
 * input over run.sh's -timeout" (a matcher that backtracks takes hours
 * on a few dozen stars):
 * - the text with every byte quoted ("\a\b...") matches the text, in
 *   every mode; with a '*' before it, any text that ends with it does,
 *   in plain mode;
 * - plain mode is fnmatch(3) without flags on patterns of '*', '?',
 *   quoted and ordinary bytes (no class, no trailing '\', at most 6
 *   stars: fnmatch's own backtracking stays short there). */
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/wildmatch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                              \
  do {                                                                        \
    if (!(c)) {                                                               \
      fprintf(stderr, "fuzz_wildmatch: %s:%d: check failed: %s\n", __FILE__, \
              __LINE__, #c);                                                  \
      abort();                                                                \
    }                                                                         \
  } while (0)

/* Whether fnmatch is a fair oracle for `p`. */
static int tpuci__plain_comparable(const char *p) {
  size_t n = strlen(p), stars = 0, i;
  if (n > 64 || strchr(p, '[') != NULL) return 0;
  for (i = 0; i < n; i++) {
    if (p[i] == '*') stars++;
    if (p[i] == '\\') {
      if (i + 1 == n) return 0;
      i++;
    }
  }
  return stars <= 6;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *sep;
  char *pattern, *text, *quoted;
  int flags;
  size_t n, i;
  if (size < 1) return 0;
  flags = data[0] & 3;
  data++;
  size--;
  sep = memchr(data, 0xFF, size);
  n = sep ? (size_t) (sep - data) : size;
  pattern = tpuci__strndup((const char *) data, strnlen((const char *) data, n));
  text = sep ? tpuci__strndup((const char *) sep + 1,
                              strnlen((const char *) sep + 1, size - n - 1))
             : tpuci__strdup(pattern);
  (void) tpuci__wildmatch(pattern, text, flags);

  n = strlen(text);
  quoted = tpuci__malloc(2 * n + 2);
  for (i = 0; i < n; i++) {
    quoted[2 * i + 1] = '\\';
    quoted[2 * i + 2] = text[i];
  }
  quoted[0] = '*';
  quoted[2 * n + 1] = '\0';
  CHECK(tpuci__wildmatch(quoted + 1, text, flags) == 1);
  CHECK(tpuci__wildmatch(quoted, text, 0) == 1);
  if (tpuci__plain_comparable(pattern))
    CHECK(tpuci__wildmatch(pattern, text, 0) == (fnmatch(pattern, text, 0) == 0));
  free(quoted);
  free(text);
  free(pattern);
  return 0;
}
