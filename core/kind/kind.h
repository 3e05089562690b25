/* core/kind/: job kinds. A kind says what an instance's processes run
 * and what their results are; the scheduler (core/sched/) runs the
 * processes (slots, the queue, timeouts, retries, the deadline, signals)
 * and calls every kind through the operations table below, as it calls
 * runtimes through runtime.h's driver table: it names no kind. The table
 * is filled by a kind's own folder: `command` (kind/command.c: the
 * instance's command, after the device check when it asks for one:
 * kind/devices.h) and `pytest` (core/kind/pytest/kind.c: shard groups and
 * their collection, per-test results, retries of the failed tests, the
 * failing-first process, order checks). Adding a kind:
 * docs/architecture.md, "Adding a job kind".
 *
 * What the scheduler keeps of a run is declared here too (the results
 * of attempts and instances), so that a kind fills its part of them
 * without the scheduler knowing what they mean. May use core/runtime/,
 * core/plan/ and core/base/. */
#ifndef TPUCI_KIND_H
#define TPUCI_KIND_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/util.h"
#include "plan/plan.h"
#include "runtime/runtime.h"

/* ------------------------------------------------------------------ */
/* Results                                                             */

/* What is kept of one finished process. */
typedef struct {
  tpuci_outcome_t outcome;
  int exit_code;
  int term_signal;
  uint64_t start_ms;
  uint64_t duration_ms;
  char *cause;
  char *log_path;
} tpuci__attempt_result_t;

/* What the scheduler keeps of an instance: its attempts and its final
 * outcome, which every kind has, and what its kind keeps beyond them
 * (the pytest kind's per-test results, its failing-first process and
 * order checks: tpuci__pytest_result_t, kind/pytest/kind.h), which only
 * that kind reads and writes, and frees through kind_free. */
typedef struct {
  tpuci_outcome_t outcome; /* final; NONE while pending */
  tpuci__attempt_result_t *attempts;
  size_t nattempts;
  void *kind_data;                    /* the kind's own, or NULL */
  void (*kind_free)(void *kind_data); /* frees kind_data */
} tpuci__instance_result_t;

void tpuci__attempt_result_free(tpuci__attempt_result_t *r);
/* Frees what an instance's result holds: its attempts and its kind's
 * data. */
void tpuci__instance_result_free(tpuci__instance_result_t *r);

/* The folders an attempt's hosts wrote into its results folder
 * `results_dir`: for a gang its worker-<i> folders (host 0 first), else
 * `results_dir` itself; appended to `out`. */
void tpuci__results_host_dirs(const char *results_dir, tpuci__strv_t *out);
/* The first host's (tpuci__results_host_dirs order) string `key` of the
 * JSON object in `file` of its folder, cut to `max` bytes (what a host
 * wrote is bounded here), or NULL when no host's file says it. New. */
char *tpuci__results_first_string(const char *results_dir, const char *file, const char *key,
                                  size_t max);

/* ------------------------------------------------------------------ */
/* Processes                                                           */

/* What a process of an instance is to the scheduler. */
typedef enum {
  TPUCI__PROC_ATTEMPT = 0, /* one of its attempts */
  TPUCI__PROC_STEP,        /* its group's step, which the group's parts
                               wait for (a shard group's collection) */
  TPUCI__PROC_SIDE_FIRST,  /* besides its attempts, started before the
                               queue's (the failing-first process) */
  TPUCI__PROC_SIDE_LAST    /* besides its attempts, once the queue is
                               empty (an order check) */
} tpuci__proc_role_t;

/* A process as a kind sees it. The scheduler fills the first part; the
 * kind's prepare() fills the second. */
typedef struct {
  size_t index; /* the instance */
  int group;    /* its group (tpuci__kind_t.group), or -1 */
  tpuci__proc_role_t role;
  int number; /* an attempt's number (1-based); 0 otherwise */
  int hosts;
  const char *dir; /* its folder in the run folder (the instance's,
                               or the group's for a step) */
  uint64_t start_ms;
  /* Filled by prepare(): */
  tpuci__strv_t argv;       /* empty: the instance's command */
  char *log_name;           /* its log in `dir`; NULL: "attempt-N.log" */
  char *results_dir;        /* a folder of `dir` it writes results into, or NULL */
  const char *results_path; /* where the process sees it */
  uint32_t peer_exits;      /* runtime.h's */
  void *data;               /* the kind's own, freed by release() */
} tpuci__kind_proc_t;

/* How a process ended, for ended() and step_done(). */
typedef struct {
  tpuci_outcome_t outcome; /* the scheduler's classification */
  const tpuci__exit_t *exit;
  uint64_t duration_ms;
  const char *log_path;     /* NULL: it printed nothing */
  const char *log_problem;  /* the log is incomplete (why), or NULL */
  const char *timeout_text; /* "timed out after 20m", for a timeout */
} tpuci__proc_end_t;

/* A part of a group that runs nothing (outcome, cause). */
typedef struct {
  tpuci_outcome_t outcome;
  char *cause; /* new string */
} tpuci__part_skip_t;

/* ------------------------------------------------------------------ */
/* What the scheduler does for a kind                                  */

typedef struct {
  void *sched;
  void (*message)(void *sched, const char *msg);
  /* A test of a running process failed (TPUCI_EVENT_TEST_FAILED). */
  void (*test_failed)(void *sched, const tpuci__kind_proc_t *p, const char *test,
                      const char *message);
  /* Queues a process besides the instance's attempts (SIDE_FIRST or
   * SIDE_LAST): it runs with one slot, and the instance finishes only
   * once it ended (settle() is asked again then). */
  void (*side)(void *sched, size_t index, tpuci__proc_role_t role);
  /* Stops the instance's running processes of `role` (as a cancel
   * stops an attempt: "stopped: its instance's attempts were over"). */
  void (*side_stop)(void *sched, size_t index, tpuci__proc_role_t role);
  /* Whether the run is being stopped (cancel, fail-fast, deadline). */
  int (*stopping)(void *sched);
} tpuci__kind_host_t;

/* ------------------------------------------------------------------ */
/* The operations table                                                */

/* A kind's state for one run (its own type), made by the kind's own
 * constructor (which takes what the kind needs: the plan, the results,
 * its records) before the scheduler starts, and freed after. */
typedef struct tpuci__kind_run_s tpuci__kind_run_t;

/* Every operation but `name` and `claims` may be NULL: then the scheduler
 * does what the command kind does (the instance's command, its exit
 * status, every attempt the same). */
typedef struct {
  const char *name;
  /* Whether this kind runs instance `inst`. The scheduler takes the
   * first kind of its list that claims an instance. */
  int (*claims)(const tpuci__instance_t *inst);
  /* Before anything is made: whether the instance can run with `hosts`
   * hosts. 0, or TPUCI_EUSAGE with err. */
  int (*check)(const tpuci__plan_t *plan, const tpuci__instance_t *inst, int hosts,
               tpuci__err_t *err);
  /* When the scheduler starts: its services. */
  void (*attach)(tpuci__kind_run_t *kr, const tpuci__kind_host_t *host);

  /* Groups: instances that share a step before their first attempts.
   * The name of instance i's group (a new string), or NULL. */
  char *(*group)(tpuci__kind_run_t *kr, size_t i);
  /* Once per group `g` (the scheduler's number for it) at the start,
   * with its members in plan order: 1 when it is ready without its step
   * (from a record), 0 when its step must run first. */
  int (*group_begin)(tpuci__kind_run_t *kr, int g, const char *name, const size_t *members,
                     size_t n);
  /* The step ended: 0 when the group is ready, else a failure every part
   * takes (*outcome, *cause: a new string). */
  int (*step_done)(tpuci__kind_run_t *kr, int g, const tpuci__kind_proc_t *p,
                   const tpuci__proc_end_t *end, tpuci_outcome_t *outcome, char **cause);
  /* A part of a ready group before its first attempt: 0 it runs, 1 it
   * finishes without running (out filled). Asked again until it runs. */
  int (*part)(tpuci__kind_run_t *kr, size_t index, tpuci__part_skip_t *out);

  /* The instance may start (at the start; a part once its group is
   * ready): the kind may queue processes besides its attempts. */
  void (*ready)(tpuci__kind_run_t *kr, size_t index);
  /* Before a process starts: fills p's second part. 0, or a negative
   * code with *cause (a new string): it ends as infra. */
  int (*prepare)(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p, char **cause);
  /* While it runs, at most once a second: says what it saw (failed
   * tests through the host), and returns what it is doing now ("the test
   * each host is in"; NULL: nothing to say; kept by the kind until the
   * next call or release()) and since when (*since_ms). */
  const char *(*poll)(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p, uint64_t now_ms,
                      uint64_t *since_ms);
  /* A process (not a step) ended: for an attempt, its outcome from the
   * kind's results (*cause may be replaced: free the old one); for a
   * process besides the attempts, what it found. */
  tpuci_outcome_t (*ended)(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p,
                           const tpuci__proc_end_t *end, char **cause);
  /* Frees p->data, argv, log_name and results_dir. */
  void (*release)(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p);
  /* An attempt failed and its policy wants another: 0 it runs (what it
   * runs is the kind's to say), -1 nothing is left to run. */
  int (*retry)(tpuci__kind_run_t *kr, size_t index);
  /* The instance's attempts are over (or a process besides them ended
   * since): 1 when it still waits for processes besides them (queued or
   * stopped through the host), 0 when it may finish. `dropped`: its
   * queued processes besides the attempts will not run (the run stops). */
  int (*settle)(tpuci__kind_run_t *kr, size_t index, int dropped);
  /* Its final outcome, from what its attempts' outcomes give. */
  tpuci_outcome_t (*outcome)(tpuci__kind_run_t *kr, size_t index, tpuci_outcome_t o);
} tpuci__kind_t;

/* What a kind's state for one run is made from (kinds.h, run_new): the
 * plan, where the instances' results go, and what the run read of its
 * records across runs. A kind takes what it needs (the command kind the
 * plan; the pytest kind all of it). Borrowed for the run. */
typedef struct tpuci__timings_s tpuci__timings_t;
typedef struct tpuci__collections_s tpuci__collections_t;
typedef struct {
  const tpuci__plan_t *plan;
  tpuci__instance_result_t *results;
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
  /* Per instance, those of them that failed in each of their last runs
   * (kind/pytest/flaky.h, TPUCI__FLAKY_STEADY_RUNS): a retry of only
   * those is not run unless pytest.retry_steady; or NULL. Borrowed. */
  tpuci__strv_t *const *steady;
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
} tpuci__kind_args_t;

/* A kind and its state for one run, as the scheduler is given them. */
typedef struct {
  const tpuci__kind_t *ops;
  tpuci__kind_run_t *run;
} tpuci__kind_binding_t;

/* The command kind (kind/command.c): claims every instance. Its state for
 * a run is the plan, for the device check of an instance with
 * expect_devices (kind/devices.h); bound without one (NULL, as the
 * scheduler's own fallback is) its attempts run their command alone. */
extern const tpuci__kind_t tpuci__kind_command;
tpuci__kind_run_t *tpuci__command_kind_new(const tpuci__kind_args_t *a);
void tpuci__command_kind_free(tpuci__kind_run_t *kr);

#endif /* TPUCI_KIND_H */
