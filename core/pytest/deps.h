/* What each test of a pytest job needs (docs/pytest.md, "Only what a
 * change can affect"): the record the job's runs leave, per instance
 * (its name without the shard) in the state folder's deps/ folder, which
 * tests a change leaves unaffected, and the record made new from a run.
 *
 * A run that records (select = "affected") has the plugin write, per
 * test, the project's files it needed (its module and what that imports,
 * what ran and what it opened: tpuci_plugin.py, TpuciDeps) into each
 * attempt's deps.jsonl, relative to pytest's rootdir, and what the whole
 * session needs (conftest.py files, the ini file). tpuci keeps each
 * file's git blob id as it was. The next run leaves out a test when it
 * passed (or was skipped) last time, none of its files changed, nothing
 * the session needs changed, and the record was made with the same
 * non-file inputs (image id, environment, command, topology: the results
 * cache's key without the folders' content, runtime/inputs.h). */
#ifndef TPUCI_PYTEST_DEPS_H
#define TPUCI_PYTEST_DEPS_H

#include <stddef.h>

#include "base/idmap.h"
#include "base/util.h"
#include "pytest/junit.h"

/* An attempt's record, in its results folder. */
#define TPUCI__DEPS_FILE "deps.jsonl"
/* The records, in the state folder. */
#define TPUCI__DEPS_DIR "deps"
/* Bounds: a bigger record is not kept (every test runs then). */
#define TPUCI__DEPS_MAX_FILES 50000
#define TPUCI__DEPS_MAX_TESTS 200000
#define TPUCI__DEPS_MAX_BYTES ((size_t) 64 << 20)

typedef struct {
  char *id;
  size_t *files; /* indices into the record's files */
  size_t nfiles;
  int passed; /* its last result was a pass (or a skip) */
  char *run;  /* the run it last passed in, or NULL */
} tpuci__deps_test_t;

typedef struct {
  char *key;           /* the instance's non-file inputs (hex) */
  char *rootdir;       /* pytest's rootdir where it ran */
  char *run;           /* the run that made it */
  tpuci__strv_t files; /* relative to rootdir */
  tpuci__strv_t blobs; /* each file's git blob id then; "" when gone */
  tpuci__idmap_t fmap; /* file -> index */
  size_t *session;     /* files the whole session needs */
  size_t nsession;
  tpuci__deps_test_t *tests;
  size_t ntests, cap;
  tpuci__idmap_t tmap; /* test id -> index */
} tpuci__deps_rec_t;

void tpuci__deps_rec_init(tpuci__deps_rec_t *rec);
void tpuci__deps_rec_free(tpuci__deps_rec_t *rec);

/* Reads instance `name`'s record from `state_dir`: 0, 1 when there is
 * none, or a negative code with err (an unreadable or malformed one). */
int tpuci__deps_load(const char *state_dir, const char *name, tpuci__deps_rec_t *rec,
                     tpuci__err_t *err);
/* Writes it (atomically: a temporary file of this process's renamed into
 * place). 0, or a negative code with err. */
int tpuci__deps_save(const char *state_dir, const char *name, const tpuci__deps_rec_t *rec,
                     tpuci__err_t *err);

/* Where a rootdir-relative file is on this machine (a new string), or
 * NULL: the caller's mapping (a container's mounts). */
typedef char *(*tpuci__deps_path_fn)(void *ud, const char *rootdir, const char *rel);

/* The git blob id of the file `path` now into hex, "" when it cannot be
 * read (gone). */
void tpuci__deps_blob(const char *path, char hex[41]);

/* What a run of an instance leaves out. */
typedef struct {
  int all; /* every test runs: why says why */
  char *why;
  char *arg;                 /* the plugin's DEPS argument ("record", then
                              "skip UNIT" lines), a new string */
  tpuci__idmap_t unaffected; /* test id -> the record's index */
  size_t recorded, affected, failed_last, always, nunaffected;
  tpuci__strv_t changed; /* the record's files that changed */
} tpuci__deps_sel_t;

void tpuci__deps_sel_free(tpuci__deps_sel_t *sel);

/* Chooses from `rec` (NULL: none) the tests a run leaves out: every test
 * when there is no record, it was made with another `key`, or a file the
 * session needs changed; else each test that passed last time, none of
 * whose files changed and whose file matches no glob of `always`. The
 * argument's skip lines name a file when all its recorded tests are left
 * out, else each test; over `max_bytes`, every test runs. */
void tpuci__deps_select(const tpuci__deps_rec_t *rec, const char *key,
                        const tpuci__strv_t *always, tpuci__deps_path_fn path, void *ud,
                        size_t max_bytes, tpuci__deps_sel_t *out);

/* "42 of 1,145 recorded tests run: 12 affected by mylib/ops.py (and 2
 * more files), 28 failed last time, 2 always" (a new string). */
char *tpuci__deps_sel_text(const tpuci__deps_sel_t *sel);

/* What the attempts of a run recorded, put together. */
typedef struct {
  tpuci__strv_t ids;    /* tests, as first seen */
  tpuci__strv_t *files; /* per test, its files */
  tpuci__idmap_t map;
  tpuci__strv_t session;
  char *rootdir;
  char *off; /* recording was off in an attempt: why */
} tpuci__deps_fresh_t;

void tpuci__deps_fresh_init(tpuci__deps_fresh_t *f);
void tpuci__deps_fresh_free(tpuci__deps_fresh_t *f);
/* Adds what an attempt's results folder recorded (its deps.jsonl, and its
 * rootdir). A test recorded again takes the later attempt's files. */
void tpuci__deps_fresh_add(tpuci__deps_fresh_t *f, const char *results_dir, const char *rootdir);

/* The record after a run: the tests that ran (in `fresh`) with their
 * files and their final result in one of the `nh` histories `hs` (its
 * instances': a sharded one's shards); the tests left out (`sel`) kept
 * from `old` as they were; each file's blob id now. 0, or 1 when there is
 * nothing to keep (recording was off, nothing recorded). */
int tpuci__deps_update(tpuci__deps_rec_t *out, const tpuci__deps_rec_t *old,
                       const tpuci__deps_sel_t *sel, const tpuci__deps_fresh_t *fresh,
                       const tpuci__history_t *const *hs, size_t nh, const char *key,
                       const char *run, tpuci__deps_path_fn path, void *ud);

#endif /* TPUCI_PYTEST_DEPS_H */
