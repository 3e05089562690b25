/* The top-level functions of a Python source file, for choosing tests by
 * function (docs/pytest.md, "Only what a change can affect"): a change
 * inside one function's body reruns only the tests that ran that
 * function, a change anywhere else reruns every test that needs the
 * module's top level.
 *
 * A block is a `def` or `async def` whose enclosing scopes are only the
 * module and classes; statements such as `if`, `try`, `with` and `match`
 * at module or class level do not count as scopes (a def inside a
 * module-level `if` is a block, named as if the `if` were not there).
 * Functions nested in a function are part of its body, and classes are
 * never blocks: they only name their methods. A def whose body is on its
 * header's logical line (`def f(): return 1`, or after a backslash) is
 * not a block either.
 *
 * The scanner reads the text as Python's tokenizer does, as far as lines
 * go: strings of every kind (prefixes, triple quotes, escapes, f-strings
 * with nested fields as Python 3.12 reads them), comments, brackets,
 * backslash continuations, indentation with tabs to the next multiple of
 * 8 and a form feed resetting it, CRLF line ends, a UTF-8 byte order mark.
 * It takes time linear in the text. What it cannot read with certainty
 * (an unterminated string or bracket, an unexpected or inconsistent
 * indentation, a NUL byte, a lone CR, over TPUCI__PYBLOCKS_MAX_LINES
 * line ends, indentation or nesting deeper than Python allows, a qualified
 * name over TPUCI__PYBLOCKS_MAX_NAME bytes) leaves the file as one whole.
 * Part of core/kind/pytest/ (pytest_run.h says what the folder may use). */
#ifndef TPUCI_PYTEST_PYBLOCKS_H
#define TPUCI_PYTEST_PYBLOCKS_H

#include <stddef.h>

#define TPUCI__PYBLOCKS_MAX_LINES 1000000
#define TPUCI__PYBLOCKS_MAX_NAME 1024

typedef struct {
  /* The qualified name, as Python's __qualname__ without "<locals>":
   * "func", "Class.method", "Outer.Inner.method". A name that comes
   * again in the same file gets "#2", "#3", ... appended, in source
   * order (a property's getter, then its setter "C.x#2"). Owned. */
  char *name;
  /* 1-based lines: first is the line of its first decorator, else of
   * `def` (or `async def`), as Python's co_firstlineno; last is the last
   * line of its body that is not blank or only a comment, as the ast's
   * end_lineno. */
  int first, last;
  /* The 1-based first line of the body: the line after the one holding
   * the header's final ':'. */
  int body;
  /* The SHA-256, in hex, of the bytes of the body's lines, [body, last],
   * each with its line end. */
  char hash[65];
} tpuci__pyblock_t;

typedef struct {
  tpuci__pyblock_t *blocks; /* in source order; owned */
  size_t n;
  /* The SHA-256, in hex, of every byte outside the blocks' bodies
   * (decorators, headers, class bodies, module code, comments between
   * functions), in order: the text with each body cut out. */
  char top[65];
} tpuci__pyblocks_t;

/* Finds the blocks of the Python text [text, text + len) and fills out,
 * which the caller frees with tpuci__pyblocks_free() either way. Returns
 * 0, or -1 when the text cannot be scanned with certainty: then out has
 * no blocks and out->top is the SHA-256 of the whole text (the file
 * counts as one). */
int tpuci__pyblocks_scan(const char *text, size_t len, tpuci__pyblocks_t *out);
void tpuci__pyblocks_free(tpuci__pyblocks_t *b);

/* The block whose [first, last] holds the 1-based `line`, or NULL (the
 * line is at top level). */
const tpuci__pyblock_t *tpuci__pyblocks_at(const tpuci__pyblocks_t *b, int line);

/* The block named `name` ("Class.method#2"), or NULL. */
const tpuci__pyblock_t *tpuci__pyblocks_find(const tpuci__pyblocks_t *b, const char *name);

#endif /* TPUCI_PYTEST_PYBLOCKS_H */
