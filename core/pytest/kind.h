/* The pytest job kind (kind/kind.h): what a pytest instance's processes
 * run and what their results are.
 *
 *  - kind.c: the operations table: the command of each process (the
 *    selection of a retry, a shard's part, the tests of a process
 *    besides the attempts), per-test results after each attempt
 *    (pytest_run.h), the test each host is in and the failures said as
 *    they happen (live.h), retries of only what failed, the final
 *    outcome (every test must pass; flaky; order-dependent);
 *  - shard_group.c: shard groups: the shards of one instance share one
 *    collection of its tests (the group's step, or the last run's
 *    record), split by recorded durations (shard.h); what each group
 *    collected, for collections.json;
 *  - order_run.c: the failing-first process (the tests that failed last
 *    time, in a process of their own that starts first) and order checks
 *    (order.h), and what an instance waits for before it finishes;
 *  - new_run.c: new tests run again before their pass counts
 *    (pytest.new_tests).
 *
 * The scheduler runs it through the table; core/api/ makes its state for
 * a run with what it records across runs (durations, collections, the
 * last run's failures) and reads what it collected afterwards. */
#ifndef TPUCI_PYTEST_KIND_H
#define TPUCI_PYTEST_KIND_H

#include <jansson.h>

#include "kind/kind.h"
#include "pytest/collection.h"
#include "pytest/timings.h"

/* What the pytest kind is given for one run. Borrowed for the run. */
typedef struct {
  const tpuci__timings_t *timings; /* recorded durations, for shards */
  /* What shard groups collected last time (no collection pass for a
   * group whose key matches). May be NULL. */
  const tpuci__collections_t *collections;
  /* Per instance, the node ids its first attempt runs (rerun --failed,
   * --test), or NULL; copied. May be NULL. */
  tpuci__strv_t *const *preselect;
  /* 1: the preselection is `run --test`'s: an instance whose selection
   * (markers, -k) collects none of it ends not-applicable. */
  int preselect_tests;
  /* Per instance, the tests that failed in its last run (the history's),
   * which run first in a process of their own when the job has
   * failed_first (a shard's: those of its part), or NULL; copied. May be
   * NULL. */
  tpuci__strv_t *const *first;
  /* 1: no failing-first process and no order check (a flake probe). */
  int no_first;
  /* Per instance, 1 when it does not run (a cached pass). May be NULL. */
  const unsigned char *done;
  /* Only what a change can affect (deps.h): the state folder (NULL: no
   * record is read or written), per instance its non-file inputs' key
   * (runtime/inputs.h; NULL or an entry NULL: none), every pytest job as
   * if it had select = "affected" (--affected), and every test runs
   * though still recorded (--no-select). */
  const char *state_dir;
  const char *const *keys;
  int affected;
  int no_select;
  /* The tests the history has (tpuci__flaky_recent() of the whole store:
   * "job\x1fid" keys), for pytest.new_tests (new_run.c); NULL: none. */
  const json_t *known;
} tpuci__pytest_kind_opts_t;

extern const tpuci__kind_t tpuci__kind_pytest;

/* Its state for a run of `plan` whose results go to `results`. */
tpuci__kind_run_t *tpuci__pytest_kind_new(const tpuci__plan_t *plan,
                                          tpuci__instance_result_t *results,
                                          const tpuci__pytest_kind_opts_t *o);
void tpuci__pytest_kind_free(tpuci__kind_run_t *kr);

/* After the run: records in `c` what each shard group collected, when
 * it is known whole (every shard collected its part, or the collection
 * pass ran); other groups keep their records. Returns how many it
 * recorded. */
size_t tpuci__pytest_kind_collections(const tpuci__kind_run_t *kr, tpuci__collections_t *c);

/* After the run: each record of what tests need made new from the run
 * (deps.h) and written; what could not be, as warnings. Returns how
 * many it wrote. */
size_t tpuci__pytest_kind_deps_save(tpuci__kind_run_t *kr, const char *run_id,
                                    tpuci__strv_t *warnings);

/* Frees what an instance's result holds, its per-test results too. */
void tpuci__instance_result_free(tpuci__instance_result_t *r);

#endif /* TPUCI_PYTEST_KIND_H */
