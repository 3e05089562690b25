/* The docker runtime driver's own parts, shared by its files: the
 * runtime object (driver.c), an attempt's phases (attempt.c) and the
 * checks before a run (prepare.c). Nothing outside runtime/docker/
 * includes this. */
#ifndef TPUCI_RUNTIME_DOCKER_DRIVER_H
#define TPUCI_RUNTIME_DOCKER_DRIVER_H

#include <stdint.h>
#include <uv.h>

#include "runtime/engine/demux.h"
#include "runtime/engine/output.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/memstat.h"
#include "runtime/engine/podman.h"
#include "runtime/engine/pull.h"
#include "runtime/runtime.h"

#define TPUCI__MIB (1024.0 * 1024.0)
#define TPUCI__DISK_WARN_BYTES (1024ull * 1024 * 1024)
#define TPUCI__DISK_FAIL_BYTES (100ull * 1024 * 1024)
#define TPUCI__DK_GRACE_MS 5000
/* An engine that never reports OOM kills: podman before 5.0 (podman.h). */
#define TPUCI__DK_NO_OOM(eng) \
  ((eng)->podman && (eng)->podman_major < TPUCI__PODMAN_OOM_MAJOR)
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
  int network;            /* a gang's network, else a container */
  char *id;               /* its id, or its name when the id is unknown */
  char *name;             /* for messages */
} tpuci__dk_orphan_t;

typedef struct tpuci__dk_s tpuci__dk_t;
typedef struct tpuci__dk_att_s tpuci__dk_att_t;

typedef enum {
  TPUCI__PH_NETWORK = 0,
  TPUCI__PH_CREATE,
  TPUCI__PH_RUN,
  TPUCI__PH_INSPECT,
  TPUCI__PH_REMOVE,
  TPUCI__PH_UNNET,
  TPUCI__PH_DONE
} tpuci__phase_t;

typedef struct {
  tpuci__dk_att_t *att;
  int index;              /* host index */
  char *name;
  char *id;               /* set once created */
  char *host;             /* a gang's "worker-<index>", else NULL */
  json_t *body;           /* create request, until CREATE is over */
  int started;
  tpuci__http_req_t *attach; /* the attach stream, while it is open */
  int attached;           /* the engine attached its streams */
  int attach_broken;      /* the stream ended with an error: refetch */
  int refetched;          /* GET logs asked after the exit */
  int exited;             /* wait answered */
  int pending_signal;     /* to send once started */
  long status_code;
  int oom;
  int removed;
  int create_tries;
  uint64_t signals;       /* bit n: tpuci sent signal n to it */
  int stopped;            /* signalled before its wait answered */
  int inspect_tries;      /* inspections asked again (OOM not yet seen) */
  int reinspect;          /* waiting to be inspected again */
  /* Under a memory limit: the stats stream while it runs (cancelled once
   * its wait answered), for an OOM kill the engine does not report. */
  tpuci__http_req_t *stats;
  int stats_cancelled;
  tpuci__memstat_t mem;
  int oom_unreported;     /* gang.h's TPUCI__OOM_STATS, _PROBABLY or 0 */
  unsigned long order;    /* of its wait's answer among the attempt's */
  /* Its output; a gang's host's raw output also goes to
   * attempt-<n>.worker-<index>.log. */
  tpuci__ctrout_t out;
} tpuci__dk_ctr_t;

struct tpuci__dk_att_s {
  tpuci__dk_t *dk;
  tpuci__attempt_t *a;
  tpuci__dk_ctr_t *ctrs;
  size_t nctrs;
  int gang;               /* a multi-host topology: a private network */
  tpuci__phase_t phase;
  int requests;           /* in flight, all kinds (and a pending retry) */
  int to_attach;          /* attach requests not answered yet */
  int launched;           /* starts asked (or given up) */
  int stop;               /* signalled before the containers ran */
  uint64_t signals;       /* bit n: the scheduler sent signal n */
  char *infra;            /* the first engine failure */
  int kept;               /* --keep-failed kept the containers */
  unsigned long exits;    /* waits answered so far */
  int gang_stop;          /* a host failed: the others are being stopped */
  uint64_t grace_ms;
  uv_timer_t timer;       /* gang_stop's grace; network removal retries */
  char *net_name;
  char *net_id;
  json_t *net_body;
  int net_tries;          /* create (name taken) */
  int net_rm_tries;
  tpuci__dk_att_t *prev, *next;
};

struct tpuci__dk_s {
  tpuci__runtime_t rt;
  uv_loop_t *loop;
  tpuci__engine_t *eng;
  char *run_id;
  int keep_failed;
  tpuci__dk_att_t *atts;  /* attempts not done */
  int handles;            /* attempt timers being closed */
  int bg;                 /* requests of prepare */
  /* prepare */
  const tpuci__plan_t *plan;
  void (*prepare_cb)(tpuci__runtime_t *rt, int status);
  int *images;
  size_t nimages, image_next;
  int image_present;      /* of images[image_next - 1] */
  size_t leftover_ctrs;
  tpuci__http_req_t *prep_req; /* prepare's request in flight */
  tpuci__puller_t *pull;    /* or its image pull */
  int aborting;           /* abort(): prepare ends at its next answer */
  /* A podman engine's limits, read by prepare: whether create bodies
   * carry HostConfig.Ulimits (podman.h). */
  tpuci__podman_limits_t limits;
  /* objects to remove again (tpuci__dk_orphan) */
  tpuci__dk_orphan_t *orphans;
  size_t norphans, orphans_cap;
  int orphan_reqs;        /* removals of orphans in flight */
  /* close */
  int closing;
  void (*close_cb)(tpuci__runtime_t *rt);
};

/* driver.c: the runtime object. */
void tpuci__dk_message(tpuci__dk_t *dk, const char *msg);
/* Creates the engine client on first use; TPUCI_EENGINE with rt.err. */
int tpuci__dk_engine(tpuci__dk_t *dk);
/* Closes the runtime once nothing is left (close() was called). */
void tpuci__dk_maybe_closed(tpuci__dk_t *dk);
int tpuci__dk_start(tpuci__runtime_t *rt, tpuci__attempt_t *a);
/* Whether a failed request never reached an engine: nothing listens on
 * the socket, there is none, or it may not be opened. */
int tpuci__dk_unreached(const tpuci__engine_res_t *res);
/* Whether the engine gave no answer: unreached, or the connection broke
 * or timed out (not a cancellation). */
int tpuci__dk_no_answer(const tpuci__engine_res_t *res);
/* Records an object the engine did not answer about for removal later
 * (strings copied). */
void tpuci__dk_orphan(tpuci__dk_t *dk, int network, const char *id,
                      const char *name);

/* attempt.c: an attempt's phases. */
/* Moves the attempt on once nothing of it is in flight. */
void tpuci__dk_step(tpuci__dk_att_t *att);
/* Records the first engine failure of the attempt. */
void tpuci__dk_infra(tpuci__dk_att_t *att, const char *step,
                     const tpuci__dk_ctr_t *c, const char *msg);
/* `name` with a random suffix, for a name taken. New string. */
char *tpuci__dk_suffixed(const char *name);
void tpuci__dk_on_created(void *p, const tpuci__engine_res_t *res);
void tpuci__dk_on_net_created(void *p, const tpuci__engine_res_t *res);
/* Frees what the attempt holds except itself and its timer. */
void tpuci__dk_att_release(tpuci__dk_att_t *att);
int tpuci__dk_signal(tpuci__runtime_t *rt, tpuci__attempt_t *a, int signum);

/* prepare.c: the checks before a run. */
int tpuci__dk_prepare(tpuci__runtime_t *rt, const tpuci__plan_t *plan,
                      void (*cb)(tpuci__runtime_t *rt, int status));
void tpuci__dk_abort(tpuci__runtime_t *rt);

#endif /* TPUCI_RUNTIME_DOCKER_DRIVER_H */
