/* The timings store: how long each test took, by pytest node id, kept in
 * .tpuci/timings.json between runs to balance shards.
 *
 *   {"version": 1,
 *    "tests": {"tests/test_a.py::test_x": {"last": 0.25, "avg": 0.21, "runs": 4},
 *              "tests/test_a.py::test_y": {"last": 1.5, "avg": 1.5, "runs": 1,
 *                                          "failed": true}}}
 *
 * `last` is the latest duration in seconds, `avg` an exponential moving
 * average (weight TPUCI__TIMINGS_ALPHA for the newest run) and the value
 * predictions use; `runs` may be 0 for a test whose only result was an
 * error (no duration known). `failed`: its latest result failed or
 * errored, so its next run starts with it (failing first). A flat
 * {"node id": seconds} object, as pytest-split's .test_durations, loads
 * as well.
 *
 * Durations measured while the run recorded what each test needs
 * (pytest.select = "affected": a tracer in the process, deps.h) are kept
 * apart, "traced" and "traced_runs": they predict only runs that record
 * too, never a plain run's split (the tracer slowed ignite's suite by up
 * to 1.87x).
 */
#ifndef TPUCI_TIMINGS_H
#define TPUCI_TIMINGS_H

#include <stddef.h>

#include "kind/pytest/junit.h"
#include "base/util.h"

#define TPUCI__TIMINGS_ALPHA 0.3
#define TPUCI__TIMINGS_MAX_BYTES ((size_t) 256 << 20)

typedef struct {
  char *id;
  double last_s;
  double avg_s;
  unsigned runs;
  int failed;      /* its latest result failed or errored */
  double traced_s; /* the average of the durations measured recording */
  unsigned traced_runs;
} tpuci__timing_t;

typedef struct tpuci__timings_s {
  tpuci__timing_t *items; /* in insertion order */
  size_t len, cap;
  tpuci__idmap_t map; /* id -> index */
} tpuci__timings_t;

void tpuci__timings_init(tpuci__timings_t *t);
void tpuci__timings_free(tpuci__timings_t *t);

/* Loads a store into t (init'ed, normally empty; entries replace those
 * with the same id). A missing file is an empty store (returns 0). A
 * file that is not valid JSON, or whose entries are not non-negative
 * numbers, returns TPUCI_EIO with "path:LINE:COL: what" in err, and
 * leaves t as it was before the call; the caller decides whether to warn
 * and go on with what it has. */
int tpuci__timings_load(tpuci__timings_t *t, const char *path, tpuci__err_t *err);
int tpuci__timings_load_string(tpuci__timings_t *t, const char *data, size_t len, const char *name,
                               tpuci__err_t *err);

/* The store as JSON, keys sorted (a new string). */
char *tpuci__timings_dump(const tpuci__timings_t *t);
/* Writes it atomically, creating the parent folder. 0 or negative. */
int tpuci__timings_save(const tpuci__timings_t *t, const char *path, tpuci__err_t *err);

/* Records one duration (negative or non-finite values are ignored). */
void tpuci__timings_record(tpuci__timings_t *t, const char *id, double seconds);
/* Records every test of a report except errors (a setup failure says
 * nothing about how long the test runs). Returns the number recorded. */
size_t tpuci__timings_update(tpuci__timings_t *t, const tpuci__junit_t *j);
/* The same with each test's final result in a history (a history whose
 * run recorded, h->traced: as traced durations). */
size_t tpuci__timings_update_history(tpuci__timings_t *t, const tpuci__history_t *h);

/* The tests whose latest result failed (in the store's order), appended
 * to out; with `among` (not NULL) only those it holds. At most
 * `max_bytes` of ids in all. Returns how many. */
size_t tpuci__timings_failed(const tpuci__timings_t *t, const tpuci__strv_t *among,
                             size_t max_bytes, tpuci__strv_t *out);

/* The predicted duration of a test in a run that does not record: 1 and
 * *seconds when known, else 0 (traced durations are not used). */
int tpuci__timings_get(const tpuci__timings_t *t, const char *id, double *seconds);
/* The same for a run that records: its traced durations, else the plain
 * ones. */
int tpuci__timings_get_traced(const tpuci__timings_t *t, const char *id, double *seconds);

#endif /* TPUCI_TIMINGS_H */
