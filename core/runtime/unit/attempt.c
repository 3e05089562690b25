/* The attempt state machine of the engine drivers (unit.h): its three
 * machines' tables and setters, the phases' step function, stopping a
 * gang, the start deadline, the outcome, cleanup once. The checks of a
 * move and the request count are state.c's. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/unit/unit.h"

/* The state machines' tables (unit.h's top says each move). */

static const char *const tpuci__unit_phase_names[] = {"NETWORK", "CREATE", "RUN",   "INSPECT",
                                                      "REMOVE",  "GONE",   "UNNET", "DONE"};
static const unsigned tpuci__unit_phase_moves[] = {
    [TPUCI__UP_NETWORK] = TPUCI__MOVE(TPUCI__UP_CREATE) | TPUCI__MOVE(TPUCI__UP_INSPECT),
    [TPUCI__UP_CREATE] = TPUCI__MOVE(TPUCI__UP_RUN) | TPUCI__MOVE(TPUCI__UP_INSPECT),
    [TPUCI__UP_RUN] = TPUCI__MOVE(TPUCI__UP_INSPECT),
    [TPUCI__UP_INSPECT] = TPUCI__MOVE(TPUCI__UP_REMOVE) | TPUCI__MOVE(TPUCI__UP_DONE),
    [TPUCI__UP_REMOVE] = TPUCI__MOVE(TPUCI__UP_GONE),
    [TPUCI__UP_GONE] = TPUCI__MOVE(TPUCI__UP_UNNET),
    [TPUCI__UP_UNNET] = TPUCI__MOVE(TPUCI__UP_DONE),
    [TPUCI__UP_DONE] = 0,
};

static const char *const tpuci__unit_gang_names[] = {"OPENING", "HALTED", "STARTING",
                                                     "GO",      "UP",     "END"};
static const unsigned tpuci__unit_gang_moves[] = {
    [TPUCI__GANG_OPENING] = TPUCI__MOVE(TPUCI__GANG_HALTED) | TPUCI__MOVE(TPUCI__GANG_STARTING),
    [TPUCI__GANG_HALTED] = 0,
    [TPUCI__GANG_STARTING] = TPUCI__MOVE(TPUCI__GANG_GO) | TPUCI__MOVE(TPUCI__GANG_UP),
    [TPUCI__GANG_GO] = TPUCI__MOVE(TPUCI__GANG_UP),
    [TPUCI__GANG_UP] = TPUCI__MOVE(TPUCI__GANG_END),
    [TPUCI__GANG_END] = 0,
};

static const char *const tpuci__unit_state_names[] = {"NEW",  "CREATED", "STARTED",
                                                      "DONE", "EXITED",  "LOST"};
static const unsigned tpuci__unit_state_moves[] = {
    [TPUCI__U_NEW] = TPUCI__MOVE(TPUCI__U_CREATED),
    [TPUCI__U_CREATED] = TPUCI__MOVE(TPUCI__U_STARTED),
    [TPUCI__U_STARTED] =
        TPUCI__MOVE(TPUCI__U_DONE) | TPUCI__MOVE(TPUCI__U_EXITED) | TPUCI__MOVE(TPUCI__U_LOST),
    [TPUCI__U_DONE] = TPUCI__MOVE(TPUCI__U_EXITED) | TPUCI__MOVE(TPUCI__U_LOST),
    [TPUCI__U_EXITED] = 0,
    [TPUCI__U_LOST] = 0,
};

static const tpuci__unit_machine_t tpuci__unit_phase_machine = {
    .what = "phase", .names = tpuci__unit_phase_names, .moves = tpuci__unit_phase_moves};
static const tpuci__unit_machine_t tpuci__unit_gang_machine = {
    .what = "gang start", .names = tpuci__unit_gang_names, .moves = tpuci__unit_gang_moves};
static const tpuci__unit_machine_t tpuci__unit_state_machine = {
    .what = "host", .names = tpuci__unit_state_names, .moves = tpuci__unit_state_moves};

/* The attempt's phase: its one setter. */
static void tpuci__unit_phase(tpuci__unit_att_t *att, tpuci__unit_phase_t to) {
  tpuci__unit_move(att, &tpuci__unit_phase_machine, NULL, (int) att->phase, (int) to);
  att->phase = to;
}

/* The gang's start: its one setter. */
static void tpuci__unit_gang(tpuci__unit_att_t *att, tpuci__unit_gang_t to) {
  tpuci__unit_move(att, &tpuci__unit_gang_machine, NULL, (int) att->gang_state, (int) to);
  att->gang_state = to;
}

/* A host's state: its one setter. */
static void tpuci__unit_state(tpuci__unit_t *u, tpuci__unit_state_t to) {
  tpuci__unit_move(u->att, &tpuci__unit_state_machine, u->host ? u->host : u->name, (int) u->state,
                   (int) to);
  u->state = to;
}

tpuci__unit_t *tpuci__unit_at(tpuci__unit_att_t *att, size_t i) {
  return (tpuci__unit_t *) ((char *) att->units + i * att->ops->unit_size);
}

tpuci__unit_att_t *tpuci__unit_att_new(const tpuci__unit_ops_t *ops, tpuci__attempt_t *a, size_t n,
                                       uint64_t grace_ms) {
  tpuci__unit_att_t *att = tpuci__calloc(1, ops->att_size);
  size_t i;
  att->ops = ops;
  att->a = a;
  att->phase = TPUCI__UP_NETWORK;
  att->gang_state = TPUCI__GANG_OPENING;
  att->nunits = n;
  att->gang = n > 1;
  att->grace_ms = grace_ms;
  att->units = tpuci__calloc(n, ops->unit_size);
  for (i = 0; i < n; i++) {
    tpuci__unit_t *u = tpuci__unit_at(att, i);
    u->att = att;
    u->index = (int) i;
    u->state = TPUCI__U_NEW;
  }
  return att;
}

/* Frees what the attempt holds except itself and its timer. */
static void tpuci__unit_release(tpuci__unit_att_t *att) {
  size_t i;
  for (i = 0; i < att->nunits; i++) {
    tpuci__unit_t *u = tpuci__unit_at(att, i);
    if (att->ops->release) att->ops->release(u);
    free(u->name);
    free(u->host);
    free(u->gate_wait);
  }
  if (att->ops->att_release) att->ops->att_release(att);
  free(att->units);
  att->units = NULL;
  att->nunits = 0;
  free(att->infra);
  free(att->log_lost);
  free(att->not_up);
  att->infra = att->log_lost = att->not_up = NULL;
}

void tpuci__unit_att_free(tpuci__unit_att_t *att) {
  if (att == NULL) return;
  tpuci__unit_release(att);
  free(att);
}

static void tpuci__unit_later_cb(uv_timer_t *t) {
  tpuci__unit_att_t *att = t->data;
  void (*fn)(tpuci__unit_att_t *) = att->later;
  att->later = NULL;
  tpuci__unit_req_end(att);
  fn(att);
  tpuci__unit_step(att);
}

void tpuci__unit_later(tpuci__unit_att_t *att, uint64_t ms, void (*fn)(tpuci__unit_att_t *att)) {
  att->later = fn;
  tpuci__unit_req_begin(att);
  att->timer.data = att;
  uv_timer_start(&att->timer, tpuci__unit_later_cb, ms, 0);
}

int tpuci__unit_hosts(tpuci__runtime_t *rt, const char *runtime, int flags, tpuci__attempt_t *a,
                      tpuci__unit_hosts_t *out) {
  const tpuci__instance_t *inst = a->inst;
  const tpuci__plan_t *plan = a->plan;
  tpuci__slice_t *slice = &out->slice;
  size_t *hosts = &out->hosts;
  int rc;
  out->has_slice = 0;
  *hosts = 1;
  if (!(flags & TPUCI__UNIT_NO_IMAGE) && (inst->image < 0 || (size_t) inst->image >= plan->nimages))
    return tpuci__err_set(&rt->err, TPUCI_EUSAGE, "%s: job '%s' has no image for the %s runtime",
                          inst->where ? inst->where : "spec", inst->name, runtime);
  if (inst->topology < 0 || (size_t) inst->topology >= plan->ntopologies) return 0;
  rc = tpuci__topology_slice(&plan->topologies[inst->topology], slice, &rt->err);
  if (rc != 0) return rc;
  out->has_slice = 1;
  *hosts = (size_t) slice->hosts;
  /* An attempt may need fewer (a collection runs host 0 alone). */
  if (a->hosts > 0 && (size_t) a->hosts < *hosts) *hosts = (size_t) a->hosts;
  if (*hosts > 1 && inst->network != NULL) {
    rc = tpuci__err_set(&rt->err, TPUCI_EUSAGE,
                        "%s: job '%s': network = \"%s\" cannot be used "
                        "with the %zu-host topology '%s': the hosts of a "
                        "gang get a private network of their own",
                        inst->where ? inst->where : "spec", inst->job, inst->network, *hosts,
                        slice->name);
    tpuci__slice_free(slice);
    out->has_slice = 0;
    return rc;
  }
  return 0;
}

int tpuci__unit_start(tpuci__runtime_t *rt, const char *runtime, const tpuci__unit_ops_t *ops,
                      tpuci__attempt_t *a, uint64_t grace_ms, tpuci__unit_list_t *list) {
  const tpuci__instance_t *inst = a->inst;
  tpuci__unit_att_t *att;
  tpuci__unit_hosts_t h;
  size_t i;
  int rc = tpuci__unit_hosts(rt, runtime, ops->flags, a, &h);
  if (rc != 0) return rc;
  att = tpuci__unit_att_new(ops, a, h.hosts,
                            a->grace_ms      ? a->grace_ms
                            : inst->grace_ms ? inst->grace_ms
                                             : grace_ms);
  for (i = 0; att->gang && i < h.hosts; i++)
    tpuci__unit_at(att, i)->host = tpuci__printf(TPUCI__GANG_HOST_FMT, (int) i);
  rc = ops->init(att, rt, h.has_slice ? &h.slice : NULL);
  if (h.has_slice) tpuci__slice_free(&h.slice);
  if (rc != 0) {
    tpuci__unit_att_free(att);
    return rc;
  }
  tpuci__unit_run(att, rt->loop, list);
  return 0;
}

void tpuci__unit_rt_init(tpuci__runtime_t *rt, const char *name, uv_loop_t *loop,
                         tpuci__unit_list_t *list, void (*changed)(tpuci__runtime_t *rt)) {
  rt->name = name;
  rt->loop = loop;
  rt->signal = tpuci__unit_rt_signal;
  list->rt = rt;
  list->changed = changed;
}

int tpuci__unit_rt_signal(tpuci__runtime_t *rt, tpuci__attempt_t *a, int signum) {
  (void) rt;
  return tpuci__unit_signal(a->rt_data, signum);
}

/* Signals. */

static void tpuci__unit_send(tpuci__unit_t *u, int signum) {
  /* What reaches a host whose command ended ends its wait step only:
   * not a signal to the command. */
  if (signum > 0 && signum < 64 && u->state != TPUCI__U_DONE) u->signals |= 1ull << signum;
  u->att->ops->stop(u, signum);
}

static void tpuci__unit_stop_one(tpuci__unit_t *u, int signum) {
  tpuci__unit_att_t *att = u->att;
  if (att->ops->flags & TPUCI__UNIT_STOP_BY_REMOVE) {
    if (!TPUCI__U_ENDED(u)) att->ops->stop(u, signum);
    return;
  }
  if (!TPUCI__U_MADE(u) || TPUCI__U_ENDED(u)) return;
  if (TPUCI__U_RAN(u)) tpuci__unit_send(u, signum);
  else u->pending_signal = signum;
}

void tpuci__unit_stop_all(tpuci__unit_att_t *att, int signum) {
  size_t i;
  for (i = 0; i < att->nunits; i++) tpuci__unit_stop_one(tpuci__unit_at(att, i), signum);
}

static void tpuci__unit_halt_all(tpuci__unit_att_t *att) {
  size_t i;
  if (att->ops->halt == NULL) return;
  for (i = 0; i < att->nunits; i++) att->ops->halt(tpuci__unit_at(att, i));
}

static void tpuci__unit_grace_cb(uv_timer_t *t) {
  tpuci__unit_att_t *att = t->data;
  if (att->phase != TPUCI__UP_RUN) return;
  tpuci__unit_stop_all(att, SIGKILL);
}

/* Whether a host's exit `status` lets its peers run on (a->peer_exits). */
static int tpuci__unit_runs_on(const tpuci__unit_att_t *att, long status) {
  return status > 0 && status < 32 && (att->a->peer_exits >> status) & 1u;
}

/* One host of a gang failed on its own: the gang ends together. */
static void tpuci__unit_gang_stop(tpuci__unit_att_t *att) {
  if (!att->gang || att->gang_stop) return;
  att->gang_stop = 1;
  /* Every host that has not ended: the one that failed too when its
   * command said its end and it waits idle (a SIGTERM ends that wait;
   * its status stays its command's). */
  tpuci__unit_stop_all(att, SIGTERM);
  if (!(att->ops->flags & TPUCI__UNIT_STOP_BY_REMOVE))
    uv_timer_start(&att->timer, tpuci__unit_grace_cb, att->grace_ms, 0);
}

int tpuci__unit_signal(tpuci__unit_att_t *att, int signum) {
  if (att == NULL) return 0;
  /* Recorded after RUN too: a driver that stops by removing ended RUN at
   * the first signal, and the SIGKILL that follows the grace is still
   * what ended its units (ops->outcome reads att->signals). */
  if (signum > 0 && signum < 64) att->signals |= 1ull << signum;
  if (att->phase > TPUCI__UP_RUN) return 0;
  att->signalled = 1;
  if (att->phase < TPUCI__UP_RUN ||
      (att->phase == TPUCI__UP_RUN && att->gang_state == TPUCI__GANG_OPENING)) {
    /* Not started yet: do not start it at all. */
    att->stop = 1;
    if (att->phase == TPUCI__UP_RUN) tpuci__unit_halt_all(att);
    return 0;
  }
  tpuci__unit_stop_all(att, signum);
  if (att->ops->flags & TPUCI__UNIT_STOP_BY_REMOVE) tpuci__unit_step(att);
  return 0;
}

/* RUN. */

/* Once every output is ready: OPENING -> STARTING, every start asked;
 * or -> HALTED when it was stopped or failed meanwhile. */
static void tpuci__unit_launch(tpuci__unit_att_t *att) {
  size_t i;
  if (att->to_ready > 0 || att->gang_state != TPUCI__GANG_OPENING) return;
  if (att->infra != NULL || att->stop) {
    tpuci__unit_gang(att, TPUCI__GANG_HALTED);
    tpuci__unit_halt_all(att);
    return;
  }
  tpuci__unit_gang(att, TPUCI__GANG_STARTING);
  for (i = 0; i < att->nunits; i++) att->ops->start(tpuci__unit_at(att, i));
}

void tpuci__unit_created(tpuci__unit_t *u) { tpuci__unit_state(u, TPUCI__U_CREATED); }

void tpuci__unit_ready(tpuci__unit_t *u) {
  if (u->ready) return;
  u->ready = 1;
  u->att->to_ready--;
  tpuci__unit_launch(u->att);
}

/* The start deadline. */

/* Whether unit u is up: started and, with a wait step, past it. */
static int tpuci__unit_is_up(const tpuci__unit_t *u) {
  if (!TPUCI__U_RAN(u)) return 0;
  return !(u->att->ops->flags & TPUCI__UNIT_GATE) || u->gate >= TPUCI__GATE_STARTED;
}

/* Whether the gang counts as up: every unit is (UP, END), or it has no
 * start deadline (a lone host, start_timeout = 0). */
static int tpuci__unit_gang_up(const tpuci__unit_att_t *att) {
  return att->gang_state >= TPUCI__GANG_UP || !att->gang || att->start_ms == 0;
}

/* Every unit up: STARTING or GO -> UP, the deadline is off. */
static void tpuci__unit_check_up(tpuci__unit_att_t *att) {
  size_t i;
  if (att->gang_state != TPUCI__GANG_STARTING && att->gang_state != TPUCI__GANG_GO) return;
  for (i = 0; i < att->nunits; i++)
    if (!tpuci__unit_is_up(tpuci__unit_at(att, i))) return;
  tpuci__unit_gang(att, TPUCI__GANG_UP);
  uv_timer_stop(&att->start_timer);
}

/* What keeps unit u from being up, for the cause. */
static void tpuci__unit_not_up(tpuci__buf_t *b, tpuci__unit_t *u) {
  char *why = u->att->ops->not_up ? u->att->ops->not_up(u) : NULL;
  const char *name = u->host ? u->host : u->name;
  if (b->len) tpuci__buf_adds(b, "; ");
  if (why != NULL) {
    tpuci__buf_addf(b, "%s %s", name, why);
    free(why);
  } else if (!TPUCI__U_RAN(u)) {
    tpuci__buf_addf(b, "%s never started", name);
  } else if (u->gate == TPUCI__GATE_WAITING) {
    tpuci__buf_addf(b, "%s could not resolve%s", name, u->gate_wait);
  } else if (u->gate == TPUCI__GATE_READY) {
    tpuci__buf_addf(b, "%s %s", name,
                    u->att->gang_state == TPUCI__GANG_GO ? "did not see tpuci's go" : "was ready");
  } else if (TPUCI__U_ENDED(u) &&
             !(u->att->signalled && (u->status == 128 + SIGKILL || u->status == 128 + SIGTERM))) {
    /* (An end that tpuci's own stop caused says nothing of the host.) */
    tpuci__buf_addf(b, "%s ended (exit %ld) before the gang was up", name, u->status);
  } else {
    tpuci__buf_addf(b, "%s started, but its wait step said nothing", name);
  }
}

/* The hosts that are not up and why. New string. */
static char *tpuci__unit_not_up_all(tpuci__unit_att_t *att) {
  tpuci__buf_t b;
  size_t i;
  tpuci__buf_init(&b);
  for (i = 0; i < att->nunits; i++) {
    tpuci__unit_t *u = tpuci__unit_at(att, i);
    if (!tpuci__unit_is_up(u)) tpuci__unit_not_up(&b, u);
  }
  if (b.len == 0) tpuci__buf_adds(&b, "?");
  return tpuci__buf_steal(&b);
}

static void tpuci__unit_start_late(uv_timer_t *t) {
  tpuci__unit_att_t *att = t->data;
  char d[32];
  char *why;
  if (att->phase != TPUCI__UP_RUN || tpuci__unit_gang_up(att) || att->infra != NULL) return;
  why = tpuci__unit_not_up_all(att);
  tpuci__unit_infra(att,
                    tpuci__printf("the gang's hosts were not all up within %s (start_timeout): %s",
                                  tpuci__duration_format(att->start_ms, d, sizeof(d)), why));
  free(why);
  if (att->gang_state == TPUCI__GANG_OPENING) {
    /* Nothing started: nothing will. */
    att->stop = 1;
    tpuci__unit_halt_all(att);
  } else {
    /* The jobs that started wait for peers that are not there. */
    tpuci__unit_stop_all(att, (att->ops->flags & TPUCI__UNIT_STOP_BY_REMOVE) ? SIGTERM : SIGKILL);
  }
  tpuci__unit_step(att);
}

/* STARTING -> GO once every host resolves every name (a unit just said
 * `state`): they may start. Asked before the check for UP, which
 * follows from the same line at the earliest. */
static void tpuci__unit_go(tpuci__unit_att_t *att, tpuci__gate_state_t state) {
  size_t i;
  if (att->gang_state != TPUCI__GANG_STARTING || att->ops->go == NULL ||
      state < TPUCI__GATE_READY || att->phase != TPUCI__UP_RUN || att->infra != NULL ||
      att->signalled)
    return;
  for (i = 0; i < att->nunits; i++)
    if (tpuci__unit_at(att, i)->gate < TPUCI__GATE_READY) return;
  tpuci__unit_gang(att, TPUCI__GANG_GO);
  att->ops->go(att);
}

void tpuci__unit_gate(tpuci__unit_t *u, tpuci__gate_state_t state, const char *waiting) {
  tpuci__unit_att_t *att = u->att;
  /* DONE comes with a status: tpuci__unit_done. */
  if (state == TPUCI__GATE_SILENT || state == TPUCI__GATE_DONE) return;
  free(u->gate_wait);
  u->gate_wait = NULL;
  u->gate = state;
  if (state == TPUCI__GATE_WAITING)
    u->gate_wait =
        tpuci__printf("%s%s", waiting && *waiting == ' ' ? "" : " ", waiting ? waiting : "");
  tpuci__unit_go(att, state);
  if (state == TPUCI__GATE_STARTED) tpuci__unit_check_up(att);
}

void tpuci__unit_started(tpuci__unit_t *u, int ok) {
  tpuci__unit_att_t *att = u->att;
  if (!ok) {
    /* It will not run: nothing will end what follows it. The others of
     * a gang must not run on alone. */
    if (att->ops->halt) att->ops->halt(u);
    tpuci__unit_stop_all(att, SIGKILL);
    return;
  }
  tpuci__unit_state(u, TPUCI__U_STARTED);
  tpuci__unit_check_up(att);
  att->ops->watch(u);
  if (att->infra != NULL) tpuci__unit_send(u, SIGKILL);
  else if (u->pending_signal) tpuci__unit_send(u, u->pending_signal);
  u->pending_signal = 0;
}

/* UP -> END once the command of every host of a gang ended (it said
 * so, or its unit ended) and one host at least waits for the end: the
 * driver makes the end's name exist, and they exit. Not when the
 * attempt is being stopped (a signal, an infra failure, a host that
 * failed on its own): that stopped them all already. */
static void tpuci__unit_end(tpuci__unit_att_t *att) {
  size_t i;
  int idle = 0;
  if (att->gang_state != TPUCI__GANG_UP || att->ops->end == NULL || att->phase != TPUCI__UP_RUN ||
      att->signalled || att->infra != NULL || att->gang_stop)
    return;
  for (i = 0; i < att->nunits; i++) {
    const tpuci__unit_t *u = tpuci__unit_at(att, i);
    if (u->state == TPUCI__U_DONE) idle = 1;
    else if (!TPUCI__U_ENDED(u)) return;
  }
  if (!idle) return;
  tpuci__unit_gang(att, TPUCI__GANG_END);
  att->ops->end(att);
}

/* Its command ended with `status` (the unit may still run, idle): a
 * host of a gang that failed on its own stops the others. */
static void tpuci__unit_over(tpuci__unit_t *u, long status) {
  tpuci__unit_att_t *att = u->att;
  u->order = ++att->ends;
  u->status = status;
  if (!(att->ops->flags & TPUCI__UNIT_STOP_BY_REMOVE)) u->stopped = u->signals != 0;
  if (status != 0 && !u->stopped && !tpuci__unit_runs_on(att, status)) tpuci__unit_gang_stop(att);
}

void tpuci__unit_done(tpuci__unit_t *u, long status) {
  /* Said once, by a host that runs. */
  if (u->state != TPUCI__U_STARTED) return;
  tpuci__unit_state(u, TPUCI__U_DONE);
  u->gate = TPUCI__GATE_DONE;
  tpuci__unit_over(u, status);
  tpuci__unit_end(u->att);
}

void tpuci__unit_exited(tpuci__unit_t *u, long status) {
  if (u->state == TPUCI__U_DONE) {
    /* Its command's status was said: the unit's own is its wait step's,
     * the same unless tpuci ended it while it was idle (SIGKILL). */
    tpuci__unit_state(u, TPUCI__U_EXITED);
    if (status != u->status) u->idle_killed = 1;
    return;
  }
  tpuci__unit_state(u, TPUCI__U_EXITED);
  tpuci__unit_over(u, status);
  tpuci__unit_end(u->att);
}

void tpuci__unit_ended_infra(tpuci__unit_t *u) {
  if (u->state != TPUCI__U_DONE) u->order = ++u->att->ends;
  tpuci__unit_state(u, TPUCI__U_LOST);
  tpuci__unit_stop_all(u->att, SIGKILL);
}

int tpuci__unit_polls(const tpuci__unit_att_t *att) {
  return att->phase == TPUCI__UP_RUN || att->phase == TPUCI__UP_GONE;
}

/* Whether RUN is over (requests aside): a driver that stops by removing
 * ends it at once when cut short. */
static int tpuci__unit_run_over(tpuci__unit_att_t *att) {
  size_t i;
  if (!(att->ops->flags & TPUCI__UNIT_STOP_BY_REMOVE)) return 1;
  if (att->stop || att->signalled || att->gang_stop || att->infra != NULL) return 1;
  for (i = 0; i < att->nunits; i++)
    if (!TPUCI__U_ENDED(tpuci__unit_at(att, i))) return 0;
  return 1;
}

/* The end. */

/* Whether the attempt failed on its own: a non-zero exit or an OOM kill,
 * with no signal from the scheduler and no infra failure. Only those are
 * kept with --keep-failed; timed out and cancelled ones never are. */
static int tpuci__unit_failed_alone(tpuci__unit_att_t *att) {
  size_t i;
  if (att->infra != NULL || att->stop || att->signalled) return 0;
  for (i = 0; i < att->nunits; i++) {
    const tpuci__unit_t *u = tpuci__unit_at(att, i);
    if (TPUCI__U_OVER(u) && (u->status != 0 || u->oom)) return 1;
  }
  return 0;
}

static void tpuci__unit_closed(uv_handle_t *h) {
  tpuci__unit_att_t *att = h->data;
  tpuci__unit_list_t *l = att->list;
  if (--att->closing > 0) return;
  free(att);
  l->handles--;
  l->changed(l->rt);
}

static void tpuci__unit_finish(tpuci__unit_att_t *att) {
  tpuci__unit_list_t *l = att->list;
  tpuci__attempt_t *a = att->a;
  tpuci__gang_verdict_t v;
  tpuci__exit_t ex;
  size_t i;

  memset(&ex, 0, sizeof(ex));
  memset(&v, 0, sizeof(v));
  v.host = -1;
  ex.exit_code = -1;
  if (att->infra != NULL) {
    ex.infra = 1;
    ex.cause = att->infra;
  } else if (att->stop && !(att->ops->flags & TPUCI__UNIT_STOP_BY_REMOVE)) {
    v.cause =
        tpuci__printf("stopped before the %s%s started", att->ops->kind, att->gang ? "s" : "");
    ex.cause = v.cause;
  } else {
    tpuci__gang_host_t *h = tpuci__calloc(att->nunits, sizeof(*h));
    for (i = 0; i < att->nunits; i++) {
      const tpuci__unit_t *u = tpuci__unit_at(att, i);
      h[i].name = u->host;
      h[i].exited = u->state == TPUCI__U_EXITED || u->state == TPUCI__U_DONE;
      h[i].status = u->status;
      h[i].oom = u->oom;
      h[i].oom_unreported = u->oom_unreported;
      h[i].signals = u->signals;
      h[i].stopped = u->stopped;
      h[i].order = u->order;
    }
    tpuci__gang_verdict(h, att->nunits, a->inst->memory_bytes, &v);
    free(h);
    ex.exit_code = v.exit_code;
    ex.term_signal = v.term_signal;
    ex.oom = v.oom;
    ex.cause = v.cause;
  }
  if (att->ops->outcome) att->ops->outcome(att, &v, &ex);
  ex.log_lost = att->log_lost;
  ex.not_up = att->not_up;
  if (att->prev) att->prev->next = att->next;
  else l->atts = att->next;
  if (att->next) att->next->prev = att->prev;
  a->rt_data = NULL;
  /* Counted before attempt_done(): the scheduler may close the runtime
   * from there, and closing must wait for this timer. */
  l->handles++;
  tpuci__attempt_done(a, &ex);
  tpuci__gang_verdict_free(&v);
  tpuci__unit_release(att);
  att->closing = 2;
  att->timer.data = att;
  uv_close((uv_handle_t *) &att->timer, tpuci__unit_closed);
  uv_close((uv_handle_t *) &att->start_timer, tpuci__unit_closed);
}

void tpuci__unit_run(tpuci__unit_att_t *att, uv_loop_t *loop, tpuci__unit_list_t *list) {
  uv_timer_init(loop, &att->timer);
  att->timer.data = att;
  uv_timer_init(loop, &att->start_timer);
  att->start_timer.data = att;
  att->list = list;
  att->next = list->atts;
  if (list->atts) list->atts->prev = att;
  list->atts = att;
  att->a->rt_data = att;
  if (att->ops->net_create) att->ops->net_create(att);
  tpuci__unit_step(att);
}

/* CREATE -> RUN: the start deadline of a gang, then every output opened
 * (or at once ready), then the launch once all are ready. */
static void tpuci__unit_run_begin(tpuci__unit_att_t *att) {
  const tpuci__unit_ops_t *ops = att->ops;
  size_t i;
  tpuci__unit_phase(att, TPUCI__UP_RUN);
  /* A gang's start is bounded, with or without a timeout. */
  att->start_ms = att->a->inst->start_timeout_ms;
  if (att->gang && att->start_ms > 0)
    uv_timer_start(&att->start_timer, tpuci__unit_start_late, att->start_ms, 0);
  att->to_ready = (int) att->nunits + 1;
  for (i = 0; i < att->nunits; i++) {
    tpuci__unit_t *u = tpuci__unit_at(att, i);
    if (ops->output) ops->output(u);
    else tpuci__unit_ready(u);
  }
  att->to_ready--;
  tpuci__unit_launch(att);
}

/* RUN -> INSPECT once it is over: the timers stop, the units a driver
 * that stops by removing did not see end count as stopped, and those
 * that exited non-zero are classified. */
static void tpuci__unit_run_end(tpuci__unit_att_t *att) {
  const tpuci__unit_ops_t *ops = att->ops;
  size_t i;
  if (att->gang && !tpuci__unit_gang_up(att) && att->signalled && att->infra == NULL) {
    /* Stopped (a timeout, Ctrl-C) before the gang was up: say what it
     * was waiting for, now and in the attempt's cause. */
    free(att->not_up);
    att->not_up = tpuci__unit_not_up_all(att);
    tpuci__unit_tell(att, "stopped before the gang was up: %s", att->not_up);
  }
  if (!(ops->flags & TPUCI__UNIT_STOP_BY_REMOVE)) uv_timer_stop(&att->timer);
  uv_timer_stop(&att->start_timer);
  tpuci__unit_phase(att, TPUCI__UP_INSPECT);
  for (i = 0; i < att->nunits; i++) {
    tpuci__unit_t *u = tpuci__unit_at(att, i);
    /* (A host whose command said its end has its status.) */
    if (!TPUCI__U_OVER(u) && (ops->flags & TPUCI__UNIT_STOP_BY_REMOVE)) {
      u->stopped = 1;
      u->signals = att->signals;
    }
  }
  if (att->infra != NULL || ops->classify == NULL) return;
  for (i = 0; i < att->nunits; i++) {
    tpuci__unit_t *u = tpuci__unit_at(att, i);
    /* Not one ended while idle: its status is its command's, not the
     * container's. */
    if (u->state == TPUCI__U_EXITED && u->status != 0 && !u->idle_killed) ops->classify(u);
  }
}

/* INSPECT -> REMOVE, every unit and the go removed; or, when
 * --keep-failed keeps a failed attempt's units, -> DONE once what was
 * kept is told (and the go removed). */
static void tpuci__unit_inspected(tpuci__unit_att_t *att) {
  const tpuci__unit_ops_t *ops = att->ops;
  int go = ops->go_remove != NULL && att->gang_state >= TPUCI__GANG_GO;
  size_t i;
  if (att->a->keep_on_failure && tpuci__unit_failed_alone(att)) {
    for (i = 0; i <= att->nunits; i++) {
      char *m = ops->keep(att, i < att->nunits ? tpuci__unit_at(att, i) : NULL);
      if (m != NULL) tpuci__attempt_message(att->a, m);
      free(m);
    }
    /* The go is no evidence: it goes (DONE waits for it). */
    tpuci__unit_phase(att, TPUCI__UP_DONE);
    if (go) ops->go_remove(att);
    return;
  }
  tpuci__unit_phase(att, TPUCI__UP_REMOVE);
  for (i = 0; i < att->nunits; i++) ops->remove(tpuci__unit_at(att, i));
  if (go) ops->go_remove(att);
}

/* The step function: moves the phase on while nothing is in flight
 * (unit.h's top). */
void tpuci__unit_step(tpuci__unit_att_t *att) {
  const tpuci__unit_ops_t *ops = att->ops;
  size_t i;

  while (att->requests == 0) {
    switch (att->phase) {
      case TPUCI__UP_NETWORK:
        if (att->infra != NULL || att->stop) {
          tpuci__unit_phase(att, TPUCI__UP_INSPECT);
          break;
        }
        tpuci__unit_phase(att, TPUCI__UP_CREATE);
        for (i = 0; i < att->nunits; i++) ops->create(tpuci__unit_at(att, i));
        break;
      case TPUCI__UP_CREATE:
        /* After a failure or a signal: straight to removing whatever was
         * created. */
        if (att->infra != NULL || att->stop) tpuci__unit_phase(att, TPUCI__UP_INSPECT);
        else tpuci__unit_run_begin(att);
        break;
      case TPUCI__UP_RUN:
        if (!tpuci__unit_run_over(att)) return;
        tpuci__unit_run_end(att);
        break;
      case TPUCI__UP_INSPECT: tpuci__unit_inspected(att); break;
      case TPUCI__UP_REMOVE: tpuci__unit_phase(att, TPUCI__UP_GONE); break;
      case TPUCI__UP_GONE: {
        int first = !att->gone_asked;
        att->gone_asked = 1;
        if (ops->gone != NULL && !ops->gone(att, first)) return;
        if (att->requests > 0) break;
        tpuci__unit_phase(att, TPUCI__UP_UNNET);
        if (ops->net_remove) ops->net_remove(att);
        break;
      }
      case TPUCI__UP_UNNET:
      case TPUCI__UP_DONE: {
        tpuci__unit_list_t *l = att->list;
        if (att->phase == TPUCI__UP_UNNET) tpuci__unit_phase(att, TPUCI__UP_DONE);
        tpuci__unit_finish(att);
        l->changed(l->rt);
        return;
      }
    }
  }
}
