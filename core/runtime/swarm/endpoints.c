/* The Engine API's swarm endpoints, on the shared engine client
 * (tpuci__engine_call: the version prefix, JSON, the engine's messages). */
#include <stdlib.h>
#include <string.h>

#include "runtime/swarm/swarm.h"

/* Short calls are capped so that a hung manager cannot hang a run. */
#define TPUCI__SW_SHORT_MS 120000

static char *tpuci__sw_filter(const char *key, const char *const *values,
                              size_t n) {
  json_t *f = json_object();
  json_t *a = json_array();
  char *text, *q;
  size_t i;
  for (i = 0; i < n; i++) json_array_append_new(a, json_string(values[i]));
  json_object_set_new(f, key, a);
  text = json_dumps(f, JSON_COMPACT);
  q = tpuci__http_escape(text, 0);
  free(text);
  json_decref(f);
  return q;
}

tpuci__http_req_t *tpuci__sw_service_create(tpuci__engine_t *e, json_t *body,
                                            const char *auth,
                                            tpuci__engine_cb cb, void *data) {
  tpuci__http_req_t *r = tpuci__engine_call(e, "POST", "/services/create", 0, body,
                                            TPUCI__SW_SHORT_MS, NULL, NULL, cb, data);
  if (auth != NULL) {
    char *h = tpuci__printf("X-Registry-Auth: %s", auth);
    tpuci__http_set_header(r, h);
    tpuci__http_wipe_free(h);
  }
  return r;
}

tpuci__http_req_t *tpuci__sw_service_remove(tpuci__engine_t *e,
                                            const char *id,
                                            tpuci__engine_cb cb, void *data) {
  tpuci__http_req_t *r;
  char *i = tpuci__http_escape(id, 0);
  char *path = tpuci__printf("/services/%s", i);
  r = tpuci__engine_call(e, "DELETE", path, 0, NULL, TPUCI__SW_SHORT_MS, NULL,
                         NULL, cb, data);
  free(path);
  free(i);
  return r;
}

tpuci__http_req_t *tpuci__sw_service_list(tpuci__engine_t *e,
                                          const char *label,
                                          tpuci__engine_cb cb, void *data) {
  tpuci__http_req_t *r;
  char *q = tpuci__sw_filter("label", &label, 1);
  char *path = tpuci__printf("/services?filters=%s", q);
  r = tpuci__engine_call(e, "GET", path, 0, NULL, TPUCI__SW_SHORT_MS, NULL,
                         NULL, cb, data);
  free(path);
  free(q);
  return r;
}

tpuci__http_req_t *tpuci__sw_task_list(tpuci__engine_t *e, const char *key,
                                       const char *const *values, size_t n,
                                       tpuci__engine_cb cb, void *data) {
  tpuci__http_req_t *r;
  char *q = tpuci__sw_filter(key, values, n);
  char *path = tpuci__printf("/tasks?filters=%s", q);
  r = tpuci__engine_call(e, "GET", path, 0, NULL, TPUCI__SW_SHORT_MS, NULL,
                         NULL, cb, data);
  free(path);
  free(q);
  return r;
}

tpuci__http_req_t *tpuci__sw_task_logs(tpuci__engine_t *e, const char *id,
                                       int follow, tpuci__http_chunk_cb chunk,
                                       void *chunk_data, tpuci__engine_cb cb,
                                       void *data) {
  tpuci__http_req_t *r;
  char *i = tpuci__http_escape(id, 0);
  char *path = tpuci__printf("/tasks/%s/logs?stdout=1&stderr=1%s", i,
                             follow ? "&follow=1" : "");
  /* A followed stream is ended by tpuci (cancelled once the task ended);
   * a plain read is short. */
  r = tpuci__engine_call(e, "GET", path, 0, NULL,
                         follow ? 0 : TPUCI__SW_SHORT_MS, chunk, chunk_data,
                         cb, data);
  free(path);
  free(i);
  return r;
}

tpuci__http_req_t *tpuci__sw_node_list(tpuci__engine_t *e,
                                       tpuci__engine_cb cb, void *data) {
  return tpuci__engine_call(e, "GET", "/nodes", 0, NULL, TPUCI__SW_SHORT_MS,
                            NULL, NULL, cb, data);
}

const char *tpuci__sw_host_auth(const tpuci__sw_host_t *h) {
  const tpuci__sw_t *sw = h->att->sw;
  int k = h->att->a->inst->image;
  if (sw->auths == NULL || k < 0 || (size_t) k >= sw->nimages) return NULL;
  return sw->auths[k];
}
