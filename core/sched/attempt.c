/* Processes: one started on its runtime (its folder and log, and what its
 * kind says it runs), its timeout (SIGTERM, grace, SIGKILL), its output
 * and messages, what it left (the result, the cause, what its kind makes
 * of it), and the retry that follows an attempt. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sched/internal.h"

/* ------------------------------------------------------------------ */
/* Attempts                                                            */

uint64_t tpuci__grace(const tpuci__sched_t *s, const tpuci__instance_t *inst) {
  if (s->opts.grace_ms) return s->opts.grace_ms;
  if (inst->grace_ms) return inst->grace_ms;
  return TPUCI__DEFAULT_GRACE_MS;
}

tpuci__runtime_t *tpuci__rt(const tpuci__satt_t *t) { return t->s->rts[t->a.inst->runtime]; }

static void tpuci__grace_cb(uv_timer_t *timer) {
  tpuci__satt_t *t = timer->data;
  if (t->finished || t->kill_sent) return;
  t->kill_sent = 1;
  tpuci__rt(t)->signal(tpuci__rt(t), &t->a, SIGKILL);
}

/* Sends SIGTERM and arms the grace timer, or SIGKILL at once. */
void tpuci__attempt_stop(tpuci__satt_t *t, int force) {
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
  uv_timer_start(&t->grace_timer, tpuci__grace_cb, tpuci__grace(t->s, t->a.inst), 0);
}

static void tpuci__timeout_cb(uv_timer_t *timer) {
  tpuci__satt_t *t = timer->data;
  if (t->finished || t->cancelled || t->timed_out) return;
  t->timed_out = 1;
  tpuci__attempt_stop(t, 0);
}

/* idle_timeout: output moves last_output on (no timer call per chunk);
 * the timer, armed for the quiet that is left, ends the attempt once the
 * whole idle_timeout passed without any. */
static void tpuci__idle_cb(uv_timer_t *timer) {
  tpuci__satt_t *t = timer->data;
  uint64_t idle = t->a.inst->idle_timeout_ms, quiet;
  if (t->finished || t->cancelled || t->timed_out) return;
  quiet = uv_now(t->s->loop) - t->last_output;
  if (quiet < idle) {
    uv_timer_start(&t->idle_timer, tpuci__idle_cb, idle - quiet, 0);
    return;
  }
  t->timed_out = 1;
  t->idle_timed_out = 1;
  tpuci__attempt_stop(t, 0);
}

/* "timed out after 20m" or "no output for 10m": which timeout ended t. */
void tpuci__timeout_text(const tpuci__satt_t *t, tpuci__buf_t *b) {
  char d[32];
  if (t->idle_timed_out)
    tpuci__buf_addf(b, "no output for %s",
                    tpuci__duration_format(t->a.inst->idle_timeout_ms, d, sizeof(d)));
  else
    tpuci__buf_addf(b, "timed out after %s",
                    tpuci__duration_format(t->a.inst->timeout_ms, d, sizeof(d)));
}

/* What the kind made for a process (kind.h, release). */
static void tpuci__kind_release(tpuci__satt_t *t) {
  if (t->kind->ops->release != NULL) {
    t->kind->ops->release(t->kind->run, &t->kp);
  } else {
    tpuci__strv_free(&t->kp.argv);
    free(t->kp.log_name);
    free(t->kp.results_dir);
  }
  memset(&t->kp.argv, 0, sizeof(t->kp.argv));
  t->kp.log_name = t->kp.results_dir = NULL;
  t->kp.data = NULL;
}

static void tpuci__satt_closed(uv_handle_t *h) {
  tpuci__satt_t *t = h->data;
  tpuci__sched_t *s = t->s;
  if (--t->closing > 0) return;
  tpuci__kind_release(t);
  free(t->dir);
  free(t->log_path);
  free(t);
  s->closing--;
  tpuci__check_finished(s);
}

static void tpuci__on_write_error(tpuci__attempt_t *a, const char *path, int err) {
  tpuci__sched_t *s = ((tpuci__satt_t *) a)->s;
  if (s->opts.on_write_error) s->opts.on_write_error(s->opts.host, path, err);
}

/* Makes the attempt's folder and log at its first byte of output: an
 * attempt that prints nothing leaves no file (and costs no mkdir/open). */
static void tpuci__log_open(tpuci__satt_t *t) {
  int r;
  t->log_opened = 1;
  r = tpuci__mkdir_p(t->dir, 0755);
  if (r == 0) {
    t->log_fd = open(t->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_APPEND, 0644);
    if (t->log_fd < 0) r = TPUCI__ERRNO;
  }
  t->log_made = r == 0;
  if (r != 0) {
    t->log_errno = -r;
    tpuci__attempt_write_error(&t->a, t->log_path, r);
  }
}

static void tpuci__log_write(tpuci__satt_t *t, const char *buf, size_t len) {
  if (!t->log_opened && len > 0) tpuci__log_open(t);
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

static void tpuci__on_output(tpuci__attempt_t *a, int stream, const char *buf, size_t len) {
  tpuci__satt_t *t = (tpuci__satt_t *) a;
  tpuci_event_t ev;

  if (len > 0) t->last_output = uv_now(t->s->loop);
  t->out_bytes += len;
  tpuci__log_write(t, buf, len);
  if (t->kp.role == TPUCI__PROC_STEP) return;
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

/* The text saying why a process ended as it did. */
static char *tpuci__cause(const tpuci__satt_t *t, tpuci_outcome_t o, const tpuci__exit_t *ex) {
  const char *sig = ex->term_signal ? strsignal(ex->term_signal) : NULL;
  tpuci__buf_t b;

  tpuci__buf_init(&b);
  switch (o) {
    case TPUCI_OUTCOME_PASSED: tpuci__buf_adds(&b, "exit 0"); break;
    case TPUCI_OUTCOME_FAILED:
      if (ex->cause) /* the runtime's words: "worker-1: exit 3" */
        tpuci__buf_adds(&b, ex->cause);
      else if (ex->term_signal)
        tpuci__buf_addf(&b, "killed by signal %d (%s)", ex->term_signal, sig);
      else tpuci__buf_addf(&b, "exit %d", ex->exit_code);
      break;
    case TPUCI_OUTCOME_TIMEOUT:
      tpuci__timeout_text(t, &b);
      if (t->kill_sent) tpuci__buf_adds(&b, " (SIGKILL after grace period)");
      if (ex->not_up) tpuci__buf_addf(&b, "; the gang was not up: %s", ex->not_up);
      break;
    case TPUCI_OUTCOME_CANCELLED:
      if (t->superseded) {
        tpuci__buf_adds(&b, "stopped: its instance's attempts were over");
        break;
      }
      switch (t->s->stop) {
        case TPUCI__STOP_FAIL_FAST: tpuci__buf_adds(&b, "cancelled by --fail-fast"); break;
        case TPUCI__STOP_DEADLINE: tpuci__buf_adds(&b, "cancelled: run deadline reached"); break;
        default: tpuci__buf_adds(&b, "cancelled: interrupted"); break;
      }
      if (ex->not_up) tpuci__buf_addf(&b, "; the gang was not up: %s", ex->not_up);
      break;
    case TPUCI_OUTCOME_OOM:
      tpuci__buf_adds(&b, ex->cause ? ex->cause : "killed: out of memory");
      break;
    case TPUCI_OUTCOME_INFRA: tpuci__buf_adds(&b, ex->cause ? ex->cause : "runtime error"); break;
    case TPUCI_OUTCOME_PREEMPTED:
    case TPUCI_OUTCOME_NO_CAPACITY:
      tpuci__buf_adds(&b, ex->cause ? ex->cause : tpuci_outcome_name(o));
      break;
    default: tpuci__buf_adds(&b, tpuci_outcome_name(o)); break;
  }
  if (t->log_errno) tpuci__buf_addf(&b, "; log incomplete: %s", strerror(t->log_errno));
  if (ex->log_lost) tpuci__buf_addf(&b, "; log incomplete: %s", ex->log_lost);
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

void tpuci__wait_remove(tpuci__sched_t *s, tpuci__wait_t *w) {
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

static void tpuci__schedule_retry(tpuci__sched_t *s, size_t index, int next, uint64_t delay) {
  const tpuci__instance_t *inst = &s->plan->instances[index];
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
  ev.max_attempts = inst->retry.attempts + s->capacity_used[index];
  ev.retry_in_ms = delay;
  tpuci__emit(s, &ev);
}

/* Takes a process off the running list and frees its slots. */
static void tpuci__attempt_unlink(tpuci__sched_t *s, tpuci__satt_t *t) {
  if (t->prev) t->prev->next = t->next;
  else s->running_list = t->next;
  if (t->next) t->next->prev = t->prev;
  s->running--;
  s->slots -= t->a.hosts;
  /* Its slots go back to the backfill of the wait it was started in;
   * anyone else's are held for the waiting head. */
  if (t->backfilled && t->bf_gen == s->bf_gen) s->bf_budget += t->a.hosts;
}

/* Records an attempt's result and tells the host; `res` is filled. */
void tpuci__attempt_report(tpuci__sched_t *s, size_t index, int number,
                           const tpuci__attempt_result_t *res) {
  const tpuci__instance_t *inst = &s->plan->instances[index];
  tpuci_event_t ev;
  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_ATTEMPT_FINISHED;
  ev.instance = index;
  ev.name = inst->name;
  ev.attempt = number;
  ev.max_attempts = inst->retry.attempts + s->capacity_used[index];
  ev.outcome = res->outcome;
  ev.exit_code = res->exit_code;
  ev.term_signal = res->term_signal;
  ev.duration_ms = res->duration_ms;
  ev.cause = res->cause;
  ev.log_path = res->log_path;
  tpuci__emit(s, &ev);
}

/* After a finished attempt: retry it, or finish the instance. The
 * machines' failures (preempted, no capacity) are retried under their own
 * budget, retries.capacity, which the test retries never pay for. */
static void tpuci__attempt_next(tpuci__sched_t *s, size_t index, int number, tpuci_outcome_t o) {
  const tpuci__instance_t *inst = &s->plan->instances[index];
  const tpuci__kind_binding_t *k = s->kind_of[index];
  int capacity = o == TPUCI_OUTCOME_PREEMPTED || o == TPUCI_OUTCOME_NO_CAPACITY;
  int tried = number - s->capacity_used[index]; /* attempts the tests paid for */
  if (s->stop != TPUCI__STOP_NONE || o == TPUCI_OUTCOME_PASSED || o == TPUCI_OUTCOME_CANCELLED) {
    tpuci__instance_settle(s, index);
  } else if (capacity && s->capacity_used[index] < inst->retry.capacity_attempts &&
             (k->ops->retry == NULL || k->ops->retry(k->run, index) == 0)) {
    s->capacity_used[index]++;
    s->next_attempt[index] = number + 1;
    tpuci__schedule_retry(s, index, number + 1, inst->retry.capacity_wait_ms);
  } else if (!capacity && tried < inst->retry.attempts &&
             tpuci__retry_wants(&inst->retry, (int) o) &&
             (k->ops->retry == NULL || k->ops->retry(k->run, index) == 0)) {
    s->next_attempt[index] = number + 1;
    tpuci__schedule_retry(s, index, number + 1, tpuci__retry_delay(&inst->retry, tried + 1));
  } else {
    tpuci__instance_settle(s, index);
  }
}

/* Asks the kind what a running process is doing and what it saw (at
 * most once a second but for `force`). */
static void tpuci__poll(tpuci__satt_t *t, uint64_t now, int force) {
  if (t->kind->ops->poll == NULL || (!force && now - t->polled_ms < 1000)) return;
  t->polled_ms = now;
  t->live_text = t->kind->ops->poll(t->kind->run, &t->kp, now, &t->live_since_ms);
}

static void tpuci__on_done(tpuci__attempt_t *a, const tpuci__exit_t *ex) {
  tpuci__satt_t *t = (tpuci__satt_t *) a;
  tpuci__sched_t *s = t->s;
  tpuci__instance_result_t *r = &s->results[a->index];
  tpuci__attempt_result_t *res;
  tpuci__proc_end_t end;
  tpuci__buf_t tt;
  char *cause, *problem = NULL;

  if (t->finished) return;
  t->finished = 1;
  uv_timer_stop(&t->timeout_timer);
  uv_timer_stop(&t->grace_timer);
  uv_timer_stop(&t->idle_timer);
  if (t->log_fd >= 0) {
    close(t->log_fd);
    t->log_fd = -1;
  }

  memset(&end, 0, sizeof(end));
  end.outcome = tpuci__classify(ex, t->timed_out, t->cancelled);
  end.exit = ex;
  end.duration_ms = (uv_hrtime() - t->start_hr) / 1000000u;
  end.log_path = t->log_made ? t->log_path : NULL;
  if (t->log_errno) end.log_problem = problem = tpuci__strdup(strerror(t->log_errno));
  else if (ex->log_lost) end.log_problem = ex->log_lost;
  tpuci__buf_init(&tt);
  tpuci__timeout_text(t, &tt);
  end.timeout_text = tt.data;
  /* What it saw since the last look, before its end is said. */
  tpuci__poll(t, tpuci__now_ms(), 1);
  tpuci__attempt_unlink(s, t);
  if (t->kp.role == TPUCI__PROC_STEP) {
    tpuci__step_done(s, t, &end);
  } else {
    cause = tpuci__cause(t, end.outcome, ex);
    if (t->kind->ops->ended) end.outcome = t->kind->ops->ended(t->kind->run, &t->kp, &end, &cause);
    if (t->kp.role != TPUCI__PROC_ATTEMPT) {
      free(cause);
      tpuci__side_done(s, a->index);
    } else {
      res = tpuci__result_add(r);
      res->outcome = end.outcome;
      res->exit_code = ex->exit_code;
      res->term_signal = ex->term_signal;
      res->start_ms = t->start_ms;
      res->duration_ms = end.duration_ms;
      res->cause = cause;
      /* No log when the attempt printed nothing. */
      res->log_path = t->log_made ? tpuci__strdup(t->log_path) : NULL;
      tpuci__attempt_report(s, a->index, a->number, res);
      tpuci__attempt_next(s, a->index, a->number, end.outcome);
    }
  }
  tpuci__buf_free(&tt);
  free(problem);

  t->closing = 3;
  s->closing++;
  uv_close((uv_handle_t *) &t->timeout_timer, tpuci__satt_closed);
  uv_close((uv_handle_t *) &t->grace_timer, tpuci__satt_closed);
  uv_close((uv_handle_t *) &t->idle_timer, tpuci__satt_closed);
  tpuci__pump(s);
}

/* What runtimes call for attempts (runtime/runtime.h). */
static const tpuci__attempt_host_t tpuci__attempt_host = {tpuci__on_output, tpuci__on_done,
                                                          tpuci__on_message, tpuci__on_write_error};

/* Records an attempt that ran nothing (a part that finishes without
 * running, a failed step's part) and finishes the instance. */
void tpuci__attempt_synthetic(tpuci__sched_t *s, size_t index, tpuci_outcome_t o, const char *cause,
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
  ev.max_attempts = inst->retry.attempts + s->capacity_used[index];
  tpuci__emit(s, &ev);
  res->outcome = o;
  res->exit_code = -1;
  res->start_ms = tpuci__now_ms();
  res->cause = tpuci__strdup(cause);
  res->log_path = tpuci__strdup(log_path);
  tpuci__attempt_report(s, index, number, res);
  tpuci__instance_settle(s, index);
}

/* The process's folder: the instance's, or its group's for a step. */
static char *tpuci__proc_dir(const tpuci__sched_t *s, size_t index, tpuci__proc_role_t role) {
  const char *name = role == TPUCI__PROC_STEP ? s->groups[s->group_of[index]].name
                                              : s->plan->instances[index].name;
  char *safe = tpuci__path_component(name), *dir;
  dir = tpuci__printf("%s/%s", s->run_dir, safe);
  free(safe);
  return dir;
}

void tpuci__attempt_start(tpuci__sched_t *s, size_t index, tpuci__proc_role_t role) {
  const tpuci__instance_t *inst = &s->plan->instances[index];
  tpuci__satt_t *t = tpuci__calloc(1, sizeof(*t));
  tpuci__runtime_t *rt = s->rts[inst->runtime];
  char *cause = NULL;
  tpuci_event_t ev;
  int r;

  t->s = s;
  t->kind = s->kind_of[index];
  t->a.host = &tpuci__attempt_host;
  t->a.loop = s->loop;
  t->a.plan = s->plan;
  t->a.inst = inst;
  t->a.index = index;
  t->a.number = role == TPUCI__PROC_ATTEMPT ? s->next_attempt[index] : 0;
  t->a.run_id = s->run_id;
  /* A process besides the attempts is named as attempt 0, and the next
   * one of the instance takes the name: none is kept. */
  t->a.keep_on_failure = s->opts.keep_failed && role == TPUCI__PROC_ATTEMPT;
  t->a.argv = &inst->argv;
  t->a.grace_ms = tpuci__grace(s, inst);
  t->a.hosts = role == TPUCI__PROC_STEP ? 1 : tpuci__plan_hosts(s->plan, inst);
  t->log_fd = -1;
  t->dir = tpuci__proc_dir(s, index, role);
  t->a.dir = t->dir;
  t->kp.index = index;
  t->kp.group = s->group_of[index];
  t->kp.role = role;
  t->kp.number = t->a.number;
  t->kp.hosts = t->a.hosts;
  t->kp.dir = t->dir;
  uv_timer_init(s->loop, &t->timeout_timer);
  uv_timer_init(s->loop, &t->grace_timer);
  uv_timer_init(s->loop, &t->idle_timer);
  t->timeout_timer.data = t;
  t->grace_timer.data = t;
  t->idle_timer.data = t;

  s->running++;
  s->slots += t->a.hosts;
  t->backfilled = s->bf_starting;
  t->bf_gen = s->bf_gen;
  t->next = s->running_list;
  if (s->running_list) s->running_list->prev = t;
  s->running_list = t;
  t->start_ms = tpuci__now_ms();
  t->start_hr = uv_hrtime();
  t->kp.start_ms = t->start_ms;

  /* What its kind says it runs, where it writes its results. */
  r = t->kind->ops->prepare ? t->kind->ops->prepare(t->kind->run, &t->kp, &cause) : 0;
  if (t->kp.argv.len > 0) t->a.argv = &t->kp.argv;
  t->a.results_dir = t->kp.results_dir;
  t->a.results_path = t->kp.results_path;
  t->a.peer_exits = t->kp.peer_exits;
  t->log_path = t->kp.log_name ? tpuci__printf("%s/%s", t->dir, t->kp.log_name)
                               : tpuci__printf("%s/attempt-%d.log", t->dir, t->a.number);

  if (role == TPUCI__PROC_ATTEMPT) {
    memset(&ev, 0, sizeof(ev));
    ev.type = TPUCI_EVENT_ATTEMPT_STARTED;
    ev.instance = index;
    ev.name = inst->name;
    ev.attempt = t->a.number;
    ev.max_attempts = inst->retry.attempts + s->capacity_used[index];
    ev.log_path = t->log_path;
    tpuci__emit(s, &ev);
  }

  if (r != 0) {
    tpuci__exit_t ex = {.exit_code = -1, .infra = 1};
    ex.cause = cause ? cause : (char *) uv_strerror(r);
    tpuci__attempt_done(&t->a, &ex);
    free(cause);
    return;
  }
  if (inst->timeout_ms) {
    /* From now, not from the start of this loop iteration. */
    uv_update_time(s->loop);
    uv_timer_start(&t->timeout_timer, tpuci__timeout_cb, inst->timeout_ms, 0);
  }
  uv_update_time(s->loop);
  t->last_output = uv_now(s->loop);
  if (inst->idle_timeout_ms) {
    uv_timer_start(&t->idle_timer, tpuci__idle_cb, inst->idle_timeout_ms, 0);
  }
  r = rt->start(rt, &t->a);
  if (r != 0) {
    tpuci__exit_t ex = {.exit_code = -1, .infra = 1};
    ex.cause = rt->err.msg ? rt->err.msg : uv_strerror(r);
    tpuci__log_write(t, ex.cause, strlen(ex.cause));
    tpuci__log_write(t, "\n", 1);
    tpuci__attempt_done(&t->a, &ex);
  }
}

void tpuci__poll_all(tpuci__sched_t *s) {
  tpuci__satt_t *t;
  uint64_t now = tpuci__now_ms();
  for (t = s->running_list; t; t = t->next)
    if (!t->finished) tpuci__poll(t, now, 0);
}

int tpuci__sched_running(tpuci__sched_t *s, size_t index, tpuci__running_t *out) {
  tpuci__satt_t *t;
  uint64_t now = tpuci__now_ms(), loop_now = uv_now(s->loop);
  for (t = s->running_list; t; t = t->next)
    if (t->a.index == index && t->kp.role == TPUCI__PROC_ATTEMPT && !t->finished) break;
  if (t == NULL) return -1;
  tpuci__poll(t, now, 0);
  memset(out, 0, sizeof(*out));
  out->attempt = t->a.number;
  out->elapsed_ms = now > t->start_ms ? now - t->start_ms : 0;
  out->output_bytes = t->out_bytes;
  out->quiet_ms = loop_now > t->last_output ? loop_now - t->last_output : 0;
  out->test = t->live_text;
  out->test_ms = t->live_text && now > t->live_since_ms ? now - t->live_since_ms : 0;
  return 0;
}
