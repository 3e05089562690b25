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
#include "kind/pytest/junit.h"
#include "kind/pytest/timings.h"

/* An order check: a process that ran `test` again after `before` of the
 * tests that ran before it where it failed (0: alone). */
typedef struct {
  char *test;
  size_t before;
  int failed; /* 1 it failed, 0 it passed, -1 not said */
  uint64_t start_ms;
  uint64_t duration_ms;
  char *cause;
  char *log_path;
} tpuci__order_check_t;

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

/* What the pytest kind keeps of an instance beyond its attempts (its
 * result's kind_data). */
typedef struct {
  tpuci__history_t *history; /* per-test results, or NULL */
  /* The failing-first process (NULL: none) and the tests it was given
   * (the tests that failed in the instance's last run). */
  tpuci__attempt_result_t *first;
  tpuci__strv_t first_tests;
  /* The order checks that ran, in order. */
  tpuci__order_check_t *checks;
  size_t nchecks;
} tpuci__pytest_result_t;

/* r's pytest results, made on first use (NULL when r holds another
 * kind's). */
tpuci__pytest_result_t *tpuci__res_pytest(tpuci__instance_result_t *r);
/* r's pytest results to read: all empty when it has none. */
const tpuci__pytest_result_t *tpuci__res_pytest_of(const tpuci__instance_result_t *r);
/* r's per-test results, or NULL. */
tpuci__history_t *tpuci__res_history(const tpuci__instance_result_t *r);

#endif /* TPUCI_PYTEST_KIND_H */
