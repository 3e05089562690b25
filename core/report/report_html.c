/* The run report as one self-contained HTML5 page (see report_html.h and
 * docs/html-report.md). Everything taken from the report is user data
 * (instance names, causes, logs) and goes through tpuci__html_text(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/html.h"

/* ------------------------------------------------------------------ */
/* The page                                                            */

/* The stylesheet: core/report/report_html.css, built in by
 * cmake/embed.cmake without its comments (CMakeLists.txt). */
extern const char tpuci__data_report_html[];
extern const size_t tpuci__data_report_html_len;

/* The filter's key of a test the failure section lists: "flaky",
 * "order-dependent", "failed" (failed or error), "not-run", or NULL (a
 * quarantined test that passed or was skipped). */
static const char *tpuci__html_test_key(const json_t *t) {
  const char *o = json_string_value(json_object_get(t, "outcome"));
  if (json_is_true(json_object_get(t, "flaky"))) return "flaky";
  if (json_is_true(json_object_get(t, "order_dependent"))) return "order-dependent";
  if (o == NULL) return NULL;
  if (strcmp(o, "failed") == 0 || strcmp(o, "error") == 0) return "failed";
  if (strcmp(o, "not-run") == 0) return "not-run";
  return NULL;
}

/* Whether instance inst holds a test whose key is `key`. */
static int tpuci__html_holds(const json_t *inst, const char *key) {
  const json_t *t;
  size_t i;
  json_array_foreach(json_object_get(inst, "tests"), i, t) {
    const char *k = tpuci__html_test_key(t);
    if (k != NULL && strcmp(k, key) == 0) return 1;
  }
  return 0;
}

/* " h-flaky h-failed ...": the test outcomes an instance's element holds,
 * for the filter. */
static void tpuci__html_holds_classes(tpuci__buf_t *b, const json_t *inst) {
  static const char *const keys[] = {"flaky", "order-dependent", "failed", "not-run"};
  size_t k;
  for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
    if (tpuci__html_holds(inst, keys[k])) tpuci__buf_addf(b, " h-%s", keys[k]);
}

/* Files of the run's records that could not be written. */
static void tpuci__html_write_errors(tpuci__buf_t *b, const json_t *errors) {
  const json_t *we;
  size_t k;
  if (json_array_size(errors) == 0) return;
  tpuci__buf_addf(b,
                  "<p class=\"alert\" role=\"alert\"><strong>Records incomplete:</strong> "
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

/* The outcomes the header counts and the filter bar offers, in that
 * order: a key of summary.json's counts (and a CSS class), and how it
 * reads. */
static const struct {
  const char *key;
  const char *label;
} tpuci__html_counted[] = {{"passed", "passed"},
                           {"cached", "cached"},
                           {"flaky", "flaky"},
                           {"order-dependent", "order-dependent"},
                           {"failed", "failed"},
                           {"timeout", "timeout"},
                           {"oom", "oom"},
                           {"infra", "infra"},
                           {"preempted", "preempted"},
                           {"no-capacity", "no capacity"},
                           {"cancelled", "cancelled"},
                           {"not-run", "not run"},
                           {"not-applicable", "not applicable"}};
#define TPUCI__HTML_NCOUNTED (sizeof(tpuci__html_counted) / sizeof(tpuci__html_counted[0]))

static void tpuci__html_header(tpuci__buf_t *b, const json_t *report) {
  const char *verdict = tpuci__html_jstr(report, "verdict", NULL);
  const json_t *jc = json_object_get(report, "counts");
  char d[64];
  size_t k;

  tpuci__buf_adds(b,
                  "<header>\n<p class=\"brand\">tpuci run report</p>\n<h1 id=\"h-run\">Run <code>");
  tpuci__html_field(b, report, "run_id");
  tpuci__buf_adds(b, "</code> ");
  /* The verdict's class comes from a fixed list too. */
  if (strcmp(verdict, "passed") == 0 || strcmp(verdict, "failed") == 0 ||
      strcmp(verdict, "interrupted") == 0 || strcmp(verdict, "not-run") == 0)
    tpuci__buf_addf(b, "<span class=\"verdict v-%s\">", verdict);
  else tpuci__buf_adds(b, "<span class=\"verdict\">");
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
  tpuci__html_utc(tpuci__html_juint(report, "start_ms"), d, sizeof(d));
  tpuci__buf_addf(b, "</code></dd></div>\n<div><dt>Started</dt><dd>%s</dd></div>\n", d);
  tpuci__buf_addf(b, "<div><dt>Duration</dt><dd>%s</dd></div>\n",
                  tpuci__html_duration(tpuci__html_juint(report, "duration_ms"), d, sizeof(d)));
  if (tpuci__html_jint(report, "jobs") > 0)
    tpuci__buf_addf(b, "<div><dt>Slots</dt><dd>%lld at once (<code>-j</code>)</dd></div>\n",
                    (long long) tpuci__html_jint(report, "jobs"));
  if (tpuci__html_jint(report, "exit_code") >= 0)
    tpuci__buf_addf(b, "<div><dt>Exit code</dt><dd>%lld</dd></div>\n",
                    (long long) tpuci__html_jint(report, "exit_code"));
  if (*tpuci__html_jstr(report, "run_dir", NULL)) {
    tpuci__buf_adds(b, "<div><dt>Run folder</dt><dd><code>");
    tpuci__html_field(b, report, "run_dir");
    tpuci__buf_adds(b, "</code></dd></div>\n");
  }
  if (json_array_size(json_object_get(report, "merged")) > 0) {
    /* tpuci merge: the run folders, each with its verdict. */
    const json_t *m;
    size_t i;
    tpuci__buf_adds(b, "<div><dt>Merged runs</dt><dd>");
    json_array_foreach(json_object_get(report, "merged"), i, m) {
      tpuci__buf_adds(b, i ? ", <code>" : "<code>");
      tpuci__html_field(b, m, "run_dir");
      tpuci__buf_adds(b, "</code> (");
      tpuci__html_field(b, m, "verdict");
      tpuci__buf_adds(b, ")");
    }
    tpuci__buf_adds(b, "</dd></div>\n");
  }
  if (*tpuci__html_jstr(report, "commit", NULL)) {
    /* The first 12 digits, the whole commit in the tooltip. */
    size_t len;
    const char *c = tpuci__html_jstr(report, "commit", &len);
    tpuci__buf_adds(b, "<div><dt>Commit</dt><dd><code title=\"");
    tpuci__html_text(b, c);
    tpuci__buf_adds(b, "\">");
    tpuci__html_textn(b, c, len > 12 ? 12 : len, 0);
    tpuci__buf_adds(b, "</code></dd></div>\n");
  }
  if (*tpuci__html_jstr(report, "tpuci_version", NULL)) {
    tpuci__buf_adds(b, "<div><dt>tpuci</dt><dd>");
    tpuci__html_field(b, report, "tpuci_version");
    tpuci__buf_adds(b, "</dd></div>\n");
  }
  tpuci__buf_adds(b, "</dl>\n<ul class=\"counts\" aria-label=\"Instances by outcome\">\n");
  for (k = 0; k < TPUCI__HTML_NCOUNTED; k++) {
    uint64_t v = tpuci__html_juint(jc, tpuci__html_counted[k].key);
    tpuci__buf_addf(b,
                    "<li class=\"c-%s%s\"><span class=\"sw o-%s\" aria-hidden=\"true\"></span>"
                    "<span class=\"n\">%llu</span> %s</li>\n",
                    tpuci__html_counted[k].key, v ? "" : " zero", tpuci__html_counted[k].key,
                    (unsigned long long) v, tpuci__html_counted[k].label);
  }
  tpuci__buf_addf(
      b, "<li class=\"c-total\"><span class=\"n\">%llu</span> total</li>\n</ul>\n",
      (unsigned long long) (json_object_get(jc, "total")
                                ? tpuci__html_juint(jc, "total")
                                : json_array_size(json_object_get(report, "instances"))));
  if (*tpuci__html_jstr(report, "error", NULL)) {
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
  json_array_foreach(json_object_get(inst, "attempts"), k, att) sum +=
      tpuci__html_juint(att, "duration_ms");
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
  tpuci__buf_addf(b,
                  "<table>\n<caption>%zu instance%s; the time is the sum of their attempts"
                  "</caption>\n<thead><tr><th scope=\"col\">Instance</th>"
                  "<th scope=\"col\">Outcome</th><th scope=\"col\" class=\"num\">Attempts</th>"
                  "<th scope=\"col\" class=\"num\">Time</th><th scope=\"col\">Last cause</th>"
                  "</tr></thead>\n<tbody>\n",
                  n, n == 1 ? "" : "s");
  json_array_foreach((json_t *) instances, i, inst) {
    const char *outcome = tpuci__html_jstr(inst, "outcome", NULL);
    const json_t *last = tpuci__last_attempt(inst);
    const char *row = tpuci__html_outcome_bad(outcome)          ? " bad"
                      : strcmp(outcome, "flaky") == 0           ? " flaky"
                      : strcmp(outcome, "order-dependent") == 0 ? " order"
                                                                : "";
    tpuci__buf_addf(b, "<tr class=\"r r-%s%s", tpuci__html_outcome_class(outcome), row);
    tpuci__html_holds_classes(b, inst);
    tpuci__buf_addf(b, "\"><th scope=\"row\"><a href=\"#i%zu\">", i);
    tpuci__html_field(b, inst, "name");
    tpuci__buf_adds(b, "</a></th><td>");
    tpuci__html_badge(b, outcome);
    tpuci__buf_addf(b,
                    "</td><td class=\"num\">%zu</td><td class=\"num\">%s</td><td class=\"cause\">",
                    json_array_size(json_object_get(inst, "attempts")),
                    tpuci__html_duration(tpuci__instance_ms(inst), d, sizeof(d)));
    if (last) tpuci__html_field(b, last, "cause");
    else tpuci__buf_adds(b, "<span class=\"muted\">never started</span>");
    tpuci__buf_adds(b, "</td></tr>\n");
  }
  tpuci__buf_adds(b, "</tbody>\n</table>\n</section>\n");
}

/* A test's outcomes in the last runs ("recent": "ppfkf", oldest first),
 * one square a run, after its outcome. */
static void tpuci__html_recent(tpuci__buf_t *b, const json_t *t) {
  const char *r = json_string_value(json_object_get(t, "recent")), *p;
  if (r == NULL || *r == '\0') return;
  tpuci__buf_addf(b,
                  " <span class=\"recent\" data-hook=\"recent\" title=\"the last %zu run%s, "
                  "oldest first: p passed, f failed, k flaky, o order-dependent, s skipped, "
                  "- not run\">",
                  strlen(r), strlen(r) == 1 ? "" : "s");
  for (p = r; *p; p++) {
    char c = strchr("pfkso", *p) ? *p : '-';
    tpuci__buf_addf(b, "<i class=\"r-%c\">%c</i>", c == '-' ? 'n' : c, c);
  }
  tpuci__buf_adds(b, "</span>");
}

/* A quarantined test's badges: "quarantined" (its entry in the title),
 * and "ready to release" when it passed its last runs. */
static void tpuci__html_quarantine(tpuci__buf_t *b, const json_t *t) {
  const json_t *q = json_object_get(t, "quarantine");
  if (!json_is_object(q)) return;
  tpuci__buf_adds(b, " <span class=\"o o-quarantined\" data-hook=\"quarantined\" title=\"until ");
  tpuci__html_field(b, q, "until");
  tpuci__buf_adds(b, ", owner ");
  tpuci__html_field(b, q, "owner");
  tpuci__buf_adds(b, " (");
  tpuci__html_field(b, q, "where");
  tpuci__buf_adds(b, "): ");
  tpuci__html_field(b, q, "reason");
  tpuci__buf_adds(b, "\">quarantined</span>");
  if (json_is_true(json_object_get(q, "ready_to_release")))
    tpuci__buf_adds(b, " <span class=\"o o-release\" data-hook=\"release\" title=\"passed its "
                       "last runs: tpuci flaky --release lists the entries to remove\">ready to "
                       "release</span>");
}

/* Whether a test of the instance is quarantined and ready to release. */
static int tpuci__html_releasable(const json_t *inst) {
  const json_t *t;
  size_t i;
  json_array_foreach(json_object_get(inst, "tests"), i, t) {
    if (json_is_true(json_object_get(json_object_get(t, "quarantine"), "ready_to_release")))
      return 1;
  }
  return 0;
}

/* "Failing first: 2 tests that failed last time ran first, in a process
 * of their own: A, B; failed (exit 1), log PATH" (the report's "first"),
 * and its order checks. */
static void tpuci__html_first(tpuci__buf_t *b, const json_t *inst) {
  const json_t *first = json_object_get(inst, "first"), *ids = json_object_get(first, "tests");
  const json_t *v;
  size_t i, nchecks = json_array_size(json_object_get(inst, "order_checks"));
  if (json_is_object(first)) {
    tpuci__buf_addf(b,
                    "<p data-hook=\"first\">Failing first: %zu test%s that failed last time "
                    "ran first, in a process of their own: ",
                    json_array_size(ids), json_array_size(ids) == 1 ? "" : "s");
    json_array_foreach((json_t *) ids, i, v) {
      if (i == 3) {
        tpuci__buf_addf(b, " and %zu more", json_array_size(ids) - 3);
        break;
      }
      tpuci__buf_adds(b, i ? ", <code>" : "<code>");
      tpuci__html_text(b, json_string_value(v) ? json_string_value(v) : "");
      tpuci__buf_adds(b, "</code>");
    }
    tpuci__buf_adds(b, "; ");
    tpuci__html_badge(b, tpuci__html_jstr(first, "outcome", NULL));
    tpuci__buf_adds(b, " ");
    tpuci__html_field(b, first, "cause");
    tpuci__buf_adds(b, ", log <code>");
    tpuci__html_field(b, first, "log");
    tpuci__buf_adds(b, "</code></p>\n");
  }
  if (nchecks > 0)
    tpuci__buf_addf(b,
                    "<p data-hook=\"checks\">Order checks: %zu process%s ran tests again "
                    "after the tests before them (see each order-dependent test).</p>\n",
                    nchecks, nchecks == 1 ? "" : "es");
}

/* A pytest instance's tests ("tests": {"id", "outcome", "flaky",
 * "duration_s", "message"}, from the JUnit files its attempts wrote): the
 * failure section counts them and lists those that did not pass or get
 * skipped, the flaky ones (passed after failing) with the earlier
 * failure's message, and the quarantined ones. Instances without "tests"
 * draw nothing. */
static void tpuci__html_tests(tpuci__buf_t *b, const json_t *inst) {
  const json_t *tests = json_object_get(inst, "tests"), *t;
  size_t i, total = json_array_size(tests), npassed = 0, nskipped = 0, nbad = 0, nflaky = 0;
  size_t nquar = 0, norder = 0, nunaffected = 0;
  char d[32];

  if (!json_is_array(tests) || total == 0) return;
  json_array_foreach((json_t *) tests, i, t) {
    const char *o = tpuci__html_jstr(t, "outcome", NULL);
    if (strcmp(o, "passed") == 0) npassed++;
    else if (strcmp(o, "skipped") == 0) nskipped++;
    else if (strcmp(o, "unaffected") == 0) nunaffected++;
    else nbad++;
    if (json_is_true(json_object_get(t, "flaky"))) nflaky++;
    if (json_is_true(json_object_get(t, "order_dependent"))) norder++;
    if (json_is_object(json_object_get(t, "quarantine"))) nquar++;
  }
  tpuci__buf_addf(b,
                  "<div class=\"tests\" data-hook=\"tests\"><p>Tests: %zu, %zu passed "
                  "(%zu flaky",
                  total, npassed, nflaky);
  if (norder) tpuci__buf_addf(b, ", %zu order-dependent", norder);
  tpuci__buf_addf(b, "), %zu skipped, ", nskipped);
  if (nunaffected)
    tpuci__buf_addf(b, "%zu unaffected (not run: nothing they need changed), ", nunaffected);
  tpuci__buf_addf(b, "%zu did not pass.</p>\n", nbad);
  tpuci__html_first(b, inst);
  if (nbad || nflaky || nquar || norder) {
    tpuci__buf_adds(b, "<table><thead><tr><th scope=\"col\">Test</th><th scope=\"col\">Outcome</th>"
                       "<th scope=\"col\" class=\"num\">Time</th><th scope=\"col\">Message</th>"
                       "</tr></thead>\n<tbody>\n");
    json_array_foreach((json_t *) tests, i, t) {
      const char *o = tpuci__html_jstr(t, "outcome", NULL);
      const json_t *ds = json_object_get(t, "duration_s");
      size_t mlen;
      const char *msg = tpuci__html_jstr(t, "message", &mlen);
      int flaky = json_is_true(json_object_get(t, "flaky"));
      int order = json_is_true(json_object_get(t, "order_dependent"));
      int quar = json_is_object(json_object_get(t, "quarantine"));
      const char *label = flaky ? "flaky" : order ? "order-dependent" : *o ? o : "unknown";
      if ((strcmp(o, "passed") == 0 || strcmp(o, "skipped") == 0 || strcmp(o, "unaffected") == 0) &&
          !flaky && !order && !quar)
        continue;
      {
        const char *key = tpuci__html_test_key(t);
        tpuci__buf_addf(b, "<tr class=\"tt t-%s tt-%s\"><th scope=\"row\"><code>",
                        flaky                      ? "flaky"
                        : order                    ? "order"
                        : strcmp(o, "passed") == 0 ? "passed"
                                                   : "bad",
                        key ? key : "other");
      }
      tpuci__html_field(b, t, "id");
      tpuci__buf_addf(b, "</code></th><td><span class=\"o o-%s\">",
                      flaky                       ? "flaky"
                      : order                     ? "order-dependent"
                      : strcmp(o, "timeout") == 0 ? "timeout"
                      : strcmp(o, "passed") == 0  ? "passed"
                                                  : "failed");
      tpuci__html_text(b, label);
      tpuci__buf_adds(b, "</span>");
      tpuci__html_quarantine(b, t);
      tpuci__html_recent(b, t);
      d[0] = '\0';
      if (json_is_number(ds) && json_number_value(ds) >= 0 && json_number_value(ds) < 1e12)
        tpuci__html_duration((uint64_t) (json_number_value(ds) * 1000.0 + 0.5), d, sizeof(d));
      tpuci__buf_addf(b, "</td><td class=\"num\">%s</td><td>", d);
      if (order && json_is_string(json_object_get(json_object_get(t, "order"), "text"))) {
        tpuci__buf_adds(b, "<p data-hook=\"order\">");
        tpuci__html_field(b, json_object_get(t, "order"), "text");
        tpuci__buf_adds(b, "</p>");
      }
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
  if (*tpuci__html_jstr(inst, "job", NULL)) {
    tpuci__buf_adds(b, "job <code>");
    tpuci__html_field(b, inst, "job");
    tpuci__buf_adds(b, "</code>");
    any = 1;
  }
  if (*tpuci__html_jstr(inst, "where", NULL)) {
    tpuci__buf_adds(b, any ? ", declared at <code>" : "declared at <code>");
    tpuci__html_field(b, inst, "where");
    tpuci__buf_adds(b, "</code>");
    any = 1;
  }
  if (json_object_size(m)) {
    tpuci__buf_adds(b, any ? "; matrix " : "matrix ");
    tpuci__html_matrix(b, m);
    any = 1;
  }
  if (*tpuci__html_jstr(inst, "image", NULL)) {
    tpuci__buf_adds(b, any ? "; image <code>" : "image <code>");
    tpuci__html_field(b, inst, "image");
    tpuci__buf_adds(b, "</code>");
    any = 1;
  }
  if (*tpuci__html_jstr(inst, "topology", NULL)) {
    tpuci__buf_adds(b, any ? "; topology <code>" : "topology <code>");
    tpuci__html_field(b, inst, "topology");
    tpuci__buf_adds(b, "</code>");
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
    const char *outcome = tpuci__html_jstr(inst, "outcome", NULL);
    const json_t *att;
    size_t k;
    if (strcmp(outcome, "not-run") == 0) notrun++;
    if (strcmp(outcome, "not-run") == 0) continue;
    /* A passing one only for a quarantined test that can be released. */
    if ((strcmp(outcome, "passed") == 0 || strcmp(outcome, "cached") == 0) &&
        !tpuci__html_releasable(inst))
      continue;
    shown++;
    tpuci__buf_addf(b, "<article class=\"problem r r-%s", tpuci__html_outcome_class(outcome));
    tpuci__html_holds_classes(b, inst);
    tpuci__buf_addf(b, "\" aria-labelledby=\"p%zu\"><h3 id=\"p%zu\"><a href=\"#i%zu\">", i, i, i);
    tpuci__html_field(b, inst, "name");
    tpuci__buf_adds(b, "</a> ");
    tpuci__html_badge(b, outcome);
    if (json_is_true(json_object_get(inst, "quarantined")))
      tpuci__buf_adds(b, " <span class=\"o o-quarantined\" title=\"it failed only by "
                         "quarantined tests: not counted\">quarantined</span>");
    tpuci__buf_adds(b, "</h3>\n");
    tpuci__html_where(b, inst);
    if (json_array_size(json_object_get(inst, "attempts")) == 0) {
      tpuci__buf_adds(b, "<p>It never started (the run stopped before its turn).</p>\n");
    } else {
      tpuci__buf_adds(b, "<ol class=\"attempts\">\n");
      json_array_foreach(json_object_get(inst, "attempts"), k, att) {
        tpuci__buf_addf(b, "<li><a href=\"#i%zu-a%zu\">Attempt %zu</a>: ", i, k + 1, k + 1);
        tpuci__html_badge(b, tpuci__html_jstr(att, "outcome", NULL));
        tpuci__buf_adds(b, " ");
        tpuci__html_field(b, att, "cause");
        tpuci__buf_addf(b, " <span class=\"muted\">(%s)</span></li>\n",
                        tpuci__html_duration(tpuci__html_juint(att, "duration_ms"), d, sizeof(d)));
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
    else tpuci__buf_adds(b, "<p class=\"note\">None.</p>\n");
  }
  tpuci__buf_adds(b, "</section>\n");
}

static void tpuci__html_logs(tpuci__buf_t *b, const json_t *instances, const char *page_dir) {
  const json_t *inst;
  size_t i;
  char d[32];

  tpuci__buf_adds(b, "<section id=\"logs\" aria-labelledby=\"h-logs\">"
                     "<h2 id=\"h-logs\">Attempts and logs</h2>\n");
  if (json_array_size(instances) == 0) tpuci__buf_adds(b, "<p class=\"note\">No instances.</p>\n");
  json_array_foreach((json_t *) instances, i, inst) {
    const char *outcome = tpuci__html_jstr(inst, "outcome", NULL);
    const json_t *atts = json_object_get(inst, "attempts"), *att;
    size_t k, n = json_array_size(atts);
    tpuci__buf_addf(b, "<section id=\"i%zu\" class=\"r r-%s", i,
                    tpuci__html_outcome_class(outcome));
    tpuci__html_holds_classes(b, inst);
    tpuci__buf_addf(b, "\" aria-labelledby=\"i%zu-h\"><h3 id=\"i%zu-h\">", i, i);
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
      const char *ao = tpuci__html_jstr(att, "outcome", NULL);
      const json_t *tail = json_object_get(att, "log_tail");
      /* The last attempt of an instance that failed opens by itself. */
      int open = k + 1 == n && tpuci__html_outcome_bad(outcome);
      tpuci__buf_addf(b, "<details id=\"i%zu-a%zu\"%s><summary>Attempt %zu ", i, k + 1,
                      open ? " open" : "", k + 1);
      tpuci__html_badge(b, ao);
      tpuci__buf_adds(b, " ");
      tpuci__html_field(b, att, "cause");
      tpuci__buf_addf(b, " <span class=\"muted\">in %s</span></summary>\n",
                      tpuci__html_duration(tpuci__html_juint(att, "duration_ms"), d, sizeof(d)));
      if (*tpuci__html_jstr(att, "log", NULL)) {
        /* The label is the link: a path from the page, not from wherever
         * tpuci ran. */
        char *rel = tpuci__html_rel(page_dir, tpuci__html_jstr(att, "log", NULL));
        tpuci__buf_adds(b, "<p class=\"muted\">Log: <a class=\"log\" href=\"");
        tpuci__html_href(b, rel);
        tpuci__buf_adds(b, "\"><code>");
        tpuci__html_text(b, rel);
        tpuci__buf_adds(b, "</code></a> (its last lines below)</p>\n");
        free(rel);
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

int tpuci__report_html(const json_t *report, tpuci__buf_t *out, tpuci__err_t *err) {
  return tpuci__report_html_at(report, NULL, out, err);
}

/* The filter bar: one radio button per choice (before every section, so
 * the CSS can hide rows of the sections after it), then their labels. */
static void tpuci__html_filter(tpuci__buf_t *b, const json_t *report, const json_t *instances) {
  const json_t *jc = json_object_get(report, "counts");
  /* A cached pass is a pass (docs/cache.md). */
  size_t k, n = json_array_size(instances),
            passed = tpuci__html_juint(jc, "passed") + tpuci__html_juint(jc, "cached");
  uint64_t shown[TPUCI__HTML_NCOUNTED], own[TPUCI__HTML_NCOUNTED];

  if (n == 0) return;
  /* What each choice shows: the instances of that outcome, and those
   * that hold a test of it (a failed test in a timed-out instance). */
  for (k = 0; k < TPUCI__HTML_NCOUNTED; k++) {
    const json_t *inst;
    size_t i;
    shown[k] = own[k] = 0;
    json_array_foreach((json_t *) instances, i, inst) {
      int is = strcmp(tpuci__html_outcome_class(tpuci__html_jstr(inst, "outcome", NULL)),
                      tpuci__html_counted[k].key) == 0;
      own[k] += is;
      if (is || tpuci__html_holds(inst, tpuci__html_counted[k].key)) shown[k]++;
    }
  }
  tpuci__buf_adds(b, "<input class=\"fi\" type=\"radio\" name=\"f\" id=\"f-all\" checked>"
                     "<input class=\"fi\" type=\"radio\" name=\"f\" id=\"f-bad\">");
  for (k = 0; k < TPUCI__HTML_NCOUNTED; k++)
    if (shown[k])
      tpuci__buf_addf(b, "<input class=\"fi\" type=\"radio\" name=\"f\" id=\"f-%s\">",
                      tpuci__html_counted[k].key);
  tpuci__buf_addf(b,
                  "\n<nav class=\"filter\" aria-label=\"Show instances\">Show: "
                  "<label for=\"f-all\">all (%zu)</label><label for=\"f-bad\">not passed "
                  "(%zu)</label>",
                  n, n >= passed ? n - (size_t) passed : 0);
  /* The count is the header's (instances of that outcome); the others
   * the choice shows hold such a test, and say so. */
  for (k = 0; k < TPUCI__HTML_NCOUNTED; k++) {
    if (!shown[k]) continue;
    tpuci__buf_addf(b, "<label for=\"f-%s\">%s (%llu", tpuci__html_counted[k].key,
                    tpuci__html_counted[k].label, (unsigned long long) own[k]);
    if (shown[k] > own[k])
      tpuci__buf_addf(b, "; +%llu holding %s tests", (unsigned long long) (shown[k] - own[k]),
                      tpuci__html_counted[k].label);
    tpuci__buf_adds(b, ")</label>");
  }
  tpuci__buf_adds(b, "</nav>\n");
}

int tpuci__report_html_at(const json_t *report, const char *page_dir, tpuci__buf_t *out,
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
  verdict = tpuci__html_jstr(report, "verdict", NULL);

  tpuci__buf_adds(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                       "style-src 'unsafe-inline'\">\n<meta name=\"generator\" content=\"tpuci\">\n"
                       "<title>tpuci run ");
  tpuci__html_field(out, report, "run_id");
  tpuci__buf_adds(out, ": ");
  tpuci__html_text(out, strcmp(verdict, "not-run") == 0 ? "not run"
                        : *verdict                      ? verdict
                                                        : "unknown");
  tpuci__buf_adds(out, "</title>\n<style>\n");
  tpuci__buf_add(out, tpuci__data_report_html, tpuci__data_report_html_len);
  tpuci__buf_adds(out, "</style>\n</head>\n<body>\n");
  tpuci__html_header(out, report);
  tpuci__buf_adds(out, "<main>\n");
  tpuci__html_filter(out, report, instances);
  tpuci__html_timeline(out, report, instances);
  tpuci__html_table(out, instances);
  tpuci__html_problems(out, instances);
  tpuci__html_logs(out, instances, page_dir);
  tpuci__buf_addf(out,
                  "</main>\n<footer>Written by tpuci from a version %lld run report. "
                  "The page is self-contained: no script, no external file; log links are "
                  "relative to its folder.</footer>\n"
                  "</body>\n</html>\n",
                  (long long) tpuci__html_jint(report, "version"));
  if (empty) json_decref(empty);
  return 0;
}
