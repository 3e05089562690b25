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
#include "kind/pytest/collection.h"
#include "kind/pytest/timings.h"

extern const tpuci__kind_t tpuci__kind_pytest;

/* Its state for a run (kinds.h's run_new). */
tpuci__kind_run_t *tpuci__pytest_kind_new(const tpuci__kind_args_t *a);
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
