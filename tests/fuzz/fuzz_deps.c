/* libFuzzer harness for the selection's record (core/kind/pytest/deps.h), a
 * file in the state folder that a restored CI cache or another checkout
 * can hand tpuci: tpuci__deps_parse() on any bytes.
 *
 * Oracles beyond "no crash, no sanitizer report":
 * - a record it accepts holds no control character in a test id, a
 *   path, a function's name or a reason (a newline would forge a skip
 *   line for the plugin, or a console line), and no path that leaves the
 *   root ('/' first, a ".." segment);
 * - every index it keeps is in range, and the tree is in byte order;
 * - written back (tpuci__deps_text()) and read again, it is the same
 *   record: the same counts, and the same text once more.
 * See run.sh (clang, -fsanitize=fuzzer) and replay.c (the corpus only). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind/pytest/deps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                        \
  do {                                                                  \
    if (!(c)) {                                                         \
      fprintf(stderr, "fuzz_deps: %s:%d: check failed: %s\n", __FILE__, \
              __LINE__, #c);                                            \
      abort();                                                          \
    }                                                                   \
  } while (0)

static void check_text(const char *s) {
  const unsigned char *p;
  CHECK(s != NULL && *s != '\0');
  for (p = (const unsigned char *) s; *p; p++) CHECK(*p >= 0x20 && *p != 0x7f);
}

static void check_path(const char *s) {
  check_text(s);
  CHECK(s[0] != '/');
  CHECK(strcmp(s, "..") != 0 && strncmp(s, "../", 3) != 0 && strstr(s, "/../") == NULL);
}

static void check_need(const tpuci__deps_rec_t *rec, const tpuci__deps_need_t *n) {
  size_t i;
  for (i = 0; i < n->whole.n; i++) CHECK(n->whole.v[i] < rec->tree.n);
  for (i = 0; i < n->top.n; i++) CHECK(n->top.v[i] < rec->tree.n);
  for (i = 0; i < n->dirs.n; i++) CHECK(n->dirs.v[i] < rec->dirs.len);
  for (i = 0; i < n->probes.n; i++) CHECK(n->probes.v[i] < rec->probes.len);
  for (i = 0; i < n->nblocks; i++) {
    CHECK(n->blocks[i].file < rec->tree.n);
    check_text(n->blocks[i].name);
  }
  if (n->why) check_text(n->why);
}

static void check_rec(const tpuci__deps_rec_t *rec) {
  size_t i;
  check_text(rec->key);
  for (i = 0; i < rec->tree.n; i++) {
    check_path(rec->tree.files[i].path);
    if (i > 0) CHECK(strcmp(rec->tree.files[i - 1].path, rec->tree.files[i].path) < 0);
  }
  for (i = 0; i < rec->dirs.len; i++) check_path(rec->dirs.items[i]);
  for (i = 0; i < rec->probes.len; i++) check_path(rec->probes.items[i]);
  check_need(rec, &rec->session);
  for (i = 0; i < rec->ntests; i++) {
    check_text(rec->tests[i].id);
    check_need(rec, &rec->tests[i].need);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tpuci__deps_rec_t rec, again;
  char *text, *text2;
  if (tpuci__deps_parse((const char *) data, size, &rec) != 0) return 0;
  check_rec(&rec);
  text = tpuci__deps_text(&rec, "fuzz");
  CHECK(text != NULL);
  CHECK(tpuci__deps_parse(text, strlen(text), &again) == 0);
  CHECK(again.tree.n == rec.tree.n && again.ntests == rec.ntests);
  CHECK(again.dirs.len == rec.dirs.len && again.probes.len == rec.probes.len);
  text2 = tpuci__deps_text(&again, "fuzz");
  CHECK(text2 != NULL && strcmp(text, text2) == 0);
  free(text);
  free(text2);
  tpuci__deps_rec_free(&again);
  tpuci__deps_rec_free(&rec);
  return 0;
}
