/* What a pytest failure's traceback says (see trace.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "kind/pytest/pytest_run.h"
#include "kind/pytest/trace.h"

/* A line's digits at p[0..n) as a line number, or 0. */
static int tpuci__trace_number(const char *p, size_t n) {
  long v = 0;
  size_t i;
  if (n == 0 || n > 9) return 0;
  for (i = 0; i < n; i++) {
    if (!isdigit((unsigned char) p[i])) return 0;
    v = v * 10 + (p[i] - '0');
  }
  return (int) v;
}

/* "path:LINE: ..." or "path:LINE:" at the start of a line that does not
 * start with a blank, "E " or ">" (source lines, exception lines): the
 * length of the path and the line, and where the message starts. */
static int tpuci__trace_location(const char *p, size_t n, size_t *plen, int *line,
                                 const char **msg) {
  size_t i;
  if (n == 0 || isspace((unsigned char) p[0]) || p[0] == '>' ||
      (p[0] == 'E' && n > 1 && (p[1] == ' ' || p[1] == '\t')))
    return 0;
  for (i = 0; i < n; i++) {
    size_t d = i + 1, k;
    if (p[i] != ':') continue;
    for (k = d; k < n && isdigit((unsigned char) p[k]); k++) {}
    if (i > 0 && k > d && k < n && p[k] == ':' && (k + 1 == n || p[k + 1] == ' ')) {
      *plen = i;
      *line = tpuci__trace_number(p + d, k - d);
      *msg = p + (k + 1 < n ? k + 2 : n);
      return *line > 0;
    }
  }
  return 0;
}

/* `  File "path", line LINE, in func` (native tracebacks). */
static int tpuci__trace_native(const char *p, size_t n, const char **path, size_t *plen,
                               int *line) {
  static const char lead[] = "  File \"";
  const char *q, *end = p + n, *d;
  if (n < sizeof(lead) || strncmp(p, lead, sizeof(lead) - 1) != 0) return 0;
  *path = p + sizeof(lead) - 1;
  for (q = *path; q + 8 <= end && strncmp(q, "\", line ", 8) != 0; q++) {}
  if (q + 8 > end) return 0;
  *plen = (size_t) (q - *path);
  for (d = q + 8; d < end && isdigit((unsigned char) *d); d++) {}
  *line = tpuci__trace_number(q + 8, (size_t) (d - (q + 8)));
  return *plen > 0 && *line > 0;
}

static void tpuci__trace_push(tpuci__trace_frame_t **frames, size_t *n, const char *path,
                              size_t plen, int line) {
  /* Room doubles at each power of two: a traceback of many frames is
   * not copied once per frame. */
  if ((*n & (*n - 1)) == 0) *frames = tpuci__realloc(*frames, (*n ? 2 * *n : 1) * sizeof(**frames));
  (*frames)[*n].path = tpuci__strndup(path, plen);
  (*frames)[*n].line = line;
  (*n)++;
}

size_t tpuci__trace_frames(const char *text, tpuci__trace_frame_t **frames, size_t *n) {
  const char *p, *msg, *path;
  size_t before = *n, plen;
  int line;
  for (p = text; p && *p;) {
    const char *nl = strchr(p, '\n'), *next = nl ? nl + 1 : p + strlen(p);
    size_t len = (size_t) ((nl ? nl : next) - p);
    if (len > 0 && p[len - 1] == '\r') len--;
    if (tpuci__trace_location(p, len, &plen, &line, &msg))
      tpuci__trace_push(frames, n, p, plen, line);
    else if (tpuci__trace_native(p, len, &path, &plen, &line))
      tpuci__trace_push(frames, n, path, plen, line);
    p = next;
  }
  return *n - before;
}

void tpuci__trace_frames_free(tpuci__trace_frame_t *frames, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) free(frames[i].path);
  free(frames);
}

/* The dotted name an exception's line starts with ("ValueError: x",
 * "pkg.Oops", "KeyboardInterrupt"): its length, or 0 when the line does
 * not start with a name followed by ':' or the end. */
static size_t tpuci__trace_name(const char *p, size_t n) {
  size_t i = 0;
  if (n == 0 || !(isalpha((unsigned char) p[0]) || p[0] == '_')) return 0;
  while (i < n && (isalnum((unsigned char) p[i]) || p[i] == '_' || p[i] == '.')) i++;
  if (p[i - 1] == '.') return 0;
  return i == n || p[i] == ':' ? i : 0;
}

char *tpuci__trace_exception(const char *text, const char *message) {
  const char *p, *crash = NULL, *e_line = NULL;
  size_t crash_len = 0, e_len = 0, k;
  int prev_e = 0;
  for (p = text; p && *p;) {
    const char *nl = strchr(p, '\n'), *msg, *next = nl ? nl + 1 : p + strlen(p);
    size_t len = (size_t) ((nl ? nl : next) - p), plen;
    int line, is_e = len > 1 && p[0] == 'E' && (p[1] == ' ' || p[1] == '\t');
    if (len > 0 && p[len - 1] == '\r') len--;
    if (is_e && !prev_e) {
      /* The first line of a group of E lines: the last group's names it. */
      size_t i = 1;
      while (i < len && (p[i] == ' ' || p[i] == '\t')) i++;
      e_line = p + i;
      e_len = len - i;
    } else if (!is_e && tpuci__trace_location(p, len, &plen, &line, &msg)) {
      crash = msg;
      crash_len = (size_t) (p + len - msg);
    }
    prev_e = is_e;
    p = next;
  }
  /* pytest's crash line says the class alone ("path:12: AssertionError"). */
  if (crash != NULL && (k = tpuci__trace_name(crash, crash_len)) == crash_len && k > 0)
    return tpuci__strndup(crash, k);
  if (message != NULL && (k = tpuci__trace_name(message, strcspn(message, "\n"))) > 0)
    return tpuci__strndup(message, k);
  if (e_line != NULL && (k = tpuci__trace_name(e_line, e_len)) > 0)
    return tpuci__strndup(e_line, k);
  return NULL;
}

int tpuci__path_below(const char *path, const char *root) {
  size_t n = strlen(root);
  while (n > 1 && root[n - 1] == '/') n--;
  if (n == 1 && root[0] == '/') return path[0] == '/';
  return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* An installed package's file, not the project's. */
static int tpuci__trace_installed(const char *path) {
  return strstr(path, "/site-packages/") != NULL || strstr(path, "/dist-packages/") != NULL;
}

void tpuci__trace_locate(tpuci__history_t *h, const tpuci__instance_t *inst, const char *cwd,
                         const char *root) {
  size_t i, k;
  for (i = 0; i < h->len; i++) {
    tpuci__test_hist_t *t = &h->tests[i];
    const tpuci__test_t *fin = tpuci__history_final(t);
    tpuci__trace_frame_t *frames = NULL;
    size_t n = 0;
    free(t->fail_path);
    t->fail_path = NULL;
    t->fail_line = 0;
    if (t->path == NULL) {
      /* Not placed from its report (cut short, never run): its node id's
       * file, which is relative to pytest's rootdir. */
      char *file = tpuci__strndup(t->id, strcspn(t->id, ":["));
      t->path = tpuci__pytest_host_path(inst, h->rootdir, file);
      free(file);
    }
    if (fin == NULL || !tpuci__test_outcome_failing(fin->outcome)) continue;
    tpuci__trace_frames(fin->text, &frames, &n);
    for (k = n; k > 0 && t->fail_path == NULL; k--) {
      char *host = tpuci__pytest_host_path(inst, cwd ? cwd : h->rootdir, frames[k - 1].path);
      if (host != NULL && (root == NULL || tpuci__path_below(host, root)) &&
          !tpuci__trace_installed(host)) {
        t->fail_path = host;
        t->fail_line = frames[k - 1].line;
      } else {
        free(host);
      }
    }
    tpuci__trace_frames_free(frames, n);
  }
}
