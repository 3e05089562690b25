#include "runtime/engine/sync.h"

#include <stdlib.h>
#include <string.h>

void tpuci__sync_cb(void *p, const tpuci__engine_res_t *res) {
  tpuci__sync_res_t *r = p;
  r->done = 1;
  /* The answer may come in the loop's timers (curl reads a quick answer
   * while it sends): the poll that follows would then wait for I/O that
   * never comes. */
  if (r->loop != NULL) uv_stop(r->loop);
  r->ok = res->ok;
  r->error = res->error;
  r->status = res->status;
  r->json = res->json ? json_incref(res->json) : NULL;
  r->message = tpuci__strdup(res->message);
  r->hint = res->hint;
}

void tpuci__sync_wait(tpuci__sync_t *s, tpuci__sync_res_t *r) {
  r->loop = &s->loop;
  while (!r->done) uv_run(&s->loop, UV_RUN_ONCE);
}

void tpuci__sync_res_free(tpuci__sync_res_t *r) {
  json_decref(r->json);
  free(r->message);
  memset(r, 0, sizeof(*r));
}

int tpuci__sync_open(tpuci__sync_t *s, tpuci__err_t *err) {
  int rc;
  memset(s, 0, sizeof(*s));
  rc = uv_loop_init(&s->loop);
  if (rc != 0) return tpuci__err_set(err, rc, "uv_loop_init: %s", uv_strerror(rc));
  rc = tpuci__engine_new(&s->loop, &s->eng, err);
  if (rc != 0) {
    uv_loop_close(&s->loop);
    return TPUCI_EENGINE;
  }
  return 0;
}

static void tpuci__sync_closed(void *p) { ((tpuci__sync_t *) p)->closed = 1; }

void tpuci__sync_close(tpuci__sync_t *s) {
  tpuci__engine_close(s->eng, tpuci__sync_closed, s);
  while (!s->closed) uv_run(&s->loop, UV_RUN_ONCE);
  uv_run(&s->loop, UV_RUN_NOWAIT);
  uv_loop_close(&s->loop);
}

int tpuci__sync_listed(tpuci__sync_t *s, tpuci__sync_res_t *r, const char *what,
                       tpuci__buf_t *report) {
  tpuci__sync_wait(s, r);
  if (r->ok) return 0;
  tpuci__buf_addf(report, "FAILED to list %s: %s\n", what, r->message);
  tpuci__sync_res_free(r);
  return -1;
}

int tpuci__sync_removed(const tpuci__sync_res_t *d, const char *kind, const char *name,
                        const char *run, tpuci__buf_t *report) {
  if (d->ok || d->status == 404) {
    tpuci__buf_addf(report, "removed %s %s (run %s)\n", kind, name, run);
    return 1;
  }
  tpuci__buf_addf(report, "FAILED to remove %s %s: %s\n", kind, name, d->message);
  return 0;
}

int tpuci__sync_image_ids(const tpuci__plan_t *plan, tpuci__runtime_kind_t kind, char **ids,
                          char **why, tpuci__err_t *err) {
  tpuci__sync_t s;
  tpuci__sync_res_t r;
  size_t k;
  int opened = 0, rc = 0;
  memset(&r, 0, sizeof(r));
  for (k = 0; k < plan->nimages && rc == 0; k++) {
    const tpuci__image_t *img = &plan->images[k];
    if (!tpuci__plan_image_used(plan, k, kind)) continue;
    if (img->pull == TPUCI__PULL_ALWAYS) {
      why[k] =
          tpuci__printf("image '%s' has pull = \"always\": the pull may bring another", img->ref);
      continue;
    }
    if (!opened && (rc = tpuci__sync_open(&s, err)) != 0) break;
    opened = 1;
    tpuci__engine_image_inspect(s.eng, tpuci__image_engine_ref(img), tpuci__sync_cb, &r);
    tpuci__sync_wait(&s, &r);
    if (r.ok && json_is_string(json_object_get(r.json, "Id")))
      ids[k] = tpuci__strdup(json_string_value(json_object_get(r.json, "Id")));
    else if (r.status == 404)
      why[k] = tpuci__printf("image '%s' is not on the engine yet (its id is known once it is "
                             "pulled)",
                             img->ref);
    else
      rc = tpuci__err_set(err, TPUCI_EENGINE, "inspecting image '%s': %s", img->ref,
                          r.message ? r.message : "no answer");
    tpuci__sync_res_free(&r);
  }
  if (opened) tpuci__sync_close(&s);
  return rc;
}
