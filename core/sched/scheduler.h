/* core/sched/: the scheduler. Slots (one per emulated host), a FIFO
 * ready queue with backfill, timeouts (SIGTERM, grace, SIGKILL), retries
 * with backoff, fail-fast, the deadline, signals and cancellation
 * (scheduler.c: the run; attempt.c: processes; group.c: a group's step
 * that its parts wait for, processes besides an instance's attempts),
 * and the outcome rules (outcome.c). What a process runs and what its
 * results mean is its job kind's (kind/kind.h): the scheduler calls kinds
 * through their operations table and names none, as it drives runtimes
 * only through runtime/runtime.h. It may use core/kind/, core/runtime/,
 * core/plan/ and core/base/; core/report/ and core/api/ read its
 * results. */
#ifndef TPUCI_SCHEDULER_H
#define TPUCI_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "kind/kind.h"
#include "plan/plan.h"
#include "runtime/runtime.h"
#include "base/util.h"

typedef struct tpuci__sched_s tpuci__sched_t;

typedef struct {
  int jobs;
  int fail_fast;
  int strict_flaky;
  int keep_failed;
  uint64_t deadline_ms;
  uint64_t grace_ms; /* 0: each instance's */
  int handle_signals;
  uint64_t tick_ms; /* TICK events; 0: none */
  const char *run_id;
  const char *run_dir; /* exists */
  /* The job kinds, each with its state for this run: an instance is the
   * first one's that claims it (the command kind claims every one, so it
   * comes last). */
  const tpuci__kind_binding_t *kinds;
  size_t nkinds;
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

/* Checks that the plan can run with `jobs` slots (every gang fits, its
 * runtime runs gangs, each instance's kind can run it; `kinds` as in
 * the options). Returns 0 or TPUCI_EUSAGE with err filled. */
int tpuci__sched_check(const tpuci__plan_t *plan, const tpuci__kind_binding_t *kinds, size_t nkinds,
                       int jobs, tpuci__err_t *err);

/* Starts running the selected instances of `plan` on `loop`. `results`
 * has plan->ninstances entries, zeroed. Returns 0 (the run will end with
 * a RUN_FINISHED event, after which tpuci__sched_free() may be called) or
 * a negative code with err filled (nothing started, no event). */
int tpuci__sched_start(tpuci__sched_t **out, uv_loop_t *loop, const tpuci__plan_t *plan,
                       tpuci__instance_result_t *results, const tpuci__sched_opts_t *opts,
                       tpuci__err_t *err);

/* Stops starting work and signals running attempts. */
void tpuci__sched_cancel(tpuci__sched_t *s, int force);

/* Whether the run was interrupted (cancel or signal). */
int tpuci__sched_interrupted(const tpuci__sched_t *s);
/* Non-NULL when the run failed to complete for a reason of its own (a
 * runtime failed its checks): the message. */
const char *tpuci__sched_error(const tpuci__sched_t *s);
int tpuci__sched_error_code(const tpuci__sched_t *s);

void tpuci__sched_free(tpuci__sched_t *s);

/* What a running attempt of instance `index` is doing now. */
typedef struct {
  int attempt;
  uint64_t elapsed_ms;
  uint64_t output_bytes;
  uint64_t quiet_ms; /* since its last output (or its start) */
  const char *test;  /* what its kind says it is doing (the test
                              each host is in), or NULL; valid until the
                              next call or event */
  uint64_t test_ms;  /* how long it has been in it (at least) */
} tpuci__running_t;

/* Fills *out and returns 0 when an attempt of `index` runs; else -1. Its
 * kind is asked what it does at most once a second. */
int tpuci__sched_running(tpuci__sched_t *s, size_t index, tpuci__running_t *out);

/* Outcome rules, pure functions (outcome.c). */
tpuci_outcome_t tpuci__classify(const tpuci__exit_t *ex, int timed_out, int cancelled);
tpuci_outcome_t tpuci__final_outcome(const tpuci_outcome_t *attempts, size_t n);

#endif /* TPUCI_SCHEDULER_H */
