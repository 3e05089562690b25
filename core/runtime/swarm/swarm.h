/* The swarm runtime driver's own parts, shared by its files: the runtime
 * object (driver.c), the task poll (poll.c), an attempt's operations
 * (attempt.c), a host's two state machines and closing (objects.c), a
 * gang's go and end (go.c), the checks before a run (prepare.c), `tpuci gc` and
 * `tpuci doctor` (maint.c), the Engine API's swarm endpoints
 * (endpoints.c) and what a service looks like (service.c, pure).
 * Nothing outside runtime/swarm/ includes this.
 *
 * It speaks to the swarm's manager, a Docker Engine, through the engine
 * client both engine drivers share (runtime/engine/engine.h: HTTP on the
 * loop, cancellation, JSON), with its pure parts: labels and whether a
 * run is alive (container.h), the stream format (demux.h), a gang's
 * verdict and per-host log lines (gang.h). docs/swarm.md says what it
 * does. */
#ifndef TPUCI_RUNTIME_SWARM_H
#define TPUCI_RUNTIME_SWARM_H

#include <jansson.h>
#include <stdint.h>
#include <uv.h>

#include "runtime/engine/container.h"
#include "runtime/engine/demux.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/erun.h"
#include "runtime/engine/gang.h"
#include "runtime/engine/gate.h"
#include "runtime/engine/logres.h"
#include "runtime/engine/network.h"
#include "runtime/engine/output.h"
#include "runtime/engine/pull.h"
#include "runtime/runtime.h"
#include "runtime/unit/unit.h"

#define TPUCI__SW_GRACE_MS 5000
/* How often the task list is asked for while attempts run. */
#define TPUCI__SW_POLL_MS 250
/* Polls that fail in a row before the running attempts are infra. */
#define TPUCI__SW_POLL_FAILS 40
/* A task not placed for this long: the user is told why, once. */
#define TPUCI__SW_PENDING_TELL_MS 10000
/* After its service is removed, how long a task may take to go (the
 * grace period, then this). */
#define TPUCI__SW_GONE_MS 60000
/* Network removal retries, as the docker driver's. */
#define TPUCI__SW_NET_RM_TRIES 20
#define TPUCI__SW_NET_RM_DELAY_MS 250
/* A pytest task's StopGracePeriod is the job's grace plus this: the
 * time its bootstrap has to send the results through the log. */
#define TPUCI__SW_RESULTS_GRACE_MS 2000
/* A stopped task's followed log, after the task went: how long more its
 * last lines may take to come. */
#define TPUCI__SW_LINGER_MS 1000
/* How often a task's followed log is asked for again after it broke. */
#define TPUCI__SW_REFOLLOWS 5
/* Longest service name the engine takes (a DNS label). */
#define TPUCI__SW_NAME_MAX 63

typedef struct tpuci__sw_s tpuci__sw_t;
typedef struct tpuci__sw_att_s tpuci__sw_att_t;

/* A task's state, in the engine's order ("new" ... "orphaned"). */
typedef enum {
  TPUCI__TS_UNKNOWN = 0,
  TPUCI__TS_NEW,
  TPUCI__TS_PENDING,
  TPUCI__TS_ASSIGNED,
  TPUCI__TS_ACCEPTED,
  TPUCI__TS_PREPARING,
  TPUCI__TS_READY,
  TPUCI__TS_STARTING,
  TPUCI__TS_RUNNING,
  TPUCI__TS_COMPLETE,
  TPUCI__TS_SHUTDOWN,
  TPUCI__TS_FAILED,
  TPUCI__TS_REJECTED,
  TPUCI__TS_REMOVE,
  TPUCI__TS_ORPHANED
} tpuci__task_state_t;

/* service.c: pure. */
tpuci__task_state_t tpuci__task_state_parse(const char *s);
/* "pending", ...: the engine's word ("unknown" for none). */
const char *tpuci__task_state_name(tpuci__task_state_t st);
int tpuci__task_state_terminal(tpuci__task_state_t st);

/* What one task said, read from an entry of GET /tasks. */
typedef struct {
  const char *id;
  const char *service_id;
  const char *node_id;
  const char *container_id; /* NULL until it has one */
  const char *err;          /* Status.Err or NULL */
  tpuci__task_state_t state;
  int has_exit; /* Status.ContainerStatus.ExitCode given */
  long exit_code;
} tpuci__task_t;
void tpuci__task_read(json_t *task, tpuci__task_t *out);

/* How a host's first task ended, as tpuci sees it. */
typedef enum {
  TPUCI__TASK_EXIT = 0, /* the container ran and exited: exit_code */
  TPUCI__TASK_INFRA     /* not the job's doing: rejected, no container,
                             shut down or orphaned by the swarm */
} tpuci__task_end_t;
/* The verdict on a terminal task; for INFRA, *why is a new string
 * ("rejected: No such image: ..."). */
tpuci__task_end_t tpuci__task_end(const tpuci__task_t *t, char **why);

/* "tpuci-<run>-<instance>-<attempt>" (and "-w<host>" for a gang's host),
 * lower-case letters, digits and '-' only, at most TPUCI__SW_NAME_MAX
 * bytes: a DNS label, as service names must be. When the instance had to
 * change or be cut, 8 hex digits of its hash keep names distinct. New
 * string. */
char *tpuci__sw_name(const char *run_id, const char *instance, int attempt, int host);

typedef struct {
  const char *name;
  const char *image;         /* a reference or an image id */
  const tpuci__strv_t *argv; /* Args; may be empty: image default */
  const tpuci__strv_t *env;  /* "K=V" */
  const char *workdir;       /* may be NULL */
  const tpuci__mount_t *mounts;
  size_t nmounts;
  double cpus;           /* 0: no limit */
  uint64_t memory_bytes; /* 0: no limit */
  const tpuci__kvlist_t *labels;
  const char *hostname; /* may be NULL */
  /* A gang's overlay network and this host's name on it; or the job's
   * own `network`; NULL: the engine's default. */
  const char *network;
  const char *alias; /* may be NULL */
  uint64_t grace_ms; /* StopGracePeriod */
  /* A pytest attempt's results folder in the task: an empty tmpfs at
   * this path (its files come back through the log, engine/logres.h),
   * or NULL. */
  const char *results_tmpfs;
  const char *constraint; /* "node.id==..." or NULL */
  /* The job's accelerator options or NULL: those a service takes
   * (tpuci__ctr_opts_refusal() refused the others before the run). */
  const tpuci__ctr_opts_t *ctr;
} tpuci__svc_spec_t;

/* The body of POST /services/create: one replica that is never
 * restarted, Init, StopGracePeriod, the limits as both Limits and
 * Reservations (Swarm places it only where it fits), the labels on the
 * service and its containers, DNS round robin for its names; of the
 * accelerator options, Sysctls, Ulimits, CapabilityAdd and
 * CapabilityDrop, and shm_size as a tmpfs mount of that size at /dev/shm
 * (a ContainerSpec has no ShmSize); the results folder as a tmpfs mount.
 * New reference. */
json_t *tpuci__svc_create_body(const tpuci__svc_spec_t *s);

/* The body of POST /networks/create for a gang: an overlay network,
 * attachable, internal, labelled. New reference. */
json_t *tpuci__sw_net_body(const char *name, const tpuci__kvlist_t *labels);

/* A node of GET /nodes, as the fit check sees it. */
typedef struct {
  const char *id;
  const char *hostname;
  int ready; /* Status.State "ready", Availability
                                     "active" */
  int manager;
  int64_t nano_cpus;
  int64_t memory_bytes;
} tpuci__sw_node_t;
void tpuci__sw_node_read(json_t *node, tpuci__sw_node_t *out);

/* How many tasks needing `cpus` and `memory_bytes` (0: no need) the
 * ready nodes can hold at once; a large number when nothing is needed. */
int tpuci__sw_fit(const tpuci__sw_node_t *nodes, size_t n, double cpus, uint64_t memory_bytes);

/* endpoints.c: the swarm endpoints, through tpuci__engine_call. */
/* POST /services/create; `auth` (may be NULL) is the X-Registry-Auth
 * header the nodes pull the image with. */
tpuci__http_req_t *tpuci__sw_service_create(tpuci__engine_t *e, json_t *body, const char *auth,
                                            tpuci__engine_cb cb, void *data);
tpuci__http_req_t *tpuci__sw_service_remove(tpuci__engine_t *e, const char *id, tpuci__engine_cb cb,
                                            void *data);
/* GET /services filtered by a label ("tpuci.run"). */
tpuci__http_req_t *tpuci__sw_service_list(tpuci__engine_t *e, const char *label,
                                          tpuci__engine_cb cb, void *data);
/* GET /tasks?filters={key: values}. */
tpuci__http_req_t *tpuci__sw_task_list(tpuci__engine_t *e, const char *key,
                                       const char *const *values, size_t n, tpuci__engine_cb cb,
                                       void *data);
/* Which log to read: `kind` "/tasks/" or "/services/", the task's or
 * service's `id`, and whether to follow it. */
typedef struct {
  const char *kind;
  const char *id;
  int follow;
} tpuci__sw_logsrc_t;

/* GET {kind}{id}/logs?stdout=1&stderr=1[&follow=1]: the multiplexed
 * stream to chunk. A followed stream does not end when the task does. */
tpuci__http_req_t *tpuci__sw_logs(tpuci__engine_t *e, const tpuci__sw_logsrc_t *src,
                                  tpuci__http_chunk_cb chunk, void *chunk_data, tpuci__engine_cb cb,
                                  void *data);
tpuci__http_req_t *tpuci__sw_node_list(tpuci__engine_t *e, tpuci__engine_cb cb, void *data);

/* A swarm host is two state machines, each one enum moved only by its
 * setter (objects.c: tpuci__sw_set_svc, tpuci__sw_set_log, which check
 * the move against the machine's table): its
 * service's life, and its task's followed log, which may still be read
 * while the service is being removed (DRAIN).
 *
 * The service (h->svc; the task's own state is h->state, the engine's):
 *
 *   NEW -> UP (created) -> REMOVED (DELETE answered, or someone else
 *   removed it while it ran) -> ASKING (GONE: its container on the
 *   manager looked up) -> REMOVED (still there) or GONE
 *   UP -> OOM_ASKED (RUN: its exit 137 inspected on the manager)
 *   <-> OOM_WAIT (no OOM kill recorded yet: asked again) -> UP
 *   NEW, UP, REMOVED, ASKING -> GONE (nothing left to wait for, or tpuci
 *   gave up waiting) */
typedef enum {
  TPUCI__SW_NEW = 0,
  TPUCI__SW_UP,
  TPUCI__SW_OOM_ASKED,
  TPUCI__SW_OOM_WAIT,
  TPUCI__SW_REMOVED,
  TPUCI__SW_ASKING,
  TPUCI__SW_GONE
} tpuci__sw_svc_t;

/* The followed log (h->log):
 *
 *   IDLE -> FOLLOW (the poll saw the task run: GET logs?follow=1, counted)
 *   FOLLOW -> CANCEL (tpuci ends it: the task ended, a stop) -> ENDED
 *   FOLLOW -> ENDED (the engine ended it; it broke unless the task
 *   ended: h->broke says why, and the poll follows it again, up to
 *   TPUCI__SW_REFOLLOWS times)
 *   FOLLOW -> DRAIN (tpuci stopped the task while its results came: the
 *   log is followed on, uncounted, until the task went) -> DRAIN_CANCEL
 *   -> ENDED, or DRAIN -> ENDED
 *   IDLE, ENDED -> READ (the whole log read once more after the end,
 *   past what the stream brought; a task that never ran has nothing) */
typedef enum {
  TPUCI__SW_LOG_IDLE = 0,
  TPUCI__SW_LOG_FOLLOW,
  TPUCI__SW_LOG_CANCEL,
  TPUCI__SW_LOG_DRAIN,
  TPUCI__SW_LOG_DRAIN_CANCEL,
  TPUCI__SW_LOG_ENDED,
  TPUCI__SW_LOG_READ
} tpuci__sw_log_t;

/* One host of an attempt: a service and its (first) task (unit.h: the
 * core's part first; u.state EXITED or LOST: its first task ended). */
typedef struct {
  tpuci__unit_t u;
  tpuci__sw_svc_t svc;
  tpuci__sw_log_t log;
  char *id;     /* the service's, once created */
  json_t *body; /* create request */
  int create_tries;
  /* The task. */
  char *task_id;
  char *node_id;
  char *container_id;
  tpuci__task_state_t state;
  char *task_err;         /* its Status.Err, as the poll saw it last */
  uint64_t pending_since; /* loop time the task was first seen unplaced */
  int told_pending;       /* the user was told why it waits */
  int oom_tries;          /* OOM_ASKED, OOM_WAIT: inspections so far */
  /* Output: the followed stream (FOLLOW, CANCEL, DRAIN, DRAIN_CANCEL). */
  tpuci__http_req_t *follow;
  /* Why the followed stream broke while the task ran, not cancelled by
   * tpuci: the manager's engine went away (a restart) or the connection
   * broke. Kept once it happened (the note, log_lost); NULL: never. */
  char *broke;
  int refollows;
  tpuci__ctrout_t out;
  /* A pytest attempt's results, through the log (engine/logres.h):
   * whether it sends them, whether they were checked, whether the log
   * was drained (DRAIN): then they may be cut. */
  int res_on;
  int res_checked;
  int drained;
  tpuci__logres_t res;
  uint64_t linger_at; /* loop time to stop following once it went */
} tpuci__sw_host_t;

struct tpuci__sw_att_s {
  tpuci__unit_att_t ua; /* the core's part */
  tpuci__sw_t *sw;
  int own_net;            /* an overlay network of its own: a gang, or
                             network = "none" */
  uint64_t gone_deadline; /* loop time to give up waiting in GONE */
  tpuci__net_t net;       /* its own network (own_net) */
  char *key;              /* its hosts' lines of tpuci's own (gate.h) */
  /* The go's and the end's services (a gang; tpuci__gate_sign_t), once
   * created. */
  char *sign_id[2];
};

#define TPUCI__SW_ATT(h) ((tpuci__sw_att_t *) (h)->u.att)
#define TPUCI__SW_HOST(att, i) ((tpuci__sw_host_t *) tpuci__unit_at(&(att)->ua, (i)))

struct tpuci__sw_s {
  tpuci__erun_t e;         /* first: the runtime, engine, prepare, close */
  tpuci__unit_list_t atts; /* attempts not done (unit.h) */
  int handles;             /* the poll timer being closed */
  /* The task poll. */
  uv_timer_t poll;
  int poll_init;
  int polling; /* a poll request in flight */
  int poll_fails;
  /* What prepare found out. */
  char *manager_node; /* this engine's node id */
  char **images;      /* per plan image: what services run */
  /* per plan image: the X-Registry-Auth its services are created with
   * (the nodes pull it by reference too), or NULL */
  char **auths;
  size_t nimages;
  json_t *nodes; /* GET /nodes, during prepare */
};

/* endpoints.c */
/* The X-Registry-Auth for a host's service (sw->auths), or NULL. */
const char *tpuci__sw_host_auth(const tpuci__sw_host_t *h);

/* objects.c: the shared parts (below the other files); the runtime's
 * own (messages, the engine client) are engine/erun.h's. */
/* A host's two machines: their one setter each (the moves above). */
void tpuci__sw_set_svc(tpuci__sw_host_t *h, tpuci__sw_svc_t to);
void tpuci__sw_set_log(tpuci__sw_host_t *h, tpuci__sw_log_t to);
/* Closes the runtime once nothing is left (close() was called). */
void tpuci__sw_maybe_closed(tpuci__runtime_t *rt);

/* attempt.c: the operations of an attempt (unit.h), but watch and gone,
 * which start the task poll (driver.c); and what the poll says. */
int tpuci__sw_op_init(tpuci__unit_att_t *ua, tpuci__runtime_t *rt, const tpuci__slice_t *slice);
void tpuci__sw_op_net_create(tpuci__unit_att_t *ua);
void tpuci__sw_op_create(tpuci__unit_t *u);
void tpuci__sw_op_start(tpuci__unit_t *u);
void tpuci__sw_op_stop(tpuci__unit_t *u, int signum);
void tpuci__sw_op_remove(tpuci__unit_t *u);
void tpuci__sw_net_remove(tpuci__unit_att_t *ua);
char *tpuci__sw_op_keep(tpuci__unit_att_t *ua, tpuci__unit_t *u);
void tpuci__sw_op_outcome(tpuci__unit_att_t *ua, tpuci__gang_verdict_t *v, tpuci__exit_t *ex);
char *tpuci__sw_op_not_up(tpuci__unit_t *u);

void tpuci__sw_op_release(tpuci__unit_t *u);
void tpuci__sw_op_att_release(tpuci__unit_att_t *ua);
/* GONE: whether every host's task (and its container on the manager)
 * went, or the deadline passed. */
int tpuci__sw_all_gone(tpuci__sw_att_t *att);
/* Whether host h's service went (GONE), as GONE's poll asks. */
#define TPUCI__SW_WENT(h) ((h)->svc == TPUCI__SW_GONE)
/* A task of the poll's answer that belongs to host h. */
void tpuci__sw_on_task(tpuci__sw_host_t *h, const tpuci__task_t *t);
/* The poll did not list h's service or task any more. */
void tpuci__sw_on_absent(tpuci__sw_host_t *h);
/* The poll keeps failing: the attempt is infra. */
void tpuci__sw_poll_lost(tpuci__sw_att_t *att, const char *why);

/* go.c: the go and the end of a gang's wait steps (the core's ops->go,
 * ops->end; go_remove removes both). */
void tpuci__sw_op_go(tpuci__unit_att_t *ua);
void tpuci__sw_op_end(tpuci__unit_att_t *ua);
void tpuci__sw_op_go_remove(tpuci__unit_att_t *ua);

/* poll.c: the task poll every running attempt shares. */
/* Starts the task poll if it is not running. */
void tpuci__sw_poll_start(tpuci__sw_t *sw);

/* prepare.c */
int tpuci__sw_prepare(tpuci__runtime_t *rt, const tpuci__plan_t *plan,
                      void (*cb)(tpuci__runtime_t *rt, int status));
void tpuci__sw_prepare_end(tpuci__erun_t *e);
/* The swarm state of a GET /info answer: 0 when this engine is an
 * active manager, else TPUCI_EENGINE with a one-line message. */
int tpuci__sw_info_check(json_t *info, const char *where, tpuci__err_t *err);
/* The fit check of the plan's swarm instances against GET /nodes: 0, or
 * TPUCI_EENGINE naming the first job that no node can hold. */
int tpuci__sw_plan_fits(const tpuci__plan_t *plan, json_t *nodes, tpuci__err_t *err);

#endif /* TPUCI_RUNTIME_SWARM_H */
