/* core/runtime/: where attempts run. This header is the interface
 * between the scheduler and a runtime driver, the table of drivers
 * (runtime.c), and the environment every attempt gets; each driver lives
 * in a file or folder of its own here (local.c: processes; docker/: the
 * Docker Engine). Runtimes may use plan/ and base/, nothing above them:
 * they never call the scheduler by name. Everything they report goes
 * through the callbacks the scheduler hands each attempt
 * (tpuci__attempt_host_t), and everything they say outside an attempt
 * through rt->on_message.
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

#include "plan/host_env.h"
#include "plan/plan.h"
#include "plan/topology.h"
#include "base/util.h"

typedef struct tpuci__attempt_s tpuci__attempt_t;
typedef struct tpuci__runtime_s tpuci__runtime_t;

/* An image pull's progress, as a runtime tells it (rt->on_pull): once
 * with TPUCI__PULL_STARTED, then at most every few hundred ms while
 * bytes come, then once DONE or FAILED (prepare then says why). Bytes
 * are summed over the layers the engine has announced so far; `total`
 * counts only the layers whose size it told. */
typedef enum {
  TPUCI__PULL_STARTED = 0,
  TPUCI__PULL_PROGRESS,
  TPUCI__PULL_DONE,
  TPUCI__PULL_FAILED
} tpuci__pull_phase_t;

typedef struct {
  const char *ref;
  tpuci__pull_phase_t phase;
  uint64_t current;
  uint64_t total;
  int layers;
  uint64_t elapsed_ms; /* since STARTED */
} tpuci__pull_progress_t;

/* How an attempt ended, as the runtime saw it. The scheduler turns it
 * into an outcome (tpuci__classify), adding what it knows itself: that it
 * timed the attempt out or cancelled it. */
typedef struct {
  int exit_code;   /* -1 when there is none */
  int term_signal; /* 0 when none */
  int oom;         /* the engine reports an OOM kill */
  int infra;       /* the runtime failed, not the job */
  /* The machines, not the job: 0, or TPUCI_OUTCOME_PREEMPTED (taken away
   * while it ran) or TPUCI_OUTCOME_NO_CAPACITY (not there to start on);
   * `cause` says how it was seen. Wins over infra. */
  int capacity;
  /* Detail for infra/oom, copied; may be NULL. For a failed exit the
   * runtime's own words when set (a gang: "worker-1: exit 3"). */
  const char *cause;
  /* NULL, or why the attempt's output may lack a part (the engine went
   * away while it ran: what the job printed meanwhile may be lost); the
   * attempt's cause then ends "; log incomplete: <this>". Copied. */
  const char *log_lost;
  /* NULL, or what a gang stopped (its timeout, a cancel) before it was
   * up waited for ("worker-0 could not resolve worker-1"): its jobs
   * never started, and the cause ends "; the gang was not up: <this>".
   * Copied. */
  const char *not_up;
} tpuci__exit_t;

/* What a runtime tells the owner of an attempt (the scheduler), through
 * the attempt's `host`; use the tpuci__attempt_*() wrappers below.
 * `stream` is 1 (stdout) or 2 (stderr). */
typedef struct {
  void (*output)(tpuci__attempt_t *a, int stream, const char *buf, size_t len);
  /* Exactly once; the attempt may be freed from inside. */
  void (*done)(tpuci__attempt_t *a, const tpuci__exit_t *ex);
  /* A note for the user, tied to the attempt ("kept container ..."). */
  void (*message)(tpuci__attempt_t *a, const char *msg);
  /* A file of the attempt's records could not be written (see
   * tpuci__attempt_write_error). */
  void (*write_error)(tpuci__attempt_t *a, const char *path, int err);
} tpuci__attempt_host_t;

struct tpuci__attempt_s {
  /* Read-only for runtimes. */
  const tpuci__attempt_host_t *host;
  uv_loop_t *loop;
  const tpuci__plan_t *plan;
  const tpuci__instance_t *inst;
  size_t index; /* of inst in the plan */
  int number;   /* 1-based */
  const char *run_id;
  /* This attempt's folder: it may not exist yet (the scheduler makes it
   * at the attempt's first output); a runtime that writes files of its
   * own there makes it (tpuci__mkdir_p). */
  const char *dir;
  int keep_on_failure; /* --keep-failed */
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
  /* The exit statuses (bit s for status s, 1 to 31) with which a gang's
   * host that ended on its own lets the others run on to their own end: a
   * pytest attempt's 1 (tests failed) and 5 (none collected), which say
   * pytest ran to its end there. Any other non-zero exit stops the gang;
   * 0: every one does. */
  uint32_t peer_exits;
  /* The runtime's own per-attempt state. */
  void *rt_data;
  /* Scheduler-private fields follow in the scheduler's wrapper of it
   * (core/sched/). */
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
  void *host_data; /* the scheduler's */
  tpuci__err_t err;
  /* Image pulls in prepare() (may be NULL: nobody listens). */
  void (*on_pull)(tpuci__runtime_t *rt, const tpuci__pull_progress_t *p);
};

/* Options a runtime is created with. */
typedef struct {
  const char *run_id;
  int keep_failed;
} tpuci__runtime_opts_t;

/* A runtime driver, as the table in runtime.c lists it. Adding a driver:
 * docs/architecture.md, "Adding a runtime driver". */
typedef struct {
  tpuci__runtime_kind_t kind;
  /* Where the attempt's results folder appears to the job (a mount
   * point in a container), or NULL: at its path on this machine. */
  const char *results_mount;
  /* Whether a multi-host topology can run (a gang of hosts). */
  int gangs;
  /* File descriptors one running host of an attempt holds here at most
   * (its log, pipes or connections), for the cap on concurrency. */
  int fds_per_host;
  /* Creates the runtime on `loop`: 0, or a negative code with err. */
  int (*create)(uv_loop_t *loop, const tpuci__runtime_opts_t *opts, tpuci__runtime_t **out,
                tpuci__err_t *err);
  /* Before anything is made: whether the selected instances of this
   * kind can run, as far as can be told without starting anything.
   * 0, or TPUCI_ESPEC with err ("spec.lua:3: job 'x': ..."). May be
   * NULL. */
  int (*check)(const tpuci__plan_t *plan, tpuci__err_t *err);
  /* `tpuci gc`: removes what dead runs left (unless dry_run), a line per
   * object into `report`; the number removed (or that would be), or a
   * negative code with err. Blocking. May be NULL. */
  int (*gc)(int dry_run, tpuci__buf_t *report, tpuci__err_t *err);
  /* `tpuci doctor`: "ok ...", "warn ...", "FAIL ..." lines into
   * `report` about the plan's instances of this kind (plan may be
   * NULL); 0, or the first failure's code with err. Blocking. May be
   * NULL. */
  int (*doctor)(const tpuci__plan_t *plan, tpuci__buf_t *report, tpuci__err_t *err);
  /* `tpuci gc SPEC`: what dead runs left on the machines the plan names
   * (an ssh runtime's workers), as gc() says it. May be NULL. */
  int (*gc_hosts)(const tpuci__plan_t *plan, int dry_run, tpuci__buf_t *report, tpuci__err_t *err);
  /* The results cache (runtime/inputs.h): for each plan image k that the
   * selected instances of this kind run, its id (ids[k], "sha256:..."),
   * or NULL with why[k] (a new string) when none can be trusted.
   * Blocking; 0, or a negative code with err. NULL: the kind runs no
   * images (local), or cannot tell what its hosts run (ssh). */
  int (*image_ids)(const tpuci__plan_t *plan, char **ids, char **why, tpuci__err_t *err);
  /* Whether every host of a gang runs on one machine (one engine's): a
   * gang on real TPU hardware cannot, each host being a TPU VM. */
  int one_machine;
} tpuci__driver_t;

/* The driver of `kind`, or NULL. */
const tpuci__driver_t *tpuci__driver(tpuci__runtime_kind_t kind);

/* Creates the runtime for `kind` on `loop`. Returns 0 or a negative code
 * with err filled. */
int tpuci__runtime_new(tpuci__runtime_kind_t kind, uv_loop_t *loop,
                       const tpuci__runtime_opts_t *opts, tpuci__runtime_t **out,
                       tpuci__err_t *err);

/* Every driver's check() for the kinds the plan's selected instances
 * use. 0, or the first failure. */
int tpuci__runtime_check(const tpuci__plan_t *plan, tpuci__err_t *err);

/* Every driver's gc() (with a plan: of the drivers its selected jobs
 * use, and their gc_hosts()), or doctor(), in the table's order; the sum
 * of what gc() counted, or the first failure. */
int tpuci__runtime_gc(const tpuci__plan_t *plan, int dry_run, tpuci__buf_t *report,
                      tpuci__err_t *err);
int tpuci__runtime_doctor(const tpuci__plan_t *plan, tpuci__buf_t *report, tpuci__err_t *err);

/* The drivers' entry points, for the table (each driver's own files
 * define them). */
int tpuci__runtime_local_new(uv_loop_t *loop, const tpuci__runtime_opts_t *opts,
                             tpuci__runtime_t **out, tpuci__err_t *err);
int tpuci__runtime_docker_new(uv_loop_t *loop, const tpuci__runtime_opts_t *opts,
                              tpuci__runtime_t **out, tpuci__err_t *err);
int tpuci__runtime_docker_check(const tpuci__plan_t *plan, tpuci__err_t *err);
int tpuci__runtime_docker_gc(int dry_run, tpuci__buf_t *report, tpuci__err_t *err);
int tpuci__runtime_docker_doctor(const tpuci__plan_t *plan, tpuci__buf_t *report,
                                 tpuci__err_t *err);
int tpuci__runtime_docker_image_ids(const tpuci__plan_t *plan, char **ids, char **why,
                                    tpuci__err_t *err);

/* A build context over this is refused: add a .dockerignore. */
#define TPUCI__BUILD_CONTEXT_MAX_BYTES ((uint64_t) 1 << 30)

/* What a build gave (tpuci__runtime_docker_build). */
typedef struct {
  char *id;       /* "sha256:...", owned */
  int steps;      /* the Dockerfile's steps the engine ran, FROM aside */
  int cached;     /* of which its layer cache gave */
  size_t files;   /* files in the context sent */
  uint64_t bytes; /* their size */
  int log_error;  /* errno of a failed write of the log, or 0 */
} tpuci__docker_built_t;

/* Builds `img` (its `build`) on the engine DOCKER_HOST names, tagged with
 * its ref, writing the engine's output to `log_path`. Blocks. 0 with
 * out->id, or TPUCI_ESPEC (the context or Dockerfile), TPUCI_EIMAGE (a
 * step failed: its line and the engine's message), TPUCI_EENGINE (no
 * engine) or TPUCI_EIO (the log), with a one-line err naming the image's
 * spec line. */
int tpuci__runtime_docker_build(const tpuci__image_t *img, const char *log_path,
                                tpuci__docker_built_t *out, tpuci__err_t *err);
/* Before a run, of the images the spec builds that the selected
 * instances of `kind` run: for docker, that each context is a folder and
 * its Dockerfile is there; a swarm job on one is refused (its nodes would
 * not have it). 0, or TPUCI_ESPEC with err naming the spec's line. */
int tpuci__docker_build_check(const tpuci__plan_t *plan, tpuci__runtime_kind_t kind,
                              tpuci__err_t *err);
int tpuci__runtime_swarm_new(uv_loop_t *loop, const tpuci__runtime_opts_t *opts,
                             tpuci__runtime_t **out, tpuci__err_t *err);
int tpuci__runtime_swarm_check(const tpuci__plan_t *plan, tpuci__err_t *err);
int tpuci__runtime_swarm_gc(int dry_run, tpuci__buf_t *report, tpuci__err_t *err);
int tpuci__runtime_swarm_doctor(const tpuci__plan_t *plan, tpuci__buf_t *report, tpuci__err_t *err);
int tpuci__runtime_swarm_image_ids(const tpuci__plan_t *plan, char **ids, char **why,
                                   tpuci__err_t *err);
int tpuci__runtime_ssh_new(uv_loop_t *loop, const tpuci__runtime_opts_t *opts,
                           tpuci__runtime_t **out, tpuci__err_t *err);
int tpuci__runtime_ssh_doctor(const tpuci__plan_t *plan, tpuci__buf_t *report, tpuci__err_t *err);
int tpuci__runtime_ssh_gc(const tpuci__plan_t *plan, int dry_run, tpuci__buf_t *report,
                          tpuci__err_t *err);

/* Called by runtimes: through the attempt's host. */
static inline void tpuci__attempt_output(tpuci__attempt_t *a, int stream, const char *buf,
                                         size_t len) {
  a->host->output(a, stream, buf, len);
}
static inline void tpuci__attempt_done(tpuci__attempt_t *a, const tpuci__exit_t *ex) {
  a->host->done(a, ex);
}
static inline void tpuci__attempt_message(tpuci__attempt_t *a, const char *msg) {
  a->host->message(a, msg);
}
/* A file of the attempt's records (a log) could not be written: the user
 * is told, and the run's records count as incomplete. Call it once per
 * file; `err` is a negative code. */
static inline void tpuci__attempt_write_error(tpuci__attempt_t *a, const char *path, int err) {
  a->host->write_error(a, path, err);
}

/* Where containers see an attempt's results folder. */
#define TPUCI__RESULTS_MOUNT "/tpuci/results"

/* Environment variables every attempt gets from tpuci, in addition to the
 * instance's env: TPUCI=1, TPUCI_RESULTS (when the attempt has a results
 * folder), TPUCI_RUN_ID, TPUCI_JOB, TPUCI_INSTANCE,
 * TPUCI_ATTEMPT, TPUCI_MAX_ATTEMPTS and TPUCI_MATRIX_<KEY> for each matrix
 * value (key upper-cased, non-alphanumerics as '_'). Appends "K=V" strings
 * to `out`, then the instance's env. */
void tpuci__attempt_env(const tpuci__attempt_t *a, tpuci__strv_t *out);

/* The whole environment of host `host` of an attempt: tpuci__attempt_env()
 * then tpuci__topology_host_env(), as "K=V" strings. With s == NULL, just
 * tpuci__attempt_env(). 0 or TPUCI_EUSAGE. */
int tpuci__attempt_host_env(const tpuci__attempt_t *a, const tpuci__slice_t *s, int host,
                            tpuci__strv_t *out, tpuci__err_t *err);
/* The same with the gang's hosts named `hostnames` (s->hosts names in
 * worker order, or NULL: "worker-<i>"): a slice's real workers, whose
 * addresses become TPU_WORKER_HOSTNAMES and MASTER_ADDR. */
int tpuci__attempt_host_env_named(const tpuci__attempt_t *a, const tpuci__slice_t *s, int host,
                                  const char *const *hostnames, tpuci__strv_t *out,
                                  tpuci__err_t *err);

#endif /* TPUCI_RUNTIME_H */
