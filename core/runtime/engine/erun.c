/* The shared part of an engine driver's runtime object (erun.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/engine/endpoint.h"
#include "runtime/engine/erun.h"

static int tpuci__erun_start(tpuci__runtime_t *rt, tpuci__attempt_t *a) {
  tpuci__erun_t *e = (tpuci__erun_t *) rt;
  if (e->closing)
    return tpuci__err_set(&rt->err, TPUCI_ESTATE, "the %s runtime is closing", e->ops->name);
  return e->ops->start(rt, a);
}

tpuci__runtime_t *tpuci__erun_init(tpuci__erun_t *e, const tpuci__erun_ops_t *ops, uv_loop_t *loop,
                                   const tpuci__runtime_opts_t *opts) {
  e->ops = ops;
  e->rt.prepare = ops->prepare;
  e->rt.start = tpuci__erun_start;
  e->rt.free = ops->free;
  e->rt.abort = tpuci__erun_abort;
  e->rt.close = tpuci__erun_close;
  e->loop = loop;
  e->run_id = tpuci__strdup(opts && opts->run_id ? opts->run_id : "");
  e->keep_failed = opts ? opts->keep_failed : 0;
  return &e->rt;
}

void tpuci__erun_release(tpuci__erun_t *e) {
  free(e->run_id);
  e->run_id = NULL;
  tpuci__err_clear(&e->rt.err);
}

void tpuci__erun_tell(tpuci__erun_t *e, const char *fmt, ...) {
  va_list ap, aq;
  char *m;
  int n;
  if (e->rt.on_message == NULL) return;
  va_start(ap, fmt);
  va_copy(aq, ap);
  n = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  if (n >= 0) {
    m = tpuci__malloc((size_t) n + 1);
    vsnprintf(m, (size_t) n + 1, fmt, ap);
    e->rt.on_message(&e->rt, m);
    free(m);
  }
  va_end(ap);
}

int tpuci__erun_engine(tpuci__erun_t *e) {
  int rc;
  if (e->eng != NULL) return 0;
  rc = tpuci__engine_new(e->loop, &e->eng, &e->rt.err);
  if (rc != 0) e->rt.err.code = TPUCI_EENGINE;
  return rc != 0 ? TPUCI_EENGINE : 0;
}

/* prepare */

int tpuci__erun_prepare_begin(tpuci__erun_t *e, const tpuci__plan_t *plan,
                              void (*cb)(tpuci__runtime_t *rt, int status)) {
  tpuci__strv_t w = {0};
  size_t i;
  int rc;
  if (e->closing || e->prepare_cb != NULL)
    return tpuci__err_set(&e->rt.err, TPUCI_ESTATE, "the %s runtime is busy", e->ops->name);
  rc = tpuci__erun_engine(e);
  if (rc != 0) return rc;
  /* Bind mounts (and pytest's results folder) on an engine over TCP. */
  tpuci__remote_mount_warnings(plan, e->ops->kind, &e->eng->host, &w);
  for (i = 0; i < w.len; i++) tpuci__erun_tell(e, "warning: %s", w.items[i]);
  tpuci__strv_free(&w);
  e->plan = plan;
  e->prepare_cb = cb;
  e->image_next = 0;
  return 0;
}

void tpuci__erun_prepare_done(tpuci__erun_t *e, int status) {
  void (*cb)(tpuci__runtime_t *, int) = e->prepare_cb;
  e->prepare_cb = NULL;
  if (e->ops->prepare_end) e->ops->prepare_end(e);
  if (cb) cb(&e->rt, status);
  e->ops->maybe_closed(&e->rt);
}

void tpuci__erun_prepare_fail(tpuci__erun_t *e, int code, char *msg) {
  tpuci__err_set(&e->rt.err, code, "%s", msg);
  free(msg);
  tpuci__erun_prepare_done(e, code);
}

int tpuci__erun_answered(tpuci__erun_t *e) {
  e->bg--;
  e->prep_req = NULL;
  e->pull = NULL;
  if (!e->aborting) return 0;
  tpuci__err_set(&e->rt.err, UV_ECANCELED, "cancelled");
  tpuci__erun_prepare_done(e, UV_ECANCELED);
  return 1;
}

static void tpuci__erun_on_pull_progress(void *p, const tpuci__pull_progress_t *pr) {
  tpuci__erun_t *e = p;
  if (e->rt.on_pull != NULL) e->rt.on_pull(&e->rt, pr);
}

tpuci__erun_img_t tpuci__erun_image(tpuci__erun_t *e, const tpuci__image_t *img,
                                    const tpuci__engine_res_t *res, tpuci__pull_cb on_pulled) {
  if (!res->ok && res->status != 404) {
    tpuci__erun_prepare_fail(e, TPUCI_EENGINE,
                             tpuci__printf("%s: inspecting image '%s' failed: %s",
                                           e->ops->inspecting, img->ref, res->message));
    return TPUCI__ERUN_IMG_HANDLED;
  }
  e->image_present = res->ok;
  if (!res->ok && img->pull == TPUCI__PULL_NEVER) return TPUCI__ERUN_IMG_NEVER;
  if (res->ok && img->pull != TPUCI__PULL_ALWAYS) return TPUCI__ERUN_IMG_USE;
  tpuci__erun_tell(e, "pulling image '%s'%s", img->ref, e->ops->pulling);
  e->pull =
      tpuci__pull_start(e->eng, img->ref, tpuci__erun_on_pull_progress, on_pulled, e, &e->rt.err);
  if (e->pull == NULL) tpuci__erun_prepare_done(e, e->rt.err.code);
  else e->bg++;
  return TPUCI__ERUN_IMG_HANDLED;
}

int tpuci__erun_version(tpuci__erun_t *e, const tpuci__engine_res_t *res) {
  const tpuci__erun_ops_t *o = e->ops;
  char *where;
  if (res->error != 0) {
    tpuci__erun_prepare_fail(
        e, TPUCI_EENGINE,
        tpuci__printf("cannot reach %s (%s); %s", o->reached, res->message,
                      o->reach_hint && res->error != UV_EPROTO && res->hint == NULL
                          ? o->reach_hint
                          : tpuci__engine_reach_hint(res->error, res->hint)));
    return 1;
  }
  if (!res->ok || res->json == NULL) {
    where = tpuci__engine_where(e->eng);
    tpuci__erun_prepare_fail(e, TPUCI_EENGINE,
                             tpuci__printf("the Docker Engine (%s) answered GET "
                                           "/version with an error: %s",
                                           where, res->ok ? "not JSON" : res->message));
    free(where);
    return 1;
  }
  if (tpuci__engine_negotiate(e->eng, res->json, &e->rt.err) == 0) return 0;
  if (o->api_note == NULL) {
    tpuci__erun_prepare_done(e, e->rt.err.code);
    return 1;
  }
  tpuci__erun_prepare_fail(
      e, TPUCI_EENGINE,
      tpuci__printf("%s: %s%s", o->inspecting, e->rt.err.msg ? e->rt.err.msg : "API too old",
                    o->api_note));
  return 1;
}

void tpuci__erun_abort(tpuci__runtime_t *rt) {
  tpuci__erun_t *e = (tpuci__erun_t *) rt;
  if (e->prepare_cb == NULL || e->aborting) return;
  e->aborting = 1;
  /* An image pull, or a check of an engine that does not answer. The
   * engine stops a pull whose client went away. */
  if (e->prep_req != NULL) tpuci__engine_cancel(e->eng, e->prep_req);
  if (e->pull != NULL) tpuci__pull_cancel(e->pull);
}

/* close */

void tpuci__erun_close(tpuci__runtime_t *rt, void (*cb)(tpuci__runtime_t *rt)) {
  tpuci__erun_t *e = (tpuci__erun_t *) rt;
  e->closing = 1;
  e->close_cb = cb;
  e->ops->maybe_closed(&e->rt);
}

int tpuci__erun_may_close(const tpuci__erun_t *e) {
  return e->closing && e->bg == 0 && e->prepare_cb == NULL;
}

static void tpuci__erun_engine_closed(void *p) {
  tpuci__erun_t *e = p;
  void (*cb)(tpuci__runtime_t *) = e->close_cb;
  e->eng = NULL;
  e->close_cb = NULL;
  if (cb) cb(&e->rt);
}

void tpuci__erun_close_engine(tpuci__erun_t *e) {
  if (e->eng == NULL) {
    void (*cb)(tpuci__runtime_t *) = e->close_cb;
    e->close_cb = NULL;
    if (cb) cb(&e->rt);
    return;
  }
  if (!e->eng->closing) tpuci__engine_close(e->eng, tpuci__erun_engine_closed, e);
}
