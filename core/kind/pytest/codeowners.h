/* A CODEOWNERS file (GitHub's: https://docs.github.com/en/repositories/
 * managing-your-repositorys-settings-and-features/customizing-your-
 * repository/about-code-owners), read to name the owner of a test file in
 * `tpuci flaky --propose`. Part of core/kind/pytest/.
 *
 * A line is a pattern and its owners ("/src/ @alice @org/team"); `#`
 * starts a comment; the last line whose pattern matches a path wins (a
 * line without owners means nobody). Patterns follow gitignore: one
 * starting with `/` or holding a `/` before its end is anchored at the
 * repository's top, any other matches at any depth; one ending in `/`
 * names a folder (all below it); a `*` never crosses a `/` (docs and
 * a star cover docs/a.md, not docs/x/a.md), `**` crosses folders. */
#ifndef TPUCI_PYTEST_CODEOWNERS_H
#define TPUCI_PYTEST_CODEOWNERS_H

#include <stddef.h>

#include "base/util.h"

/* At most this much of a file is read. */
#define TPUCI__CODEOWNERS_MAX_BYTES ((size_t) 3 << 20)

typedef struct {
  char *glob;   /* as tpuci__glob_match() takes it */
  int shallow;  /* ends in a slash and a star: not below that folder */
  char *owners; /* "@alice @org/team", or "" */
  int line;
} tpuci__owner_rule_t;

typedef struct {
  char *path;   /* the file read */
  char *prefix; /* where paths are relative to, from the repository's
                         top ("" or "sub/dir/") */
  tpuci__owner_rule_t *rules;
  size_t n;
} tpuci__codeowners_t;

/* Parses the file's text into `c` (zeroed). Never fails: a line that is
 * not a rule is left out, as GitHub does. */
void tpuci__codeowners_parse(const char *text, size_t len, tpuci__codeowners_t *c);

/* Finds the file for paths relative to folder `dir`: .github/CODEOWNERS,
 * CODEOWNERS, then docs/CODEOWNERS in `dir` and each folder above it up
 * to the one that holds .git, and reads it into `c` (zeroed; its prefix
 * is `dir` from there). 0, TPUCI_ENOMATCH when there is none, or a
 * negative code with err naming the file. */
int tpuci__codeowners_find(const char *dir, tpuci__codeowners_t *c, tpuci__err_t *err);

/* Reads `path` into `c` (zeroed), paths relative to the repository top. */
int tpuci__codeowners_load(const char *path, tpuci__codeowners_t *c, tpuci__err_t *err);

/* The rule that owns `path` (relative to the folder the file was found
 * for, '/'-separated), or NULL. */
const tpuci__owner_rule_t *tpuci__codeowners_match(const tpuci__codeowners_t *c, const char *path);

void tpuci__codeowners_free(tpuci__codeowners_t *c);

#endif /* TPUCI_PYTEST_CODEOWNERS_H */
