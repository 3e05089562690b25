/* The attempt state machine of the engine drivers (core/runtime/unit/,
 * unit.h) on a fake driver: a table of operations whose answers come on
 * later loop turns, as each test's script says. Every test runs one
 * attempt to its end and checks its outcome and cause, that everything
 * the fake made was removed (each unit, the network, the go and the
 * end), that
 * every unit was released, that tpuci__attempt_done() came exactly once,
 * that no state machine made a move its table forbids, and that the loop
 * then closes with no handle left open. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/unit/unit.h"

#define MAXH 4

/* ------------------------------------------------------------------ */
/* The script                                                          */

/* Where the test sends the scheduler's SIGTERM: one loop turn after the
 * attempt asked this of the fake (its answer still pending). */
typedef enum {
  AT_NONE = 0,
  AT_NET,        /* NETWORK: net_create */
  AT_CREATE,     /* CREATE: create */
  AT_OUTPUT,     /* RUN, before the start: output (an image pull) */
  AT_RUNNING,    /* RUN: watch */
  AT_INSPECT,    /* INSPECT: classify */
  AT_REMOVE,     /* REMOVE: remove */
  AT_GONE,       /* GONE: gone */
  AT_UNNET,      /* UNNET: net_remove */
  AT_IDLE        /* RUN: a gang host's command ended, its unit idle */
} at_t;

typedef struct {
  int hosts;
  int flags;                /* TPUCI__UNIT_* */
  int net;                  /* the attempt has a network of its own */
  int create_fail;          /* the host whose create fails, or -1 */
  int create_turns;         /* turns until a create answers */
  int output_never;         /* no output is ready until halted (a pull) */
  int start_fail;           /* the host whose start fails, or -1 */
  int exit_turns[MAXH];     /* after its start (its wait step's end),
                               when it exits on its own; -1: never */
  long exit_status[MAXH];
  int lost;                 /* the host whose engine dies while its
                               wait is pending, or -1 */
  unsigned ignores_term;    /* bit h: host h ignores SIGTERM */
  int gate_never;           /* TPUCI__UNIT_GATE: the wait steps never
                               resolve their peers */
  unsigned gate_silent;     /* bit h: host h's wait step says nothing */
  int no_end;               /* TPUCI__UNIT_GATE: the wait steps have no
                               end step (podman's): a command's end is
                               its unit's */
  uint64_t start_timeout_ms;
  at_t signal_at;
  int keep;                 /* --keep-failed */
  int classify;             /* the fake has ops->classify */
  uint32_t peer_exits;      /* the attempt's (runtime.h) */
  int gone;                 /* the fake has ops->gone (one turn more) */
} script_t;

static script_t script_default(int hosts) {
  script_t s;
  int i;
  memset(&s, 0, sizeof(s));
  s.hosts = hosts;
  s.create_fail = -1;
  s.start_fail = -1;
  s.lost = -1;
  s.create_turns = 1;
  for (i = 0; i < MAXH; i++) s.exit_turns[i] = 2;
  return s;
}

/* ------------------------------------------------------------------ */
/* The fake driver                                                     */

typedef struct {
  tpuci__unit_t u;
  int made, removed, released;
  int create_asked, start_asked, halted, classified;
  int output_pending;       /* output asked, not ready yet */
  int watching;             /* its wait (watch) is pending */
  uint64_t got;             /* bit n: ops->stop(n) reached it */
  struct ev_s *exit_ev;     /* its own exit, scheduled */
  /* TPUCI__UNIT_GATE: its command ended (said with tpuci__unit_done),
   * with cmd_status, and its wait step waits for the end (gate.sh); a
   * SIGTERM came while the command ran (it then leaves at once). */
  int idle;
  long cmd_status;
  int term_seen;
} fk_unit_t;

typedef struct {
  tpuci__unit_att_t ua;
  int net_made, net_removed;
  int go_made, go_removed;
  int end_made, end_removed;
  int idle_at_end;          /* units idle when the end was asked */
  int att_released;
  int gone_calls;
} fk_att_t;

/* An answer due in `turns` loop turns. */
typedef struct ev_s {
  int turns;
  void (*fn)(struct ev_s *e);
  fk_unit_t *fu;
  fk_att_t *fa;
  long arg;
  int cancelled;
  struct ev_s *next;
} ev_t;

/* The test's world: one loop, one runtime object, one attempt. */
static struct {
  script_t s;
  uv_loop_t loop;
  uv_idle_t turn;
  uv_timer_t watchdog;
  tpuci__runtime_t rt;
  tpuci__unit_list_t list;
  tpuci__plan_t plan;
  tpuci__attempt_t a;
  tpuci__attempt_host_t host;
  ev_t *evs;
  /* What the attempt said. */
  int done;
  tpuci__exit_t ex;
  char *cause;
  char *not_up;
  tpuci__buf_t msgs;
  /* Copied at release: what became of each unit and of the attempt. */
  fk_unit_t units[MAXH];
  fk_att_t att;
  int releases;
  int signal_queued, signalled;
} W;

static void ev_turn(uv_idle_t *h);

static ev_t *ev_at(int turns, void (*fn)(ev_t *), fk_unit_t *fu, fk_att_t *fa, long arg) {
  ev_t *e = tpuci__calloc(1, sizeof(*e));
  e->turns = turns;
  e->fn = fn;
  e->fu = fu;
  e->fa = fa;
  e->arg = arg;
  e->next = W.evs;
  W.evs = e;
  uv_idle_start(&W.turn, ev_turn);
  return e;
}

/* One loop turn: the answers whose turn came, in the order asked. */
static void ev_turn(uv_idle_t *h) {
  ev_t *due = NULL, **p = &W.evs, *e;
  (void) h;
  while ((e = *p) != NULL) {
    if (e->cancelled || --e->turns <= 0) {
      *p = e->next;
      e->next = due;
      due = e;
    } else {
      p = &e->next;
    }
  }
  while ((e = due) != NULL) {
    due = e->next;
    if (!e->cancelled) e->fn(e);
    free(e);
  }
  if (W.evs == NULL) uv_idle_stop(&W.turn);
}

/* Nothing may answer for a unit or an attempt that is gone. */
static void ev_forget(const void *p) {
  ev_t *e;
  for (e = W.evs; e != NULL; e = e->next)
    if ((const void *) e->fu == p || (const void *) e->fa == p) e->cancelled = 1;
}

#define FU(u) ((fk_unit_t *) (u))
#define FA(u) ((fk_att_t *) (u)->att)

static int fk_init(tpuci__unit_att_t *att, tpuci__runtime_t *rt, const tpuci__slice_t *slice) {
  size_t i;
  (void) rt;
  (void) slice;
  for (i = 0; i < att->nunits; i++)
    tpuci__unit_at(att, i)->name = tpuci__printf("fake-%zu", i);
  return 0;
}

/* Each answer: the count of requests goes down, the attempt steps. */
static void fk_answered(tpuci__unit_att_t *att) {
  tpuci__unit_req_end(att);
  tpuci__unit_step(att);
}

static void fk_signal_ev(ev_t *e) {
  (void) e;
  W.signalled++;
  W.rt.signal(&W.rt, &W.a, SIGTERM);
}

static void fk_maybe_signal(at_t at) {
  if (W.s.signal_at != at || W.signal_queued) return;
  W.signal_queued = 1;
  ev_at(1, fk_signal_ev, NULL, NULL, 0);
}

static void fk_net_ev(ev_t *e) {
  e->fa->net_made = 1;
  fk_answered(&e->fa->ua);
}

static void fk_net_create(tpuci__unit_att_t *att) {
  if (!W.s.net) return;
  tpuci__unit_req_begin(att);
  ev_at(1, fk_net_ev, NULL, (fk_att_t *) att, 0);
  fk_maybe_signal(AT_NET);
}

static void fk_create_ev(ev_t *e) {
  fk_unit_t *fu = e->fu;
  if (fu->u.index == W.s.create_fail) {
    tpuci__unit_infra(fu->u.att, tpuci__printf("fake: creating %s failed", fu->u.name));
  } else {
    fu->made = 1;
    tpuci__unit_created(&fu->u);
  }
  fk_answered(fu->u.att);
}

static void fk_create(tpuci__unit_t *u) {
  FU(u)->create_asked = 1;
  tpuci__unit_req_begin(u->att);
  ev_at(W.s.create_turns, fk_create_ev, FU(u), NULL, 0);
  fk_maybe_signal(AT_CREATE);
}

static void fk_ready_ev(ev_t *e) {
  fk_unit_t *fu = e->fu;
  if (!fu->output_pending) return;
  fu->output_pending = 0;
  tpuci__unit_ready(&fu->u);
  fk_answered(fu->u.att);
}

static void fk_output(tpuci__unit_t *u) {
  FU(u)->output_pending = 1;
  tpuci__unit_req_begin(u->att);
  if (!W.s.output_never) ev_at(1, fk_ready_ev, FU(u), NULL, 0);
  fk_maybe_signal(AT_OUTPUT);
}

static void fk_halt(tpuci__unit_t *u) {
  FU(u)->halted++;
  /* What was being opened gives up on a later turn. */
  if (FU(u)->output_pending) ev_at(1, fk_ready_ev, FU(u), NULL, 0);
}

/* The unit itself ends with `arg` (its wait answers). */
static void fk_leave_ev(ev_t *e) {
  fk_unit_t *fu = e->fu;
  if (!fu->watching) return;
  fu->watching = 0;
  if (fu->exit_ev != NULL) fu->exit_ev->cancelled = 1;
  tpuci__unit_exited(&fu->u, e->arg);
  fk_answered(fu->u.att);
}

/* Its command ends with `arg`: the unit with it, or, behind a gang's
 * wait step, with 0 or an exit that lets the peers run on, the step
 * says so and the unit stays idle until the end (at once after a
 * SIGTERM), as gate.sh does. */
static void fk_exit_ev(ev_t *e) {
  fk_unit_t *fu = e->fu;
  if (fu->exit_ev == e) fu->exit_ev = NULL;
  if (!fu->watching) return;
  if (!(W.s.flags & TPUCI__UNIT_GATE) || W.s.no_end || fu->u.gate != TPUCI__GATE_STARTED ||
      (e->arg != 0 && !(e->arg > 0 && e->arg < 32 && (W.s.peer_exits >> e->arg) & 1u))) {
    fk_leave_ev(e);
    return;
  }
  fu->idle = 1;
  fu->cmd_status = e->arg;
  tpuci__unit_done(&fu->u, e->arg);
  if (fu->term_seen) ev_at(1, fk_leave_ev, fu, NULL, e->arg);
  fk_maybe_signal(AT_IDLE);
  tpuci__unit_step(fu->u.att);
}

static void fk_lost_ev(ev_t *e) {
  fk_unit_t *fu = e->fu;
  if (!fu->watching) return;
  fu->watching = 0;
  if (fu->exit_ev != NULL) fu->exit_ev->cancelled = 1;
  tpuci__unit_infra(fu->u.att, tpuci__printf("fake: the engine went away while %s ran",
                                             fu->u.name));
  tpuci__unit_ended_infra(&fu->u);
  fk_answered(fu->u.att);
}

/* Its own exit, `turns` from now (replacing one scheduled). */
static void fk_exit_in(fk_unit_t *fu, int turns, long status) {
  if (fu->exit_ev != NULL) fu->exit_ev->cancelled = 1;
  fu->exit_ev = ev_at(turns, fk_exit_ev, fu, NULL, status);
}

/* The command itself starts (after the wait step, with a gate). */
static void fk_runs(fk_unit_t *fu) {
  int i = fu->u.index;
  if (W.s.exit_turns[i] >= 0) fk_exit_in(fu, W.s.exit_turns[i], W.s.exit_status[i]);
}

static void fk_gate_ev(ev_t *e) {
  fk_unit_t *fu = e->fu;
  if (!fu->watching) return;
  if (e->arg == TPUCI__GATE_WAITING)
    tpuci__unit_gate(&fu->u, TPUCI__GATE_WAITING, fu->u.index ? "worker-0" : "worker-1");
  else
    tpuci__unit_gate(&fu->u, (tpuci__gate_state_t) e->arg, NULL);
  if (e->arg == TPUCI__GATE_STARTED) fk_runs(fu);
}

static void fk_start_ev(ev_t *e) {
  fk_unit_t *fu = e->fu;
  tpuci__unit_att_t *att = fu->u.att;
  if (fu->u.index == W.s.start_fail) {
    tpuci__unit_infra(att, tpuci__printf("fake: starting %s failed", fu->u.name));
    tpuci__unit_started(&fu->u, 0);
  } else {
    tpuci__unit_started(&fu->u, 1);
  }
  fk_answered(att);
}

static void fk_start(tpuci__unit_t *u) {
  FU(u)->start_asked = 1;
  tpuci__unit_req_begin(u->att);
  ev_at(1, fk_start_ev, FU(u), NULL, 0);
}

static void fk_watch(tpuci__unit_t *u) {
  fk_unit_t *fu = FU(u);
  fu->watching = 1;
  tpuci__unit_req_begin(u->att);
  if (u->index == W.s.lost) ev_at(2, fk_lost_ev, fu, NULL, 0);
  if (!(W.s.flags & TPUCI__UNIT_GATE)) fk_runs(fu);
  else if (W.s.gate_silent >> u->index & 1u) (void) 0;
  else if (W.s.gate_never) ev_at(1, fk_gate_ev, fu, NULL, TPUCI__GATE_WAITING);
  else ev_at(1, fk_gate_ev, fu, NULL, TPUCI__GATE_READY);
  fk_maybe_signal(AT_RUNNING);
}

/* A driver that stops by removing stops following the unit. */
static void fk_unfollow_ev(ev_t *e) {
  fk_unit_t *fu = e->fu;
  if (!fu->watching) return;
  fu->watching = 0;
  if (fu->exit_ev != NULL) fu->exit_ev->cancelled = 1;
  fk_answered(fu->u.att);
}

static void fk_stop(tpuci__unit_t *u, int signum) {
  fk_unit_t *fu = FU(u);
  fu->got |= 1ull << signum;
  if (!fu->watching) return;
  if (W.s.flags & TPUCI__UNIT_STOP_BY_REMOVE) {
    ev_at(1, fk_unfollow_ev, fu, NULL, 0);
    return;
  }
  if (fu->idle) {
    /* Its wait step ends: with its command's status at a SIGTERM. */
    ev_at(1, fk_leave_ev, fu, NULL, signum == SIGKILL ? 128 + SIGKILL : fu->cmd_status);
    return;
  }
  if (signum == SIGTERM && (W.s.ignores_term >> u->index & 1u)) return;
  if ((W.s.flags & TPUCI__UNIT_GATE) && signum == SIGKILL) {
    /* The whole unit goes, its wait step with the command. */
    ev_at(1, fk_leave_ev, fu, NULL, 128 + signum);
    return;
  }
  if (signum == SIGTERM) fu->term_seen = 1;
  fk_exit_in(fu, 1, 128 + signum);
}

static void fk_go_ev(ev_t *e) {
  fk_att_t *fa = e->fa;
  size_t i;
  fa->go_made = 1;
  /* Every wait step sees the go: the commands start. */
  for (i = 0; i < fa->ua.nunits; i++)
    ev_at(1, fk_gate_ev, (fk_unit_t *) tpuci__unit_at(&fa->ua, i), NULL, TPUCI__GATE_STARTED);
  fk_answered(&fa->ua);
}

static void fk_go(tpuci__unit_att_t *att) {
  tpuci__unit_req_begin(att);
  ev_at(1, fk_go_ev, NULL, (fk_att_t *) att, 0);
}

/* The end: every idle unit's wait step sees it and leaves with its
 * command's status. */
static void fk_end_ev(ev_t *e) {
  fk_att_t *fa = e->fa;
  size_t i;
  fa->end_made = 1;
  for (i = 0; i < fa->ua.nunits; i++) {
    fk_unit_t *fu = (fk_unit_t *) tpuci__unit_at(&fa->ua, i);
    if (fu->idle) ev_at(1, fk_leave_ev, fu, NULL, fu->cmd_status);
  }
  fk_answered(&fa->ua);
}

static void fk_end(tpuci__unit_att_t *att) {
  fk_att_t *fa = (fk_att_t *) att;
  size_t i;
  for (i = 0; i < att->nunits; i++)
    fa->idle_at_end += ((fk_unit_t *) tpuci__unit_at(att, i))->idle &&
                       ((fk_unit_t *) tpuci__unit_at(att, i))->watching;
  tpuci__unit_req_begin(att);
  ev_at(1, fk_end_ev, NULL, fa, 0);
}

static void fk_go_removed_ev(ev_t *e) {
  if (e->arg) e->fa->end_removed = 1;
  else e->fa->go_removed = 1;
  fk_answered(&e->fa->ua);
}

static void fk_go_remove(tpuci__unit_att_t *att) {
  fk_att_t *fa = (fk_att_t *) att;
  if (fa->go_made) {
    tpuci__unit_req_begin(att);
    ev_at(1, fk_go_removed_ev, NULL, fa, 0);
  }
  if (fa->end_made) {
    tpuci__unit_req_begin(att);
    ev_at(1, fk_go_removed_ev, NULL, fa, 1);
  }
}

static void fk_classified_ev(ev_t *e) {
  e->fu->classified = 1;
  fk_answered(e->fu->u.att);
}

static void fk_classify(tpuci__unit_t *u) {
  tpuci__unit_req_begin(u->att);
  ev_at(1, fk_classified_ev, FU(u), NULL, 0);
  fk_maybe_signal(AT_INSPECT);
}

static void fk_removed_ev(ev_t *e) {
  e->fu->removed = 1;
  fk_answered(e->fu->u.att);
}

static void fk_remove(tpuci__unit_t *u) {
  if (!FU(u)->made) return;
  tpuci__unit_req_begin(u->att);
  ev_at(1, fk_removed_ev, FU(u), NULL, 0);
  fk_maybe_signal(AT_REMOVE);
}

static void fk_restep_ev(ev_t *e) {
  tpuci__unit_step(&e->fa->ua);
}

/* GONE: not yet the first time (a step on a later turn), then yes. */
static int fk_gone(tpuci__unit_att_t *att, int first) {
  fk_att_t *fa = (fk_att_t *) att;
  fa->gone_calls++;
  if (!first) return 1;
  ev_at(1, fk_restep_ev, NULL, fa, 0);
  fk_maybe_signal(AT_GONE);
  return 0;
}

static void fk_net_removed_ev(ev_t *e) {
  e->fa->net_removed = 1;
  fk_answered(&e->fa->ua);
}

static void fk_net_remove(tpuci__unit_att_t *att) {
  if (!((fk_att_t *) att)->net_made) return;
  tpuci__unit_req_begin(att);
  ev_at(1, fk_net_removed_ev, NULL, (fk_att_t *) att, 0);
  fk_maybe_signal(AT_UNNET);
}

static char *fk_keep(tpuci__unit_att_t *att, tpuci__unit_t *u) {
  (void) att;
  return u != NULL ? tpuci__printf("kept %s", u->name) : NULL;
}

static void fk_release(tpuci__unit_t *u) {
  fk_unit_t *fu = FU(u);
  ev_forget(fu);
  fu->released++;
  if (u->index < MAXH) W.units[u->index] = *fu;
  W.releases++;
}

static void fk_att_release(tpuci__unit_att_t *att) {
  fk_att_t *fa = (fk_att_t *) att;
  ev_forget(fa);
  fa->att_released++;
  W.att = *fa;
}

static tpuci__unit_ops_t fk_ops = {
  .kind = "container",
  .att_size = sizeof(fk_att_t),
  .unit_size = sizeof(fk_unit_t),
  .init = fk_init,
  .net_create = fk_net_create,
  .create = fk_create,
  .output = fk_output,
  .start = fk_start,
  .watch = fk_watch,
  .stop = fk_stop,
  .halt = fk_halt,
  .remove = fk_remove,
  .net_remove = fk_net_remove,
  .keep = fk_keep,
  .release = fk_release,
  .att_release = fk_att_release,
};

/* ------------------------------------------------------------------ */
/* The scheduler's side                                                */

static void host_output(tpuci__attempt_t *a, int stream, const char *buf, size_t len) {
  (void) a;
  (void) stream;
  (void) buf;
  (void) len;
}

static void host_done(tpuci__attempt_t *a, const tpuci__exit_t *ex) {
  (void) a;
  W.done++;
  W.ex = *ex;
  free(W.cause);
  W.cause = ex->cause ? tpuci__strdup(ex->cause) : NULL;
  W.ex.cause = W.cause;
  W.ex.log_lost = NULL;
  free(W.not_up);
  W.not_up = ex->not_up ? tpuci__strdup(ex->not_up) : NULL;
  W.ex.not_up = W.not_up;
}

static void host_message(tpuci__attempt_t *a, const char *msg) {
  (void) a;
  tpuci__buf_addf(&W.msgs, "%s\n", msg);
}

static void host_write_error(tpuci__attempt_t *a, const char *path, int err) {
  (void) a;
  fail_msg("write error %s: %d", path, err);
}

static void rt_changed(tpuci__runtime_t *rt) {
  (void) rt;
}

/* A hung attempt is a failure, not a hung test: the guard is unreferenced
 * and far beyond what any script takes. */
static void watchdog_cb(uv_timer_t *t) {
  (void) t;
  fail_msg("the attempt did not end (done %d, messages: %s)", W.done,
           W.msgs.data ? W.msgs.data : "");
}

/* Runs one attempt of the script to its end; 0 or start()'s code. */
static int run(const script_t *s) {
  tpuci__instance_t *in;
  int rc;
  memset(&W, 0, sizeof(W));
  W.s = *s;
  tpuci__buf_init(&W.msgs);
  assert_int_equal(uv_loop_init(&W.loop), 0);
  uv_idle_init(&W.loop, &W.turn);
  uv_timer_init(&W.loop, &W.watchdog);
  uv_timer_start(&W.watchdog, watchdog_cb, 20000, 0);
  uv_unref((uv_handle_t *) &W.watchdog);

  tpuci__plan_init(&W.plan);
  W.plan.images = tpuci__calloc(1, sizeof(*W.plan.images));
  W.plan.nimages = 1;
  W.plan.images[0].name = tpuci__strdup("img");
  W.plan.images[0].ref = tpuci__strdup("tpuci-test/busybox:1");
  W.plan.topologies = tpuci__calloc(1, sizeof(*W.plan.topologies));
  W.plan.ntopologies = 1;
  W.plan.topologies[0].name = tpuci__strdup("fake");
  W.plan.topologies[0].hosts = s->hosts;
  W.plan.topologies[0].chips_per_host = 4;
  W.plan.topologies[0].cores_per_chip = 2;
  W.plan.topologies[0].emulate = tpuci__strdup("none");
  in = tpuci__plan_add_instance(&W.plan);
  in->name = tpuci__strdup("job");
  in->job = tpuci__strdup("job");
  in->where = tpuci__strdup("spec.lua:1");
  tpuci__strv_push(&in->argv, "true");
  in->image = 0;
  in->topology = s->hosts > 1 ? 0 : -1;
  in->start_timeout_ms = s->start_timeout_ms;

  W.host.output = host_output;
  W.host.done = host_done;
  W.host.message = host_message;
  W.host.write_error = host_write_error;
  W.a.host = &W.host;
  W.a.loop = &W.loop;
  W.a.plan = &W.plan;
  W.a.inst = in;
  W.a.number = 1;
  W.a.run_id = "r1";
  W.a.dir = "/nonexistent";
  W.a.argv = &in->argv;
  W.a.grace_ms = 5;
  W.a.keep_on_failure = s->keep;
  W.a.peer_exits = s->peer_exits;

  fk_ops.flags = s->flags;
  fk_ops.go = s->flags & TPUCI__UNIT_GATE ? fk_go : NULL;
  fk_ops.go_remove = s->flags & TPUCI__UNIT_GATE ? fk_go_remove : NULL;
  fk_ops.end = s->flags & TPUCI__UNIT_GATE ? fk_end : NULL;
  fk_ops.classify = s->classify ? fk_classify : NULL;
  fk_ops.gone = s->gone ? fk_gone : NULL;
  tpuci__unit_rt_init(&W.rt, "fake", &W.loop, &W.list, rt_changed);
  rc = tpuci__unit_start(&W.rt, "fake", &fk_ops, &W.a, 5000, &W.list);
  if (rc == 0) uv_run(&W.loop, UV_RUN_DEFAULT);
  return rc;
}

/* What every attempt must leave: done once, everything made removed
 * (unless kept), every unit released, no forbidden move, nothing open. */
static void check_end(int kept) {
  int i;
  assert_int_equal(W.done, 1);
  assert_int_equal(W.releases, W.s.hosts);
  assert_int_equal(W.att.att_released, 1);
  for (i = 0; i < W.s.hosts; i++) {
    fk_unit_t *fu = &W.units[i];
    assert_int_equal(fu->released, 1);
    assert_int_equal(fu->watching, 0);
    if (!kept && fu->made && !fu->removed) fail_msg("fake-%d was made and never removed", i);
  }
  if (W.att.net_made && !W.att.net_removed) fail_msg("the network was never removed");
  if (W.att.go_made && !W.att.go_removed) fail_msg("the go was never removed");
  if (W.att.end_made && !W.att.end_removed) fail_msg("the end was never removed");
  if (W.msgs.data != NULL && strstr(W.msgs.data, "internal error") != NULL)
    fail_msg("a forbidden move: %s", W.msgs.data);
  assert_null(W.list.atts);
  assert_int_equal(W.list.handles, 0);
  assert_null(W.evs);
  uv_close((uv_handle_t *) &W.turn, NULL);
  uv_close((uv_handle_t *) &W.watchdog, NULL);
  uv_run(&W.loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&W.loop), 0);
  tpuci__plan_free(&W.plan);
  tpuci__buf_free(&W.msgs);
  free(W.cause);
  free(W.not_up);
  W.cause = W.not_up = NULL;
}

static void assert_cause(const char *want) {
  if (W.cause == NULL || strstr(W.cause, want) == NULL)
    fail_msg("cause '%s', want one with '%s'", W.cause ? W.cause : "(none)", want);
}

static void assert_said(const char *want) {
  if (W.msgs.data == NULL || strstr(W.msgs.data, want) == NULL)
    fail_msg("messages '%s', want one with '%s'", W.msgs.data ? W.msgs.data : "", want);
}

/* ------------------------------------------------------------------ */
/* The tests                                                           */

static void test_normal_lone(void **state) {
  script_t s = script_default(1);
  (void) state;
  s.classify = 1;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.exit_code, 0);
  assert_int_equal(W.ex.infra, 0);
  assert_int_equal(W.ex.term_signal, 0);
  assert_true(W.units[0].made && W.units[0].start_asked);
  assert_int_equal(W.units[0].classified, 0); /* exit 0: nothing to classify */
  check_end(0);
}

static void test_normal_gang(void **state) {
  script_t s = script_default(2);
  (void) state;
  s.flags = TPUCI__UNIT_GATE;
  s.net = 1;
  s.gone = 1;
  s.start_timeout_ms = 600000;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.exit_code, 0);
  assert_int_equal(W.ex.infra, 0);
  assert_true(W.att.net_made && W.att.go_made);
  assert_true(W.att.gone_calls >= 2);
  check_end(0);
}

/* A failed exit is classified and gives the host's status. */
static void test_failed_exit(void **state) {
  script_t s = script_default(1);
  (void) state;
  s.classify = 1;
  s.exit_status[0] = 3;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.exit_code, 3);
  assert_int_equal(W.ex.infra, 0);
  assert_int_equal(W.units[0].classified, 1);
  check_end(0);
}

/* Host 1's create fails: nothing starts, host 0's container is removed. */
static void test_create_fails(void **state) {
  script_t s = script_default(2);
  (void) state;
  s.net = 1;
  s.create_fail = 1;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.infra, 1);
  assert_cause("fake: creating fake-1 failed");
  assert_true(W.units[0].made);
  assert_false(W.units[1].made);
  assert_false(W.units[0].start_asked || W.units[1].start_asked);
  check_end(0);
}

/* Host 1's start fails: host 0, started, is killed; both removed. */
static void test_start_fails(void **state) {
  script_t s = script_default(2);
  (void) state;
  s.start_fail = 1;
  s.exit_turns[0] = -1;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.infra, 1);
  assert_cause("fake: starting fake-1 failed");
  assert_true(W.units[0].got & (1ull << SIGKILL));
  check_end(0);
}

/* The engine dies while host 0's wait is pending: infra, and host 1,
 * which would run on, is killed. */
static void test_engine_dies(void **state) {
  script_t s = script_default(2);
  (void) state;
  s.net = 1;
  s.lost = 0;
  s.exit_turns[0] = -1;
  s.exit_turns[1] = -1;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.infra, 1);
  assert_cause("the engine went away while fake-0 ran");
  assert_true(W.units[1].got & (1ull << SIGKILL));
  check_end(0);
}

/* The timeout's SIGTERM while the containers are being created: none
 * starts, those made are removed. */
static void test_timeout_create(void **state) {
  script_t s = script_default(2);
  (void) state;
  s.net = 1;
  s.create_turns = 3;
  s.signal_at = AT_CREATE;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.infra, 0);
  assert_int_equal(W.ex.exit_code, -1);
  assert_cause("stopped before the containers started");
  assert_true(W.units[0].made && W.units[1].made);
  assert_false(W.units[0].start_asked || W.units[1].start_asked);
  check_end(0);
}

/* The timeout's SIGTERM while a host's output is not ready (the ssh
 * session pulls the image before its ready line): the outputs are
 * halted, nothing starts, everything goes. */
static void test_timeout_pull(void **state) {
  script_t s = script_default(2);
  (void) state;
  s.output_never = 1;
  s.signal_at = AT_OUTPUT;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.infra, 0);
  assert_cause("stopped before the containers started");
  assert_true(W.units[0].halted && W.units[1].halted);
  assert_false(W.units[0].start_asked || W.units[1].start_asked);
  check_end(0);
}

/* The scheduler's SIGTERM at each state, with its answer pending. */
static void test_cancel_each(void **state) {
  at_t at;
  (void) state;
  for (at = AT_NET; at <= AT_UNNET; at++) {
    script_t s = script_default(2);
    s.net = 1;
    s.gone = 1;
    s.classify = 1;
    s.exit_status[0] = 1; /* classified: INSPECT has a request */
    s.exit_turns[0] = at == AT_RUNNING ? -1 : 2;
    s.exit_turns[1] = at == AT_RUNNING ? -1 : 3;
    s.signal_at = at;
    if (at == AT_OUTPUT) s.output_never = 1;
    print_message("signal at %d\n", (int) at);
    assert_int_equal(run(&s), 0);
    assert_int_equal(W.signalled, 1);
    assert_int_equal(W.ex.infra, 0);
    if (at <= AT_OUTPUT) {
      assert_cause("stopped before the containers started");
      assert_false(W.units[0].start_asked || W.units[1].start_asked);
    } else if (at == AT_RUNNING) {
      /* Both ended by the SIGTERM tpuci sent: the signal, no exit. */
      assert_int_equal(W.ex.exit_code, -1);
      assert_int_equal(W.ex.term_signal, SIGTERM);
      assert_true(W.units[0].got & W.units[1].got & (1ull << SIGTERM));
    } else {
      /* Past RUN a signal changes nothing: host 0 failed on its own
       * first and speaks; host 1 was stopped for it. */
      assert_int_equal(W.ex.exit_code, 1);
      assert_cause("worker-0: exit 1");
      assert_true(W.units[1].got & (1ull << SIGTERM));
    }
    check_end(0);
  }
}

/* A host that ends first (exit 3) stops its peer: SIGTERM, ignored, then
 * SIGKILL after the grace; the verdict names the first. */
static void test_host_ends_first(void **state) {
  script_t s = script_default(2);
  (void) state;
  s.exit_turns[0] = -1;
  s.exit_turns[1] = 1;
  s.exit_status[1] = 3;
  s.ignores_term = 1u << 0;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.infra, 0);
  assert_int_equal(W.ex.exit_code, 3);
  assert_cause("worker-1: exit 3");
  assert_true(W.units[0].got & (1ull << SIGTERM));
  assert_true(W.units[0].got & (1ull << SIGKILL));
  check_end(0);
}

/* The gang's start barrier never completes: past the start deadline the
 * attempt is infra, naming each host's wait, and the hosts are killed. */
static void test_barrier_never(void **state) {
  script_t s = script_default(2);
  (void) state;
  s.flags = TPUCI__UNIT_GATE;
  s.net = 1;
  s.gate_never = 1;
  s.start_timeout_ms = 20;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.infra, 1);
  assert_cause("were not all up within");
  assert_cause("worker-0 could not resolve worker-1");
  assert_cause("worker-1 could not resolve worker-0");
  assert_false(W.att.go_made);
  assert_true(W.units[0].got & (1ull << SIGKILL));
  assert_true(W.units[1].got & (1ull << SIGKILL));
  check_end(0);
}

/* The timeout's SIGTERM while the barrier waits: not infra (the job's
 * timeout came first), and what the gang waited for is said and given
 * to the scheduler for the cause. A gang that was up gives none. */
static void test_barrier_timeout(void **state) {
  script_t s = script_default(2);
  (void) state;
  s.flags = TPUCI__UNIT_GATE;
  s.net = 1;
  s.gate_never = 1;
  s.start_timeout_ms = 600000;
  s.signal_at = AT_RUNNING;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.infra, 0);
  assert_non_null(W.not_up);
  assert_non_null(strstr(W.not_up, "worker-0 could not resolve worker-1"));
  assert_non_null(strstr(W.not_up, "worker-1 could not resolve worker-0"));
  assert_said("stopped before the gang was up: worker-0 could not resolve worker-1");
  check_end(0);

  /* A host whose wait step said nothing yet, ended by the stop: its
   * exit 143 is tpuci's doing, not the host's end. */
  s = script_default(2);
  s.flags = TPUCI__UNIT_GATE;
  s.net = 1;
  s.gate_never = 1;
  s.gate_silent = 1u << 1;
  s.start_timeout_ms = 600000;
  s.signal_at = AT_RUNNING;
  assert_int_equal(run(&s), 0);
  assert_non_null(W.not_up);
  assert_non_null(strstr(W.not_up, "worker-0 could not resolve worker-1"));
  assert_non_null(strstr(W.not_up, "worker-1 started, but its wait step said nothing"));
  assert_null(strstr(W.not_up, "ended (exit"));
  check_end(0);

  s = script_default(2);
  s.exit_turns[0] = s.exit_turns[1] = -1;
  s.signal_at = AT_RUNNING;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.term_signal, SIGTERM);
  assert_null(W.not_up);
  check_end(0);
}

/* A gang whose hosts' commands end at different times: the one that
 * ended first stays, idle, until every host's command ended; then the
 * end lets both go. Its status is its own. */
static script_t gang_end_script(void) {
  script_t s = script_default(2);
  s.flags = TPUCI__UNIT_GATE;
  s.net = 1;
  s.start_timeout_ms = 600000;
  s.classify = 1;
  s.exit_turns[0] = 1;
  s.exit_turns[1] = 6;
  return s;
}

static void test_gang_end(void **state) {
  script_t s = gang_end_script();
  (void) state;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.exit_code, 0);
  assert_int_equal(W.ex.infra, 0);
  assert_true(W.att.end_made);
  /* worker-0 was still there, idle, when worker-1's command ended. */
  assert_int_equal(W.att.idle_at_end, 2);
  assert_int_equal(W.units[0].got, 0);
  check_end(0);
}

/* worker-1 fails after worker-0 passed: its exit 3 decides (it stops
 * the gang: its host ends at once); worker-0, idle, is stopped with the
 * gang and leaves with its own 0. */
static void test_gang_end_late_failure(void **state) {
  script_t s = gang_end_script();
  (void) state;
  s.exit_status[1] = 3;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.exit_code, 3);
  assert_cause("worker-1: exit 3");
  check_end(0);
}

/* worker-1 ends first with an exit that lets its peers run on (pytest's
 * 1): it waits idle, worker-0 runs to its end, and worker-1's own exit 1
 * decides. Then worker-0 fails with 2 (which stops the gang): worker-1,
 * idle, gets SIGTERM and keeps its 1, which still decides (the first
 * host that failed on its own speaks); no end is made. */
static script_t peer_exit_script(void) {
  script_t s = gang_end_script();
  s.peer_exits = 1u << 1;
  s.exit_turns[0] = 6;
  s.exit_turns[1] = 1;
  s.exit_status[1] = 1;
  return s;
}

static void test_gang_end_peer_exit(void **state) {
  script_t s = peer_exit_script();
  (void) state;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.exit_code, 1);
  assert_cause("worker-1: exit 1");
  assert_true(W.att.end_made);
  assert_int_equal(W.att.idle_at_end, 2);
  assert_int_equal(W.units[1].got, 0);
  check_end(0);
  s.exit_status[0] = 2;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.exit_code, 1);
  assert_cause("worker-1: exit 1");
  assert_false(W.att.end_made);
  assert_true(W.units[1].got & (1ull << SIGTERM));
  check_end(0);
}

/* A timeout while worker-0 is idle and worker-1 runs: both get SIGTERM,
 * worker-0 leaves at once with its 0 (a SIGTERM to an idle host is not
 * one to its command), worker-1's command ends by it and its host leaves
 * without waiting for an end, which is never made. */
static void test_gang_end_timeout(void **state) {
  script_t s = gang_end_script();
  (void) state;
  s.exit_turns[1] = -1;
  s.signal_at = AT_IDLE;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.signalled, 1);
  assert_int_equal(W.ex.infra, 0);
  assert_int_equal(W.ex.exit_code, -1);
  assert_int_equal(W.ex.term_signal, SIGTERM);
  assert_true(W.units[0].got & (1ull << SIGTERM));
  assert_false(W.units[0].got & (1ull << SIGKILL));
  assert_false(W.att.end_made);
  check_end(0);
}

/* Without the end step (podman's wait steps exec the command), the
 * driver's ops->end is never asked: worker-0's host ends with its
 * command's 0 while worker-1 runs on, unstopped, and the gang passes;
 * with worker-1's exit 1 (one that lets the peers run on) first, worker-0
 * runs to its end and worker-1's 1 decides. */
static void test_gang_no_end_step(void **state) {
  script_t s = gang_end_script();
  (void) state;
  s.no_end = 1;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.exit_code, 0);
  assert_int_equal(W.ex.infra, 0);
  assert_true(W.att.go_made);
  assert_false(W.att.end_made);
  assert_int_equal(W.units[0].got, 0);
  assert_int_equal(W.units[1].got, 0);
  check_end(0);
  s = peer_exit_script();
  s.no_end = 1;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.exit_code, 1);
  assert_cause("worker-1: exit 1");
  assert_false(W.att.end_made);
  assert_int_equal(W.units[0].got, 0);
  check_end(0);
}

/* --keep-failed keeps a failed attempt's units and says so; the rest
 * (the network) goes as usual only when not kept: here it is kept too. */
static void test_keep_failed(void **state) {
  script_t s = script_default(1);
  (void) state;
  s.keep = 1;
  s.exit_status[0] = 2;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.exit_code, 2);
  assert_said("kept fake-0");
  assert_false(W.units[0].removed);
  check_end(1);
}

/* A driver that stops by removing (Swarm): the signal ends RUN at once,
 * the units not ended count as stopped, and removing is their stop. */
static void test_stop_by_remove(void **state) {
  script_t s = script_default(2);
  (void) state;
  s.flags = TPUCI__UNIT_STOP_BY_REMOVE;
  s.exit_turns[0] = -1;
  s.exit_turns[1] = -1;
  s.signal_at = AT_RUNNING;
  assert_int_equal(run(&s), 0);
  assert_int_equal(W.ex.infra, 0);
  assert_true(W.units[0].removed && W.units[1].removed);
  check_end(0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_normal_lone),
    cmocka_unit_test(test_normal_gang),
    cmocka_unit_test(test_failed_exit),
    cmocka_unit_test(test_create_fails),
    cmocka_unit_test(test_start_fails),
    cmocka_unit_test(test_engine_dies),
    cmocka_unit_test(test_timeout_create),
    cmocka_unit_test(test_timeout_pull),
    cmocka_unit_test(test_cancel_each),
    cmocka_unit_test(test_host_ends_first),
    cmocka_unit_test(test_barrier_never),
    cmocka_unit_test(test_barrier_timeout),
    cmocka_unit_test(test_gang_end),
    cmocka_unit_test(test_gang_end_late_failure),
    cmocka_unit_test(test_gang_end_peer_exit),
    cmocka_unit_test(test_gang_end_timeout),
    cmocka_unit_test(test_gang_no_end_step),
    cmocka_unit_test(test_keep_failed),
    cmocka_unit_test(test_stop_by_remove),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
