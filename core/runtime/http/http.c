/* HTTP to a server: libcurl's multi-socket interface on a libuv loop.
 *
 * Every request is first queued and handed to curl from a zero timer
 * ("kick"), so tpuci__http_request() may be called from anywhere, even
 * from inside a curl write callback, where curl forbids re-entering the
 * multi handle. Closing goes through the same timer for the same reason.
 */
#include "runtime/http/http.h"
#include "runtime/http/sshdial.h"
#include "runtime/sshcmd.h"

#include <curl/curl.h>
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

typedef struct tpuci__http_sock_s tpuci__http_sock_t;

struct tpuci__http_req_s {
  tpuci__http_t *h;
  CURL *easy;
  struct curl_slist *headers;
  char *url;
  char *body;
  size_t body_len;
  tpuci__buf_t resp;
  long status; /* cached once known, for the write callback */
  tpuci__http_chunk_cb chunk;
  tpuci__http_head_cb head;
  tpuci__http_done_cb done;
  void *data;
  int headed;    /* head called */
  int cancelled; /* tpuci__http_cancel(): complete at the kick */
  /* Through ssh: the connection it went over (a reference), or the
   * error starting its ssh; a failed request waits for that ssh's last
   * word (in h->waiting) with its curl code. */
  tpuci__sshconn_t *conn;
  int spawn_error;
  CURLcode rc;
  char errbuf[CURL_ERROR_SIZE];
  tpuci__http_req_t *prev, *next;
};

struct tpuci__http_sock_s {
  uv_poll_t poll;
  curl_socket_t fd;
  tpuci__http_t *h;
  tpuci__http_sock_t *prev, *next;
};

struct tpuci__http_s {
  uv_loop_t *loop;
  CURLM *multi;
  uv_timer_t timer; /* curl's timeout */
  uv_timer_t kick;  /* queued requests, close */
  tpuci__http_target_t host;
  tpuci__http_req_t *queued;  /* not handed to curl yet */
  tpuci__http_req_t *active;  /* in curl */
  tpuci__http_req_t *waiting; /* failed, waiting for their ssh's end */
  tpuci__sshdial_t *dial;     /* an ssh tunnel's connections */
  tpuci__http_sock_t *socks;
  size_t npending;
  size_t ncancelled; /* requests waiting to be cancelled */
  int handles;       /* open uv handles */
  int closing;
  int closed; /* curl released, handles closing */
  void (*close_cb)(void *data);
  void *close_data;
};

/* Doubly linked lists. */
#define TPUCI__LIST_PUSH(head, x) \
  do {                            \
    (x)->prev = NULL;             \
    (x)->next = (head);           \
    if (head) (head)->prev = (x); \
    (head) = (x);                 \
  } while (0)
#define TPUCI__LIST_DEL(head, x)                \
  do {                                          \
    if ((x)->prev) (x)->prev->next = (x)->next; \
    else (head) = (x)->next;                    \
    if ((x)->next) (x)->next->prev = (x)->prev; \
    (x)->prev = (x)->next = NULL;               \
  } while (0)

static uv_once_t tpuci__curl_once = UV_ONCE_INIT;
static void tpuci__curl_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

static void tpuci__http_maybe_closed(tpuci__http_t *h);

/* Handles. */

static void tpuci__http_handle_closed(uv_handle_t *handle) {
  tpuci__http_t *h = handle->data;
  /* The poll handle is the first member of its socket record. */
  if (handle->type == UV_POLL) free(handle);
  h->handles--;
  tpuci__http_maybe_closed(h);
}

static void tpuci__http_sock_close(tpuci__http_sock_t *s) {
  tpuci__http_t *h = s->h;
  TPUCI__LIST_DEL(h->socks, s);
  uv_close((uv_handle_t *) &s->poll, tpuci__http_handle_closed);
}

/* Completion. */

static int tpuci__http_os_error(int e, const char **msg) {
  switch (e) {
    case ECONNREFUSED: *msg = "connection refused"; return UV_ECONNREFUSED;
    case ENOENT: *msg = "no such socket"; return UV_ENOENT;
    case EACCES: *msg = "permission denied"; return UV_EACCES;
    case ETIMEDOUT: *msg = "timed out"; return UV_ETIMEDOUT;
    case ECONNRESET: *msg = "connection reset"; return UV_ECONNRESET;
    default: return 0;
  }
}

static int tpuci__http_tls_error(CURLcode rc) {
  return rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_PEER_FAILED_VERIFICATION ||
         rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_CIPHER || rc == CURLE_SSL_CACERT_BADFILE ||
         rc == CURLE_SSL_ISSUER_ERROR || rc == CURLE_SSL_CRL_BADFILE ||
         rc == CURLE_SSL_ENGINE_NOTFOUND || rc == CURLE_SSL_ENGINE_SETFAILED ||
         rc == CURLE_USE_SSL_FAILED || rc == CURLE_SSL_PINNEDPUBKEYNOTMATCH;
}

/* The server's alert after our certificate (TLS 1.3 sends it once the
 * client thinks the handshake is over): it refused the certificate, or
 * wanted one. Sets the message and what to do. */
static void tpuci__http_tls_refused(const tpuci__http_target_t *host, const char *errbuf,
                                    tpuci__http_res_t *res, char **msg) {
  static const char *const refusals[] = {
      "alert bad certificate",     "alert unknown ca",          "alert certificate unknown",
      "alert certificate expired", "alert certificate revoked", "alert unsupported certificate",
      "alert access denied"};
  const char *alert = strstr(errbuf, "alert ");
  int n;
  size_t i;
  if (alert == NULL) return;
  /* OpenSSL's "..., errno 0" is not for the user. */
  n = (int) strcspn(alert, ",");
  if (strstr(alert, "alert certificate required") != NULL) {
    *msg = tpuci__printf("the TLS handshake failed: %s wants a client "
                         "certificate and got none (%.*s)",
                         host->peer ? host->peer : "the server", n, alert);
    res->hint = host->tls_hint_none;
    return;
  }
  for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
    if (strncmp(alert, refusals[i], strlen(refusals[i])) == 0) break;
  if (i == sizeof(refusals) / sizeof(refusals[0]) || host->cert_file == NULL) return;
  *msg = tpuci__printf("the TLS handshake refused our client certificate %s (%.*s)",
                       host->cert_file, n, alert);
  res->hint = host->tls_hint_refused;
}

static void tpuci__http_req_free(tpuci__http_req_t *r) {
  struct curl_slist *l;
  if (r->easy) curl_easy_cleanup(r->easy);
  for (l = r->headers; l != NULL; l = l->next) memset(l->data, 0, strlen(l->data));
  curl_slist_free_all(r->headers);
  tpuci__sshconn_unref(r->conn);
  free(r->url);
  free(r->body);
  tpuci__buf_free(&r->resp);
  free(r);
}

/* A request through ssh that got no answer: what its ssh said,
 * when it failed (it never connected, the login was refused, the remote
 * command is missing or failed, the connection dropped). */
static void tpuci__http_ssh_error(tpuci__http_req_t *r, tpuci__http_res_t *res, char **msg) {
  const char *said, *advice = NULL;
  if (r->spawn_error != 0 && r->spawn_error != UV_ECANCELED) {
    res->error = UV_EHOSTUNREACH;
    *msg = tpuci__printf("cannot run %s: %s", tpuci__ssh_client(), uv_strerror(r->spawn_error));
    res->error_msg = *msg;
    res->hint = "install the OpenSSH client (apt-get install openssh-client), "
                "or set TPUCI_SSH to one";
    return;
  }
  if (r->conn == NULL || (said = tpuci__sshconn_error(r->conn, &advice)) == NULL) return;
  res->error = UV_EHOSTUNREACH;
  res->error_msg = said;
  res->hint = advice;
}

static void tpuci__http_finish(tpuci__http_req_t *r, CURLcode rc, int forced_error) {
  tpuci__http_t *h = r->h;
  tpuci__http_res_t res;
  char *msg = NULL;

  memset(&res, 0, sizeof(res));
  res.error_msg = "";
  if (r->cancelled) {
    h->ncancelled--;
    forced_error = UV_ECANCELED;
  }
  if (forced_error != 0) {
    res.error = forced_error;
    res.error_msg = forced_error == UV_ECANCELED ? "cancelled" : uv_strerror(forced_error);
  } else if (rc == CURLE_OK) {
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &res.status);
  } else {
    long os = 0;
    const char *m = NULL;
    curl_easy_getinfo(r->easy, CURLINFO_OS_ERRNO, &os);
    if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_RECV_ERROR ||
        rc == CURLE_SEND_ERROR)
      res.error = tpuci__http_os_error((int) os, &m);
    /* With TLS 1.3 a refused client certificate shows up as an alert on
     * the first read. */
    if (res.error == 0 && h->host.tls && (rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR) &&
        strstr(r->errbuf, "SSL") != NULL)
      rc = CURLE_SSL_CONNECT_ERROR;
    if (res.error == 0 && tpuci__http_tls_error(rc)) {
      /* Not "connection refused": the server answered, the handshake
       * failed (wrong CA, certificate or key). Callers hint at them. */
      res.error = UV_EPROTO;
      if (h->host.tls) tpuci__http_tls_refused(&h->host, r->errbuf, &res, &msg);
      m = msg;
    }
    if (res.error == 0 && rc == CURLE_OPERATION_TIMEDOUT) {
      res.error = UV_ETIMEDOUT;
      m = NULL;
    }
    if (res.error == 0 && (rc == CURLE_PARTIAL_FILE || rc == CURLE_GOT_NOTHING)) {
      /* The server went away in the middle of its answer (it stopped). */
      res.error = UV_ECONNRESET;
      m = "the connection closed before the answer was complete";
    }
    if (res.error == 0) res.error = UV_EIO;
    if (m == NULL) {
      const char *text = r->errbuf[0] ? r->errbuf : curl_easy_strerror(rc);
      msg = tpuci__strdup(text);
      if (msg[0] >= 'A' && msg[0] <= 'Z' && !(msg[1] >= 'A' && msg[1] <= 'Z'))
        msg[0] = (char) (msg[0] - 'A' + 'a');
      m = msg;
    }
    res.error_msg = m;
    if (h->dial != NULL) {
      char *said = NULL;
      tpuci__http_ssh_error(r, &res, &said);
      if (said != NULL) {
        free(msg);
        msg = said;
      }
    }
  }
  if (r->resp.data == NULL) tpuci__buf_add(&r->resp, "", 0);
  res.body = r->resp.data;
  res.len = r->resp.len;
  h->npending--;
  r->done(r->data, &res);
  free(msg);
  tpuci__http_req_free(r);
}

static void tpuci__http_on_conn_ended(void *p) {
  tpuci__http_req_t *r = p;
  TPUCI__LIST_DEL(r->h->waiting, r);
  tpuci__http_finish(r, r->rc, 0);
}

/* A request that failed over an ssh tunnel's connection first waits
 * for that ssh to end (its last word on stderr says why). */
static void tpuci__http_complete(tpuci__http_req_t *r, CURLcode rc, int forced_error) {
  if (forced_error == 0 && rc != CURLE_OK && !r->cancelled && r->conn != NULL && !r->h->closed &&
      !tpuci__sshconn_ended(r->conn, tpuci__http_on_conn_ended, r)) {
    r->rc = rc;
    TPUCI__LIST_PUSH(r->h->waiting, r);
    return;
  }
  tpuci__http_finish(r, rc, forced_error);
}

static void tpuci__http_check_done(tpuci__http_t *h) {
  CURLMsg *m;
  int left;
  while (h->multi != NULL && (m = curl_multi_info_read(h->multi, &left))) {
    tpuci__http_req_t *r;
    if (m->msg != CURLMSG_DONE) continue;
    curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **) &r);
    curl_multi_remove_handle(h->multi, r->easy);
    TPUCI__LIST_DEL(h->active, r);
    tpuci__http_complete(r, m->data.result, 0);
  }
}

/* curl's callbacks. */

static void tpuci__http_on_poll(uv_poll_t *p, int status, int events) {
  tpuci__http_sock_t *s = (tpuci__http_sock_t *) p;
  tpuci__http_t *h = s->h;
  int flags = 0, running;
  /* An error on the socket (the peer reset it) is read too: what came
   * before it says why (a TLS alert: the server refused our client
   * certificate), where curl's "select/poll returned error" would not. */
  if (status < 0) flags = CURL_CSELECT_ERR | CURL_CSELECT_IN;
  if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
  if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
  curl_multi_socket_action(h->multi, s->fd, flags, &running);
  tpuci__http_check_done(h);
}

static int tpuci__http_socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp,
                                 void *socketp) {
  tpuci__http_t *h = userp;
  tpuci__http_sock_t *s = socketp;
  int events = 0;

  if (what == CURL_POLL_REMOVE) {
    if (s != NULL) {
      tpuci__http_sock_close(s);
      curl_multi_assign(h->multi, fd, NULL);
    }
    return 0;
  }
  if (h->dial != NULL) {
    /* The request a reused connection now serves: its ssh's last word
     * is the request's, should the connection fail. */
    tpuci__http_req_t *r = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **) &r);
    if (r != NULL) tpuci__sshdial_attach(h->dial, fd, &r->conn);
  }
  if (s == NULL) {
    s = tpuci__calloc(1, sizeof(*s));
    if (uv_poll_init_socket(h->loop, &s->poll, fd) != 0) {
      free(s);
      return -1;
    }
    s->fd = fd;
    s->h = h;
    s->poll.data = h;
    h->handles++;
    TPUCI__LIST_PUSH(h->socks, s);
    curl_multi_assign(h->multi, fd, s);
  }
  if (what & CURL_POLL_IN) events |= UV_READABLE;
  if (what & CURL_POLL_OUT) events |= UV_WRITABLE;
  if (events == 0) uv_poll_stop(&s->poll);
  else if (uv_poll_start(&s->poll, events, tpuci__http_on_poll) != 0) return -1;
  return 0;
}

static void tpuci__http_on_timer(uv_timer_t *t) {
  tpuci__http_t *h = t->data;
  int running;
  curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  tpuci__http_check_done(h);
}

static int tpuci__http_timer_cb(CURLM *multi, long timeout_ms, void *userp) {
  tpuci__http_t *h = userp;
  (void) multi;
  if (timeout_ms < 0) uv_timer_stop(&h->timer);
  else uv_timer_start(&h->timer, tpuci__http_on_timer, (uint64_t) timeout_ms, 0);
  return 0;
}

static size_t tpuci__http_write_cb(char *ptr, size_t size, size_t nmemb, void *userdata) {
  tpuci__http_req_t *r = userdata;
  size_t n = size * nmemb;
  if (r->status == 0) curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->status);
  if (r->chunk != NULL && r->status >= 200 && r->status < 300) r->chunk(r->data, ptr, n);
  else tpuci__buf_add(&r->resp, ptr, n);
  return n;
}

static size_t tpuci__http_header_cb(char *ptr, size_t size, size_t nmemb, void *userdata) {
  tpuci__http_req_t *r = userdata;
  size_t n = size * nmemb;
  long status = 0;
  /* The blank line ends a block of headers; 1xx blocks come before the
   * answer's own. */
  if (r->headed || r->head == NULL || !(n <= 2 && (n == 0 || ptr[0] == '\r' || ptr[0] == '\n')))
    return n;
  curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200) return n;
  r->headed = 1;
  if (status < 300 && !r->cancelled) r->head(r->data, status);
  return n;
}

/* Through ssh: each connection is a local socket whose other end is an
 * ssh running the target's command (`docker system dial-stdio` for an
 * ssh:// engine: sshdial.h). */

static curl_socket_t tpuci__http_open_cb(void *clientp, curlsocktype purpose,
                                         struct curl_sockaddr *addr) {
  tpuci__http_req_t *r = clientp;
  tpuci__sshconn_t *conn;
  int fd;
  if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKET_BAD;
  if (addr->family != AF_UNIX) return CURL_SOCKET_BAD;
  fd = tpuci__sshdial_open(r->h->dial, &conn, &r->spawn_error);
  if (fd < 0) return CURL_SOCKET_BAD;
  tpuci__sshconn_unref(r->conn);
  r->conn = conn;
  return fd;
}

static int tpuci__http_closesock_cb(void *clientp, curl_socket_t fd) {
  tpuci__http_t *h = clientp;
  if (h->dial != NULL) tpuci__sshdial_closed_fd(h->dial, fd);
  else close(fd);
  return 0;
}

static void tpuci__http_setup_ssh(tpuci__http_t *h, tpuci__http_req_t *r, CURL *e) {
  curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, tpuci__http_open_cb);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, r);
  curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, tpuci__sshdial_path(h->dial));
  /* The connection outlives the request in curl's cache: the client. */
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, tpuci__http_closesock_cb);
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, h);
}

/* Requests. */

/* An https:// server: its CA (only that one, when given: a Docker TLS
 * engine's certificate comes from its own CA, so the system's folder of
 * CAs, curl's built-in CAPATH, goes), the client's certificate and key.
 * Without verification neither the chain nor the name is checked. */
static void tpuci__http_setup_tls(const tpuci__http_target_t *host, CURL *e) {
  if (host->ca_file != NULL) {
    curl_easy_setopt(e, CURLOPT_CAINFO, host->ca_file);
    curl_easy_setopt(e, CURLOPT_CAPATH, NULL);
  }
  if (host->cert_file != NULL) {
    curl_easy_setopt(e, CURLOPT_SSLCERT, host->cert_file);
    curl_easy_setopt(e, CURLOPT_SSLKEY, host->key_file);
    /* Never OpenSSL's prompt on the terminal for a key's passphrase
     * (endpoint.c refuses such a key first): an empty one is tried. */
    curl_easy_setopt(e, CURLOPT_KEYPASSWD, "");
  }
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, host->tls_verify ? 1L : 0L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, host->tls_verify ? 2L : 0L);
}

static int tpuci__http_setup(tpuci__http_t *h, tpuci__http_req_t *r, const char *method,
                             uint64_t timeout_ms) {
  CURL *e = curl_easy_init();
  if (e == NULL) return -1;
  r->easy = e;
  curl_easy_setopt(e, CURLOPT_URL, r->url);
  if (h->host.unix_path != NULL) curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, h->host.unix_path);
  if (h->host.tls) tpuci__http_setup_tls(&h->host, e);
  if (h->dial != NULL) tpuci__http_setup_ssh(h, r, e);
  /* The server is reached directly, whatever http_proxy says (an
   * engine is never behind an HTTP proxy). */
  curl_easy_setopt(e, CURLOPT_PROXY, "");
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long) CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(e, CURLOPT_PRIVATE, (char *) r);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, tpuci__http_write_cb);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  if (timeout_ms > 0) curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long) timeout_ms);
  /* No "Expect: 100-continue" round trip for larger bodies. */
  r->headers = curl_slist_append(r->headers, "Expect:");
  if (r->body != NULL) r->headers = curl_slist_append(r->headers, "Content-Type: application/json");
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
  if (strcmp(method, "POST") == 0) {
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body != NULL ? r->body : "");
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long) r->body_len);
  } else if (strcmp(method, "GET") != 0) {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
    if (strcmp(method, "HEAD") == 0) curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  }
  return 0;
}

static void tpuci__http_close_now(tpuci__http_t *h);

/* A waiting request leaves the list; its connection forgets it. */
static void tpuci__http_unwait(tpuci__http_req_t *r) {
  TPUCI__LIST_DEL(r->h->waiting, r);
  (void) tpuci__sshconn_ended(r->conn, NULL, NULL);
}

/* Completes the requests tpuci__http_cancel() marked. */
static void tpuci__http_cancel_marked(tpuci__http_t *h) {
  tpuci__http_req_t *r, *next;
  for (r = h->queued; r != NULL && h->ncancelled > 0; r = next) {
    next = r->next;
    if (!r->cancelled) continue;
    TPUCI__LIST_DEL(h->queued, r);
    tpuci__http_complete(r, CURLE_OK, UV_ECANCELED);
    next = h->queued; /* the callback may have queued or cancelled more */
  }
  for (r = h->active; r != NULL && h->ncancelled > 0; r = next) {
    next = r->next;
    if (!r->cancelled) continue;
    curl_multi_remove_handle(h->multi, r->easy);
    TPUCI__LIST_DEL(h->active, r);
    tpuci__http_complete(r, CURLE_OK, UV_ECANCELED);
    next = h->active;
  }
  for (r = h->waiting; r != NULL && h->ncancelled > 0; r = next) {
    next = r->next;
    if (!r->cancelled) continue;
    tpuci__http_unwait(r);
    tpuci__http_finish(r, CURLE_OK, UV_ECANCELED);
    next = h->waiting;
  }
}

static void tpuci__http_on_kick(uv_timer_t *t) {
  tpuci__http_t *h = t->data;
  if (h->closing) {
    tpuci__http_close_now(h);
    return;
  }
  if (h->ncancelled > 0) tpuci__http_cancel_marked(h);
  /* Hand queued requests to curl, oldest first. Done callbacks of failed
   * ones may queue more; those wait for the next kick. */
  while (h->queued != NULL) {
    tpuci__http_req_t *r = h->queued, *last = NULL;
    while (r->next != NULL) r = r->next;
    last = r;
    TPUCI__LIST_DEL(h->queued, last);
    if (curl_multi_add_handle(h->multi, last->easy) != CURLM_OK) {
      tpuci__http_complete(last, CURLE_OK, UV_EIO);
      continue;
    }
    TPUCI__LIST_PUSH(h->active, last);
  }
}

tpuci__http_req_t *tpuci__http_request(tpuci__http_t *h, const char *method, const char *path,
                                       const char *body, size_t len, uint64_t timeout_ms,
                                       tpuci__http_chunk_cb chunk, tpuci__http_done_cb done,
                                       void *data) {
  tpuci__http_req_t *r = tpuci__calloc(1, sizeof(*r));
  r->h = h;
  r->url = tpuci__printf("%s%s", h->host.url_base, path);
  if (body != NULL) {
    r->body = tpuci__strndup(body, len);
    r->body_len = len;
  }
  tpuci__buf_init(&r->resp);
  r->chunk = chunk;
  r->done = done;
  r->data = data;
  h->npending++;
  if (tpuci__http_setup(h, r, method, timeout_ms) != 0) {
    /* Still complete from the loop: queue it without an easy handle and
     * let the kick fail it. */
    if (r->easy) curl_easy_cleanup(r->easy);
    r->easy = NULL;
  }
  TPUCI__LIST_PUSH(h->queued, r);
  if (!h->closed) uv_timer_start(&h->kick, tpuci__http_on_kick, 0, 0);
  return r;
}

void *tpuci__http_req_data(const tpuci__http_req_t *r) { return r->data; }

void tpuci__http_set_head(tpuci__http_req_t *r, tpuci__http_head_cb head) {
  r->head = head;
  if (r->easy == NULL) return;
  curl_easy_setopt(r->easy, CURLOPT_HEADERFUNCTION, tpuci__http_header_cb);
  curl_easy_setopt(r->easy, CURLOPT_HEADERDATA, r);
}

void tpuci__http_set_header(tpuci__http_req_t *r, const char *line) {
  struct curl_slist *l = curl_slist_append(r->headers, line);
  /* Out of memory: the request goes without it and fails as such. */
  if (l == NULL) return;
  r->headers = l;
  if (r->easy == NULL) return;
  curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->headers);
}

void tpuci__http_set_body_type(tpuci__http_req_t *r, const char *type) {
  struct curl_slist *l = NULL, *it, *next;
  char *line = tpuci__printf("Content-Type: %s", type);
  for (it = r->headers; it != NULL; it = it->next) {
    if (strncmp(it->data, "Content-Type:", 13) == 0) continue;
    next = curl_slist_append(l, it->data);
    if (next == NULL) break;
    l = next;
  }
  next = curl_slist_append(l, line);
  free(line);
  /* Out of memory: the request keeps its headers and fails as such. */
  if (next == NULL) {
    curl_slist_free_all(l);
    return;
  }
  curl_slist_free_all(r->headers);
  r->headers = next;
  if (r->easy != NULL) curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->headers);
}

void tpuci__http_set_fresh(tpuci__http_req_t *r) {
  if (r->easy == NULL) return;
  curl_easy_setopt(r->easy, CURLOPT_FRESH_CONNECT, 1L);
  curl_easy_setopt(r->easy, CURLOPT_FORBID_REUSE, 1L);
}

void tpuci__http_cancel(tpuci__http_t *h, tpuci__http_req_t *r) {
  if (r->cancelled) return;
  r->cancelled = 1;
  h->ncancelled++;
  if (!h->closed) uv_timer_start(&h->kick, tpuci__http_on_kick, 0, 0);
}

size_t tpuci__http_pending(const tpuci__http_t *h) { return h->npending; }

int tpuci__http_new(uv_loop_t *loop, const tpuci__http_target_t *host, tpuci__http_t **out,
                    tpuci__err_t *err) {
  tpuci__http_t *h;
  uv_once(&tpuci__curl_once, tpuci__curl_init);
  h = tpuci__calloc(1, sizeof(*h));
  h->loop = loop;
  h->multi = curl_multi_init();
  if (h->multi == NULL) {
    free(h);
    return tpuci__err_set(err, TPUCI_ENOMEM, "curl_multi_init failed");
  }
  if (host->ssh_host != NULL && tpuci__sshdial_new(loop, host, &h->dial, err) != 0) {
    curl_multi_cleanup(h->multi);
    free(h);
    return TPUCI_EENGINE;
  }
  tpuci__http_target_copy(&h->host, host);
  curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, tpuci__http_socket_cb);
  curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
  curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, tpuci__http_timer_cb);
  curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
  uv_timer_init(loop, &h->timer);
  uv_timer_init(loop, &h->kick);
  h->timer.data = h;
  h->kick.data = h;
  h->handles = 2;
  *out = h;
  return 0;
}

static void tpuci__http_maybe_closed(tpuci__http_t *h) {
  if (h->closed && h->handles == 0) {
    void (*cb)(void *) = h->close_cb;
    void *data = h->close_data;
    tpuci__http_target_free(&h->host);
    free(h);
    if (cb) cb(data);
  }
}

static void tpuci__http_dial_closed(void *p) {
  tpuci__http_t *h = p;
  h->handles--;
  tpuci__http_maybe_closed(h);
}

static void tpuci__http_close_now(tpuci__http_t *h) {
  /* Cancel what is left; done callbacks may queue more, cancel those too. */
  while (h->queued != NULL || h->active != NULL || h->waiting != NULL) {
    tpuci__http_req_t *r;
    if (h->waiting != NULL) {
      r = h->waiting;
      tpuci__http_unwait(r);
      tpuci__http_finish(r, CURLE_OK, UV_ECANCELED);
      continue;
    }
    if (h->queued != NULL) {
      r = h->queued;
      TPUCI__LIST_DEL(h->queued, r);
    } else {
      r = h->active;
      TPUCI__LIST_DEL(h->active, r);
      curl_multi_remove_handle(h->multi, r->easy);
    }
    tpuci__http_complete(r, CURLE_OK, UV_ECANCELED);
  }
  h->closed = 1;
  /* Cleaning up closes cached connections, which calls the socket
   * callback with CURL_POLL_REMOVE for each. */
  curl_multi_cleanup(h->multi);
  h->multi = NULL;
  while (h->socks != NULL) tpuci__http_sock_close(h->socks);
  /* An ssh tunnel's children end (their sockets are closed now). */
  if (h->dial != NULL) {
    h->handles++;
    tpuci__sshdial_close(h->dial, tpuci__http_dial_closed, h);
    h->dial = NULL;
  }
  uv_close((uv_handle_t *) &h->timer, tpuci__http_handle_closed);
  uv_close((uv_handle_t *) &h->kick, tpuci__http_handle_closed);
}

void tpuci__http_close(tpuci__http_t *h, void (*cb)(void *data), void *data) {
  h->closing = 1;
  h->close_cb = cb;
  h->close_data = data;
  uv_timer_start(&h->kick, tpuci__http_on_kick, 0, 0);
}

char *tpuci__http_escape(const char *s, int keep_path) {
  tpuci__buf_t b;
  tpuci__buf_init(&b);
  tpuci__buf_add(&b, "", 0);
  for (;;) {
    /* curl's escape between the separators a path keeps. */
    size_t n = keep_path ? strcspn(s, "/:@") : strlen(s);
    if (n > 0) {
      char *e = curl_easy_escape(NULL, s, (int) n);
      /* Out of memory (a piece over INT_MAX is not a ref): as tpuci__malloc. */
      if (e == NULL) abort();
      tpuci__buf_adds(&b, e);
      curl_free(e);
    }
    s += n;
    if (*s == '\0') break;
    tpuci__buf_add(&b, s++, 1);
  }
  return tpuci__buf_steal(&b);
}
