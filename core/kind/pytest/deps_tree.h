/* The project tree as a selection sees it (docs/pytest.md, "Only what a
 * change can affect"): every file under pytest's rootdir with its
 * content's SHA-256, taken when a run starts and again when it ends, so
 * that a change, a new file and a deleted file are all seen, and a file
 * edited while the suite ran is known to be unknown.
 *
 * Left out: the folders tools write beside the sources (.git, .hg, .svn,
 * .tpuci, __pycache__, .pytest_cache, .mypy_cache, .ruff_cache,
 * .hypothesis, .tox, .nox, .venv, node_modules, and any folder holding a
 * pyvenv.cfg, a virtual environment, or a state.lock, a state folder of
 * tpuci's under another name), *.pyc and *.pyo files, the absolute
 * paths in `exclude` (the state folder), and the files matching a glob
 * of `ignore` (select_ignore, relative to the root).
 *
 * A file's content is read only when its size, times or inode differ from
 * the previous snapshot's (`prev`), streamed through SHA-256, never held
 * whole. A file over TPUCI__DTREE_HASH_MAX is not read: its id is its
 * size and times ("big:..."), and a test that needs it always runs. A
 * symbolic link to a folder is not followed: its id is its target's
 * text. */
#ifndef TPUCI_PYTEST_DEPS_TREE_H
#define TPUCI_PYTEST_DEPS_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "base/idmap.h"
#include "base/util.h"

#define TPUCI__DTREE_HASH_MAX ((int64_t) 256 << 20)
#define TPUCI__DTREE_MAX_FILES 200000
/* A file's id when it could not be read, or changed while a run read it. */
#define TPUCI__DTREE_UNKNOWN "?"

typedef struct {
  char *path;  /* relative to the root, '/'-separated */
  char id[96]; /* "sha256 hex", "big:SIZE:MTIME", "link:HEX", or "?" */
  int64_t size, mtime_ns, ctime_ns;
  uint64_t ino;
} tpuci__dtree_file_t;

typedef struct {
  tpuci__dtree_file_t *files; /* in byte order of paths */
  size_t n, cap;
  tpuci__idmap_t map; /* path -> index */
  size_t hashed;      /* files read for this snapshot */
} tpuci__dtree_t;

void tpuci__dtree_init(tpuci__dtree_t *t);
void tpuci__dtree_free(tpuci__dtree_t *t);

/* Adds a copy of entry `f` (its path copied too); its index. */
size_t tpuci__dtree_add(tpuci__dtree_t *t, const tpuci__dtree_file_t *f);
/* Sorts the entries by path and makes the map anew. */
void tpuci__dtree_sort(tpuci__dtree_t *t);
/* The entry of `path`, or NULL. */
const tpuci__dtree_file_t *tpuci__dtree_get(const tpuci__dtree_t *t, const char *path);

typedef struct {
  const tpuci__strv_t *ignore; /* globs relative to the root, or NULL */
  const char *const *exclude;  /* absolute paths */
  size_t nexclude;
  const tpuci__dtree_t *prev; /* ids to keep for unchanged files, or NULL */
} tpuci__dtree_opts_t;

/* Snapshots the folder `root` (absolute) into *out (initialised here). 0,
 * or a negative code with err: the root is not a folder, or holds more
 * than TPUCI__DTREE_MAX_FILES files. */
int tpuci__dtree_walk(const char *root, const tpuci__dtree_opts_t *o, tpuci__dtree_t *out,
                      tpuci__err_t *err);

/* Whether a path relative to the root is left out of every snapshot. */
int tpuci__dtree_ignored(const char *rel, const tpuci__strv_t *ignore);

/* The id of the file `path` now (as a snapshot would take it) into id:
 * 0, or UV_ENOENT when there is no such file. */
int tpuci__dtree_file_id(const char *path, char id[96]);

/* Whether `path` (relative) is a file pytest collects tests from: it
 * matches one of pytest's python_files globs (NULL or none: test_*.py and
 * *_test.py). */
int tpuci__dtree_test_file(const char *path, const tpuci__strv_t *python_files);

/* The listing of the folder `rel` below `root`: "FULL TESTLESS", each the
 * SHA-256 hex of its entries' names in byte order, the entries every
 * snapshot leaves out (tpuci__dtree_ignored()) left out; TESTLESS without
 * pytest's test files either (what collection's own listing depends on,
 * when a new test file runs its own tests). "- -" when it is no folder. */
void tpuci__dtree_listing(const char *root, const char *rel, const tpuci__strv_t *ignore,
                          const tpuci__strv_t *python_files, char out[130]);

/* What is at `path` now: 'f' a file, 'd' a folder, 'l' a link that leads
 * nowhere, 'o' anything else, '-' nothing. */
char tpuci__dtree_probe(const char *path);

#endif /* TPUCI_PYTEST_DEPS_TREE_H */
