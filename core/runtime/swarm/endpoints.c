/* The Engine API's swarm endpoints, on the shared engine client
 * (tpuci__engine_call: the version prefix, JSON, the engine's messages). */
#include <stdlib.h>
#include <string.h>

#include "runtime/swarm/swarm.h"

/* Short calls are capped so that a hung manager cannot hang a run. */
#define TPUCI__SW_SHORT_MS 120000

tpuci__http_req_t *tpuci__sw_service_create(tpuci__engine_t *e, json_t *body, const char *auth,
                                            tpuci__engine_cb cb, void *data) {
  tpuci__engine_req_t req = {
      .method = "POST", .path = "/services/create", .body = body, .timeout_ms = TPUCI__SW_SHORT_MS};
  tpuci__http_req_t *r = tpuci__engine_call(e, &req, cb, data);
  if (auth != NULL) {
    char *h = tpuci__printf("X-Registry-Auth: %s", auth);
    tpuci__http_set_header(r, h);
    tpuci__wipe_free(h);
  }
  return r;
}

tpuci__http_req_t *tpuci__sw_service_remove(tpuci__engine_t *e, const char *id, tpuci__engine_cb cb,
                                            void *data) {
  tpuci__engine_req_t r = {
      .method = "DELETE", .path = "/services/", .id = id, .timeout_ms = TPUCI__SW_SHORT_MS};
  return tpuci__engine_call(e, &r, cb, data);
}

tpuci__http_req_t *tpuci__sw_service_list(tpuci__engine_t *e, const char *label,
                                          tpuci__engine_cb cb, void *data) {
  tpuci__engine_filter_t f = {.key = "label", .values = &label, .n = 1};
  return tpuci__engine_list(e, "/services", &f, TPUCI__SW_SHORT_MS, cb, data);
}

tpuci__http_req_t *tpuci__sw_task_list(tpuci__engine_t *e, const char *key,
                                       const char *const *values, size_t n, tpuci__engine_cb cb,
                                       void *data) {
  tpuci__engine_filter_t f = {.key = key, .values = values, .n = n};
  return tpuci__engine_list(e, "/tasks", &f, TPUCI__SW_SHORT_MS, cb, data);
}

tpuci__http_req_t *tpuci__sw_logs(tpuci__engine_t *e, const tpuci__sw_logsrc_t *src,
                                  tpuci__http_chunk_cb chunk, void *chunk_data, tpuci__engine_cb cb,
                                  void *data) {
  /* A followed stream is ended by tpuci (cancelled once the task ended);
   * a plain read is short. */
  tpuci__engine_req_t r = {
      .method = "GET",
      .path = src->kind,
      .id = src->id,
      .tail = src->follow ? "/logs?stdout=1&stderr=1&follow=1" : "/logs?stdout=1&stderr=1",
      .timeout_ms = src->follow ? 0 : TPUCI__SW_SHORT_MS,
      .chunk = chunk,
      .chunk_data = chunk_data};
  return tpuci__engine_call(e, &r, cb, data);
}

tpuci__http_req_t *tpuci__sw_node_list(tpuci__engine_t *e, tpuci__engine_cb cb, void *data) {
  tpuci__engine_req_t r = {.method = "GET", .path = "/nodes", .timeout_ms = TPUCI__SW_SHORT_MS};
  return tpuci__engine_call(e, &r, cb, data);
}

const char *tpuci__sw_host_auth(const tpuci__sw_host_t *h) {
  const tpuci__sw_t *sw = TPUCI__SW_ATT(h)->sw;
  int k = h->u.att->a->inst->image;
  if (sw->auths == NULL || k < 0 || (size_t) k >= sw->nimages) return NULL;
  return sw->auths[k];
}
