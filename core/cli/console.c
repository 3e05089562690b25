/* Console output: one line per attempt start and end, the tail of a
 * failed attempt's log, and a summary at the end. No escape codes unless
 * colour was asked for (a terminal without NO_COLOR, or --color=always). */
#include "console.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define C_RED "\033[31m"
#define C_GREEN "\033[32m"
#define C_YELLOW "\033[33m"
#define C_DIM "\033[2m"
#define C_BOLD "\033[1m"
#define C_RESET "\033[0m"

void tpuci_console_init(tpuci_console_t *c, FILE *out, size_t ninstances) {
  memset(c, 0, sizeof(*c));
  c->out = out;
  c->tail_lines = 20;
  c->ninstances = ninstances;
  c->partial = calloc(ninstances ? ninstances : 1, sizeof(*c->partial));
  c->partial_len = calloc(ninstances ? ninstances : 1, sizeof(*c->partial_len));
}

void tpuci_console_free(tpuci_console_t *c) {
  size_t i;
  for (i = 0; i < c->ninstances; i++) free(c->partial[i]);
  free(c->partial);
  free(c->partial_len);
  c->partial = NULL;
  c->partial_len = NULL;
}

static const char *tpuci_console_color(const tpuci_console_t *c,
                                       tpuci_outcome_t o) {
  if (!c->color) return "";
  switch (o) {
    case TPUCI_OUTCOME_PASSED: return C_GREEN;
    case TPUCI_OUTCOME_FLAKY: return C_YELLOW;
    case TPUCI_OUTCOME_CANCELLED: return C_DIM;
    default: return C_RED;
  }
}

static const char *tpuci_console_reset(const tpuci_console_t *c) {
  return c->color ? C_RESET : "";
}

/* "1.2s", "250ms", "3m05s". */
static void tpuci_console_duration(uint64_t ms, char *buf, size_t size) {
  if (ms < 1000)
    snprintf(buf, size, "%llums", (unsigned long long) ms);
  else if (ms < 60000)
    snprintf(buf, size, "%.1fs", (double) ms / 1000.0);
  else
    snprintf(buf, size, "%llum%02llus", (unsigned long long) (ms / 60000),
             (unsigned long long) (ms / 1000 % 60));
}

/* Prints the last `lines` lines of a log file, indented. */
static void tpuci_console_tail(tpuci_console_t *c, const char *path, int lines) {
  FILE *f;
  long size, from;
  char *buf, *start, *p;
  size_t n;
  int seen = 0;

  if (path == NULL || lines <= 0 || (f = fopen(path, "rb")) == NULL) return;
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  from = size > 8192 ? size - 8192 : 0;
  fseek(f, from, SEEK_SET);
  buf = malloc(8193);
  n = buf ? fread(buf, 1, 8192, f) : 0;
  fclose(f);
  if (buf == NULL) return;
  buf[n] = '\0';
  while (n > 0 && buf[n - 1] == '\n') buf[--n] = '\0';
  if (n == 0) {
    fprintf(c->out, "    | (no output)\n");
    free(buf);
    return;
  }
  start = buf;
  for (p = buf + n; p > buf; p--) {
    if (p[-1] == '\n' && ++seen == lines) {
      start = p;
      break;
    }
  }
  if (start == buf && from > 0) {
    /* Skip the partial first line of the window. */
    char *nl = strchr(buf, '\n');
    if (nl) start = nl + 1;
  }
  for (p = start; *p; ) {
    char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t) (nl - p) : strlen(p);
    fprintf(c->out, "    | %.*s\n", (int) len, p);
    p += len + (nl != NULL);
  }
  free(buf);
}

/* -v: prints output live, a line at a time, prefixed by the instance. */
static void tpuci_console_stream(tpuci_console_t *c, const tpuci_event_t *ev) {
  size_t i = ev->instance, off = 0;
  if (i >= c->ninstances) return;
  while (off < ev->len) {
    const char *nl = memchr(ev->data + off, '\n', ev->len - off);
    size_t n = nl ? (size_t) (nl - (ev->data + off)) : ev->len - off;
    if (nl == NULL) {
      char *q = realloc(c->partial[i], c->partial_len[i] + n);
      if (q == NULL) return;
      memcpy(q + c->partial_len[i], ev->data + off, n);
      c->partial[i] = q;
      c->partial_len[i] += n;
      return;
    }
    fprintf(c->out, "[%s] %.*s%.*s\n", ev->name, (int) c->partial_len[i],
            c->partial[i] ? c->partial[i] : "", (int) n, ev->data + off);
    c->partial_len[i] = 0;
    off += n + 1;
  }
}

static void tpuci_console_flush_partial(tpuci_console_t *c, size_t i,
                                        const char *name) {
  if (i >= c->ninstances || c->partial_len[i] == 0) return;
  fprintf(c->out, "[%s] %.*s\n", name, (int) c->partial_len[i], c->partial[i]);
  c->partial_len[i] = 0;
}

void tpuci_console_event(tpuci_ctx_t *ctx, const tpuci_event_t *ev, void *ud) {
  tpuci_console_t *c = ud;
  char d[32];
  (void) ctx;

  switch (ev->type) {
    case TPUCI_EVENT_RUN_STARTED:
      if (!c->quiet) fprintf(c->out, "tpuci: run folder %s\n", ev->message);
      break;
    case TPUCI_EVENT_ATTEMPT_STARTED:
      if (c->quiet) break;
      if (ev->max_attempts > 1)
        fprintf(c->out, "[start] %s (attempt %d/%d)\n", ev->name, ev->attempt,
                ev->max_attempts);
      else
        fprintf(c->out, "[start] %s\n", ev->name);
      break;
    case TPUCI_EVENT_OUTPUT:
      if (c->verbose) tpuci_console_stream(c, ev);
      break;
    case TPUCI_EVENT_ATTEMPT_FINISHED: {
      int ok = ev->outcome == TPUCI_OUTCOME_PASSED;
      if (c->verbose) tpuci_console_flush_partial(c, ev->instance, ev->name);
      tpuci_console_duration(ev->duration_ms, d, sizeof(d));
      if (ok && c->quiet) break;
      fprintf(c->out, "[%s%-7s%s] %s: %s in %s", tpuci_console_color(c, ev->outcome),
              ok ? "pass" : tpuci_outcome_name(ev->outcome),
              tpuci_console_reset(c), ev->name, ev->cause ? ev->cause : "", d);
      if (ev->max_attempts > 1)
        fprintf(c->out, " (attempt %d/%d)", ev->attempt, ev->max_attempts);
      fputc('\n', c->out);
      if (!ok && ev->outcome != TPUCI_OUTCOME_CANCELLED) {
        fprintf(c->out, "    log: %s\n", ev->log_path ? ev->log_path : "-");
        if (!c->verbose) tpuci_console_tail(c, ev->log_path, c->tail_lines);
      }
      break;
    }
    case TPUCI_EVENT_RETRY_SCHEDULED:
      tpuci_console_duration(ev->retry_in_ms, d, sizeof(d));
      fprintf(c->out, "[retry  ] %s: attempt %d/%d in %s\n", ev->name,
              ev->attempt, ev->max_attempts, d);
      break;
    case TPUCI_EVENT_INSTANCE_FINISHED:
      if (ev->outcome == TPUCI_OUTCOME_FLAKY)
        fprintf(c->out, "[%sflaky  %s] %s: passed on attempt %d after failing\n",
                tpuci_console_color(c, ev->outcome), tpuci_console_reset(c),
                ev->name, ev->attempt);
      break;
    case TPUCI_EVENT_MESSAGE:
      if (ev->name)
        fprintf(c->out, "tpuci: %s: %s\n", ev->name, ev->message);
      else
        fprintf(c->out, "tpuci: %s\n", ev->message);
      break;
    case TPUCI_EVENT_RUN_FINISHED:
      break;
  }
  fflush(c->out);
}

void tpuci_console_summary(tpuci_console_t *c, tpuci_ctx_t *ctx) {
  static const tpuci_outcome_t order[] = {
      TPUCI_OUTCOME_PASSED, TPUCI_OUTCOME_FLAKY, TPUCI_OUTCOME_FAILED,
      TPUCI_OUTCOME_TIMEOUT, TPUCI_OUTCOME_OOM, TPUCI_OUTCOME_INFRA,
      TPUCI_OUTCOME_CANCELLED};
  size_t i, k, n = tpuci_instance_count(ctx), width = 8, total = 0;
  int code = tpuci_run_exit_code(ctx);
  char d[32];

  for (i = 0; i < n; i++) {
    size_t w;
    if (!tpuci_instance_selected(ctx, i)) continue;
    w = strlen(tpuci_instance_name(ctx, i));
    if (w > width) width = w;
    total++;
  }
  if (width > 60) width = 60;
  fprintf(c->out, "\n%-*s  %-9s  %8s  %9s\n", (int) width, "instance",
          "outcome", "attempts", "duration");
  for (i = 0; i < n; i++) {
    tpuci_outcome_t o;
    uint64_t dur = 0;
    size_t na;
    if (!tpuci_instance_selected(ctx, i)) continue;
    o = tpuci_instance_outcome(ctx, i);
    na = tpuci_attempt_count(ctx, i);
    for (k = 0; k < na; k++) {
      tpuci_attempt_info_t info;
      if (tpuci_attempt_info(ctx, i, k, &info) == 0) dur += info.duration_ms;
    }
    if (c->quiet && o == TPUCI_OUTCOME_PASSED) continue;
    tpuci_console_duration(dur, d, sizeof(d));
    fprintf(c->out, "%-*s  %s%-9s%s  %8zu  %9s\n", (int) width,
            tpuci_instance_name(ctx, i), tpuci_console_color(c, o),
            o == TPUCI_OUTCOME_NONE ? "not run" : tpuci_outcome_name(o),
            tpuci_console_reset(c), na, d);
  }
  fputc('\n', c->out);
  for (k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
    size_t cnt = tpuci_outcome_count(ctx, order[k]);
    fprintf(c->out, "%s%s %zu", k ? ", " : "", tpuci_outcome_name(order[k]), cnt);
  }
  tpuci_console_duration(tpuci_run_duration_ms(ctx), d, sizeof(d));
  fprintf(c->out, " (of %zu) in %s\n", total, d);
  switch (code) {
    case 0: fprintf(c->out, "%sverdict: PASSED%s\n", c->color ? C_BOLD C_GREEN : "", tpuci_console_reset(c)); break;
    case 130: fprintf(c->out, "%sverdict: INTERRUPTED%s\n", c->color ? C_BOLD C_YELLOW : "", tpuci_console_reset(c)); break;
    case 3: fprintf(c->out, "%sverdict: NOT RUN%s\n", c->color ? C_BOLD C_RED : "", tpuci_console_reset(c)); break;
    default: fprintf(c->out, "%sverdict: FAILED%s\n", c->color ? C_BOLD C_RED : "", tpuci_console_reset(c)); break;
  }
  fprintf(c->out, "summary: %s/summary.json\n", tpuci_run_dir(ctx));
  fflush(c->out);
}
