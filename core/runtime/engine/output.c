#include "runtime/engine/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void tpuci__ctrout_init(tpuci__ctrout_t *o, tpuci__attempt_t *a, const char *host) {
  char prefix[64];
  memset(o, 0, sizeof(*o));
  o->a = a;
  o->log_fd = -1;
  tpuci__demux_init(&o->demux);
  o->gang_host = host != NULL;
  if (host != NULL) snprintf(prefix, sizeof(prefix), "[%s] ", host);
  tpuci__lines_init(&o->lines[0], host != NULL ? prefix : NULL);
  tpuci__lines_init(&o->lines[1], host != NULL ? prefix : NULL);
}

void tpuci__ctrout_open_log(tpuci__ctrout_t *o, char *path) {
  free(o->log_path);
  o->log_path = path;
  /* The attempt's folder is made at its first output; a host's log is
   * opened before that. */
  if (tpuci__mkdir_p(o->a->dir, 0755) == 0)
    o->log_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_APPEND, 0644);
  if (o->log_fd < 0) tpuci__attempt_write_error(o->a, path, TPUCI__ERRNO);
}

static void tpuci__ctrout_log_write(tpuci__ctrout_t *o, const char *buf, size_t len) {
  int r;
  if (o->log_fd < 0 || (r = tpuci__write_all(o->log_fd, buf, len)) == 0) return;
  /* Its lines are still in the attempt's log. */
  tpuci__attempt_write_error(o->a, o->log_path, r);
  close(o->log_fd);
  o->log_fd = -1;
}

typedef struct {
  tpuci__ctrout_t *o;
  int stream;
} tpuci__ctrout_lines_t;

static void tpuci__ctrout_on_lines(void *p, const char *buf, size_t len) {
  tpuci__ctrout_lines_t *l = p;
  tpuci__attempt_output(l->o->a, l->stream, buf, len);
}

/* Output of stream k (0, 1) on its way to the attempt. */
static void tpuci__ctrout_pass(tpuci__ctrout_t *o, int k, const char *buf, size_t len) {
  tpuci__ctrout_lines_t l;
  if (len == 0) return;
  if (!o->gang_host) {
    tpuci__attempt_output(o->a, k + 1, buf, len);
    return;
  }
  tpuci__ctrout_log_write(o, buf, len);
  l.o = o;
  l.stream = k + 1;
  tpuci__lines_feed(&o->lines[k], buf, len, tpuci__ctrout_on_lines, &l);
}

void tpuci__ctrout_ctl(tpuci__ctrout_t *o, const char *key,
                       void (*ctl)(void *data, int stream, const char *line, size_t len),
                       void *data) {
  free(o->ctl_key);
  free(o->ctl_mid);
  o->ctl_key = tpuci__printf("%s ", key);
  o->ctl_mid = tpuci__printf("%s results ", key);
  o->ctl = ctl;
  o->ctl_data = data;
}

/* A line of ours, whole (or cut by the stream's end). */
static void tpuci__ctrout_ctl_line(tpuci__ctrout_t *o, int k) {
  size_t klen = strlen(o->ctl_key);
  tpuci__buf_t *h = &o->cs[k].hold;
  o->ctl(o->ctl_data, k + 1, h->data + klen, h->len - klen);
  h->len = 0;
  o->cs[k].ours = 0;
}

/* Takes tpuci's own lines out of stream k. A line that starts like
 * "KEY " is held until it is known (a few bytes) and, when it is one of
 * ours, until its newline; other lines pass as they come. Within a line,
 * "KEY results " starts one of ours too: the engine's log keeps a line
 * left without its newline (a killed pytest's progress) and the next
 * write as one line, and the results block comes right after such a
 * line, which then ends there (a newline is added, as at a stream's
 * end). */
static void tpuci__ctrout_filter(tpuci__ctrout_t *o, int k, const char *buf, size_t len) {
  while (len > 0) {
    tpuci__buf_t *h = &o->cs[k].hold;
    size_t n = 0;
    if (o->cs[k].ours) {
      const char *nl = memchr(buf, '\n', len);
      n = nl ? (size_t) (nl - buf) : len;
      /* Past TPUCI__CTL_LINE_MAX the line is cut (its checks fail). */
      if (h->len + n <= TPUCI__CTL_LINE_MAX) tpuci__buf_add(h, buf, n);
      if (nl) {
        tpuci__ctrout_ctl_line(o, k);
        o->cs[k].mid = 0;
        n++;
      }
    } else if (h->len > 0) {
      /* Held: what may start one of ours. */
      const char *want = o->cs[k].hold_mid ? o->ctl_mid : o->ctl_key;
      size_t wlen = strlen(want);
      n = wlen - h->len < len ? wlen - h->len : len;
      if (memcmp(buf, want + h->len, n) != 0) {
        /* The line's: what was held, then this byte again, within it. */
        tpuci__ctrout_pass(o, k, h->data, h->len);
        h->len = 0;
        o->cs[k].mid = 1;
        n = 0;
      } else {
        tpuci__buf_add(h, buf, n);
        if (h->len == wlen) {
          /* Within a line, that line ends here; what was held,
           * "KEY results ", starts ours. */
          if (o->cs[k].hold_mid) tpuci__ctrout_pass(o, k, "\n", 1);
          o->cs[k].ours = 1;
        }
      }
    } else if (!o->cs[k].mid) {
      /* A line's start. */
      if (buf[0] == o->ctl_key[0]) {
        tpuci__buf_add(h, buf, 1);
        o->cs[k].hold_mid = 0;
        n = 1;
      } else {
        o->cs[k].mid = 1;
      }
    } else {
      /* Within a line: up to its end, or to what may start ours. */
      while (n < len && buf[n] != '\n' && buf[n] != o->ctl_mid[0]) n++;
      if (n < len && buf[n] == '\n') {
        n++;
        tpuci__ctrout_pass(o, k, buf, n);
        o->cs[k].mid = 0;
      } else {
        tpuci__ctrout_pass(o, k, buf, n);
        if (n < len) {
          tpuci__buf_add(h, buf + n, 1);
          o->cs[k].hold_mid = 1;
          n++;
        }
      }
    }
    buf += n;
    len -= n;
  }
}

static void tpuci__ctrout_on_output(void *p, int stream, const char *buf, size_t len) {
  tpuci__ctrout_t *o = p;
  int k = stream == 2 ? 1 : 0;
  if (o->skip[k] > 0) {
    size_t d = o->skip[k] < len ? (size_t) o->skip[k] : len;
    o->skip[k] -= d;
    buf += d;
    len -= d;
    if (len == 0) return;
  }
  o->seen[k] += len;
  if (o->ctl_key != NULL) tpuci__ctrout_filter(o, k, buf, len);
  else tpuci__ctrout_pass(o, k, buf, len);
}

void tpuci__ctrout_chunk(void *p, const char *buf, size_t len) {
  tpuci__ctrout_t *o = p;
  tpuci__demux_feed(&o->demux, buf, len, tpuci__ctrout_on_output, o);
}

void tpuci__ctrout_flush(tpuci__ctrout_t *o) {
  tpuci__ctrout_lines_t l;
  int k;
  tpuci__demux_flush(&o->demux, tpuci__ctrout_on_output, o);
  for (k = 0; k < 2 && o->ctl_key != NULL; k++) {
    /* The stream ended within a line. */
    if (o->cs[k].ours) {
      tpuci__ctrout_ctl_line(o, k);
    } else {
      tpuci__buf_t *h = &o->cs[k].hold;
      tpuci__ctrout_pass(o, k, h->data, h->len);
      h->len = 0;
    }
    o->cs[k].mid = 0;
  }
  if (!o->gang_host) return;
  l.o = o;
  for (l.stream = 1; l.stream <= 2; l.stream++)
    tpuci__lines_flush(&o->lines[l.stream - 1], tpuci__ctrout_on_lines, &l);
}

void tpuci__ctrout_rewind(tpuci__ctrout_t *o) {
  o->skip[0] = o->seen[0];
  o->skip[1] = o->seen[1];
  tpuci__demux_init(&o->demux);
}

void tpuci__ctrout_free(tpuci__ctrout_t *o) {
  tpuci__lines_free(&o->lines[0]);
  tpuci__lines_free(&o->lines[1]);
  tpuci__buf_free(&o->cs[0].hold);
  tpuci__buf_free(&o->cs[1].hold);
  free(o->ctl_key);
  free(o->ctl_mid);
  o->ctl_key = o->ctl_mid = NULL;
  if (o->log_fd >= 0) close(o->log_fd);
  o->log_fd = -1;
  free(o->log_path);
  o->log_path = NULL;
}

void tpuci__ctrout_read_end(tpuci__ctrout_t *o, const char *kind, const char *name, const char *how,
                            const tpuci__engine_res_t *res) {
  char *m;
  tpuci__ctrout_flush(o);
  if (res->ok || res->error == UV_ECANCELED) return;
  m = tpuci__printf("the output of %s %s may be incomplete: %s: %s", kind, name, how, res->message);
  tpuci__attempt_message(o->a, m);
  free(m);
}
