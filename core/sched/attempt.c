/* Attempts: one started on its runtime (its folder, log and results
 * folder, its command), its timeout (SIGTERM, grace, SIGKILL), its
 * output and messages, what it left (the result, the cause), and the
 * retry that follows. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pytest/pytest_run.h"
#include "sched/internal.h"

/* ------------------------------------------------------------------ */
/* Attempts                                                            */

uint64_t tpuci__grace(const tpuci__sched_t *s,
                             const tpuci__instance_t *inst) {
  if (s->opts.grace_ms) return s->opts.grace_ms;
  if (inst->grace_ms) return inst->grace_ms;
  return TPUCI__DEFAULT_GRACE_MS;
}

tpuci__runtime_t *tpuci__rt(const tpuci__satt_t *t) {
  return t->s->rts[t->a.inst->runtime];
}

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
  uv_timer_start(&t->grace_timer, tpuci__grace_cb,
                 tpuci__grace(t->s, t->a.inst), 0);
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

static void tpuci__satt_closed(uv_handle_t *h) {
  tpuci__satt_t *t = h->data;
  tpuci__sched_t *s = t->s;
  if (--t->closing > 0) return;
  free(t->dir);
  free(t->log_path);
  free(t->results_dir);
  tpuci__strv_free(&t->argv_own);
  if (t->has_live) tpuci__live_free(&t->live);
  free(t->live_text);
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
    t->log_fd = open(t->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
                     O_APPEND, 0644);
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

static void tpuci__on_output(tpuci__attempt_t *a, int stream, const char *buf,
                             size_t len) {
  tpuci__satt_t *t = (tpuci__satt_t *) a;
  tpuci_event_t ev;

  if (len > 0) t->last_output = uv_now(t->s->loop);
  t->out_bytes += len;
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
char *tpuci__cause(const tpuci__satt_t *t, tpuci_outcome_t o, const tpuci__exit_t *ex) {
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
      tpuci__timeout_text(t, &b);
      if (t->kill_sent) tpuci__buf_adds(&b, " (SIGKILL after grace period)");
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

void tpuci__schedule_retry(tpuci__sched_t *s, size_t index, int next) {
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


/* Takes an attempt off the running list and frees its slots. */
void tpuci__attempt_unlink(tpuci__sched_t *s, tpuci__satt_t *t) {
  if (t->prev) t->prev->next = t->next;
  else s->running_list = t->next;
  if (t->next) t->next->prev = t->prev;
  s->running--;
  s->slots -= t->collect ? 1 : tpuci__plan_hosts(s->plan, t->a.inst);
  /* Its slots go back to the backfill of the wait it was started in;
   * anyone else's are held for the waiting head. */
  if (t->backfilled && t->bf_gen == s->bf_gen)
    s->bf_budget += t->collect ? 1 : tpuci__plan_hosts(s->plan, t->a.inst);
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
void tpuci__attempt_next(tpuci__sched_t *s, size_t index, int number,
                                tpuci_outcome_t o) {
  const tpuci__instance_t *inst = &s->plan->instances[index];
  if (o != TPUCI_OUTCOME_PASSED && o != TPUCI_OUTCOME_CANCELLED &&
      s->stop == TPUCI__STOP_NONE && number < inst->retry.attempts &&
      tpuci__retry_wants(&inst->retry, (int) o)) {
    if (inst->pytest && s->results[index].history) {
      /* Only what failed or did not run, where pytest told us. */
      tpuci__strv_t *next = tpuci__calloc(1, sizeof(*next));
      int r = tpuci__pytest_next_selection(s->results[index].history, s->select[index],
                                           inst->retry.rerun_unfinished, next);
      if (r < 0) {
        /* retries.rerun = "unfinished", and every test finished. */
        free(next);
        tpuci__instance_settle(s, index);
        return;
      }
      if (r == 0) {
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
    tpuci__instance_settle(s, index);
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
  uv_timer_stop(&t->idle_timer);
  if (t->log_fd >= 0) {
    close(t->log_fd);
    t->log_fd = -1;
  }

  o = tpuci__classify(ex, t->timed_out, t->cancelled);
  duration = (uv_hrtime() - t->start_hr) / 1000000u;
  /* Failures it reported since the last look, before its end is said. */
  if (t->has_live) {
    tpuci__live_poll(&t->live, tpuci__now_ms());
    tpuci__progress_tell(s, t);
  }
  tpuci__attempt_unlink(s, t);
  if (t->collect) {
    tpuci__collect_done(s, t, o, ex);
  } else if (t->kind == TPUCI__ATT_FIRST) {
    tpuci__first_done(s, t, o, ex, duration, tpuci__cause(t, o, ex));
  } else if (t->kind == TPUCI__ATT_CHECK) {
    tpuci__check_done(s, t, o, duration, tpuci__cause(t, o, ex));
  } else {
    cause = tpuci__cause(t, o, ex);
    if (a->inst->pytest) {
      if (r->history == NULL) {
        r->history = tpuci__calloc(1, sizeof(*r->history));
        tpuci__history_init(r->history, a->inst->name);
      }
      o = tpuci__pytest_after(r->history, a->inst, t->results_dir, o, ex, cause,
                              duration, s->select[a->index], &py_cause);
      if (s->group_of[a->index] >= 0 && s->groups[s->group_of[a->index]].filter &&
          s->select[a->index] == NULL)
        tpuci__shard_seen(s, a->index, t->results_dir);
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
    /* No log when the attempt printed nothing. */
    res->log_path = t->log_made ? tpuci__strdup(t->log_path) : NULL;
    tpuci__attempt_report(s, a->index, a->number, res);
    tpuci__attempt_next(s, a->index, a->number, o);
  }

  t->closing = 3;
  s->closing++;
  uv_close((uv_handle_t *) &t->timeout_timer, tpuci__satt_closed);
  uv_close((uv_handle_t *) &t->grace_timer, tpuci__satt_closed);
  uv_close((uv_handle_t *) &t->idle_timer, tpuci__satt_closed);
  tpuci__pump(s);
}

/* What runtimes call for attempts (runtime/runtime.h). */
static const tpuci__attempt_host_t tpuci__attempt_host = {
    tpuci__on_output, tpuci__on_done, tpuci__on_message, tpuci__on_write_error};

/* A side process's folder names: "first", "check-N". */
static char *tpuci__side_name(const tpuci__sched_t *s, size_t index, int kind) {
  if (kind == TPUCI__ATT_FIRST) return tpuci__strdup("first");
  return tpuci__printf("check-%d", s->ochecks[index] ? s->ochecks[index]->procs : 0);
}

/* Starts the next attempt of instance `index` (or, with TPUCI__ATT_COLLECT,
 * the collection of its shard group's tests; with TPUCI__ATT_FIRST or
 * TPUCI__ATT_CHECK a process of its own besides its attempts, order.c). A
 * failure to start is recorded as an infra failure of the attempt. */
void tpuci__attempt_start(tpuci__sched_t *s, size_t index, int kind) {
  const tpuci__instance_t *inst = &s->plan->instances[index];
  tpuci__satt_t *t = tpuci__calloc(1, sizeof(*t));
  tpuci__runtime_t *rt = s->rts[inst->runtime];
  int collect = kind == TPUCI__ATT_COLLECT, side = kind >= TPUCI__ATT_FIRST;
  char *safe, *side_name = side ? tpuci__side_name(s, index, kind) : NULL;
  tpuci_event_t ev;
  int r;

  t->s = s;
  t->a.host = &tpuci__attempt_host;
  t->a.loop = s->loop;
  t->a.plan = s->plan;
  t->a.inst = inst;
  t->a.index = index;
  t->a.number = collect || side ? 0 : s->next_attempt[index];
  t->a.run_id = s->run_id;
  /* A side process's container is named as attempt 0, and the next one
   * of the instance takes the name: none is kept. */
  t->a.keep_on_failure = s->opts.keep_failed && !collect && !side;
  t->a.argv = &inst->argv;
  t->a.grace_ms = tpuci__grace(s, inst);
  t->a.hosts = collect ? 1 : tpuci__plan_hosts(s->plan, inst);
  t->collect = collect;
  t->kind = kind;
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
    t->log_path = side ? tpuci__printf("%s/%s.log", t->dir, side_name)
                       : tpuci__printf("%s/attempt-%d.log", t->dir, t->a.number);
  }
  t->a.dir = t->dir;
  free(safe);
  uv_timer_init(s->loop, &t->timeout_timer);
  uv_timer_init(s->loop, &t->grace_timer);
  uv_timer_init(s->loop, &t->idle_timer);
  t->timeout_timer.data = t;
  t->grace_timer.data = t;
  t->idle_timer.data = t;

  s->running++;
  s->slots += collect ? 1 : tpuci__plan_hosts(s->plan, inst);
  t->backfilled = s->bf_starting;
  t->bf_gen = s->bf_gen;
  t->next = s->running_list;
  if (s->running_list) s->running_list->prev = t;
  s->running_list = t;
  t->start_ms = tpuci__now_ms();
  t->start_hr = uv_hrtime();

  r = 0;
  if (inst->pytest && !collect) {
    /* pytest writes its JUnit file here; containers see it mounted. */
    t->results_dir = side ? tpuci__printf("%s/results-%s", t->dir, side_name)
                          : tpuci__printf("%s/results-%d", t->dir, t->a.number);
    r = tpuci__mkdir_p(t->results_dir, 0777);
    t->a.results_dir = t->results_dir;
    /* A host whose pytest ran to its end does not cut its peers' short:
     * host 0's report is the gang's. */
    t->a.peer_exits = (1u << TPUCI__PYTEST_FAILED) | (1u << TPUCI__PYTEST_NO_TESTS);
    t->a.results_path = tpuci__driver(inst->runtime)->results_mount
                             ? tpuci__driver(inst->runtime)->results_mount
                             : t->results_dir;
    if (side) {
      /* Only its tests, in pytest's order, of the job's selection. */
      tpuci__strv_t only = {0};
      tpuci__side_only(s, t, &only);
      tpuci__pytest_argv_shard(inst, t->a.results_path, NULL, &only, NULL, &t->argv_own);
      tpuci__strv_free(&only);
    } else {
      /* A shard that keeps its part of the whole suite gets its
       * assignment; every test runs in pytest's order. */
      const char *assign = NULL;
      int gi = s->group_of[index];
      if (gi >= 0 && s->groups[gi].filter && s->select[index] == NULL)
        assign = s->groups[gi].assign[inst->pytest->shard - 1];
      tpuci__pytest_argv_shard(inst, t->a.results_path, s->select[index], NULL, assign,
                               &t->argv_own);
    }
    t->a.argv = &t->argv_own;
    tpuci__live_init(&t->live, t->results_dir, t->a.hosts);
    t->has_live = 1;
  }

  free(side_name);
  if (!collect && !side) {
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
    tpuci__exit_t ex = {-1, 0, 0, 1, NULL, NULL};
    char *cause = tpuci__printf("cannot create %s: %s", t->results_dir,
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
  uv_update_time(s->loop);
  t->last_output = uv_now(s->loop);
  if (inst->idle_timeout_ms) {
    uv_timer_start(&t->idle_timer, tpuci__idle_cb, inst->idle_timeout_ms, 0);
  }
  r = rt->start(rt, &t->a);
  if (r != 0) {
    tpuci__exit_t ex = {-1, 0, 0, 1, NULL, NULL};
    ex.cause = rt->err.msg ? rt->err.msg : uv_strerror(r);
    tpuci__log_write(t, ex.cause, strlen(ex.cause));
    tpuci__log_write(t, "\n", 1);
    tpuci__attempt_done(&t->a, &ex);
  }
}

/* Reads a pytest attempt's progress (at most once a second from here and
 * tpuci__sched_running) and says each test it saw failing. */
static void tpuci__progress_look(tpuci__sched_t *s, tpuci__satt_t *t, uint64_t now) {
  t->live_polled_ms = now;
  tpuci__live_poll(&t->live, now);
  free(t->live_text);
  t->live_text = tpuci__live_text(&t->live, &t->live_since_ms);
  tpuci__progress_tell(s, t);
}

void tpuci__progress_tell(tpuci__sched_t *s, tpuci__satt_t *t) {
  tpuci__live_fail_t *f;
  size_t n, i;
  if (!t->has_live) return;
  f = tpuci__live_failed(&t->live, &n);
  for (i = 0; i < n; i++) {
    tpuci_event_t ev;
    /* An order check's failures are what it looks for, not news. */
    if (t->kind == TPUCI__ATT_MAIN || t->kind == TPUCI__ATT_FIRST) {
      memset(&ev, 0, sizeof(ev));
      ev.type = TPUCI_EVENT_TEST_FAILED;
      ev.instance = t->a.index;
      ev.name = t->a.inst->name;
      ev.attempt = t->a.number;
      ev.max_attempts = t->a.inst->retry.attempts;
      ev.test = f[i].id;
      ev.message = f[i].message;
      tpuci__emit(s, &ev);
    }
    tpuci__live_fail_free(&f[i]);
  }
  free(f);
}

void tpuci__progress_poll(tpuci__sched_t *s) {
  tpuci__satt_t *t;
  uint64_t now = tpuci__now_ms();
  for (t = s->running_list; t; t = t->next)
    if (t->has_live && !t->finished && now - t->live_polled_ms >= 1000)
      tpuci__progress_look(s, t, now);
}

int tpuci__sched_running(tpuci__sched_t *s, size_t index, tpuci__running_t *out) {
  tpuci__satt_t *t;
  uint64_t now = tpuci__now_ms(), loop_now = uv_now(s->loop);
  for (t = s->running_list; t; t = t->next)
    if (t->a.index == index && t->kind == TPUCI__ATT_MAIN && !t->finished) break;
  if (t == NULL) return -1;
  if (t->has_live && now - t->live_polled_ms >= 1000) tpuci__progress_look(s, t, now);
  memset(out, 0, sizeof(*out));
  out->attempt = t->a.number;
  out->elapsed_ms = now > t->start_ms ? now - t->start_ms : 0;
  out->output_bytes = t->out_bytes;
  out->quiet_ms = loop_now > t->last_output ? loop_now - t->last_output : 0;
  out->test = t->live_text;
  out->test_ms = t->live_text && now > t->live_since_ms ? now - t->live_since_ms : 0;
  return 0;
}
