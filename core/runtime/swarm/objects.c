/* The swarm runtime driver's shared parts (swarm.h), below its other
 * files: a host's two state machines (their tables and setters), closing
 * once nothing is left (the task poll's timer, then the runtime's own
 * parts: engine/erun.h). */
#include <stdlib.h>

#include "runtime/swarm/swarm.h"

/* A swarm host's two machines (swarm.h): their tables and setters. */

static const char *const tpuci__sw_svc_names[] = {"NEW",     "UP",     "OOM_ASKED", "OOM_WAIT",
                                                  "REMOVED", "ASKING", "GONE"};
#define TPUCI__SW_GOES TPUCI__MOVE(TPUCI__SW_GONE)
static const unsigned tpuci__sw_svc_moves[] = {
    [TPUCI__SW_NEW] = TPUCI__MOVE(TPUCI__SW_UP) | TPUCI__SW_GOES,
    [TPUCI__SW_UP] =
        TPUCI__MOVE(TPUCI__SW_OOM_ASKED) | TPUCI__MOVE(TPUCI__SW_REMOVED) | TPUCI__SW_GOES,
    [TPUCI__SW_OOM_ASKED] = TPUCI__MOVE(TPUCI__SW_OOM_WAIT) | TPUCI__MOVE(TPUCI__SW_UP),
    [TPUCI__SW_OOM_WAIT] = TPUCI__MOVE(TPUCI__SW_OOM_ASKED),
    [TPUCI__SW_REMOVED] = TPUCI__MOVE(TPUCI__SW_ASKING) | TPUCI__SW_GOES,
    [TPUCI__SW_ASKING] = TPUCI__MOVE(TPUCI__SW_REMOVED) | TPUCI__SW_GOES,
    [TPUCI__SW_GONE] = 0,
};

static const tpuci__unit_machine_t tpuci__sw_svc_machine = {
    .what = "service", .names = tpuci__sw_svc_names, .moves = tpuci__sw_svc_moves};

void tpuci__sw_set_svc(tpuci__sw_host_t *h, tpuci__sw_svc_t to) {
  tpuci__unit_move(h->u.att, &tpuci__sw_svc_machine, h->u.name, (int) h->svc, (int) to);
  h->svc = to;
}

static const char *const tpuci__sw_log_names[] = {"IDLE",         "FOLLOW", "CANCEL", "DRAIN",
                                                  "DRAIN_CANCEL", "ENDED",  "READ"};
#define TPUCI__SW_LOG_ENDS TPUCI__MOVE(TPUCI__SW_LOG_ENDED)
static const unsigned tpuci__sw_log_moves[] = {
    [TPUCI__SW_LOG_IDLE] = TPUCI__MOVE(TPUCI__SW_LOG_FOLLOW) | TPUCI__MOVE(TPUCI__SW_LOG_READ),
    [TPUCI__SW_LOG_FOLLOW] =
        TPUCI__MOVE(TPUCI__SW_LOG_CANCEL) | TPUCI__MOVE(TPUCI__SW_LOG_DRAIN) | TPUCI__SW_LOG_ENDS,
    [TPUCI__SW_LOG_CANCEL] = TPUCI__SW_LOG_ENDS,
    [TPUCI__SW_LOG_DRAIN] = TPUCI__MOVE(TPUCI__SW_LOG_DRAIN_CANCEL) | TPUCI__SW_LOG_ENDS,
    [TPUCI__SW_LOG_DRAIN_CANCEL] = TPUCI__SW_LOG_ENDS,
    [TPUCI__SW_LOG_ENDED] = TPUCI__MOVE(TPUCI__SW_LOG_FOLLOW) | TPUCI__MOVE(TPUCI__SW_LOG_READ),
    [TPUCI__SW_LOG_READ] = 0,
};

static const tpuci__unit_machine_t tpuci__sw_log_machine = {
    .what = "service log", .names = tpuci__sw_log_names, .moves = tpuci__sw_log_moves};

void tpuci__sw_set_log(tpuci__sw_host_t *h, tpuci__sw_log_t to) {
  tpuci__unit_move(h->u.att, &tpuci__sw_log_machine, h->u.name, (int) h->log, (int) to);
  h->log = to;
}

static void tpuci__sw_poll_closed(uv_handle_t *h) {
  tpuci__sw_t *sw = h->data;
  sw->handles--;
  tpuci__sw_maybe_closed(&sw->e.rt);
}

void tpuci__sw_maybe_closed(tpuci__runtime_t *rt) {
  tpuci__sw_t *sw = (tpuci__sw_t *) rt;
  if (!tpuci__erun_may_close(&sw->e) || sw->atts.atts != NULL || sw->polling > 0) return;
  if (sw->poll_init) {
    sw->poll_init = 0;
    sw->handles++;
    uv_close((uv_handle_t *) &sw->poll, tpuci__sw_poll_closed);
    return;
  }
  if (sw->handles == 0 && sw->atts.handles == 0) tpuci__erun_close_engine(&sw->e);
}
