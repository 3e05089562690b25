/* core/sched/: the scheduler. Slots (one per emulated host), a FIFO
 * ready queue, timeouts (SIGTERM, grace, SIGKILL), retries with backoff,
 * fail-fast, the deadline, signals and cancellation (scheduler.c: the
 * run; attempt.c: attempts; shards.c: pytest shard groups), and the
 * outcome rules (outcome.c). It drives runtimes only through
 * runtime/runtime.h and keeps the results this header declares. It may
 * use core/pytest/, core/runtime/, core/plan/ and core/base/; core/report/
 * and core/api/ read its results. */
#ifndef TPUCI_SCHEDULER_H
#define TPUCI_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "pytest/collection.h"
#include "pytest/junit.h"
#include "plan/plan.h"
#include "runtime/runtime.h"
#include "pytest/timings.h"
#include "base/util.h"

typedef struct tpuci__sched_s tpuci__sched_t;

/* What is kept of one finished attempt. */
typedef struct {
  tpuci_outcome_t outcome;
  int exit_code;
  int term_signal;
  uint64_t start_ms;
  uint64_t duration_ms;
  char *cause;
  char *log_path;
} tpuci__attempt_result_t;

/* An order check: a process that ran `test` again after `before` of the
 * tests that ran before it where it failed (0: alone). */
typedef struct {
  char *test;
  size_t before;
  int failed;                   /* 1 it failed, 0 it passed, -1 not said */
  uint64_t start_ms;
  uint64_t duration_ms;
  char *cause;
  char *log_path;
} tpuci__order_check_t;

typedef struct {
  tpuci_outcome_t outcome;      /* final; NONE while pending */
  tpuci__attempt_result_t *attempts;
  size_t nattempts;
  tpuci__history_t *history;    /* pytest jobs: per-test results, or NULL */
  /* pytest: the failing-first process (NULL: none) and the tests it was
   * given (the tests that failed in the instance's last run). */
  tpuci__attempt_result_t *first;
  tpuci__strv_t first_tests;
  /* pytest: the order checks that ran, in order. */
  tpuci__order_check_t *checks;
  size_t nchecks;
} tpuci__instance_result_t;

typedef struct {
  int jobs;
  int fail_fast;
  int strict_flaky;
  int keep_failed;
  uint64_t deadline_ms;
  uint64_t grace_ms;            /* 0: each instance's */
  int handle_signals;
  uint64_t tick_ms;             /* TICK events; 0: none */
  const char *run_id;
  const char *run_dir;          /* exists */
  const tpuci__timings_t *timings; /* recorded test durations, for shards */
  /* What shard groups collected last time (no collection pass for a
   * group whose key matches). May be NULL. */
  const tpuci__collections_t *collections;
  /* pytest: per instance, the node ids its first attempt runs (rerun
   * --failed), or NULL; copied. May be NULL. */
  tpuci__strv_t *const *preselect;
  /* pytest: per instance, the tests that failed in its last run (the
   * history's), which run first in a process of their own when the job
   * has failed_first (a shard's: those of its part), or NULL; copied.
   * May be NULL. */
  tpuci__strv_t *const *first;
  /* 1: no failing-first process and no order check (a flake probe). */
  int no_first;
  /* Per instance, 1 when its result is in `results` already (a cached
   * pass, docs/cache.md: its attempts and tests): it does not run, and
   * its ATTEMPT_FINISHED and INSTANCE_FINISHED events come when the run
   * starts. May be NULL. */
  const unsigned char *done;
  /* Events go to the context, which adds its own pointer. */
  void (*on_event)(void *host, const tpuci_event_t *ev);
  /* A write to a file of the run folder (a log) failed; called once per
   * file, `err` a negative code. May be NULL. */
  void (*on_write_error)(void *host, const char *path, int err);
  void *host;
} tpuci__sched_opts_t;

/* The most slots the selected instances of `plan` can fill at once with
 * `nofile` file descriptors (the soft RLIMIT_NOFILE), leaving room for
 * everything else the process holds. At least 1. */
int tpuci__sched_fd_cap(const tpuci__plan_t *plan, uint64_t nofile);

/* Checks that the plan can run with `jobs` slots (every gang fits).
 * Returns 0 or TPUCI_EUSAGE with err filled. */
int tpuci__sched_check(const tpuci__plan_t *plan, int jobs, tpuci__err_t *err);

/* Starts running the selected instances of `plan` on `loop`. `results`
 * has plan->ninstances entries, zeroed. Returns 0 (the run will end with
 * a RUN_FINISHED event, after which tpuci__sched_free() may be called) or
 * a negative code with err filled (nothing started, no event). */
int tpuci__sched_start(tpuci__sched_t **out, uv_loop_t *loop,
                       const tpuci__plan_t *plan,
                       tpuci__instance_result_t *results,
                       const tpuci__sched_opts_t *opts, tpuci__err_t *err);

/* Stops starting work and signals running attempts. */
void tpuci__sched_cancel(tpuci__sched_t *s, int force);

/* Whether the run was interrupted (cancel or signal). */
int tpuci__sched_interrupted(const tpuci__sched_t *s);
/* Non-NULL when the run failed to complete for a reason of its own (a
 * runtime failed its checks): the message. */
const char *tpuci__sched_error(const tpuci__sched_t *s);
int tpuci__sched_error_code(const tpuci__sched_t *s);

void tpuci__sched_free(tpuci__sched_t *s);

/* After the run: records in `c` what each shard group collected, when
 * it is known whole (every shard collected its part, or the collection
 * pass ran); other groups keep their records. Returns how many it
 * recorded. */
size_t tpuci__sched_collections(const tpuci__sched_t *s, tpuci__collections_t *c);

/* What a running attempt of instance `index` is doing now. */
typedef struct {
  int attempt;
  uint64_t elapsed_ms;
  uint64_t output_bytes;
  uint64_t quiet_ms;       /* since its last output (or its start) */
  const char *test;        /* pytest: the test each host is in, or NULL;
                              valid until the next call or event */
  uint64_t test_ms;        /* how long it has been in it (at least) */
} tpuci__running_t;

/* Fills *out and returns 0 when an attempt (not a collection) of
 * `index` runs; else -1. A pytest attempt's progress files are read at
 * most once a second. */
int tpuci__sched_running(tpuci__sched_t *s, size_t index, tpuci__running_t *out);

/* Outcome rules, pure functions (outcome.c). */
tpuci_outcome_t tpuci__classify(const tpuci__exit_t *ex, int timed_out,
                                int cancelled);
tpuci_outcome_t tpuci__final_outcome(const tpuci_outcome_t *attempts,
                                     size_t n);

void tpuci__attempt_result_free(tpuci__attempt_result_t *r);
void tpuci__instance_result_free(tpuci__instance_result_t *r);

#endif /* TPUCI_SCHEDULER_H */
