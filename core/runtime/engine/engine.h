/* The Docker Engine API, on top of runtime/http/http.h: one call per endpoint tpuci
 * uses, JSON in and out through Jansson. Paths get the negotiated API
 * version prefix ("/v1.41"). Every call completes through its callback,
 * exactly once, from the loop. */
#ifndef TPUCI_ENGINE_ENGINE_H
#define TPUCI_ENGINE_ENGINE_H

#include <jansson.h>
#include <stdint.h>
#include <uv.h>

#include "runtime/engine/host.h"
#include "runtime/http/http.h"
#include "base/util.h"

/* The API versions tpuci speaks: it needs 1.41 (Docker 20.10) and uses
 * nothing newer than 1.43. */
#define TPUCI__DOCKER_API_MIN_MAJOR 1
#define TPUCI__DOCKER_API_MIN_MINOR 41
#define TPUCI__DOCKER_API_MAX_MAJOR 1
#define TPUCI__DOCKER_API_MAX_MINOR 43

typedef struct {
  uv_loop_t *loop;
  tpuci__http_t *http;
  tpuci__docker_host_t host;
  char prefix[24];      /* "/v1.41" */
  char *server_version; /* "20.10.24", after tpuci__engine_negotiate */
  char *server_api;     /* "1.41" */
  /* "Docker Engine", or "Podman Engine" for podman's compatible service
   * (podman.h); then podman_major is its major version (0: unknown). */
  const char *server_name;
  int podman;
  int podman_major;
  int closing;
} tpuci__engine_t;

typedef struct {
  int ok;       /* an answer with a 2xx status */
  int error;    /* 0 or the transport error (http.h) */
  long status;  /* HTTP status, 0 without an answer */
  json_t *json; /* the parsed body or NULL; borrowed */
  const char *body;
  size_t len;
  /* Never NULL: "" when ok; the engine's "message" for an HTTP error;
   * "<where>: connection refused" when the engine did not answer. */
  const char *message;
  /* What to do about `error` when the transport knows better than
   * tpuci__engine_reach_hint (an ssh:// engine's ssh failed), or NULL. */
  const char *hint;
} tpuci__engine_res_t;

typedef void (*tpuci__engine_cb)(void *data, const tpuci__engine_res_t *res);

/* Creates a client for DOCKER_HOST (or the default socket). */
int tpuci__engine_new(uv_loop_t *loop, tpuci__engine_t **out, tpuci__err_t *err);
int tpuci__engine_new_host(uv_loop_t *loop, const tpuci__docker_host_t *host, tpuci__engine_t **out,
                           tpuci__err_t *err);
/* Cancels pending calls (their callbacks get UV_ECANCELED), closes the
 * handles, frees the engine and then calls cb(data). */
void tpuci__engine_close(tpuci__engine_t *e, void (*cb)(void *data), void *data);
size_t tpuci__engine_pending(const tpuci__engine_t *e);

/* "DOCKER_HOST unset, tried unix:///var/run/docker.sock". New string. */
char *tpuci__engine_where(const tpuci__engine_t *e);

/* What to do when the engine did not answer with transport error
 * `error` (tpuci__engine_res_t): `hint` when not NULL (the answer's own),
 * else start it or set DOCKER_HOST, or, for a failed TLS handshake,
 * check the TLS files. A static string. */
const char *tpuci__engine_reach_hint(int error, const char *hint);

/* Picks the API version from the server's ApiVersion: min(server, 1.43),
 * failing with TPUCI_EENGINE below 1.41. Pure. */
int tpuci__docker_api_pick(const char *server_api, int *major, int *minor, tpuci__err_t *err);
/* Applies a GET /version answer: sets prefix, server_version and what
 * kind of engine it is (server_name, podman). */
int tpuci__engine_negotiate(tpuci__engine_t *e, json_t *version, tpuci__err_t *err);

/* An engine call. `path` goes after the version prefix unless
 * `raw_path` is set; with `id` set, the escaped id and then `tail`
 * follow it ("/containers/", id, "/start"). `body` is borrowed (may be
 * NULL); `timeout_ms` 0 is none; `chunk` (may be NULL) gets the
 * answer's body as it arrives. */
typedef struct {
  const char *method;
  const char *path;
  const char *id;
  const char *tail;
  int raw_path;
  json_t *body;
  uint64_t timeout_ms;
  tpuci__http_chunk_cb chunk;
  void *chunk_data;
} tpuci__engine_req_t;

/* The filters of a list: filters={key: values[0..n)}. */
typedef struct {
  const char *key;
  const char *const *values;
  size_t n;
} tpuci__engine_filter_t;

tpuci__http_req_t *tpuci__engine_call(tpuci__engine_t *e, const tpuci__engine_req_t *r,
                                      tpuci__engine_cb cb, void *data);
/* GET `path` (which may have a query already) with `filter`. */
tpuci__http_req_t *tpuci__engine_list(tpuci__engine_t *e, const char *path,
                                      const tpuci__engine_filter_t *filter, uint64_t timeout_ms,
                                      tpuci__engine_cb cb, void *data);

/* The endpoints. `id` is a container or network id or name. */
tpuci__http_req_t *tpuci__engine_version(tpuci__engine_t *e, tpuci__engine_cb cb, void *data);
tpuci__http_req_t *tpuci__engine_info(tpuci__engine_t *e, tpuci__engine_cb cb, void *data);
tpuci__http_req_t *tpuci__engine_image_inspect(tpuci__engine_t *e, const char *ref,
                                               tpuci__engine_cb cb, void *data);
/* One JSON line of a pull's progress stream (borrowed). */
typedef void (*tpuci__engine_line_cb)(void *data, json_t *line);

/* A pull: `ref`; `auth` (may be NULL) is the X-Registry-Auth value
 * (registry.h); `line` (may be NULL) gets each line of the progress
 * stream. */
typedef struct {
  const char *ref;
  const char *auth;
  tpuci__engine_line_cb line;
  void *line_data;
} tpuci__engine_pull_t;

/* POST /images/create?fromImage=ref. The engine answers 200 and then
 * reports failure inside the progress stream ({"error": ...}); that is
 * turned into ok = 0 with the message. */
tpuci__http_req_t *tpuci__engine_image_pull(tpuci__engine_t *e, const tpuci__engine_pull_t *p,
                                            tpuci__engine_cb cb, void *data);

/* A build: `query` (the /build query string) and `tar`, `len` (a build
 * context, buildctx.h; borrowed until cb); `line` gets each line the
 * engine streams. */
typedef struct {
  const char *query;
  const char *tar;
  size_t len;
  tpuci__engine_line_cb line;
  void *line_data;
} tpuci__engine_build_t;

/* POST /build?<query> with the tar as the body. The engine streams
 * {"stream"}, {"aux": {"ID"}} and {"error"} lines, each given to
 * `line`; an error line makes ok = 0 with its message. No timeout: a
 * build takes what its steps take. */
tpuci__http_req_t *tpuci__engine_image_build(tpuci__engine_t *e, const tpuci__engine_build_t *b,
                                             tpuci__engine_cb cb, void *data);
tpuci__http_req_t *tpuci__engine_container_create(tpuci__engine_t *e, const char *name,
                                                  json_t *body, tpuci__engine_cb cb, void *data);
tpuci__http_req_t *tpuci__engine_container_start(tpuci__engine_t *e, const char *id,
                                                 tpuci__engine_cb cb, void *data);
/* POST /containers/{id}/wait?condition=not-running: {"StatusCode": n}. */
tpuci__http_req_t *tpuci__engine_container_wait(tpuci__engine_t *e, const char *id,
                                                tpuci__engine_cb cb, void *data);
/* Where an attach's streams go: `attached(data)` (data: the call's)
 * once the engine has attached them; the multiplexed stream (demux.h)
 * to `chunk`. */
typedef struct {
  void (*attached)(void *data);
  tpuci__http_chunk_cb chunk;
  void *chunk_data;
} tpuci__engine_attach_t;

/* POST /containers/{id}/attach?stream=1&stdout=1&stderr=1, asked before
 * the container starts (as `docker run` does), so that its output
 * arrives whole: start the container once `attached` ran; cb when the
 * container's streams closed. */
tpuci__http_req_t *tpuci__engine_container_attach(tpuci__engine_t *e, const char *id,
                                                  const tpuci__engine_attach_t *a,
                                                  tpuci__engine_cb cb, void *data);
/* GET /containers/{id}/logs?stdout=1&stderr=1 (no follow): the output
 * recorded so far, multiplexed, to chunk; cb at its end. */
tpuci__http_req_t *tpuci__engine_container_logs(tpuci__engine_t *e, const char *id,
                                                tpuci__http_chunk_cb chunk, void *chunk_data,
                                                tpuci__engine_cb cb, void *data);
/* GET /containers/{id}/stats?stream=1: one JSON object per line to
 * chunk, about every second while the container runs (memstat.h reads
 * them). The stream does not end when the container does: cancel it. */
tpuci__http_req_t *tpuci__engine_container_stats(tpuci__engine_t *e, const char *id,
                                                 tpuci__http_chunk_cb chunk, void *chunk_data,
                                                 tpuci__engine_cb cb, void *data);
/* `signame` is "SIGTERM", "SIGKILL" or a number. */
tpuci__http_req_t *tpuci__engine_container_kill(tpuci__engine_t *e, const char *id,
                                                const char *signame, tpuci__engine_cb cb,
                                                void *data);
tpuci__http_req_t *tpuci__engine_container_inspect(tpuci__engine_t *e, const char *id,
                                                   tpuci__engine_cb cb, void *data);
/* DELETE /containers/{id}?force=1&v=1. */
tpuci__http_req_t *tpuci__engine_container_remove(tpuci__engine_t *e, const char *id,
                                                  tpuci__engine_cb cb, void *data);
/* GET /containers/json?all=1 filtered by a label ("tpuci.run" or
 * "tpuci.run=ID"). */
tpuci__http_req_t *tpuci__engine_container_list(tpuci__engine_t *e, const char *label,
                                                tpuci__engine_cb cb, void *data);
/* POST /networks/create with `body` (borrowed; tpuci__net_create_body).
 * The answer holds the network's Id. */
tpuci__http_req_t *tpuci__engine_network_create(tpuci__engine_t *e, json_t *body,
                                                tpuci__engine_cb cb, void *data);
/* DELETE /networks/{id}. */
tpuci__http_req_t *tpuci__engine_network_remove(tpuci__engine_t *e, const char *id,
                                                tpuci__engine_cb cb, void *data);
tpuci__http_req_t *tpuci__engine_network_list(tpuci__engine_t *e, const char *label,
                                              tpuci__engine_cb cb, void *data);

/* Cancels a call returned by one of the above whose callback has not
 * run yet: it completes with UV_ECANCELED (http.h). */
void tpuci__engine_cancel(tpuci__engine_t *e, tpuci__http_req_t *r);

/* The signal's name for the kill endpoint. */
const char *tpuci__docker_signame(int signum, char *buf, size_t size);

/* The first line of an engine message, without a trailing newline. */
char *tpuci__engine_message_line(const char *msg);

#endif /* TPUCI_ENGINE_ENGINE_H */
