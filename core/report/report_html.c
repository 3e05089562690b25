/* The run report as one self-contained HTML5 page (see report_html.h and
 * docs/html-report.md). Everything taken from the report is user data
 * (instance names, causes, logs) and goes through tpuci__html_text(). */
#include "report/report_html.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The timeline's geometry, in SVG user units (the drawing scales to the
 * page's width). */
#define TPUCI__TL_WIDTH 1200
#define TPUCI__TL_LEFT 64
#define TPUCI__TL_RIGHT 14
#define TPUCI__TL_TOP 26
#define TPUCI__TL_ROW 30
#define TPUCI__TL_BAR 22
#define TPUCI__TL_BOTTOM 6
/* Roughly how wide one character of a 12-unit label is. */
#define TPUCI__TL_CHAR 7.0

static const char tpuci__html_repl[] = "\xEF\xBF\xBD"; /* U+FFFD */

/* ------------------------------------------------------------------ */
/* Escaping                                                            */

/* Skips the terminal escape sequence starting at the ESC at p: a CSI
 * (ESC [ parameters final), an OSC (ESC ] text BEL or ESC \), or ESC and
 * one more character. A sequence broken by a byte that cannot be part of
 * it ends before that byte. */
static const unsigned char *tpuci__ansi_skip(const unsigned char *p,
                                             const unsigned char *end) {
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
static void tpuci__html_textn(tpuci__buf_t *b, const char *s, size_t len,
                              int strip_ansi) {
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
        case '\t': case '\n': case '\r': break;
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

static void tpuci__html_text(tpuci__buf_t *b, const char *s) {
  tpuci__html_textn(b, s, strlen(s), 0);
}

/* ------------------------------------------------------------------ */
/* Reading the report tree: missing or mistyped fields read as empty.  */

static const char *tpuci__jstr(const json_t *o, const char *key, size_t *len) {
  const json_t *v = json_object_get(o, key);
  if (!json_is_string(v)) {
    if (len) *len = 0;
    return "";
  }
  if (len) *len = json_string_length(v);
  return json_string_value(v);
}

/* An integer field, or -1 when it is missing, null or not an integer. */
static json_int_t tpuci__jint(const json_t *o, const char *key) {
  const json_t *v = json_object_get(o, key);
  return json_is_integer(v) ? json_integer_value(v) : -1;
}

/* A non-negative integer field; anything else reads as 0. */
static uint64_t tpuci__juint(const json_t *o, const char *key) {
  json_int_t v = tpuci__jint(o, key);
  return v > 0 ? (uint64_t) v : 0;
}

/* Appends a string field, escaped. */
static void tpuci__html_field(tpuci__buf_t *b, const json_t *o, const char *key) {
  size_t len;
  const char *s = tpuci__jstr(o, key, &len);
  tpuci__html_textn(b, s, len, 0);
}

/* ------------------------------------------------------------------ */
/* Outcomes and small pieces                                           */

static const char *const tpuci__html_outcomes[] = {
    "passed", "flaky", "failed", "timeout", "oom",
    "infra", "cancelled", "not-run", NULL};

/* The CSS class suffix for an outcome: the outcome itself when it is one
 * tpuci knows (so class names never carry report text), else "unknown". */
static const char *tpuci__outcome_class(const char *outcome) {
  size_t i;
  for (i = 0; tpuci__html_outcomes[i]; i++)
    if (strcmp(outcome, tpuci__html_outcomes[i]) == 0) return tpuci__html_outcomes[i];
  return "unknown";
}

/* Whether an instance or attempt with this outcome did not pass. */
static int tpuci__outcome_bad(const char *outcome) {
  return strcmp(outcome, "failed") == 0 || strcmp(outcome, "timeout") == 0 ||
         strcmp(outcome, "oom") == 0 || strcmp(outcome, "infra") == 0;
}

/* A coloured label with the outcome's name: colour is never the only
 * signal. */
static void tpuci__html_badge(tpuci__buf_t *b, const char *outcome) {
  tpuci__buf_addf(b, "<span class=\"o o-%s\">", tpuci__outcome_class(outcome));
  tpuci__html_text(b, *outcome ? outcome : "unknown");
  tpuci__buf_adds(b, "</span>");
}

static const char *tpuci__duration(uint64_t ms, char *buf, size_t size) {
  return tpuci__duration_format(ms, buf, size);
}

static void tpuci__html_utc(uint64_t ms, char *buf, size_t size) {
  time_t t = (time_t) (ms / 1000);
  struct tm tm;
  if (ms == 0 || gmtime_r(&t, &tm) == NULL ||
      strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
    snprintf(buf, size, "unknown");
}

/* "python=3.11, torch=2.1" from an instance's matrix object. */
static void tpuci__html_matrix(tpuci__buf_t *b, const json_t *matrix) {
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
/* Slots                                                               */

typedef struct {
  const tpuci__html_span_t *spans;
  size_t index;
} tpuci__span_ref_t;

static int tpuci__span_cmp(const void *a, const void *b) {
  const tpuci__span_ref_t *x = a, *y = b;
  uint64_t sx = x->spans[x->index].start_ms, sy = y->spans[y->index].start_ms;
  if (sx != sy) return sx < sy ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

size_t tpuci__html_slots(const tpuci__html_span_t *spans, size_t n,
                         size_t *slots) {
  tpuci__span_ref_t *order;
  uint64_t *busy_until = NULL;
  size_t i, k, w, used = 0, cap = 0;

  if (n == 0) return 0;
  order = tpuci__malloc(n * sizeof(*order));
  for (i = 0; i < n; i++) {
    order[i].spans = spans;
    order[i].index = i;
  }
  qsort(order, n, sizeof(*order), tpuci__span_cmp);
  for (i = 0; i < n; i++) {
    const tpuci__html_span_t *s = &spans[order[i].index];
    uint64_t end = s->end_ms > s->start_ms ? s->end_ms : s->start_ms;
    size_t first = 0;
    w = s->width ? s->width : 1;
    /* The lowest run of w slots all free at the start; slots past `used`
     * have never been taken. */
    for (;;) {
      for (k = 0; k < w && first + k < used; k++)
        if (busy_until[first + k] > s->start_ms) break;
      if (k == w || first + k >= used) break;
      first += k + 1;
    }
    if (first + w > cap) {
      size_t old = cap;
      cap = (first + w) * 2;
      busy_until = tpuci__realloc(busy_until, cap * sizeof(*busy_until));
      memset(busy_until + old, 0, (cap - old) * sizeof(*busy_until));
    }
    for (k = 0; k < w; k++) busy_until[first + k] = end;
    if (first + w > used) used = first + w;
    slots[order[i].index] = first;
  }
  free(order);
  free(busy_until);
  return used;
}

/* ------------------------------------------------------------------ */
/* The page                                                            */

static const char tpuci__html_css[] =
    ":root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--bg:#fff;"
    "--card:#f6f8fa;--line:#d1d9e0;--row:#f6f8fa;--link:#0969da;"
    "--passed:#1a7f37;--failed:#cf222e;--timeout:#bc4c00;--oom:#8250df;"
    "--infra:#6e7781;--cancelled:#c8d1da;--flaky:#9a6700;--unknown:#afb8c1}\n"
    "@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;"
    "--bg:#0d1117;--card:#151b23;--line:#3d444d;--row:#151b23;--link:#4493f8;"
    "--cancelled:#8b949e}}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;color:var(--fg);background:var(--bg);"
    "font:14px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}\n"
    "a{color:var(--link)}\n"
    "code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,'DejaVu Sans Mono',monospace}\n"
    "header{background:var(--card);border-bottom:1px solid var(--line);padding:20px 32px 16px}\n"
    "header .brand{margin:0;color:var(--muted);font-size:12px;letter-spacing:.08em;"
    "text-transform:uppercase}\n"
    "h1{font-size:22px;margin:2px 0 10px;display:flex;flex-wrap:wrap;gap:12px;align-items:center}\n"
    "h2{font-size:18px;margin:28px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}\n"
    "h3{font-size:15px;margin:18px 0 6px;display:flex;flex-wrap:wrap;gap:8px;align-items:center}\n"
    "main{padding:0 32px 32px}\n"
    "nav{font-size:13px;margin-top:10px}nav a{margin-right:14px}\n"
    ".verdict{font-size:14px;font-weight:700;letter-spacing:.04em;color:#fff;"
    "padding:3px 12px;border-radius:6px;background:var(--unknown)}\n"
    ".v-passed{background:var(--passed)}.v-failed{background:var(--failed)}"
    ".v-interrupted{background:var(--timeout)}.v-not-run{background:var(--infra)}\n"
    "dl.meta{display:flex;flex-wrap:wrap;gap:8px 32px;margin:0 0 14px}\n"
    "dl.meta dt{color:var(--muted);font-size:11px;letter-spacing:.06em;text-transform:uppercase}\n"
    "dl.meta dd{margin:0;overflow-wrap:anywhere}\n"
    "ul.counts{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:8px}\n"
    "ul.counts li{display:flex;align-items:center;gap:6px;padding:3px 10px;"
    "border:1px solid var(--line);border-radius:6px;background:var(--bg)}\n"
    "ul.counts li.zero{color:var(--muted);opacity:.7}\n"
    "ul.counts .n{font-weight:700;font-variant-numeric:tabular-nums}\n"
    ".sw{display:inline-block;width:12px;height:12px;border-radius:3px;background:var(--unknown)}\n"
    ".alert{margin:12px 0 0;padding:10px 14px;border:1px solid var(--failed);"
    "border-left-width:6px;border-radius:6px;background:var(--bg)}\n"
    ".o{display:inline-block;padding:0 8px;border-radius:10px;font-size:12px;font-weight:600;"
    "line-height:20px;color:#fff;background:var(--unknown);white-space:nowrap}\n"
    ".o-passed{background:var(--passed)}.o-failed{background:var(--failed)}"
    ".o-timeout{background:var(--timeout)}.o-oom{background:var(--oom)}"
    ".o-infra{background:var(--infra)}.o-cancelled{background:var(--cancelled);color:#1f2328}"
    ".o-flaky{background:var(--flaky)}.o-not-run{background:transparent;color:var(--muted);"
    "border:1px dashed var(--muted);line-height:18px}.o-unknown{color:#1f2328}\n"
    ".sw.o-passed,.sw.o-failed,.sw.o-timeout,.sw.o-oom,.sw.o-infra,.sw.o-cancelled{padding:0}\n"
    ".sw.flaky{background:transparent;border:2px dashed var(--flaky)}\n"
    "figure{margin:0}svg.timeline{display:block;width:100%;height:auto;"
    "border:1px solid var(--line);border-radius:6px;background:var(--bg)}\n"
    "svg text{font:12px system-ui,'DejaVu Sans',sans-serif;fill:var(--fg)}\n"
    "svg .axis{fill:var(--muted)}svg .tick{stroke:var(--line);stroke-width:1}\n"
    "svg .lane{fill:var(--row)}\n"
    "svg .b{stroke:none}svg .b.flaky{stroke:var(--flaky);stroke-width:2.5;stroke-dasharray:5 3}\n"
    "svg .b-passed{fill:var(--passed)}svg .b-failed{fill:var(--failed)}"
    "svg .b-timeout{fill:var(--timeout)}svg .b-oom{fill:var(--oom)}"
    "svg .b-infra{fill:var(--infra)}svg .b-cancelled{fill:var(--cancelled)}"
    "svg .b-unknown{fill:var(--unknown)}\n"
    "svg text.l{fill:#fff;pointer-events:none}svg text.l.dark{fill:#1f2328}\n"
    "svg a:hover .b,svg a:focus .b{filter:brightness(1.15)}\n"
    "ul.legend{list-style:none;margin:8px 0 0;padding:0;display:flex;flex-wrap:wrap;"
    "gap:4px 16px;color:var(--muted);font-size:13px}\n"
    "ul.legend li{display:flex;align-items:center;gap:6px}\n"
    "p.note{color:var(--muted);margin:6px 0}\n"
    "table{border-collapse:collapse;width:100%}\n"
    "caption{text-align:left;color:var(--muted);padding:0 0 6px}\n"
    "th,td{text-align:left;padding:5px 10px;border-bottom:1px solid var(--line);vertical-align:top}\n"
    "thead th{background:var(--card);font-size:13px}\n"
    "tbody th{font-weight:600;overflow-wrap:anywhere}\n"
    "tbody th a{text-decoration:none}tbody th a:hover{text-decoration:underline}\n"
    "td.cause{width:40%}\n"
    "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "tr.bad th[scope=row]{box-shadow:inset 4px 0 var(--failed)}\n"
    "tr.flaky th[scope=row]{box-shadow:inset 4px 0 var(--flaky)}\n"
    "article.problem{border:1px solid var(--line);border-radius:6px;padding:2px 14px 10px;margin:10px 0}\n"
    "article.problem h3{margin-top:10px}h3 a{text-decoration:none}h3 a:hover{text-decoration:underline}\n"
    "ol.attempts{margin:4px 0;padding-left:22px}ol.attempts li{margin:2px 0}\n"
    ".muted{color:var(--muted)}\n"
    "details{border:1px solid var(--line);border-radius:6px;margin:6px 0;padding:4px 10px}\n"
    "details[open]{padding-bottom:10px}\n"
    "summary{cursor:pointer;display:list-item}summary .o{margin:0 4px}\n"
    "pre.log{margin:8px 0 0;padding:10px 12px;border-radius:6px;background:#0d1117;"
    "color:#e6edf3;font-size:12px;line-height:1.45;overflow:auto;max-height:32em;"
    "white-space:pre-wrap;overflow-wrap:anywhere}\n"
    "footer{padding:16px 32px;color:var(--muted);font-size:12px;border-top:1px solid var(--line)}\n";

/* One attempt on the timeline. */
typedef struct {
  size_t inst;              /* index in the report's instances */
  const json_t *instance;
  const json_t *attempt;
  uint64_t start_ms;
  uint64_t end_ms;
} tpuci__tl_item_t;

/* Appends at most `max` characters (code points) of s, escaped, with an
 * ellipsis when cut. */
static void tpuci__html_clip(tpuci__buf_t *b, const char *s, size_t max) {
  size_t i, chars = 0, cut = (size_t) -1, len = strlen(s);
  for (i = 0; i < len; i++) {
    if (((unsigned char) s[i] & 0xC0) == 0x80) continue;
    if (chars == (max > 0 ? max - 1 : 0) && cut == (size_t) -1) cut = i;
    if (++chars > max) break;
  }
  if (chars <= max) {
    tpuci__html_textn(b, s, len, 0);
    return;
  }
  tpuci__html_textn(b, s, cut, 0);
  tpuci__buf_adds(b, "\xE2\x80\xA6"); /* U+2026 */
}

static size_t tpuci__utf8_chars(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    if (((unsigned char) *s & 0xC0) != 0x80) n++;
  return n;
}

/* A step for the time axis that gives about eight ticks. */
static uint64_t tpuci__tick_step(uint64_t span) {
  static const uint64_t steps[] = {
      1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000,
      30000, 60000, 120000, 300000, 600000, 900000, 1800000, 3600000,
      7200000, 10800000, 21600000, 43200000, 86400000};
  size_t n = sizeof(steps) / sizeof(steps[0]), i;
  uint64_t target = span / 8 ? span / 8 : 1;
  for (i = 0; i < n; i++)
    if (steps[i] >= target) return steps[i];
  return (target + steps[n - 1] - 1) / steps[n - 1] * steps[n - 1];
}

static void tpuci__html_legend(tpuci__buf_t *b) {
  static const char *const shown[] = {"passed", "failed", "timeout", "oom",
                                      "infra", "cancelled", NULL};
  size_t i;
  tpuci__buf_adds(b, "<ul class=\"legend\" aria-label=\"Legend\">");
  for (i = 0; shown[i]; i++)
    tpuci__buf_addf(b, "<li><span class=\"sw o-%s\" aria-hidden=\"true\"></span>%s</li>",
                    shown[i], shown[i]);
  tpuci__buf_adds(b, "<li><span class=\"sw flaky\" aria-hidden=\"true\"></span>"
                     "dashed outline: attempt of a flaky instance</li></ul>\n");
}

/* The label drawn inside a bar: the instance name, "#n" from the second
 * attempt on, and the outcome, shortened to what fits in `width` units;
 * nothing when even a few characters would not fit. */
static void tpuci__html_bar_label(tpuci__buf_t *b, const char *name,
                                  json_int_t number, const char *outcome,
                                  double width) {
  tpuci__buf_t full;
  size_t fit = width > 10 ? (size_t) ((width - 8) / TPUCI__TL_CHAR) : 0;
  if (fit < 3) return;
  tpuci__buf_init(&full);
  tpuci__buf_adds(&full, name);
  if (number > 1) tpuci__buf_addf(&full, " #%lld", (long long) number);
  if (tpuci__utf8_chars(full.data) + 3 + strlen(outcome) <= fit) {
    tpuci__buf_adds(&full, " \xC2\xB7 "); /* U+00B7 */
    tpuci__buf_adds(&full, outcome);
  }
  tpuci__html_clip(b, full.data, fit);
  tpuci__buf_free(&full);
}

static void tpuci__html_timeline(tpuci__buf_t *b, const json_t *report,
                                 const json_t *instances) {
  tpuci__tl_item_t *items = NULL;
  tpuci__html_span_t *spans;
  size_t *slots, n = 0, cap = 0, nslots, i, k;
  uint64_t t0 = tpuci__juint(report, "start_ms"), t1, span, step, t;
  const json_t *inst;
  double scale, height;
  char d1[32], d2[32];

  json_array_foreach((json_t *) instances, i, inst) {
    const json_t *att;
    json_array_foreach(json_object_get(inst, "attempts"), k, att) {
      if (!json_is_object(att)) continue;
      if (n == cap) {
        cap = cap ? cap * 2 : 16;
        items = tpuci__realloc(items, cap * sizeof(*items));
      }
      items[n].inst = i;
      items[n].instance = inst;
      items[n].attempt = att;
      items[n].start_ms = tpuci__juint(att, "start_ms");
      items[n].end_ms = items[n].start_ms + tpuci__juint(att, "duration_ms");
      n++;
    }
  }
  tpuci__buf_adds(b, "<section id=\"timeline\" aria-labelledby=\"h-timeline\">"
                     "<h2 id=\"h-timeline\">Timeline</h2>\n");
  if (n == 0) {
    tpuci__buf_adds(b, "<p class=\"note\">No attempt ran, so there is nothing to draw.</p>"
                       "</section>\n");
    free(items);
    return;
  }

  spans = tpuci__malloc(n * sizeof(*spans));
  slots = tpuci__malloc(n * sizeof(*slots));
  for (i = 0; i < n; i++) {
    json_int_t w = tpuci__jint(items[i].attempt, "slots");
    spans[i].start_ms = items[i].start_ms;
    spans[i].end_ms = items[i].end_ms;
    /* Attempts take one slot; a later "slots" field (gangs) may say more. */
    spans[i].width = w > 1 && w <= 4096 ? (size_t) w : 1;
  }
  nslots = tpuci__html_slots(spans, n, slots);

  /* The axis runs from the run's start (or the first attempt's, if
   * earlier) to its end (or the last attempt's, if later). */
  if (t0 == 0) t0 = items[0].start_ms;
  t1 = t0 + tpuci__juint(report, "duration_ms");
  for (i = 0; i < n; i++) {
    if (items[i].start_ms < t0) t0 = items[i].start_ms;
    if (items[i].end_ms > t1) t1 = items[i].end_ms;
  }
  span = t1 > t0 ? t1 - t0 : 1;
  scale = (double) (TPUCI__TL_WIDTH - TPUCI__TL_LEFT - TPUCI__TL_RIGHT) / (double) span;
  height = TPUCI__TL_TOP + (double) nslots * TPUCI__TL_ROW + TPUCI__TL_BOTTOM;

  tpuci__buf_addf(b, "<figure>\n<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" "
                     "viewBox=\"0 0 %d %.0f\" role=\"img\" "
                     "aria-labelledby=\"tl-title tl-desc\">\n",
                  TPUCI__TL_WIDTH, height);
  tpuci__buf_addf(b, "<title id=\"tl-title\">Timeline: %zu attempt%s on %zu slot%s over %s</title>\n",
                  n, n == 1 ? "" : "s", nslots, nslots == 1 ? "" : "s",
                  tpuci__duration(span, d1, sizeof(d1)));
  tpuci__buf_adds(b, "<desc id=\"tl-desc\">Each bar is one attempt, drawn on the slot it ran "
                     "in from its start to its end and coloured by its outcome. The "
                     "Instances table lists the same attempts as text.</desc>\n");
  /* Lanes and their labels. */
  for (k = 0; k < nslots; k++) {
    double y = TPUCI__TL_TOP + (double) k * TPUCI__TL_ROW;
    if (k % 2 == 0)
      tpuci__buf_addf(b, "<rect class=\"lane\" x=\"%d\" y=\"%.0f\" width=\"%d\" height=\"%d\"/>\n",
                      TPUCI__TL_LEFT, y, TPUCI__TL_WIDTH - TPUCI__TL_LEFT - TPUCI__TL_RIGHT,
                      TPUCI__TL_ROW);
    tpuci__buf_addf(b, "<text class=\"axis\" x=\"%d\" y=\"%.0f\" text-anchor=\"end\">slot %zu</text>\n",
                    TPUCI__TL_LEFT - 8, y + TPUCI__TL_ROW / 2 + 4, k + 1);
  }
  /* The time axis. */
  step = tpuci__tick_step(span);
  for (t = 0; t <= span; t += step) {
    double x = TPUCI__TL_LEFT + (double) t * scale;
    const char *anchor = x > TPUCI__TL_WIDTH - 40 ? "end" : "middle";
    tpuci__buf_addf(b, "<line class=\"tick\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%.0f\"/>"
                       "<text class=\"axis\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%s</text>\n",
                    x, x, TPUCI__TL_TOP - 6, height - TPUCI__TL_BOTTOM, x, TPUCI__TL_TOP - 10,
                    anchor, t == 0 ? "0" : tpuci__duration(t, d1, sizeof(d1)));
    if (span - t < step) break;
  }
  /* The bars, in report order. */
  for (i = 0; i < n; i++) {
    const json_t *att = items[i].attempt, *in = items[i].instance;
    const char *name = tpuci__jstr(in, "name", NULL);
    const char *outcome = tpuci__jstr(att, "outcome", NULL);
    const char *cls = tpuci__outcome_class(outcome);
    int flaky = strcmp(tpuci__jstr(in, "outcome", NULL), "flaky") == 0;
    json_int_t number = tpuci__jint(att, "attempt");
    size_t total = json_array_size(json_object_get(in, "attempts"));
    double x = TPUCI__TL_LEFT + (double) (items[i].start_ms - t0) * scale;
    double w = (double) (items[i].end_ms - items[i].start_ms) * scale;
    double y = TPUCI__TL_TOP + (double) slots[i] * TPUCI__TL_ROW +
               (TPUCI__TL_ROW - TPUCI__TL_BAR) / 2.0;
    double h = (double) (spans[i].width - 1) * TPUCI__TL_ROW + TPUCI__TL_BAR;
    /* Short attempts stay visible. */
    if (w < 4) w = 4;
    if (number < 1) number = (json_int_t) i + 1;

    tpuci__buf_addf(b, "<a href=\"#i%zu-a%lld\"><title>", items[i].inst, (long long) number);
    tpuci__html_text(b, name);
    tpuci__buf_addf(b, " \xE2\x80\x94 attempt %lld of %zu: ", (long long) number, total);
    tpuci__html_text(b, *outcome ? outcome : "unknown");
    if (*tpuci__jstr(att, "cause", NULL)) {
      tpuci__buf_adds(b, " (");
      tpuci__html_field(b, att, "cause");
      tpuci__buf_adds(b, ")");
    }
    tpuci__buf_addf(b, ", %s, started at +%s",
                    tpuci__duration(items[i].end_ms - items[i].start_ms, d1, sizeof(d1)),
                    tpuci__duration(items[i].start_ms - t0, d2, sizeof(d2)));
    if (flaky) tpuci__buf_adds(b, "; the instance is flaky");
    tpuci__buf_addf(b, "</title><rect class=\"b b-%s%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                       "height=\"%.0f\" rx=\"3\"/>",
                    cls, flaky ? " flaky" : "", x, y, w, h);
    if (w > 10 + 3 * TPUCI__TL_CHAR) {
      tpuci__buf_addf(b, "<text class=\"l%s\" x=\"%.1f\" y=\"%.1f\">",
                      strcmp(cls, "cancelled") == 0 || strcmp(cls, "unknown") == 0 ? " dark" : "",
                      x + 5, y + TPUCI__TL_BAR / 2.0 + 4);
      tpuci__html_bar_label(b, name, number, *outcome ? outcome : "unknown", w);
      tpuci__buf_adds(b, "</text>");
    }
    tpuci__buf_adds(b, "</a>\n");
  }
  tpuci__buf_adds(b, "</svg>\n<figcaption>");
  tpuci__buf_addf(b, "<p class=\"note\">%zu attempt%s on %zu slot%s",
                  n, n == 1 ? "" : "s", nslots, nslots == 1 ? "" : "s");
  if (tpuci__jint(report, "jobs") > 0)
    tpuci__buf_addf(b, " (the run allowed %lld at once)", (long long) tpuci__jint(report, "jobs"));
  tpuci__buf_adds(b, ". Hover a bar for its details; select it to see its log.</p>");
  tpuci__html_legend(b);
  tpuci__buf_adds(b, "</figcaption>\n</figure>\n</section>\n");
  free(spans);
  free(slots);
  free(items);
}

/* Files of the run's records that could not be written. */
static void tpuci__html_write_errors(tpuci__buf_t *b, const json_t *errors) {
  const json_t *we;
  size_t k;
  if (json_array_size(errors) == 0) return;
  tpuci__buf_addf(b, "<p class=\"alert\" role=\"alert\"><strong>Records incomplete:</strong> "
                     "%zu file%s could not be written.</p>\n<ul class=\"alert\">\n",
                  json_array_size(errors), json_array_size(errors) == 1 ? "" : "s");
  json_array_foreach(errors, k, we) {
    tpuci__buf_adds(b, "<li><code>");
    tpuci__html_field(b, we, "path");
    tpuci__buf_adds(b, "</code>: ");
    tpuci__html_field(b, we, "error");
    tpuci__buf_adds(b, "</li>\n");
  }
  tpuci__buf_adds(b, "</ul>\n");
}

static void tpuci__html_header(tpuci__buf_t *b, const json_t *report) {
  static const struct {
    const char *key;
    const char *label;
  } counts[] = {{"passed", "passed"}, {"flaky", "flaky"}, {"failed", "failed"},
                {"timeout", "timeout"}, {"oom", "oom"}, {"infra", "infra"},
                {"cancelled", "cancelled"}, {"not-run", "not run"}};
  const char *verdict = tpuci__jstr(report, "verdict", NULL);
  const json_t *jc = json_object_get(report, "counts");
  char d[64];
  size_t k;

  tpuci__buf_adds(b, "<header>\n<p class=\"brand\">tpuci run report</p>\n<h1 id=\"h-run\">Run <code>");
  tpuci__html_field(b, report, "run_id");
  tpuci__buf_adds(b, "</code> ");
  /* The verdict's class comes from a fixed list too. */
  if (strcmp(verdict, "passed") == 0 || strcmp(verdict, "failed") == 0 ||
      strcmp(verdict, "interrupted") == 0 || strcmp(verdict, "not-run") == 0)
    tpuci__buf_addf(b, "<span class=\"verdict v-%s\">", verdict);
  else
    tpuci__buf_adds(b, "<span class=\"verdict\">");
  if (strcmp(verdict, "not-run") == 0) {
    tpuci__buf_adds(b, "NOT RUN");
  } else {
    const char *p;
    for (p = *verdict ? verdict : "unknown"; *p; p++) {
      char c = *p >= 'a' && *p <= 'z' ? (char) (*p - 'a' + 'A') : *p;
      tpuci__html_textn(b, &c, 1, 0);
    }
  }
  tpuci__buf_adds(b, "</span></h1>\n<dl class=\"meta\">\n<div><dt>Spec</dt><dd><code>");
  tpuci__html_field(b, report, "spec");
  tpuci__html_utc(tpuci__juint(report, "start_ms"), d, sizeof(d));
  tpuci__buf_addf(b, "</code></dd></div>\n<div><dt>Started</dt><dd>%s</dd></div>\n", d);
  tpuci__buf_addf(b, "<div><dt>Duration</dt><dd>%s</dd></div>\n",
                  tpuci__duration(tpuci__juint(report, "duration_ms"), d, sizeof(d)));
  if (tpuci__jint(report, "jobs") > 0)
    tpuci__buf_addf(b, "<div><dt>Slots</dt><dd>%lld at once (<code>-j</code>)</dd></div>\n",
                    (long long) tpuci__jint(report, "jobs"));
  if (tpuci__jint(report, "exit_code") >= 0)
    tpuci__buf_addf(b, "<div><dt>Exit code</dt><dd>%lld</dd></div>\n",
                    (long long) tpuci__jint(report, "exit_code"));
  if (*tpuci__jstr(report, "run_dir", NULL)) {
    tpuci__buf_adds(b, "<div><dt>Run folder</dt><dd><code>");
    tpuci__html_field(b, report, "run_dir");
    tpuci__buf_adds(b, "</code></dd></div>\n");
  }
  tpuci__buf_adds(b, "</dl>\n<ul class=\"counts\" aria-label=\"Instances by outcome\">\n");
  for (k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
    uint64_t v = tpuci__juint(jc, counts[k].key);
    tpuci__buf_addf(b, "<li class=\"c-%s%s\"><span class=\"sw o-%s\" aria-hidden=\"true\"></span>"
                       "<span class=\"n\">%llu</span> %s</li>\n",
                    counts[k].key, v ? "" : " zero", counts[k].key, (unsigned long long) v,
                    counts[k].label);
  }
  tpuci__buf_addf(b, "<li class=\"c-total\"><span class=\"n\">%llu</span> total</li>\n</ul>\n",
                  (unsigned long long) (json_object_get(jc, "total")
                                            ? tpuci__juint(jc, "total")
                                            : json_array_size(json_object_get(report, "instances"))));
  if (*tpuci__jstr(report, "error", NULL)) {
    tpuci__buf_adds(b, "<p class=\"alert\" role=\"alert\"><strong>Nothing ran:</strong> ");
    tpuci__html_field(b, report, "error");
    tpuci__buf_adds(b, "</p>\n");
  }
  tpuci__html_write_errors(b, json_object_get(report, "write_errors"));
  tpuci__buf_adds(b, "<nav aria-label=\"Sections\"><a href=\"#timeline\">Timeline</a>"
                     "<a href=\"#instances\">Instances</a>"
                     "<a href=\"#problems\">Failures and flaky</a>"
                     "<a href=\"#logs\">Attempts and logs</a></nav>\n</header>\n");
}

/* An instance's duration: the sum of its attempts', as the console's
 * summary table shows it. */
static uint64_t tpuci__instance_ms(const json_t *inst) {
  const json_t *att;
  uint64_t sum = 0;
  size_t k;
  json_array_foreach(json_object_get(inst, "attempts"), k, att)
    sum += tpuci__juint(att, "duration_ms");
  return sum;
}

/* The last attempt of an instance, or NULL. */
static const json_t *tpuci__last_attempt(const json_t *inst) {
  const json_t *a = json_object_get(inst, "attempts");
  size_t n = json_array_size(a);
  return n ? json_array_get(a, n - 1) : NULL;
}

static void tpuci__html_table(tpuci__buf_t *b, const json_t *instances) {
  const json_t *inst;
  size_t i, n = json_array_size(instances);
  char d[32];

  tpuci__buf_adds(b, "<section id=\"instances\" aria-labelledby=\"h-instances\">"
                     "<h2 id=\"h-instances\">Instances</h2>\n");
  if (n == 0) {
    tpuci__buf_adds(b, "<p class=\"note\">The run had no instance to run.</p></section>\n");
    return;
  }
  tpuci__buf_addf(b, "<table>\n<caption>%zu instance%s; the time is the sum of their attempts"
                     "</caption>\n<thead><tr><th scope=\"col\">Instance</th>"
                     "<th scope=\"col\">Outcome</th><th scope=\"col\" class=\"num\">Attempts</th>"
                     "<th scope=\"col\" class=\"num\">Time</th><th scope=\"col\">Last cause</th>"
                     "</tr></thead>\n<tbody>\n",
                  n, n == 1 ? "" : "s");
  json_array_foreach((json_t *) instances, i, inst) {
    const char *outcome = tpuci__jstr(inst, "outcome", NULL);
    const json_t *last = tpuci__last_attempt(inst);
    const char *row = tpuci__outcome_bad(outcome) ? " class=\"bad\""
                      : strcmp(outcome, "flaky") == 0 ? " class=\"flaky\"" : "";
    tpuci__buf_addf(b, "<tr%s><th scope=\"row\"><a href=\"#i%zu\">", row, i);
    tpuci__html_field(b, inst, "name");
    tpuci__buf_adds(b, "</a></th><td>");
    tpuci__html_badge(b, outcome);
    tpuci__buf_addf(b, "</td><td class=\"num\">%zu</td><td class=\"num\">%s</td><td class=\"cause\">",
                    json_array_size(json_object_get(inst, "attempts")),
                    tpuci__duration(tpuci__instance_ms(inst), d, sizeof(d)));
    if (last) tpuci__html_field(b, last, "cause");
    else tpuci__buf_adds(b, "<span class=\"muted\">never started</span>");
    tpuci__buf_adds(b, "</td></tr>\n");
  }
  tpuci__buf_adds(b, "</tbody>\n</table>\n</section>\n");
}

/* HOOK(tests): per-test results. An instance may carry a "tests" array of
 * {"id", "outcome", "duration_s", "message"} (from the JUnit files its
 * attempts wrote); when it does, the failure section counts them and
 * lists those that did not pass or get skipped. Until the report has the
 * field, instances have no "tests" and this draws nothing. */
static void tpuci__html_tests(tpuci__buf_t *b, const json_t *inst) {
  const json_t *tests = json_object_get(inst, "tests"), *t;
  size_t i, total = json_array_size(tests), npassed = 0, nskipped = 0, nbad = 0;
  char d[32];

  if (!json_is_array(tests) || total == 0) return;
  json_array_foreach((json_t *) tests, i, t) {
    const char *o = tpuci__jstr(t, "outcome", NULL);
    if (strcmp(o, "passed") == 0) npassed++;
    else if (strcmp(o, "skipped") == 0) nskipped++;
    else nbad++;
  }
  tpuci__buf_addf(b, "<div class=\"tests\" data-hook=\"tests\"><p>Tests: %zu, %zu passed, "
                     "%zu skipped, %zu did not pass.</p>\n",
                  total, npassed, nskipped, nbad);
  if (nbad) {
    tpuci__buf_adds(b, "<table><thead><tr><th scope=\"col\">Test</th><th scope=\"col\">Outcome</th>"
                       "<th scope=\"col\" class=\"num\">Time</th><th scope=\"col\">Message</th>"
                       "</tr></thead>\n<tbody>\n");
    json_array_foreach((json_t *) tests, i, t) {
      const char *o = tpuci__jstr(t, "outcome", NULL);
      const json_t *ds = json_object_get(t, "duration_s");
      size_t mlen;
      const char *msg = tpuci__jstr(t, "message", &mlen);
      if (strcmp(o, "passed") == 0 || strcmp(o, "skipped") == 0) continue;
      tpuci__buf_adds(b, "<tr><th scope=\"row\"><code>");
      tpuci__html_field(b, t, "id");
      tpuci__buf_addf(b, "</code></th><td><span class=\"o o-%s\">",
                      strcmp(o, "timeout") == 0 ? "timeout" : "failed");
      tpuci__html_text(b, *o ? o : "unknown");
      d[0] = '\0';
      if (json_is_number(ds) && json_number_value(ds) >= 0 && json_number_value(ds) < 1e12)
        tpuci__duration((uint64_t) (json_number_value(ds) * 1000.0 + 0.5), d, sizeof(d));
      tpuci__buf_addf(b, "</span></td><td class=\"num\">%s</td><td>", d);
      if (mlen) {
        tpuci__buf_adds(b, "<pre class=\"log\">");
        tpuci__html_textn(b, msg, mlen, 1);
        tpuci__buf_adds(b, "</pre>");
      }
      tpuci__buf_adds(b, "</td></tr>\n");
    }
    tpuci__buf_adds(b, "</tbody></table>\n");
  }
  tpuci__buf_adds(b, "</div>\n");
}

/* "declared at spec.lua:3 · matrix python=3.11" */
static void tpuci__html_where(tpuci__buf_t *b, const json_t *inst) {
  const json_t *m = json_object_get(inst, "matrix");
  int any = 0;
  tpuci__buf_adds(b, "<p class=\"muted\">");
  if (*tpuci__jstr(inst, "job", NULL)) {
    tpuci__buf_adds(b, "job <code>");
    tpuci__html_field(b, inst, "job");
    tpuci__buf_adds(b, "</code>");
    any = 1;
  }
  if (*tpuci__jstr(inst, "where", NULL)) {
    tpuci__buf_adds(b, any ? ", declared at <code>" : "declared at <code>");
    tpuci__html_field(b, inst, "where");
    tpuci__buf_adds(b, "</code>");
    any = 1;
  }
  if (json_object_size(m)) {
    tpuci__buf_adds(b, any ? "; matrix " : "matrix ");
    tpuci__html_matrix(b, m);
  }
  tpuci__buf_adds(b, "</p>\n");
}

static void tpuci__html_problems(tpuci__buf_t *b, const json_t *instances) {
  const json_t *inst;
  size_t i, shown = 0, notrun = 0;
  char d[32];

  tpuci__buf_adds(b, "<section id=\"problems\" aria-labelledby=\"h-problems\">"
                     "<h2 id=\"h-problems\">Failures and flaky instances</h2>\n");
  json_array_foreach((json_t *) instances, i, inst) {
    const char *outcome = tpuci__jstr(inst, "outcome", NULL);
    const json_t *att;
    size_t k;
    if (strcmp(outcome, "not-run") == 0) notrun++;
    if (strcmp(outcome, "passed") == 0 || strcmp(outcome, "not-run") == 0) continue;
    shown++;
    tpuci__buf_addf(b, "<article class=\"problem\" aria-labelledby=\"p%zu\">"
                       "<h3 id=\"p%zu\"><a href=\"#i%zu\">", i, i, i);
    tpuci__html_field(b, inst, "name");
    tpuci__buf_adds(b, "</a> ");
    tpuci__html_badge(b, outcome);
    tpuci__buf_adds(b, "</h3>\n");
    tpuci__html_where(b, inst);
    if (json_array_size(json_object_get(inst, "attempts")) == 0) {
      tpuci__buf_adds(b, "<p>It never started (the run stopped before its turn).</p>\n");
    } else {
      tpuci__buf_adds(b, "<ol class=\"attempts\">\n");
      json_array_foreach(json_object_get(inst, "attempts"), k, att) {
        tpuci__buf_addf(b, "<li><a href=\"#i%zu-a%zu\">Attempt %zu</a>: ", i, k + 1, k + 1);
        tpuci__html_badge(b, tpuci__jstr(att, "outcome", NULL));
        tpuci__buf_adds(b, " ");
        tpuci__html_field(b, att, "cause");
        tpuci__buf_addf(b, " <span class=\"muted\">(%s)</span></li>\n",
                        tpuci__duration(tpuci__juint(att, "duration_ms"), d, sizeof(d)));
      }
      tpuci__buf_adds(b, "</ol>\n");
    }
    tpuci__html_tests(b, inst);
    tpuci__buf_adds(b, "</article>\n");
  }
  if (shown == 0) {
    if (notrun > 0)
      tpuci__buf_adds(b, "<p class=\"note\">Nothing ran, so nothing failed: see the reason "
                         "at the top.</p>\n");
    else if (json_array_size(instances) > 0)
      tpuci__buf_adds(b, "<p class=\"note\">None: every instance passed on its first "
                         "attempt.</p>\n");
    else
      tpuci__buf_adds(b, "<p class=\"note\">None.</p>\n");
  }
  tpuci__buf_adds(b, "</section>\n");
}

static void tpuci__html_logs(tpuci__buf_t *b, const json_t *instances) {
  const json_t *inst;
  size_t i;
  char d[32];

  tpuci__buf_adds(b, "<section id=\"logs\" aria-labelledby=\"h-logs\">"
                     "<h2 id=\"h-logs\">Attempts and logs</h2>\n");
  if (json_array_size(instances) == 0)
    tpuci__buf_adds(b, "<p class=\"note\">No instances.</p>\n");
  json_array_foreach((json_t *) instances, i, inst) {
    const char *outcome = tpuci__jstr(inst, "outcome", NULL);
    const json_t *atts = json_object_get(inst, "attempts"), *att;
    size_t k, n = json_array_size(atts);
    tpuci__buf_addf(b, "<section id=\"i%zu\" aria-labelledby=\"i%zu-h\"><h3 id=\"i%zu-h\">",
                    i, i, i);
    tpuci__html_field(b, inst, "name");
    tpuci__buf_adds(b, " ");
    tpuci__html_badge(b, outcome);
    tpuci__buf_adds(b, "</h3>\n");
    tpuci__html_where(b, inst);
    if (n == 0)
      tpuci__buf_adds(b, strcmp(outcome, "not-run") == 0
                             ? "<p class=\"muted\">Not run.</p>\n"
                             : "<p class=\"muted\">Never started.</p>\n");
    json_array_foreach((json_t *) atts, k, att) {
      const char *ao = tpuci__jstr(att, "outcome", NULL);
      const json_t *tail = json_object_get(att, "log_tail");
      /* The last attempt of an instance that failed opens by itself. */
      int open = k + 1 == n && tpuci__outcome_bad(outcome);
      tpuci__buf_addf(b, "<details id=\"i%zu-a%zu\"%s><summary>Attempt %zu ", i, k + 1,
                      open ? " open" : "", k + 1);
      tpuci__html_badge(b, ao);
      tpuci__buf_adds(b, " ");
      tpuci__html_field(b, att, "cause");
      tpuci__buf_addf(b, " <span class=\"muted\">in %s</span></summary>\n",
                      tpuci__duration(tpuci__juint(att, "duration_ms"), d, sizeof(d)));
      if (*tpuci__jstr(att, "log", NULL)) {
        tpuci__buf_adds(b, "<p class=\"muted\">Log: <code>");
        tpuci__html_field(b, att, "log");
        tpuci__buf_adds(b, "</code> (its last lines below)</p>\n");
      }
      if (!json_is_string(tail))
        tpuci__buf_adds(b, "<p class=\"muted\">No log was recorded.</p>\n");
      else if (json_string_length(tail) == 0)
        tpuci__buf_adds(b, "<p class=\"muted\">The log is empty.</p>\n");
      else {
        tpuci__buf_adds(b, "<pre class=\"log\">");
        tpuci__html_textn(b, json_string_value(tail), json_string_length(tail), 1);
        tpuci__buf_adds(b, "</pre>\n");
      }
      tpuci__buf_adds(b, "</details>\n");
    }
    tpuci__buf_adds(b, "</section>\n");
  }
  tpuci__buf_adds(b, "</section>\n");
}

int tpuci__report_html(const json_t *report, tpuci__buf_t *out,
                       tpuci__err_t *err) {
  const json_t *instances;
  json_t *empty = NULL;
  const char *verdict;

  if (!json_is_object(report)) {
    if (err) tpuci__err_set(err, TPUCI_EUSAGE, "the report is not a JSON object");
    return TPUCI_EUSAGE;
  }
  instances = json_object_get(report, "instances");
  if (instances != NULL && !json_is_array(instances)) {
    if (err) tpuci__err_set(err, TPUCI_EUSAGE, "the report's \"instances\" is not an array");
    return TPUCI_EUSAGE;
  }
  if (instances == NULL) instances = empty = json_array();
  verdict = tpuci__jstr(report, "verdict", NULL);

  tpuci__buf_adds(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                       "style-src 'unsafe-inline'\">\n<meta name=\"generator\" content=\"tpuci\">\n"
                       "<title>tpuci run ");
  tpuci__html_field(out, report, "run_id");
  tpuci__buf_adds(out, ": ");
  tpuci__html_text(out, strcmp(verdict, "not-run") == 0 ? "not run" : *verdict ? verdict : "unknown");
  tpuci__buf_adds(out, "</title>\n<style>\n");
  tpuci__buf_adds(out, tpuci__html_css);
  tpuci__buf_adds(out, "</style>\n</head>\n<body>\n");
  tpuci__html_header(out, report);
  tpuci__buf_adds(out, "<main>\n");
  tpuci__html_timeline(out, report, instances);
  tpuci__html_table(out, instances);
  tpuci__html_problems(out, instances);
  tpuci__html_logs(out, instances);
  tpuci__buf_addf(out, "</main>\n<footer>Written by tpuci from a version %lld run report. "
                       "The page is self-contained: no script, no external file.</footer>\n"
                       "</body>\n</html>\n",
                  (long long) tpuci__jint(report, "version"));
  if (empty) json_decref(empty);
  return 0;
}
