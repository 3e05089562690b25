/* The swarm runtime driver (runtime/runtime.h): the runtime object,
 * starting an attempt (its services' bodies) and its table of
 * operations for the attempt core (runtime/unit/unit.h: the operations
 * are attempt.c's; watch and gone start the task poll, poll.c), closing
 * (the shared parts: objects.c). */
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
    att->gone_deadline = uv_now(att->sw->loop) + ua->grace_ms + TPUCI__SW_GONE_MS;
    tpuci__sw_poll_start(att->sw);
  }
  return tpuci__sw_all_gone(att);
}

static const tpuci__unit_ops_t tpuci__sw_ops = {
  .kind = "service",
  .flags = TPUCI__UNIT_STOP_BY_REMOVE,
  .att_size = sizeof(tpuci__sw_att_t),
  .unit_size = sizeof(tpuci__sw_host_t),
  .init = tpuci__sw_op_init,
  .net_create = tpuci__sw_op_net_create,
  .create = tpuci__sw_op_create,
  .output = NULL,           /* followed once the poll sees it run */
  .start = tpuci__sw_op_start,
  .watch = tpuci__sw_op_watch,
  .stop = tpuci__sw_op_stop,
  .halt = NULL,
  .classify = NULL,         /* an exit 137 is inspected as it ends */
  .remove = tpuci__sw_op_remove,
  .gone = tpuci__sw_op_gone,
  .net_remove = tpuci__sw_net_remove,
  .keep = tpuci__sw_op_keep,
  .outcome = tpuci__sw_op_outcome,
  .release = tpuci__sw_op_release,
  .att_release = tpuci__sw_op_att_release,
};

static int tpuci__sw_start(tpuci__runtime_t *rt, tpuci__attempt_t *a) {
  tpuci__sw_t *sw = (tpuci__sw_t *) rt;
  if (sw->closing)
    return tpuci__err_set(&rt->err, TPUCI_ESTATE, "the swarm runtime is closing");
  return tpuci__unit_start(rt, "swarm", &tpuci__sw_ops, a, TPUCI__SW_GRACE_MS,
                           &sw->atts);
}

/* Closing. */

static void tpuci__sw_changed(tpuci__unit_list_t *l) {
  tpuci__sw_maybe_closed((tpuci__sw_t *) ((char *) l - offsetof(tpuci__sw_t, atts)));
}

static void tpuci__sw_close(tpuci__runtime_t *rt, void (*cb)(tpuci__runtime_t *rt)) {
  tpuci__sw_t *sw = (tpuci__sw_t *) rt;
  sw->closing = 1;
  sw->close_cb = cb;
  tpuci__sw_maybe_closed(sw);
}

static void tpuci__sw_free(tpuci__runtime_t *rt) {
  tpuci__sw_t *sw = (tpuci__sw_t *) rt;
  size_t i;
  if (sw == NULL) return;
  free(sw->run_id);
  free(sw->manager_node);
  for (i = 0; i < sw->nimages; i++) {
    free(sw->images[i]);
    if (sw->auths != NULL) tpuci__wipe_free(sw->auths[i]);
  }
  free(sw->images);
  free(sw->auths);
  json_decref(sw->nodes);
  tpuci__err_clear(&sw->rt.err);
  free(sw);
}

int tpuci__runtime_swarm_new(uv_loop_t *loop, const tpuci__runtime_opts_t *opts,
                             tpuci__runtime_t **out, tpuci__err_t *err) {
  tpuci__sw_t *sw = tpuci__calloc(1, sizeof(*sw));
  (void) err;
  tpuci__unit_rt_init(&sw->rt, "swarm", loop, &sw->atts, tpuci__sw_changed);
  sw->rt.prepare = tpuci__sw_prepare;
  sw->rt.abort = tpuci__sw_abort;
  sw->rt.start = tpuci__sw_start;
  sw->rt.close = tpuci__sw_close;
  sw->rt.free = tpuci__sw_free;
  sw->loop = loop;
  sw->run_id = tpuci__strdup(opts && opts->run_id ? opts->run_id : "");
  sw->keep_failed = opts ? opts->keep_failed : 0;
  *out = &sw->rt;
  return 0;
}
