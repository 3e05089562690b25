/* pytest's own configuration, as `tpuci init` reads it (docs/cli.md,
 * "tpuci init"): in a project's folder, the file pytest would use
 * (pytest.ini, .pytest.ini, pyproject.toml with [tool.pytest.ini_options]
 * or pytest 9's [tool.pytest], tox.ini with [pytest], setup.cfg with
 * [tool:pytest]; the first that has its section) and, of it, only what a
 * starting spec needs: testpaths, the registered markers and
 * python_files.
 *
 * The readers are small and strict, for text anyone can write: an INI
 * reader with iniconfig's rules on libinih (pyconf_ini.c: sections,
 * `key = value` or `key: value`, indented continuation lines, `#` and `;`
 * comment lines, no inline comments)
 * and a TOML reader that reads a whole file (pyconf_toml.c: tables,
 * arrays of tables, dotted and quoted keys, every kind of string, arrays
 * and inline tables over several lines; other values are skipped as
 * tokens) and keeps the three keys of pytest's table. Files are at most
 * TPUCI__PYCONF_MAX_BYTES, nesting at most TPUCI__PYCONF_MAX_DEPTH deep,
 * each list at most TPUCI__PYCONF_MAX_ITEMS long; anything else they
 * cannot read is an error naming the file and line, never a crash. Part
 * of core/kind/pytest/ (pytest_run.h says what the folder may use). */
#ifndef TPUCI_PYTEST_PYCONF_H
#define TPUCI_PYTEST_PYCONF_H

#include <stddef.h>

#include "base/util.h"

#define TPUCI__PYCONF_MAX_BYTES (1u << 20)
#define TPUCI__PYCONF_MAX_DEPTH 32
#define TPUCI__PYCONF_MAX_ITEMS 256
/* A kept value (a marker's line, a test path) longer is an error. */
#define TPUCI__PYCONF_MAX_VALUE 4096

typedef struct {
  /* The file read ("pytest.ini", ...) and its section as pytest names it
   * ("[pytest]", "[tool.pytest.ini_options]"); NULL when the folder has
   * no pytest configuration. */
  char *file;
  char *section;
  /* Whether the file had pytest's section (tpuci__pyconf_ini() and
   * tpuci__pyconf_toml() set it; a pytest.ini without one is still
   * pytest's file). */
  int found;
  /* testpaths and python_files as pytest splits them (shell words, or a
   * TOML array); markers one per line or entry, as written
   * ("tpu: needs a TPU"), blank ones left out. */
  tpuci__strv_t testpaths;
  tpuci__strv_t markers;
  tpuci__strv_t python_files;
  unsigned given; /* the readers': which of the three were set */
} tpuci__pyconf_t;

void tpuci__pyconf_init(tpuci__pyconf_t *conf);
void tpuci__pyconf_free(tpuci__pyconf_t *conf);

/* Reads the section `section` ("pytest", "tool:pytest") of the INI text
 * [text, text + len), named `name` in messages, into conf (found says
 * whether the section was there). Returns 0, or TPUCI_ESPEC with
 * "NAME:LINE: what" in err. */
int tpuci__pyconf_ini(const char *text, size_t len, const char *name, const char *section,
                      tpuci__pyconf_t *conf, tpuci__err_t *err);

/* Reads pyproject.toml's [tool.pytest.ini_options] (or [tool.pytest]) from
 * the TOML text [text, text + len) into conf, the same way. */
int tpuci__pyconf_toml(const char *text, size_t len, const char *name, tpuci__pyconf_t *conf,
                       tpuci__err_t *err);

/* For the readers: sets `key` of conf (markers, testpaths or
 * python_files; any other key is no error and sets nothing) from the
 * text of an INI value or a TOML string, split as pytest splits it (lines
 * for markers, shell words for the others), or from a TOML array of
 * strings (items). Returns 0, or TPUCI_ESPEC with "NAME:LINE: what" in
 * err: a key given twice, too many items, an item too long, a quote that
 * does not close. */
int tpuci__pyconf_set_text(tpuci__pyconf_t *conf, const char *key, const char *text,
                           const char *name, int line, tpuci__err_t *err);
int tpuci__pyconf_set_list(tpuci__pyconf_t *conf, const char *key, const tpuci__strv_t *items,
                           const char *name, int line, tpuci__err_t *err);

/* Finds pytest's configuration in `dir` as pytest does and reads it:
 * 0 with conf->file set, 0 with conf->file NULL when there is none, or
 * TPUCI_ESPEC with one line in err (a file that cannot be read, is not
 * a regular file, is over TPUCI__PYCONF_MAX_BYTES or does not parse). */
int tpuci__pyconf_find(const char *dir, tpuci__pyconf_t *conf, tpuci__err_t *err);

/* The name a marker's line registers ("tpu" of "tpu: needs a TPU", of
 * "tpu(n): ..."), a new string, or NULL when it names none pytest's -m
 * could select (not an identifier of [A-Za-z_][A-Za-z0-9_]*, or `and`,
 * `or`, `not`). */
char *tpuci__pyconf_marker_name(const char *line);

/* pytest's "args" type: text split as Python's shlex.split() does
 * (white space, '...' and "..." quotes, backslashes), appended to out.
 * Returns 0, or -1 for a quote that does not close. */
int tpuci__pyconf_split_args(const char *text, tpuci__strv_t *out);

#endif /* TPUCI_PYTEST_PYCONF_H */
