/* The HTML report on hand-built report trees: hostile strings come out as
 * text, slots for overlapping attempts, an empty run, a run where nothing
 * ran, the per-test hook, and the same bytes for the same report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "report/html.h"
#include "report/report.h"
#include "report/report_html.h"
#include "base/util.h"

/* What hostile data tries to smuggle in. */
#define HOSTILE_NAME "<img src=x onerror=alert(1)>\"'&"
#define HOSTILE_CAUSE "</title><script>alert(2)</script>"
#define HOSTILE_LOG "<script>alert(3)</script>\n</pre></details><b id=\"pwned\">x</b>\n"

/* ------------------------------------------------------------------ */
/* Building reports                                                    */

static json_t *attempt(int number, const char *outcome, uint64_t start_ms,
                       uint64_t duration_ms, const char *cause, json_t *tail) {
  json_t *a = json_pack("{s:i, s:s, s:i, s:n, s:I, s:I, s:s, s:s}",
                        "attempt", number, "outcome", outcome,
                        "exit_code", strcmp(outcome, "passed") ? 1 : 0, "signal",
                        "start_ms", (json_int_t) start_ms, "duration_ms",
                        (json_int_t) duration_ms, "cause", cause, "log", "run/x/attempt.log");
  json_object_set_new(a, "log_tail", tail ? tail : json_null());
  return a;
}

static json_t *instance(const char *name, const char *outcome, json_t *attempts) {
  return json_pack("{s:s, s:s, s:s, s:{}, s:s, s:o}", "name", name, "job", name,
                   "where", "spec.lua:1", "matrix", "outcome", outcome,
                   "attempts", attempts ? attempts : json_array());
}

static json_t *report(const char *verdict, int exit_code, json_t *error,
                      json_t *instances) {
  json_t *r = json_pack("{s:i, s:s, s:s, s:s, s:I, s:I, s:i, s:i, s:s, s:o, s:{}, s:o}",
                        "version", 1, "run_id", "20261202-143015",
                        "run_dir", ".tpuci/runs/20261202-143015", "spec", "spec.lua",
                        "start_ms", (json_int_t) 1764686415000, "duration_ms",
                        (json_int_t) 5000, "jobs", 2, "exit_code", exit_code,
                        "verdict", verdict, "error", error ? error : json_null(),
                        "counts", "instances", instances);
  json_t *counts = json_object_get(r, "counts"), *inst;
  static const char *const keys[] = {"passed", "failed", "timeout", "oom", "infra",
                                     "cancelled", "flaky", "not-run", NULL};
  size_t i, k;
  for (k = 0; keys[k]; k++) json_object_set_new(counts, keys[k], json_integer(0));
  json_array_foreach(instances, i, inst) {
    const char *o = json_string_value(json_object_get(inst, "outcome"));
    json_object_set_new(counts, o, json_integer(json_integer_value(json_object_get(counts, o)) + 1));
  }
  json_object_set_new(counts, "total", json_integer((json_int_t) json_array_size(instances)));
  return r;
}

static char *render(const json_t *r) {
  tpuci__buf_t b;
  tpuci__err_t err = {0, NULL};
  tpuci__buf_init(&b);
  assert_int_equal(tpuci__report_html(r, &b, &err), 0);
  assert_null(err.msg);
  return tpuci__buf_steal(&b);
}

/* ------------------------------------------------------------------ */
/* Checks on a page                                                    */

static void assert_contains(const char *page, const char *what) {
  if (strstr(page, what) == NULL) fail_msg("the page has no '%s'", what);
}

static void assert_lacks(const char *page, const char *what) {
  if (strstr(page, what) != NULL) fail_msg("the page has '%s'", what);
}

static size_t count(const char *page, const char *what) {
  size_t n = 0;
  const char *p = page;
  while ((p = strstr(p, what)) != NULL) {
    n++;
    p += strlen(what);
  }
  return n;
}

/* Every '<' in the page opens (or closes) one of the elements the writer
 * uses, so no report string became markup. */
static void assert_only_known_tags(const char *page) {
  static const char *const known[] = {
      "!DOCTYPE", "html", "head", "meta", "title", "style", "body", "header", "p", "h1",
      "h2", "h3", "code", "span", "dl", "dt", "dd", "ul", "li", "nav", "a", "main",
      "section", "figure", "svg", "rect", "text", "line", "desc", "figcaption", "table",
      "caption", "thead", "tbody", "tr", "th", "td", "article", "ol", "details",
      "summary", "pre", "footer", "strong", "div", "input", "label", "i", NULL};
  const char *p = page;
  while ((p = strchr(p, '<')) != NULL) {
    char name[16];
    size_t n = 0, k;
    p++;
    if (*p == '/') p++;
    while (n < sizeof(name) - 1 && (p[n] == '!' || (p[n] >= 'a' && p[n] <= 'z') ||
                                    (p[n] >= 'A' && p[n] <= 'Z') || (p[n] >= '0' && p[n] <= '9')))
      n++;
    memcpy(name, p, n);
    name[n] = '\0';
    for (k = 0; known[k]; k++)
      if (strcmp(known[k], name) == 0) break;
    if (known[k] == NULL) fail_msg("unexpected tag '<%s' near: %.60s", name, p);
  }
}

/* The page is valid UTF-8 with no control character but tab, newline and
 * carriage return. */
static void assert_clean_utf8(const char *page) {
  const unsigned char *p = (const unsigned char *) page;
  while (*p) {
    size_t n = 0, i;
    if (*p < 0x80) {
      if ((*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') || *p == 0x7F)
        fail_msg("control character 0x%02x in the page", *p);
      p++;
      continue;
    }
    if (*p >= 0xC2 && *p <= 0xDF) n = 2;
    else if (*p >= 0xE0 && *p <= 0xEF) n = 3;
    else if (*p >= 0xF0 && *p <= 0xF4) n = 4;
    else fail_msg("bad UTF-8 lead byte 0x%02x", *p);
    for (i = 1; i < n; i++)
      if ((p[i] & 0xC0) != 0x80) fail_msg("bad UTF-8 continuation byte");
    p += n;
  }
}

static void assert_balanced(const char *page) {
  static const char *const pairs[][2] = {
      {"<section", "</section>"}, {"<details", "</details>"}, {"<table", "</table>"}, {"<article", "</article>"}, {"<pre", "</pre>"}, {"<svg", "</svg>"}, {"<title", "</title>"}, {"<ul", "</ul>"}, {"<ol", "</ol>"}, {"<a ", "</a>"}};
  size_t k;
  for (k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++)
    if (count(page, pairs[k][0]) != count(page, pairs[k][1]))
      fail_msg("%zu %s but %zu %s", count(page, pairs[k][0]), pairs[k][0],
               count(page, pairs[k][1]), pairs[k][1]);
  assert_int_equal(strncmp(page, "<!DOCTYPE html>\n", 16), 0);
  assert_non_null(strstr(page, "</html>\n"));
}

static void assert_sane(const char *page) {
  assert_only_known_tags(page);
  assert_clean_utf8(page);
  assert_balanced(page);
  /* Self-contained: nothing is fetched and nothing runs. */
  assert_lacks(page, "<script");
  assert_lacks(page, "http://e");
  assert_lacks(page, "https://");
  assert_lacks(page, "@import");
  assert_lacks(page, "url(");
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */

static void test_escapes_hostile_strings(void **state) {
  /* A log tail with markup, invalid UTF-8, a NUL, control characters and
   * terminal colours; jansson's _nocheck lets a tree hold bad bytes, as a
   * hand-edited or foreign report could. */
  static const char tail[] = HOSTILE_LOG "bad \xff\xfe utf8, nul \0 here, bell \x07,"
                                         " C1 \xc2\x85, \x1b[31mred\x1b[0m, \x1b]0;title\x07 osc, ok \xc3\xa9\n";
  json_t *insts = json_array(), *atts = json_array(), *r;
  char *page;
  (void) state;

  json_array_append_new(atts, attempt(1, "failed", 1764686415000, 1000, HOSTILE_CAUSE,
                                      json_stringn_nocheck(tail, sizeof(tail) - 1)));
  json_array_append_new(insts, instance(HOSTILE_NAME, "failed", atts));
  json_object_set_new(json_array_get(insts, 0), "matrix",
                      json_pack("{s:s}", "k<b>", "v</td>"));
  r = report("failed", 1, NULL, insts);
  json_object_set_new(r, "run_id", json_string("<script>alert(4)</script>"));
  json_object_set_new(r, "spec", json_string("a'b\"c&d<e>.lua"));
  json_object_set_new(r, "verdict", json_string("<i>weird</i>"));
  page = render(r);
  assert_sane(page);
  assert_contains(page, "&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;");
  assert_contains(page, "&lt;/title&gt;&lt;script&gt;alert(2)&lt;/script&gt;");
  assert_contains(page, "&lt;script&gt;alert(3)&lt;/script&gt;\n&lt;/pre&gt;&lt;/details&gt;"
                        "&lt;b id=&quot;pwned&quot;&gt;x&lt;/b&gt;");
  assert_contains(page, "&lt;script&gt;alert(4)&lt;/script&gt;");
  assert_contains(page, "a&#39;b&quot;c&amp;d&lt;e&gt;.lua");
  assert_contains(page, "k&lt;b&gt;=v&lt;/td&gt;");
  /* An unknown verdict shows as text without a class of its own. */
  assert_contains(page, "<span class=\"verdict\">&lt;I&gt;WEIRD&lt;/I&gt;</span>");
  /* Bad bytes and controls become U+FFFD; colours and OSC titles go. */
  assert_contains(page, "bad \xEF\xBF\xBD\xEF\xBF\xBD utf8, nul \xEF\xBF\xBD here, bell "
                        "\xEF\xBF\xBD, C1 \xEF\xBF\xBD, red,  osc, ok \xc3\xa9\n");
  assert_lacks(page, "[31m");
  /* The report's strings never pick a CSS class. */
  assert_lacks(page, "v-<");
  free(page);
  json_decref(r);
}

static void test_slots_direct(void **state) {
  /* Out of order on purpose: the slots follow the start times. */
  tpuci__html_span_t spans[] = {
      {10, 20, 1}, /* C */
      {0, 10, 1},  /* A */
      {12, 14, 1}, /* D */
      {5, 15, 1},  /* B */
      {20, 20, 1}, /* E: zero length */
      {20, 30, 2}, /* F: a gang of two */
      {21, 25, 1}, /* G */
  };
  size_t slots[7];
  (void) state;

  assert_int_equal(tpuci__html_slots(spans, 7, slots), 3);
  assert_int_equal(slots[1], 0); /* A: the first slot */
  assert_int_equal(slots[3], 1); /* B: slot 0 is busy until 10 */
  assert_int_equal(slots[0], 0); /* C: slot 0 is free at 10 again */
  assert_int_equal(slots[2], 2); /* D: 0 busy until 20, 1 until 15 */
  assert_int_equal(slots[4], 0); /* E: everything is free at 20 */
  assert_int_equal(slots[5], 0); /* F: slots 0 and 1 */
  assert_int_equal(slots[6], 2); /* G: the lowest one F left */
  assert_int_equal(tpuci__html_slots(spans, 0, slots), 0);
  {
    /* Same start: the array order decides. */
    tpuci__html_span_t same[] = {{5, 9, 1}, {5, 6, 1}, {5, 7, 1}, {6, 8, 1}};
    size_t s[4];
    assert_int_equal(tpuci__html_slots(same, 4, s), 3);
    assert_int_equal(s[0], 0);
    assert_int_equal(s[1], 1);
    assert_int_equal(s[2], 2);
    assert_int_equal(s[3], 1);
  }
  {
    /* A gang needs adjacent free slots: 1 is busy, so it goes to 2 and 3. */
    tpuci__html_span_t g[] = {{0, 10, 1}, {0, 20, 1}, {0, 5, 1}, {6, 9, 2}};
    size_t s[4];
    assert_int_equal(tpuci__html_slots(g, 4, s), 4);
    assert_int_equal(s[2], 2);
    assert_int_equal(s[3], 2);
  }
}

static void test_slots_in_page(void **state) {
  json_t *insts = json_array(), *r;
  char *page;
  uint64_t t = 1764686415000;
  (void) state;

  /* Three attempts overlap at t+500 (more than -j 2: a report from a
   * future gang scheduler, say): three lanes. A retry after the first
   * ended reuses slot 1. */
  json_array_append_new(insts, instance("a", "flaky",
                                        json_pack("[o,o]", attempt(1, "failed", t, 1000, "exit 1", NULL),
                                                  attempt(2, "passed", t + 1200, 800, "exit 0", json_string("ok\n")))));
  json_array_append_new(insts, instance("b", "timeout",
                                        json_pack("[o]", attempt(1, "timeout", t + 100, 3000, "timed out", NULL))));
  json_array_append_new(insts, instance("c", "passed",
                                        json_pack("[o]", attempt(1, "passed", t + 400, 500, "exit 0", NULL))));
  r = report("failed", 1, NULL, insts);
  page = render(r);
  assert_sane(page);
  assert_contains(page, ">slot 3</text>");
  assert_lacks(page, ">slot 4</text>");
  assert_contains(page, "4 attempts on 3 slots");
  /* a's two attempts share slot 1 (y = top + row/2 offset), b is on 2. */
  assert_contains(page, "<rect class=\"b b-failed flaky\" x=\"64.0\" y=\"30.0\"");
  assert_contains(page, "<rect class=\"b b-passed flaky\" x=\"333.3\" y=\"30.0\"");
  assert_contains(page, "<rect class=\"b b-timeout\" x=\"86.4\" y=\"60.0\"");
  assert_contains(page, "<rect class=\"b b-passed\" x=\"153.8\" y=\"90.0\"");
  /* Tooltips name the instance, attempt, outcome, cause and duration. */
  assert_contains(page, "<title>a \xE2\x80\x94 attempt 1 of 2: failed (exit 1), 1s, "
                        "started at +0ms; the instance is flaky</title>");
  assert_contains(page, "<title>b \xE2\x80\x94 attempt 1 of 1: timeout (timed out), 3s, "
                        "started at +100ms</title>");
  /* Bars link to their attempt; failures open their last log. */
  assert_contains(page, "<a href=\"#i0-a2\">");
  assert_contains(page, "<details id=\"i1-a1\" open>");
  assert_contains(page, "<details id=\"i0-a1\">");
  assert_contains(page, "No log was recorded.");
  free(page);
  json_decref(r);
}

static void test_empty_run(void **state) {
  json_t *r = report("passed", 0, NULL, json_array());
  char *page;
  (void) state;
  page = render(r);
  assert_sane(page);
  assert_contains(page, "<span class=\"verdict v-passed\">PASSED</span>");
  assert_contains(page, "No attempt ran, so there is nothing to draw.");
  assert_contains(page, "The run had no instance to run.");
  assert_contains(page, "<span class=\"n\">0</span> total");
  assert_lacks(page, "<svg");
  {
    /* The stylesheet (core/report/report_html.css) whole, from its first
     * rule to its last, without the comments of the file. */
    const char *css = strstr(page, "<style>\n:root{color-scheme:light dark;");
    const char *end = strstr(page, ".r:not(.r-not-applicable){display:none}\n</style>\n");
    assert_non_null(css);
    assert_non_null(end);
    assert_non_null(strstr(css, "\ninput.fi{position:absolute;"));
    assert_true(strstr(css, "/*") == NULL || strstr(css, "/*") > end);
  }
  free(page);
  json_decref(r);
}

static void test_not_run(void **state) {
  json_t *insts = json_array(), *r;
  char *page;
  (void) state;
  json_array_append_new(insts, instance("unit[python=3.11]", "not-run", NULL));
  json_array_append_new(insts, instance("lint", "not-run", NULL));
  r = report("not-run", 3, json_string("cannot reach the engine at unix:///var/run/docker.sock <x>"),
             insts);
  page = render(r);
  assert_sane(page);
  assert_contains(page, "<title>tpuci run 20261202-143015: not run</title>");
  assert_contains(page, "<span class=\"verdict v-not-run\">NOT RUN</span>");
  assert_contains(page, "<p class=\"alert\" role=\"alert\"><strong>Nothing ran:</strong> "
                        "cannot reach the engine at unix:///var/run/docker.sock &lt;x&gt;</p>");
  assert_contains(page, "<span class=\"n\">2</span> not run");
  assert_contains(page, "Nothing ran, so nothing failed");
  assert_contains(page, "<span class=\"o o-not-run\">not-run</span>");
  assert_contains(page, "<p class=\"muted\">Not run.</p>");
  assert_contains(page, "<span class=\"muted\">never started</span>");
  assert_lacks(page, "<svg");
  free(page);
  json_decref(r);
}

/* An order-dependent test and its instance (issue 31): a class of its
 * own in the header's counts, the filter, the badge and its order; the
 * failing-first process said. */
static void test_order_dependent(void **state) {
  json_t *insts = json_array(), *r, *inst, *t;
  char *page;
  (void) state;
  inst = instance("unit", "order-dependent",
                  json_pack("[o,o]", attempt(1, "failed", 1764686415000, 2000, "exit 1", json_string("")),
                            attempt(2, "passed", 1764686418000, 1000, "exit 0", json_string(""))));
  t = json_pack("{s:s,s:s,s:b,s:b,s:f,s:s,s:s}", "id", "t/b.py::test_victim", "outcome", "passed",
                "flaky", 0, "order_dependent", 1, "duration_s", 0.1, "message",
                "AssertionError: dirty", "recent", "pfo");
  json_object_set_new(t, "order", json_pack("{s:i,s:i,s:b,s:[s],s:b,s:s,s:i,s:s}", "failed_in", 1, "passed_in", 2, "brittle", 0, "candidates", "t/a.py::test_p", "confirmed", 1, "polluter", "t/a.py::test_p", "checks", 1, "text", "failed after 1 test in attempt 1, passed in attempt 2; it "
                                                                                                                                                                                                                                    "fails after t/a.py::test_p (found by 1 check)"));
  json_object_set_new(inst, "tests", json_pack("[o]", t));
  json_object_set_new(inst, "first", json_pack("{s:[s],s:s,s:s,s:i,s:n,s:I,s:I,s:s,s:s}", "tests", "t/z.py::test_broken", "why", "failed in the last run", "outcome", "failed", "exit_code", 1, "signal", "start_ms", (json_int_t) 1764686414000, "duration_ms", (json_int_t) 500, "cause", "exit 1", "log", "unit/first.log"));
  json_array_append_new(insts, inst);
  r = report("passed", 0, NULL, insts);
  page = render(r);
  assert_sane(page);
  assert_contains(page, "<li class=\"c-order-dependent\"><span class=\"sw o-order-dependent\" "
                        "aria-hidden=\"true\"></span><span class=\"n\">1</span> order-dependent</li>");
  assert_contains(page, "<label for=\"f-order-dependent\">order-dependent (1)</label>");
  assert_contains(page, "<tr class=\"tt t-order tt-order-dependent\"><th scope=\"row\"><code>"
                        "t/b.py::test_victim</code></th><td><span class=\"o o-order-dependent\">"
                        "order-dependent</span>");
  assert_contains(page, "<p data-hook=\"order\">failed after 1 test in attempt 1, passed in "
                        "attempt 2; it fails after t/a.py::test_p (found by 1 check)</p>");
  assert_contains(page, "<i class=\"r-o\">o</i>");
  assert_contains(page, "<p data-hook=\"first\">Failing first: 1 test that failed last time ran "
                        "first, in a process of their own: <code>t/z.py::test_broken</code>");
  assert_contains(page, "(0 flaky, 1 order-dependent)");
  free(page);
  json_decref(r);
}

static void test_cancelled_and_tests_hook(void **state) {
  json_t *insts = json_array(), *r, *inst;
  char *page;
  (void) state;
  inst = instance("unit", "failed",
                  json_pack("[o]", attempt(1, "failed", 1764686415000, 2000, "exit 1",
                                           json_string(""))));
  json_object_set_new(inst, "tests", json_pack("[{s:s,s:s,s:f,s:s},{s:s,s:s,s:f,s:s},{s:s,s:s,s:f,s:s},{s:s,s:s,s:b,s:f,s:s}]", "id", "tests/test_a.py::test_ok", "outcome", "passed", "duration_s", 0.5, "message", "", "id", "tests/test_a.py::test_<bad>", "outcome", "failed", "duration_s", 1.25, "message", "AssertionError: <script>x</script>", "id", "tests/test_b.py::test_skip", "outcome", "skipped", "duration_s", 0.0, "message", "no TPU", "id", "tests/test_c.py::test_wobbly", "outcome", "passed", "flaky", 1, "duration_s", 0.25, "message", "ConnectionError: reset"));
  json_object_set_new(inst, "image", json_string("gcr.io/x/<img>:1"));
  json_object_set_new(inst, "topology", json_string("v4-8"));
  json_array_append_new(insts, inst);
  json_array_append_new(insts, instance("later", "cancelled", NULL));
  r = report("failed", 1, NULL, insts);
  page = render(r);
  assert_sane(page);
  assert_contains(page, "data-hook=\"tests\"><p>Tests: 4, 2 passed (1 flaky), 1 skipped, 1 did not pass.</p>");
  /* A flaky test is named, with the failure that was retried away. */
  assert_contains(page, "<tr class=\"tt t-flaky tt-flaky\"><th scope=\"row\"><code>tests/test_c.py::test_wobbly</code></th>"
                        "<td><span class=\"o o-flaky\">flaky</span>");
  assert_contains(page, "<tr class=\"tt t-bad tt-failed\"><th scope=\"row\"><code>tests/test_a.py::test_&lt;bad&gt;");
  /* The filter per test: the failed instance holds a flaky test, so
   * "flaky" is a choice that shows it (and only that test of it). */
  assert_contains(page, "<tr class=\"r r-failed bad h-flaky h-failed\">");
  assert_contains(page, "<article class=\"problem r r-failed h-flaky h-failed\"");
  assert_contains(page, "<section id=\"i0\" class=\"r r-failed h-flaky h-failed\"");
  /* Its count is the header's (no flaky instance); the failed instance
   * it shows holds a flaky test, and says so (issue 31). */
  assert_contains(page, "<span class=\"n\">0</span> flaky");
  assert_contains(page, "<label for=\"f-flaky\">flaky (0; +1 holding flaky tests)</label>");
  assert_contains(page, "<label for=\"f-failed\">failed (1)</label>");
  assert_contains(page, "id=\"f-flaky\">");
  assert_contains(page, "#f-flaky:checked~section tr.tt:not(.tt-flaky)");
  assert_contains(page, "ConnectionError: reset");
  assert_lacks(page, "test_ok</code>");
  /* Where it ran. */
  assert_contains(page, "; image <code>gcr.io/x/&lt;img&gt;:1</code>; topology <code>v4-8</code>");
  assert_contains(page, "<code>tests/test_a.py::test_&lt;bad&gt;</code>");
  assert_contains(page, "AssertionError: &lt;script&gt;x&lt;/script&gt;");
  assert_contains(page, "1.2s");
  assert_lacks(page, "test_skip</code>");
  assert_contains(page, "The log is empty.");
  assert_contains(page, "It never started");
  assert_contains(page, "<span class=\"o o-cancelled\">cancelled</span>");
  free(page);
  json_decref(r);
}

static void test_deterministic(void **state) {
  json_t *insts = json_array(), *r, *copy;
  char *a, *b, *text;
  (void) state;
  json_array_append_new(insts, instance("x", "passed",
                                        json_pack("[o]", attempt(1, "passed", 1764686415000, 20, "exit 0", NULL))));
  json_object_set_new(json_array_get(insts, 0), "matrix",
                      json_pack("{s:s,s:s,s:s}", "z", "1", "a", "2", "m", "3"));
  r = report("passed", 0, NULL, insts);
  a = render(r);
  b = render(r);
  assert_string_equal(a, b);
  /* Through JSON text and back (what the driver does) gives the same. */
  text = json_dumps(r, JSON_PRESERVE_ORDER);
  copy = json_loads(text, 0, NULL);
  free(b);
  b = render(copy);
  assert_string_equal(a, b);
  /* The matrix keeps its declared order. */
  assert_contains(a, "matrix z=1, a=2, m=3");
  free(a);
  free(b);
  free(text);
  json_decref(copy);
  json_decref(r);
}

static void test_rejects_non_reports(void **state) {
  tpuci__buf_t b;
  tpuci__err_t err = {0, NULL};
  json_t *arr = json_array(), *bad = json_pack("{s:s}", "instances", "nope");
  (void) state;
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "kept");
  assert_int_equal(tpuci__report_html(arr, &b, &err), TPUCI_EUSAGE);
  assert_string_equal(err.msg, "the report is not a JSON object");
  tpuci__err_clear(&err);
  assert_int_equal(tpuci__report_html(bad, &b, NULL), TPUCI_EUSAGE);
  assert_int_equal(tpuci__report_html(NULL, &b, NULL), TPUCI_EUSAGE);
  assert_string_equal(b.data, "kept");
  tpuci__buf_free(&b);
  json_decref(arr);
  json_decref(bad);
}

static void test_long_names_are_clipped(void **state) {
  char name[200];
  json_t *insts = json_array(), *r;
  char *page;
  size_t i;
  (void) state;
  /* Two-byte characters, so a cut in the middle of one would show. */
  for (i = 0; i + 2 < sizeof(name); i += 2) memcpy(name + i, "\xc3\xa9", 2);
  name[i] = '\0';
  json_array_append_new(insts, instance(name, "passed",
                                        json_pack("[o]", attempt(1, "passed", 1764686415000, 1000, "exit 0", NULL))));
  r = report("passed", 0, NULL, insts);
  json_object_set_new(r, "duration_ms", json_integer(5000));
  page = render(r);
  assert_sane(page);
  assert_contains(page, "\xc3\xa9\xE2\x80\xA6</text>");
  free(page);
  json_decref(r);
}

/* Log links: relative to the page's folder, percent-encoded (their
 * labels: the same path, as text: test_log_label). */
static void check_href(const char *page_dir, const char *path, const char *want) {
  tpuci__buf_t b;
  char *rel = tpuci__html_rel(page_dir, path);
  tpuci__buf_init(&b);
  tpuci__html_href(&b, rel);
  free(rel);
  if (strcmp(b.data ? b.data : "", want) != 0)
    fail_msg("href(%s, %s) = %s, want %s", page_dir ? page_dir : "NULL", path,
             b.data ? b.data : "", want);
  tpuci__buf_free(&b);
}

static void test_log_links(void **state) {
  (void) state;
  check_href("/w/.tpuci/runs/r1", "/w/.tpuci/runs/r1/bad/attempt-1.log", "bad/attempt-1.log");
  check_href("/w", "/w/.tpuci/runs/r1/bad/attempt-1.log", ".tpuci/runs/r1/bad/attempt-1.log");
  check_href("/w/out/pages", "/w/.tpuci/runs/r1/x.log", "../../.tpuci/runs/r1/x.log");
  check_href("/w/b", "/w/bc/x.log", "../bc/x.log");
  check_href("/", "/w/x.log", "w/x.log");
  check_href("/w/./a/../", "/w//x.log", "x.log");
  check_href("/w", "/w/a b/#?%\"<'>.log", "a%20b/%23%3F%25%22%3C%27%3E.log");
  check_href(NULL, ".tpuci/runs/r1/a b.log", ".tpuci/runs/r1/a%20b.log");
}

/* Every outcome the filter bar offers has its badge colour, its
 * highlighted label and its rule that hides the other rows: a choice
 * without them shows everything (not-applicable, preempted and
 * no-capacity once had none). */
static void test_filter_rules(void **state) {
  static const char *const outcomes[] = {"passed", "cached", "flaky", "failed", "timeout",
                                         "oom", "infra", "preempted", "no-capacity",
                                         "cancelled", "not-run", "not-applicable", NULL};
  json_t *insts = json_array(), *r;
  char *page;
  size_t k;
  (void) state;
  for (k = 0; outcomes[k]; k++)
    json_array_append_new(insts, instance(outcomes[k], outcomes[k],
                                          json_pack("[o]", attempt(1, outcomes[k], 1764686415000, 1000, "why", NULL))));
  r = report("failed", 1, NULL, insts);
  page = render(r);
  assert_sane(page);
  for (k = 0; outcomes[k]; k++) {
    const char *o = outcomes[k];
    char *radio = tpuci__printf("id=\"f-%s\"", o);
    char *label = tpuci__printf("#f-%s:checked~nav label[for=f-%s]", o, o);
    char *hide = tpuci__printf("#f-%s:checked~section .r:not(.r-%s)", o, o);
    char *badge = tpuci__printf(".o-%s", o);
    assert_contains(page, radio);
    assert_contains(page, label);
    assert_contains(page, hide);
    assert_contains(page, badge);
    free(radio);
    free(label);
    free(hide);
    free(badge);
  }
  assert_contains(page, "<label for=\"f-not-applicable\">not applicable (1)</label>");
  free(page);
  json_decref(r);
}

/* A log link's label is the path the link follows, from the page: not
 * the path as recorded (from wherever tpuci ran). */
static void test_log_label(void **state) {
  json_t *insts = json_array(), *r;
  tpuci__buf_t b;
  tpuci__err_t err = {0, NULL};
  (void) state;
  json_array_append_new(insts, instance("bad", "failed",
                                        json_pack("[o]", attempt(1, "failed", 1764686415000, 1000, "exit 1", NULL))));
  r = report("failed", 1, NULL, insts);
  tpuci__buf_init(&b);
  assert_int_equal(tpuci__report_html_at(r, "/w/site", &b, &err), 0);
  assert_null(err.msg);
  /* "run/x/attempt.log" is relative to the current folder. */
  {
    char *cwd = getcwd(NULL, 0), *want;
    char *rel = tpuci__path_rel("/w/site", cwd);
    want = tpuci__printf("href=\"%s/run/x/attempt.log\"><code>%s/run/x/attempt.log</code>", rel,
                         rel);
    assert_contains(b.data, want);
    assert_lacks(b.data, "<code>run/x/attempt.log</code>");
    free(want);
    free(rel);
    free(cwd);
  }
  tpuci__buf_free(&b);
  json_decref(r);
}

/* The commit of the spec's repository, read from .git without git. */
static void put(const char *dir, const char *name, const char *text) {
  char *path = tpuci__printf("%s/%s", dir, name);
  assert_int_equal(tpuci__write_file_atomic(path, text, strlen(text)), 0);
  free(path);
}

static void test_git_commit(void **state) {
  const char *a = "0123456789abcdef0123456789abcdef01234567";
  const char *b = "89abcdef0123456789abcdef0123456789abcdef";
  char tmpl[] = "/tmp/tpuci-git-XXXXXX", *root, *sub, *c;
  (void) state;
  root = mkdtemp(tmpl);
  assert_non_null(root);
  sub = tpuci__printf("%s/repo/ci/specs", root);
  assert_int_equal(tpuci__mkdir_p(sub, 0755), 0);
  assert_null(tpuci__git_commit(sub)); /* no repository (unless /tmp is in one) */
  c = tpuci__printf("%s/repo/.git/refs/heads", root);
  assert_int_equal(tpuci__mkdir_p(c, 0755), 0);
  free(c);
  c = tpuci__printf("%s/repo/.git", root);
  /* A branch in packed-refs only, then as a loose ref (which wins). */
  put(c, "HEAD", "ref: refs/heads/main\n");
  put(c, "packed-refs", "# pack-refs with: peeled fully-peeled sorted\n");
  assert_null(tpuci__git_commit(sub));
  put(c, "packed-refs", "# pack-refs with: peeled\n89abcdef0123456789abcdef0123456789abcdef refs/heads/other\n"
                        "0123456789abcdef0123456789abcdef01234567 refs/heads/main\n^89abcdef0123456789abcdef0123456789abcdef\n");
  free(c);
  c = tpuci__git_commit(sub);
  assert_string_equal(c, a);
  free(c);
  c = tpuci__printf("%s/repo/.git/refs/heads", root);
  put(c, "main", "89abcdef0123456789abcdef0123456789abcdef\n");
  free(c);
  c = tpuci__git_commit(sub);
  assert_string_equal(c, b);
  free(c);
  /* A worktree: .git is a file naming its git folder, whose commondir
   * holds the refs; a detached HEAD is the commit itself. */
  c = tpuci__printf("%s/wt/src", root);
  assert_int_equal(tpuci__mkdir_p(c, 0755), 0);
  free(c);
  c = tpuci__printf("%s/repo/.git/worktrees/wt", root);
  assert_int_equal(tpuci__mkdir_p(c, 0755), 0);
  put(c, "HEAD", "ref: refs/heads/other\n");
  put(c, "commondir", "../..\n");
  free(c);
  c = tpuci__printf("%s/wt", root);
  {
    char *line = tpuci__printf("gitdir: %s/repo/.git/worktrees/wt\n", root);
    put(c, ".git", line);
    free(line);
  }
  free(c);
  c = tpuci__printf("%s/wt/src", root);
  {
    char *got = tpuci__git_commit(c);
    assert_string_equal(got, b); /* refs/heads/other from packed-refs */
    free(got);
  }
  free(c);
  c = tpuci__printf("%s/repo/.git/worktrees/wt", root);
  put(c, "HEAD", "0123456789abcdef0123456789abcdef01234567\n");
  free(c);
  c = tpuci__printf("%s/wt/src", root);
  {
    char *got = tpuci__git_commit(c);
    assert_string_equal(got, a);
    free(got);
  }
  free(c);
  assert_null(tpuci__git_commit("relative/path"));
  free(sub);
  c = tpuci__printf("rm -rf '%s'", root);
  assert_int_equal(system(c), 0);
  free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_escapes_hostile_strings),
      cmocka_unit_test(test_slots_direct),
      cmocka_unit_test(test_slots_in_page),
      cmocka_unit_test(test_empty_run),
      cmocka_unit_test(test_not_run),
      cmocka_unit_test(test_cancelled_and_tests_hook),
      cmocka_unit_test(test_order_dependent),
      cmocka_unit_test(test_log_links),
      cmocka_unit_test(test_log_label),
      cmocka_unit_test(test_filter_rules),
      cmocka_unit_test(test_git_commit),
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_rejects_non_reports),
      cmocka_unit_test(test_long_names_are_clipped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
