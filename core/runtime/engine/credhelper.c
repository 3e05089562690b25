/* A credential helper on the loop (credhelper.h). Every handle is closed
 * and the helper reaped before the callback runs, so its owner may free
 * what it likes then.
 * The server goes to the helper's stdin from a memory file, not a pipe: a
 * helper that exits without reading it must not raise SIGPIPE in tpuci's
 * process, which is not tpuci's to ignore in a program that embeds it. */
#define _GNU_SOURCE /* memfd_create, memmem */
#include "runtime/engine/credhelper.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/util.h"

/* A helper answers with a few hundred bytes; more is not a helper. What
 * comes past this is read and dropped, so the helper never blocks. */
#define TPUCI__CREDHELPER_MAX (64 * 1024)
/* Of stderr, only the first line is ever quoted. */
#define TPUCI__CREDHELPER_ERR_MAX 4096

/* One of the helper's output pipes (its data is the helper). */
typedef struct {
  uv_pipe_t pipe;
  tpuci__buf_t buf;
  size_t max;
  int reading;
} tpuci__ch_stream_t;

struct tpuci__credhelper_s {
  uv_process_t proc;
  tpuci__ch_stream_t out, err;
  uv_timer_t timer;
  char *helper;
  char *server; /* what goes to stdin */
  uint64_t timeout_ms;
  int handles; /* open ones */
  int spawn_error;
  int exited, finishing;
  int64_t exit_status;
  int term_signal;
  int timed_out, cancelled;
  tpuci__credhelper_cb cb;
  void *data;
};

/* Quoting stderr. */

static int tpuci__ch_sep(unsigned char c) {
  return c == ' ' || c == '\t' || (c != '\0' && strchr("\"'`,;:=()[]{}<>", c) != NULL);
}

/* The strings of stdout that may be secrets (credhelper.h). */
static void tpuci__ch_known(const char *out, size_t len, tpuci__strv_t *known) {
  json_t *j = json_loadb(out, len, 0, NULL);
  size_t i = 0;
  if (json_is_object(j)) {
    const char *key;
    json_t *v;
    json_object_foreach(j, key, v) {
      if (json_is_string(v) && strcmp(key, "ServerURL") != 0 && strcmp(key, "Username") != 0)
        tpuci__strv_push(known, json_string_value(v));
    }
    json_decref(j);
    return;
  }
  json_decref(j);
  while (i < len) {
    size_t start;
    while (i < len && (tpuci__ch_sep((unsigned char) out[i]) || out[i] == '\n' || out[i] == '\r' ||
                       out[i] == '\0'))
      i++;
    start = i;
    while (i < len && !tpuci__ch_sep((unsigned char) out[i]) && out[i] != '\n' && out[i] != '\r' &&
           out[i] != '\0')
      i++;
    if (i > start) tpuci__strv_take(known, tpuci__strndup(out + start, i - start));
  }
}

/* The first line of err that is not blank, cut to the quote's length at
 * a character's start, controls, line and paragraph separators as
 * spaces and bytes that are not UTF-8 as '?'. A new string. */
static char *tpuci__ch_first_line(const char *err, size_t len) {
  const unsigned char *p = (const unsigned char *) err, *end = p + len;
  tpuci__buf_t b;
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "");
  for (; p < end; p++) {
    const unsigned char *q = p;
    while (q < end && *q != '\n' && *q != '\r') q++;
    while (p < q && (*p == ' ' || *p == '\t')) p++;
    if (p == q) continue;
    while (p < q) {
      size_t n = *p < 0x80 ? 1 : tpuci__utf8_len(p, q);
      if (b.len + (n ? n : 1) > TPUCI__CREDHELPER_QUOTE_MAX) break;
      if (n == 0) {
        tpuci__buf_add(&b, "?", 1);
        p++;
        continue;
      }
      if ((n == 1 && (*p < 0x20 || *p == 0x7f)) || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) ||
          (n == 3 && p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)))
        tpuci__buf_add(&b, " ", 1);
      else tpuci__buf_add(&b, (const char *) p, n);
      p += n;
    }
    break;
  }
  while (b.len > 0 && b.data[b.len - 1] == ' ') b.data[--b.len] = '\0';
  return tpuci__buf_steal(&b);
}

static int tpuci__ch_looks_secret(const char *w, size_t n) {
  size_t i;
  if (n >= 16) return 1;
  if (n < 8) return 0;
  for (i = 0; i < n; i++) {
    char c = w[i];
    if (c >= '0' && c <= '9') return 1;
    if (c >= 'A' && c <= 'Z' && i > 0) return 1;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '-')) return 1;
  }
  return 0;
}

static int tpuci__ch_in(const char *hay, const char *w, size_t n) {
  return hay != NULL && memmem(hay, strlen(hay), w, n) != NULL;
}

char *tpuci__credhelper_quote(const char *err, size_t errlen, const char *out, size_t outlen,
                              const char *server, const char *helper) {
  char *line = tpuci__ch_first_line(err ? err : "", err ? errlen : 0);
  size_t len = strlen(line), i, k;
  unsigned char *mark = tpuci__calloc(len + 1, 1);
  tpuci__strv_t known = {NULL, 0, 0};
  tpuci__buf_t b;
  int kept = 0;

  if (out != NULL) tpuci__ch_known(out, outlen, &known);
  for (k = 0; k < known.len; k++) {
    const char *s = known.items[k];
    size_t sl = strlen(s), win = sl < 6 ? sl : 6;
    if (sl < 4) continue;
    for (i = 0; i + win <= sl; i++) {
      const char *at = line, *hit;
      while ((hit = memmem(at, len - (size_t) (at - line), s + i, win)) != NULL) {
        memset(mark + (hit - line), 1, win);
        at = hit + 1;
      }
    }
  }
  tpuci__buf_init(&b);
  for (i = 0; i < len;) {
    size_t start = i, j;
    int secret = 0;
    if (tpuci__ch_sep((unsigned char) line[i])) {
      tpuci__buf_add(&b, line + i, 1);
      i++;
      continue;
    }
    while (i < len && !tpuci__ch_sep((unsigned char) line[i])) i++;
    for (j = start; j < i && !secret; j++) secret = mark[j];
    if (!secret && tpuci__ch_looks_secret(line + start, i - start) &&
        !tpuci__ch_in(server, line + start, i - start) &&
        !tpuci__ch_in(helper, line + start, i - start))
      secret = 1;
    if (secret) {
      tpuci__buf_adds(&b, "***");
    } else {
      tpuci__buf_add(&b, line + start, i - start);
      kept = 1;
    }
  }
  /* Nothing of the line is kept past its use. */
  for (k = 0; k < known.len; k++) memset(known.items[k], 0, strlen(known.items[k]));
  tpuci__strv_free(&known);
  memset(line, 0, len);
  free(line);
  free(mark);
  if (!kept) {
    tpuci__buf_free(&b);
    return NULL;
  }
  return tpuci__buf_steal(&b);
}

/* The helper. */

/* " (stderr: ...)" for a failed helper's message, or "". New string. */
static char *tpuci__ch_said(const tpuci__credhelper_t *h) {
  char *q = tpuci__credhelper_quote(h->err.buf.data, h->err.buf.len, h->out.buf.data,
                                    h->out.buf.len, h->server, h->helper);
  char *s = q ? tpuci__printf(" (stderr: %s)", q) : tpuci__strdup("");
  free(q);
  return s;
}

static void tpuci__ch_report(tpuci__credhelper_t *h) {
  char *why = NULL;
  int status = 0;
  const char *out = h->out.buf.data ? h->out.buf.data : "";
  const char *err = h->err.buf.data ? h->err.buf.data : "";
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
    if (strstr(out, "credentials not found") != NULL ||
        strstr(err, "credentials not found") != NULL) {
      status = TPUCI__CREDHELPER_NONE;
    } else {
      /* Never stdout: a helper that fails may still have printed the
       * secret there. */
      char *said = tpuci__ch_said(h);
      status = UV_EIO;
      why = h->term_signal != 0
                ? tpuci__printf("%s get: killed by signal %d%s", h->helper, h->term_signal, said)
                : tpuci__printf("%s get: exit %lld%s", h->helper, (long long) h->exit_status, said);
      free(said);
    }
  }
  h->cb(h->data, status, out, status == 0 ? h->out.buf.len : 0, why ? why : "");
  free(why);
}

static void tpuci__ch_wipe(tpuci__buf_t *b) {
  /* The answer may hold a secret. */
  if (b->data != NULL) memset(b->data, 0, b->len);
  tpuci__buf_free(b);
}

static void tpuci__ch_closed(uv_handle_t *handle) {
  tpuci__credhelper_t *h = handle->data;
  if (--h->handles > 0) return;
  tpuci__ch_report(h);
  tpuci__ch_wipe(&h->out.buf);
  tpuci__ch_wipe(&h->err.buf);
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
  tpuci__ch_close((uv_handle_t *) &h->out.pipe);
  tpuci__ch_close((uv_handle_t *) &h->err.pipe);
  tpuci__ch_close((uv_handle_t *) &h->timer);
}

/* Done once the helper was reaped and nothing is read any more. */
static void tpuci__ch_maybe_done(tpuci__credhelper_t *h) {
  if (h->exited && !h->out.reading && !h->err.reading) tpuci__ch_finish(h);
}

static void tpuci__ch_stop_reading(tpuci__ch_stream_t *s) {
  if (!s->reading) return;
  s->reading = 0;
  uv_read_stop((uv_stream_t *) &s->pipe);
}

/* Kills the helper's process group (its pid is the group's id, and what
 * it started is in it unless it left), and reads no more. */
static void tpuci__ch_kill(tpuci__credhelper_t *h) {
  if (h->proc.pid > 0) kill(-h->proc.pid, SIGKILL);
  tpuci__ch_stop_reading(&h->out);
  tpuci__ch_stop_reading(&h->err);
}

static void tpuci__ch_on_exit(uv_process_t *p, int64_t status, int signum) {
  tpuci__credhelper_t *h = p->data;
  h->exited = 1;
  h->exit_status = status;
  h->term_signal = signum;
  /* Whatever it left behind goes too: it cannot hold the pipes open and
   * outlive tpuci. What it printed is in the pipes and still read. */
  kill(-p->pid, SIGKILL);
  tpuci__ch_maybe_done(h);
}

static void tpuci__ch_alloc(uv_handle_t *handle, size_t size, uv_buf_t *buf) {
  static char chunk[4096];
  (void) handle;
  (void) size;
  /* Copied into the stream's buffer at once: one static buffer serves
   * every read. */
  *buf = uv_buf_init(chunk, sizeof(chunk));
}

static void tpuci__ch_on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf) {
  tpuci__credhelper_t *h = st->data;
  tpuci__ch_stream_t *s = st == (uv_stream_t *) &h->out.pipe ? &h->out : &h->err;
  if (n > 0) {
    size_t room = s->buf.len < s->max ? s->max - s->buf.len : 0;
    tpuci__buf_add(&s->buf, buf->base, (size_t) n < room ? (size_t) n : room);
    return;
  }
  if (n == 0) return;
  /* EOF or an error: the answer is what came so far. */
  tpuci__ch_stop_reading(s);
  tpuci__ch_maybe_done(h);
}

static void tpuci__ch_on_timer(uv_timer_t *t) {
  tpuci__credhelper_t *h = t->data;
  /* Not exited: it never answered. Exited: something it started left its
   * group and holds a pipe open. Either way, nothing more is waited for
   * but the helper's own end. */
  if (!h->exited) h->timed_out = 1;
  tpuci__ch_kill(h);
  tpuci__ch_maybe_done(h);
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
  stdio[1].data.stream = (uv_stream_t *) &h->out.pipe;
  stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  stdio[2].data.stream = (uv_stream_t *) &h->err.pipe;
  opts.file = h->helper;
  opts.args = args;
  opts.stdio = stdio;
  opts.stdio_count = 3;
  opts.exit_cb = tpuci__ch_on_exit;
  /* setsid(): a session and process group of its own, so that one
   * kill() reaches whatever it starts, and no terminal to prompt on. */
  opts.flags = UV_PROCESS_DETACHED;
  rc = uv_spawn(loop, &h->proc, &opts);
  close(in);
  if (rc != 0) return rc;
  h->out.reading = h->err.reading = 1;
  uv_read_start((uv_stream_t *) &h->out.pipe, tpuci__ch_alloc, tpuci__ch_on_read);
  uv_read_start((uv_stream_t *) &h->err.pipe, tpuci__ch_alloc, tpuci__ch_on_read);
  return 0;
}

static void tpuci__ch_stream_init(tpuci__credhelper_t *h, tpuci__ch_stream_t *s, uv_loop_t *loop,
                                  size_t max) {
  uv_pipe_init(loop, &s->pipe, 0);
  s->pipe.data = h;
  s->max = max;
  tpuci__buf_init(&s->buf);
}

tpuci__credhelper_t *tpuci__credhelper_get(uv_loop_t *loop, const char *helper, const char *server,
                                           uint64_t timeout_ms, tpuci__credhelper_cb cb,
                                           void *data) {
  tpuci__credhelper_t *h = tpuci__calloc(1, sizeof(*h));
  h->helper = tpuci__strdup(helper);
  h->server = tpuci__strdup(server);
  h->timeout_ms = timeout_ms;
  h->cb = cb;
  h->data = data;
  tpuci__ch_stream_init(h, &h->out, loop, TPUCI__CREDHELPER_MAX);
  tpuci__ch_stream_init(h, &h->err, loop, TPUCI__CREDHELPER_ERR_MAX);
  uv_timer_init(loop, &h->timer);
  h->timer.data = h->proc.data = h;
  h->handles = 4;
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
  tpuci__ch_kill(h);
  tpuci__ch_maybe_done(h);
}
