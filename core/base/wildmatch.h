/* Glob patterns matched in time linear in the text's length (times the
 * pattern's): `*`, `?`, `[a-z]` / `[!a-z]` / `[^a-z]` classes, `\` quoting
 * the next character; with TPUCI__WM_PATH, `*`, `?` and classes never
 * match '/', and `**` as a whole segment matches any number of folders
 * ("src/" then `**`; `**` then "/test_*.py"). fnmatch(3) and a recursive
 * matcher backtrack on every `*`: a CODEOWNERS line of a dozen stars took
 * minutes; here 40 stars cost 40 steps a byte. */
#ifndef TPUCI_BASE_WILDMATCH_H
#define TPUCI_BASE_WILDMATCH_H

#include "base/util.h"

/* '/' is a separator (see above). */
#define TPUCI__WM_PATH 1
/* A pattern that matches a folder of the path (a prefix ending before a
 * '/') matches the path: "src" matches "src/a.py". */
#define TPUCI__WM_FOLDER 2

/* Whether `text` matches `pattern` (flags: TPUCI__WM_*; 0 is fnmatch(3)
 * without flags). An unclosed '[' is an ordinary byte. */
int tpuci__wildmatch(const char *pattern, const char *text, int flags);

#endif /* TPUCI_BASE_WILDMATCH_H */
