/* The scheduler's own parts, shared by its files: the run (scheduler.c:
 * the queue, slots, backfill, stopping, signals, the end), processes
 * (attempt.c: starting one on its runtime, timeouts, its log, what it
 * left, retries), and groups and processes besides the attempts
 * (group.c: a group's step that its parts wait for, the queue of side
 * processes, an instance's end). What each process runs and means is its
 * kind's (kind/kind.h). Nothing outside core/sched/ includes this. */
#ifndef TPUCI_SCHED_INTERNAL_H
#define TPUCI_SCHED_INTERNAL_H

#include "sched/scheduler.h"

#define TPUCI__DEFAULT_GRACE_MS 5000

/* File descriptors one slot holds while its attempt runs come from the
 * runtime driver's table (runtime/runtime.c, fds_per_host; docs/cli.md,
 * -j). The rest of the process: stdio, the loop, signals, the engine client,
 * a process being spawned (4 more for a moment), reports being written. */
#define TPUCI__FDS_RESERVE 64

typedef enum {
  TPUCI__STOP_NONE = 0,
  TPUCI__STOP_INTERRUPT, /* a signal or tpuci_cancel() */
  TPUCI__STOP_FAIL_FAST,
  TPUCI__STOP_DEADLINE
} tpuci__stop_t;

/* The run's life: one state, moved only by scheduler.c's
 * tpuci__sched_set(), which checks each move against its table.
 *   PREPARING -> RUNNING    every runtime's prepare() answered
 *   PREPARING -> STOPPING   stopped (or a prepare() failed) first
 *   RUNNING   -> STOPPING   tpuci__stop(): why is in `stop`
 *   RUNNING, STOPPING -> CLOSING   nothing runs or waits: the loop's
 *                                  handles and the runtimes close
 *   CLOSING   -> FINISHED   all closed: RUN_FINISHED was told */
typedef enum {
  TPUCI__SCHED_PREPARING = 0, /* runtimes are checked: nothing starts */
  TPUCI__SCHED_RUNNING,       /* pump() starts what fits */
  TPUCI__SCHED_STOPPING,      /* nothing new starts; what runs is stopped */
  TPUCI__SCHED_CLOSING,
  TPUCI__SCHED_FINISHED
} tpuci__sched_state_t;

/* A process besides an instance's attempts, waiting for a slot. */
typedef struct {
  size_t index;
  tpuci__proc_role_t role;
} tpuci__side_t;

/* The scheduler's view of a process. `a` comes first so the runtime's
 * tpuci__attempt_t * converts back. */
typedef struct tpuci__satt_s {
  tpuci__attempt_t a;
  tpuci__sched_t *s;
  tpuci__kind_proc_t kp; /* what its kind sees and says of it */
  const tpuci__kind_binding_t *kind;
  char *dir;
  char *log_path;
  int log_fd;
  int log_errno;  /* first write error, reported in the cause */
  int log_opened; /* the log was asked for (the first output) */
  int log_made;   /* and it exists */
  uint64_t start_ms;
  uint64_t start_hr;
  uv_timer_t timeout_timer;
  uv_timer_t grace_timer;
  uv_timer_t idle_timer; /* idle_timeout: armed for the quiet left */
  uint64_t last_output;  /* loop time of the last output (or start) */
  int closing;           /* timers being closed: count of pending */
  int timed_out;
  int idle_timed_out;    /* the timeout was idle_timeout's */
  uint64_t out_bytes;    /* output so far */
  uint64_t polled_ms;    /* tpuci__now_ms() of the kind's last look */
  const char *live_text; /* what the last look said (the kind's), or NULL */
  uint64_t live_since_ms;
  int cancelled;
  int term_sent;
  int kill_sent;
  int finished;
  int superseded; /* stopped because its instance's attempts were
                              over (tpuci__kind_host_t.side_stop) */
  int backfilled; /* started past a waiting head (bf_gen's) */
  unsigned bf_gen;
  struct tpuci__satt_s *prev, *next; /* the scheduler's running list */
} tpuci__satt_t;

/* A group: instances whose first attempts wait for one step of theirs
 * (kind/kind.h, group). */
typedef enum {
  TPUCI__GROUP_NEW = 0,  /* its step has not started */
  TPUCI__GROUP_STEPPING, /* its step runs; its parts wait */
  TPUCI__GROUP_READY,    /* its parts may start */
  TPUCI__GROUP_FAILED    /* its step failed: every part ends so */
} tpuci__group_state_t;

typedef struct {
  char *name;
  tpuci__group_state_t state;
  const tpuci__kind_binding_t *kind;
  size_t *waiting; /* parts dequeued while its step ran */
  size_t nwaiting;
  char *cause;             /* FAILED: why, for each part */
  tpuci_outcome_t outcome; /* FAILED: the parts' outcome */
  char *log_path;          /* the step's log */
} tpuci__group_t;

/* An instance waiting for its retry backoff. */
typedef struct tpuci__wait_s {
  uv_timer_t timer;
  tpuci__sched_t *s;
  size_t index;
  struct tpuci__wait_s *prev, *next;
} tpuci__wait_t;

struct tpuci__sched_s {
  uv_loop_t *loop;
  const tpuci__plan_t *plan;
  tpuci__instance_result_t *results;
  tpuci__sched_opts_t opts;
  char *run_id;
  char *run_dir;
  tpuci__kind_host_t kind_host;
  const tpuci__kind_binding_t **kind_of; /* per instance */

  tpuci__runtime_t *rts[TPUCI__RUNTIME__COUNT];
  tpuci__sched_state_t state; /* the run's life (tpuci__sched_set) */
  /* A count, not a state: runtimes whose prepare() has not answered
   * (PREPARING ends when it is 0). */
  int preparing;

  size_t *queue; /* ring buffer of instance indices */
  size_t qcap, qhead, qlen;
  int *next_attempt;  /* per instance, 1-based */
  int *capacity_used; /* per instance: its retries.capacity retries */
  int *group_of;      /* per instance: index into groups, or -1 */
  tpuci__group_t *groups;
  size_t ngroups;
  tpuci__wait_t *waits; /* instances waiting for a retry */
  /* Processes besides the attempts (group.c): a FIFO whose SIDE_FIRST
   * ones start before the queue and SIDE_LAST ones once it is empty;
   * per instance, how many are queued or running, whether its attempts
   * are over, whether it finished. */
  tpuci__side_t *side;
  size_t nside, side_cap;
  int *sides_open;
  unsigned char *main_done;
  unsigned char *settled;

  int slots;
  int running;
  tpuci__satt_t *running_list;
  /* Backfill (scheduler.c, tpuci__backfill): the head that waits for
   * slots (SIZE_MAX: none), the slots free when it began to wait and not
   * taken by backfilled attempts since, the generation of that wait. */
  size_t bf_head;
  int bf_budget;
  unsigned bf_gen;
  int bf_starting; /* the attempt being started is backfilled */
  /* Facts, not states of the run: pump() is on the stack (it is not
   * entered again, and the run does not end under it), whatever the
   * state. */
  int in_pump;

  /* Why the run stopped (the first reason; STOPPING and any later state
   * may have one or none), whether a stop was forced (killing at once),
   * and a count of the handles and runtimes still closing (CLOSING ends
   * when it is 0). */
  tpuci__stop_t stop;
  int force;
  int closing;

  uv_timer_t deadline_timer;
  uv_timer_t tick_timer;
  uv_timer_t poll_timer; /* what running processes say as they run */
  uv_signal_t sigint;
  uv_signal_t sigterm;
  /* Facts: the signal handles were made (they are closed with the rest),
   * and how many signals came (the second forces the stop). */
  int signals_on;
  int signal_count;

  char *error;
  int error_code;
};

/* scheduler.c */
void tpuci__pump(tpuci__sched_t *s);
void tpuci__drain(tpuci__sched_t *s);
void tpuci__check_finished(tpuci__sched_t *s);
void tpuci__stop(tpuci__sched_t *s, tpuci__stop_t why, int force);
void tpuci__emit(tpuci__sched_t *s, tpuci_event_t *ev);
void tpuci__emit_message(tpuci__sched_t *s, const char *msg);
void tpuci__queue_push(tpuci__sched_t *s, size_t index);
size_t tpuci__queue_pop(tpuci__sched_t *s);
tpuci__attempt_result_t *tpuci__result_add(tpuci__instance_result_t *r);
void tpuci__instance_finish(tpuci__sched_t *s, size_t index);

/* attempt.c */
uint64_t tpuci__grace(const tpuci__sched_t *s, const tpuci__instance_t *inst);
tpuci__runtime_t *tpuci__rt(const tpuci__satt_t *t);
void tpuci__attempt_stop(tpuci__satt_t *t, int force);
void tpuci__timeout_text(const tpuci__satt_t *t, tpuci__buf_t *b);
/* Starts a process of instance `index` in `role` (an attempt, its group's
 * step, a process besides its attempts). A failure to start is recorded
 * as an infra failure of it. */
void tpuci__attempt_start(tpuci__sched_t *s, size_t index, tpuci__proc_role_t role);
void tpuci__attempt_synthetic(tpuci__sched_t *s, size_t index, tpuci_outcome_t o, const char *cause,
                              const char *log_path);
void tpuci__wait_remove(tpuci__sched_t *s, tpuci__wait_t *w);
void tpuci__attempt_report(tpuci__sched_t *s, size_t index, int number,
                           const tpuci__attempt_result_t *res);
void tpuci__poll_all(tpuci__sched_t *s);

/* group.c */
void tpuci__groups_build(tpuci__sched_t *s);
void tpuci__groups_free(tpuci__sched_t *s);
void tpuci__step_done(tpuci__sched_t *s, tpuci__satt_t *t, const tpuci__proc_end_t *end);
int tpuci__side_start(tpuci__sched_t *s, tpuci__proc_role_t role);
size_t tpuci__side_count(const tpuci__sched_t *s, tpuci__proc_role_t role);
void tpuci__side_drain(tpuci__sched_t *s);
void tpuci__side_done(tpuci__sched_t *s, size_t index);
void tpuci__side_host(tpuci__sched_t *s);
/* The instance's attempts are over: it finishes once its kind lets it. */
void tpuci__instance_settle(tpuci__sched_t *s, size_t index);

#endif /* TPUCI_SCHED_INTERNAL_H */
