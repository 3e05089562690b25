/* Image pulls with credentials and progress (pull.h). */
#include "runtime/engine/pull.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/engine/credhelper.h"
#include "runtime/engine/registry.h"

/* Progress goes out at most this often: a board redraw per layer chunk
 * would cost more than the pull. */
#define TPUCI__PULL_PROGRESS_MS 250

struct tpuci__puller_s {
  tpuci__engine_t *e;
  char *ref;
  tpuci__regconf_t conf;
  tpuci__regauth_t auth;
  tpuci__credhelper_t *helper;
  tpuci__http_req_t *req;
  tpuci__pull_state_t state;
  uint64_t started, last;
  int cancelled;
  tpuci__pull_progress_cb progress;
  tpuci__pull_cb cb;
  void *data;
};

/* The progress stream. */

static tpuci__pull_layer_t *tpuci__layer(tpuci__pull_state_t *st, const char *id) {
  size_t i;
  for (i = 0; i < st->n; i++)
    if (strcmp(st->layers[i].id, id) == 0) return &st->layers[i];
  if (st->n == st->cap) {
    st->cap = st->cap ? st->cap * 2 : 8;
    st->layers = tpuci__realloc(st->layers, st->cap * sizeof(*st->layers));
  }
  memset(&st->layers[st->n], 0, sizeof(st->layers[0]));
  st->layers[st->n].id = tpuci__strdup(id);
  return &st->layers[st->n++];
}

int tpuci__pull_state_line(tpuci__pull_state_t *st, json_t *line) {
  const char *status = json_string_value(json_object_get(line, "status"));
  const char *id = json_string_value(json_object_get(line, "id"));
  json_t *detail = json_object_get(line, "progressDetail");
  tpuci__pull_layer_t *l;
  if (status == NULL || id == NULL) return 0;
  /* {"status": "Pulling from library/python", "id": "3.11"}: the tag,
   * not a layer. */
  if (strncmp(status, "Pulling from", 12) == 0) return 0;
  l = tpuci__layer(st, id);
  if (strcmp(status, "Downloading") == 0) {
    json_int_t cur = json_integer_value(json_object_get(detail, "current"));
    json_int_t tot = json_integer_value(json_object_get(detail, "total"));
    if (cur >= 0) l->current = (uint64_t) cur;
    if (tot > 0) l->total = (uint64_t) tot;
    return 1;
  }
  /* Downloaded, or there already: its bytes count as all in. Extracting
   * reports bytes too, but of the same layer again. */
  if (strcmp(status, "Download complete") == 0 || strcmp(status, "Pull complete") == 0 ||
      strcmp(status, "Already exists") == 0) {
    if (!l->done) {
      l->done = 1;
      l->current = l->total;
      return 1;
    }
  }
  return 0;
}

void tpuci__pull_state_sum(const tpuci__pull_state_t *st, uint64_t *current, uint64_t *total,
                           int *layers) {
  size_t i;
  *current = *total = 0;
  for (i = 0; i < st->n; i++) {
    *current += st->layers[i].current;
    *total += st->layers[i].total;
  }
  *layers = (int) st->n;
}

void tpuci__pull_state_free(tpuci__pull_state_t *st) {
  size_t i;
  for (i = 0; i < st->n; i++) free(st->layers[i].id);
  free(st->layers);
  memset(st, 0, sizeof(*st));
}

static int tpuci__has(const char *s, const char *word) {
  size_t n = strlen(word);
  for (; *s; s++) {
    size_t i;
    for (i = 0; i < n; i++) {
      char c = s[i];
      if (c >= 'A' && c <= 'Z') c = (char) (c - 'A' + 'a');
      if (c != word[i]) break;
    }
    if (i == n) return 1;
  }
  return 0;
}

int tpuci__pull_denied(long status, const char *message) {
  if (status == 401 || status == 403) return 1;
  if (message == NULL) return 0;
  return tpuci__has(message, "unauthorized") || tpuci__has(message, "denied") ||
         tpuci__has(message, "authentication required") ||
         tpuci__has(message, "no basic auth credentials");
}

/* The pull. */

static void tpuci__pull_tell(tpuci__puller_t *p, tpuci__pull_phase_t phase) {
  tpuci__pull_progress_t pr;
  uint64_t now = uv_now(p->e->loop);
  if (p->progress == NULL) return;
  if (phase == TPUCI__PULL_PROGRESS && now - p->last < TPUCI__PULL_PROGRESS_MS) return;
  p->last = now;
  memset(&pr, 0, sizeof(pr));
  pr.ref = p->ref;
  pr.phase = phase;
  pr.elapsed_ms = now - p->started;
  tpuci__pull_state_sum(&p->state, &pr.current, &pr.total, &pr.layers);
  p->progress(p->data, &pr);
}

static void tpuci__pull_free(tpuci__puller_t *p) {
  tpuci__regconf_free(&p->conf);
  tpuci__regauth_free(&p->auth);
  tpuci__pull_state_free(&p->state);
  free(p->ref);
  free(p);
}

/* Ends the pull: progress DONE or FAILED, then cb. */
static void tpuci__pull_end(tpuci__puller_t *p, tpuci__pull_res_t *res) {
  res->cancelled = p->cancelled;
  res->auth = p->auth.header;
  if (res->message == NULL) res->message = "";
  tpuci__pull_tell(p, res->ok ? TPUCI__PULL_DONE : TPUCI__PULL_FAILED);
  p->cb(p->data, res);
  tpuci__pull_free(p);
}

static void tpuci__pull_fail(tpuci__puller_t *p, const char *msg) {
  tpuci__pull_res_t res;
  memset(&res, 0, sizeof(res));
  res.message = msg;
  tpuci__pull_end(p, &res);
}

static void tpuci__pull_on_line(void *data, json_t *line) {
  tpuci__puller_t *p = data;
  if (tpuci__pull_state_line(&p->state, line)) tpuci__pull_tell(p, TPUCI__PULL_PROGRESS);
}

static void tpuci__pull_on_done(void *data, const tpuci__engine_res_t *er) {
  tpuci__puller_t *p = data;
  tpuci__pull_res_t res;
  char *msg = NULL;
  p->req = NULL;
  memset(&res, 0, sizeof(res));
  res.ok = er->ok;
  res.engine_error = er->error;
  res.message = er->message;
  if (!er->ok && er->error == 0 && tpuci__pull_denied(er->status, er->message)) {
    char *how = tpuci__regauth_describe(&p->auth, &p->conf);
    res.denied = 1;
    msg = tpuci__printf("registry %s refused access (%s; the engine said: %s)", p->auth.host, how,
                        er->message);
    free(how);
    res.message = msg;
  }
  tpuci__pull_end(p, &res);
  free(msg);
}

static void tpuci__pull_engine(tpuci__puller_t *p) {
  tpuci__engine_pull_t req = {
      .ref = p->ref, .auth = p->auth.header, .line = tpuci__pull_on_line, .line_data = p};
  p->req = tpuci__engine_image_pull(p->e, &req, tpuci__pull_on_done, p);
}

static void tpuci__pull_on_helper(void *data, int status, const char *out, size_t len,
                                  const char *why) {
  tpuci__puller_t *p = data;
  tpuci__err_t err = {0, NULL};
  p->helper = NULL;
  if (p->cancelled) {
    tpuci__pull_fail(p, "cancelled");
    return;
  }
  if (status < 0 || (status == 0 && tpuci__regauth_from_helper(&p->auth, out, len, &err) != 0)) {
    char *m = tpuci__printf("cannot get the credentials for registry %s: %s", p->auth.host,
                            status < 0 ? why : err.msg);
    tpuci__err_clear(&err);
    tpuci__pull_fail(p, m);
    free(m);
    return;
  }
  /* TPUCI__CREDHELPER_NONE: the helper has nothing for it; anonymous. */
  tpuci__pull_engine(p);
}

tpuci__puller_t *tpuci__pull_start(tpuci__engine_t *e, const char *ref,
                                   tpuci__pull_progress_cb progress, tpuci__pull_cb cb, void *data,
                                   tpuci__err_t *err) {
  tpuci__puller_t *p = tpuci__calloc(1, sizeof(*p));
  p->e = e;
  p->ref = tpuci__strdup(ref);
  p->progress = progress;
  p->cb = cb;
  p->data = data;
  if (tpuci__regconf_load(&p->conf, err) != 0 ||
      tpuci__regauth_pick(&p->conf, ref, &p->auth, err) != 0) {
    tpuci__pull_free(p);
    return NULL;
  }
  p->started = p->last = uv_now(e->loop);
  tpuci__pull_tell(p, TPUCI__PULL_STARTED);
  if (p->auth.helper != NULL)
    p->helper = tpuci__credhelper_get(e->loop, p->auth.helper, p->auth.server,
                                      TPUCI__CREDHELPER_TIMEOUT_MS, tpuci__pull_on_helper, p);
  else tpuci__pull_engine(p);
  return p;
}

void tpuci__pull_cancel(tpuci__puller_t *p) {
  p->cancelled = 1;
  if (p->helper != NULL) tpuci__credhelper_cancel(p->helper);
  else if (p->req != NULL) tpuci__engine_cancel(p->e, p->req);
}
