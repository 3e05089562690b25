/* The scheduler.
 *
 * Instances wait in a FIFO ready queue. An attempt takes one slot per
 * host (a gang of H emulated hosts takes H, and starts only when all H
 * are free); while the queue's head fits and the run is not being
 * cancelled, pump() starts its attempt on its runtime. The queue is
 * strictly FIFO, so a wide gang is never starved by narrow instances.
 * Each running attempt has a timeout timer (SIGTERM, then after the grace
 * period SIGKILL, both through the runtime) and ends when the runtime
 * calls tpuci__attempt_done(). A failed attempt that its retry policy
 * wants again waits on a backoff timer and then re-enters the queue.
 *
 * Cancellation (a signal, tpuci_cancel(), --fail-fast, --deadline) stops
 * the queue, finishes waiting instances as cancelled and signals every
 * running attempt. The run is over when nothing runs or waits; then the
 * runtimes are closed (they remove what they still hold) and the
 * RUN_FINISHED event fires.
 */
#include "sched/scheduler.h"
#include "pytest/pytest_run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The scheduler's view of an attempt. `a` comes first so the runtime's
 * tpuci__attempt_t * converts back. */
typedef struct tpuci__satt_s {
  tpuci__attempt_t a;
  tpuci__sched_t *s;
  char *dir;
  char *log_path;
  int log_fd;
  int log_errno;           /* first write error, reported in the cause */
  uint64_t start_ms;
  uint64_t start_hr;
  uv_timer_t timeout_timer;
  uv_timer_t grace_timer;
  int closing;             /* timers being closed: count of pending */
  int timed_out;
  int cancelled;
  int term_sent;
  int kill_sent;
  int finished;
  int collect;             /* collects a shard group's tests: no results */
  tpuci__strv_t argv_own;  /* the attempt's command, when not the plan's */
  char *results_dir;       /* pytest: this attempt's results folder */
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

  int slots;
  int running;
  tpuci__satt_t *running_list;
  int in_pump;

  tpuci__stop_t stop;
  int force;
  int finishing;
  int closing;             /* handles and runtimes still closing */

  uv_timer_t deadline_timer;
  uv_timer_t tick_timer;
  uv_signal_t sigint;
  uv_signal_t sigterm;
  int signals_on;
  int signal_count;

  char *error;
  int error_code;
};

static void tpuci__pump(tpuci__sched_t *s);
static void tpuci__drain(tpuci__sched_t *s);
static void tpuci__check_finished(tpuci__sched_t *s);
static void tpuci__stop(tpuci__sched_t *s, tpuci__stop_t why, int force);

/* ------------------------------------------------------------------ */
/* Events                                                              */

static void tpuci__emit(tpuci__sched_t *s, tpuci_event_t *ev) {
  if (s->opts.on_event) s->opts.on_event(s->opts.host, ev);
}

static void tpuci__emit_message(tpuci__sched_t *s, const char *msg) {
  tpuci_event_t ev;
  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_MESSAGE;
  ev.message = msg;
  tpuci__emit(s, &ev);
}

static void tpuci__rt_message(tpuci__runtime_t *rt, const char *msg) {
  tpuci__emit_message(rt->host_data, msg);
}

/* ------------------------------------------------------------------ */
/* The ready queue                                                     */

static void tpuci__queue_push(tpuci__sched_t *s, size_t index) {
  s->queue[(s->qhead + s->qlen) % s->qcap] = index;
  s->qlen++;
}

static size_t tpuci__queue_pop(tpuci__sched_t *s) {
  size_t index = s->queue[s->qhead];
  s->qhead = (s->qhead + 1) % s->qcap;
  s->qlen--;
  return index;
}

/* ------------------------------------------------------------------ */
/* Results                                                             */

void tpuci__attempt_result_free(tpuci__attempt_result_t *r) {
  free(r->cause);
  free(r->log_path);
  r->cause = NULL;
  r->log_path = NULL;
}

void tpuci__instance_result_free(tpuci__instance_result_t *r) {
  size_t i;
  for (i = 0; i < r->nattempts; i++) tpuci__attempt_result_free(&r->attempts[i]);
  free(r->attempts);
  r->attempts = NULL;
  r->nattempts = 0;
  r->outcome = TPUCI_OUTCOME_NONE;
  if (r->history) {
    tpuci__history_free(r->history);
    free(r->history);
    r->history = NULL;
  }
}

static tpuci__attempt_result_t *tpuci__result_add(tpuci__instance_result_t *r) {
  r->attempts = tpuci__realloc(r->attempts,
                               (r->nattempts + 1) * sizeof(*r->attempts));
  memset(&r->attempts[r->nattempts], 0, sizeof(*r->attempts));
  return &r->attempts[r->nattempts++];
}

/* Sets the final outcome of instance `index` from its attempts. */
static void tpuci__instance_finish(tpuci__sched_t *s, size_t index) {
  tpuci__instance_result_t *r = &s->results[index];
  tpuci_outcome_t outs[128] = {TPUCI_OUTCOME_NONE}, *o = outs;
  tpuci_event_t ev;
  size_t i;

  if (r->nattempts > sizeof(outs) / sizeof(outs[0]))
    o = tpuci__malloc(r->nattempts * sizeof(*o));
  for (i = 0; i < r->nattempts; i++) o[i] = r->attempts[i].outcome;
  r->outcome = tpuci__final_outcome(o, r->nattempts);
  if (o != outs) free(o);

  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_INSTANCE_FINISHED;
  ev.instance = index;
  ev.name = s->plan->instances[index].name;
  ev.attempt = (int) r->nattempts;
  ev.max_attempts = s->plan->instances[index].retry.attempts;
  ev.outcome = r->outcome;
  ev.exit_code = r->nattempts ? r->attempts[r->nattempts - 1].exit_code : -1;
  tpuci__emit(s, &ev);

  if (s->opts.fail_fast && s->stop == TPUCI__STOP_NONE &&
      r->outcome != TPUCI_OUTCOME_PASSED && r->outcome != TPUCI_OUTCOME_FLAKY &&
      r->outcome != TPUCI_OUTCOME_CANCELLED) {
    char *msg = tpuci__printf("fail-fast: '%s' %s; stopping the run",
                              ev.name, tpuci_outcome_name(r->outcome));
    tpuci__emit_message(s, msg);
    free(msg);
    tpuci__stop(s, TPUCI__STOP_FAIL_FAST, 0);
  }
}

/* ------------------------------------------------------------------ */
/* Attempts                                                            */

static uint64_t tpuci__grace(const tpuci__sched_t *s,
                             const tpuci__instance_t *inst) {
  if (s->opts.grace_ms) return s->opts.grace_ms;
  if (inst->grace_ms) return inst->grace_ms;
  return TPUCI__DEFAULT_GRACE_MS;
}

static tpuci__runtime_t *tpuci__rt(const tpuci__satt_t *t) {
  return t->s->rts[t->a.inst->runtime];
}

static void tpuci__grace_cb(uv_timer_t *timer) {
  tpuci__satt_t *t = timer->data;
  if (t->finished || t->kill_sent) return;
  t->kill_sent = 1;
  tpuci__rt(t)->signal(tpuci__rt(t), &t->a, SIGKILL);
}

/* Sends SIGTERM and arms the grace timer, or SIGKILL at once. */
static void tpuci__attempt_stop(tpuci__satt_t *t, int force) {
  tpuci__runtime_t *rt = tpuci__rt(t);
  if (t->finished) return;
  if (force) {
    if (!t->kill_sent) {
      t->kill_sent = 1;
      rt->signal(rt, &t->a, SIGKILL);
    }
    return;
  }
  if (t->term_sent) return;
  t->term_sent = 1;
  rt->signal(rt, &t->a, SIGTERM);
  uv_timer_start(&t->grace_timer, tpuci__grace_cb,
                 tpuci__grace(t->s, t->a.inst), 0);
}

static void tpuci__timeout_cb(uv_timer_t *timer) {
  tpuci__satt_t *t = timer->data;
  if (t->finished || t->cancelled) return;
  t->timed_out = 1;
  tpuci__attempt_stop(t, 0);
}

static void tpuci__satt_closed(uv_handle_t *h) {
  tpuci__satt_t *t = h->data;
  tpuci__sched_t *s = t->s;
  if (--t->closing > 0) return;
  free(t->dir);
  free(t->log_path);
  free(t->results_dir);
  tpuci__strv_free(&t->argv_own);
  free(t);
  s->closing--;
  tpuci__check_finished(s);
}

void tpuci__attempt_write_error(tpuci__attempt_t *a, const char *path, int err) {
  tpuci__sched_t *s = ((tpuci__satt_t *) a)->s;
  if (s->opts.on_write_error) s->opts.on_write_error(s->opts.host, path, err);
}

static void tpuci__log_write(tpuci__satt_t *t, const char *buf, size_t len) {
  while (len > 0 && t->log_fd >= 0) {
    ssize_t n = write(t->log_fd, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (!t->log_errno) {
        t->log_errno = errno;
        tpuci__attempt_write_error(&t->a, t->log_path, -t->log_errno);
      }
      return;
    }
    buf += n;
    len -= (size_t) n;
  }
}

static void tpuci__on_output(tpuci__attempt_t *a, int stream, const char *buf,
                             size_t len) {
  tpuci__satt_t *t = (tpuci__satt_t *) a;
  tpuci_event_t ev;

  tpuci__log_write(t, buf, len);
  if (t->collect) return;
  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_OUTPUT;
  ev.instance = a->index;
  ev.name = a->inst->name;
  ev.attempt = a->number;
  ev.max_attempts = a->inst->retry.attempts;
  ev.stream = stream;
  ev.data = buf;
  ev.len = len;
  ev.log_path = t->log_path;
  tpuci__emit(((tpuci__satt_t *) a)->s, &ev);
}

static void tpuci__on_message(tpuci__attempt_t *a, const char *msg) {
  tpuci_event_t ev;
  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_MESSAGE;
  ev.instance = a->index;
  ev.name = a->inst->name;
  ev.attempt = a->number;
  ev.message = msg;
  tpuci__emit(((tpuci__satt_t *) a)->s, &ev);
}

/* The text saying why an attempt ended as it did. */
static char *tpuci__cause(const tpuci__satt_t *t, tpuci_outcome_t o,
                          const tpuci__exit_t *ex) {
  char d[32];
  const char *sig = ex->term_signal ? strsignal(ex->term_signal) : NULL;
  tpuci__buf_t b;

  tpuci__buf_init(&b);
  switch (o) {
    case TPUCI_OUTCOME_PASSED:
      tpuci__buf_adds(&b, "exit 0");
      break;
    case TPUCI_OUTCOME_FAILED:
      if (ex->cause) /* the runtime's words: "worker-1: exit 3" */
        tpuci__buf_adds(&b, ex->cause);
      else if (ex->term_signal)
        tpuci__buf_addf(&b, "killed by signal %d (%s)", ex->term_signal, sig);
      else
        tpuci__buf_addf(&b, "exit %d", ex->exit_code);
      break;
    case TPUCI_OUTCOME_TIMEOUT:
      tpuci__buf_addf(&b, "timed out after %s",
                      tpuci__duration_format(t->a.inst->timeout_ms, d, sizeof(d)));
      if (t->kill_sent) tpuci__buf_adds(&b, " (SIGKILL after grace period)");
      break;
    case TPUCI_OUTCOME_CANCELLED:
      switch (t->s->stop) {
        case TPUCI__STOP_FAIL_FAST: tpuci__buf_adds(&b, "cancelled by --fail-fast"); break;
        case TPUCI__STOP_DEADLINE: tpuci__buf_adds(&b, "cancelled: run deadline reached"); break;
        default: tpuci__buf_adds(&b, "cancelled: interrupted"); break;
      }
      break;
    case TPUCI_OUTCOME_OOM:
      tpuci__buf_adds(&b, ex->cause ? ex->cause : "killed: out of memory");
      break;
    case TPUCI_OUTCOME_INFRA:
      tpuci__buf_adds(&b, ex->cause ? ex->cause : "runtime error");
      break;
    default:
      tpuci__buf_adds(&b, tpuci_outcome_name(o));
      break;
  }
  if (t->log_errno)
    tpuci__buf_addf(&b, "; log incomplete: %s", strerror(t->log_errno));
  return tpuci__buf_steal(&b);
}

static void tpuci__retry_cb(uv_timer_t *timer);

static void tpuci__wait_closed(uv_handle_t *h) {
  tpuci__wait_t *w = h->data;
  tpuci__sched_t *s = w->s;
  free(w);
  s->closing--;
  tpuci__check_finished(s);
}

static void tpuci__wait_remove(tpuci__sched_t *s, tpuci__wait_t *w) {
  if (w->prev) w->prev->next = w->next;
  else s->waits = w->next;
  if (w->next) w->next->prev = w->prev;
  s->closing++;
  uv_close((uv_handle_t *) &w->timer, tpuci__wait_closed);
}

static void tpuci__retry_cb(uv_timer_t *timer) {
  tpuci__wait_t *w = timer->data;
  tpuci__sched_t *s = w->s;
  size_t index = w->index;
  tpuci__wait_remove(s, w);
  tpuci__queue_push(s, index);
  tpuci__pump(s);
}

static void tpuci__schedule_retry(tpuci__sched_t *s, size_t index, int next) {
  const tpuci__instance_t *inst = &s->plan->instances[index];
  uint64_t delay = tpuci__retry_delay(&inst->retry, next);
  tpuci__wait_t *w = tpuci__calloc(1, sizeof(*w));
  tpuci_event_t ev;

  w->s = s;
  w->index = index;
  uv_timer_init(s->loop, &w->timer);
  w->timer.data = w;
  w->next = s->waits;
  if (s->waits) s->waits->prev = w;
  s->waits = w;
  uv_timer_start(&w->timer, tpuci__retry_cb, delay, 0);

  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_RETRY_SCHEDULED;
  ev.instance = index;
  ev.name = inst->name;
  ev.attempt = next;
  ev.max_attempts = inst->retry.attempts;
  ev.retry_in_ms = delay;
  tpuci__emit(s, &ev);
}

static void tpuci__collect_done(tpuci__sched_t *s, tpuci__satt_t *t,
                                tpuci_outcome_t o, const tpuci__exit_t *ex);

/* Takes an attempt off the running list and frees its slots. */
static void tpuci__attempt_unlink(tpuci__sched_t *s, tpuci__satt_t *t) {
  if (t->prev) t->prev->next = t->next;
  else s->running_list = t->next;
  if (t->next) t->next->prev = t->prev;
  s->running--;
  s->slots -= t->collect ? 1 : tpuci__plan_hosts(s->plan, t->a.inst);
}

/* Records an attempt's result and tells the host; `res` is filled. */
static void tpuci__attempt_report(tpuci__sched_t *s, size_t index, int number,
                                  const tpuci__attempt_result_t *res) {
  const tpuci__instance_t *inst = &s->plan->instances[index];
  tpuci_event_t ev;
  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_ATTEMPT_FINISHED;
  ev.instance = index;
  ev.name = inst->name;
  ev.attempt = number;
  ev.max_attempts = inst->retry.attempts;
  ev.outcome = res->outcome;
  ev.exit_code = res->exit_code;
  ev.term_signal = res->term_signal;
  ev.duration_ms = res->duration_ms;
  ev.cause = res->cause;
  ev.log_path = res->log_path;
  tpuci__emit(s, &ev);
}

/* After a finished attempt: retry it, or finish the instance. */
static void tpuci__attempt_next(tpuci__sched_t *s, size_t index, int number,
                                tpuci_outcome_t o) {
  const tpuci__instance_t *inst = &s->plan->instances[index];
  if (o != TPUCI_OUTCOME_PASSED && o != TPUCI_OUTCOME_CANCELLED &&
      s->stop == TPUCI__STOP_NONE && number < inst->retry.attempts &&
      tpuci__retry_wants(&inst->retry, (int) o)) {
    if (inst->pytest && s->results[index].history) {
      /* Only what failed or did not run, where pytest told us. */
      tpuci__strv_t *next = tpuci__calloc(1, sizeof(*next));
      if (!tpuci__pytest_next_selection(s->results[index].history,
                                        s->select[index], next)) {
        free(next);
        next = NULL;
      }
      if (s->select[index]) {
        tpuci__strv_free(s->select[index]);
        free(s->select[index]);
      }
      s->select[index] = next;
    }
    s->next_attempt[index] = number + 1;
    tpuci__schedule_retry(s, index, number + 1);
  } else {
    tpuci__instance_finish(s, index);
  }
}

static void tpuci__on_done(tpuci__attempt_t *a, const tpuci__exit_t *ex) {
  tpuci__satt_t *t = (tpuci__satt_t *) a;
  tpuci__sched_t *s = ((tpuci__satt_t *) a)->s;
  tpuci__instance_result_t *r = &s->results[a->index];
  tpuci__attempt_result_t *res;
  tpuci_outcome_t o;
  uint64_t duration;
  char *cause, *py_cause = NULL;

  if (t->finished) return;
  t->finished = 1;
  uv_timer_stop(&t->timeout_timer);
  uv_timer_stop(&t->grace_timer);
  if (t->log_fd >= 0) {
    close(t->log_fd);
    t->log_fd = -1;
  }

  o = tpuci__classify(ex, t->timed_out, t->cancelled);
  duration = (uv_hrtime() - t->start_hr) / 1000000u;
  tpuci__attempt_unlink(s, t);
  if (t->collect) {
    tpuci__collect_done(s, t, o, ex);
  } else {
    cause = tpuci__cause(t, o, ex);
    if (a->inst->pytest) {
      if (r->history == NULL) {
        r->history = tpuci__calloc(1, sizeof(*r->history));
        tpuci__history_init(r->history, a->inst->name);
      }
      o = tpuci__pytest_after(r->history, a->inst, t->results_dir, o, ex, cause,
                              duration, s->select[a->index], &py_cause);
      if (py_cause) {
        free(cause);
        cause = py_cause;
      }
    }
    res = tpuci__result_add(r);
    res->outcome = o;
    res->exit_code = ex->exit_code;
    res->term_signal = ex->term_signal;
    res->start_ms = t->start_ms;
    res->duration_ms = duration;
    res->cause = cause;
    res->log_path = tpuci__strdup(t->log_path);
    tpuci__attempt_report(s, a->index, a->number, res);
    tpuci__attempt_next(s, a->index, a->number, o);
  }

  t->closing = 2;
  s->closing++;
  uv_close((uv_handle_t *) &t->timeout_timer, tpuci__satt_closed);
  uv_close((uv_handle_t *) &t->grace_timer, tpuci__satt_closed);
  tpuci__pump(s);
}

/* What runtimes call for attempts (runtime/runtime.h). */
static const tpuci__attempt_host_t tpuci__attempt_host = {
    tpuci__on_output, tpuci__on_done, tpuci__on_message};

/* Starts the next attempt of instance `index` (or, with `collect`, the
 * collection of its shard group's tests). A failure to start is recorded
 * as an infra failure of the attempt. */
static void tpuci__attempt_start(tpuci__sched_t *s, size_t index, int collect) {
  const tpuci__instance_t *inst = &s->plan->instances[index];
  tpuci__satt_t *t = tpuci__calloc(1, sizeof(*t));
  tpuci__runtime_t *rt = s->rts[inst->runtime];
  char *safe;
  tpuci_event_t ev;
  int r;

  t->s = s;
  t->a.host = &tpuci__attempt_host;
  t->a.loop = s->loop;
  t->a.plan = s->plan;
  t->a.inst = inst;
  t->a.index = index;
  t->a.number = collect ? 0 : s->next_attempt[index];
  t->a.run_id = s->run_id;
  t->a.keep_on_failure = s->opts.keep_failed && !collect;
  t->a.argv = &inst->argv;
  t->a.grace_ms = tpuci__grace(s, inst);
  t->a.hosts = collect ? 1 : tpuci__plan_hosts(s->plan, inst);
  t->collect = collect;
  t->log_fd = -1;
  if (collect) {
    safe = tpuci__path_component(s->groups[s->group_of[index]].name);
    t->dir = tpuci__printf("%s/%s", s->run_dir, safe);
    t->log_path = tpuci__printf("%s/collect.log", t->dir);
    tpuci__pytest_collect_argv(inst, &t->argv_own);
    t->a.argv = &t->argv_own;
  } else {
    safe = tpuci__path_component(inst->name);
    t->dir = tpuci__printf("%s/%s", s->run_dir, safe);
    t->log_path = tpuci__printf("%s/attempt-%d.log", t->dir, t->a.number);
  }
  t->a.dir = t->dir;
  free(safe);
  uv_timer_init(s->loop, &t->timeout_timer);
  uv_timer_init(s->loop, &t->grace_timer);
  t->timeout_timer.data = t;
  t->grace_timer.data = t;

  s->running++;
  s->slots += collect ? 1 : tpuci__plan_hosts(s->plan, inst);
  t->next = s->running_list;
  if (s->running_list) s->running_list->prev = t;
  s->running_list = t;
  t->start_ms = tpuci__now_ms();
  t->start_hr = uv_hrtime();

  r = tpuci__mkdir_p(t->dir, 0755);
  if (r == 0) {
    t->log_fd = open(t->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
                     O_APPEND, 0644);
    if (t->log_fd < 0) r = TPUCI__ERRNO;
  }
  if (r == 0 && inst->pytest && !collect) {
    /* pytest writes its JUnit file here; containers see it mounted. */
    t->results_dir = tpuci__printf("%s/results-%d", t->dir, t->a.number);
    r = tpuci__mkdir_p(t->results_dir, 0777);
    t->a.results_dir = t->results_dir;
    t->a.results_path = tpuci__driver(inst->runtime)->results_mount
                             ? tpuci__driver(inst->runtime)->results_mount
                             : t->results_dir;
    tpuci__pytest_argv(inst, t->a.results_path, s->select[index], &t->argv_own);
    t->a.argv = &t->argv_own;
  }

  if (!collect) {
    memset(&ev, 0, sizeof(ev));
    ev.type = TPUCI_EVENT_ATTEMPT_STARTED;
    ev.instance = index;
    ev.name = inst->name;
    ev.attempt = t->a.number;
    ev.max_attempts = inst->retry.attempts;
    ev.log_path = t->log_path;
    tpuci__emit(s, &ev);
  }

  if (r != 0) {
    tpuci__exit_t ex = {-1, 0, 0, 1, NULL};
    char *cause = tpuci__printf("cannot create %s: %s", t->log_path,
                                uv_strerror(r));
    ex.cause = cause;
    tpuci__attempt_done(&t->a, &ex);
    free(cause);
    return;
  }
  if (inst->timeout_ms) {
    /* From now, not from the start of this loop iteration. */
    uv_update_time(s->loop);
    uv_timer_start(&t->timeout_timer, tpuci__timeout_cb, inst->timeout_ms, 0);
  }
  r = rt->start(rt, &t->a);
  if (r != 0) {
    tpuci__exit_t ex = {-1, 0, 0, 1, NULL};
    ex.cause = rt->err.msg ? rt->err.msg : uv_strerror(r);
    tpuci__log_write(t, ex.cause, strlen(ex.cause));
    tpuci__log_write(t, "\n", 1);
    tpuci__attempt_done(&t->a, &ex);
  }
}

/* ------------------------------------------------------------------ */
/* Shards: one collection per group, then each shard runs its part     */

/* Records an attempt that ran nothing (an empty shard, a failed
 * collection) and finishes the instance. */
static void tpuci__attempt_synthetic(tpuci__sched_t *s, size_t index,
                                     tpuci_outcome_t o, const char *cause,
                                     const char *log_path) {
  const tpuci__instance_t *inst = &s->plan->instances[index];
  tpuci__attempt_result_t *res = tpuci__result_add(&s->results[index]);
  tpuci_event_t ev;
  int number = s->next_attempt[index];

  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_ATTEMPT_STARTED;
  ev.instance = index;
  ev.name = inst->name;
  ev.attempt = number;
  ev.max_attempts = inst->retry.attempts;
  tpuci__emit(s, &ev);
  res->outcome = o;
  res->exit_code = -1;
  res->start_ms = tpuci__now_ms();
  res->cause = tpuci__strdup(cause);
  res->log_path = tpuci__strdup(log_path);
  tpuci__attempt_report(s, index, number, res);
  tpuci__instance_finish(s, index);
}

/* A shard whose group is collected: its part, or nothing to do. */
static void tpuci__shard_start(tpuci__sched_t *s, size_t index) {
  tpuci__group_t *g = &s->groups[s->group_of[index]];
  const tpuci__instance_t *inst = &s->plan->instances[index];
  const tpuci__shard_t *part;

  if (g->state == TPUCI__GROUP_FAILED) {
    tpuci__attempt_synthetic(s, index, g->outcome, g->cause, g->log_path);
    return;
  }
  part = &g->plan.shards[inst->pytest->shard - 1];
  if (part->ids.len == 0) {
    tpuci__attempt_synthetic(s, index, TPUCI_OUTCOME_PASSED,
                             "no test assigned to this shard (fewer tests than shards)",
                             g->log_path);
    return;
  }
  if (s->select[index] == NULL) {
    s->select[index] = tpuci__calloc(1, sizeof(*s->select[index]));
    tpuci__strv_copy(s->select[index], &part->ids);
  }
  tpuci__attempt_start(s, index, 0);
}

static void tpuci__collect_done(tpuci__sched_t *s, tpuci__satt_t *t,
                                tpuci_outcome_t o, const tpuci__exit_t *ex) {
  tpuci__group_t *g = &s->groups[s->group_of[t->a.index]];
  const tpuci__instance_t *inst = t->a.inst;
  tpuci__strv_t ids = {0};
  tpuci__err_t e = {0, NULL};
  char *text = NULL, *msg;
  size_t len = 0, k;

  g->log_path = tpuci__strdup(t->log_path);
  /* An incomplete log would hide tests: the collection failed. */
  if (o == TPUCI_OUTCOME_PASSED && t->log_errno == 0 &&
      tpuci__read_file(t->log_path, &text, &len) == 0 &&
      tpuci__collect_parse(text, len, &ids, &e) == 0 && ids.len > 0 &&
      tpuci__shard_plan((const char *const *) ids.items, ids.len, s->opts.timings,
                        (size_t) inst->pytest->shards, &g->plan, &e) == 0) {
    tpuci__buf_t b;
    g->state = TPUCI__GROUP_READY;
    tpuci__buf_init(&b);
    tpuci__buf_addf(&b, "%s: %zu tests in %d shards (%s), predicted", g->name, ids.len,
                    inst->pytest->shards, g->plan.by_count ? "by count: no recorded durations"
                                                           : "by recorded durations");
    for (k = 0; k < g->plan.n; k++)
      tpuci__buf_addf(&b, "%s %.1fs", k ? "," : "", g->plan.shards[k].predicted_s);
    tpuci__emit_message(s, b.data);
    tpuci__buf_free(&b);
  } else {
    char d[32];
    g->state = TPUCI__GROUP_FAILED;
    g->outcome = o == TPUCI_OUTCOME_PASSED ? TPUCI_OUTCOME_FAILED : o;
    if (o == TPUCI_OUTCOME_PASSED && t->log_errno) {
      g->outcome = TPUCI_OUTCOME_INFRA;
      g->cause = tpuci__printf("test collection log incomplete: %s", strerror(t->log_errno));
    } else if (o == TPUCI_OUTCOME_FAILED && ex->exit_code == TPUCI__PYTEST_NO_TESTS) {
      g->outcome = inst->pytest->allow_empty ? TPUCI_OUTCOME_PASSED : TPUCI_OUTCOME_FAILED;
      g->cause = tpuci__printf("collection selected no test%s",
                               inst->pytest->allow_empty ? " (allowed: allow_empty)"
                                                         : " (pytest exit 5; set pytest.allow_empty = true if that is fine)");
    } else if (o == TPUCI_OUTCOME_TIMEOUT) {
      g->cause = tpuci__printf("test collection timed out after %s",
                               tpuci__duration_format(inst->timeout_ms, d, sizeof(d)));
    } else if (o == TPUCI_OUTCOME_PASSED) {
      g->cause = tpuci__printf("test collection listed no node ids%s%s",
                               e.msg ? ": " : "", e.msg ? e.msg : "");
    } else if (ex->infra || ex->oom) {
      g->cause = tpuci__printf("test collection: %s", ex->cause ? ex->cause : tpuci_outcome_name(o));
    } else {
      g->cause = tpuci__printf("test collection failed (exit %d)", ex->exit_code);
    }
    msg = tpuci__printf("%s: %s; log: %s", g->name, g->cause, g->log_path);
    tpuci__emit_message(s, msg);
    free(msg);
  }
  free(text);
  tpuci__strv_free(&ids);
  tpuci__err_clear(&e);

  /* The shards that waited go back to the front of the queue, in order. */
  for (k = g->nwaiting; k > 0; k--) {
    s->qhead = (s->qhead + s->qcap - 1) % s->qcap;
    s->queue[s->qhead] = g->waiting[k - 1];
    s->qlen++;
  }
  g->nwaiting = 0;
  if (s->stop != TPUCI__STOP_NONE) tpuci__drain(s);
}

/* ------------------------------------------------------------------ */
/* The run                                                             */

static void tpuci__pump(tpuci__sched_t *s) {
  if (s->in_pump || !s->started) return;
  s->in_pump = 1;
  while (s->stop == TPUCI__STOP_NONE && s->qlen > 0) {
    size_t head = s->queue[s->qhead];
    tpuci__group_t *g = s->group_of[head] >= 0 ? &s->groups[s->group_of[head]] : NULL;
    if (g != NULL && g->state == TPUCI__GROUP_COLLECTING) {
      /* It waits for its group's collection, taking no slot. */
      g->waiting[g->nwaiting++] = tpuci__queue_pop(s);
      continue;
    }
    if (g != NULL && g->state != TPUCI__GROUP_NEW && s->select[head] == NULL &&
        s->next_attempt[head] == 1) {
      if (g->state == TPUCI__GROUP_FAILED ||
          g->plan.shards[s->plan->instances[head].pytest->shard - 1].ids.len == 0) {
        /* Finishes without running: no slot needed. */
        tpuci__shard_start(s, tpuci__queue_pop(s));
        continue;
      }
    }
    if (s->slots + (g && g->state == TPUCI__GROUP_NEW ? 1 : tpuci__plan_hosts(s->plan, &s->plan->instances[head])) >
        s->opts.jobs)
      break;
    tpuci__queue_pop(s);
    if (g != NULL && g->state == TPUCI__GROUP_NEW) {
      g->state = TPUCI__GROUP_COLLECTING;
      g->waiting[g->nwaiting++] = head;
      tpuci__attempt_start(s, head, 1);
    } else if (g != NULL && s->next_attempt[head] == 1) {
      tpuci__shard_start(s, head);
    } else {
      tpuci__attempt_start(s, head, 0);
    }
  }
  s->in_pump = 0;
  tpuci__check_finished(s);
}

static void tpuci__handle_closed(uv_handle_t *h) {
  tpuci__sched_t *s = h->data;
  s->closing--;
  tpuci__check_finished(s);
}

static void tpuci__rt_closed(tpuci__runtime_t *rt) {
  tpuci__sched_t *s = rt->host_data;
  s->closing--;
  tpuci__check_finished(s);
}

static void tpuci__check_finished(tpuci__sched_t *s) {
  tpuci_event_t ev;
  int k;

  if (s->in_pump || s->preparing || s->running || s->qlen || s->waits)
    return;
  if (!s->finishing) {
    s->finishing = 1;
    /* Close everything this run holds on the loop; runtimes remove what
     * they still have (containers, networks) first. */
    s->closing++;
    uv_close((uv_handle_t *) &s->deadline_timer, tpuci__handle_closed);
    s->closing++;
    uv_close((uv_handle_t *) &s->tick_timer, tpuci__handle_closed);
    if (s->signals_on) {
      s->closing += 2;
      uv_close((uv_handle_t *) &s->sigint, tpuci__handle_closed);
      uv_close((uv_handle_t *) &s->sigterm, tpuci__handle_closed);
    }
    for (k = 0; k < TPUCI__RUNTIME__COUNT; k++) {
      if (s->rts[k] == NULL) continue;
      s->closing++;
      s->rts[k]->close(s->rts[k], tpuci__rt_closed);
    }
    return;
  }
  if (s->closing > 0 || s->finishing == 2) return;
  s->finishing = 2;
  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_RUN_FINISHED;
  ev.message = s->error;
  tpuci__emit(s, &ev);
}

/* Finishes instances that will not start (queued or waiting to retry). */
static void tpuci__drain(tpuci__sched_t *s) {
  size_t g;
  while (s->qlen > 0) tpuci__instance_finish(s, tpuci__queue_pop(s));
  /* Shards waiting for a collection that will not be used. */
  for (g = 0; g < s->ngroups; g++) {
    while (s->groups[g].nwaiting > 0 && s->groups[g].state != TPUCI__GROUP_COLLECTING)
      tpuci__instance_finish(s, s->groups[g].waiting[--s->groups[g].nwaiting]);
  }
  while (s->waits) {
    tpuci__wait_t *w = s->waits;
    size_t index = w->index;
    uv_timer_stop(&w->timer);
    tpuci__wait_remove(s, w);
    tpuci__instance_finish(s, index);
  }
}

static void tpuci__stop(tpuci__sched_t *s, tpuci__stop_t why, int force) {
  tpuci__satt_t *t, *next;
  int k;
  if (s->stop == TPUCI__STOP_NONE) s->stop = why;
  if (force) s->force = 1;
  uv_timer_stop(&s->deadline_timer);
  tpuci__drain(s);
  /* Still checking the engine or pulling images: stop that too. */
  for (k = 0; s->preparing > 0 && k < TPUCI__RUNTIME__COUNT; k++)
    if (s->rts[k] != NULL && s->rts[k]->abort != NULL) s->rts[k]->abort(s->rts[k]);
  for (t = s->running_list; t != NULL; t = next) {
    next = t->next;
    if (!t->timed_out) t->cancelled = 1;
    tpuci__attempt_stop(t, force);
  }
}

void tpuci__sched_cancel(tpuci__sched_t *s, int force) {
  if (s->finishing) return;
  tpuci__stop(s, TPUCI__STOP_INTERRUPT, force);
  tpuci__check_finished(s);
}

static void tpuci__deadline_cb(uv_timer_t *timer) {
  tpuci__sched_t *s = timer->data;
  char d[32];
  char *msg = tpuci__printf("deadline of %s reached; stopping the run",
                            tpuci__duration_format(s->opts.deadline_ms, d, sizeof(d)));
  tpuci__emit_message(s, msg);
  free(msg);
  tpuci__stop(s, TPUCI__STOP_DEADLINE, 0);
  tpuci__check_finished(s);
}

static void tpuci__tick_cb(uv_timer_t *timer) {
  tpuci__sched_t *s = timer->data;
  tpuci_event_t ev;
  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_TICK;
  tpuci__emit(s, &ev);
}

static void tpuci__signal_cb(uv_signal_t *h, int signum) {
  tpuci__sched_t *s = h->data;
  s->signal_count++;
  if (s->signal_count == 1) {
    char *msg = tpuci__printf(
        "%s: stopping %d running attempt%s (send again to force)",
        signum == SIGINT ? "interrupted" : "terminated", s->running,
        s->running == 1 ? "" : "s");
    tpuci__emit_message(s, msg);
    free(msg);
    tpuci__sched_cancel(s, 0);
  } else {
    tpuci__emit_message(s, "forcing: killing running attempts");
    tpuci__sched_cancel(s, 1);
  }
}

static void tpuci__prepared(tpuci__runtime_t *rt, int status) {
  tpuci__sched_t *s = rt->host_data;
  s->preparing--;
  /* Cut short by tpuci__stop(): not an error of the engine. */
  if (status == UV_ECANCELED && s->stop != TPUCI__STOP_NONE) status = 0;
  if (status != 0 && s->error == NULL) {
    s->error = tpuci__strdup(rt->err.msg ? rt->err.msg : uv_strerror(status));
    s->error_code = status;
  }
  if (s->preparing > 0) return;
  if (s->error != NULL) {
    /* Nothing ran: every instance stays without attempts. */
    s->stop = TPUCI__STOP_INTERRUPT;
    s->qlen = 0;
    tpuci__check_finished(s);
    return;
  }
  s->started = 1;
  tpuci__pump(s);
}

typedef struct {
  char *name;
  size_t index;
} tpuci__named_t;

static int tpuci__cmp_named(const void *a, const void *b) {
  const tpuci__named_t *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->index < y->index ? -1 : x->index > y->index);
}

/* Groups the selected pytest shards of one instance (same name but for
 * shard=i/N): each group collects its tests once. */
static void tpuci__groups_build(tpuci__sched_t *s) {
  const tpuci__plan_t *plan = s->plan;
  tpuci__named_t *v;
  size_t i, n = 0;

  s->group_of = tpuci__malloc(s->qcap * sizeof(int));
  for (i = 0; i < plan->ninstances; i++) s->group_of[i] = -1;
  v = tpuci__malloc(s->qcap * sizeof(*v));
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    if (!inst->selected || inst->pytest == NULL || inst->pytest->shards <= 1) continue;
    v[n].name = tpuci__pytest_group_name(inst);
    v[n++].index = i;
  }
  qsort(v, n, sizeof(*v), tpuci__cmp_named);
  for (i = 0; i < n; i++) {
    if (i == 0 || strcmp(v[i].name, v[i - 1].name) != 0) {
      tpuci__group_t *g;
      s->groups = tpuci__realloc(s->groups, (s->ngroups + 1) * sizeof(*s->groups));
      g = &s->groups[s->ngroups++];
      memset(g, 0, sizeof(*g));
      g->name = tpuci__strdup(v[i].name);
      g->waiting = tpuci__malloc(((size_t) plan->instances[v[i].index].pytest->shards + 1) *
                                 sizeof(*g->waiting));
    }
    s->group_of[v[i].index] = (int) s->ngroups - 1;
  }
  for (i = 0; i < n; i++) free(v[i].name);
  free(v);
}

int tpuci__sched_fd_cap(const tpuci__plan_t *plan, uint64_t nofile) {
  uint64_t per = 1, cap;
  size_t i;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__driver_t *d = tpuci__driver(plan->instances[i].runtime);
    if (plan->instances[i].selected && d != NULL && (uint64_t) d->fds_per_host > per)
      per = (uint64_t) d->fds_per_host;
  }
  if (nofile < TPUCI__FDS_RESERVE + per) return 1;
  cap = (nofile - TPUCI__FDS_RESERVE) / per;
  return cap > 1000000 ? 1000000 : (int) cap;
}

int tpuci__sched_check(const tpuci__plan_t *plan, int jobs, tpuci__err_t *err) {
  size_t i;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    int hosts = tpuci__plan_hosts(plan, inst);
    if (inst->selected && hosts > 1 && inst->network != NULL)
      return tpuci__err_set(err, TPUCI_EUSAGE,
                            "%s: '%s': a gang gets a private network of its own; "
                            "leave out network = \"%s\"",
                            inst->where, inst->name, inst->network);
    if (inst->selected && hosts > 1 && !tpuci__driver(inst->runtime)->gangs)
      return tpuci__err_set(err, TPUCI_EUSAGE,
                            "%s: '%s' is a gang of %d hosts, which needs the docker "
                            "runtime (give the job an image)",
                            inst->where, inst->name, hosts);
    if (inst->selected && hosts > 1 && inst->pytest && inst->pytest->shards > 1)
      return tpuci__err_set(err, TPUCI_EUSAGE,
                            "%s: '%s': pytest shards on a %d-host topology are not "
                            "supported (shard a single-host job, or run the gang unsharded)",
                            inst->where, inst->name, hosts);
    if (inst->selected && hosts > jobs)
      return tpuci__err_set(err, TPUCI_EUSAGE,
                            "%s: '%s' is a gang of %d hosts and needs %d slots, "
                            "but the run has %d (raise -j to at least %d)",
                            inst->where, inst->name, hosts, hosts, jobs, hosts);
  }
  return tpuci__runtime_check(plan, err);
}

int tpuci__sched_start(tpuci__sched_t **out, uv_loop_t *loop,
                       const tpuci__plan_t *plan,
                       tpuci__instance_result_t *results,
                       const tpuci__sched_opts_t *opts, tpuci__err_t *err) {
  tpuci__sched_t *s = tpuci__calloc(1, sizeof(*s));
  tpuci__runtime_opts_t ropts;
  int need[TPUCI__RUNTIME__COUNT] = {0};
  size_t i;
  int k, r;

  r = tpuci__sched_check(plan, opts->jobs > 0 ? opts->jobs : 1, err);
  if (r != 0) {
    free(s);
    return r;
  }
  s->loop = loop;
  s->plan = plan;
  s->results = results;
  s->opts = *opts;
  s->run_id = tpuci__strdup(opts->run_id);
  s->run_dir = tpuci__strdup(opts->run_dir);
  s->opts.run_id = s->run_id;
  s->opts.run_dir = s->run_dir;
  if (s->opts.jobs <= 0) s->opts.jobs = 1;
  s->qcap = plan->ninstances ? plan->ninstances : 1;
  s->queue = tpuci__malloc(s->qcap * sizeof(*s->queue));
  s->next_attempt = tpuci__malloc(s->qcap * sizeof(int));
  s->select = tpuci__calloc(s->qcap, sizeof(*s->select));
  for (i = 0; opts->preselect && i < plan->ninstances; i++) {
    if (opts->preselect[i] == NULL || opts->preselect[i]->len == 0) continue;
    s->select[i] = tpuci__calloc(1, sizeof(*s->select[i]));
    tpuci__strv_copy(s->select[i], opts->preselect[i]);
  }
  for (i = 0; i < plan->ninstances; i++) {
    s->next_attempt[i] = 1;
    if (!plan->instances[i].selected) continue;
    need[plan->instances[i].runtime] = 1;
    tpuci__queue_push(s, i);
  }
  tpuci__groups_build(s);

  ropts.run_id = s->run_id;
  ropts.keep_failed = opts->keep_failed;
  for (k = 0; k < TPUCI__RUNTIME__COUNT; k++) {
    if (!need[k]) continue;
    r = tpuci__runtime_new((tpuci__runtime_kind_t) k, loop, &ropts, &s->rts[k], err);
    if (r != 0) {
      int j;
      for (j = 0; j < k; j++)
        if (s->rts[j]) s->rts[j]->free(s->rts[j]);
      free(s->queue);
      free(s->next_attempt);
      free(s->run_id);
      free(s->run_dir);
      free(s);
      return r;
    }
    s->rts[k]->host_data = s;
    s->rts[k]->on_message = tpuci__rt_message;
  }

  uv_timer_init(loop, &s->deadline_timer);
  s->deadline_timer.data = s;
  uv_timer_init(loop, &s->tick_timer);
  s->tick_timer.data = s;
  if (s->opts.tick_ms)
    uv_timer_start(&s->tick_timer, tpuci__tick_cb, s->opts.tick_ms, s->opts.tick_ms);
  if (s->opts.deadline_ms)
    uv_timer_start(&s->deadline_timer, tpuci__deadline_cb, s->opts.deadline_ms, 0);
  if (s->opts.handle_signals) {
    uv_signal_init(loop, &s->sigint);
    uv_signal_init(loop, &s->sigterm);
    s->sigint.data = s;
    s->sigterm.data = s;
    uv_signal_start(&s->sigint, tpuci__signal_cb, SIGINT);
    uv_signal_start(&s->sigterm, tpuci__signal_cb, SIGTERM);
    s->signals_on = 1;
  }

  *out = s;
  /* Prepare every runtime (engine checks); attempts start once all
   * answered. A runtime without prepare() is ready at once. */
  s->preparing = 1;
  for (k = 0; k < TPUCI__RUNTIME__COUNT; k++) {
    if (s->rts[k] == NULL || s->rts[k]->prepare == NULL) continue;
    s->preparing++;
    r = s->rts[k]->prepare(s->rts[k], plan, tpuci__prepared);
    if (r != 0) {
      s->preparing--;
      if (s->error == NULL) {
        s->error = tpuci__strdup(s->rts[k]->err.msg ? s->rts[k]->err.msg
                                                    : uv_strerror(r));
        s->error_code = r;
      }
    }
  }
  {
    tpuci__runtime_t self;
    memset(&self, 0, sizeof(self));
    self.host_data = s;
    tpuci__prepared(&self, 0);
  }
  return 0;
}

int tpuci__sched_interrupted(const tpuci__sched_t *s) {
  return s->stop == TPUCI__STOP_INTERRUPT && s->error == NULL;
}

const char *tpuci__sched_error(const tpuci__sched_t *s) { return s->error; }

int tpuci__sched_error_code(const tpuci__sched_t *s) { return s->error_code; }

void tpuci__sched_free(tpuci__sched_t *s) {
  size_t i;
  int k;
  if (s == NULL) return;
  for (k = 0; k < TPUCI__RUNTIME__COUNT; k++)
    if (s->rts[k]) s->rts[k]->free(s->rts[k]);
  for (i = 0; i < s->qcap && s->select; i++) {
    if (s->select[i] == NULL) continue;
    tpuci__strv_free(s->select[i]);
    free(s->select[i]);
  }
  free(s->select);
  for (i = 0; i < s->ngroups; i++) {
    free(s->groups[i].name);
    free(s->groups[i].waiting);
    free(s->groups[i].cause);
    free(s->groups[i].log_path);
    tpuci__shard_plan_free(&s->groups[i].plan);
  }
  free(s->groups);
  free(s->group_of);
  free(s->queue);
  free(s->next_attempt);
  free(s->run_id);
  free(s->run_dir);
  free(s->error);
  free(s);
}
