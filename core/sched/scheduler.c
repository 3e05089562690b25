/* The scheduler.
 *
 * Instances wait in a FIFO ready queue. An attempt takes one slot per
 * host (a gang of H emulated hosts takes H, and starts only when all H
 * are free); while the queue's head fits and the run is not being
 * cancelled, pump() starts its attempt on its runtime. The queue is FIFO
 * with backfill: while the head waits for slots, the slots that were free
 * when it began to wait may run later instances that fit in them
 * (tpuci__backfill); the slots others free meanwhile are held for it, so
 * a wide gang waits at most for one backfilled attempt, never for a
 * stream of narrow ones.
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
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sched/internal.h"

/* ------------------------------------------------------------------ */
/* Events                                                              */

void tpuci__emit(tpuci__sched_t *s, tpuci_event_t *ev) {
  ev->size = sizeof(*ev);
  if (s->opts.on_event) s->opts.on_event(s->opts.host, ev);
}

void tpuci__emit_message(tpuci__sched_t *s, const char *msg) {
  tpuci_event_t ev;
  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_MESSAGE;
  ev.message = msg;
  tpuci__emit(s, &ev);
}

static void tpuci__rt_message(tpuci__runtime_t *rt, const char *msg) {
  tpuci__emit_message(rt->host_data, msg);
}

static void tpuci__rt_pull(tpuci__runtime_t *rt, const tpuci__pull_progress_t *p) {
  tpuci_event_t ev;
  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_PULL;
  ev.image = p->ref;
  /* The phases are the public states, in the same order. */
  ev.pull_state = (tpuci_pull_state_t) p->phase;
  ev.pull_layers = p->layers;
  ev.pull_current = p->current;
  ev.pull_total = p->total;
  ev.duration_ms = p->elapsed_ms;
  tpuci__emit(rt->host_data, &ev);
}

/* ------------------------------------------------------------------ */
/* The ready queue                                                     */

void tpuci__queue_push(tpuci__sched_t *s, size_t index) {
  s->queue[(s->qhead + s->qlen) % s->qcap] = index;
  s->qlen++;
}

size_t tpuci__queue_pop(tpuci__sched_t *s) {
  size_t index = s->queue[s->qhead];
  s->qhead = (s->qhead + 1) % s->qcap;
  s->qlen--;
  return index;
}

/* ------------------------------------------------------------------ */
/* Results                                                             */

tpuci__attempt_result_t *tpuci__result_add(tpuci__instance_result_t *r) {
  r->attempts = tpuci__realloc(r->attempts, (r->nattempts + 1) * sizeof(*r->attempts));
  memset(&r->attempts[r->nattempts], 0, sizeof(*r->attempts));
  return &r->attempts[r->nattempts++];
}

/* Sets the final outcome of instance `index` from its attempts. */
void tpuci__instance_finish(tpuci__sched_t *s, size_t index) {
  tpuci__instance_result_t *r = &s->results[index];
  tpuci_outcome_t outs[128] = {TPUCI_OUTCOME_NONE}, *o = outs;
  tpuci_event_t ev;
  size_t i;

  if (r->nattempts > sizeof(outs) / sizeof(outs[0])) o = tpuci__malloc(r->nattempts * sizeof(*o));
  for (i = 0; i < r->nattempts; i++) o[i] = r->attempts[i].outcome;
  r->outcome = tpuci__final_outcome(o, r->nattempts);
  if (o != outs) free(o);
  /* Its kind says what the attempts' outcomes give (every test must
   * pass; flaky, order-dependent). */
  if (s->kind_of[index]->ops->outcome)
    r->outcome = s->kind_of[index]->ops->outcome(s->kind_of[index]->run, index, r->outcome);

  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_INSTANCE_FINISHED;
  ev.instance = index;
  ev.name = s->plan->instances[index].name;
  ev.attempt = (int) r->nattempts;
  ev.max_attempts = s->plan->instances[index].retry.attempts + s->capacity_used[index];
  ev.outcome = r->outcome;
  ev.exit_code = r->nattempts ? r->attempts[r->nattempts - 1].exit_code : -1;
  tpuci__emit(s, &ev);

  if (s->opts.fail_fast && s->stop == TPUCI__STOP_NONE && r->outcome != TPUCI_OUTCOME_PASSED &&
      r->outcome != TPUCI_OUTCOME_FLAKY && r->outcome != TPUCI_OUTCOME_ORDER_DEPENDENT &&
      r->outcome != TPUCI_OUTCOME_CACHED && r->outcome != TPUCI_OUTCOME_CANCELLED) {
    char *msg = tpuci__printf("fail-fast: '%s' %s; stopping the run", ev.name,
                              tpuci_outcome_name(r->outcome));
    tpuci__emit_message(s, msg);
    free(msg);
    tpuci__stop(s, TPUCI__STOP_FAIL_FAST, 0);
  }
}

/* ------------------------------------------------------------------ */
/* The run                                                             */

#define TPUCI__SCHED_MOVE(n) (1u << (n))
static const char *const tpuci__sched_state_names[] = {"PREPARING", "RUNNING", "STOPPING",
                                                       "CLOSING", "FINISHED"};
static const unsigned tpuci__sched_moves[] = {
    [TPUCI__SCHED_PREPARING] =
        TPUCI__SCHED_MOVE(TPUCI__SCHED_RUNNING) | TPUCI__SCHED_MOVE(TPUCI__SCHED_STOPPING),
    [TPUCI__SCHED_RUNNING] =
        TPUCI__SCHED_MOVE(TPUCI__SCHED_STOPPING) | TPUCI__SCHED_MOVE(TPUCI__SCHED_CLOSING),
    [TPUCI__SCHED_STOPPING] = TPUCI__SCHED_MOVE(TPUCI__SCHED_CLOSING),
    [TPUCI__SCHED_CLOSING] = TPUCI__SCHED_MOVE(TPUCI__SCHED_FINISHED),
    [TPUCI__SCHED_FINISHED] = 0,
};

/* The run's state (internal.h): its one setter. A move its table lacks
 * is a bug of tpuci: a debug build asserts; a release build tells it as a
 * message of the run and refuses it (0), as the state's handles may be
 * closing already. */
static int tpuci__sched_set(tpuci__sched_t *s, tpuci__sched_state_t to) {
  char *msg;
  if ((tpuci__sched_moves[s->state] >> to) & 1u) {
    s->state = to;
    return 1;
  }
  msg = tpuci__printf("tpuci: internal error: the run moved from %s to %s, which it never "
                      "should; please report it",
                      tpuci__sched_state_names[s->state], tpuci__sched_state_names[to]);
  tpuci__emit_message(s, msg);
  free(msg);
  assert(!"the scheduler made a move its table does not allow");
  return 0;
}

/* Whether the instance at `index` can start as a plain attempt (not a
 * group's step or a part's first start, which have rules of their
 * own). */
static int tpuci__plain(const tpuci__sched_t *s, size_t index) {
  const tpuci__group_t *g = s->group_of[index] >= 0 ? &s->groups[s->group_of[index]] : NULL;
  return g == NULL || (g->state != TPUCI__GROUP_NEW && g->state != TPUCI__GROUP_STEPPING &&
                       s->next_attempt[index] != 1);
}

/* A part of a ready (or failed) group before its first attempt: whether
 * it finishes without running, and then finishes it (no slot needed). */
static int tpuci__part_skipped(tpuci__sched_t *s, size_t index) {
  tpuci__group_t *g = &s->groups[s->group_of[index]];
  const tpuci__kind_binding_t *k = s->kind_of[index];
  tpuci__part_skip_t skip = {TPUCI_OUTCOME_PASSED, NULL};
  if (g->state == TPUCI__GROUP_FAILED) {
    tpuci__attempt_synthetic(s, index, g->outcome, g->cause, g->log_path);
    return 1;
  }
  if (k->ops->part == NULL || k->ops->part(k->run, index, &skip) == 0) return 0;
  tpuci__attempt_synthetic(s, index, skip.outcome, skip.cause, g->log_path);
  free(skip.cause);
  return 1;
}

/* The head of the queue needs more slots than are free. The first time
 * for this head, the free slots become the backfill's budget; a later
 * plain instance that fits in the budget starts now, the first in queue
 * order. Returns whether one started. */
static int tpuci__backfill(tpuci__sched_t *s, size_t head) {
  size_t k;
  if (s->bf_head != head) {
    s->bf_head = head;
    s->bf_gen++;
    s->bf_budget = s->opts.jobs - s->slots;
  }
  for (k = 1; k < s->qlen; k++) {
    size_t at = (s->qhead + k) % s->qcap, index = s->queue[at], j;
    int need;
    if (!tpuci__plain(s, index)) continue;
    need = tpuci__plan_hosts(s->plan, &s->plan->instances[index]);
    if (need > s->bf_budget || s->slots + need > s->opts.jobs) continue;
    /* Out of the ring, the ones behind it move up. */
    for (j = k; j + 1 < s->qlen; j++)
      s->queue[(s->qhead + j) % s->qcap] = s->queue[(s->qhead + j + 1) % s->qcap];
    s->qlen--;
    s->bf_budget -= need;
    s->bf_starting = 1;
    tpuci__attempt_start(s, index, 0);
    s->bf_starting = 0;
    return 1;
  }
  return 0;
}

void tpuci__pump(tpuci__sched_t *s) {
  if (s->in_pump || (s->state != TPUCI__SCHED_RUNNING && s->state != TPUCI__SCHED_STOPPING)) return;
  s->in_pump = 1;
  /* Processes besides the attempts that go first (the time to the first
   * failure stays short) start first; the others, extra work, once the
   * queue is empty. */
  while (s->state == TPUCI__SCHED_RUNNING && tpuci__side_start(s, TPUCI__PROC_SIDE_FIRST)) {}
  while (s->state == TPUCI__SCHED_RUNNING && s->qlen > 0 &&
         tpuci__side_count(s, TPUCI__PROC_SIDE_FIRST) == 0) {
    size_t head = s->queue[s->qhead];
    tpuci__group_t *g = s->group_of[head] >= 0 ? &s->groups[s->group_of[head]] : NULL;
    int first_part = g != NULL && s->next_attempt[head] == 1;
    if (g != NULL && g->state == TPUCI__GROUP_STEPPING) {
      /* It waits for its group's step, taking no slot. */
      g->waiting[g->nwaiting++] = tpuci__queue_pop(s);
      continue;
    }
    if (first_part && g->state != TPUCI__GROUP_NEW && tpuci__part_skipped(s, head)) {
      tpuci__queue_pop(s);
      continue;
    }
    if (s->slots + (g && g->state == TPUCI__GROUP_NEW
                        ? 1
                        : tpuci__plan_hosts(s->plan, &s->plan->instances[head])) >
        s->opts.jobs) {
      if (tpuci__backfill(s, head)) continue;
      break;
    }
    s->bf_head = SIZE_MAX;
    tpuci__queue_pop(s);
    if (g != NULL && g->state == TPUCI__GROUP_NEW) {
      g->state = TPUCI__GROUP_STEPPING;
      g->waiting[g->nwaiting++] = head;
      tpuci__attempt_start(s, head, TPUCI__PROC_STEP);
    } else {
      tpuci__attempt_start(s, head, TPUCI__PROC_ATTEMPT);
    }
  }
  while (s->state == TPUCI__SCHED_RUNNING && s->qlen == 0 &&
         tpuci__side_start(s, TPUCI__PROC_SIDE_LAST)) {}
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

void tpuci__check_finished(tpuci__sched_t *s) {
  tpuci_event_t ev;
  int k;

  if (s->in_pump || s->preparing || s->running || s->qlen || s->waits || s->nside) return;
  if (s->state == TPUCI__SCHED_FINISHED) return;
  if (s->state != TPUCI__SCHED_CLOSING) {
    if (!tpuci__sched_set(s, TPUCI__SCHED_CLOSING)) return;
    /* Close everything this run holds on the loop; runtimes remove what
     * they still have (containers, networks) first. */
    s->closing++;
    uv_close((uv_handle_t *) &s->deadline_timer, tpuci__handle_closed);
    s->closing++;
    uv_close((uv_handle_t *) &s->tick_timer, tpuci__handle_closed);
    s->closing++;
    uv_close((uv_handle_t *) &s->poll_timer, tpuci__handle_closed);
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
  if (s->closing > 0 || !tpuci__sched_set(s, TPUCI__SCHED_FINISHED)) return;
  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_RUN_FINISHED;
  ev.message = s->error;
  tpuci__emit(s, &ev);
}

/* Finishes instances that will not start (queued or waiting to retry). */
void tpuci__drain(tpuci__sched_t *s) {
  size_t g;
  tpuci__side_drain(s);
  while (s->qlen > 0) tpuci__instance_settle(s, tpuci__queue_pop(s));
  /* Parts waiting for a step that will not be used. */
  for (g = 0; g < s->ngroups; g++) {
    while (s->groups[g].nwaiting > 0 && s->groups[g].state != TPUCI__GROUP_STEPPING)
      tpuci__instance_settle(s, s->groups[g].waiting[--s->groups[g].nwaiting]);
  }
  while (s->waits) {
    tpuci__wait_t *w = s->waits;
    size_t index = w->index;
    uv_timer_stop(&w->timer);
    tpuci__wait_remove(s, w);
    tpuci__instance_settle(s, index);
  }
}

void tpuci__stop(tpuci__sched_t *s, tpuci__stop_t why, int force) {
  tpuci__satt_t *t, *next;
  int k;
  /* Stopped again (a second signal forces it): the state stays. */
  if (s->state != TPUCI__SCHED_STOPPING && !tpuci__sched_set(s, TPUCI__SCHED_STOPPING)) return;
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
  /* Nothing is left to stop once the run closes. */
  if (s->state == TPUCI__SCHED_CLOSING || s->state == TPUCI__SCHED_FINISHED) return;
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

static void tpuci__poll_cb(uv_timer_t *timer) { tpuci__poll_all(timer->data); }

static void tpuci__signal_cb(uv_signal_t *h, int signum) {
  tpuci__sched_t *s = h->data;
  s->signal_count++;
  if (s->signal_count == 1) {
    char *msg = tpuci__printf("%s: stopping %d running attempt%s (send again to force)",
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
    if (s->state == TPUCI__SCHED_PREPARING) tpuci__sched_set(s, TPUCI__SCHED_STOPPING);
    s->stop = TPUCI__STOP_INTERRUPT;
    s->qlen = 0;
    tpuci__check_finished(s);
    return;
  }
  /* Stopped while preparing: pump() starts nothing, the run ends. */
  if (s->state == TPUCI__SCHED_PREPARING) tpuci__sched_set(s, TPUCI__SCHED_RUNNING);
  tpuci__pump(s);
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

/* The kind of instance `inst`: the first of `kinds` that claims it. */
static const tpuci__kind_binding_t *tpuci__kind_find(const tpuci__kind_binding_t *kinds,
                                                     size_t nkinds, const tpuci__instance_t *inst) {
  static const tpuci__kind_binding_t command = {&tpuci__kind_command, NULL};
  size_t k;
  for (k = 0; k < nkinds; k++)
    if (kinds[k].ops->claims(inst)) return &kinds[k];
  return &command;
}

int tpuci__sched_check(const tpuci__plan_t *plan, const tpuci__kind_binding_t *kinds, size_t nkinds,
                       int jobs, tpuci__err_t *err) {
  size_t i;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    const tpuci__driver_t *d = tpuci__driver(inst->runtime);
    const tpuci__kind_t *kind = tpuci__kind_find(kinds, nkinds, inst)->ops;
    int hosts = tpuci__plan_hosts(plan, inst), r;
    if (!inst->selected) continue;
    if (hosts > 1 && inst->network != NULL)
      return tpuci__err_set(err, TPUCI_EUSAGE,
                            "%s: '%s': a gang gets a private network of its own; "
                            "leave out network = \"%s\"",
                            inst->where, inst->name, inst->network);
    if (hosts > 1 && !d->gangs)
      return tpuci__err_set(err, TPUCI_EUSAGE,
                            "%s: '%s' is a gang of %d hosts, which needs the docker "
                            "runtime (give the job an image)",
                            inst->where, inst->name, hosts);
    if (hosts > 1 && d->one_machine &&
        strcmp(plan->topologies[inst->topology].emulate, "real") == 0)
      return tpuci__err_set(err, TPUCI_EUSAGE,
                            "%s: '%s' is a gang of %d hosts on real TPU hardware: each "
                            "host is a TPU VM of its own, and the %s runtime runs "
                            "every host on one engine (use --engine swarm with one TPU "
                            "VM per node, or a single-host type)",
                            inst->where, inst->name, hosts,
                            tpuci__runtime_kind_name(inst->runtime));
    if (kind->check != NULL && (r = kind->check(plan, inst, hosts, err)) != 0) return r;
    if (hosts > jobs)
      return tpuci__err_set(err, TPUCI_EUSAGE,
                            "%s: '%s' is a gang of %d hosts and needs %d slots, "
                            "but the run has %d (raise -j to at least %d)",
                            inst->where, inst->name, hosts, hosts, jobs, hosts);
  }
  return tpuci__runtime_check(plan, err);
}

/* What the scheduler does for kinds (kind.h, tpuci__kind_host_t). */
static void tpuci__host_message(void *sched, const char *msg) { tpuci__emit_message(sched, msg); }

static int tpuci__host_stopping(void *sched) {
  return ((tpuci__sched_t *) sched)->stop != TPUCI__STOP_NONE;
}

static void tpuci__host_test_failed(void *sched, const tpuci__kind_proc_t *p, const char *test,
                                    const char *message) {
  tpuci__sched_t *s = sched;
  const tpuci__instance_t *inst = &s->plan->instances[p->index];
  tpuci_event_t ev;
  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_TEST_FAILED;
  ev.instance = p->index;
  ev.name = inst->name;
  /* 0: the process that runs first; -1: one after the attempts. */
  ev.attempt = p->role == TPUCI__PROC_SIDE_LAST ? -1 : p->number;
  ev.max_attempts = inst->retry.attempts + s->capacity_used[p->index];
  ev.test = test;
  ev.message = message;
  tpuci__emit(s, &ev);
}

static void tpuci__sched_free_parts(tpuci__sched_t *s) {
  tpuci__groups_free(s);
  free(s->side);
  free(s->sides_open);
  free(s->main_done);
  free(s->settled);
  free(s->kind_of);
  free(s->queue);
  free(s->next_attempt);
  free(s->capacity_used);
  free(s->run_id);
  free(s->run_dir);
  free(s->error);
}

int tpuci__sched_start(tpuci__sched_t **out, uv_loop_t *loop, const tpuci__plan_t *plan,
                       tpuci__instance_result_t *results, const tpuci__sched_opts_t *opts,
                       tpuci__err_t *err) {
  tpuci__sched_t *s = tpuci__calloc(1, sizeof(*s));
  tpuci__runtime_opts_t ropts;
  int need[TPUCI__RUNTIME__COUNT] = {0};
  size_t i;
  int k, r;

  r = tpuci__sched_check(plan, opts->kinds, opts->nkinds, opts->jobs > 0 ? opts->jobs : 1, err);
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
  s->bf_head = SIZE_MAX;
  s->queue = tpuci__malloc(s->qcap * sizeof(*s->queue));
  s->next_attempt = tpuci__malloc(s->qcap * sizeof(int));
  s->capacity_used = tpuci__calloc(s->qcap, sizeof(int));
  s->kind_of = tpuci__calloc(s->qcap, sizeof(*s->kind_of));
  s->sides_open = tpuci__calloc(s->qcap, sizeof(*s->sides_open));
  s->main_done = tpuci__calloc(s->qcap, 1);
  s->settled = tpuci__calloc(s->qcap, 1);
  s->kind_host.sched = s;
  s->kind_host.message = tpuci__host_message;
  s->kind_host.test_failed = tpuci__host_test_failed;
  s->kind_host.stopping = tpuci__host_stopping;
  tpuci__side_host(s);
  for (i = 0; i < plan->ninstances; i++) {
    s->next_attempt[i] = 1;
    s->kind_of[i] = tpuci__kind_find(opts->kinds, opts->nkinds, &plan->instances[i]);
    if (!plan->instances[i].selected || (opts->done && opts->done[i])) continue;
    need[plan->instances[i].runtime] = 1;
    tpuci__queue_push(s, i);
  }
  for (i = 0; i < opts->nkinds; i++)
    if (opts->kinds[i].ops->attach) opts->kinds[i].ops->attach(opts->kinds[i].run, &s->kind_host);
  /* Groups (each with its step, unless ready from a record); then what
   * each instance that may start queues besides its attempts. */
  tpuci__groups_build(s);
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__kind_binding_t *kb = s->kind_of[i];
    if (!plan->instances[i].selected || (opts->done && opts->done[i]) || kb->ops->ready == NULL)
      continue;
    if (s->group_of[i] < 0 || s->groups[s->group_of[i]].state == TPUCI__GROUP_READY)
      kb->ops->ready(kb->run, i);
  }

  ropts.run_id = s->run_id;
  ropts.keep_failed = opts->keep_failed;
  for (k = 0; k < TPUCI__RUNTIME__COUNT; k++) {
    if (!need[k]) continue;
    r = tpuci__runtime_new((tpuci__runtime_kind_t) k, loop, &ropts, &s->rts[k], err);
    if (r != 0) {
      int j;
      for (j = 0; j < k; j++)
        if (s->rts[j]) s->rts[j]->free(s->rts[j]);
      tpuci__sched_free_parts(s);
      free(s);
      return r;
    }
    s->rts[k]->host_data = s;
    s->rts[k]->on_message = tpuci__rt_message;
    s->rts[k]->on_pull = tpuci__rt_pull;
  }

  uv_timer_init(loop, &s->deadline_timer);
  s->deadline_timer.data = s;
  uv_timer_init(loop, &s->tick_timer);
  s->tick_timer.data = s;
  /* What running processes say as they run (a failed test is said when
   * it happens, TPUCI_EVENT_TEST_FAILED, not when its attempt ends). */
  uv_timer_init(loop, &s->poll_timer);
  s->poll_timer.data = s;
  uv_timer_start(&s->poll_timer, tpuci__poll_cb, 500, 500);
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
  /* What is done already (cached) is told first. */
  for (i = 0; opts->done && i < plan->ninstances; i++) {
    if (!plan->instances[i].selected || !opts->done[i] || results[i].nattempts == 0) continue;
    tpuci__attempt_report(s, i, (int) results[i].nattempts,
                          &results[i].attempts[results[i].nattempts - 1]);
    s->main_done[i] = s->settled[i] = 1;
    tpuci__instance_finish(s, i);
  }
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
        s->error = tpuci__strdup(s->rts[k]->err.msg ? s->rts[k]->err.msg : uv_strerror(r));
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
  int k;
  if (s == NULL) return;
  for (k = 0; k < TPUCI__RUNTIME__COUNT; k++)
    if (s->rts[k]) s->rts[k]->free(s->rts[k]);
  tpuci__sched_free_parts(s);
  free(s);
}
