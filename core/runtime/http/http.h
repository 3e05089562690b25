/* HTTP requests to a server (target.h: a unix socket, TCP, TLS or an ssh
 * tunnel; the Docker Engine's, for runtime/engine/) on a libuv loop,
 * through libcurl's
 * multi-socket interface: curl tells us which sockets to watch
 * (CURLMOPT_SOCKETFUNCTION -> one uv_poll_t per socket) and when to wake
 * it (CURLMOPT_TIMERFUNCTION -> one uv_timer_t); we tell curl what
 * happened with curl_multi_socket_action().
 *
 * A request always completes through its done callback, exactly once,
 * from the loop (never from inside tpuci__http_request()), so callers can
 * keep one code path for success and failure. New requests may be issued
 * from any callback, including a streaming chunk callback. */
#ifndef TPUCI_HTTP_HTTP_H
#define TPUCI_HTTP_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "runtime/http/target.h"
#include "base/util.h"

typedef struct tpuci__http_s tpuci__http_t;
typedef struct tpuci__http_req_s tpuci__http_req_t;

typedef struct {
  /* 0 when an HTTP answer came (whatever its status), else a negative
   * code: UV_ECONNREFUSED, UV_ENOENT (no socket), UV_ETIMEDOUT,
   * UV_EPROTO (the TLS handshake failed: CA, certificate, key),
   * UV_EHOSTUNREACH (an ssh tunnel's ssh failed: error_msg is what it
   * said, hint what to do), UV_ECANCELED (the client closed), UV_EIO
   * (anything else). */
  int error;
  const char *error_msg; /* "connection refused", or "" */
  const char *hint;      /* what to do about `error`, or NULL */
  long status;           /* the HTTP status, 0 without an answer */
  /* The body, NUL-terminated. For a streamed request with a 2xx status
   * it is empty: the chunks went to the chunk callback. */
  const char *body;
  size_t len;
} tpuci__http_res_t;

/* A piece of a streamed 2xx response body. */
typedef void (*tpuci__http_chunk_cb)(void *data, const char *buf, size_t len);
typedef void (*tpuci__http_done_cb)(void *data, const tpuci__http_res_t *res);
/* The answer's headers are all in, with a 2xx `status`: for a stream
 * that is attached from then on (the Docker Engine's attach endpoint). */
typedef void (*tpuci__http_head_cb)(void *data, long status);

/* Creates a client for `target` on `loop`. The target is copied (its
 * static strings shared). 0, or TPUCI_EENGINE with err filled (an ssh
 * tunnel's dialer could not start: sshdial.h). */
int tpuci__http_new(uv_loop_t *loop, const tpuci__http_target_t *target, tpuci__http_t **out,
                    tpuci__err_t *err);

/* Starts a request. `path` is the whole path with the query ("/v1.41/
 * containers/json?all=1"); `body` (may be NULL) is sent as
 * application/json. `timeout_ms` caps the whole request (0: none; the
 * connection attempt is always capped at 10 s). `chunk` (may be NULL)
 * receives a 2xx body as it arrives. Returns the request, which stays
 * valid until its done callback has returned: for the setters below and
 * tpuci__http_cancel(). */
tpuci__http_req_t *tpuci__http_request(tpuci__http_t *h, const char *method, const char *path,
                                       const char *body, size_t len, uint64_t timeout_ms,
                                       tpuci__http_chunk_cb chunk, tpuci__http_done_cb done,
                                       void *data);

/* The `data` the request was made with. */
void *tpuci__http_req_data(const tpuci__http_req_t *r);

/* Before the loop runs again after tpuci__http_request(): `head` is
 * called once the answer's headers are in, if its status is 2xx. */
void tpuci__http_set_head(tpuci__http_req_t *r, tpuci__http_head_cb head);
/* Before the loop runs again after tpuci__http_request(): the request
 * goes over a connection of its own, opened for it and closed after it,
 * so that it finds out whether the server accepts connections now. */
void tpuci__http_set_fresh(tpuci__http_req_t *r);

/* Before the loop runs again after tpuci__http_request(): one more
 * request header, "Name: value" (copied). The copy is wiped when the
 * request is freed: headers may carry credentials (X-Registry-Auth). */
void tpuci__http_set_header(tpuci__http_req_t *r, const char *line);

/* Before the loop runs again after tpuci__http_request(): the body is
 * sent as `type` ("application/x-tar"), not as JSON. */
void tpuci__http_set_body_type(tpuci__http_req_t *r, const char *type);

/* Completes a pending request with UV_ECANCELED, from the loop (never
 * from inside this call); the server sees its connection close. A
 * request whose done callback already ran must not be passed. */
void tpuci__http_cancel(tpuci__http_t *h, tpuci__http_req_t *r);

/* Requests not yet completed. */
size_t tpuci__http_pending(const tpuci__http_t *h);

/* Completes the pending requests with UV_ECANCELED, releases curl and
 * closes every handle; cb(data) runs once all are closed, after which
 * the client is freed. */
void tpuci__http_close(tpuci__http_t *h, void (*cb)(void *data), void *data);

/* Percent-encodes everything but unreserved characters (and '/' and ':'
 * when keep_path is set: for image names inside a path). */
char *tpuci__http_escape(const char *s, int keep_path);

#endif /* TPUCI_HTTP_HTTP_H */
