/* The merged JUnit report of a run, and XML escaping. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pytest/junit.h"

/* Missing tests listed in an abnormal attempt's test case. */
#define TPUCI__LIST_MISSING 50

/* ------------------------------------------------------------------ */
/* Escaping                                                            */

/* Decodes one UTF-8 character at s[0..n); returns its length, or 0 when
 * the bytes are not valid UTF-8 (overlong, surrogate, out of range). */
static size_t tpuci__utf8_decode(const unsigned char *s, size_t n, unsigned long *cp) {
  size_t len, i;
  unsigned long c, min;

  if (s[0] < 0x80) {
    *cp = s[0];
    return 1;
  } else if ((s[0] & 0xE0) == 0xC0) {
    len = 2, c = s[0] & 0x1F, min = 0x80;
  } else if ((s[0] & 0xF0) == 0xE0) {
    len = 3, c = s[0] & 0x0F, min = 0x800;
  } else if ((s[0] & 0xF8) == 0xF0) {
    len = 4, c = s[0] & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (len > n) return 0;
  for (i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    c = (c << 6) | (s[i] & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  *cp = c;
  return len;
}

void tpuci__xml_escape(tpuci__buf_t *b, const char *str, size_t n, int attr) {
  const unsigned char *s = (const unsigned char *) str;
  size_t i = 0, run = 0;
  char tmp[16];

  while (i < n) {
    const char *rep = NULL;
    unsigned long cp;
    size_t len = tpuci__utf8_decode(s + i, n - i, &cp);

    if (len == 0) {
      rep = "\xEF\xBF\xBD";  /* U+FFFD for a byte that is not UTF-8 */
      len = 1;
    } else if (len == 1) {
      switch (cp) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = attr ? "&quot;" : NULL; break;
        case '\r': rep = "&#13;"; break;
        case '\n': rep = attr ? "&#10;" : NULL; break;
        case '\t': rep = attr ? "&#9;" : NULL; break;
        default:
          if (cp < 0x20) {
            snprintf(tmp, sizeof(tmp), "#x%02lX", cp);
            rep = tmp;
          }
          break;
      }
    } else if (cp == 0xFFFE || cp == 0xFFFF) {
      snprintf(tmp, sizeof(tmp), "#x%04lX", cp);
      rep = tmp;
    }
    if (rep != NULL) {
      if (i > run) tpuci__buf_add(b, str + run, i - run);
      tpuci__buf_adds(b, rep);
      run = i + len;
    }
    i += len;
  }
  if (n > run) tpuci__buf_add(b, str + run, n - run);
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */

static void tpuci__w_attr(tpuci__buf_t *b, const char *name, const char *value) {
  if (value == NULL) return;
  tpuci__buf_addf(b, " %s=\"", name);
  tpuci__xml_escape(b, value, strlen(value), 1);
  tpuci__buf_adds(b, "\"");
}

/* Seconds with three decimals, whatever the locale's decimal point. */
static void tpuci__w_seconds(tpuci__buf_t *b, const char *name, double s) {
  unsigned long long ms;
  if (!(s > 0) || !isfinite(s)) s = 0;
  if (s > 1e12) s = 1e12;
  ms = (unsigned long long) llround(s * 1000.0);
  tpuci__buf_addf(b, " %s=\"%llu.%03u\"", name, ms / 1000, (unsigned) (ms % 1000));
}

static void tpuci__w_text(tpuci__buf_t *b, const char *indent, const char *tag,
                          const char *text) {
  if (text == NULL) return;
  tpuci__buf_addf(b, "%s<%s>", indent, tag);
  tpuci__xml_escape(b, text, strlen(text), 0);
  tpuci__buf_addf(b, "</%s>\n", tag);
}

typedef struct {
  size_t tests, failures, errors, skipped;
  double time_s;
} tpuci__counts_t;

static void tpuci__w_case_open(tpuci__buf_t *b, const char *classname,
                               const char *name, const char *file, int line,
                               double time_s) {
  tpuci__buf_adds(b, "    <testcase");
  tpuci__w_attr(b, "classname", classname ? classname : "");
  tpuci__w_attr(b, "name", name ? name : "");
  if (file != NULL) tpuci__w_attr(b, "file", file);
  if (line >= 0) tpuci__buf_addf(b, " line=\"%d\"", line);
  tpuci__w_seconds(b, "time", time_s);
}

/* An earlier run kept inside the final test case (Surefire style). */
static void tpuci__w_earlier(tpuci__buf_t *b, const tpuci__test_run_t *r, int still_failing) {
  const tpuci__test_t *t = &r->result;
  const char *tag = t->outcome == TPUCI_TEST_ERROR
                        ? (still_failing ? "rerunError" : "flakyError")
                        : (still_failing ? "rerunFailure" : "flakyFailure");
  tpuci__buf_t trace;

  tpuci__buf_addf(b, "      <%s", tag);
  tpuci__w_attr(b, "message", t->message ? t->message : "");
  tpuci__w_attr(b, "type", t->type);
  tpuci__buf_adds(b, ">\n");
  tpuci__buf_init(&trace);
  tpuci__buf_addf(&trace, "[attempt %d]\n%s", r->attempt, t->text ? t->text : "");
  tpuci__w_text(b, "        ", "stackTrace", trace.data);
  tpuci__buf_free(&trace);
  tpuci__w_text(b, "        ", "system-out", t->system_out);
  tpuci__w_text(b, "        ", "system-err", t->system_err);
  tpuci__buf_addf(b, "      </%s>\n", tag);
}

static void tpuci__w_test(tpuci__buf_t *b, const tpuci__test_hist_t *th, tpuci__counts_t *c) {
  const tpuci__test_run_t *last = &th->runs[th->len - 1];
  const tpuci__test_t *f = &last->result;
  int failing = tpuci__test_outcome_failing(f->outcome);
  size_t k;
  int children = 0;

  tpuci__w_case_open(b, f->classname, f->name, f->file, f->line, f->time_s);
  c->tests++;
  c->time_s += f->time_s;
  tpuci__buf_adds(b, ">\n");
  switch (f->outcome) {
    case TPUCI_TEST_FAILED:
    case TPUCI_TEST_ERROR: {
      const char *tag = f->outcome == TPUCI_TEST_FAILED ? "failure" : "error";
      if (f->outcome == TPUCI_TEST_FAILED) c->failures++; else c->errors++;
      tpuci__buf_addf(b, "      <%s", tag);
      tpuci__w_attr(b, "message", f->message ? f->message : "");
      tpuci__w_attr(b, "type", f->type);
      tpuci__buf_adds(b, ">");
      if (f->text) tpuci__xml_escape(b, f->text, strlen(f->text), 0);
      tpuci__buf_addf(b, "</%s>\n", tag);
      children = 1;
      break;
    }
    case TPUCI_TEST_SKIPPED:
    case TPUCI_TEST_XFAIL:
      c->skipped++;
      tpuci__buf_adds(b, "      <skipped");
      tpuci__w_attr(b, "type", f->type ? f->type
                                       : f->outcome == TPUCI_TEST_XFAIL ? "pytest.xfail" : NULL);
      tpuci__w_attr(b, "message", f->message ? f->message : "");
      tpuci__buf_adds(b, ">");
      if (f->text) tpuci__xml_escape(b, f->text, strlen(f->text), 0);
      tpuci__buf_adds(b, "</skipped>\n");
      children = 1;
      break;
    default:
      break;
  }
  for (k = 0; k + 1 < th->len; k++) {
    if (!tpuci__test_outcome_failing(th->runs[k].result.outcome)) continue;
    tpuci__w_earlier(b, &th->runs[k], failing);
    children = 1;
  }
  tpuci__w_text(b, "      ", "system-out", f->system_out);
  tpuci__w_text(b, "      ", "system-err", f->system_err);
  if (f->system_out || f->system_err) children = 1;
  if (!children) {
    /* "<testcase ...>\n" becomes "<testcase .../>\n". */
    b->len -= 2;
    tpuci__buf_adds(b, "/>\n");
  } else {
    tpuci__buf_adds(b, "    </testcase>\n");
  }
}

static int tpuci__ran_in(const tpuci__test_hist_t *t, int attempt) {
  size_t k;
  for (k = t->len; k > 0; k--) {
    if (t->runs[k - 1].attempt == attempt) return 1;
    if (t->runs[k - 1].attempt < attempt) return 0;
  }
  return 0;
}

/* The tests attempt `k` (0-based) should have run but did not report. */
static void tpuci__missing_list(const tpuci__history_t *h, size_t k, tpuci__buf_t *out) {
  const tpuci__attempt_rec_t *a = &h->attempts[k];
  int number = (int) k + 1;
  size_t i, listed = 0, total = 0;

  if (a->has_selection) {
    for (i = 0; i < a->selected.len; i++) {
      size_t t = tpuci__idmap_get(&h->map, a->selected.items[i]);
      if (t != TPUCI__IDMAP_NONE && tpuci__ran_in(&h->tests[t], number)) continue;
      total++;
      if (listed++ < TPUCI__LIST_MISSING) tpuci__buf_addf(out, "  %s\n", a->selected.items[i]);
    }
  } else {
    for (i = 0; i < h->len; i++) {
      /* Only tests known by then, as tpuci__history_add() counted. */
      if (h->tests[i].len == 0 || h->tests[i].runs[0].attempt > number) continue;
      if (tpuci__ran_in(&h->tests[i], number)) continue;
      total++;
      if (listed++ < TPUCI__LIST_MISSING) tpuci__buf_addf(out, "  %s\n", h->tests[i].id);
    }
  }
  if (total > TPUCI__LIST_MISSING)
    tpuci__buf_addf(out, "  ... and %zu more\n", total - TPUCI__LIST_MISSING);
}

/* An abnormal attempt as a test case of its own. */
static void tpuci__w_attempt(tpuci__buf_t *b, const tpuci__history_t *h, size_t k,
                             tpuci__counts_t *c) {
  const tpuci__attempt_rec_t *a = &h->attempts[k];
  const char *oname = tpuci_outcome_name(a->outcome);
  int recovered = tpuci__history_recovered_after(h, k);
  int is_error = a->outcome == TPUCI_OUTCOME_INFRA || a->outcome == TPUCI_OUTCOME_CANCELLED ||
                 a->outcome == TPUCI_OUTCOME_PASSED || a->outcome == TPUCI_OUTCOME_NONE;
  const char *tag;
  tpuci__buf_t msg, body, name, type;

  tpuci__buf_init(&msg);
  tpuci__buf_init(&body);
  tpuci__buf_init(&name);
  tpuci__buf_init(&type);
  tpuci__buf_addf(&msg, "%s: ", oname);
  if (a->cause != NULL && *a->cause)
    tpuci__buf_adds(&msg, a->cause);
  else if (a->exit_code >= 0)
    tpuci__buf_addf(&msg, "exit %d", a->exit_code);
  else
    tpuci__buf_adds(&msg, "killed");
  if (!a->reported)
    tpuci__buf_adds(&msg, "; no JUnit report");
  else if (a->outcome == TPUCI_OUTCOME_FAILED && a->failing == 0)
    tpuci__buf_adds(&msg, "; the report shows no failing test");
  if (a->reported && a->missing > 0)
    tpuci__buf_addf(&msg, "; %zu test%s did not report", a->missing, a->missing == 1 ? "" : "s");

  tpuci__buf_addf(&body, "Attempt %zu of %zu of '%s' ended abnormally: %s.\n", k + 1,
                  h->n_attempts, h->instance, msg.data);
  tpuci__buf_addf(&body, "Exit code: %d.\n", a->exit_code);
  if (a->reported)
    tpuci__buf_addf(&body, "Its report has %zu test case%s, %zu failing.\n", a->tests,
                    a->tests == 1 ? "" : "s", a->failing);
  else
    tpuci__buf_adds(&body, "It left no JUnit report.\n");
  if (a->missing > 0 || (!a->reported && a->has_selection)) {
    tpuci__buf_adds(&body, "Tests it should have run but did not report:\n");
    tpuci__missing_list(h, k, &body);
  }
  if (recovered)
    tpuci__buf_adds(&body, "A later attempt completed normally.\n");

  tpuci__buf_addf(&name, "%s attempt %zu", h->instance, k + 1);
  tpuci__buf_addf(&type, "tpuci.%s", a->reported || a->outcome != TPUCI_OUTCOME_PASSED
                                         ? oname : "noreport");
  tpuci__w_case_open(b, "tpuci", name.data, NULL, -1, a->time_s);
  tpuci__buf_adds(b, ">\n");
  c->tests++;
  c->time_s += a->time_s;
  if (recovered) {
    tag = is_error ? "flakyError" : "flakyFailure";
    tpuci__buf_addf(b, "      <%s", tag);
    tpuci__w_attr(b, "message", msg.data);
    tpuci__w_attr(b, "type", type.data);
    tpuci__buf_adds(b, ">\n");
    tpuci__w_text(b, "        ", "stackTrace", body.data);
    tpuci__buf_addf(b, "      </%s>\n", tag);
  } else {
    tag = is_error ? "error" : "failure";
    if (is_error) c->errors++; else c->failures++;
    tpuci__buf_addf(b, "      <%s", tag);
    tpuci__w_attr(b, "message", msg.data);
    tpuci__w_attr(b, "type", type.data);
    tpuci__buf_adds(b, ">");
    tpuci__xml_escape(b, body.data, body.len, 0);
    tpuci__buf_addf(b, "</%s>\n", tag);
  }
  tpuci__buf_adds(b, "    </testcase>\n");
  tpuci__buf_free(&msg);
  tpuci__buf_free(&body);
  tpuci__buf_free(&name);
  tpuci__buf_free(&type);
}

static void tpuci__w_counts(tpuci__buf_t *b, const tpuci__counts_t *c) {
  tpuci__buf_addf(b, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\"",
                  c->tests, c->failures, c->errors, c->skipped);
  tpuci__w_seconds(b, "time", c->time_s);
}

static void tpuci__w_suite(tpuci__buf_t *out, const tpuci__history_t *h, tpuci__counts_t *total) {
  tpuci__counts_t c;
  tpuci__buf_t body;
  tpuci__history_summary_t s;
  double attempts_time = 0;
  size_t i;

  memset(&c, 0, sizeof(c));
  tpuci__buf_init(&body);
  for (i = 0; i < h->len; i++)
    if (h->tests[i].len > 0) tpuci__w_test(&body, &h->tests[i], &c);
  for (i = 0; i < h->n_attempts; i++) {
    attempts_time += h->attempts[i].time_s;
    if (tpuci__attempt_abnormal(&h->attempts[i])) tpuci__w_attempt(&body, h, i, &c);
  }
  /* The suite's time is the wall clock spent on the instance when known. */
  if (attempts_time > 0) c.time_s = attempts_time;
  tpuci__history_summarize(h, &s);

  tpuci__buf_adds(out, "  <testsuite");
  tpuci__w_attr(out, "name", h->instance);
  tpuci__w_counts(out, &c);
  tpuci__buf_adds(out, ">\n    <properties>\n");
  tpuci__buf_addf(out, "      <property name=\"tpuci.attempts\" value=\"%zu\"/>\n", h->n_attempts);
  tpuci__buf_addf(out, "      <property name=\"tpuci.flaky\" value=\"%zu\"/>\n", s.flaky);
  if (h->n_attempts > 0) {
    tpuci__buf_adds(out, "      <property name=\"tpuci.last_attempt\"");
    tpuci__w_attr(out, "value", tpuci_outcome_name(h->attempts[h->n_attempts - 1].outcome));
    tpuci__buf_adds(out, "/>\n");
  }
  tpuci__buf_adds(out, "    </properties>\n");
  if (body.data) tpuci__buf_add(out, body.data, body.len);
  tpuci__buf_adds(out, "  </testsuite>\n");
  tpuci__buf_free(&body);

  total->tests += c.tests;
  total->failures += c.failures;
  total->errors += c.errors;
  total->skipped += c.skipped;
  total->time_s += c.time_s;
}

void tpuci__junit_write_merged(tpuci__buf_t *out, const tpuci__history_t *const *hs, size_t n) {
  tpuci__counts_t total;
  tpuci__buf_t suites;
  size_t i;

  memset(&total, 0, sizeof(total));
  tpuci__buf_init(&suites);
  for (i = 0; i < n; i++) tpuci__w_suite(&suites, hs[i], &total);
  tpuci__buf_adds(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"tpuci\"");
  tpuci__w_counts(out, &total);
  tpuci__buf_adds(out, ">\n");
  if (suites.data) tpuci__buf_add(out, suites.data, suites.len);
  tpuci__buf_adds(out, "</testsuites>\n");
  tpuci__buf_free(&suites);
}

int tpuci__junit_write_merged_file(const char *path, const tpuci__history_t *const *hs,
                                   size_t n, tpuci__err_t *err) {
  tpuci__buf_t b;
  int r;
  tpuci__buf_init(&b);
  tpuci__junit_write_merged(&b, hs, n);
  r = tpuci__write_file_atomic(path, b.data, b.len);
  tpuci__buf_free(&b);
  if (r != 0) return tpuci__err_set(err, r, "%s: cannot write: %s", path, tpuci_strerror(r));
  return 0;
}
