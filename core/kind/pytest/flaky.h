/* The history store: every run's per-test outcomes, kept across runs in
 * the state folder (.tpuci/history.jsonl), and what it says about flaky
 * tests (`tpuci flaky`). Part of core/kind/pytest/ (pytest_run.h says what
 * the folder may use).
 *
 * One JSON line a run, oldest first:
 *   {"run": "20261204-012239-f9cb", "time": 1796347360000, "commit": "ab12.." or null,
 *    "tree": "ab12..:5e6f.." or null,
 *    "tests": [["unit[py=3.11]", "tests/t.py::test_x", "f", 0.25, "AssertionError: ..."], ...]}
 * its tree: what the run ran on, "COMMIT:FILES" (FILES alone in a
 * repository without a commit), FILES a history's tree (junit.h: the
 * content key of the work tree's files as the run started); null, or
 * absent in lines written before trees were, when not known. "inputs":
 * {identity: the results cache's key of its instance (its shards' hashed
 * together) or null}. A flip is a change of a test's result from its
 * last run of the same tree, or from its run just before when both ran
 * from the same inputs key, or a run flaky or order-dependent within
 * itself: any other change between two trees (a fix), or from or to a
 * run of no known tree, is none.
 * each test as [identity, node id, outcome, seconds, message]: its
 * identity is the instance without its shard ("unit[py=3.11]" for
 * "unit[py=3.11,shard=2/4]": a test keeps one history whichever shard
 * ran it; rows written with the shard read as without); "p" passed, "f"
 * failed (or error, or not run after a timeout or a crash), "k" flaky
 * (failed, then passed in the run), "o" order-dependent (pytest/order.h),
 * "s" skipped or xfail; a test a cancelled run (Ctrl-C, --deadline,
 * --fail-fast) did not reach or cut short has no row (absent, "-"): it
 * says nothing of it. The message (of a failure, at most
 * TPUCI__FLAKY_MSG_MAX bytes) or null. Bounded: the last
 * TPUCI__FLAKY_MAX_RUNS runs, and older runs are dropped while the file
 * is over TPUCI__FLAKY_MAX_BYTES. */
#ifndef TPUCI_PYTEST_FLAKY_H
#define TPUCI_PYTEST_FLAKY_H

#include <stdint.h>

#include <jansson.h>

#include "kind/pytest/codeowners.h"
#include "kind/pytest/junit.h"
#include "kind/pytest/quarantine.h"
#include "base/util.h"

#define TPUCI__FLAKY_FILE "history.jsonl"
#define TPUCI__FLAKY_MAX_RUNS 100
#define TPUCI__FLAKY_MAX_BYTES ((size_t) 32 << 20)
#define TPUCI__FLAKY_MSG_MAX 200
/* A job's run in which more than half its tests failed, and at least
 * this many ran, is an infra run: left out of flip rates. */
#define TPUCI__FLAKY_INFRA_MIN 5

typedef struct {
  const char *run_id;
  uint64_t start_ms;
  const char *commit;                       /* may be NULL */
  const tpuci__history_t *const *histories; /* one per pytest instance */
  size_t n;
} tpuci__flaky_run_t;

/* Appends the run to the store at `path` (dropping the oldest runs past
 * the caps), written atomically (the caller holds the state folder's
 * lock, base/lock.h, so that no run's line is lost). With `recent` non-NULL, *recent gets
 * what tpuci__flaky_recent(path, recent_runs) would say afterwards, from
 * the one read the append made (NULL when the write failed). A store over
 * twice TPUCI__FLAKY_MAX_BYTES keeps its newest whole lines, and
 * *warning (when non-NULL) gets a new message saying so; one that cannot
 * be read is left as it is (the run is not added). 0, or a negative code
 * with err set. */
int tpuci__flaky_append(const char *path, const tpuci__flaky_run_t *run, int recent_runs,
                        json_t **recent, char **warning, tpuci__err_t *err);

/* The store's last `runs` runs (0: all) as a report: tests that failed in
 * any of them, most flips first ("tpuci flaky"), as text or JSON (each
 * run's tree, each test's flips and the runs they rest on); a job's
 * infra runs (TPUCI__FLAKY_INFRA_MIN) are left out of its tests' counts
 * and named ("left out of flip rates: ..."; JSON "left_out"). A new
 * string in *out; 0, or a negative code with err set (a missing store is
 * TPUCI_ENOMATCH). */
int tpuci__flaky_report(const char *path, int runs, int json, char **out, tpuci__err_t *err);

/* `tpuci flaky --propose` (quarantine.c): quarantine entries for the
 * tests of the store's last `runs` runs whose flip rate is at least
 * `min_rate` (and that flipped), each once (the file's YAML,
 * docs/quarantine.md), a comment line per tree naming the runs its
 * flips rest on, with the owner CODEOWNERS gives its file and an expiry
 * TPUCI__PROPOSE_DAYS after `today`; tests `quarantine` already covers
 * are counted, not proposed. Never written anywhere: *out is a new
 * string. */
#define TPUCI__PROPOSE_DAYS 14
typedef struct {
  int runs;
  double min_rate;
  long today;                            /* days since 1970-01-01 */
  const tpuci__quarantine_t *quarantine; /* or NULL */
  const tpuci__codeowners_t *owners;     /* or NULL: none found */
} tpuci__flaky_propose_t;
int tpuci__flaky_propose(const char *path, const tpuci__flaky_propose_t *o, char **out,
                         size_t *count, tpuci__err_t *err);

/* Each test's outcomes in the store's last `runs` runs, oldest first, one
 * code a run ('-': not in it), as an object keyed "identity\x1fid"; NULL
 * when the store cannot be read. A new reference. */
json_t *tpuci__flaky_recent(const char *path, int runs);

/* The message of a test's row when no attempt reported it (a timeout,
 * a crash or a collection error ended its attempts first): code "f", a
 * failure of the instance, though the test itself did not fail. */
#define TPUCI__FLAKY_NOT_RUN "not run: no attempt reached it"
/* A test that failed in each of its last this many runs in the store
 * (no pass, flake or order dependence between) fails steadily. */
#define TPUCI__FLAKY_STEADY_RUNS 5

/* The tests that ran and failed in each identity's last run in the store
 * (an identity: an instance without its shard; each once): for each of
 * the `n`, the node ids whose code was "f" in the newest run that has the
 * identity, but for tests no attempt reached (TPUCI__FLAKY_NOT_RUN), and
 * none at all when that run was an infra run for it (more than half of
 * at least TPUCI__FLAKY_INFRA_MIN tests failed: a lost device, a
 * collection error); into out[k] (zeroed). With `steady` (or NULL),
 * those that failed in each of their last TPUCI__FLAKY_STEADY_RUNS runs
 * go into steady[k] (zeroed) instead. A store that cannot be read says
 * none. */
void tpuci__flaky_last_failed(const char *path, const char *const *identities, size_t n,
                              tpuci__strv_t *out, tpuci__strv_t *steady);

#endif /* TPUCI_PYTEST_FLAKY_H */
