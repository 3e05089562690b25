/* The swarm runtime driver (runtime/runtime.h): the runtime object,
 * starting an attempt (its services' bodies) and its table of
 * operations for the attempt core (runtime/unit/unit.h: the operations
 * are attempt.c's; watch and gone start the task poll, poll.c), closing
 * (the shared parts: objects.c; what every engine driver's runtime
 * object has: engine/erun.h). */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/swarm/swarm.h"

/* The operations for the attempt core: attempt.c's, and the two that
 * start the task poll. */

static void tpuci__sw_op_watch(tpuci__unit_t *u) {
  tpuci__sw_poll_start(((tpuci__sw_att_t *) u->att)->sw);
}

static int tpuci__sw_op_gone(tpuci__unit_att_t *ua, int first) {
  tpuci__sw_att_t *att = (tpuci__sw_att_t *) ua;
  if (first) {
    att->gone_deadline = uv_now(att->sw->e.loop) + ua->grace_ms + TPUCI__SW_GONE_MS;
    tpuci__sw_poll_start(att->sw);
  }
  return tpuci__sw_all_gone(att);
}

static const tpuci__unit_ops_t tpuci__sw_ops = {
    .kind = "service",
    .flags = TPUCI__UNIT_STOP_BY_REMOVE | TPUCI__UNIT_GATE,
    .att_size = sizeof(tpuci__sw_att_t),
    .unit_size = sizeof(tpuci__sw_host_t),
    .init = tpuci__sw_op_init,
    .net_create = tpuci__sw_op_net_create,
    .create = tpuci__sw_op_create,
    .output = NULL, /* followed once the poll sees it run */
    .start = tpuci__sw_op_start,
    .watch = tpuci__sw_op_watch,
    .stop = tpuci__sw_op_stop,
    .halt = NULL,
    .classify = NULL, /* an exit 137 is inspected as it ends */
    .remove = tpuci__sw_op_remove,
    .gone = tpuci__sw_op_gone,
    .net_remove = tpuci__sw_net_remove,
    .keep = tpuci__sw_op_keep,
    .not_up = tpuci__sw_op_not_up,
    .go = tpuci__sw_op_go,
    .go_remove = tpuci__sw_op_go_remove,
    .end = tpuci__sw_op_end,
    .outcome = tpuci__sw_op_outcome,
    .release = tpuci__sw_op_release,
    .att_release = tpuci__sw_op_att_release,
};

static int tpuci__sw_start(tpuci__runtime_t *rt, tpuci__attempt_t *a) {
  return tpuci__unit_start(rt, "swarm", &tpuci__sw_ops, a, TPUCI__SW_GRACE_MS,
                           &((tpuci__sw_t *) rt)->atts);
}

static void tpuci__sw_free(tpuci__runtime_t *rt) {
  tpuci__sw_t *sw = (tpuci__sw_t *) rt;
  size_t i;
  if (sw == NULL) return;
  free(sw->manager_node);
  for (i = 0; i < sw->nimages; i++) {
    free(sw->images[i]);
    if (sw->auths != NULL) tpuci__wipe_free(sw->auths[i]);
  }
  free(sw->images);
  free(sw->auths);
  json_decref(sw->nodes);
  tpuci__erun_release(&sw->e);
  free(sw);
}

static const tpuci__erun_ops_t tpuci__sw_erun = {
    TPUCI__RUNTIME_SWARM,
    "swarm",
    "swarm",
    " on the swarm manager",
    "the swarm manager's Docker Engine",
    "start dockerd and `docker swarm init`, or set DOCKER_HOST",
    " (tpuci's swarm runtime needs API 1.41)",
    tpuci__sw_prepare,
    tpuci__sw_start,
    tpuci__sw_free,
    tpuci__sw_prepare_end,
    tpuci__sw_maybe_closed,
};

int tpuci__runtime_swarm_new(uv_loop_t *loop, const tpuci__runtime_opts_t *opts,
                             tpuci__runtime_t **out, tpuci__err_t *err) {
  tpuci__sw_t *sw = tpuci__calloc(1, sizeof(*sw));
  (void) err;
  tpuci__unit_rt_init(&sw->e.rt, "swarm", loop, &sw->atts, tpuci__sw_maybe_closed);
  *out = tpuci__erun_init(&sw->e, &tpuci__sw_erun, loop, opts);
  return 0;
}
