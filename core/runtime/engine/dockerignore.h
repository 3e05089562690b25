/* .dockerignore: which paths of a build context Docker leaves out.
 * Pure (no file is read here), for buildctx.c, the tests and a fuzzer. */
#ifndef TPUCI_ENGINE_DOCKERIGNORE_H
#define TPUCI_ENGINE_DOCKERIGNORE_H

#include <stddef.h>

#include "base/util.h"

/* The parsed patterns of a .dockerignore. Docker's rules: one pattern a
 * line; a line starting with '#' (in its first column) is a comment;
 * white space around a pattern and blank lines are ignored; a pattern is
 * cleaned like Go's path.Clean and loses a leading '/', so "/a/./b/"
 * means "a/b". The syntax is Go's filepath.Match ('*' and '?' never
 * match a '/', "[a-z]" and "[^a-z]" classes, '\' escapes the next
 * character) plus "**", which matches any number of folders, none too.
 * "!pattern" makes an exception. A pattern that matches a folder matches
 * everything below it, and the last pattern that matches a path decides
 * whether it is left out. */
typedef struct tpuci__ignore_pat_s tpuci__ignore_pat_t;

typedef struct {
  tpuci__ignore_pat_t *pats;
  size_t n;
  size_t max_tokens; /* of the longest pattern: the matcher's scratch */
} tpuci__dockerignore_t;

/* Parses a .dockerignore's text (len bytes; a NUL ends its line's
 * pattern). `where`
 * names the file in messages. 0, or TPUCI_ESPEC for a pattern Docker
 * refuses too ("!" alone, an unclosed '[', a trailing '\', a range that
 * runs backwards), err naming the file and line. *di is empty on error
 * and must be freed on success. */
int tpuci__dockerignore_parse(tpuci__dockerignore_t *di, const char *text, size_t len,
                              const char *where, tpuci__err_t *err);
/* Whether `rel`, a clean relative path ('/'-separated, no "." or ".."
 * element, no leading or trailing '/'), is left out of the context. */
int tpuci__dockerignore_excluded(const tpuci__dockerignore_t *di, const char *rel);
/* Whether an exception could bring back something below the folder
 * `rel`, so that a left-out folder must still be walked. It may answer 1
 * when nothing below comes back (a pattern that could match but does
 * not); never 0 when something could. */
int tpuci__dockerignore_reaches_below(const tpuci__dockerignore_t *di, const char *rel);
void tpuci__dockerignore_free(tpuci__dockerignore_t *di);

#endif /* TPUCI_ENGINE_DOCKERIGNORE_H */
