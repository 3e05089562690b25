/* The docker runtime driver's own parts, shared by its files: the
 * runtime object (driver.c), an attempt's operations and its hosts'
 * state machine (attempt.c), a gang's go and end (go.c), the checks
 * before a run (prepare.c), what an attempt could not remove, its first
 * infra failure and closing (objects.c); `tpuci gc` and
 * `tpuci doctor` (maint.c, netprobe.c) need only runtime.h and
 * netprobe.h.
 * Nothing outside runtime/docker/ includes this. */
#ifndef TPUCI_RUNTIME_DOCKER_DRIVER_H
#define TPUCI_RUNTIME_DOCKER_DRIVER_H

#include <stdint.h>
#include <uv.h>

#include "runtime/engine/demux.h"
#include "runtime/engine/output.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/erun.h"
#include "runtime/engine/memstat.h"
#include "runtime/engine/network.h"
#include "runtime/engine/podman.h"
#include "runtime/engine/pull.h"
#include "runtime/runtime.h"
#include "runtime/unit/unit.h"

#define TPUCI__MIB (1024.0 * 1024.0)
#define TPUCI__DISK_WARN_BYTES (1024ull * 1024 * 1024)
#define TPUCI__DISK_FAIL_BYTES (100ull * 1024 * 1024)
#define TPUCI__DK_GRACE_MS 5000
/* An engine that never reports OOM kills: podman before 5.0 (podman.h). */
#define TPUCI__DK_NO_OOM(eng) ((eng)->podman && (eng)->podman_major < TPUCI__PODMAN_OOM_MAJOR)
/* Removing a network right after its last container can race with the
 * engine's endpoint cleanup (403 "has active endpoints"): retries after
 * 100, 200, 400, 800 ms, then every second, for about 8 s in all. */
#define TPUCI__NET_RM_TRIES 10
#define TPUCI__NET_RM_DELAY_MS 100
#define TPUCI__NET_RM_DELAY_MAX_MS 1000

/* An object of this run that an attempt could not remove because the
 * engine did not answer (it stopped, or restarts): removing it is tried
 * again when the next attempt starts and when the runtime closes, so an
 * engine that comes back leaves nothing for `tpuci gc`. */
typedef struct {
  int network; /* a gang's network, else a container */
  char *id;    /* its id, or its name when the id is unknown */
  char *name;  /* for messages */
} tpuci__dk_orphan_t;

typedef struct tpuci__dk_s tpuci__dk_t;
typedef struct tpuci__dk_att_s tpuci__dk_att_t;

/* Where an engine host's container is, as the driver follows it (the
 * core's u.state says whether it was made, runs, ended). What the driver
 * does for it comes one phase after the other: its output in RUN, its
 * inspection in INSPECT, its removal in REMOVE; so one state, moved only
 * by tpuci__dk_set (attempt.c's table):
 *
 *   NEW -> ATTACHING -> ATTACHED -> STREAMED, or -> BROKEN -> REFETCH
 *   (ATTACHING -> STREAMED or BROKEN: the stream ended before it attached)
 *   STREAMED, REFETCH -> INSPECT <-> REINSPECT
 *   any but ATTACHING, ATTACHED, REINSPECT -> REMOVED */
typedef enum {
  TPUCI__DK_NEW = 0,   /* nothing asked of it but its create */
  TPUCI__DK_ATTACHING, /* POST attach sent (c->attach), not attached yet */
  TPUCI__DK_ATTACHED,  /* its output comes through that stream */
  TPUCI__DK_STREAMED,  /* the stream ended: all its output came (or
                             none will: cancelled before it attached) */
  TPUCI__DK_BROKEN,    /* it broke: its logs are read once it exited */
  TPUCI__DK_REFETCH,   /* GET logs asked: what the stream missed */
  TPUCI__DK_INSPECT,   /* GET /containers/{id}/json asked (or answered) */
  TPUCI__DK_REINSPECT, /* waiting on the attempt's timer to ask again:
                             no OOM kill reported yet */
  TPUCI__DK_REMOVED    /* DELETE answered: it is gone */
} tpuci__dk_state_t;

/* One host's container (unit.h: the core's part first). */
typedef struct {
  tpuci__unit_t u;
  tpuci__dk_state_t state;
  char *id;                  /* set once created */
  json_t *body;              /* create request */
  tpuci__http_req_t *attach; /* the attach stream, while it is open */
  int create_tries;
  int inspect_tries; /* inspections asked again (OOM not yet seen) */
  /* Under a memory limit: the stats stream while it runs (cancelled once
   * its wait answered), for an OOM kill the engine does not report. */
  tpuci__http_req_t *stats;
  tpuci__memstat_t mem;
  /* Its output; a gang's host's raw output also goes to
   * attempt-<n>.worker-<index>.log. */
  tpuci__ctrout_t out;
} tpuci__dk_ctr_t;

struct tpuci__dk_att_s {
  tpuci__unit_att_t ua; /* the core's part */
  tpuci__dk_t *dk;
  tpuci__net_t net; /* a gang's network */
  char *key;        /* a gang's start barrier (engine/gate.h) */
  /* The go's and the end's containers (a gang; tpuci__gate_sign_t),
   * once created. */
  char *sign_id[2];
};

#define TPUCI__DK_ATT(u) ((tpuci__dk_att_t *) (u)->att)
#define TPUCI__DK_CTR(att, i) ((tpuci__dk_ctr_t *) tpuci__unit_at(&(att)->ua, (i)))

struct tpuci__dk_s {
  tpuci__erun_t e;         /* first: the runtime, engine, prepare, close */
  tpuci__unit_list_t atts; /* attempts not done (unit.h) */
  /* prepare: the plan's images its docker instances use */
  int *images;
  size_t nimages;
  size_t leftover_ctrs;
  /* A podman engine's limits, read by prepare: whether create bodies
   * carry HostConfig.Ulimits (podman.h). */
  tpuci__podman_limits_t limits;
  /* objects to remove again (tpuci__dk_orphan) */
  tpuci__dk_orphan_t *orphans;
  size_t norphans, orphans_cap;
  int orphan_reqs; /* removals of orphans in flight */
};

/* objects.c: the shared parts (below attempt.c, prepare.c, driver.c);
 * the runtime's own (messages, the engine client) are engine/erun.h's. */
/* Closes the runtime once nothing is left (close() was called). */
void tpuci__dk_maybe_closed(tpuci__runtime_t *rt);
/* Whether a failed request never reached an engine: nothing listens on
 * the socket, there is none, or it may not be opened. */
int tpuci__dk_unreached(const tpuci__engine_res_t *res);
/* Whether the engine gave no answer: unreached, or the connection broke
 * or timed out (not a cancellation). */
int tpuci__dk_no_answer(const tpuci__engine_res_t *res);
/* Records an object the engine did not answer about for removal later
 * (strings copied). */
void tpuci__dk_orphan(tpuci__dk_t *dk, int network, const char *id, const char *name);
/* Asks the engine again to remove the orphans (`last`: no later try,
 * say what is left). */
void tpuci__dk_orphans_flush(tpuci__dk_t *dk, int last);

/* The first failure of an attempt not of the job's doing (step: "creating",
 * c: the container or NULL), with podman's hint. */
void tpuci__dk_infra(tpuci__dk_att_t *att, const char *step, const tpuci__dk_ctr_t *c,
                     const char *msg);

/* go.c: the go and the end of a gang's wait steps (the core's ops->go,
 * ops->end; go_remove removes both). */
void tpuci__dk_op_go(tpuci__unit_att_t *ua);
void tpuci__dk_op_end(tpuci__unit_att_t *ua);
void tpuci__dk_op_go_remove(tpuci__unit_att_t *ua);

/* attempt.c: the operations of an attempt (unit.h). */
extern const tpuci__unit_ops_t tpuci__dk_ops;

/* prepare.c: the checks before a run. */
int tpuci__dk_prepare(tpuci__runtime_t *rt, const tpuci__plan_t *plan,
                      void (*cb)(tpuci__runtime_t *rt, int status));
void tpuci__dk_prepare_end(tpuci__erun_t *e);

#endif /* TPUCI_RUNTIME_DOCKER_DRIVER_H */
