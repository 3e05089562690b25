/* The interface between the scheduler and a runtime driver (local
 * processes, docker containers).
 *
 * The scheduler owns every tpuci__attempt_t. For each attempt it calls
 * rt->start(); on success the runtime later calls tpuci__attempt_output()
 * any number of times and tpuci__attempt_done() exactly once, when the
 * attempt's process or container is gone and its output drained. When
 * start() fails it returns a negative code, fills rt->err and never calls
 * back. Timeouts and cancellation arrive as rt->signal() calls (SIGTERM,
 * then SIGKILL after the grace period); the runtime delivers the signal to
 * the whole attempt (process group, container) and never to a client.
 */
#ifndef TPUCI_RUNTIME_H
#define TPUCI_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "plan/plan.h"
#include "plan/topology.h"
#include "base/util.h"

typedef struct tpuci__attempt_s tpuci__attempt_t;
typedef struct tpuci__runtime_s tpuci__runtime_t;
typedef struct tpuci__sched_s tpuci__sched_t;

/* How an attempt ended, as the runtime saw it. The scheduler turns it
 * into an outcome (tpuci__classify), adding what it knows itself: that it
 * timed the attempt out or cancelled it. */
typedef struct {
  int exit_code;          /* -1 when there is none */
  int term_signal;        /* 0 when none */
  int oom;                /* the engine reports an OOM kill */
  int infra;              /* the runtime failed, not the job */
  /* Detail for infra/oom, copied; may be NULL. For a failed exit the
   * runtime's own words when set (a gang: "worker-1: exit 3"). */
  const char *cause;
} tpuci__exit_t;

struct tpuci__attempt_s {
  /* Read-only for runtimes. */
  tpuci__sched_t *sched;
  uv_loop_t *loop;
  const tpuci__plan_t *plan;
  const tpuci__instance_t *inst;
  size_t index;            /* of inst in the plan */
  int number;              /* 1-based */
  const char *run_id;
  const char *dir;         /* this attempt's folder (exists) */
  int keep_on_failure;     /* --keep-failed */
  /* The command of this attempt: inst->argv, or one the scheduler built
   * for it (a pytest attempt that re-runs only failed tests). Never NULL,
   * NULL-terminated. */
  const tpuci__strv_t *argv;
  /* A folder the job writes results into (pytest's JUnit XML), or NULL.
   * It exists on the host at `results_dir`; the job sees it at
   * `results_path` (the same path for local processes, a bind mount at
   * TPUCI__RESULTS_MOUNT in containers), and TPUCI_RESULTS names it in
   * the job's environment. */
  const char *results_dir;
  const char *results_path;
  /* SIGTERM to SIGKILL for this attempt (--grace, else the job's, else
   * 5 s), for runtimes that stop part of an attempt on their own (the
   * docker driver stops a gang's other hosts when one fails); 0: not
   * set, the runtime uses the job's grace or 5 s. */
  uint64_t grace_ms;
  /* How many emulated hosts this attempt runs (the slots it takes): the
   * topology's, or 1 for an attempt that needs only one (a pytest
   * collection, which then gets host 0's environment); 0: not set, the
   * topology's. */
  int hosts;
  /* The runtime's own per-attempt state. */
  void *rt_data;
  /* Scheduler-private fields follow in sched.c's wrapper. */
};

struct tpuci__runtime_s {
  const char *name;
  uv_loop_t *loop;
  /* Checks before anything starts (engine reachable, images present).
   * Calls cb(rt, 0) or cb(rt, negative code) with rt->err filled, always
   * asynchronously or synchronously but exactly once, unless prepare()
   * itself returns an error (then never). May be NULL. */
  int (*prepare)(tpuci__runtime_t *rt, const tpuci__plan_t *plan,
                 void (*cb)(tpuci__runtime_t *rt, int status));
  /* Cuts a prepare() in progress short (the run is being stopped):
   * pending checks and image pulls are cancelled, and prepare's callback
   * follows soon with UV_ECANCELED. Nothing when prepare is not in
   * progress. May be NULL (prepare ends quickly on its own). */
  void (*abort)(tpuci__runtime_t *rt);
  int (*start)(tpuci__runtime_t *rt, tpuci__attempt_t *a);
  int (*signal)(tpuci__runtime_t *rt, tpuci__attempt_t *a, int signum);
  /* Releases everything the runtime holds on the loop (handles, pending
   * cleanups such as container removal) and calls cb when done. No
   * attempt is running when this is called. */
  void (*close)(tpuci__runtime_t *rt, void (*cb)(tpuci__runtime_t *rt));
  /* Frees the runtime after close() completed. */
  void (*free)(tpuci__runtime_t *rt);
  /* Messages for the user (warnings at start, kept containers). */
  void (*on_message)(tpuci__runtime_t *rt, const char *msg);
  void *host_data;         /* the scheduler's */
  tpuci__err_t err;
};

/* Options a runtime is created with. */
typedef struct {
  const char *run_id;
  int keep_failed;
} tpuci__runtime_opts_t;

/* Creates the runtime for `kind` on `loop`. Returns 0 or a negative code
 * with err filled. */
int tpuci__runtime_new(tpuci__runtime_kind_t kind, uv_loop_t *loop,
                       const tpuci__runtime_opts_t *opts,
                       tpuci__runtime_t **out, tpuci__err_t *err);

/* Checks, before anything is made, that every selected instance can run
 * on its runtime as far as it can be told without starting anything (a
 * bind mount's source exists for a local engine). Returns 0, or
 * TPUCI_ESPEC with err filled ("spec.lua:3: job 'x': ..."). */
int tpuci__runtime_check(const tpuci__plan_t *plan, tpuci__err_t *err);
int tpuci__runtime_docker_check(const tpuci__plan_t *plan, tpuci__err_t *err);

int tpuci__runtime_local_new(uv_loop_t *loop,
                             const tpuci__runtime_opts_t *opts,
                             tpuci__runtime_t **out, tpuci__err_t *err);
int tpuci__runtime_docker_new(uv_loop_t *loop,
                              const tpuci__runtime_opts_t *opts,
                              tpuci__runtime_t **out, tpuci__err_t *err);

/* Called by runtimes. `stream` is 1 (stdout) or 2 (stderr). */
void tpuci__attempt_output(tpuci__attempt_t *a, int stream, const char *buf,
                           size_t len);
void tpuci__attempt_done(tpuci__attempt_t *a, const tpuci__exit_t *ex);
/* A note for the user, tied to an attempt (e.g. "kept container ..."). */
void tpuci__attempt_message(tpuci__attempt_t *a, const char *msg);
/* A file of the attempt's records (a log) could not be written: the user
 * is told, and the run's records count as incomplete. Call it once per
 * file; `err` is a negative code. */
void tpuci__attempt_write_error(tpuci__attempt_t *a, const char *path, int err);

/* Where containers see an attempt's results folder. */
#define TPUCI__RESULTS_MOUNT "/tpuci/results"

/* Environment variables every attempt gets from tpuci, in addition to the
 * instance's env: TPUCI=1, TPUCI_RESULTS (when the attempt has a results
 * folder), TPUCI_RUN_ID, TPUCI_JOB, TPUCI_INSTANCE,
 * TPUCI_ATTEMPT, TPUCI_MAX_ATTEMPTS and TPUCI_MATRIX_<KEY> for each matrix
 * value (key upper-cased, non-alphanumerics as '_'). Appends "K=V" strings
 * to `out`, then the instance's env. */
void tpuci__attempt_env(const tpuci__attempt_t *a, tpuci__strv_t *out);

/* Topologies at run time (core/runtime.c). */

/* The name of host `host` of a gang: "worker-<host>" (its container's
 * hostname and network alias, and its entry in TPU_WORKER_HOSTNAMES). */
#define TPUCI__GANG_HOST_FMT "worker-%d"

/* The slice of a plan topology: its resolved numbers resolved again (the
 * same slice the loader checked). Returns 0, or TPUCI_ESPEC with err
 * filled ("spec.lua:3: topology 'x': ..."). */
int tpuci__topology_slice(const tpuci__topology_t *t, tpuci__slice_t *s,
                          tpuci__err_t *err);

/* What host `host` of an instance's slice gets from its topology: the
 * slice's variables (tpuci__slice_host_env, hostnames "worker-0".. for a
 * gang, "localhost" for one host), then TPUCI_HOST=<host> and
 * TPUCI_HOSTS=<hosts>. The job's own env wins: a key the job sets is
 * left out (it reaches the host with the job's value through
 * tpuci__attempt_env). Appends to `out`; 0 or TPUCI_EUSAGE. */
int tpuci__topology_host_env(const tpuci__instance_t *inst,
                             const tpuci__slice_t *s, int host,
                             tpuci__kvlist_t *out, tpuci__err_t *err);

/* The whole environment of host `host` of an attempt: tpuci__attempt_env()
 * then tpuci__topology_host_env(), as "K=V" strings. With s == NULL, just
 * tpuci__attempt_env(). 0 or TPUCI_EUSAGE. */
int tpuci__attempt_host_env(const tpuci__attempt_t *a, const tpuci__slice_t *s,
                            int host, tpuci__strv_t *out, tpuci__err_t *err);

#endif /* TPUCI_RUNTIME_H */
