/* A child process on the loop (ssh.h): ssh itself, or sh around ssh
 * and tar for a copy. Done once it exited and its pipes reached EOF (or
 * TPUCI__SSHPROC_DRAIN_MS after its exit: something it left holds
 * them), and every handle closed. */
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ssh/ssh.h"

#define TPUCI__SSHPROC_DRAIN_MS 2000
/* The bytes of stderr kept for the last line. */
#define TPUCI__SSHPROC_TAIL 4096

static void tpuci__sshproc_closed(uv_handle_t *h) {
  tpuci__sshproc_t *p = h->data;
  if (--p->open > 0) return;
  p->on_done(p);
}

static void tpuci__sshproc_close(tpuci__sshproc_t *p, uv_handle_t *h) {
  if (!uv_is_closing(h)) uv_close(h, tpuci__sshproc_closed);
}

/* Once it exited and both pipes are done, the rest goes too. */
static void tpuci__sshproc_maybe_done(tpuci__sshproc_t *p) {
  if (!p->exited || p->reading > 0) return;
  tpuci__sshproc_close(p, (uv_handle_t *) &p->in);
  tpuci__sshproc_close(p, (uv_handle_t *) &p->timer);
  tpuci__sshproc_close(p, (uv_handle_t *) &p->proc);
}

static void tpuci__sshproc_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  static char slab[1 << 16];
  (void) h;
  (void) suggested;
  /* Output is handed on synchronously: one buffer serves every pipe. */
  buf->base = slab;
  buf->len = sizeof(slab);
}

static void tpuci__sshproc_keep_tail(tpuci__sshproc_t *p, const char *buf, size_t n) {
  if (n >= TPUCI__SSHPROC_TAIL) {
    p->tail.len = 0;
    tpuci__buf_add(&p->tail, buf + n - TPUCI__SSHPROC_TAIL, TPUCI__SSHPROC_TAIL);
    return;
  }
  if (p->tail.len + n > 2 * TPUCI__SSHPROC_TAIL) {
    size_t keep = TPUCI__SSHPROC_TAIL - n;
    memmove(p->tail.data, p->tail.data + p->tail.len - keep, keep);
    p->tail.len = keep;
  }
  tpuci__buf_add(&p->tail, buf, n);
}

static void tpuci__sshproc_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  tpuci__sshproc_t *p = s->data;
  int stream = s == (uv_stream_t *) &p->out ? 1 : 2;
  if (n > 0) {
    if (stream == 2) tpuci__sshproc_keep_tail(p, buf->base, (size_t) n);
    if (p->on_output) p->on_output(p, stream, buf->base, (size_t) n);
    return;
  }
  if (n == 0) return;
  /* EOF or an error: this pipe is done. */
  tpuci__sshproc_close(p, (uv_handle_t *) s);
  p->reading--;
  tpuci__sshproc_maybe_done(p);
}

static void tpuci__sshproc_drain(uv_timer_t *t) {
  tpuci__sshproc_t *p = t->data;
  if (!uv_is_closing((uv_handle_t *) &p->out)) {
    tpuci__sshproc_close(p, (uv_handle_t *) &p->out);
    p->reading--;
  }
  if (!uv_is_closing((uv_handle_t *) &p->err)) {
    tpuci__sshproc_close(p, (uv_handle_t *) &p->err);
    p->reading--;
  }
  tpuci__sshproc_maybe_done(p);
}

static void tpuci__sshproc_exit(uv_process_t *h, int64_t status, int signum) {
  tpuci__sshproc_t *p = h->data;
  p->exited = 1;
  p->in_open = 0;
  p->status = signum ? -1 : status;
  p->term_signal = signum;
  uv_timer_stop(&p->timer);
  uv_timer_start(&p->timer, tpuci__sshproc_drain, TPUCI__SSHPROC_DRAIN_MS, 0);
  tpuci__sshproc_maybe_done(p);
}

void tpuci__sshproc_spawn(tpuci__sshproc_t *p, uv_loop_t *loop, const tpuci__strv_t *argv,
                          int with_stdin) {
  uv_stdio_container_t io[3];
  int r;

  p->open = 5;
  p->reading = 2;
  p->status = -1;
  tpuci__buf_init(&p->tail);
  uv_pipe_init(loop, &p->in, 0);
  uv_pipe_init(loop, &p->out, 0);
  uv_pipe_init(loop, &p->err, 0);
  uv_timer_init(loop, &p->timer);
  p->proc.data = p->in.data = p->out.data = p->err.data = p->timer.data = p;

  memset(io, 0, sizeof(io));
  if (with_stdin) {
    io[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
    io[0].data.stream = (uv_stream_t *) &p->in;
  } else {
    io[0].flags = UV_IGNORE;
  }
  io[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  io[1].data.stream = (uv_stream_t *) &p->out;
  io[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  io[2].data.stream = (uv_stream_t *) &p->err;
  r = tpuci__ssh_spawn(loop, &p->proc, argv, io, 3, tpuci__sshproc_exit);
  if (r != 0) {
    p->spawn_error = r;
    p->exited = 1;
    p->reading = 0;
    tpuci__sshproc_close(p, (uv_handle_t *) &p->out);
    tpuci__sshproc_close(p, (uv_handle_t *) &p->err);
    tpuci__sshproc_maybe_done(p);
    return;
  }
  p->in_open = with_stdin;
  uv_read_start((uv_stream_t *) &p->out, tpuci__sshproc_alloc, tpuci__sshproc_read);
  uv_read_start((uv_stream_t *) &p->err, tpuci__sshproc_alloc, tpuci__sshproc_read);
}

int tpuci__sshproc_write(tpuci__sshproc_t *p, const char *line) {
  uv_buf_t b;
  int r;
  if (!p->in_open) return UV_EPIPE;
  b = uv_buf_init((char *) line, (unsigned) strlen(line));
  r = uv_try_write((uv_stream_t *) &p->in, &b, 1);
  if (r < 0) return r;
  /* At most PIPE_BUF bytes go in one piece or not at all. */
  return (size_t) r == b.len ? 0 : UV_EAGAIN;
}

void tpuci__sshproc_close_stdin(tpuci__sshproc_t *p) {
  if (!p->in_open) return;
  p->in_open = 0;
  tpuci__sshproc_close(p, (uv_handle_t *) &p->in);
}

/* Its whole process group (tpuci__ssh_spawn makes it a session of its
 * own): a describe command's sh dies with what it runs (gcloud), ssh
 * with its ProxyCommand. */
static void tpuci__sshproc_kill_cb(uv_timer_t *t) {
  tpuci__sshproc_t *p = t->data;
  if (p->exited) return;
  p->killed = 1;
  if (uv_kill(-p->proc.pid, SIGKILL) != 0) uv_process_kill(&p->proc, SIGKILL);
}

void tpuci__sshproc_deadline(tpuci__sshproc_t *p, uint64_t ms) {
  if (p->exited || p->killed) return;
  uv_timer_start(&p->timer, tpuci__sshproc_kill_cb, ms, 0);
}

char *tpuci__sshproc_last_line(const tpuci__sshproc_t *p) {
  return tpuci__ssh_last_line(p->tail.data ? p->tail.data : "", p->tail.len);
}
