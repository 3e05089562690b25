/* What each test of a pytest job needs, and the one rule that leaves a
 * test out (docs/pytest.md, "Only what a change can affect").
 *
 * The rule: unknown means run. A test is left out only when
 *  (a) it passed (or was skipped) in the record's run, made under the same
 *      key (the job's non-file inputs: image, interpreter, environment,
 *      command, tpuci's build: runtime/inputs.h);
 *  (b) its record is complete: the plugin saw nothing it cannot follow (a
 *      process started, a thread it could not trace, a read outside the
 *      project, its tracer replaced); and
 *  (c) every file of the project tree (pytest's rootdir, deps_tree.h)
 *      that changed, appeared or vanished since the record is accounted
 *      for, and none is in the test's closure.
 * A change the record cannot account for runs every test: a new or
 * deleted file that is Python code or pytest configuration (it may decide
 * what is imported, collected or configured), a changed file that no
 * record names, anything the session needs (collection, conftest.py, the
 * ini file, a module's top level run at collection). A new test file runs
 * its own tests only (they are new: the plugin leaves out only what it is
 * told to).
 *
 * A test's closure, recorded by the plugin (tpuci_plugin.py, TpuciDeps)
 * and kept here by file and function:
 *   whole   files it read (the "open" audit event), as a whole;
 *   top     Python modules whose top level it needs: its test module's
 *           imports, modules imported while it ran or by code it ran,
 *           their package __init__ chain, and what their import ran;
 *   blocks  functions it ran (a function of a module and its method, by
 *           qualified name: pyblocks.h): an edit in a function's body
 *           reruns only the tests that ran that function;
 *   dirs    folders it listed, by their listing;
 *   probes  paths it tested (os.stat and friends), by what is there.
 * Records are relative to the project root and validated when read. */
#ifndef TPUCI_PYTEST_DEPS_H
#define TPUCI_PYTEST_DEPS_H

#include <stddef.h>

#include "base/idmap.h"
#include "base/util.h"
#include "kind/pytest/deps_tree.h"
#include "kind/pytest/junit.h"
#include "kind/pytest/pyblocks.h"

/* An attempt's record, in its results folder. */
#define TPUCI__DEPS_FILE "deps.jsonl"
/* The records, in the state folder. */
#define TPUCI__DEPS_DIR "deps"
/* Bounds: a bigger record is not kept (every test runs then). */
#define TPUCI__DEPS_MAX_TESTS 200000
#define TPUCI__DEPS_MAX_BYTES ((size_t) 128 << 20)

/* A list of indices. */
typedef struct {
  size_t *v;
  size_t n, cap;
} tpuci__deps_ix_t;

/* A function of a file. */
typedef struct {
  size_t file;
  char *name;
} tpuci__deps_bref_t;

/* What a test (or the whole session) needs. */
typedef struct {
  tpuci__deps_ix_t whole, top, dirs, probes; /* tree files; dirs, probes */
  tpuci__deps_bref_t *blocks;
  size_t nblocks, cap;
  char *why; /* incomplete: why; it always runs */
} tpuci__deps_need_t;

typedef struct {
  char *id;
  tpuci__deps_need_t need;
  int passed; /* its last result was a pass (or a skip) */
  char *run;  /* the run it last passed in, or NULL */
} tpuci__deps_test_t;

/* Flags of a tree file. */
enum { TPUCI__DEPS_IMPORTED = 1, TPUCI__DEPS_WRITTEN = 2 };

typedef struct {
  char *key;             /* the instance's non-file inputs (hex) */
  char *root;            /* pytest's rootdir, relative to the job's working folder
                 when it has one ("." the same), else absolute */
  char *run;             /* the run that made it */
  tpuci__dtree_t tree;   /* the project's files when that run started */
  tpuci__pyblocks_t *py; /* per tree file: its functions (top[0] 0: none kept) */
  unsigned char *flags;  /* per tree file */
  tpuci__strv_t dirs, dir_ids;
  tpuci__strv_t probes;
  char *probe_states; /* per probe: tpuci__dtree_probe() then */
  tpuci__strv_t python_files;
  tpuci__deps_need_t session;
  tpuci__deps_test_t *tests;
  size_t ntests, cap;
  tpuci__idmap_t tmap; /* test id -> index */
} tpuci__deps_rec_t;

void tpuci__deps_rec_init(tpuci__deps_rec_t *rec);
void tpuci__deps_rec_free(tpuci__deps_rec_t *rec);

/* Reads instance `name`'s record from `state_dir`: 0, 1 when there is
 * none, or a negative code with err (an unreadable, malformed or unsafe
 * one: a control character in a name, a path out of the root). */
int tpuci__deps_load(const char *state_dir, const char *name, tpuci__deps_rec_t *rec,
                     tpuci__err_t *err);
/* The same, from text (the fuzzer's way in). */
int tpuci__deps_parse(const char *text, size_t len, tpuci__deps_rec_t *rec);
/* The record as its file holds it (a new string, or NULL: no memory). */
char *tpuci__deps_text(const tpuci__deps_rec_t *rec, const char *name);
/* Writes it (atomically). 0, or a negative code with err. */
int tpuci__deps_save(const char *state_dir, const char *name, const tpuci__deps_rec_t *rec,
                     tpuci__err_t *err);

/* Where the project is, and what never matters. */
typedef struct {
  const char *root;            /* the rootdir on this machine, absolute, or NULL: unknown */
  const tpuci__strv_t *ignore; /* select_ignore */
  const tpuci__strv_t *always; /* select_always */
  const char *const *exclude;  /* absolute paths left out (the state folder) */
  size_t nexclude;
  int late;           /* the start's tree was taken at the end (pytest's
                                   rootdir was not where the run started to look):
                                   every file a test needs is unknown */
  double audit;       /* the fraction of left-out tests run as an audit */
  unsigned long seed; /* the audit's sample */
} tpuci__deps_where_t;

/* What a run of an instance leaves out. */
typedef struct {
  int all; /* every test runs: why says why */
  char *why;
  char *arg;                 /* the plugin's DEPS argument ("record", "skip ID"
                                and "audit ID" lines), a new string */
  tpuci__idmap_t unaffected; /* test id -> the record's index */
  tpuci__idmap_t audited;    /* left out, but run as the audit's sample */
  size_t recorded, affected, failed_last, incomplete, always, nunaffected, naudit;
  tpuci__strv_t changed; /* files that changed, appeared or vanished */
  char *incomplete_why;  /* the first incomplete test's reason */
  tpuci__dtree_t start;  /* the tree now (has_start) */
  int has_start;
} tpuci__deps_sel_t;

void tpuci__deps_sel_free(tpuci__deps_sel_t *sel);

/* Applies the rule to `rec` (NULL: none) for a run with `key`, the
 * project at w->root: every test when there is no record, another key, no
 * root, or a change nothing accounts for; else each test the rule leaves
 * out. Over `max_bytes` of skip lines, every test runs. */
void tpuci__deps_select(const tpuci__deps_rec_t *rec, const char *key, const tpuci__deps_where_t *w,
                        size_t max_bytes, tpuci__deps_sel_t *out);

/* "42 of 1,145 recorded tests run: 12 affected by mylib/ops.py (and 2
 * more files), 28 failed last time, ..." (a new string, safe to print). */
char *tpuci__deps_sel_text(const tpuci__deps_sel_t *sel);

/* What one process recorded (a deps.jsonl line), paths relative to the
 * rootdir. */
typedef struct {
  tpuci__strv_t read, mods, list, probe, wrote;
  tpuci__strv_t code_files;
  int *code_lines; /* per code_files entry */
  char *why;
} tpuci__deps_raw_t;

/* What the attempts of a run recorded, put together. */
typedef struct {
  tpuci__strv_t ids; /* tests, as first seen */
  tpuci__deps_raw_t *tests;
  tpuci__idmap_t map;
  tpuci__deps_raw_t session; /* every process's session lines */
  tpuci__strv_t imported, python_files;
  char *rootdir; /* as pytest saw it */
  char *off;     /* recording was off in an attempt: why */
  int nsessions; /* processes whose session line was read */
} tpuci__deps_fresh_t;

void tpuci__deps_fresh_init(tpuci__deps_fresh_t *f);
void tpuci__deps_fresh_free(tpuci__deps_fresh_t *f);
/* Adds what an attempt's results folder recorded (its deps.jsonl, and its
 * rootdir). A test recorded again takes the later attempt's record. */
void tpuci__deps_fresh_add(tpuci__deps_fresh_t *f, const char *results_dir, const char *rootdir);

/* What a run says of a group's tests, for its record: the record before
 * it (`old`, may be NULL), the selection it ran with (`sel`), what its
 * processes recorded (`fresh`), the `nh` histories `hs` of its tests,
 * the record's `key`, the run's id, and what the record keeps as its
 * root (`root_saved`; NULL: "."). */
typedef struct {
  const tpuci__deps_rec_t *old;
  const tpuci__deps_sel_t *sel;
  const tpuci__deps_fresh_t *fresh;
  const tpuci__history_t *const *hs;
  size_t nh;
  const char *key;
  const char *run;
  const char *root_saved;
} tpuci__deps_ran_t;

/* The record after a run: the tests that ran (in fresh) with what they
 * needed and their final result in one of the histories; the tests left
 * out (sel) kept from old as they were; the tree as the run started
 * (sel->start), with every file that changed while it ran and that a
 * test needs made unknown. 0, or 1 when there is nothing to keep. */
int tpuci__deps_update(tpuci__deps_rec_t *out, const tpuci__deps_ran_t *ran,
                       const tpuci__deps_where_t *w);

#endif /* TPUCI_PYTEST_DEPS_H */
