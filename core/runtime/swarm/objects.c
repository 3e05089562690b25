/* The swarm runtime driver's shared parts (swarm.h), below its other
 * files: closing once nothing is left (the task poll's timer, then the
 * runtime's own parts: engine/erun.h). */
#include <stdlib.h>

#include "runtime/swarm/swarm.h"

static void tpuci__sw_poll_closed(uv_handle_t *h) {
  tpuci__sw_t *sw = h->data;
  sw->handles--;
  tpuci__sw_maybe_closed(&sw->e.rt);
}

void tpuci__sw_maybe_closed(tpuci__runtime_t *rt) {
  tpuci__sw_t *sw = (tpuci__sw_t *) rt;
  if (!tpuci__erun_may_close(&sw->e) || sw->atts.atts != NULL || sw->polling > 0)
    return;
  if (sw->poll_init) {
    sw->poll_init = 0;
    sw->handles++;
    uv_close((uv_handle_t *) &sw->poll, tpuci__sw_poll_closed);
    return;
  }
  if (sw->handles == 0 && sw->atts.handles == 0) tpuci__erun_close_engine(&sw->e);
}
