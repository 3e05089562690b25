/* The Engine API's swarm endpoints, on the shared engine client
 * (tpuci__engine_call: the version prefix, JSON, the engine's messages). */
#include <stdlib.h>
#include <string.h>

#include "runtime/swarm/swarm.h"

/* Short calls are capped so that a hung manager cannot hang a run. */
#define TPUCI__SW_SHORT_MS 120000

tpuci__http_req_t *tpuci__sw_service_create(tpuci__engine_t *e, json_t *body, const char *auth,
                                            tpuci__engine_cb cb, void *data) {
  tpuci__http_req_t *r = tpuci__engine_call(e, "POST", "/services/create", 0, body,
                                            TPUCI__SW_SHORT_MS, NULL, NULL, cb, data);
  if (auth != NULL) {
    char *h = tpuci__printf("X-Registry-Auth: %s", auth);
    tpuci__http_set_header(r, h);
    tpuci__wipe_free(h);
  }
  return r;
}

tpuci__http_req_t *tpuci__sw_service_remove(tpuci__engine_t *e, const char *id, tpuci__engine_cb cb,
                                            void *data) {
  return tpuci__engine_on_id(e, "DELETE", "/services/", id, "", TPUCI__SW_SHORT_MS, NULL, NULL, cb,
                             data);
}

tpuci__http_req_t *tpuci__sw_service_list(tpuci__engine_t *e, const char *label,
                                          tpuci__engine_cb cb, void *data) {
  return tpuci__engine_list(e, "/services", "label", &label, 1, TPUCI__SW_SHORT_MS, cb, data);
}

tpuci__http_req_t *tpuci__sw_task_list(tpuci__engine_t *e, const char *key,
                                       const char *const *values, size_t n, tpuci__engine_cb cb,
                                       void *data) {
  return tpuci__engine_list(e, "/tasks", key, values, n, TPUCI__SW_SHORT_MS, cb, data);
}

tpuci__http_req_t *tpuci__sw_logs(tpuci__engine_t *e, const char *kind, const char *id, int follow,
                                  tpuci__http_chunk_cb chunk, void *chunk_data, tpuci__engine_cb cb,
                                  void *data) {
  /* A followed stream is ended by tpuci (cancelled once the task ended);
   * a plain read is short. */
  return tpuci__engine_on_id(
      e, "GET", kind, id, follow ? "/logs?stdout=1&stderr=1&follow=1" : "/logs?stdout=1&stderr=1",
      follow ? 0 : TPUCI__SW_SHORT_MS, chunk, chunk_data, cb, data);
}

tpuci__http_req_t *tpuci__sw_node_list(tpuci__engine_t *e, tpuci__engine_cb cb, void *data) {
  return tpuci__engine_call(e, "GET", "/nodes", 0, NULL, TPUCI__SW_SHORT_MS, NULL, NULL, cb, data);
}

const char *tpuci__sw_host_auth(const tpuci__sw_host_t *h) {
  const tpuci__sw_t *sw = TPUCI__SW_ATT(h)->sw;
  int k = h->u.att->a->inst->image;
  if (sw->auths == NULL || k < 0 || (size_t) k >= sw->nimages) return NULL;
  return sw->auths[k];
}
