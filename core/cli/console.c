/* Console output of the tpuci command (see console.h for the styles). */
#include "console.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <unistd.h>

#define C_RED "\033[31m"
#define C_GREEN "\033[32m"
#define C_YELLOW "\033[33m"
#define C_DIM "\033[2m"
#define C_BOLD "\033[1m"
#define C_RESET "\033[0m"

static uint64_t now_ms(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (uint64_t) tv.tv_sec * 1000u + (uint64_t) tv.tv_usec / 1000u;
}

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (p == NULL) {
    fputs("tpuci: out of memory\n", stderr);
    exit(2);
  }
  return p;
}

void tpuci_console_init(tpuci_console_t *c, FILE *out, size_t n, size_t nselected) {
  memset(c, 0, sizeof(*c));
  c->out = out;
  c->tail_lines = 40;
  c->block_max = 256 * 1024;
  c->ninstances = n;
  c->inst = xcalloc(n, sizeof(*c->inst));
  c->expected_ms = xcalloc(n, sizeof(*c->expected_ms));
  c->nselected = nselected;
  c->start_ms = now_ms();
}

void tpuci_console_free(tpuci_console_t *c) {
  size_t i;
  for (i = 0; i < c->ninstances; i++) free(c->inst[i].partial);
  tpuci_console__tests_free(c);
  free(c->inst);
  free(c->expected_ms);
  c->inst = NULL;
  c->expected_ms = NULL;
}

/* ------------------------------------------------------------------ */
/* Time left: what each instance took in the previous run.             */

typedef struct {
  const char *name;
  uint64_t ms;
} expect_t;

static int cmp_expect(const void *a, const void *b) {
  return strcmp(((const expect_t *) a)->name, ((const expect_t *) b)->name);
}

void tpuci_console_expect(tpuci_console_t *c, tpuci_ctx_t *ctx, const char *state_dir) {
  tpuci_run_t *past;
  expect_t *list;
  size_t i, n;

  if (tpuci_load_run(ctx, state_dir, NULL, &past) != 0) return;
  n = tpuci_run_instance_count(past);
  list = xcalloc(n, sizeof(*list));
  for (i = 0; i < n; i++) {
    tpuci_attempt_info_t info = TPUCI_ATTEMPT_INFO_INIT;
    size_t k = tpuci_attempt_count(past, i);
    list[i].name = tpuci_run_instance_name(past, i);
    if (k > 0 && tpuci_attempt_info(past, i, k - 1, &info) == 0) list[i].ms = info.duration_ms;
  }
  qsort(list, n, sizeof(*list), cmp_expect);
  for (i = 0; i < c->ninstances; i++) {
    expect_t key, *hit;
    key.name = tpuci_instance_name(ctx, i);
    hit = bsearch(&key, list, n, sizeof(*list), cmp_expect);
    if (hit) c->expected_ms[i] = hit->ms ? hit->ms : 1;
  }
  free(list);
  tpuci_run_free(past);
}

/* ------------------------------------------------------------------ */
/* Small pieces                                                        */

const char *tpuci_console__color_of(const tpuci_console_t *c, tpuci_outcome_t o) {
  if (!c->color) return "";
  switch (o) {
    case TPUCI_OUTCOME_PASSED: return C_GREEN;
    case TPUCI_OUTCOME_FLAKY:
    case TPUCI_OUTCOME_ORDER_DEPENDENT: return C_YELLOW;
    case TPUCI_OUTCOME_CACHED: return C_GREEN C_DIM;
    case TPUCI_OUTCOME_CANCELLED:
    case TPUCI_OUTCOME_NOT_APPLICABLE: return C_DIM;
    case TPUCI_OUTCOME_PREEMPTED:
    case TPUCI_OUTCOME_NO_CAPACITY: return C_YELLOW;
    default: return C_RED;
  }
}

const char *tpuci_console__reset(const tpuci_console_t *c) { return c->color ? C_RESET : ""; }

/* "1.2s", "250ms", "3m05s". */
void tpuci_console__duration(uint64_t ms, char *buf, size_t size) {
  if (ms < 1000) snprintf(buf, size, "%llums", (unsigned long long) ms);
  else if (ms < 60000) snprintf(buf, size, "%.1fs", (double) ms / 1000.0);
  else if (ms < 3600000)
    snprintf(buf, size, "%llum%02llus", (unsigned long long) (ms / 60000),
             (unsigned long long) (ms / 1000 % 60));
  else
    snprintf(buf, size, "%lluh%02llum", (unsigned long long) (ms / 3600000),
             (unsigned long long) (ms / 60000 % 60));
}

void tpuci_console__bytes(uint64_t current, uint64_t total, char *buf, size_t size) {
  static const char *units[] = {"B", "kB", "MB", "GB", "TB"};
  uint64_t ref = total > current ? total : current;
  double div = 1;
  int u = 0;
  char a[32], b[32];
  while (u < 4 && ref >= (uint64_t) (div * 1000)) {
    div *= 1000;
    u++;
  }
  snprintf(a, sizeof(a), (double) current / div < 10 && u > 0 ? "%.1f" : "%.0f",
           (double) current / div);
  if (total == 0) {
    snprintf(buf, size, "%s %s", a, units[u]);
    return;
  }
  snprintf(b, sizeof(b), (double) total / div < 10 && u > 0 ? "%.1f" : "%.0f",
           (double) total / div);
  snprintf(buf, size, "%s/%s %s", a, b, units[u]);
}

static int term_width(const tpuci_console_t *c) {
  struct winsize ws;
  if (ioctl(fileno(c->out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20) return ws.ws_col;
  return 80;
}

/* Reads a whole log (up to `max` bytes from its end). *truncated is the
 * number of bytes left out. */
static char *read_log(const char *path, size_t max, size_t *len, long *truncated) {
  FILE *f;
  long size;
  char *buf;
  size_t n;

  *len = 0;
  *truncated = 0;
  if (path == NULL || (f = fopen(path, "rb")) == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  if (size > (long) max) {
    *truncated = size - (long) max;
    fseek(f, size - (long) max, SEEK_SET);
  } else {
    fseek(f, 0, SEEK_SET);
  }
  buf = xcalloc((size_t) (size > (long) max ? (long) max : size) + 1, 1);
  n = fread(buf, 1, (size_t) (size > (long) max ? (long) max : size), f);
  fclose(f);
  buf[n] = '\0';
  *len = n;
  return buf;
}

/* Prints text line by line with a prefix, at most `lines` of its end
 * (0: all). */
static void print_lines(tpuci_console_t *c, const char *text, size_t len, const char *prefix,
                        int lines) {
  const char *start = text, *p;
  int seen = 0;

  while (len > 0 && text[len - 1] == '\n') len--;
  if (lines > 0) {
    for (p = text + len; p > text; p--) {
      if (p[-1] == '\n' && ++seen == lines) {
        start = p;
        break;
      }
    }
  }
  for (p = start; p < text + len;) {
    const char *nl = memchr(p, '\n', (size_t) (text + len - p));
    size_t n = nl ? (size_t) (nl - p) : (size_t) (text + len - p);
    fputs(prefix, c->out);
    tpuci_console__put(c, p, n);
    fputc('\n', c->out);
    p += n + 1;
  }
}

/* ------------------------------------------------------------------ */
/* The board                                                           */

static void board_erase(tpuci_console_t *c) {
  if (c->board_lines > 0) {
    fprintf(c->out, "\033[%dA\033[J", c->board_lines);
    c->board_lines = 0;
  }
}

static void board_draw(tpuci_console_t *c, tpuci_run_t *run) {
  int width = term_width(c), shown = 0, max_rows = 20;
  uint64_t now = now_ms(), left = 0, slots_ms = 0;
  size_t i, queued = c->nselected - c->done - c->running, unknown = 0;
  char d[32], eta[48];

  if (c->style != TPUCI_CONSOLE_BOARD) return;
  board_erase(c);
  /* Time left: the expected time of what is queued plus what the running
   * attempts still need, over the slots in use. */
  for (i = 0; i < c->ninstances; i++) {
    const tpuci_console_inst_t *in = &c->inst[i];
    if (!tpuci_run_instance_selected(run, i) || in->finished) continue;
    if (c->expected_ms[i] == 0) {
      unknown++;
      continue;
    }
    if (in->started_ms) {
      uint64_t el = now - in->started_ms;
      left += c->expected_ms[i] > el ? c->expected_ms[i] - el : 0;
    } else {
      left += c->expected_ms[i];
    }
  }
  slots_ms = c->running ? c->running : 1;
  if (unknown == 0 && left > 0) {
    tpuci_console__duration(left / slots_ms, d, sizeof(d));
    snprintf(eta, sizeof(eta), ", about %s left", d);
  } else {
    eta[0] = '\0';
  }
  tpuci_console__duration(now - c->start_ms, d, sizeof(d));
  {
    size_t ok = c->counts[TPUCI_OUTCOME_PASSED] + c->counts[TPUCI_OUTCOME_FLAKY] +
                c->counts[TPUCI_OUTCOME_CACHED] + c->counts[TPUCI_OUTCOME_ORDER_DEPENDENT];
    char so_far[64] = "";
    if (c->nfailed_tests > 0)
      snprintf(so_far, sizeof(so_far), ", %zu test%s failed so far", c->nfailed_tests,
               c->nfailed_tests == 1 ? "" : "s");
    fprintf(c->out, "%s%zu running, %zu queued, %zu done (%zu passed, %zu failed)%s%s, %s%s\n",
            c->color ? C_BOLD : "", c->running, queued, c->done, ok, c->done - ok, so_far, eta, d,
            tpuci_console__reset(c));
  }
  c->board_lines = 1;
  if (c->pulling) {
    char line[512], bytes[64];
    int n;
    tpuci_console__bytes(c->pull_current, c->pull_total, bytes, sizeof(bytes));
    n = snprintf(line, sizeof(line), "  pulling %s: %s (%d layer%s)", c->pull_image, bytes,
                 c->pull_layers, c->pull_layers == 1 ? "" : "s");
    if (n > width - 1) line[width - 1] = '\0';
    fprintf(c->out, "%s\n", line);
    c->board_lines++;
  }
  for (i = 0; i < c->ninstances && shown < max_rows; i++) {
    const tpuci_console_inst_t *in = &c->inst[i];
    char line[512];
    int n;
    tpuci_running_info_t ri = TPUCI_RUNNING_INFO_INIT;
    if (!in->started_ms) continue;
    tpuci_console__duration(now - in->started_ms, d, sizeof(d));
    /* A pytest attempt shows the test it is in (every host's, for a
     * gang), not its last line, which may be a partial line of a host. */
    if (tpuci_running_info(run, i, &ri) == 0 && ri.test != NULL) {
      char td[32];
      tpuci_console__duration(ri.test_ms, td, sizeof(td));
      n = snprintf(line, sizeof(line), "  %s #%d %s  %s (%s)", tpuci_run_instance_name(run, i),
                   in->attempt, d, ri.test, td);
      tpuci_console__sanitize(line);
    } else {
      n = snprintf(line, sizeof(line), "  %s #%d %s  %s", tpuci_run_instance_name(run, i),
                   in->attempt, d, in->last);
    }
    if (n > width - 1) line[width - 1] = '\0';
    fprintf(c->out, "%s%s%s\n", c->color ? C_DIM : "", line, tpuci_console__reset(c));
    c->board_lines++;
    shown++;
  }
  if ((size_t) shown < c->running) {
    fprintf(c->out, "  ... and %zu more\n", c->running - (size_t) shown);
    c->board_lines++;
  }
}

/* ------------------------------------------------------------------ */
/* Alive lines                                                         */

const char *tpuci_console__path(const char *path) {
  char cwd[PATH_MAX];
  size_t n;
  if (path == NULL || path[0] != '/' || getcwd(cwd, sizeof(cwd)) == NULL) return path;
  n = strlen(cwd);
  if (n == 1) return path; /* "/": absolute is as short */
  if (strncmp(path, cwd, n) == 0 && path[n] == '/' && path[n + 1] != '\0') return path + n + 1;
  return path;
}

/* Plain and GitHub output: a line for each attempt that has run alive_ms
 * since its start or its last such line, so that a CI service that
 * stops silent steps sees tpuci is alive, and the log says where a long
 * attempt is: "[alive  ] unit (attempt 1/3): 5m00s, in tests/t.py::test_x
 * for 4m10s, 12 kB output, none for 3m00s". */
static void alive_lines(tpuci_console_t *c, tpuci_run_t *run) {
  uint64_t now = now_ms();
  size_t i;
  for (i = 0; i < c->ninstances; i++) {
    tpuci_console_inst_t *in = &c->inst[i];
    tpuci_running_info_t ri = TPUCI_RUNNING_INFO_INIT;
    char d[32], b[48], line[1024];
    size_t n;
    uint64_t last = in->alive_ms > in->started_ms ? in->alive_ms : in->started_ms;
    if (!in->started_ms || now - last < c->alive_ms) continue;
    if (tpuci_running_info(run, i, &ri) != 0) continue;
    in->alive_ms = now;
    tpuci_console__duration(ri.elapsed_ms, d, sizeof(d));
    n = (size_t) snprintf(line, sizeof(line), "%s", tpuci_run_instance_name(run, i));
    if (in->max_attempts > 1 && n < sizeof(line))
      n += (size_t) snprintf(line + n, sizeof(line) - n, " (attempt %d/%d)", ri.attempt,
                             in->max_attempts);
    if (n < sizeof(line)) n += (size_t) snprintf(line + n, sizeof(line) - n, ": %s", d);
    if (ri.test != NULL && n < sizeof(line)) {
      tpuci_console__duration(ri.test_ms, d, sizeof(d));
      n += (size_t) snprintf(line + n, sizeof(line) - n, ", in %s for %s",
                             tpuci_console__safe(ri.test, 0), d);
    }
    if (ri.output_bytes == 0) {
      if (n < sizeof(line)) snprintf(line + n, sizeof(line) - n, ", no output yet");
    } else {
      tpuci_console__bytes(ri.output_bytes, 0, b, sizeof(b));
      tpuci_console__duration(ri.quiet_ms, d, sizeof(d));
      if (n < sizeof(line))
        snprintf(line + n, sizeof(line) - n,
                 ri.quiet_ms >= c->alive_ms ? ", %s output, none for %s" : ", %s output", b, d);
    }
    tpuci_console__sanitize(line);
    fprintf(c->out, "[alive  ] %s\n", line);
  }
}

/* ------------------------------------------------------------------ */
/* Output                                                              */

static void remember_last_line(tpuci_console_inst_t *in, const char *data, size_t len) {
  const char *end = data + len, *p, *start;
  while (end > data && (end[-1] == '\n' || end[-1] == '\r')) end--;
  if (end == data) return;
  for (p = end; p > data && p[-1] != '\n' && p[-1] != '\r'; p--) {}
  start = p;
  len = (size_t) (end - start);
  if (len >= sizeof(in->last)) len = sizeof(in->last) - 1;
  memcpy(in->last, start, len);
  in->last[len] = '\0';
  tpuci_console__sanitize(in->last);
}

/* -v: prints output live, a line at a time, prefixed by the instance
 * (a line is written whole, so that an escape sequence cut between two
 * pieces of output is left out whole). */
static void stream(tpuci_console_t *c, const tpuci_event_t *ev) {
  tpuci_console_inst_t *in = &c->inst[ev->instance];
  size_t off = 0;
  while (off < ev->len) {
    const char *nl = memchr(ev->data + off, '\n', ev->len - off);
    size_t n = nl ? (size_t) (nl - (ev->data + off)) : ev->len - off;
    const char *line = ev->data + off;
    if (nl == NULL || in->partial_len > 0) {
      char *q = realloc(in->partial, in->partial_len + n);
      if (q == NULL) return;
      memcpy(q + in->partial_len, ev->data + off, n);
      in->partial = q;
      in->partial_len += n;
      if (nl == NULL) return;
      line = in->partial;
      n = in->partial_len;
    }
    fprintf(c->out, "[%s] ", ev->name);
    tpuci_console__put(c, line, n);
    fputc('\n', c->out);
    off = (size_t) (nl - ev->data) + 1;
    in->partial_len = 0;
  }
}

static void flush_partial(tpuci_console_t *c, const tpuci_event_t *ev) {
  tpuci_console_inst_t *in = &c->inst[ev->instance];
  if (in->partial_len == 0) return;
  fprintf(c->out, "[%s] ", ev->name);
  tpuci_console__put(c, in->partial, in->partial_len);
  fputc('\n', c->out);
  in->partial_len = 0;
}

/* An attempt's whole output, as one block. */
static void print_block(tpuci_console_t *c, const tpuci_event_t *ev, int failed) {
  size_t len;
  long cut;
  char *log = read_log(ev->log_path, c->block_max, &len, &cut);
  int gh = c->style == TPUCI_CONSOLE_GITHUB;

  if (log == NULL || len == 0) {
    if (failed) fprintf(c->out, "    (no output)\n");
    free(log);
    return;
  }
  if (gh)
    fprintf(c->out, "::group::%s (attempt %d/%d): %s\n", ev->name, ev->attempt, ev->max_attempts,
            tpuci_outcome_name(ev->outcome));
  else
    fprintf(c->out, "--- output of %s, attempt %d/%d ---\n", ev->name, ev->attempt,
            ev->max_attempts);
  if (cut > 0)
    fprintf(c->out, "(first %ld bytes left out; the whole log: %s)\n", cut,
            tpuci_console__path(ev->log_path));
  print_lines(c, log, len, "", 0);
  fprintf(c->out, gh ? "::endgroup::\n" : "--- end of %s ---\n", ev->name);
  free(log);
}

/* An image pull: a line of the board while it runs; a plain line when
 * it is done (where it started is the runtime's "pulling image" message). */
static void on_pull(tpuci_console_t *c, tpuci_run_t *run, const tpuci_event_t *ev) {
  char bytes[64], d[32];
  c->pull_current = ev->pull_current;
  c->pull_total = ev->pull_total;
  c->pull_layers = ev->pull_layers;
  if (ev->pull_state == TPUCI_PULL_STARTED || ev->pull_state == TPUCI_PULL_PROGRESS) {
    c->pulling = 1;
    snprintf(c->pull_image, sizeof(c->pull_image), "%s", ev->image ? ev->image : "");
    board_draw(c, run);
    return;
  }
  c->pulling = 0;
  board_erase(c);
  if (ev->pull_state == TPUCI_PULL_DONE && !c->quiet) {
    tpuci_console__bytes(ev->pull_current, 0, bytes, sizeof(bytes));
    tpuci_console__duration(ev->duration_ms, d, sizeof(d));
    /* No layer told: the engine had them all (a new name for an image
     * it has, or the same digest). */
    if (ev->pull_layers == 0)
      fprintf(c->out, "tpuci: pulled image '%s' in %s: up to date\n", ev->image ? ev->image : "",
              d);
    else
      fprintf(c->out, "tpuci: pulled image '%s' in %s: %s, %d layer%s\n",
              ev->image ? ev->image : "", d, bytes, ev->pull_layers,
              ev->pull_layers == 1 ? "" : "s");
  }
  board_draw(c, run);
}

void tpuci_console_event(tpuci_run_t *run, const tpuci_event_t *ev, void *ud) {
  tpuci_console_t *c = ud;
  int board = c->style == TPUCI_CONSOLE_BOARD;
  char d[32];

  switch (ev->type) {
    case TPUCI_EVENT_RUN_STARTED:
      if (!c->quiet) fprintf(c->out, "tpuci: run folder %s\n", tpuci_console__path(ev->message));
      break;
    case TPUCI_EVENT_ATTEMPT_STARTED: {
      tpuci_console_inst_t *in = &c->inst[ev->instance];
      in->started_ms = now_ms();
      in->alive_ms = 0;
      in->attempt = ev->attempt;
      in->max_attempts = ev->max_attempts;
      in->last[0] = '\0';
      c->running++;
      if (board) {
        board_draw(c, run);
        break;
      }
      if (c->quiet) break;
      if (ev->max_attempts > 1)
        fprintf(c->out, "[start] %s (attempt %d/%d)\n", ev->name, ev->attempt, ev->max_attempts);
      else fprintf(c->out, "[start] %s\n", ev->name);
      break;
    }
    case TPUCI_EVENT_OUTPUT:
      if (c->verbose) {
        if (board) board_erase(c);
        stream(c, ev);
      }
      remember_last_line(&c->inst[ev->instance], ev->data, ev->len);
      break;
    case TPUCI_EVENT_ATTEMPT_FINISHED: {
      int ok = ev->outcome == TPUCI_OUTCOME_PASSED;
      /* run --test in a job that does not collect it: no log to read. */
      int na = ev->outcome == TPUCI_OUTCOME_NOT_APPLICABLE;
      if (ev->outcome == TPUCI_OUTCOME_CACHED) {
        /* Never started: a pass of the results cache (docs/cache.md). */
        if (board) board_erase(c);
        if (!c->quiet)
          fprintf(c->out, "[%scached %s] %s: %s\n", tpuci_console__color_of(c, ev->outcome),
                  tpuci_console__reset(c), ev->name, tpuci_console__safe(ev->cause, 0));
        break;
      }
      c->inst[ev->instance].started_ms = 0;
      c->running--;
      if (board) board_erase(c);
      if (c->verbose) flush_partial(c, ev);
      tpuci_console__duration(ev->duration_ms, d, sizeof(d));
      if (!(ok && c->quiet)) {
        fprintf(c->out, "[%s%-7s%s] %s: %s in %s", tpuci_console__color_of(c, ev->outcome),
                ok   ? "pass"
                : na ? "n/a"
                     : tpuci_outcome_name(ev->outcome),
                tpuci_console__reset(c), ev->name, tpuci_console__safe(ev->cause, 0), d);
        if (ev->max_attempts > 1)
          fprintf(c->out, " (attempt %d/%d)", ev->attempt, ev->max_attempts);
        fputc('\n', c->out);
        if (!ok && !na && ev->outcome != TPUCI_OUTCOME_CANCELLED)
          fprintf(c->out, "    log: %s\n", ev->log_path ? tpuci_console__path(ev->log_path) : "-");
        if (!c->verbose) {
          if (board) {
            /* On a terminal the board shows progress; failures get their
             * log tail. */
            if (!ok && !na && ev->outcome != TPUCI_OUTCOME_CANCELLED) {
              size_t len;
              long cut;
              char *log = read_log(ev->log_path, 64 * 1024, &len, &cut);
              if (log) print_lines(c, log, len, "    | ", c->tail_lines);
              free(log);
            }
          } else {
            print_block(c, ev, !ok && !na);
          }
        }
      }
      /* RETRY_SCHEDULED or INSTANCE_FINISHED follows at once and redraws
       * the board with the counts right. */
      break;
    }
    case TPUCI_EVENT_RETRY_SCHEDULED:
      if (board) board_erase(c);
      tpuci_console__duration(ev->retry_in_ms, d, sizeof(d));
      fprintf(c->out, "[retry  ] %s: attempt %d/%d in %s\n", ev->name, ev->attempt,
              ev->max_attempts, d);
      board_draw(c, run);
      break;
    case TPUCI_EVENT_INSTANCE_FINISHED:
      c->inst[ev->instance].finished = 1;
      c->done++;
      if (ev->outcome < TPUCI_OUTCOME__COUNT) c->counts[ev->outcome]++;
      if (board) board_erase(c);
      if (ev->outcome == TPUCI_OUTCOME_FLAKY || ev->outcome == TPUCI_OUTCOME_ORDER_DEPENDENT)
        fprintf(c->out, "[%s%-7s%s] %s: passed on attempt %d %s\n",
                tpuci_console__color_of(c, ev->outcome),
                ev->outcome == TPUCI_OUTCOME_FLAKY ? "flaky" : "order", tpuci_console__reset(c),
                ev->name, ev->attempt,
                ev->outcome == TPUCI_OUTCOME_FLAKY
                    ? "after failing"
                    : "after a test failed in another order (order-dependent)");
      board_draw(c, run);
      break;
    case TPUCI_EVENT_MESSAGE:
      if (board) board_erase(c);
      if (ev->name)
        fprintf(c->out, "tpuci: %s: %s\n", ev->name, tpuci_console__safe(ev->message, 1));
      else fprintf(c->out, "tpuci: %s\n", tpuci_console__safe(ev->message, 1));
      board_draw(c, run);
      break;
    case TPUCI_EVENT_TICK:
      if (board) board_draw(c, run);
      else if (c->alive_ms > 0) alive_lines(c, run);
      break;
    case TPUCI_EVENT_PULL: on_pull(c, run, ev); break;
    case TPUCI_EVENT_TEST_FAILED:
      if (board) board_erase(c);
      tpuci_console__test_failed(c, ev);
      board_draw(c, run);
      break;
    case TPUCI_EVENT_RUN_FINISHED:
      if (board) board_erase(c);
      break;
  }
  fflush(c->out);
}

/* ------------------------------------------------------------------ */
/* The summary                                                         */

uint64_t tpuci_console__instance_ms(tpuci_run_t *run, size_t i) {
  size_t k, na = tpuci_attempt_count(run, i);
  uint64_t dur = 0;
  for (k = 0; k < na; k++) {
    tpuci_attempt_info_t info = TPUCI_ATTEMPT_INFO_INIT;
    if (tpuci_attempt_info(run, i, k, &info) == 0) dur += info.duration_ms;
  }
  return dur;
}
