/* The scheduler's own parts, shared by its files: the run (scheduler.c:
 * the queue, slots, stopping, signals, the end), attempts (attempt.c:
 * starting one on its runtime, timeouts, what it left, retries) and
 * pytest shard groups (shards.c). Nothing outside core/sched/ includes
 * this. */
#ifndef TPUCI_SCHED_INTERNAL_H
#define TPUCI_SCHED_INTERNAL_H

#include "pytest/live.h"
#include "pytest/order.h"
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

/* What an attempt of the scheduler's is: one of an instance's attempts,
 * a shard group's collection, or a process of an instance's besides its
 * attempts (order.c): its failing-first process (the tests that failed
 * last time, in a process of their own that starts first) or an order
 * check (a test run again after some of the tests that ran before it). */
enum { TPUCI__ATT_MAIN = 0, TPUCI__ATT_COLLECT = 1, TPUCI__ATT_FIRST, TPUCI__ATT_CHECK };

/* A process of an instance's besides its attempts, waiting for a slot:
 * these start before the queue's attempts. */
typedef struct {
  size_t index;
  int kind;
} tpuci__side_t;

/* The order checks of one instance (order.c): its cases, the search of
 * the one being checked, the processes they took. */
typedef struct {
  tpuci__order_cases_t cases;
  size_t at;
  tpuci__order_search_t search;
  int procs;
  int searching;
  tpuci__strv_t running;  /* what the running check runs */
} tpuci__ochecks_t;

/* The scheduler's view of an attempt. `a` comes first so the runtime's
 * tpuci__attempt_t * converts back. */
typedef struct tpuci__satt_s {
  tpuci__attempt_t a;
  tpuci__sched_t *s;
  char *dir;
  char *log_path;
  int log_fd;
  int log_errno;           /* first write error, reported in the cause */
  int log_opened;          /* the log was asked for (the first output) */
  int log_made;            /* and it exists */
  uint64_t start_ms;
  uint64_t start_hr;
  uv_timer_t timeout_timer;
  uv_timer_t grace_timer;
  uv_timer_t idle_timer;   /* idle_timeout: armed for the quiet left */
  uint64_t last_output;    /* loop time of the last output (or start) */
  int closing;             /* timers being closed: count of pending */
  int timed_out;
  int idle_timed_out;      /* the timeout was idle_timeout's */
  uint64_t out_bytes;      /* output so far */
  tpuci__live_t live;      /* pytest: the test each host is in */
  int has_live;
  uint64_t live_polled_ms; /* tpuci__now_ms() of the last look at it */
  char *live_text;         /* what the last look said (or NULL) */
  uint64_t live_since_ms;
  int cancelled;
  int term_sent;
  int kill_sent;
  int finished;
  int collect;             /* collects a shard group's tests: no results */
  int kind;                /* TPUCI__ATT_* */
  int superseded;          /* a failing-first process stopped because its
                              instance's attempts were over */
  tpuci__strv_t argv_own;  /* the attempt's command, when not the plan's */
  char *results_dir;       /* pytest: this attempt's results folder */
  int backfilled;          /* started past a waiting head (bf_gen's) */
  unsigned bf_gen;
  struct tpuci__satt_s *prev, *next; /* the scheduler's running list */
} tpuci__satt_t;

/* Shards of one pytest job instance, which share one collection. */
enum { TPUCI__GROUP_NEW = 0, TPUCI__GROUP_COLLECTING, TPUCI__GROUP_READY,
       TPUCI__GROUP_FAILED };

typedef struct {
  char *name;
  int state;
  size_t *waiting;         /* shards dequeued while collecting */
  size_t nwaiting;
  tpuci__shard_plan_t plan;
  char *cause;             /* FAILED: why, for each shard */
  tpuci_outcome_t outcome; /* FAILED: the shards' outcome (or PASSED when
                              nothing was collected and that is allowed) */
  char *log_path;          /* the collection's log */
  char *key;               /* tpuci__collection_key() of its shards */
  int from_record;         /* split from the last run's collection */
  int told;                /* the split was said */
  /* Each shard collects the suite itself and keeps its part (the
   * bootstrap's assignment, per shard); 0: the shards run node ids. */
  int filter;
  char **assign;
  tpuci__strv_t ids;       /* what the collection pass listed */
  /* The first shard's whole collection (tpuci__pytest_suite_seen), which
   * every other shard's must equal. */
  int seen;
  unsigned long seen_count, seen_crc;
  size_t seen_by;          /* that shard's instance */
  int warned;
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

  tpuci__runtime_t *rts[TPUCI__RUNTIME__COUNT];
  int preparing;           /* runtimes whose prepare() has not answered */
  int started;             /* pump() may start attempts */

  size_t *queue;           /* ring buffer of instance indices */
  size_t qcap, qhead, qlen;
  int *next_attempt;       /* per instance, 1-based */
  tpuci__strv_t **select;  /* pytest: node ids the next attempt runs */
  int *group_of;           /* pytest shards: index into groups, or -1 */
  tpuci__group_t *groups;
  size_t ngroups;
  tpuci__wait_t *waits;    /* instances waiting for a retry */
  /* Processes besides the attempts (order.c): a FIFO whose failing-first
   * processes start before the queue, its order checks once the queue is
   * empty (extra work goes last); per instance, its failing-first process's tests and
   * whether it is still to end, whether its attempts are over (it
   * finishes once the rest is), whether it finished, its order checks. */
  tpuci__side_t *side;
  size_t nside, side_cap;
  tpuci__strv_t **first;
  unsigned char *first_pending;
  unsigned char *main_done;
  unsigned char *settled;
  tpuci__ochecks_t **ochecks;
  int order_procs;         /* order checks started in the run */
  uint64_t order_ms;       /* and the time they took together */

  int slots;
  int running;
  tpuci__satt_t *running_list;
  /* Backfill (scheduler.c, tpuci__backfill): the head that waits for
   * slots (SIZE_MAX: none), the slots free when it began to wait and not
   * taken by backfilled attempts since, the generation of that wait. */
  size_t bf_head;
  int bf_budget;
  unsigned bf_gen;
  int bf_starting;         /* the attempt being started is backfilled */
  int in_pump;

  tpuci__stop_t stop;
  int force;
  int finishing;
  int closing;             /* handles and runtimes still closing */

  uv_timer_t deadline_timer;
  uv_timer_t tick_timer;
  uv_timer_t progress_timer; /* pytest failures said as they happen */
  uv_signal_t sigint;
  uv_signal_t sigterm;
  int signals_on;
  int signal_count;

  char *error;
  int error_code;
};

void tpuci__pump(tpuci__sched_t *s);
void tpuci__drain(tpuci__sched_t *s);
void tpuci__check_finished(tpuci__sched_t *s);
void tpuci__stop(tpuci__sched_t *s, tpuci__stop_t why, int force);
void tpuci__emit(tpuci__sched_t *s, tpuci_event_t *ev);
void tpuci__emit_message(tpuci__sched_t *s, const char *msg);
void tpuci__rt_message(tpuci__runtime_t *rt, const char *msg);
void tpuci__queue_push(tpuci__sched_t *s, size_t index);
size_t tpuci__queue_pop(tpuci__sched_t *s);
tpuci__attempt_result_t *tpuci__result_add(tpuci__instance_result_t *r);
void tpuci__instance_finish(tpuci__sched_t *s, size_t index);
uint64_t tpuci__grace(const tpuci__sched_t *s, const tpuci__instance_t *inst);
tpuci__runtime_t *tpuci__rt(const tpuci__satt_t *t);
void tpuci__attempt_stop(tpuci__satt_t *t, int force);
void tpuci__timeout_text(const tpuci__satt_t *t, tpuci__buf_t *b);
void tpuci__attempt_start(tpuci__sched_t *s, size_t index, int kind);
void tpuci__collect_done(tpuci__sched_t *s, tpuci__satt_t *t, tpuci_outcome_t o, const tpuci__exit_t *ex);
void tpuci__shard_start(tpuci__sched_t *s, size_t index);
void tpuci__shard_seen(tpuci__sched_t *s, size_t index, const char *results_dir);
void tpuci__progress_tell(tpuci__sched_t *s, tpuci__satt_t *t);
void tpuci__progress_poll(tpuci__sched_t *s);
void tpuci__attempt_synthetic(tpuci__sched_t *s, size_t index, tpuci_outcome_t o, const char *cause, const char *log_path);
void tpuci__groups_build(tpuci__sched_t *s);
void tpuci__group_unplan(tpuci__group_t *g);
void tpuci__wait_remove(tpuci__sched_t *s, tpuci__wait_t *w);
void tpuci__schedule_retry(tpuci__sched_t *s, size_t index, int next);
void tpuci__attempt_unlink(tpuci__sched_t *s, tpuci__satt_t *t);
void tpuci__attempt_report(tpuci__sched_t *s, size_t index, int number, const tpuci__attempt_result_t *res);
void tpuci__attempt_next(tpuci__sched_t *s, size_t index, int number, tpuci_outcome_t o);

/* order.c: the failing-first process, order checks, an instance's end. */
void tpuci__first_queue(tpuci__sched_t *s, size_t index, const tpuci__strv_t *among);
void tpuci__first_group(tpuci__sched_t *s, size_t gi);
/* Both take `cause` (tpuci__cause()'s). */
void tpuci__first_done(tpuci__sched_t *s, tpuci__satt_t *t, tpuci_outcome_t o,
                       const tpuci__exit_t *ex, uint64_t duration, char *cause);
void tpuci__check_done(tpuci__sched_t *s, tpuci__satt_t *t, tpuci_outcome_t o,
                       uint64_t duration, char *cause);
char *tpuci__cause(const tpuci__satt_t *t, tpuci_outcome_t o, const tpuci__exit_t *ex);
void tpuci__instance_settle(tpuci__sched_t *s, size_t index);
int tpuci__side_start(tpuci__sched_t *s, int kind);
size_t tpuci__side_count(const tpuci__sched_t *s, int kind);
void tpuci__side_drain(tpuci__sched_t *s);
void tpuci__side_only(const tpuci__sched_t *s, const tpuci__satt_t *t, tpuci__strv_t *out);
void tpuci__side_free(tpuci__sched_t *s);

#endif /* TPUCI_SCHED_INTERNAL_H */
