/* The swarm runtime driver's shared parts (swarm.h), below its other
 * files: messages, the engine client, closing once nothing is left. */
#include <stdlib.h>

#include "runtime/swarm/swarm.h"

void tpuci__sw_message(tpuci__sw_t *sw, const char *msg) {
  if (sw->rt.on_message != NULL) sw->rt.on_message(&sw->rt, msg);
}

int tpuci__sw_engine(tpuci__sw_t *sw) {
  int rc;
  if (sw->eng != NULL) return 0;
  rc = tpuci__engine_new(sw->loop, &sw->eng, &sw->rt.err);
  if (rc != 0) sw->rt.err.code = TPUCI_EENGINE;
  return rc != 0 ? TPUCI_EENGINE : 0;
}

static void tpuci__sw_engine_closed(void *p) {
  tpuci__sw_t *sw = p;
  void (*cb)(tpuci__runtime_t *) = sw->close_cb;
  sw->eng = NULL;
  sw->close_cb = NULL;
  if (cb) cb(&sw->rt);
}

static void tpuci__sw_poll_closed(uv_handle_t *h) {
  tpuci__sw_t *sw = h->data;
  sw->handles--;
  tpuci__sw_maybe_closed(sw);
}

void tpuci__sw_maybe_closed(tpuci__sw_t *sw) {
  if (!sw->closing || sw->atts.atts != NULL || sw->bg > 0 || sw->polling > 0 ||
      sw->prepare_cb != NULL)
    return;
  if (sw->poll_init) {
    sw->poll_init = 0;
    sw->handles++;
    uv_close((uv_handle_t *) &sw->poll, tpuci__sw_poll_closed);
    return;
  }
  if (sw->handles > 0 || sw->atts.handles > 0) return;
  if (sw->eng == NULL) {
    void (*cb)(tpuci__runtime_t *) = sw->close_cb;
    sw->close_cb = NULL;
    if (cb) cb(&sw->rt);
    return;
  }
  if (!sw->eng->closing) tpuci__engine_close(sw->eng, tpuci__sw_engine_closed, sw);
}

