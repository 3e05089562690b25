/* The HTML report: escaping user data, reading the report tree, and the
 * small parts (badges, durations, matrices). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report/html.h"

static const char tpuci__html_repl[] = "\xEF\xBF\xBD"; /* U+FFFD */

/* ------------------------------------------------------------------ */
/* Escaping                                                            */

/* Skips the terminal escape sequence starting at the ESC at p: a CSI
 * (ESC [ parameters final), an OSC (ESC ] text BEL or ESC \), or ESC and
 * one more character. A sequence broken by a byte that cannot be part of
 * it ends before that byte. */
static const unsigned char *tpuci__ansi_skip(const unsigned char *p, const unsigned char *end) {
  p++;
  if (p == end) return p;
  if (*p == '[') {
    for (p++; p < end; p++) {
      if (*p >= 0x40 && *p <= 0x7E) return p + 1;
      if (*p < 0x20 || *p > 0x7E) return p;
    }
    return p;
  }
  if (*p == ']') {
    for (p++; p < end; p++) {
      if (*p == 0x07) return p + 1;
      if (*p == 0x1B) return p + 1 < end && p[1] == '\\' ? p + 2 : p;
    }
    return p;
  }
  return *p >= 0x20 && *p <= 0x7E ? p + 1 : p;
}

/* Appends len bytes of s as HTML text that is also safe inside a quoted
 * attribute: the five markup characters become references; bytes that
 * are not valid UTF-8 and control characters other than tab, newline and
 * carriage return become U+FFFD. With strip_ansi, terminal escape
 * sequences (colours, cursor moves), which logs often carry, are dropped. */
void tpuci__html_textn(tpuci__buf_t *b, const char *s, size_t len, int strip_ansi) {
  const unsigned char *p = (const unsigned char *) s, *end = p + len;
  const unsigned char *run = p;

  while (p < end) {
    const char *ref = NULL;
    size_t n;
    if (*p < 0x80) {
      switch (*p) {
        case '&': ref = "&amp;"; break;
        case '<': ref = "&lt;"; break;
        case '>': ref = "&gt;"; break;
        case '"': ref = "&quot;"; break;
        case '\'': ref = "&#39;"; break;
        case '\t':
        case '\n':
        case '\r': break;
        case 0x1B:
          if (strip_ansi) {
            tpuci__buf_add(b, (const char *) run, (size_t) (p - run));
            p = tpuci__ansi_skip(p, end);
            run = p;
            continue;
          }
          ref = tpuci__html_repl;
          break;
        default:
          if (*p < 0x20 || *p == 0x7F) ref = tpuci__html_repl;
      }
      if (ref != NULL) {
        tpuci__buf_add(b, (const char *) run, (size_t) (p - run));
        tpuci__buf_adds(b, ref);
        run = p + 1;
      }
      p++;
      continue;
    }
    n = tpuci__utf8_len(p, end);
    if (n == 0 || (n == 2 && p[0] == 0xC2 && p[1] <= 0x9F)) {
      /* A bad byte, or a whole C1 control character, becomes one U+FFFD. */
      tpuci__buf_add(b, (const char *) run, (size_t) (p - run));
      tpuci__buf_adds(b, tpuci__html_repl);
      p += n ? n : 1;
      run = p;
    } else {
      p += n;
    }
  }
  tpuci__buf_add(b, (const char *) run, (size_t) (p - run));
}

void tpuci__html_text(tpuci__buf_t *b, const char *s) { tpuci__html_textn(b, s, strlen(s), 0); }

/* ------------------------------------------------------------------ */
/* Reading the report tree: missing or mistyped fields read as empty.  */

const char *tpuci__html_jstr(const json_t *o, const char *key, size_t *len) {
  const json_t *v = json_object_get(o, key);
  if (!json_is_string(v)) {
    if (len) *len = 0;
    return "";
  }
  if (len) *len = json_string_length(v);
  return json_string_value(v);
}

/* An integer field, or -1 when it is missing, null or not an integer. */
json_int_t tpuci__html_jint(const json_t *o, const char *key) {
  const json_t *v = json_object_get(o, key);
  return json_is_integer(v) ? json_integer_value(v) : -1;
}

/* A non-negative integer field; anything else reads as 0. */
uint64_t tpuci__html_juint(const json_t *o, const char *key) {
  json_int_t v = tpuci__html_jint(o, key);
  return v > 0 ? (uint64_t) v : 0;
}

/* Appends a string field, escaped. */
void tpuci__html_field(tpuci__buf_t *b, const json_t *o, const char *key) {
  size_t len;
  const char *s = tpuci__html_jstr(o, key, &len);
  tpuci__html_textn(b, s, len, 0);
}

/* ------------------------------------------------------------------ */
/* Outcomes and small pieces                                           */

static const char *const tpuci__html_outcomes[] = {
    "passed",    "flaky",       "failed",         "timeout", "oom",
    "infra",     "cancelled",   "not-run",        "cached",  "order-dependent",
    "preempted", "no-capacity", "not-applicable", NULL};

/* The CSS class suffix for an outcome: the outcome itself when it is one
 * tpuci knows (so class names never carry report text), else "unknown". */
const char *tpuci__html_outcome_class(const char *outcome) {
  size_t i;
  for (i = 0; tpuci__html_outcomes[i]; i++)
    if (strcmp(outcome, tpuci__html_outcomes[i]) == 0) return tpuci__html_outcomes[i];
  return "unknown";
}

/* Whether an instance or attempt with this outcome did not pass. */
int tpuci__html_outcome_bad(const char *outcome) {
  return strcmp(outcome, "failed") == 0 || strcmp(outcome, "timeout") == 0 ||
         strcmp(outcome, "oom") == 0 || strcmp(outcome, "infra") == 0 ||
         strcmp(outcome, "preempted") == 0 || strcmp(outcome, "no-capacity") == 0;
}

/* A coloured label with the outcome's name: colour is never the only
 * signal. */
void tpuci__html_badge(tpuci__buf_t *b, const char *outcome) {
  tpuci__buf_addf(b, "<span class=\"o o-%s\">", tpuci__html_outcome_class(outcome));
  tpuci__html_text(b, *outcome ? outcome : "unknown");
  tpuci__buf_adds(b, "</span>");
}

const char *tpuci__html_duration(uint64_t ms, char *buf, size_t size) {
  return tpuci__duration_format(ms, buf, size);
}

void tpuci__html_utc(uint64_t ms, char *buf, size_t size) {
  time_t t = (time_t) (ms / 1000);
  struct tm tm;
  if (ms == 0 || gmtime_r(&t, &tm) == NULL ||
      strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
    snprintf(buf, size, "unknown");
}

/* "python=3.11, torch=2.1" from an instance's matrix object. */
void tpuci__html_matrix(tpuci__buf_t *b, const json_t *matrix) {
  const char *key;
  json_t *val;
  int first = 1;
  json_object_foreach((json_t *) matrix, key, val) {
    if (!first) tpuci__buf_adds(b, ", ");
    first = 0;
    tpuci__html_text(b, key);
    tpuci__buf_adds(b, "=");
    if (json_is_string(val))
      tpuci__html_textn(b, json_string_value(val), json_string_length(val), 0);
  }
}

/* ------------------------------------------------------------------ */
/* Links to files                                                      */

/* An absolute, normalised form of `path` ("." and ".." resolved, no
 * double slashes): the real path when the file exists, else `path`
 * joined to the current folder lexically. A new string, or NULL. */
static char *tpuci__html_abs(const char *path) {
  char *real = realpath(path, NULL), *joined, *cwd, *out;
  const char *p;
  tpuci__buf_t b;
  if (real != NULL) return real;
  if (path[0] == '/') {
    joined = tpuci__strdup(path);
  } else {
    if ((cwd = getcwd(NULL, 0)) == NULL) return NULL;
    joined = tpuci__printf("%s/%s", cwd, path);
    free(cwd);
  }
  tpuci__buf_init(&b);
  for (p = joined; *p;) {
    const char *end = strchr(p, '/');
    size_t n = end ? (size_t) (end - p) : strlen(p);
    if (n == 2 && p[0] == '.' && p[1] == '.') {
      while (b.len > 0 && b.data[b.len - 1] != '/') b.len--;
      if (b.len > 0) b.len--;
    } else if (n > 0 && !(n == 1 && p[0] == '.')) {
      tpuci__buf_add(&b, "/", 1);
      tpuci__buf_add(&b, p, n);
    }
    p += n;
    while (*p == '/') p++;
  }
  free(joined);
  if (b.len == 0) tpuci__buf_adds(&b, "/");
  if (b.data) b.data[b.len] = '\0';
  out = tpuci__buf_steal(&b);
  return out;
}

char *tpuci__html_rel(const char *page_dir, const char *path) {
  char *from = page_dir != NULL ? tpuci__html_abs(page_dir) : NULL;
  char *to = from != NULL ? tpuci__html_abs(path) : NULL;
  char *rel = from != NULL && to != NULL ? tpuci__path_rel(from, to) : tpuci__strdup(path);
  free(from);
  free(to);
  return rel;
}

void tpuci__html_href(tpuci__buf_t *b, const char *rel) {
  const char *p;
  /* Percent-encoded: only unreserved characters and '/' stay. */
  for (p = rel; *p; p++) {
    unsigned char c = (unsigned char) *p;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
        strchr("-._~/", c))
      tpuci__buf_add(b, p, 1);
    else tpuci__buf_addf(b, "%%%02X", c);
  }
}
