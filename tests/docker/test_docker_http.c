/* The HTTP client (libcurl multi on libuv) and the engine API layer,
 * against a small fake engine served on the same loop over a unix
 * socket. Every test ends with uv_loop_close() == 0: no handle leaks. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>
#include <uv.h>

#include "runtime/engine/engine.h"
#include "runtime/http/http.h"
#include "runtime/engine/pull.h"
#include "runtime/engine/registry.h"

/* The fake engine. */

typedef struct {
  uv_pipe_t pipe;
  tpuci__buf_t in;
} conn_t;

typedef struct {
  uv_loop_t loop;
  uv_pipe_t server;
  /* UV_RUN_ONCE blocks while the server listens and nothing else is due;
   * this tick bounds every wait so run_until() sees flags change. */
  uv_timer_t tick;
  char dir[64];
  char path[128];
  int requests;
  int conns;
  char auth[1024];        /* the last request's X-Registry-Auth, or "" */
} fake_t;

static fake_t *g_fake;

static void conn_closed(uv_handle_t *h) {
  conn_t *c = h->data;
  tpuci__buf_free(&c->in);
  free(c);
}

static void wrote(uv_write_t *w, int status) {
  (void) status;
  free(w->data);
  free(w);
}

static void send_text(conn_t *c, const char *text, size_t n) {
  uv_write_t *w = malloc(sizeof(*w));
  uv_buf_t b;
  char *copy = malloc(n ? n : 1);
  memcpy(copy, text, n);
  w->data = copy;
  b = uv_buf_init(copy, (unsigned) n);
  uv_write(w, (uv_stream_t *) &c->pipe, &b, 1, wrote);
}

static void respond(conn_t *c, int status, const char *body) {
  char *r = tpuci__printf("HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                          "Content-Length: %zu\r\n\r\n%s",
                          status, strlen(body), body);
  send_text(c, r, strlen(r));
  free(r);
}

static void send_chunk(conn_t *c, const char *data, size_t n) {
  char head[32];
  snprintf(head, sizeof(head), "%zx\r\n", n);
  send_text(c, head, strlen(head));
  send_text(c, data, n);
  send_text(c, "\r\n", 2);
}

static void handle(conn_t *c, const char *method, const char *path,
                   const char *body, size_t blen) {
  g_fake->requests++;
  if (strcmp(path, "/v1.41/ok") == 0) {
    respond(c, 200, "{\"Id\":\"abc\"}");
  } else if (strcmp(path, "/version") == 0) {
    respond(c, 200, "{\"Version\":\"99.0\",\"ApiVersion\":\"1.45\"}");
  } else if (strcmp(path, "/v1.41/echo") == 0) {
    char *b = tpuci__printf("{\"method\":\"%s\",\"len\":%zu,\"first\":\"%c\"}",
                            method, blen, blen ? body[0] : '-');
    respond(c, 200, b);
    free(b);
  } else if (strcmp(path, "/v1.41/err") == 0) {
    respond(c, 500, "{\"message\":\"boom\\nsecond line\"}");
  } else if (strcmp(path, "/v1.41/stream") == 0) {
    static const char h[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    send_text(c, h, sizeof(h) - 1);
    send_chunk(c, "\x01\0\0\0\0\0\0\x03" "abc", 11);
    send_chunk(c, "\x02\0\0\0\0\0", 6);
    send_chunk(c, "\0\x02xy", 4);
    send_text(c, "0\r\n\r\n", 5);
  } else if (strncmp(path, "/v1.43/images/create?fromImage=reg.test", 39) == 0) {
    /* A private registry: refused without credentials, else two layers. */
    static const char h[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    static const char *lines[] = {
        "{\"status\":\"Pulling from app\",\"id\":\"1\"}\r\n",
        "{\"status\":\"Pulling fs layer\",\"id\":\"aaa\"}\r\n",
        "{\"status\":\"Pulling fs layer\",\"id\":\"bbb\"}\r\n",
        "{\"status\":\"Downloading\",\"progressDetail\":{\"current\":500,\"total\":1000},\"id\":\"aaa\"}\r\n",
        "{\"status\":\"Downloading\",\"progressDetail\":{\"current\":100,\"total\":3000},\"id\":\"bbb\"}\r\n",
        "{\"status\":\"Download complete\",\"id\":\"aaa\"}\r\n",
        "{\"status\":\"Pull complete\",\"id\":\"bbb\"}\r\n",
        "{\"status\":\"Status: Downloaded newer image for reg.test/app:1\"}\r\n"};
    size_t i;
    if (g_fake->auth[0] == '\0') {
      respond(c, 500, "{\"message\":\"Head \\\"https://reg.test/v2/app/manifests/1\\\": "
                      "no basic auth credentials\"}");
      return;
    }
    send_text(c, h, sizeof(h) - 1);
    for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) send_chunk(c, lines[i], strlen(lines[i]));
    send_text(c, "0\r\n\r\n", 5);
  } else if (strncmp(path, "/v1.43/images/create?fromImage=", 31) == 0) {
    static const char h[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    const char *l1 = "{\"status\":\"Pulling from library/x\"}\r\n";
    const char *l2 = "{\"errorDetail\":{\"message\":\"manifest unknown\"},"
                     "\"error\":\"manifest unknown\"}\r\n";
    send_text(c, h, sizeof(h) - 1);
    send_chunk(c, l1, strlen(l1));
    send_chunk(c, l2, 20);
    send_chunk(c, l2 + 20, strlen(l2) - 20);
    send_text(c, "0\r\n\r\n", 5);
  } else if (strcmp(path, "/v1.41/slow") == 0) {
    /* Never answers. */
  } else {
    respond(c, 404, "{\"message\":\"page not found\"}");
  }
}

static void on_alloc(uv_handle_t *h, size_t n, uv_buf_t *b) {
  (void) h;
  b->base = malloc(n);
  b->len = n;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
  conn_t *c = s->data;
  if (n < 0) {
    free(b->base);
    uv_close((uv_handle_t *) s, conn_closed);
    return;
  }
  tpuci__buf_add(&c->in, b->base, (size_t) n);
  free(b->base);
  for (;;) {
    char *end = c->in.data ? strstr(c->in.data, "\r\n\r\n") : NULL;
    char method[16], path[512];
    size_t hlen, blen = 0;
    const char *cl;
    if (end == NULL) break;
    hlen = (size_t) (end - c->in.data) + 4;
    cl = strstr(c->in.data, "Content-Length: ");
    if (cl != NULL && cl < end) blen = (size_t) atol(cl + 16);
    if (c->in.len < hlen + blen) break;
    if (sscanf(c->in.data, "%15s %511s", method, path) != 2) break;
    {
      const char *a = strstr(c->in.data, "X-Registry-Auth: ");
      size_t an = a != NULL && a < end ? strcspn(a + 17, "\r\n") : 0;
      if (an >= sizeof(g_fake->auth)) an = sizeof(g_fake->auth) - 1;
      memcpy(g_fake->auth, a != NULL ? a + 17 : "", an);
      g_fake->auth[an] = '\0';
    }
    handle(c, method, path, c->in.data + hlen, blen);
    memmove(c->in.data, c->in.data + hlen + blen, c->in.len - hlen - blen);
    c->in.len -= hlen + blen;
    c->in.data[c->in.len] = '\0';
  }
}

static void on_conn(uv_stream_t *server, int status) {
  conn_t *c = calloc(1, sizeof(*c));
  assert_int_equal(status, 0);
  tpuci__buf_init(&c->in);
  uv_pipe_init(server->loop, &c->pipe, 0);
  c->pipe.data = c;
  assert_int_equal(uv_accept(server, (uv_stream_t *) &c->pipe), 0);
  uv_read_start((uv_stream_t *) &c->pipe, on_alloc, on_read);
  g_fake->conns++;
}

static void tick_cb(uv_timer_t *t) { (void) t; }

static int setup(void **state) {
  fake_t *f = calloc(1, sizeof(*f));
  strcpy(f->dir, "/tmp/tpuci-http-XXXXXX");
  assert_non_null(mkdtemp(f->dir));
  snprintf(f->path, sizeof(f->path), "%s/engine.sock", f->dir);
  assert_int_equal(uv_loop_init(&f->loop), 0);
  uv_pipe_init(&f->loop, &f->server, 0);
  assert_int_equal(uv_pipe_bind(&f->server, f->path), 0);
  assert_int_equal(uv_listen((uv_stream_t *) &f->server, 64, on_conn), 0);
  uv_timer_init(&f->loop, &f->tick);
  uv_timer_start(&f->tick, tick_cb, 5, 5);
  g_fake = f;
  *state = f;
  return 0;
}

static void walk_close(uv_handle_t *h, void *arg) {
  (void) arg;
  if (!uv_is_closing(h)) uv_close(h, h->type == UV_NAMED_PIPE && h->data ? conn_closed : NULL);
}

static int teardown(void **state) {
  fake_t *f = *state;
  uv_close((uv_handle_t *) &f->server, NULL);
  uv_close((uv_handle_t *) &f->tick, NULL);
  uv_run(&f->loop, UV_RUN_NOWAIT);
  uv_walk(&f->loop, walk_close, NULL);
  uv_run(&f->loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&f->loop), 0);
  unlink(f->path);
  rmdir(f->dir);
  free(f);
  return 0;
}

/* The client under test. */

typedef struct {
  int done;
  int error;
  long status;
  tpuci__buf_t body;
  tpuci__buf_t streamed;
  char *message;
  int ok;
  json_t *json;
} result_t;

static void res_init(result_t *r) {
  memset(r, 0, sizeof(*r));
  tpuci__buf_init(&r->body);
  tpuci__buf_init(&r->streamed);
  tpuci__buf_add(&r->body, "", 0);
  tpuci__buf_add(&r->streamed, "", 0);
}

static void res_free(result_t *r) {
  tpuci__buf_free(&r->body);
  tpuci__buf_free(&r->streamed);
  free(r->message);
  json_decref(r->json);
}

static void on_http_done(void *data, const tpuci__http_res_t *res) {
  result_t *r = data;
  r->done++;
  r->error = res->error;
  r->status = res->status;
  tpuci__buf_add(&r->body, res->body, res->len);
  r->message = tpuci__strdup(res->error_msg);
}

static void on_chunk(void *data, const char *buf, size_t len) {
  result_t *r = data;
  tpuci__buf_add(&r->streamed, buf, len);
}

static void on_engine_done(void *data, const tpuci__engine_res_t *res) {
  result_t *r = data;
  r->done++;
  r->ok = res->ok;
  r->error = res->error;
  r->status = res->status;
  r->message = tpuci__strdup(res->message);
  r->json = res->json ? json_incref(res->json) : NULL;
}

static void closed_cb(void *data) { (*(int *) data)++; }

static void run_until(fake_t *f, int *flag, int want) {
  int spins = 0;
  while (*flag < want && spins++ < 4000) uv_run(&f->loop, UV_RUN_ONCE);
  assert_int_equal(*flag, want);
}

/* The HTTP client on its own (runtime/http/): a server on a unix socket,
 * named without DOCKER_HOST. */
static tpuci__http_t *client(fake_t *f, const char *path) {
  tpuci__http_target_t target;
  tpuci__err_t err = {0};
  tpuci__http_t *h;
  memset(&target, 0, sizeof(target));
  target.url_base = (char *) "http://localhost";
  target.unix_path = (char *) (path ? path : f->path);
  target.display = (char *) "the fake engine";
  assert_int_equal(tpuci__http_new(&f->loop, &target, &h, &err), 0);
  return h;
}

static void close_client(fake_t *f, tpuci__http_t *h) {
  int closed = 0;
  tpuci__http_close(h, closed_cb, &closed);
  run_until(f, &closed, 1);
}

static void test_get_and_post(void **state) {
  fake_t *f = *state;
  tpuci__http_t *h = client(f, NULL);
  result_t a, b;
  res_init(&a);
  res_init(&b);
  tpuci__http_request(h, "GET", "/v1.41/ok", NULL, 0, 0, NULL, on_http_done, &a);
  tpuci__http_request(h, "POST", "/v1.41/echo", "{\"k\":1}", 7, 5000, NULL, on_http_done, &b);
  /* Never completes synchronously. */
  assert_int_equal(a.done, 0);
  assert_int_equal(tpuci__http_pending(h), 2);
  run_until(f, &a.done, 1);
  run_until(f, &b.done, 1);
  assert_int_equal(a.error, 0);
  assert_int_equal(a.status, 200);
  assert_string_equal(a.body.data, "{\"Id\":\"abc\"}");
  assert_string_equal(b.body.data, "{\"method\":\"POST\",\"len\":7,\"first\":\"{\"}");
  assert_int_equal(tpuci__http_pending(h), 0);
  close_client(f, h);
  res_free(&a);
  res_free(&b);
}

static void test_stream(void **state) {
  fake_t *f = *state;
  tpuci__http_t *h = client(f, NULL);
  result_t a;
  res_init(&a);
  tpuci__http_request(h, "GET", "/v1.41/stream", NULL, 0, 0, on_chunk, on_http_done, &a);
  run_until(f, &a.done, 1);
  assert_int_equal(a.status, 200);
  assert_int_equal(a.body.len, 0);
  assert_int_equal(a.streamed.len, 21);
  assert_memory_equal(a.streamed.data, "\x01\0\0\0\0\0\0\x03" "abc" "\x02\0\0\0\0\0\0\x02xy", 21);
  close_client(f, h);
  res_free(&a);
}

/* Error bodies go to the body, not to the chunk callback. */
static void test_engine_errors(void **state) {
  fake_t *f = *state;
  tpuci__err_t err = {0};
  tpuci__engine_t *e;
  result_t a, b;
  char *v = tpuci__printf("unix://%s", f->path);
  tpuci__docker_host_t host;
  int closed = 0;
  tpuci__docker_host_parse(v, &host, &err);
  assert_int_equal(tpuci__engine_new_host(&f->loop, &host, &e, &err), 0);
  res_init(&a);
  res_init(&b);
  tpuci__engine_call(
      e, &(tpuci__engine_req_t){.method = "GET", .path = "/err", .chunk = on_chunk, .chunk_data = &a},
      on_engine_done, &a);
  tpuci__engine_call(e, &(tpuci__engine_req_t){.method = "GET", .path = "/nope"}, on_engine_done,
                     &b);
  run_until(f, &a.done, 1);
  run_until(f, &b.done, 1);
  assert_false(a.ok);
  assert_int_equal(a.status, 500);
  assert_string_equal(a.message, "boom");
  assert_int_equal(a.streamed.len, 0);
  assert_false(b.ok);
  assert_int_equal(b.status, 404);
  assert_string_equal(b.message, "page not found");
  res_free(&a);
  res_free(&b);

  /* Version negotiation caps at 1.43 and then prefixes every path. */
  res_init(&a);
  tpuci__engine_version(e, on_engine_done, &a);
  run_until(f, &a.done, 1);
  assert_true(a.ok);
  assert_int_equal(tpuci__engine_negotiate(e, a.json, &err), 0);
  assert_string_equal(e->prefix, "/v1.43");
  assert_string_equal(e->server_version, "99.0");
  res_free(&a);

  /* A pull that fails inside a 200 progress stream. */
  res_init(&a);
  tpuci__engine_image_pull(e, &(tpuci__engine_pull_t){.ref = "x"}, on_engine_done, &a);
  run_until(f, &a.done, 1);
  assert_false(a.ok);
  assert_int_equal(a.status, 200);
  assert_string_equal(a.message, "manifest unknown");
  res_free(&a);

  tpuci__engine_close(e, closed_cb, &closed);
  run_until(f, &closed, 1);
  tpuci__docker_host_free(&host);
  free(v);
}

static void test_no_socket(void **state) {
  fake_t *f = *state;
  tpuci__http_t *h = client(f, "/nonexistent/docker.sock");
  result_t a;
  res_init(&a);
  tpuci__http_request(h, "GET", "/version", NULL, 0, 0, NULL, on_http_done, &a);
  run_until(f, &a.done, 1);
  assert_int_equal(a.error, UV_ENOENT);
  assert_int_equal(a.status, 0);
  assert_string_equal(a.message, "no such socket");
  close_client(f, h);
  res_free(&a);
}

static void test_refused(void **state) {
  fake_t *f = *state;
  char path[160];
  struct sockaddr_un sa;
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  tpuci__http_t *h;
  result_t a;
  /* A socket file nobody listens on. */
  snprintf(path, sizeof(path), "%s/dead.sock", f->dir);
  memset(&sa, 0, sizeof(sa));
  sa.sun_family = AF_UNIX;
  strcpy(sa.sun_path, path);
  assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
  close(fd);
  h = client(f, path);
  res_init(&a);
  tpuci__http_request(h, "GET", "/version", NULL, 0, 0, NULL, on_http_done, &a);
  run_until(f, &a.done, 1);
  assert_int_equal(a.error, UV_ECONNREFUSED);
  assert_string_equal(a.message, "connection refused");
  close_client(f, h);
  res_free(&a);
  unlink(path);
}

/* Closing cancels what is in flight, and every handle goes away. */
static void test_close_cancels(void **state) {
  fake_t *f = *state;
  tpuci__http_t *h = client(f, NULL);
  result_t a, b;
  res_init(&a);
  res_init(&b);
  tpuci__http_request(h, "GET", "/v1.41/ok", NULL, 0, 0, NULL, on_http_done, &b);
  run_until(f, &b.done, 1);
  tpuci__http_request(h, "GET", "/v1.41/slow", NULL, 0, 0, NULL, on_http_done, &a);
  run_until(f, &f->requests, 2);
  close_client(f, h);
  assert_int_equal(a.done, 1);
  assert_int_equal(a.error, UV_ECANCELED);
  res_free(&a);
  res_free(&b);
}

static void test_timeout(void **state) {
  fake_t *f = *state;
  tpuci__http_t *h = client(f, NULL);
  result_t a;
  res_init(&a);
  tpuci__http_request(h, "GET", "/v1.41/slow", NULL, 0, 200, NULL, on_http_done, &a);
  run_until(f, &a.done, 1);
  assert_int_equal(a.error, UV_ETIMEDOUT);
  close_client(f, h);
  res_free(&a);
}

/* Requests issued from a done callback, many at once, connections reused. */
typedef struct {
  tpuci__http_t *h;
  int left;
  int done;
} chain_t;

static void chain_done(void *data, const tpuci__http_res_t *res) {
  chain_t *c = data;
  assert_int_equal(res->status, 200);
  c->done++;
  if (--c->left > 0)
    tpuci__http_request(c->h, "GET", "/v1.41/ok", NULL, 0, 0, NULL, chain_done, c);
}

static void test_many(void **state) {
  fake_t *f = *state;
  tpuci__http_t *h = client(f, NULL);
  chain_t chains[16];
  int i, total = 0;
  for (i = 0; i < 16; i++) {
    chains[i].h = h;
    chains[i].left = 20;
    chains[i].done = 0;
    tpuci__http_request(h, "GET", "/v1.41/ok", NULL, 0, 0, NULL, chain_done, &chains[i]);
  }
  while (tpuci__http_pending(h) > 0) uv_run(&f->loop, UV_RUN_ONCE);
  for (i = 0; i < 16; i++) total += chains[i].done;
  assert_int_equal(total, 320);
  /* Keep-alive: far fewer connections than requests. */
  assert_true(f->conns <= 32);
  close_client(f, h);
}

/* Pulls with credentials (pull.h) against the fake engine's private
 * registry "reg.test", which refuses a pull without X-Registry-Auth. */

typedef struct {
  int done, ok, denied, starts, dones;
  char message[1024];
  char auth[1024];
  uint64_t current, total;
  int layers;
} pull_result_t;

static void on_pull_progress(void *data, const tpuci__pull_progress_t *p) {
  pull_result_t *r = data;
  if (p->phase == TPUCI__PULL_STARTED) r->starts++;
  if (p->phase == TPUCI__PULL_DONE) r->dones++;
  r->current = p->current;
  r->total = p->total;
  r->layers = p->layers;
}

static void on_pulled(void *data, const tpuci__pull_res_t *res) {
  pull_result_t *r = data;
  r->done++;
  r->ok = res->ok;
  r->denied = res->denied;
  snprintf(r->message, sizeof(r->message), "%s", res->message);
  snprintf(r->auth, sizeof(r->auth), "%s", res->auth ? res->auth : "");
}

static void write_text(const char *path, const char *text, int mode) {
  FILE *fp = fopen(path, "w");
  assert_non_null(fp);
  fputs(text, fp);
  fclose(fp);
  chmod(path, (mode_t) mode);
}

/* Pulls reg.test/app:1 with `config` as the Docker config. */
static void pull_with(fake_t *f, tpuci__engine_t *e, const char *dir,
                      const char *config, pull_result_t *r) {
  char *path = tpuci__printf("%s/config.json", dir);
  tpuci__err_t err = {0, NULL};
  tpuci__puller_t *p;
  unlink(path);
  if (config != NULL) write_text(path, config, 0600);
  memset(r, 0, sizeof(*r));
  p = tpuci__pull_start(e, "reg.test/app:1", on_pull_progress, on_pulled, r, &err);
  assert_non_null(p);
  assert_int_equal(r->starts, 1);
  run_until(f, &r->done, 1);
  free(path);
}

/* The fake engine's last X-Registry-Auth, decoded. */
static json_t *sent_auth(void) {
  char *text = NULL;
  size_t len;
  json_t *j;
  assert_int_equal(tpuci__base64_decode(g_fake->auth, &text, &len), 0);
  j = json_loads(text, 0, NULL);
  free(text);
  assert_non_null(j);
  return j;
}

static void test_pull_credentials(void **state) {
  fake_t *f = *state;
  tpuci__err_t err = {0, NULL};
  tpuci__engine_t *e;
  tpuci__docker_host_t host;
  pull_result_t r;
  result_t v;
  int closed = 0;
  char dir[] = "/tmp/tpuci-pull-XXXXXX";
  char *sock = tpuci__printf("unix://%s", f->path), *bin, *path_env, *old_path;
  json_t *j;

  assert_non_null(mkdtemp(dir));
  bin = tpuci__printf("%s/bin", dir);
  mkdir(bin, 0700);
  old_path = tpuci__strdup(getenv("PATH"));
  path_env = tpuci__printf("%s:%s", bin, old_path);
  setenv("PATH", path_env, 1);
  setenv("DOCKER_CONFIG", dir, 1);
  tpuci__docker_host_parse(sock, &host, &err);
  assert_int_equal(tpuci__engine_new_host(&f->loop, &host, &e, &err), 0);
  res_init(&v);
  tpuci__engine_version(e, on_engine_done, &v);
  run_until(f, &v.done, 1);
  assert_int_equal(tpuci__engine_negotiate(e, v.json, &err), 0);
  res_free(&v);

  /* No config: nothing sent, refused, and the message says so. */
  pull_with(f, e, dir, NULL, &r);
  assert_false(r.ok);
  assert_true(r.denied);
  assert_string_equal(g_fake->auth, "");
  assert_non_null(strstr(r.message, "registry reg.test refused access"));
  assert_non_null(strstr(r.message, "no credentials were sent"));
  assert_non_null(strstr(r.message, "no basic auth credentials"));

  /* "auths": user and password, progress summed over two layers. */
  pull_with(f, e, dir, "{\"auths\": {\"https://reg.test\": {\"auth\": \"YWxpY2U6czNjcmV0\"}}}", &r);
  assert_true(r.ok);
  assert_string_equal(r.message, "");
  assert_int_equal(r.dones, 1);
  assert_int_equal(r.layers, 2);
  assert_int_equal(r.current, 4000);
  assert_int_equal(r.total, 4000);
  assert_string_equal(r.auth, g_fake->auth);
  j = sent_auth();
  assert_string_equal(json_string_value(json_object_get(j, "username")), "alice");
  assert_string_equal(json_string_value(json_object_get(j, "password")), "s3cret");
  assert_string_equal(json_string_value(json_object_get(j, "serveraddress")), "reg.test");
  json_decref(j);
  /* base64url: no '+' nor '/' in what goes into a header. */
  assert_null(strpbrk(g_fake->auth, "+/"));

  /* "credHelpers": the helper gets the server on stdin. */
  {
    char *h = tpuci__printf("%s/docker-credential-tpucitest", bin);
    write_text(h,
               "#!/bin/sh\n"
               "[ \"$1\" = get ] || exit 2\n"
               "read -r server\n"
               "[ \"$server\" = reg.test ] || { echo \"wrong server $server\"; exit 3; }\n"
               "echo '{\"ServerURL\":\"reg.test\",\"Username\":\"bob\",\"Secret\":\"hsecret\"}'\n",
               0700);
    free(h);
  }
  pull_with(f, e, dir,
            "{\"auths\": {\"reg.test\": {}}, \"credHelpers\": {\"reg.test\": \"tpucitest\"}}", &r);
  assert_true(r.ok);
  j = sent_auth();
  assert_string_equal(json_string_value(json_object_get(j, "username")), "bob");
  assert_string_equal(json_string_value(json_object_get(j, "password")), "hsecret");
  json_decref(j);

  /* "credsStore" with nothing for the server: anonymous, and said. */
  {
    char *h = tpuci__printf("%s/docker-credential-tpucinone", bin);
    write_text(h, "#!/bin/sh\necho 'credentials not found in native keychain'\nexit 1\n", 0700);
    free(h);
  }
  pull_with(f, e, dir, "{\"credsStore\": \"tpucinone\"}", &r);
  assert_false(r.ok);
  assert_true(r.denied);
  assert_string_equal(g_fake->auth, "");
  assert_non_null(strstr(r.message, "docker-credential-tpucinone (credsStore in"));
  assert_non_null(strstr(r.message, "has none for reg.test"));

  /* A helper that is not there fails the pull with its name. */
  pull_with(f, e, dir, "{\"credHelpers\": {\"reg.test\": \"absent\"}}", &r);
  assert_false(r.ok);
  assert_false(r.denied);
  assert_non_null(strstr(r.message, "docker-credential-absent: not found on PATH"));

  /* A config that is not JSON: no pull, and the message has no content. */
  {
    char *path = tpuci__printf("%s/config.json", dir);
    write_text(path, "{\"auths\": {\"reg.test\": {\"auth\": \"c2VjcmV0\"", 0600);
    assert_null(tpuci__pull_start(e, "reg.test/app:1", NULL, on_pulled, &r, &err));
    assert_int_equal(err.code, TPUCI_EIMAGE);
    assert_non_null(strstr(err.msg, path));
    assert_null(strstr(err.msg, "c2VjcmV0"));
    tpuci__err_clear(&err);
    unlink(path);
    free(path);
  }

  tpuci__engine_close(e, closed_cb, &closed);
  run_until(f, &closed, 1);
  tpuci__docker_host_free(&host);
  setenv("PATH", old_path, 1);
  unsetenv("DOCKER_CONFIG");
  {
    char *cmd = tpuci__printf("rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
  }
  free(old_path);
  free(path_env);
  free(bin);
  free(sock);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_get_and_post, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stream, setup, teardown),
      cmocka_unit_test_setup_teardown(test_engine_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_socket, setup, teardown),
      cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_close_cancels, setup, teardown),
      cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
      cmocka_unit_test_setup_teardown(test_many, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pull_credentials, setup, teardown),
  };
  if (getenv("TPUCI_TEST_FILTER")) cmocka_set_test_filter(getenv("TPUCI_TEST_FILTER"));
  return cmocka_run_group_tests_name("docker_http", tests, NULL, NULL);
}
