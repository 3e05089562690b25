/* libFuzzer harness for the scanner of Python's top-level functions
 * (core/kind/pytest/pyblocks.h), which reads any Python file of a project.
 *
 * Oracles beyond "no crash, no leak, no sanitizer report":
 * - a refusal (-1) leaves no blocks and the hash of the whole text;
 * - blocks are in order and apart: 1 <= first < body <= last <= the
 *   number of lines, each last before the next one's first; names are
 *   made of name characters, '.' and '#', and unique;
 * - each block's hash is the SHA-256 of its body's lines and top that of
 *   the text without them, both computed here from the lines anew;
 * - tpuci__pyblocks_at() answers for every line as a walk through the
 *   blocks does, tpuci__pyblocks_find() finds each block by its name;
 * - a blank line put in front shifts every block by one line and changes
 *   no name, body hash or answer.
 * Time linear in the input is libFuzzer's -timeout to check (run.sh).
 * See run.sh (clang, -fsanitize=fuzzer) and replay.c (any compiler, the
 * corpus only). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "kind/pytest/pyblocks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "fuzz_pyblocks: %s:%d: check failed: %s\n", __FILE__, \
              __LINE__, #c);                                                \
      abort();                                                              \
    }                                                                       \
  } while (0)

/* The offsets where the text's lines start, and where it ends: *n + 1
 * entries, *n the number of lines. */
static size_t *index_lines(const char *text, size_t len, int *n) {
  size_t i, *starts = tpuci__malloc((len + 2) * sizeof *starts);
  *n = 1;
  starts[0] = 0;
  for (i = 0; i < len; i++)
    if (text[i] == '\n') starts[(*n)++] = i + 1;
  starts[*n] = len;
  return starts;
}

static int name_ok(const char *name) {
  const unsigned char *p = (const unsigned char *) name;
  if (*p == '\0') return 0;
  for (; *p; p++)
    if (!(*p == '_' || *p == '.' || *p == '#' || *p >= 0x80 || (*p >= '0' && *p <= '9') ||
          ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z')))
      return 0;
  return 1;
}

/* Checks a result of the scanner on text against the oracles above. */
static void check(const char *text, size_t len, int r, const tpuci__pyblocks_t *b) {
  tpuci__buf_t top;
  char hash[65];
  size_t i, at = 0, *starts;
  int lines, line;
  CHECK(r == 0 || r == -1);
  if (r != 0) {
    CHECK(b->n == 0 && b->blocks == NULL);
    tpuci__sha256_hex(len ? text : "", len, hash);
    CHECK(strcmp(b->top, hash) == 0);
    return;
  }
  starts = index_lines(text, len, &lines);
  tpuci__buf_init(&top);
  for (i = 0; i < b->n; i++) {
    const tpuci__pyblock_t *k = &b->blocks[i];
    size_t from, to;
    CHECK(1 <= k->first && k->first < k->body && k->body <= k->last && k->last <= lines);
    CHECK(i == 0 || b->blocks[i - 1].last < k->first);
    CHECK(name_ok(k->name));
    CHECK(tpuci__pyblocks_find(b, k->name) == k);
    from = starts[k->body - 1];
    to = starts[k->last];
    tpuci__sha256_hex(text + from, to - from, hash);
    CHECK(strcmp(k->hash, hash) == 0);
    tpuci__buf_add(&top, text + at, from - at);
    at = to;
  }
  tpuci__buf_add(&top, text + at, len - at);
  tpuci__sha256_hex(top.data, top.len, hash);
  CHECK(strcmp(b->top, hash) == 0);
  tpuci__buf_free(&top);
  free(starts);
  for (line = -1, i = 0; line <= lines + 1; line++) {
    const tpuci__pyblock_t *want = NULL;
    while (i < b->n && b->blocks[i].last < line) i++;
    if (i < b->n && b->blocks[i].first <= line) want = &b->blocks[i];
    CHECK(tpuci__pyblocks_at(b, line) == want);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* Exact copies: a read past the end is ASan's to see. */
  tpuci__pyblocks_t b, shifted;
  char *text, *more;
  size_t i;
  int r;
  if (size > (1u << 20)) return 0;
  text = malloc(size ? size : 1);
  memcpy(text, data, size);
  r = tpuci__pyblocks_scan(text, size, &b);
  check(text, size, r, &b);
  /* A blank line in front, unless it moves a byte order mark or could
   * pass the cap of line ends. */
  if ((size < 3 || memcmp(text, "\xef\xbb\xbf", 3) != 0) && size < TPUCI__PYBLOCKS_MAX_LINES) {
    more = malloc(size + 1);
    more[0] = '\n';
    memcpy(more + 1, text, size);
    CHECK(tpuci__pyblocks_scan(more, size + 1, &shifted) == r);
    check(more, size + 1, r, &shifted);
    CHECK(shifted.n == b.n);
    for (i = 0; i < b.n; i++) {
      CHECK(shifted.blocks[i].first == b.blocks[i].first + 1);
      CHECK(shifted.blocks[i].body == b.blocks[i].body + 1);
      CHECK(shifted.blocks[i].last == b.blocks[i].last + 1);
      CHECK(strcmp(shifted.blocks[i].name, b.blocks[i].name) == 0);
      CHECK(strcmp(shifted.blocks[i].hash, b.blocks[i].hash) == 0);
    }
    tpuci__pyblocks_free(&shifted);
    free(more);
  }
  tpuci__pyblocks_free(&b);
  free(text);
  return 0;
}
