/* The HTML report's timeline: every attempt on its slot, as inline SVG;
 * slots assigned the way the scheduler fills them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/html.h"

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

size_t tpuci__html_slots(const tpuci__html_span_t *spans, size_t n, size_t *slots) {
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

/* One attempt on the timeline. */
typedef struct {
  size_t inst; /* index in the report's instances */
  const json_t *instance;
  const json_t *attempt;
  uint64_t start_ms;
  uint64_t end_ms;
} tpuci__tl_item_t;

/* Appends at most `max` characters (code points) of s, escaped, with an
 * ellipsis when cut. */
void tpuci__html_clip(tpuci__buf_t *b, const char *s, size_t max) {
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

size_t tpuci__html_utf8_chars(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    if (((unsigned char) *s & 0xC0) != 0x80) n++;
  return n;
}

/* A step for the time axis that gives about eight ticks. */
static uint64_t tpuci__tick_step(uint64_t span) {
  static const uint64_t steps[] = {1,       2,       5,        10,       20,       50,      100,
                                   200,     500,     1000,     2000,     5000,     10000,   15000,
                                   30000,   60000,   120000,   300000,   600000,   900000,  1800000,
                                   3600000, 7200000, 10800000, 21600000, 43200000, 86400000};
  size_t n = sizeof(steps) / sizeof(steps[0]), i;
  uint64_t target = span / 8 ? span / 8 : 1;
  for (i = 0; i < n; i++)
    if (steps[i] >= target) return steps[i];
  return (target + steps[n - 1] - 1) / steps[n - 1] * steps[n - 1];
}

static void tpuci__html_legend(tpuci__buf_t *b) {
  static const char *const shown[] = {"passed",    "failed",      "timeout",   "oom", "infra",
                                      "preempted", "no-capacity", "cancelled", NULL};
  size_t i;
  tpuci__buf_adds(b, "<ul class=\"legend\" aria-label=\"Legend\">");
  for (i = 0; shown[i]; i++)
    tpuci__buf_addf(b, "<li><span class=\"sw o-%s\" aria-hidden=\"true\"></span>%s</li>", shown[i],
                    shown[i]);
  tpuci__buf_adds(b, "<li><span class=\"sw flaky\" aria-hidden=\"true\"></span>"
                     "dashed outline: attempt of a flaky instance</li></ul>\n");
}

/* The label drawn inside a bar: the instance name, "#n" from the second
 * attempt on, and the outcome, shortened to what fits in `width` units;
 * nothing when even a few characters would not fit. */
static void tpuci__html_bar_label(tpuci__buf_t *b, const char *name, json_int_t number,
                                  const char *outcome, double width) {
  tpuci__buf_t full;
  size_t fit = width > 10 ? (size_t) ((width - 8) / TPUCI__TL_CHAR) : 0;
  if (fit < 3) return;
  tpuci__buf_init(&full);
  tpuci__buf_adds(&full, name);
  if (number > 1) tpuci__buf_addf(&full, " #%lld", (long long) number);
  if (tpuci__html_utf8_chars(full.data) + 3 + strlen(outcome) <= fit) {
    tpuci__buf_adds(&full, " \xC2\xB7 "); /* U+00B7 */
    tpuci__buf_adds(&full, outcome);
  }
  tpuci__html_clip(b, full.data, fit);
  tpuci__buf_free(&full);
}

void tpuci__html_timeline(tpuci__buf_t *b, const json_t *report, const json_t *instances) {
  tpuci__tl_item_t *items = NULL;
  tpuci__html_span_t *spans;
  size_t *slots, n = 0, cap = 0, nslots, i, k;
  uint64_t t0 = tpuci__html_juint(report, "start_ms"), t1, span, step, t;
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
      items[n].start_ms = tpuci__html_juint(att, "start_ms");
      items[n].end_ms = items[n].start_ms + tpuci__html_juint(att, "duration_ms");
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
    json_int_t w = tpuci__html_jint(items[i].attempt, "slots");
    spans[i].start_ms = items[i].start_ms;
    spans[i].end_ms = items[i].end_ms;
    /* Attempts take one slot; a later "slots" field (gangs) may say more. */
    spans[i].width = w > 1 && w <= 4096 ? (size_t) w : 1;
  }
  nslots = tpuci__html_slots(spans, n, slots);

  /* The axis runs from the run's start (or the first attempt's, if
   * earlier) to its end (or the last attempt's, if later). */
  if (t0 == 0) t0 = items[0].start_ms;
  t1 = t0 + tpuci__html_juint(report, "duration_ms");
  for (i = 0; i < n; i++) {
    if (items[i].start_ms < t0) t0 = items[i].start_ms;
    if (items[i].end_ms > t1) t1 = items[i].end_ms;
  }
  span = t1 > t0 ? t1 - t0 : 1;
  scale = (double) (TPUCI__TL_WIDTH - TPUCI__TL_LEFT - TPUCI__TL_RIGHT) / (double) span;
  height = TPUCI__TL_TOP + (double) nslots * TPUCI__TL_ROW + TPUCI__TL_BOTTOM;

  tpuci__buf_addf(b,
                  "<figure>\n<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" "
                  "viewBox=\"0 0 %d %.0f\" role=\"img\" "
                  "aria-labelledby=\"tl-title tl-desc\">\n",
                  TPUCI__TL_WIDTH, height);
  tpuci__buf_addf(b,
                  "<title id=\"tl-title\">Timeline: %zu attempt%s on %zu slot%s over %s</title>\n",
                  n, n == 1 ? "" : "s", nslots, nslots == 1 ? "" : "s",
                  tpuci__html_duration(span, d1, sizeof(d1)));
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
    tpuci__buf_addf(
        b, "<text class=\"axis\" x=\"%d\" y=\"%.0f\" text-anchor=\"end\">slot %zu</text>\n",
        TPUCI__TL_LEFT - 8, y + TPUCI__TL_ROW / 2 + 4, k + 1);
  }
  /* The time axis. */
  step = tpuci__tick_step(span);
  for (t = 0; t <= span; t += step) {
    double x = TPUCI__TL_LEFT + (double) t * scale;
    const char *anchor = x > TPUCI__TL_WIDTH - 40 ? "end" : "middle";
    tpuci__buf_addf(b,
                    "<line class=\"tick\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%.0f\"/>"
                    "<text class=\"axis\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%s</text>\n",
                    x, x, TPUCI__TL_TOP - 6, height - TPUCI__TL_BOTTOM, x, TPUCI__TL_TOP - 10,
                    anchor, t == 0 ? "0" : tpuci__html_duration(t, d1, sizeof(d1)));
    if (span - t < step) break;
  }
  /* The bars, in report order. */
  for (i = 0; i < n; i++) {
    const json_t *att = items[i].attempt, *in = items[i].instance;
    const char *name = tpuci__html_jstr(in, "name", NULL);
    const char *outcome = tpuci__html_jstr(att, "outcome", NULL);
    const char *cls = tpuci__html_outcome_class(outcome);
    int flaky = strcmp(tpuci__html_jstr(in, "outcome", NULL), "flaky") == 0;
    json_int_t number = tpuci__html_jint(att, "attempt");
    size_t total = json_array_size(json_object_get(in, "attempts"));
    double x = TPUCI__TL_LEFT + (double) (items[i].start_ms - t0) * scale;
    double w = (double) (items[i].end_ms - items[i].start_ms) * scale;
    double y =
        TPUCI__TL_TOP + (double) slots[i] * TPUCI__TL_ROW + (TPUCI__TL_ROW - TPUCI__TL_BAR) / 2.0;
    double h = (double) (spans[i].width - 1) * TPUCI__TL_ROW + TPUCI__TL_BAR;
    /* Short attempts stay visible. */
    if (w < 4) w = 4;
    if (number < 1) number = (json_int_t) i + 1;

    tpuci__buf_addf(b, "<a href=\"#i%zu-a%lld\"><title>", items[i].inst, (long long) number);
    tpuci__html_text(b, name);
    tpuci__buf_addf(b, " \xE2\x80\x94 attempt %lld of %zu: ", (long long) number, total);
    tpuci__html_text(b, *outcome ? outcome : "unknown");
    if (*tpuci__html_jstr(att, "cause", NULL)) {
      tpuci__buf_adds(b, " (");
      tpuci__html_field(b, att, "cause");
      tpuci__buf_adds(b, ")");
    }
    tpuci__buf_addf(b, ", %s, started at +%s",
                    tpuci__html_duration(items[i].end_ms - items[i].start_ms, d1, sizeof(d1)),
                    tpuci__html_duration(items[i].start_ms - t0, d2, sizeof(d2)));
    if (flaky) tpuci__buf_adds(b, "; the instance is flaky");
    tpuci__buf_addf(b,
                    "</title><rect class=\"b b-%s%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
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
  tpuci__buf_addf(b, "<p class=\"note\">%zu attempt%s on %zu slot%s", n, n == 1 ? "" : "s", nslots,
                  nslots == 1 ? "" : "s");
  if (tpuci__html_jint(report, "jobs") > 0)
    tpuci__buf_addf(b, " (the run allowed %lld at once)",
                    (long long) tpuci__html_jint(report, "jobs"));
  tpuci__buf_adds(b, ". Hover a bar for its details; select it to see its log.</p>");
  tpuci__html_legend(b);
  tpuci__buf_adds(b, "</figcaption>\n</figure>\n</section>\n");
  free(spans);
  free(slots);
  free(items);
}
