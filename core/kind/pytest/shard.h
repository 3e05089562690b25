/* Splitting a pytest suite into shards of about equal predicted
 * duration, and reading the node ids `pytest --collect-only -q` prints.
 *
 * Algorithm (docs/pytest.md): LPT, longest processing time first. Each
 * test's predicted duration is its moving average in the timings store;
 * tests the store does not know get the median of the known ones among
 * the tests being split. Tests are taken longest first (ties by node id)
 * and each goes to the shard with the least predicted load so far (ties
 * to the lowest shard index). When no test is known at all, tests are
 * dealt round-robin in collection order, which balances counts.
 *
 * With `by` TPUCI__SHARD_BY_FILE (pytest.shard_by's default) or _CLASS
 * the same runs over groups instead of tests: a file's tests (a class's;
 * other tests alone) go to one shard together, as one item whose
 * duration is the sum of theirs (with nothing known: their count), so a
 * test that leans on the order of its file sees it as in serial pytest.
 * With _TEST node ids are split one by one (the finest balance; tests of
 * a file may land in different shards). Each shard lists its tests in
 * the order they were given.
 */
#ifndef TPUCI_SHARD_H
#define TPUCI_SHARD_H

#include <stddef.h>

#include "kind/pytest/config.h"
#include "plan/plan.h"
#include "kind/pytest/timings.h"
#include "base/util.h"

#define TPUCI__SHARD_MAX 4096
/* The assumed duration of every test when nothing is known. */
#define TPUCI__SHARD_DEFAULT_S 1.0

/* Appends to ids the node ids in the output of `pytest --collect-only -q`
 * (one per line, then a blank line and "N tests collected in 0.01s").
 * Blank lines, indented lines, lines without "::" and everything from
 * the first "===" section or the summary line on are ignored; duplicate
 * ids are kept once. Returns 0; TPUCI_EIO when the output reports
 * collection errors ("1 error during collection": ids still holds what
 * was listed), or when it has neither node ids nor pytest's summary line
 * (not --collect-only -q output; -qq prints counts per file instead). */
int tpuci__collect_parse(const char *text, size_t len, tpuci__strv_t *ids, tpuci__err_t *err);

typedef struct {
  tpuci__strv_t ids;  /* node ids, in the order they were given */
  double predicted_s; /* sum of their predicted durations */
} tpuci__shard_t;

typedef struct {
  tpuci__shard_t *shards;
  size_t n;
  int by_count;          /* no duration known: dealt round-robin */
  size_t known, unknown; /* tests with and without a recorded duration */
  double unknown_s;      /* what an unknown test was assumed to take */
  double total_s;        /* sum over all shards */
  size_t retrying;       /* shards expected to retry (plan_retry) */
} tpuci__shard_plan_t;

/* A split to plan: ids[0..n) (duplicates are counted once) into
 * `shards` shards of `by` units, using `timings` (may be NULL: nothing
 * known). */
typedef struct {
  const char *const *ids;
  size_t n;
  const tpuci__timings_t *timings;
  size_t shards;
  tpuci__shard_by_t by;
  int traced; /* the run records (deps.h): traced durations predict it */
  /* Tests whose failure is not retried (they fail steadily, kind.h's
   * steady): a retry is planned only for the other failed ones. May be
   * NULL. */
  const tpuci__strv_t *no_retry;
} tpuci__shard_ask_t;

/* Plans the split `ask` says. Shards may be empty when there are fewer
 * tests than shards. Returns 0, or TPUCI_EUSAGE when shards is 0 or over
 * TPUCI__SHARD_MAX. The result is the same for the same ids and timings
 * in any order, except round-robin, which follows the order. */
int tpuci__shard_plan(const tpuci__shard_ask_t *ask, tpuci__shard_plan_t *out, tpuci__err_t *err);
/* The same, planning the retry of the tests whose latest result failed
 * (`failed` in the store) when retry_s >= 0: such a test counts twice,
 * and a shard that gets one counts retry_s more once (its retry's own
 * cost: backoff, start, imports). A unit with one goes to the shard it
 * would end soonest on, so those tests gather in few shards, whose other
 * work shrinks by their retry: retries end with the other shards instead
 * of after them. retry_s < 0: tpuci__shard_plan(). */
int tpuci__shard_plan_retry(const char *const *ids, size_t n, const tpuci__timings_t *t,
                            size_t shards, tpuci__shard_by_t by, double retry_s,
                            tpuci__shard_plan_t *out, tpuci__err_t *err);
/* tpuci__shard_plan_retry() of an ask (its traced too). */
int tpuci__shard_plan_ask_retry(const tpuci__shard_ask_t *ask, double retry_s,
                                tpuci__shard_plan_t *out, tpuci__err_t *err);
void tpuci__shard_plan_free(tpuci__shard_plan_t *p);

/* The retry_s a split of `inst`'s shards plans with: -1 unless a failed
 * attempt is retried with what failed (retries on "failed", rerun
 * "failed"); else the retry's backoff plus `overhead_s` (what an attempt
 * of the group took beyond its tests, collections.json; < 0: unknown). */
double tpuci__shard_retry_s(const tpuci__instance_t *inst, double overhead_s);

/* The length of the part of node id `id` that `by` keeps in one shard:
 * its file, its file and class ("tests/t.py::TestC"; a test outside a
 * class is a part of its own), or all of it. Only "::" before a
 * parameter's '[' count. */
size_t tpuci__shard_unit_len(const char *id, tpuci__shard_by_t by);

/* What one shard's bootstrap needs to keep its part of the split `p`
 * when it collects the whole suite itself (pytest_run.c): a first line
 * "BY SHARD LIVE" (BY file, class or test; SHARD this shard, 1-based;
 * LIVE the shards with a test, "1,2"), then a line "K<tab>UNIT" for each
 * unit of the split (a file, a class or a test, by `by`) and the shard
 * it went to. A unit the lines do not name (new since the recorded
 * collection) goes to LIVE[crc32(UNIT) % len(LIVE)], in every shard
 * alike. A new string. */
char *tpuci__shard_assignment(const tpuci__shard_plan_t *p, tpuci__shard_by_t by, size_t shard);
/* Past this size the assignment is not passed (an argument's length is
 * capped by the kernel at 128 KiB): the shards run node ids. */
#define TPUCI__SHARD_ASSIGNMENT_MAX (100 * 1024)

/* The longest shard's predicted duration over the ideal (total / n):
 * 1.0 is perfect. 0 when there is nothing to run. */
double tpuci__shard_imbalance(const tpuci__shard_plan_t *p);

#endif /* TPUCI_SHARD_H */
