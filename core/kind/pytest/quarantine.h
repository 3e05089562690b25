/* Quarantined tests (docs/quarantine.md): tpuci-quarantine.yaml beside
 * the spec (or `tpuci run --quarantine FILE`) lists the tests whose
 * failures do not fail a run for now, each with a reason, an owner and
 * an expiry date:
 *
 *   - test: "tests/test_a.py::test_x"     # a node id, or an fnmatch(3) glob
 *     reason: "flaky on the CPU emulation, issue 123"
 *     owner: "@alice"
 *     until: 2027-01-31                   # the last day it holds (UTC)
 *
 * A quarantined test still runs and is reported as "quarantined"; an
 * entry whose `until` is before today is expired (a warning, and its
 * tests count again). A quarantined test whose last K runs in the
 * history (pytest/flaky.h) all passed is "ready to release". Part of
 * core/kind/pytest/ (pytest_run.h says what the folder may use). */
#ifndef TPUCI_PYTEST_QUARANTINE_H
#define TPUCI_PYTEST_QUARANTINE_H

#include <stddef.h>

#include <jansson.h>

#include "base/util.h"

/* The file looked for beside the spec. */
#define TPUCI__QUARANTINE_FILE "tpuci-quarantine.yaml"
/* K, the runs in a row a quarantined test must pass to be ready to
 * release, unless told otherwise (--release-after). */
#define TPUCI__RELEASE_AFTER 10
/* At most this many entries (and 1 MiB of file). */
#define TPUCI__QUARANTINE_MAX 10000

typedef struct {
  char *test; /* a node id or a glob */
  char *reason;
  char *owner;
  char *until;    /* "2027-01-31" */
  long until_day; /* days since 1970-01-01 */
  char *where;    /* "tpuci-quarantine.yaml:3" */
  int expired;    /* until_day < today (tpuci__quarantine_expire) */
  /* What it covered in a run's pytest instances (its tests, of them
   * failing: failed, error, not run), counted by the run. */
  size_t covered, covered_failing;
} tpuci__quarantine_entry_t;

typedef struct {
  char *path; /* as given */
  tpuci__quarantine_entry_t *entries;
  size_t n;
} tpuci__quarantine_t;

void tpuci__quarantine_init(tpuci__quarantine_t *q);
void tpuci__quarantine_free(tpuci__quarantine_t *q);

/* Parses the file's text (`name` for messages) into `q` (zeroed or
 * empty). The document is a list of mappings with the keys test, reason,
 * owner and until, each a non-empty string, each required, none other;
 * `until` a date YYYY-MM-DD; an empty file (or `[]`) has no entry; a
 * second document is an error (as tpuci.yaml's).
 * Returns 0, or TPUCI_ESPEC with err saying "NAME:LINE: ..." and the
 * key. */
int tpuci__quarantine_parse(const char *text, size_t len, const char *name, tpuci__quarantine_t *q,
                            tpuci__err_t *err);
/* Reads and parses `path`. A missing file is UV_ENOENT (err set). */
int tpuci__quarantine_load(const char *path, tpuci__quarantine_t *q, tpuci__err_t *err);

/* Today (UTC) as days since 1970-01-01. */
long tpuci__quarantine_today(void);
/* "YYYY-MM-DD" as days since 1970-01-01; -1 when it is not a date. */
long tpuci__quarantine_day(const char *date);

/* Marks the entries whose `until` is before `today` as expired and adds
 * one warning for each to `warnings` ("NAME:3: the quarantine of 'ID'
 * (owner @alice) expired on 2026-01-31: it counts again"). */
void tpuci__quarantine_expire(tpuci__quarantine_t *q, long today, tpuci__strv_t *warnings);

/* One warning for each entry, not expired, whose test covers every test
 * ("*"): "NAME:3: test '*' covers every test: ...". */
void tpuci__quarantine_lint(const tpuci__quarantine_t *q, tpuci__strv_t *warnings);

/* The first entry that is not expired and covers node id `id` (equal to
 * its `test`, or matching it as an fnmatch(3) glob without flags, so `*`
 * also crosses `/` and `::`), or NULL. */
const tpuci__quarantine_entry_t *tpuci__quarantine_match(const tpuci__quarantine_t *q,
                                                         const char *id);

/* Whether a test's outcomes run by run (the history's codes, oldest
 * first: p f k s -) end with `k` runs that ran it (skips and absences
 * left out) that all passed. */
int tpuci__quarantine_released(const char *seq, int k);

/* `tpuci flaky --release`: the entries of `q` that are not expired and
 * whose every test in the history (`recent`: tpuci__flaky_recent() of the
 * whole store, "instance\x1fid" -> codes) passed its last `k` runs, at
 * least one test; as text, a line per entry ("FILE:3: ID (owner O, until
 * D): passed its last K runs: remove the entry"). A new string (maybe
 * ""), and *count the entries it names. */
char *tpuci__quarantine_release_report(const tpuci__quarantine_t *q, const json_t *recent, int k,
                                       size_t *count);

#endif /* TPUCI_PYTEST_QUARANTINE_H */
