/* Docker Engine API calls. */
#include "runtime/engine/engine.h"
#include "runtime/engine/endpoint.h"
#include "runtime/engine/podman.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  tpuci__engine_t *e;
  tpuci__engine_cb cb;
  void *data;
  tpuci__http_chunk_cb chunk;
  void *chunk_data;
  void (*head)(void *data);
  /* Image pulls: the progress stream, split into lines. */
  int pull;
  tpuci__buf_t line;
  char *pull_error;
  tpuci__engine_line_cb pull_line;
  void *pull_line_data;
} tpuci__call_t;

int tpuci__engine_new_host(uv_loop_t *loop, const tpuci__docker_host_t *host, tpuci__engine_t **out,
                           tpuci__err_t *err) {
  tpuci__engine_t *e = tpuci__calloc(1, sizeof(*e));
  tpuci__http_target_t target;
  int rc;
  e->loop = loop;
  e->server_name = "Docker Engine";
  tpuci__docker_host_copy(&e->host, host);
  snprintf(e->prefix, sizeof(e->prefix), "/v%d.%d", TPUCI__DOCKER_API_MIN_MAJOR,
           TPUCI__DOCKER_API_MIN_MINOR);
  tpuci__docker_host_target(host, &target);
  rc = tpuci__http_new(loop, &target, &e->http, err);
  if (rc != 0) {
    tpuci__docker_host_free(&e->host);
    free(e);
    return rc;
  }
  *out = e;
  return 0;
}

int tpuci__engine_new(uv_loop_t *loop, tpuci__engine_t **out, tpuci__err_t *err) {
  /* DOCKER_HOST, a Docker context or the default socket (endpoint.h). */
  tpuci__docker_host_t host;
  int rc = tpuci__docker_host_from_env(&host, err);
  if (rc != 0) return TPUCI_EENGINE;
  rc = tpuci__engine_new_host(loop, &host, out, err);
  tpuci__docker_host_free(&host);
  return rc;
}

typedef struct {
  tpuci__engine_t *e;
  void (*cb)(void *);
  void *data;
} tpuci__engine_closing_t;

static void tpuci__engine_http_closed(void *p) {
  tpuci__engine_closing_t *c = p;
  void (*cb)(void *) = c->cb;
  void *data = c->data;
  tpuci__docker_host_free(&c->e->host);
  free(c->e->server_version);
  free(c->e->server_api);
  free(c->e);
  free(c);
  if (cb) cb(data);
}

void tpuci__engine_close(tpuci__engine_t *e, void (*cb)(void *data), void *data) {
  tpuci__engine_closing_t *c = tpuci__malloc(sizeof(*c));
  c->e = e;
  c->cb = cb;
  c->data = data;
  e->closing = 1;
  tpuci__http_close(e->http, tpuci__engine_http_closed, c);
}

size_t tpuci__engine_pending(const tpuci__engine_t *e) { return tpuci__http_pending(e->http); }

char *tpuci__engine_where(const tpuci__engine_t *e) {
  return tpuci__docker_host_describe(&e->host);
}

const char *tpuci__engine_reach_hint(int error, const char *hint) {
  if (hint != NULL) return hint;
  if (error == UV_EPROTO)
    return "the TLS handshake failed: check that ca.pem is the CA of the "
           "engine's certificate and cert.pem/key.pem a client certificate "
           "of the engine's --tlscacert (in DOCKER_CERT_PATH, or the Docker "
           "context's TLS folder)";
  return "start dockerd, e.g. `dockerd &` (or podman's: `podman system "
         "service --time=0 &`), or set DOCKER_HOST";
}

/* API versions. */

static int tpuci__parse_api(const char *s, int *major, int *minor) {
  char *end;
  long a, b;
  if (s == NULL) return -1;
  a = strtol(s, &end, 10);
  if (end == s || *end != '.') return -1;
  s = end + 1;
  b = strtol(s, &end, 10);
  if (end == s || *end != '\0' || a < 0 || b < 0 || a > 1000 || b > 1000) return -1;
  *major = (int) a;
  *minor = (int) b;
  return 0;
}

int tpuci__docker_api_pick(const char *server_api, int *major, int *minor, tpuci__err_t *err) {
  int a, b;
  if (tpuci__parse_api(server_api, &a, &b) != 0)
    return tpuci__err_set(err, TPUCI_EENGINE,
                          "the engine reports an unreadable API version "
                          "'%s'",
                          server_api ? server_api : "(none)");
  if (a < TPUCI__DOCKER_API_MIN_MAJOR ||
      (a == TPUCI__DOCKER_API_MIN_MAJOR && b < TPUCI__DOCKER_API_MIN_MINOR))
    return tpuci__err_set(err, TPUCI_EENGINE,
                          "the engine speaks API %d.%d; tpuci needs %d.%d "
                          "(Docker 20.10) or newer",
                          a, b, TPUCI__DOCKER_API_MIN_MAJOR, TPUCI__DOCKER_API_MIN_MINOR);
  if (a > TPUCI__DOCKER_API_MAX_MAJOR ||
      (a == TPUCI__DOCKER_API_MAX_MAJOR && b > TPUCI__DOCKER_API_MAX_MINOR)) {
    a = TPUCI__DOCKER_API_MAX_MAJOR;
    b = TPUCI__DOCKER_API_MAX_MINOR;
  }
  *major = a;
  *minor = b;
  return 0;
}

int tpuci__engine_negotiate(tpuci__engine_t *e, json_t *version, tpuci__err_t *err) {
  const char *api = json_string_value(json_object_get(version, "ApiVersion"));
  const char *ver = json_string_value(json_object_get(version, "Version"));
  int a, b, rc, minor;
  rc = tpuci__docker_api_pick(api, &a, &b, err);
  if (rc != 0) return rc;
  snprintf(e->prefix, sizeof(e->prefix), "/v%d.%d", a, b);
  e->podman = tpuci__podman_detect(version, &e->podman_major, &minor);
  e->server_name = e->podman ? "Podman Engine" : "Docker Engine";
  free(e->server_version);
  free(e->server_api);
  e->server_version = tpuci__strdup(ver ? ver : "unknown");
  e->server_api = tpuci__strdup(api);
  return 0;
}

/* Calls. */

char *tpuci__engine_message_line(const char *msg) {
  size_t n = strcspn(msg, "\r\n");
  return tpuci__strndup(msg, n);
}

static void tpuci__call_chunk(void *p, const char *buf, size_t len) {
  tpuci__call_t *c = p;
  if (!c->pull) {
    c->chunk(c->chunk_data, buf, len);
    return;
  }
  /* Progress lines: {"status": ...} or {"error": ..., "errorDetail": ...}. */
  tpuci__buf_add(&c->line, buf, len);
  for (;;) {
    char *nl = c->line.data ? memchr(c->line.data, '\n', c->line.len) : NULL;
    size_t n;
    json_t *j;
    if (nl == NULL) break;
    n = (size_t) (nl - c->line.data);
    j = json_loadb(c->line.data, n, 0, NULL);
    if (j != NULL) {
      const char *m = json_string_value(json_object_get(j, "error"));
      if (m != NULL && c->pull_error == NULL) c->pull_error = tpuci__strdup(m);
      if (c->pull_line != NULL) c->pull_line(c->pull_line_data, j);
      json_decref(j);
    }
    memmove(c->line.data, nl + 1, c->line.len - n - 1);
    c->line.len -= n + 1;
    c->line.data[c->line.len] = '\0';
  }
}

static void tpuci__call_head(void *p, long status) {
  tpuci__call_t *c = p;
  (void) status;
  c->head(c->data);
}

static void tpuci__call_done(void *p, const tpuci__http_res_t *hr) {
  tpuci__call_t *c = p;
  tpuci__engine_res_t res;
  char *msg = NULL;

  memset(&res, 0, sizeof(res));
  res.error = hr->error;
  res.hint = hr->hint;
  res.status = hr->status;
  res.body = hr->body;
  res.len = hr->len;
  res.message = "";
  if (hr->len > 0) res.json = json_loadb(hr->body, hr->len, 0, NULL);
  if (hr->error != 0) {
    char *where = tpuci__engine_where(c->e);
    msg = tpuci__printf("%s: %s", where, hr->error_msg);
    free(where);
  } else if (hr->status < 200 || hr->status >= 300) {
    const char *m = json_string_value(json_object_get(res.json, "message"));
    if (m != NULL) msg = tpuci__engine_message_line(m);
    else if (hr->len > 0) msg = tpuci__engine_message_line(hr->body);
    /* A failure always says something: callers put it in causes. */
    if (msg == NULL || msg[0] == '\0') {
      free(msg);
      msg = tpuci__printf("HTTP status %ld", hr->status);
    }
  } else if (c->pull && c->pull_error != NULL) {
    msg = tpuci__engine_message_line(c->pull_error);
  } else {
    res.ok = 1;
  }
  if (msg != NULL) res.message = msg;
  c->cb(c->data, &res);
  json_decref(res.json);
  free(msg);
  tpuci__buf_free(&c->line);
  free(c->pull_error);
  free(c);
}

static tpuci__http_req_t *tpuci__engine_call_x(tpuci__engine_t *e, const tpuci__engine_req_t *r,
                                               int pull, tpuci__engine_cb cb, void *data) {
  tpuci__http_req_t *req;
  tpuci__call_t *c = tpuci__calloc(1, sizeof(*c));
  char *id = r->id != NULL ? tpuci__http_escape(r->id, 0) : NULL;
  char *path = tpuci__printf("%s%s%s%s", r->raw_path ? "" : e->prefix, r->path, id ? id : "",
                             id && r->tail ? r->tail : "");
  char *text = r->body != NULL ? json_dumps(r->body, JSON_COMPACT) : NULL;
  c->e = e;
  c->cb = cb;
  c->data = data;
  c->chunk = r->chunk;
  c->chunk_data = r->chunk_data;
  c->pull = pull;
  tpuci__buf_init(&c->line);
  req = tpuci__http_request(e->http, r->method, path, text, text ? strlen(text) : 0, r->timeout_ms,
                            r->chunk || pull ? tpuci__call_chunk : NULL, tpuci__call_done, c);
  free(text);
  free(path);
  free(id);
  return req;
}

tpuci__http_req_t *tpuci__engine_call(tpuci__engine_t *e, const tpuci__engine_req_t *r,
                                      tpuci__engine_cb cb, void *data) {
  return tpuci__engine_call_x(e, r, 0, cb, data);
}

/* Short calls are capped so that a hung engine cannot hang a run; the
 * long ones (wait, logs, pull) are bounded by the job's own timeout. */
#define TPUCI__SHORT_MS 120000

tpuci__http_req_t *tpuci__engine_version(tpuci__engine_t *e, tpuci__engine_cb cb, void *data) {
  tpuci__engine_req_t r = {.method = "GET", .path = "/version", .raw_path = 1, .timeout_ms = 30000};
  return tpuci__engine_call(e, &r, cb, data);
}

tpuci__http_req_t *tpuci__engine_info(tpuci__engine_t *e, tpuci__engine_cb cb, void *data) {
  tpuci__engine_req_t r = {.method = "GET", .path = "/info", .timeout_ms = TPUCI__SHORT_MS};
  return tpuci__engine_call(e, &r, cb, data);
}

tpuci__http_req_t *tpuci__engine_image_inspect(tpuci__engine_t *e, const char *ref,
                                               tpuci__engine_cb cb, void *data) {
  tpuci__http_req_t *req;
  char *escaped = tpuci__http_escape(ref, 1);
  char *path = tpuci__printf("/images/%s/json", escaped);
  tpuci__engine_req_t r = {.method = "GET", .path = path, .timeout_ms = TPUCI__SHORT_MS};
  req = tpuci__engine_call(e, &r, cb, data);
  free(path);
  free(escaped);
  return req;
}

tpuci__http_req_t *tpuci__engine_image_pull(tpuci__engine_t *e, const tpuci__engine_pull_t *p,
                                            tpuci__engine_cb cb, void *data) {
  tpuci__http_req_t *req;
  tpuci__call_t *c;
  char *ref = tpuci__http_escape(p->ref, 0);
  /* fromImage without a tag would pull every tag. */
  const char *slash = strrchr(p->ref, '/');
  const char *last = slash ? slash + 1 : p->ref;
  int untagged = strchr(last, ':') == NULL && strchr(p->ref, '@') == NULL;
  char *path = tpuci__printf("/images/create?fromImage=%s%s", ref, untagged ? "&tag=latest" : "");
  tpuci__engine_req_t r = {.method = "POST", .path = path};
  req = tpuci__engine_call_x(e, &r, 1, cb, data);
  c = tpuci__http_req_data(req);
  c->pull_line = p->line;
  c->pull_line_data = p->line_data;
  if (p->auth != NULL) {
    char *h = tpuci__printf("X-Registry-Auth: %s", p->auth);
    tpuci__http_set_header(req, h);
    tpuci__wipe_free(h);
  }
  free(path);
  free(ref);
  return req;
}

tpuci__http_req_t *tpuci__engine_image_build(tpuci__engine_t *e, const tpuci__engine_build_t *b,
                                             tpuci__engine_cb cb, void *data) {
  tpuci__http_req_t *req;
  tpuci__call_t *c = tpuci__calloc(1, sizeof(*c));
  char *full = tpuci__printf("%s/build?%s", e->prefix, b->query);
  c->e = e;
  c->cb = cb;
  c->data = data;
  c->pull = 1;
  c->pull_line = b->line;
  c->pull_line_data = b->line_data;
  tpuci__buf_init(&c->line);
  req = tpuci__http_request(e->http, "POST", full, b->tar, b->len, 0, tpuci__call_chunk,
                            tpuci__call_done, c);
  tpuci__http_set_body_type(req, "application/x-tar");
  free(full);
  return req;
}

tpuci__http_req_t *tpuci__engine_container_create(tpuci__engine_t *e, const char *name,
                                                  json_t *body, tpuci__engine_cb cb, void *data) {
  tpuci__engine_req_t r = {.method = "POST",
                           .path = "/containers/create?name=",
                           .id = name,
                           .body = body,
                           .timeout_ms = TPUCI__SHORT_MS};
  return tpuci__engine_call(e, &r, cb, data);
}

tpuci__http_req_t *tpuci__engine_container_start(tpuci__engine_t *e, const char *id,
                                                 tpuci__engine_cb cb, void *data) {
  tpuci__engine_req_t r = {.method = "POST",
                           .path = "/containers/",
                           .id = id,
                           .tail = "/start",
                           .timeout_ms = TPUCI__SHORT_MS};
  return tpuci__engine_call(e, &r, cb, data);
}

tpuci__http_req_t *tpuci__engine_container_wait(tpuci__engine_t *e, const char *id,
                                                tpuci__engine_cb cb, void *data) {
  tpuci__engine_req_t r = {
      .method = "POST", .path = "/containers/", .id = id, .tail = "/wait?condition=not-running"};
  return tpuci__engine_call(e, &r, cb, data);
}

tpuci__http_req_t *tpuci__engine_container_attach(tpuci__engine_t *e, const char *id,
                                                  const tpuci__engine_attach_t *a,
                                                  tpuci__engine_cb cb, void *data) {
  tpuci__engine_req_t r = {.method = "POST",
                           .path = "/containers/",
                           .id = id,
                           .tail = "/attach?stream=1&stdout=1&stderr=1",
                           .chunk = a->chunk,
                           .chunk_data = a->chunk_data};
  tpuci__http_req_t *req = tpuci__engine_call(e, &r, cb, data);
  tpuci__call_t *c = tpuci__http_req_data(req);
  c->head = a->attached;
  tpuci__http_set_head(req, tpuci__call_head);
  return req;
}

tpuci__http_req_t *tpuci__engine_container_logs(tpuci__engine_t *e, const char *id,
                                                tpuci__http_chunk_cb chunk, void *chunk_data,
                                                tpuci__engine_cb cb, void *data) {
  tpuci__engine_req_t r = {.method = "GET",
                           .path = "/containers/",
                           .id = id,
                           .tail = "/logs?stdout=1&stderr=1",
                           .timeout_ms = TPUCI__SHORT_MS,
                           .chunk = chunk,
                           .chunk_data = chunk_data};
  return tpuci__engine_call(e, &r, cb, data);
}

tpuci__http_req_t *tpuci__engine_container_stats(tpuci__engine_t *e, const char *id,
                                                 tpuci__http_chunk_cb chunk, void *chunk_data,
                                                 tpuci__engine_cb cb, void *data) {
  tpuci__engine_req_t r = {.method = "GET",
                           .path = "/containers/",
                           .id = id,
                           .tail = "/stats?stream=1",
                           .chunk = chunk,
                           .chunk_data = chunk_data};
  return tpuci__engine_call(e, &r, cb, data);
}

void tpuci__engine_cancel(tpuci__engine_t *e, tpuci__http_req_t *r) {
  tpuci__http_cancel(e->http, r);
}

tpuci__http_req_t *tpuci__engine_container_kill(tpuci__engine_t *e, const char *id,
                                                const char *signame, tpuci__engine_cb cb,
                                                void *data) {
  tpuci__http_req_t *req;
  char *tail = tpuci__printf("/kill?signal=%s", signame);
  tpuci__engine_req_t r = {.method = "POST",
                           .path = "/containers/",
                           .id = id,
                           .tail = tail,
                           .timeout_ms = TPUCI__SHORT_MS};
  req = tpuci__engine_call(e, &r, cb, data);
  free(tail);
  return req;
}

tpuci__http_req_t *tpuci__engine_container_inspect(tpuci__engine_t *e, const char *id,
                                                   tpuci__engine_cb cb, void *data) {
  tpuci__engine_req_t r = {.method = "GET",
                           .path = "/containers/",
                           .id = id,
                           .tail = "/json",
                           .timeout_ms = TPUCI__SHORT_MS};
  return tpuci__engine_call(e, &r, cb, data);
}

tpuci__http_req_t *tpuci__engine_container_remove(tpuci__engine_t *e, const char *id,
                                                  tpuci__engine_cb cb, void *data) {
  tpuci__engine_req_t r = {.method = "DELETE",
                           .path = "/containers/",
                           .id = id,
                           .tail = "?force=1&v=1",
                           .timeout_ms = TPUCI__SHORT_MS};
  return tpuci__engine_call(e, &r, cb, data);
}

tpuci__http_req_t *tpuci__engine_list(tpuci__engine_t *e, const char *path,
                                      const tpuci__engine_filter_t *filter, uint64_t timeout_ms,
                                      tpuci__engine_cb cb, void *data) {
  json_t *f = json_object(), *a = json_array();
  tpuci__http_req_t *req;
  tpuci__engine_req_t r = {.method = "GET", .timeout_ms = timeout_ms};
  char *text, *q, *full;
  size_t i;
  for (i = 0; i < filter->n; i++) json_array_append_new(a, json_string(filter->values[i]));
  json_object_set_new(f, filter->key, a);
  text = json_dumps(f, JSON_COMPACT);
  q = tpuci__http_escape(text, 0);
  full = tpuci__printf("%s%cfilters=%s", path, strchr(path, '?') ? '&' : '?', q);
  r.path = full;
  req = tpuci__engine_call(e, &r, cb, data);
  free(full);
  free(q);
  free(text);
  json_decref(f);
  return req;
}

tpuci__http_req_t *tpuci__engine_container_list(tpuci__engine_t *e, const char *label,
                                                tpuci__engine_cb cb, void *data) {
  tpuci__engine_filter_t f = {.key = "label", .values = &label, .n = 1};
  return tpuci__engine_list(e, "/containers/json?all=1", &f, TPUCI__SHORT_MS, cb, data);
}

tpuci__http_req_t *tpuci__engine_network_create(tpuci__engine_t *e, json_t *body,
                                                tpuci__engine_cb cb, void *data) {
  tpuci__engine_req_t r = {
      .method = "POST", .path = "/networks/create", .body = body, .timeout_ms = TPUCI__SHORT_MS};
  return tpuci__engine_call(e, &r, cb, data);
}

tpuci__http_req_t *tpuci__engine_network_remove(tpuci__engine_t *e, const char *id,
                                                tpuci__engine_cb cb, void *data) {
  tpuci__engine_req_t r = {
      .method = "DELETE", .path = "/networks/", .id = id, .timeout_ms = TPUCI__SHORT_MS};
  return tpuci__engine_call(e, &r, cb, data);
}

tpuci__http_req_t *tpuci__engine_network_list(tpuci__engine_t *e, const char *label,
                                              tpuci__engine_cb cb, void *data) {
  tpuci__engine_filter_t f = {.key = "label", .values = &label, .n = 1};
  return tpuci__engine_list(e, "/networks", &f, TPUCI__SHORT_MS, cb, data);
}

const char *tpuci__docker_signame(int signum, char *buf, size_t size) {
  switch (signum) {
    case SIGTERM: return "SIGTERM";
    case SIGKILL: return "SIGKILL";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: snprintf(buf, size, "%d", signum); return buf;
  }
}
