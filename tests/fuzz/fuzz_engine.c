/* libFuzzer harness for what tpuci makes of the Docker Engine's answers:
 * the HTTP client (libcurl on the libuv loop, runtime/http/http.c), the
 * engine layer (engine.c: status and message, JSON, an image pull's
 * progress lines), the multiplexed output stream (demux.c) and the line
 * splitter of gang hosts (gang.c), and the JSON readers the driver
 * applies to answers
 * (the API version, labels of listed objects, an inspection).
 *
 * The input's first byte picks the endpoint; the rest is the raw answer
 * a fake engine, served on the same loop over a unix socket, sends to
 * the request before it closes the connection. The same bytes also go
 * straight into the demultiplexer and the line splitter, whole and in
 * pieces the input decides, which must give the same output.
 *
 * Oracles beyond "no crash, no sanitizer report": every call completes
 * exactly once, within a bounded number of loop turns, with a message
 * (empty when ok, which needs a 2xx status); the incremental parsers do
 * not depend on how their input is cut; the client closes leaving no
 * handle open. See run.sh (clang, -fsanitize=fuzzer) and replay.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <uv.h>

#include "runtime/engine/container.h"
#include "runtime/engine/demux.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/pull.h"
#include "runtime/engine/gang.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                          \
  do {                                                                    \
    if (!(c)) {                                                           \
      fprintf(stderr, "fuzz_engine: %s:%d: check failed: %s\n", __FILE__, \
              __LINE__, #c);                                              \
      abort();                                                            \
    }                                                                     \
  } while (0)

/* ------------------------------------------------------------------ */
/* The fake engine: answers each request with the input, then closes.  */

typedef struct {
  uv_pipe_t pipe;
  tpuci__buf_t in;
  int answered;
} conn_t;

static struct {
  int ready;
  uv_loop_t loop;
  uv_pipe_t server;
  uv_timer_t tick;
  char dir[64];
  char path[128];
  const char *answer;
  size_t answer_len;
  int conns;
} g;

static void conn_closed(uv_handle_t *h) {
  conn_t *c = h->data;
  tpuci__buf_free(&c->in);
  free(c);
  g.conns--;
}

static void conn_close(conn_t *c) {
  if (!uv_is_closing((uv_handle_t *) &c->pipe))
    uv_close((uv_handle_t *) &c->pipe, conn_closed);
}

static void wrote(uv_write_t *w, int status) {
  conn_t *c = w->data;
  (void) status;
  free(w);
  conn_close(c);
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
    conn_close(c);
    return;
  }
  tpuci__buf_add(&c->in, b->base, (size_t) n);
  free(b->base);
  if (c->answered || c->in.data == NULL || strstr(c->in.data, "\r\n\r\n") == NULL)
    return;
  /* The request is in (tpuci's engine calls here send no body). */
  c->answered = 1;
  if (g.answer_len == 0) {
    conn_close(c);
  } else {
    uv_write_t *w = malloc(sizeof(*w));
    uv_buf_t buf = uv_buf_init((char *) g.answer, (unsigned) g.answer_len);
    w->data = c;
    if (uv_write(w, (uv_stream_t *) &c->pipe, &buf, 1, wrote) != 0) {
      free(w);
      conn_close(c);
    }
  }
}

static void on_conn(uv_stream_t *server, int status) {
  conn_t *c;
  if (status != 0) return;
  c = calloc(1, sizeof(*c));
  tpuci__buf_init(&c->in);
  uv_pipe_init(server->loop, &c->pipe, 0);
  c->pipe.data = c;
  g.conns++;
  if (uv_accept(server, (uv_stream_t *) &c->pipe) != 0) {
    conn_close(c);
    return;
  }
  uv_read_start((uv_stream_t *) &c->pipe, on_alloc, on_read);
}

static void tick_cb(uv_timer_t *t) { (void) t; }

/* At exit, the socket and its folder go. */
static void fake_stop(void) {
  unlink(g.path);
  rmdir(g.dir);
}

static void fake_start(void) {
  if (g.ready) return;
  snprintf(g.dir, sizeof(g.dir), "/tmp/tpuci-fuzz-engine-XXXXXX");
  CHECK(mkdtemp(g.dir) != NULL);
  snprintf(g.path, sizeof(g.path), "%s/engine.sock", g.dir);
  CHECK(uv_loop_init(&g.loop) == 0);
  uv_pipe_init(&g.loop, &g.server, 0);
  CHECK(uv_pipe_bind(&g.server, g.path) == 0);
  CHECK(uv_listen((uv_stream_t *) &g.server, 64, on_conn) == 0);
  /* UV_RUN_ONCE blocks while the server listens: the tick bounds it. */
  uv_timer_init(&g.loop, &g.tick);
  uv_timer_start(&g.tick, tick_cb, 1, 1);
  uv_unref((uv_handle_t *) &g.tick);
  g.ready = 1;
  atexit(fake_stop);
}


/* ------------------------------------------------------------------ */
/* The client                                                          */

typedef struct {
  int done;
  int attached;
  tpuci__demux_t demux;
  tpuci__lines_t lines;
  uint64_t out_bytes;
} call_t;

static void on_lines(void *data, const char *buf, size_t len) {
  call_t *c = data;
  CHECK(len > 0 && buf[len - 1] == '\n');
  c->out_bytes += len;
}

static void on_output(void *data, int stream, const char *buf, size_t len) {
  call_t *c = data;
  CHECK(stream == 1 || stream == 2);
  tpuci__lines_feed(&c->lines, buf, len, on_lines, c);
}

static void on_chunk(void *data, const char *buf, size_t len) {
  call_t *c = data;
  CHECK(!c->done);
  tpuci__demux_feed(&c->demux, buf, len, on_output, c);
}

static void on_attached(void *data) {
  call_t *c = data;
  CHECK(!c->done && !c->attached);
  c->attached = 1;
}

static void check_labels(json_t *list) {
  size_t i;
  json_t *o;
  if (!json_is_array(list)) return;
  json_array_foreach(list, i, o) {
    int alive = tpuci__docker_run_alive(json_object_get(o, "Labels"));
    CHECK(alive >= -1 && alive <= 1);
  }
}

static tpuci__engine_t *g_eng;
static int g_mode;

static void on_done(void *data, const tpuci__engine_res_t *res) {
  call_t *c = data;
  CHECK(c->done == 0);
  c->done = 1;
  CHECK(res->message != NULL);
  if (res->ok) {
    CHECK(res->status >= 200 && res->status < 300);
    CHECK(res->error == 0);
    CHECK(res->message[0] == '\0');
  } else {
    CHECK(res->message[0] != '\0');
  }
  if (res->json == NULL) return;
  switch (g_mode) {
    case 0: {
      tpuci__err_t err = {0, NULL};
      if (tpuci__engine_negotiate(g_eng, res->json, &err) != 0) {
        CHECK(err.msg != NULL);
        tpuci__err_clear(&err);
      } else {
        CHECK(strncmp(g_eng->prefix, "/v1.", 4) == 0);
      }
      break;
    }
    case 6:
      check_labels(res->json);
      break;
    case 7: {
      /* What the driver reads of an inspection, and whether it is ours. */
      tpuci__kvlist_t labels = {0};
      json_t *body;
      json_t *state = json_object_get(res->json, "State");
      (void) json_is_true(json_object_get(state, "OOMKilled"));
      (void) json_integer_value(json_object_get(state, "ExitCode"));
      tpuci__ctr_labels(&labels, "run", "job", "inst", 1, 0);
      body = tpuci__net_create_body("n", &labels, 1);
      (void) tpuci__ctr_is_ours(res->json, body);
      json_decref(body);
      tpuci__kv_free(&labels);
      break;
    }
    default:
      (void) json_integer_value(json_object_get(res->json, "StatusCode"));
      (void) json_string_value(json_object_get(res->json, "Id"));
      break;
  }
}

static void closed_cb(void *data) { (*(int *) data)++; }

/* A pull's progress lines go through the sums the board shows. */
static void on_pull_line(void *data, json_t *line) {
  tpuci__pull_state_t *st = data;
  uint64_t cur, tot;
  int layers;
  tpuci__pull_state_line(st, line);
  tpuci__pull_state_sum(st, &cur, &tot, &layers);
  CHECK(layers >= 0 && (size_t) layers == st->n);
}

static void fuzz_client(int mode, const char *answer, size_t len) {
  tpuci__pull_state_t pulled = {NULL, 0, 0};
  tpuci__docker_host_t host;
  tpuci__err_t err = {0, NULL};
  call_t c;
  char *where;
  int spins = 0, closed = 0;

  fake_start();
  g.answer = answer;
  g.answer_len = len;
  where = tpuci__printf("unix://%s", g.path);
  CHECK(tpuci__docker_host_parse(where, &host, &err) == 0);
  free(where);
  CHECK(tpuci__engine_new_host(&g.loop, &host, &g_eng, &err) == 0);
  tpuci__docker_host_free(&host);
  memset(&c, 0, sizeof(c));
  tpuci__demux_init(&c.demux);
  tpuci__lines_init(&c.lines, "[w] ");
  g_mode = mode;
  switch (mode) {
    case 0: tpuci__engine_version(g_eng, on_done, &c); break;
    case 1: tpuci__engine_info(g_eng, on_done, &c); break;
    case 2:
      tpuci__engine_image_pull(g_eng,
                               &(tpuci__engine_pull_t){.ref = "tpuci-test/x:1",
                                                       .auth = "e30=",
                                                       .line = on_pull_line,
                                                       .line_data = &pulled},
                               on_done, &c);
      break;
    case 3: tpuci__engine_container_wait(g_eng, "c1", on_done, &c); break;
    case 4:
      tpuci__engine_container_attach(
          g_eng, "c1",
          &(tpuci__engine_attach_t){.attached = on_attached, .chunk = on_chunk, .chunk_data = &c},
          on_done, &c);
      break;
    case 5: tpuci__engine_container_logs(g_eng, "c1", on_chunk, &c, on_done, &c); break;
    case 6: tpuci__engine_container_list(g_eng, "tpuci.run", on_done, &c); break;
    default: tpuci__engine_container_inspect(g_eng, "c1", on_done, &c); break;
  }
  while (!c.done && spins++ < 200000) uv_run(&g.loop, UV_RUN_ONCE);
  if (!c.done) {
    fprintf(stderr, "fuzz_engine: the call never completed (mode %d)\n", mode);
    abort();
  }
  tpuci__demux_flush(&c.demux, on_output, &c);
  tpuci__lines_flush(&c.lines, on_lines, &c);
  tpuci__lines_free(&c.lines);
  tpuci__pull_state_free(&pulled);
  tpuci__engine_close(g_eng, closed_cb, &closed);
  spins = 0;
  while ((!closed || g.conns > 0) && spins++ < 200000) uv_run(&g.loop, UV_RUN_ONCE);
  CHECK(closed == 1);
  CHECK(g.conns == 0);
  g_eng = NULL;
}

/* ------------------------------------------------------------------ */
/* The incremental parsers, whole and in pieces                        */

typedef struct {
  tpuci__buf_t out[3];
  tpuci__lines_t lines;
  tpuci__buf_t lined;
} sink_t;

static void sink_lines(void *data, const char *buf, size_t len) {
  sink_t *s = data;
  tpuci__buf_add(&s->lined, buf, len);
}

static void sink_output(void *data, int stream, const char *buf, size_t len) {
  sink_t *s = data;
  CHECK(stream == 1 || stream == 2);
  tpuci__buf_add(&s->out[stream], buf, len);
  tpuci__lines_feed(&s->lines, buf, len, sink_lines, s);
}

static void sink_init(sink_t *s) {
  int i;
  for (i = 0; i < 3; i++) tpuci__buf_init(&s->out[i]);
  tpuci__buf_init(&s->lined);
  tpuci__lines_init(&s->lines, "[worker-0] ");
}

static void sink_free(sink_t *s) {
  int i;
  for (i = 0; i < 3; i++) tpuci__buf_free(&s->out[i]);
  tpuci__buf_free(&s->lined);
  tpuci__lines_free(&s->lines);
}

static int same(const tpuci__buf_t *a, const tpuci__buf_t *b) {
  return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

static void fuzz_parsers(const unsigned char *cuts, const char *buf, size_t len) {
  tpuci__demux_t whole, parts;
  sink_t a, b;
  size_t off = 0, k = 0;
  int i;

  sink_init(&a);
  sink_init(&b);
  tpuci__demux_init(&whole);
  tpuci__demux_feed(&whole, buf, len, sink_output, &a);
  tpuci__demux_flush(&whole, sink_output, &a);
  tpuci__lines_flush(&a.lines, sink_lines, &a);

  tpuci__demux_init(&parts);
  while (off < len) {
    size_t n = (size_t) cuts[k++ % 4] % 23 + 1;
    if (n > len - off) n = len - off;
    tpuci__demux_feed(&parts, buf + off, n, sink_output, &b);
    off += n;
  }
  tpuci__demux_flush(&parts, sink_output, &b);
  tpuci__lines_flush(&b.lines, sink_lines, &b);

  CHECK(whole.raw == parts.raw);
  for (i = 1; i <= 2; i++) CHECK(same(&a.out[i], &b.out[i]));
  CHECK(same(&a.lined, &b.lined));
  /* Nothing is lost or made up: the payload is at most the input. */
  CHECK(a.out[1].len + a.out[2].len <= len);
  sink_free(&a);
  sink_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const unsigned char no_cuts[4] = {7, 1, 13, 3};
  const unsigned char *cuts = size >= 5 ? data + 1 : no_cuts;
  if (size == 0) return 0;
  fuzz_parsers(cuts, (const char *) data + 1, size - 1);
  fuzz_client(data[0] % 8, (const char *) data + 1, size - 1);
  return 0;
}

