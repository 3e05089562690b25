/* A credential helper on the loop (credhelper.h). Every handle is closed
 * before the callback runs, so its owner may free what it likes then.
 * The server goes to the helper's stdin from a memory file, not a pipe: a
 * helper that exits without reading it must not raise SIGPIPE in tpuci's
 * process, which is not tpuci's to ignore in a program that embeds it. */
#define _GNU_SOURCE /* memfd_create */
#include "runtime/engine/credhelper.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/util.h"

/* A helper answers with a few hundred bytes; more is not a helper. */
#define TPUCI__CREDHELPER_MAX (64 * 1024)

struct tpuci__credhelper_s {
  uv_process_t proc;
  uv_pipe_t out;
  uv_timer_t timer;
  tpuci__buf_t buf;
  char *helper;
  char *server;            /* what goes to stdin */
  uint64_t timeout_ms;
  int handles;             /* open ones */
  int spawned;
  int spawn_error;
  int exited, eof, finishing;
  int64_t exit_status;
  int term_signal;
  int timed_out, cancelled;
  tpuci__credhelper_cb cb;
  void *data;
};

static void tpuci__ch_report(tpuci__credhelper_t *h) {
  char *why = NULL;
  int status = 0;
  const char *out = h->buf.data ? h->buf.data : "";
  if (h->cancelled) {
    status = UV_ECANCELED;
    why = tpuci__strdup("cancelled");
  } else if (h->spawn_error != 0) {
    status = h->spawn_error;
    why = h->spawn_error == UV_ENOENT
              ? tpuci__printf("%s: not found on PATH", h->helper)
              : tpuci__printf("%s: %s", h->helper, uv_strerror(h->spawn_error));
  } else if (h->timed_out) {
    status = UV_ETIMEDOUT;
    why = tpuci__printf("%s get: no answer within %llus; killed", h->helper,
                        (unsigned long long) (h->timeout_ms / 1000));
  } else if (h->term_signal != 0 || h->exit_status != 0) {
    /* What every helper prints when it has nothing for the server
     * (docker-credential-helpers' credentials.ErrCredentialsNotFound). */
    if (strstr(out, "credentials not found") != NULL) {
      status = TPUCI__CREDHELPER_NONE;
    } else {
      char *line = tpuci__strndup(out, strcspn(out, "\r\n"));
      status = UV_EIO;
      why = h->term_signal != 0
                ? tpuci__printf("%s get: killed by signal %d", h->helper, h->term_signal)
                : tpuci__printf("%s get: exit %lld%s%s", h->helper,
                                (long long) h->exit_status, line[0] ? ": " : "", line);
      free(line);
    }
  }
  h->cb(h->data, status, out, status == 0 ? h->buf.len : 0, why ? why : "");
  free(why);
}

static void tpuci__ch_closed(uv_handle_t *handle) {
  tpuci__credhelper_t *h = handle->data;
  if (--h->handles > 0) return;
  tpuci__ch_report(h);
  /* The answer may hold a secret. */
  if (h->buf.data != NULL) memset(h->buf.data, 0, h->buf.len);
  tpuci__buf_free(&h->buf);
  free(h->helper);
  free(h->server);
  free(h);
}

static void tpuci__ch_close(uv_handle_t *handle) {
  if (!uv_is_closing(handle)) uv_close(handle, tpuci__ch_closed);
}

static void tpuci__ch_finish(tpuci__credhelper_t *h) {
  if (h->finishing) return;
  h->finishing = 1;
  tpuci__ch_close((uv_handle_t *) &h->proc);
  tpuci__ch_close((uv_handle_t *) &h->out);
  tpuci__ch_close((uv_handle_t *) &h->timer);
}

static void tpuci__ch_maybe_done(tpuci__credhelper_t *h) {
  if (h->exited && h->eof) tpuci__ch_finish(h);
}

static void tpuci__ch_on_exit(uv_process_t *p, int64_t status, int signum) {
  tpuci__credhelper_t *h = p->data;
  h->exited = 1;
  h->exit_status = status;
  h->term_signal = signum;
  tpuci__ch_maybe_done(h);
}

static void tpuci__ch_alloc(uv_handle_t *handle, size_t size, uv_buf_t *buf) {
  static char chunk[4096];
  (void) handle;
  (void) size;
  /* Copied into h->buf at once: one static buffer serves every read. */
  *buf = uv_buf_init(chunk, sizeof(chunk));
}

static void tpuci__ch_on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  tpuci__credhelper_t *h = s->data;
  if (n > 0 && h->buf.len + (size_t) n <= TPUCI__CREDHELPER_MAX) {
    tpuci__buf_add(&h->buf, buf->base, (size_t) n);
    return;
  }
  if (n == 0) return;
  /* EOF, an error, or far too much: the answer is what came so far. */
  uv_read_stop(s);
  h->eof = 1;
  tpuci__ch_maybe_done(h);
}

static void tpuci__ch_on_timer(uv_timer_t *t) {
  tpuci__credhelper_t *h = t->data;
  if (h->exited) {
    /* Exited, but something it started holds stdout open. */
    tpuci__ch_finish(h);
    return;
  }
  h->timed_out = 1;
  uv_process_kill(&h->proc, SIGKILL);
}

/* A file holding `server`, read from its start: the helper's stdin. An
 * fd, or a negative errno. */
static int tpuci__ch_stdin(const char *server) {
  size_t len = strlen(server), done = 0;
  int fd = memfd_create("tpuci-credhelper", MFD_CLOEXEC);
  if (fd < 0) return TPUCI__ERRNO;
  while (done < len) {
    ssize_t n = write(fd, server + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = TPUCI__ERRNO;
      close(fd);
      return err;
    }
    done += (size_t) n;
  }
  if (lseek(fd, 0, SEEK_SET) != 0) {
    int err = TPUCI__ERRNO;
    close(fd);
    return err;
  }
  return fd;
}

static int tpuci__ch_spawn(tpuci__credhelper_t *h, uv_loop_t *loop) {
  char *args[3];
  uv_process_options_t opts;
  uv_stdio_container_t stdio[3];
  int rc, in;

  args[0] = h->helper;
  args[1] = (char *) "get";
  args[2] = NULL;
  memset(&opts, 0, sizeof(opts));
  memset(stdio, 0, sizeof(stdio));
  in = tpuci__ch_stdin(h->server);
  if (in < 0) return in;
  stdio[0].flags = UV_INHERIT_FD;
  stdio[0].data.fd = in;
  stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  stdio[1].data.stream = (uv_stream_t *) &h->out;
  stdio[2].flags = UV_IGNORE;
  opts.file = h->helper;
  opts.args = args;
  opts.stdio = stdio;
  opts.stdio_count = 3;
  opts.exit_cb = tpuci__ch_on_exit;
  rc = uv_spawn(loop, &h->proc, &opts);
  close(in);
  if (rc != 0) return rc;
  h->spawned = 1;
  uv_read_start((uv_stream_t *) &h->out, tpuci__ch_alloc, tpuci__ch_on_read);
  return 0;
}

tpuci__credhelper_t *tpuci__credhelper_get(uv_loop_t *loop, const char *helper,
                                           const char *server,
                                           uint64_t timeout_ms,
                                           tpuci__credhelper_cb cb, void *data) {
  tpuci__credhelper_t *h = tpuci__calloc(1, sizeof(*h));
  h->helper = tpuci__strdup(helper);
  h->server = tpuci__strdup(server);
  h->timeout_ms = timeout_ms;
  h->cb = cb;
  h->data = data;
  tpuci__buf_init(&h->buf);
  uv_pipe_init(loop, &h->out, 0);
  uv_timer_init(loop, &h->timer);
  h->out.data = h->timer.data = h->proc.data = h;
  h->handles = 3;
  h->spawn_error = tpuci__ch_spawn(h, loop);
  if (h->spawn_error != 0) {
    /* uv_spawn() wants uv_close() on the process even when it failed;
     * closing makes the callback come from the loop, as promised. */
    tpuci__ch_finish(h);
    return h;
  }
  uv_timer_start(&h->timer, tpuci__ch_on_timer, timeout_ms, 0);
  return h;
}

void tpuci__credhelper_cancel(tpuci__credhelper_t *h) {
  if (h->finishing || h->cancelled) return;
  h->cancelled = 1;
  if (!h->exited) uv_process_kill(&h->proc, SIGKILL);
}
