/* One attempt of an engine driver as a state machine over per-host
 * units (a container, a service, a remote process): the gang's
 * lifecycle, its stop on the first failure, signal or timeout with the
 * grace, its outcome (tpuci__gang_verdict, engine/gang.h) and its
 * cleanup, once. A driver fills a table of operations
 * (tpuci__unit_ops_t) and answers through the tpuci__unit_* calls below;
 * it never walks the phases itself. Only the engine drivers include this
 * (tests/layout/includes.py); it includes no driver.
 *
 * Three state machines, each one enum moved only by its one setter in
 * attempt.c, which checks the move against the machine's table there (a
 * move the table lacks is a bug: tpuci__unit_bad_move, state.c). The
 * moves each allows:
 *
 * The attempt's phase (att->phase, tpuci__unit_phase_t), each over when
 * no request of the attempt is in flight (tpuci__unit_req_begin/_end):
 *
 *   NETWORK  ops->net_create (optional): a gang's network
 *            -> CREATE, or -> INSPECT after a failure or a signal
 *   CREATE   ops->create for each host
 *            -> RUN, or -> INSPECT after a failure or a signal
 *   RUN      ops->output for each (optional), then once all are ready
 *            ops->start for each; once started ops->watch. A gang has
 *            until its start deadline (the job's start_timeout) to be up:
 *            every unit started and, with TPUCI__UNIT_GATE, past its wait
 *            step (tpuci__unit_gate); else the attempt is infra, naming
 *            the hosts that were not, and is stopped. A host that
 *            fails on its own stops the others: ops->stop(SIGTERM), after
 *            the grace SIGKILL (or, with TPUCI__UNIT_STOP_BY_REMOVE, the
 *            run ends and removing stops them). Signals become ops->stop.
 *            -> INSPECT
 *   INSPECT  ops->classify (optional) for each host that exited non-zero
 *            -> REMOVE, or -> DONE when --keep-failed keeps the units
 *   REMOVE   ops->remove for each                          -> GONE
 *   GONE     ops->gone (optional) until it says everything went -> UNNET
 *   UNNET    ops->net_remove (optional)                    -> DONE
 *   DONE     ops->outcome (optional) adjusts the exit, tpuci__attempt_done()
 *            exactly once, ops->release, the timer is closed, the
 *            attempt freed.
 *
 * The gang's start in RUN (att->gang_state, tpuci__unit_gang_t), for a
 * lone host too:
 *
 *   OPENING   the hosts' outputs are being opened; nothing started
 *             -> STARTING once all are ready (every ops->start asked),
 *             or -> HALTED then instead when a signal, an infra failure
 *             or the start deadline came first (ops->halt for each)
 *   STARTING  not every host is up yet
 *             -> GO when every host's wait step is ready (ops->go),
 *             or -> UP
 *   GO        the go exists, or is being made        -> UP
 *   UP        every host is up: the start deadline is off
 *             -> END once every host's command ended (it said so:
 *             tpuci__unit_done, or its unit ended) and one waits, idle,
 *             for the end (ops->end); not while the attempt is stopped
 *   END       the end exists, or is being made: the idle hosts exit
 *
 * A host (u->state, tpuci__unit_state_t), as far as the core knows it:
 *
 *   NEW -> CREATED (the driver: tpuci__unit_created) -> STARTED
 *   (tpuci__unit_started) -> EXITED (tpuci__unit_exited) or LOST
 *   (tpuci__unit_ended_infra); STARTED -> DONE (tpuci__unit_done: a
 *   gang host's command ended, with its status, and the unit waits idle
 *   for the end, which keeps its name) -> EXITED or LOST (its status
 *   stays the command's). Its output (u->ready) is the driver's and
 *   may be settled without anything created (a session that never
 *   reached its worker).
 *
 * Ownership: the core allocates and frees the attempt (ops->att_size
 * bytes, tpuci__unit_att_t first) and its units (ops->unit_size bytes
 * each, tpuci__unit_t first), and frees the unit's name and host. The
 * driver frees what it put into its own part in ops->release and
 * ops->att_release. */
#ifndef TPUCI_RUNTIME_UNIT_H
#define TPUCI_RUNTIME_UNIT_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "runtime/engine/gang.h"
#include "runtime/runtime.h"
#include "plan/topology.h"
#include "base/util.h"

typedef struct tpuci__unit_att_s tpuci__unit_att_t;
typedef struct tpuci__unit_list_s tpuci__unit_list_t;

/* Where a host is, as the core knows it (unit.h's top; moved only by
 * tpuci__unit_created, _started, _exited and _ended_infra). */
typedef enum {
  TPUCI__U_NEW = 0, /* nothing made yet (or its create failed) */
  TPUCI__U_CREATED, /* made: there is something to signal and remove */
  TPUCI__U_STARTED, /* ops->start answered ok: it runs */
  TPUCI__U_DONE,    /* its command ended (`status`); it waits, idle,
                             for the gang's end (TPUCI__UNIT_GATE) */
  TPUCI__U_EXITED,  /* it exited: `status` */
  TPUCI__U_LOST     /* it ended, not by the job's doing */
} tpuci__unit_state_t;

/* One host of an attempt. The core sets the fields below except `name`,
 * `host` (set by the driver before tpuci__unit_run, freed by the core)
 * and `oom`, `oom_unreported`, `status` (the driver's, as it learns
 * them). */
typedef struct {
  tpuci__unit_att_t *att;
  int index;  /* host index */
  char *name; /* the unit's own name, for messages */
  char *host; /* a gang's "worker-<index>", else NULL */
  tpuci__unit_state_t state;
  int pending_signal; /* to send once started */
  int ready;          /* its output is open, or given up (RUN) */
  long status;        /* its exit code */
  int oom;
  int oom_unreported; /* gang.h's TPUCI__OOM_STATS, _PROBABLY or 0 */
  uint64_t signals;   /* bit n: tpuci sent it signal n */
  int stopped;        /* tpuci stopped it before it ended */
  /* It ended (EXITED) with another status than its command said (DONE):
   * tpuci killed it while it was idle. `status` is the command's. */
  int idle_killed;
  unsigned long order; /* of its end among the attempt's hosts */
  /* The gang's start barrier (TPUCI__UNIT_GATE): where its wait step
   * is (tpuci__unit_gate) and, waiting, the names it could not resolve
   * yet. */
  tpuci__gate_state_t gate;
  char *gate_wait;
} tpuci__unit_t;

/* Whether it ended (EXITED or LOST), its command ended (DONE or
 * later), was made (CREATED or later), started (STARTED or later). */
#define TPUCI__U_ENDED(u) ((u)->state >= TPUCI__U_EXITED)
#define TPUCI__U_OVER(u) ((u)->state >= TPUCI__U_DONE)
#define TPUCI__U_MADE(u) ((u)->state >= TPUCI__U_CREATED)
#define TPUCI__U_RAN(u) ((u)->state >= TPUCI__U_STARTED)

/* The ops' flags. */
/* Stopping a unit is removing it (Swarm: SIGTERM, the grace, SIGKILL
 * by the engine): RUN ends at the first signal, gang failure or infra,
 * and ops->stop only ends what the driver follows of the unit. */
#define TPUCI__UNIT_STOP_BY_REMOVE 1
/* The units are not made from an image (processes on a slice's workers):
 * a job needs none. */
#define TPUCI__UNIT_NO_IMAGE 2
/* A gang's units run a wait step before the job's command and say where
 * they are in it (tpuci__unit_gate): once all are ready, ops->go lets
 * them start; the gang is up once all are past it. Once a command ended
 * its unit says so (tpuci__unit_done) and waits, idle, until ops->end
 * lets it exit: once every host's command ended. */
#define TPUCI__UNIT_GATE 4

typedef struct {
  const char *kind; /* "container", "service", "process" */
  int flags;        /* TPUCI__UNIT_* */
  size_t att_size;  /* the driver's attempt, tpuci__unit_att_t first */
  size_t unit_size; /* the driver's unit, tpuci__unit_t first */
  /* Each op that asks something of the engine (or a child, or waits on
   * a timer) counts it with tpuci__unit_req_begin() and, when it is
   * answered, uncounts it with tpuci__unit_req_end() and calls
   * tpuci__unit_step(). None fails synchronously: a failure is recorded
   * with tpuci__unit_infra() and the attempt moves on to cleanup. */
  /* Fills the driver's part of a new attempt (tpuci__unit_start): its
   * units' names (u->host is set for a gang), bodies, output. 0, or a
   * negative code with rt->err set; nothing was made yet. */
  int (*init)(tpuci__unit_att_t *att, tpuci__runtime_t *rt, const tpuci__slice_t *slice);
  void (*net_create)(tpuci__unit_att_t *att); /* optional */
  void (*create)(tpuci__unit_t *u);           /* tpuci__unit_created() once made */
  /* Optional: opens the output before the start; calls
   * tpuci__unit_ready(u) exactly once (opened, or given up). */
  void (*output)(tpuci__unit_t *u);
  /* Starts it; answers tpuci__unit_started(u, ok) exactly once. */
  void (*start)(tpuci__unit_t *u);
  /* Watches it until it ends: tpuci__unit_exited() or _ended_infra(). */
  void (*watch)(tpuci__unit_t *u);
  /* Sends it signal `signum` (it was started and has not ended). */
  void (*stop)(tpuci__unit_t *u, int signum);
  /* Optional: ends what was opened for a unit that will not run (its
   * output stream). */
  void (*halt)(tpuci__unit_t *u);
  /* Optional: a host that exited non-zero: whether the kernel killed it
   * for memory (u->oom, u->oom_unreported) and its final status. */
  void (*classify)(tpuci__unit_t *u);
  /* Removes what create made (nothing: returns at once). */
  void (*remove)(tpuci__unit_t *u);
  /* Optional, GONE: whether everything removed went; `first` on entry.
   * When it says no, the driver calls tpuci__unit_step() again later. */
  int (*gone)(tpuci__unit_att_t *att, int first);
  void (*net_remove)(tpuci__unit_att_t *att); /* optional */
  /* --keep-failed: what was kept, to tell the user: unit u's (NULL:
   * nothing of it), then with u == NULL the attempt's own (a network).
   * New string. */
  char *(*keep)(tpuci__unit_att_t *att, tpuci__unit_t *u);
  /* Optional (TPUCI__UNIT_GATE): once every unit of a gang is ready,
   * lets them start (the go of engine/gate.h); counted as a request, a
   * failure through tpuci__unit_infra(). go_remove removes what it made,
   * if anything (called in REMOVE once the gang got to GO or UP, and
   * with --keep-failed too: the go is no evidence). */
  void (*go)(tpuci__unit_att_t *att);
  void (*go_remove)(tpuci__unit_att_t *att);
  /* Optional (TPUCI__UNIT_GATE): once every host's command of a gang
   * ended, lets the idle ones exit (the end of engine/gate.h); counted
   * as a request; a failure: tpuci__unit_infra() and
   * tpuci__unit_stop_all() (SIGTERM ends an idle host's wait).
   * go_remove removes it too. */
  void (*end)(tpuci__unit_att_t *att);
  /* Optional: for the start deadline's cause, what keeps unit u from
   * being up ("its task waits for a node: ..."), or NULL for the core's
   * own words. New string. */
  char *(*not_up)(tpuci__unit_t *u);
  /* Optional: adjusts the exit the core made (ex->cause may be replaced
   * through v->cause; a log_lost goes into att->log_lost). */
  void (*outcome)(tpuci__unit_att_t *att, tpuci__gang_verdict_t *v, tpuci__exit_t *ex);
  void (*release)(tpuci__unit_t *u);           /* the driver's fields */
  void (*att_release)(tpuci__unit_att_t *att); /* the driver's fields */
} tpuci__unit_ops_t;

/* The attempt's phase (this file's top says each one's moves). */
typedef enum {
  TPUCI__UP_NETWORK = 0,
  TPUCI__UP_CREATE,
  TPUCI__UP_RUN,
  TPUCI__UP_INSPECT,
  TPUCI__UP_REMOVE,
  TPUCI__UP_GONE,
  TPUCI__UP_UNNET,
  TPUCI__UP_DONE
} tpuci__unit_phase_t;

/* The gang's start in RUN (this file's top). */
typedef enum {
  TPUCI__GANG_OPENING = 0,
  TPUCI__GANG_HALTED,
  TPUCI__GANG_STARTING,
  TPUCI__GANG_GO,
  TPUCI__GANG_UP,
  TPUCI__GANG_END
} tpuci__unit_gang_t;

struct tpuci__unit_att_s {
  const tpuci__unit_ops_t *ops;
  tpuci__unit_list_t *list;
  tpuci__attempt_t *a;
  void *units; /* nunits of ops->unit_size bytes */
  size_t nunits;
  int gang;                      /* a multi-host topology */
  tpuci__unit_phase_t phase;     /* moved by attempt.c only */
  tpuci__unit_gang_t gang_state; /* RUN: the start; attempt.c only */
  /* Requests in flight, all kinds (and pending retries): only
   * tpuci__unit_req_begin() and tpuci__unit_req_end() touch it. */
  int requests;
  int to_ready; /* RUN: units whose output is not ready yet */
  /* Why it ends early; each is set once and never cleared. */
  int stop;           /* signalled before anything started */
  int signalled;      /* the scheduler signalled it */
  uint64_t signals;   /* bit n: the scheduler sent signal n */
  char *infra;        /* the first failure not of the job's doing */
  int gang_stop;      /* a host failed on its own: the rest stop */
  char *log_lost;     /* set by ops->outcome, freed by the core */
  char *not_up;       /* signalled before the gang was up: what it waited for */
  int gone_asked;     /* GONE was entered (ops->gone's `first`) */
  unsigned long ends; /* units ended so far */
  uint64_t grace_ms;
  /* The gang's start deadline (RUN): armed when RUN begins for a gang
   * with a start_timeout (start_ms), stopped once it is UP. */
  uv_timer_t start_timer;
  uint64_t start_ms;
  int closing; /* handles being closed at the end */
  /* The core's in RUN (the grace) unless TPUCI__UNIT_STOP_BY_REMOVE; the
   * driver's otherwise (retries, inspections). Closed by the core. */
  uv_timer_t timer;
  void (*later)(tpuci__unit_att_t *att); /* tpuci__unit_later's */
  tpuci__unit_att_t *prev, *next;
};

/* A runtime's attempts not done. `changed` is called with the runtime
 * when one ended and when its timer closed: the runtime may close then. */
struct tpuci__unit_list_s {
  tpuci__unit_att_t *atts;
  int handles; /* attempt timers being closed */
  tpuci__runtime_t *rt;
  void (*changed)(tpuci__runtime_t *rt);
};

/* The runtime's start() of a driver on this core: the hosts
 * (tpuci__unit_hosts), a new attempt, ops->init, then it runs on `list`.
 * `grace_ms` unless the attempt or its job says otherwise. 0, or a
 * negative code with rt->err set and no callback. */
int tpuci__unit_start(tpuci__runtime_t *rt, const char *runtime, const tpuci__unit_ops_t *ops,
                      tpuci__attempt_t *a, uint64_t grace_ms, tpuci__unit_list_t *list);
/* A new attempt of `n` units (not running): the driver fills its part,
 * then tpuci__unit_run(), or tpuci__unit_att_free() if it gives up. */
tpuci__unit_att_t *tpuci__unit_att_new(const tpuci__unit_ops_t *ops, tpuci__attempt_t *a, size_t n,
                                       uint64_t grace_ms);
tpuci__unit_t *tpuci__unit_at(tpuci__unit_att_t *att, size_t i);
/* Frees an attempt that never ran (the ops' release, then itself). */
void tpuci__unit_att_free(tpuci__unit_att_t *att);
/* Runs it: a->rt_data = att, linked on `list`, the first phase asked. */
void tpuci__unit_run(tpuci__unit_att_t *att, uv_loop_t *loop, tpuci__unit_list_t *list);

/* Moves the attempt on once nothing of it is in flight. */
void tpuci__unit_step(tpuci__unit_att_t *att);
/* The attempt's count of requests in flight, its only owner: begin when
 * an op asks something (or arms a timer the phase waits for), end when
 * that is answered (or no longer waited for). end returns whether
 * nothing is in flight any more, when tpuci__unit_step() would move the
 * phase on; an end without a begin is a bug (tpuci__unit_bad_move). */
void tpuci__unit_req_begin(tpuci__unit_att_t *att);
int tpuci__unit_req_end(tpuci__unit_att_t *att);
/* A state machine (`what`: "phase", "container", ...) was asked to move
 * from `from` to `to`, which its table does not allow: a bug of tpuci.
 * A debug build aborts; otherwise the attempt tells it to the user and
 * the caller moves all the same (the code before the table did). */
void tpuci__unit_bad_move(tpuci__unit_att_t *att, const char *what, const char *name,
                          const char *from, const char *to);
/* A state machine: what it is ("phase", "container", ...), its states'
 * names, and its table, which says for each state the states it may move
 * to (moves[s], bit n: state n). One static const per machine. */
#define TPUCI__MOVE(n) (1u << (n))
typedef struct {
  const char *what;
  const char *const *names;
  const unsigned *moves;
} tpuci__unit_machine_t;

/* One move of machine `m` (of the unit named `name`, or NULL): checks
 * `from` -> `to` against its table (tpuci__unit_bad_move when it is not
 * there). Each machine's own set function calls it, then moves. */
void tpuci__unit_move(tpuci__unit_att_t *att, const tpuci__unit_machine_t *m, const char *name,
                      int from, int to);
/* Records the first failure not of the job's doing (takes `msg`). */
void tpuci__unit_infra(tpuci__unit_att_t *att, char *msg);
/* The driver's answers (none steps: the driver calls tpuci__unit_step). */
/* Unit u was made (NEW -> CREATED): there is something to signal and
 * remove. */
void tpuci__unit_created(tpuci__unit_t *u);
void tpuci__unit_ready(tpuci__unit_t *u);
void tpuci__unit_started(tpuci__unit_t *u, int ok);
/* Where unit u's wait step is (TPUCI__UNIT_GATE): `state` is
 * TPUCI__GATE_WAITING for the names in `waiting` (copied), _READY or
 * _STARTED (engine/gang.h); _SILENT and _DONE change nothing. */
void tpuci__unit_gate(tpuci__unit_t *u, tpuci__gate_state_t state, const char *waiting);
/* Its wait step said its command ended with `status` (TPUCI__GATE_DONE:
 * 0, or an exit that lets the peers run on; STARTED -> DONE, else
 * nothing): as an exit for the gang (a failure would stop the others,
 * this one too) and the verdict; the unit stays, idle, until the end
 * (ops->end) or a SIGTERM, and its own exit later changes nothing of
 * its status. */
void tpuci__unit_done(tpuci__unit_t *u, long status);
/* It exited with `status`: a host of a gang that failed on its own stops
 * the others. */
void tpuci__unit_exited(tpuci__unit_t *u, long status);
/* It ended, not by the job's doing (the driver named why with
 * tpuci__unit_infra): the others stop. */
void tpuci__unit_ended_infra(tpuci__unit_t *u);
/* Signals every unit that runs (or will, once started), or with
 * TPUCI__UNIT_STOP_BY_REMOVE ends what the driver follows of each. */
void tpuci__unit_stop_all(tpuci__unit_att_t *att, int signum);
/* The runtime's signal(): to the units that run, or, before they
 * started, none of them starts. */
int tpuci__unit_signal(tpuci__unit_att_t *att, int signum);
/* Whether it may be polled for its units (RUN or GONE). */
int tpuci__unit_polls(const tpuci__unit_att_t *att);
/* The parts of a driver's runtime object that are the core's: its name
 * and loop, signal(), and its attempts' list with `changed`. */
void tpuci__unit_rt_init(tpuci__runtime_t *rt, const char *name, uv_loop_t *loop,
                         tpuci__unit_list_t *list, void (*changed)(tpuci__runtime_t *rt));
/* The runtime's signal() of a driver on this core. */
int tpuci__unit_rt_signal(tpuci__runtime_t *rt, tpuci__attempt_t *a, int signum);
/* Calls fn(att) after `ms` on the attempt's timer, counted as a request
 * until then (then tpuci__unit_step). Not in RUN unless the driver stops
 * by removing. */
void tpuci__unit_later(tpuci__unit_att_t *att, uint64_t ms, void (*fn)(tpuci__unit_att_t *att));
/* A message of the attempt to the user (printf-like). */
void tpuci__unit_tell(tpuci__unit_att_t *att, const char *fmt, ...) TPUCI__PRINTF(2, 3);
/* How many hosts an attempt runs, and its topology's slice when it has
 * one (has_slice; the slice is then the caller's to free). */
typedef struct {
  size_t hosts;
  int has_slice;
  tpuci__slice_t slice;
} tpuci__unit_hosts_t;

/* Fills `out` for attempt `a`, checked for `runtime` ("docker"): its
 * image (unless `flags` has TPUCI__UNIT_NO_IMAGE), its topology's slice,
 * the hosts it may need fewer of, no `network` for a gang. 0, or a
 * negative code with rt->err set (and nothing to free). */
int tpuci__unit_hosts(tpuci__runtime_t *rt, const char *runtime, int flags, tpuci__attempt_t *a,
                      tpuci__unit_hosts_t *out);

#endif /* TPUCI_RUNTIME_UNIT_H */
