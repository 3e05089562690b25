/* The merged JUnit report of a run, and XML escaping. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind/pytest/junit.h"
#include "kind/pytest/trace.h"

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
      rep = "\xEF\xBF\xBD"; /* U+FFFD for a byte that is not UTF-8 */
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

/* <tag>text</tag> for `len` bytes of text (NUL bytes too). */
static void tpuci__w_textn(tpuci__buf_t *b, const char *indent, const char *tag, const char *text,
                           size_t len) {
  if (text == NULL) return;
  tpuci__buf_addf(b, "%s<%s>", indent, tag);
  tpuci__xml_escape(b, text, len, 0);
  tpuci__buf_addf(b, "</%s>\n", tag);
}

static void tpuci__w_text(tpuci__buf_t *b, const char *indent, const char *tag, const char *text) {
  if (text != NULL) tpuci__w_textn(b, indent, tag, text, strlen(text));
}

/* <testcase classname name time>: the attributes both Surefire's and
 * Jenkins' schemas allow (no file or line: neither has them). */
static void tpuci__w_case_open(tpuci__buf_t *b, const char *classname, const char *name,
                               double time_s) {
  tpuci__buf_adds(b, "    <testcase");
  tpuci__w_attr(b, "classname", classname ? classname : "");
  tpuci__w_attr(b, "name", name ? name : "");
  tpuci__w_seconds(b, "time", time_s);
}

/* A test case's names (docs/pytest.md, "Test case identities"). */
typedef struct {
  char *classname, *name;
  char *file; /* the module's path as the classname has it, or NULL */
  int line;   /* 1-based, or 0 */
} tpuci__case_id_t;

static void tpuci__case_id(const tpuci__junit_suite_t *s, const tpuci__test_hist_t *th,
                           const tpuci__test_t *f, tpuci__case_id_t *id) {
  const char *rest = strstr(th->id, "::");
  char *cls;

  memset(id, 0, sizeof(*id));
  if (f != NULL && s->identity == NULL && s->root == NULL) {
    /* pytest's own names (reports of the library's callers). */
    id->classname = tpuci__strdup(f->classname ? f->classname : "");
    id->name = tpuci__strdup(f->name ? f->name : "");
    id->file = f->file ? tpuci__strdup(f->file) : NULL;
  } else if (s->root != NULL && th->path != NULL && tpuci__path_below(th->path, s->root) &&
             strlen(th->path) > strlen(s->root)) {
    /* The file's path from the project's folder, whatever the workdir. */
    const char *rel = th->path + strlen(s->root);
    char *node;
    while (*rel == '/') rel++;
    node = tpuci__printf("%s%s", rel, rest ? rest : "");
    tpuci__junit_mangle(node, &id->classname, &id->name);
    id->file = tpuci__strdup(rel);
    free(node);
  } else {
    tpuci__junit_mangle(th->id, &id->classname, &id->name);
    id->file = f && f->file
                   ? tpuci__strdup(f->file)
                   : tpuci__strndup(th->id, rest ? (size_t) (rest - th->id) : strcspn(th->id, "["));
  }
  if (s->identity != NULL) {
    cls = *id->classname ? tpuci__printf("%s.%s", s->identity, id->classname)
                         : tpuci__strdup(s->identity);
    free(id->classname);
    id->classname = cls;
  }
  if (th->fail_line > 0) id->line = th->fail_line;
  else if (f != NULL && f->line >= 0) id->line = f->line + 1; /* pytest's is 0-based */
}

static void tpuci__case_id_free(tpuci__case_id_t *id) {
  free(id->classname);
  free(id->name);
  free(id->file);
}

/* <testcase classname name time [file line]> of a test. */
static void tpuci__w_test_open(tpuci__buf_t *b, const tpuci__junit_suite_t *s,
                               const tpuci__test_hist_t *th, const tpuci__test_t *f,
                               double time_s) {
  tpuci__case_id_t id;
  tpuci__case_id(s, th, f, &id);
  tpuci__w_case_open(b, id.classname, id.name, time_s);
  if (s->file_line && id.file != NULL) {
    tpuci__w_attr(b, "file", id.file);
    if (id.line > 0) tpuci__buf_addf(b, " line=\"%d\"", id.line);
  }
  tpuci__case_id_free(&id);
}

/* <failure>/<error message type>body</...>: Surefire requires `type`. */
static void tpuci__w_outcome(tpuci__buf_t *b, const char *tag, const char *message,
                             const char *type, const char *body) {
  tpuci__buf_addf(b, "      <%s", tag);
  tpuci__w_attr(b, "message", message ? message : "");
  tpuci__w_attr(b, "type", type);
  tpuci__buf_adds(b, ">");
  if (body) tpuci__xml_escape(b, body, strlen(body), 0);
  tpuci__buf_addf(b, "</%s>\n", tag);
}

/* A flaky or rerun element (`tag`): the failure's message and type,
 * its trace, and the run's output (out_len bytes of `out`, `err`; each
 * may be NULL). */
typedef struct {
  const char *tag;
  const char *message;
  const char *type;
  const char *trace;
  const char *out;
  size_t out_len;
  const char *err;
} tpuci__w_rerun_t;

/* <stackTrace> first, then the run's output. */
static void tpuci__w_rerun(tpuci__buf_t *b, const tpuci__w_rerun_t *r) {
  tpuci__buf_addf(b, "      <%s", r->tag);
  tpuci__w_attr(b, "message", r->message ? r->message : "");
  tpuci__w_attr(b, "type", r->type);
  tpuci__buf_adds(b, ">\n");
  tpuci__w_text(b, "        ", "stackTrace", r->trace ? r->trace : "");
  tpuci__w_textn(b, "        ", "system-out", r->out, r->out_len);
  tpuci__w_text(b, "        ", "system-err", r->err);
  tpuci__buf_addf(b, "      </%s>\n", r->tag);
}

/* A failure's type: the one its report gave (tpuci's own for a test cut
 * short), else the class of the exception it ended with (pytest writes no
 * type on failures), else pytest.failure / pytest.error. A new string. */
static char *tpuci__test_type(const tpuci__test_t *t) {
  char *exc;
  if (t->type && *t->type) return tpuci__strdup(t->type);
  if ((exc = tpuci__trace_exception(t->text, t->message)) != NULL) return exc;
  return tpuci__strdup(t->outcome == TPUCI_TEST_ERROR ? "pytest.error" : "pytest.failure");
}

/* Earlier runs of one kind (failures or errors) kept inside the final
 * test case (Surefire style). */
static void tpuci__w_earlier(tpuci__buf_t *b, const tpuci__test_hist_t *th, int errors,
                             int still_failing) {
  const char *tag = errors ? (still_failing ? "rerunError" : "flakyError")
                           : (still_failing ? "rerunFailure" : "flakyFailure");
  size_t k;
  for (k = 0; k + 1 < th->len; k++) {
    const tpuci__test_run_t *r = &th->runs[k];
    const tpuci__test_t *t = &r->result;
    tpuci__w_rerun_t rerun = {.tag = tag};
    tpuci__buf_t trace;
    char *type;
    if (!tpuci__test_outcome_failing(t->outcome) || (t->outcome == TPUCI_TEST_ERROR) != errors ||
        tpuci__test_cancelled(t))
      continue;
    type = tpuci__test_type(t);
    tpuci__buf_init(&trace);
    if (r->attempt == 0)
      tpuci__buf_addf(&trace,
                      "[failing first: the process of the tests that failed last "
                      "time]\n%s",
                      t->text ? t->text : "");
    else tpuci__buf_addf(&trace, "[attempt %d]\n%s", r->attempt, t->text ? t->text : "");
    rerun.message = t->message;
    rerun.type = type;
    rerun.trace = trace.data;
    rerun.out = t->system_out;
    rerun.out_len = t->system_out ? strlen(t->system_out) : 0;
    rerun.err = t->system_err;
    tpuci__w_rerun(b, &rerun);
    tpuci__buf_free(&trace);
    free(type);
  }
}

/* Whether a test has earlier failing runs. */
static int tpuci__has_earlier(const tpuci__test_hist_t *th) {
  size_t k;
  for (k = 0; k + 1 < th->len; k++)
    if (tpuci__test_outcome_failing(th->runs[k].result.outcome) &&
        !tpuci__test_cancelled(&th->runs[k].result))
      return 1;
  return 0;
}

static void tpuci__w_test(tpuci__buf_t *b, const tpuci__junit_suite_t *s,
                          const tpuci__test_hist_t *th, tpuci__junit_counts_t *c) {
  const tpuci__test_run_t *last = &th->runs[th->len - 1];
  const tpuci__test_t *f = &last->result;
  int failing = tpuci__test_outcome_failing(f->outcome);
  char *type = failing ? tpuci__test_type(f) : NULL;

  tpuci__w_test_open(b, s, th, f, f->time_s);
  c->tests++;
  c->time_s += f->time_s;
  if (f->outcome == TPUCI_TEST_PASSED && !tpuci__has_earlier(th) && !f->system_out &&
      !f->system_err) {
    tpuci__buf_adds(b, "/>\n");
    return;
  }
  tpuci__buf_adds(b, ">\n");
  /* Surefire's order: failure, rerunFailure, flakyFailure, skipped,
   * error, rerunError, flakyError, system-out, system-err. */
  if (f->outcome == TPUCI_TEST_FAILED) {
    c->failures++;
    tpuci__w_outcome(b, "failure", f->message, type, f->text);
  }
  tpuci__w_earlier(b, th, 0, failing);
  if (f->outcome == TPUCI_TEST_SKIPPED || f->outcome == TPUCI_TEST_XFAIL ||
      f->outcome == TPUCI_TEST_UNAFFECTED) {
    /* Jenkins' schema allows <skipped> no attribute: the reason is its
     * text, xfail said in front; a test left out as unaffected is a skip
     * whose reason names the run it last passed in (its history stays). */
    tpuci__buf_t why;
    tpuci__buf_init(&why);
    if (f->outcome == TPUCI_TEST_XFAIL) tpuci__buf_adds(&why, "xfail: ");
    if (f->outcome == TPUCI_TEST_UNAFFECTED && f->message) tpuci__buf_adds(&why, f->message);
    else if (f->text && *f->text) tpuci__buf_adds(&why, f->text);
    else if (f->message) tpuci__buf_adds(&why, f->message);
    c->skipped++;
    tpuci__buf_adds(b, "      <skipped>");
    if (why.len) tpuci__xml_escape(b, why.data, why.len, 0);
    tpuci__buf_adds(b, "</skipped>\n");
    tpuci__buf_free(&why);
  }
  if (f->outcome == TPUCI_TEST_ERROR) {
    c->errors++;
    tpuci__w_outcome(b, "error", f->message, type, f->text);
  }
  tpuci__w_earlier(b, th, 1, failing);
  tpuci__w_text(b, "      ", "system-out", f->system_out);
  tpuci__w_text(b, "      ", "system-err", f->system_err);
  tpuci__buf_adds(b, "    </testcase>\n");
  free(type);
}

/* "outcome: cause", without saying the outcome twice when the cause
 * starts with it ("cancelled: interrupted"); the outcome alone without a
 * cause. */
static void tpuci__outcome_cause(tpuci__buf_t *b, tpuci_outcome_t o, const char *cause) {
  const char *name = tpuci_outcome_name(o);
  size_t n = strlen(name);
  if (cause == NULL || *cause == '\0') tpuci__buf_adds(b, name);
  else if (strncmp(cause, name, n) == 0 && (cause[n] == ':' || cause[n] == ' ' || cause[n] == '\0'))
    tpuci__buf_adds(b, cause);
  else tpuci__buf_addf(b, "%s: %s", name, cause);
}

/* A test that no attempt reported a result for: an error, so that it
 * counts against the instance (docs/pytest.md, "not run"). */
static void tpuci__w_not_run(tpuci__buf_t *b, const tpuci__junit_suite_t *s,
                             const tpuci__test_hist_t *th, tpuci__junit_counts_t *c) {
  const tpuci__history_t *h = s->history;
  const tpuci__attempt_rec_t *last = h->n_attempts ? &h->attempts[h->n_attempts - 1] : NULL;
  tpuci__buf_t msg;

  tpuci__buf_init(&msg);
  tpuci__buf_adds(&msg, "not run: no attempt reported a result for this test");
  if (last != NULL) {
    tpuci__buf_addf(&msg, " (attempt %zu ended ", h->n_attempts);
    tpuci__outcome_cause(&msg, last->outcome, last->cause);
    tpuci__buf_adds(&msg, ")");
  }
  tpuci__w_test_open(b, s, th, NULL, 0);
  tpuci__buf_adds(b, ">\n");
  c->tests++;
  c->errors++;
  tpuci__w_outcome(b, "error", msg.data, "tpuci.not-run", msg.data);
  tpuci__buf_adds(b, "    </testcase>\n");
  tpuci__buf_free(&msg);
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
  const tpuci__strv_t *scope = tpuci__attempt_scope(&h->attempts[k]);
  int number = (int) k + 1;
  size_t i, listed = 0, total = 0;

  if (scope != NULL) {
    for (i = 0; i < scope->len; i++) {
      size_t t = tpuci__idmap_get(&h->map, scope->items[i]);
      if (t != TPUCI__IDMAP_NONE && tpuci__ran_in(&h->tests[t], number)) continue;
      total++;
      if (listed++ < TPUCI__LIST_MISSING) tpuci__buf_addf(out, "  %s\n", scope->items[i]);
    }
  } else {
    for (i = 0; i < h->len; i++) {
      /* Only tests known by then, as tpuci__history_add() counted. */
      if (h->tests[i].len > 0 && h->tests[i].runs[0].attempt > number) continue;
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
                             tpuci__junit_counts_t *c) {
  const tpuci__attempt_rec_t *a = &h->attempts[k];
  const char *oname = tpuci_outcome_name(a->outcome);
  int recovered = tpuci__history_recovered_after(h, k);
  int is_error = a->outcome == TPUCI_OUTCOME_INFRA || a->outcome == TPUCI_OUTCOME_CANCELLED ||
                 a->outcome == TPUCI_OUTCOME_PASSED || a->outcome == TPUCI_OUTCOME_NONE ||
                 a->outcome == TPUCI_OUTCOME_PREEMPTED || a->outcome == TPUCI_OUTCOME_NO_CAPACITY;
  tpuci__buf_t msg, body, name, type;

  tpuci__buf_init(&msg);
  tpuci__buf_init(&body);
  tpuci__buf_init(&name);
  tpuci__buf_init(&type);
  /* "timeout: timed out after 2s"; a cause that names its outcome
   * already ("cancelled: interrupted") is not said twice. */
  if (a->cause == NULL || strncmp(a->cause, oname, strlen(oname)) != 0 ||
      (a->cause[strlen(oname)] != ':' && a->cause[strlen(oname)] != ' '))
    tpuci__buf_addf(&msg, "%s: ", oname);
  if (a->cause != NULL && *a->cause) tpuci__buf_adds(&msg, a->cause);
  else if (a->exit_code >= 0) tpuci__buf_addf(&msg, "exit %d", a->exit_code);
  else tpuci__buf_adds(&msg, "killed");
  if (!a->reported) tpuci__buf_adds(&msg, "; no JUnit report");
  else if (a->cut) tpuci__buf_adds(&msg, "; pytest did not finish");
  else if (a->outcome == TPUCI_OUTCOME_FAILED && a->failing == 0)
    tpuci__buf_adds(&msg, "; the report shows no failing test");
  if (a->reported && a->missing > 0)
    tpuci__buf_addf(&msg, "; %zu test%s did not report", a->missing, a->missing == 1 ? "" : "s");

  tpuci__buf_addf(&body, "Attempt %zu of %zu of '%s' ended abnormally: %s.\n", k + 1, h->n_attempts,
                  h->instance, msg.data);
  tpuci__buf_addf(&body, "Exit code: %d.\n", a->exit_code);
  if (a->reported)
    tpuci__buf_addf(&body, "Its report has %zu test case%s, %zu failing.\n", a->tests,
                    a->tests == 1 ? "" : "s", a->failing);
  else tpuci__buf_adds(&body, "It left no JUnit report.\n");
  if (a->missing > 0 || (!a->reported && tpuci__attempt_scope(a) != NULL)) {
    tpuci__buf_adds(&body, "Tests it should have run but did not report:\n");
    tpuci__missing_list(h, k, &body);
  }
  if (a->running != NULL) tpuci__buf_addf(&body, "It was running %s when it ended.\n", a->running);
  if (recovered) tpuci__buf_adds(&body, "A later attempt completed normally.\n");

  tpuci__buf_addf(&name, "%s attempt %zu", h->instance, k + 1);
  tpuci__buf_addf(&type, "tpuci.%s",
                  a->reported || a->outcome != TPUCI_OUTCOME_PASSED ? oname : "noreport");
  tpuci__w_case_open(b, "tpuci", name.data, a->time_s);
  tpuci__buf_adds(b, ">\n");
  c->tests++;
  c->time_s += a->time_s;
  if (recovered) {
    tpuci__w_rerun_t rerun = {.tag = is_error ? "flakyError" : "flakyFailure",
                              .message = msg.data,
                              .type = type.data,
                              .trace = body.data};
    tpuci__w_rerun(b, &rerun);
  } else {
    if (is_error) c->errors++;
    else c->failures++;
    tpuci__w_outcome(b, is_error ? "error" : "failure", msg.data, type.data, body.data);
  }
  tpuci__buf_adds(b, "    </testcase>\n");
  tpuci__buf_free(&msg);
  tpuci__buf_free(&body);
  tpuci__buf_free(&name);
  tpuci__buf_free(&type);
}

static void tpuci__w_counts(tpuci__buf_t *b, const tpuci__junit_counts_t *c, int root) {
  /* Jenkins' schema has no `skipped` on <testsuites>. */
  tpuci__buf_addf(b, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\"", c->tests, c->failures,
                  c->errors);
  if (!root) tpuci__buf_addf(b, " skipped=\"%zu\"", c->skipped);
  tpuci__w_seconds(b, "time", c->time_s);
}

static void tpuci__w_property(tpuci__buf_t *b, const char *name, const char *value) {
  tpuci__buf_adds(b, "      <property");
  tpuci__w_attr(b, "name", name);
  tpuci__w_attr(b, "value", value);
  tpuci__buf_adds(b, "/>\n");
}

/* A <testsuite>'s name and properties: tpuci.kind, tpuci.attempts,
 * tpuci.flaky, tpuci.last_attempt (when not NULL), then `props` (name,
 * value pairs; may be NULL). */
typedef struct {
  const char *name;
  const char *kind;
  size_t attempts;
  size_t flaky;
  const char *last;
  const tpuci__strv_t *props;
} tpuci__w_suite_head_t;

/* <testsuite> with its counts `c` and properties, then `body`; `c` is
 * added to `total`. */
static void tpuci__w_suite_out(tpuci__buf_t *out, const tpuci__w_suite_head_t *head,
                               const tpuci__junit_counts_t *c, const tpuci__buf_t *body,
                               tpuci__junit_counts_t *total) {
  char num[32];
  size_t i;
  tpuci__buf_adds(out, "  <testsuite");
  tpuci__w_attr(out, "name", head->name);
  tpuci__w_counts(out, c, 0);
  tpuci__buf_adds(out, ">\n    <properties>\n");
  tpuci__w_property(out, "tpuci.kind", head->kind);
  snprintf(num, sizeof(num), "%zu", head->attempts);
  tpuci__w_property(out, "tpuci.attempts", num);
  snprintf(num, sizeof(num), "%zu", head->flaky);
  tpuci__w_property(out, "tpuci.flaky", num);
  if (head->last) tpuci__w_property(out, "tpuci.last_attempt", head->last);
  for (i = 0; head->props && i + 1 < head->props->len; i += 2)
    tpuci__w_property(out, head->props->items[i], head->props->items[i + 1]);
  tpuci__buf_adds(out, "    </properties>\n");
  if (body->data) tpuci__buf_add(out, body->data, body->len);
  tpuci__buf_adds(out, "  </testsuite>\n");
  total->tests += c->tests;
  total->failures += c->failures;
  total->errors += c->errors;
  total->skipped += c->skipped;
  total->time_s += c->time_s;
}

static void tpuci__w_suite(tpuci__buf_t *out, const tpuci__junit_suite_t *s,
                           tpuci__junit_counts_t *total) {
  const tpuci__history_t *h = s->history;
  tpuci__junit_counts_t c;
  tpuci__buf_t body;
  tpuci__history_summary_t sum;
  tpuci__w_suite_head_t head = {.name = h->instance, .kind = "pytest", .props = s->props};
  double attempts_time = 0;
  size_t i;

  memset(&c, 0, sizeof(c));
  tpuci__buf_init(&body);
  for (i = 0; i < h->len; i++) {
    if (h->tests[i].len > 0) tpuci__w_test(&body, s, &h->tests[i], &c);
    else tpuci__w_not_run(&body, s, &h->tests[i], &c);
  }
  for (i = 0; i < h->n_attempts; i++) {
    attempts_time += h->attempts[i].time_s;
    if (tpuci__attempt_abnormal(&h->attempts[i])) tpuci__w_attempt(&body, h, i, &c);
  }
  /* The suite's time is the wall clock spent on the instance when known. */
  if (attempts_time > 0) c.time_s = attempts_time;
  tpuci__history_summarize(h, &sum);
  head.attempts = h->n_attempts;
  head.flaky = sum.flaky;
  head.last = h->n_attempts > 0 ? tpuci_outcome_name(h->attempts[h->n_attempts - 1].outcome) : NULL;
  tpuci__w_suite_out(out, &head, &c, &body, total);
  tpuci__buf_free(&body);
}

/* failed, timeout and oom fail; infra, the machines' failures
 * (preempted, no-capacity), cancelled and not run are errors. */
static int tpuci__outcome_is_error(tpuci_outcome_t o) {
  return o == TPUCI_OUTCOME_INFRA || o == TPUCI_OUTCOME_CANCELLED || o == TPUCI_OUTCOME_NONE ||
         o == TPUCI_OUTCOME_PREEMPTED || o == TPUCI_OUTCOME_NO_CAPACITY;
}

/* "timeout: timed out after 2s" */
static void tpuci__run_message(tpuci__buf_t *b, const tpuci__junit_run_t *r) {
  if (r->cause && *r->cause) {
    tpuci__outcome_cause(b, r->outcome, r->cause);
    return;
  }
  tpuci__buf_addf(b, "%s: ", tpuci_outcome_name(r->outcome));
  if (r->exit_code >= 0) tpuci__buf_addf(b, "exit %d", r->exit_code);
  else tpuci__buf_adds(b, "killed");
}

static void tpuci__run_body(tpuci__buf_t *b, const tpuci__junit_command_t *cmd, size_t k) {
  const tpuci__junit_run_t *r = &cmd->runs[k];
  tpuci__buf_addf(b, "Attempt %zu of %zu of '%s': ", k + 1, cmd->n_runs, cmd->instance);
  tpuci__run_message(b, r);
  tpuci__buf_addf(b, ".\nExit code: %d.\n", r->exit_code);
  if (r->log) tpuci__buf_addf(b, "Log: %s\n", r->log);
}

/* Earlier failed attempts of a command, of one kind (failures or errors). */
static void tpuci__w_cmd_earlier(tpuci__buf_t *b, const tpuci__junit_command_t *cmd, int errors,
                                 int still_failing) {
  const char *tag = errors ? (still_failing ? "rerunError" : "flakyError")
                           : (still_failing ? "rerunFailure" : "flakyFailure");
  size_t k;
  for (k = 0; k + 1 < cmd->n_runs; k++) {
    const tpuci__junit_run_t *r = &cmd->runs[k];
    tpuci__w_rerun_t rerun = {.tag = tag};
    tpuci__buf_t msg, trace, type;
    if (r->outcome == TPUCI_OUTCOME_PASSED || tpuci__outcome_is_error(r->outcome) != errors)
      continue;
    tpuci__buf_init(&msg);
    tpuci__buf_init(&trace);
    tpuci__buf_init(&type);
    tpuci__run_message(&msg, r);
    tpuci__buf_addf(&trace, "[attempt %zu]\n", k + 1);
    tpuci__run_body(&trace, cmd, k);
    tpuci__buf_addf(&type, "tpuci.%s", tpuci_outcome_name(r->outcome));
    rerun.message = msg.data;
    rerun.type = type.data;
    rerun.trace = trace.data;
    rerun.out = r->log_tail;
    rerun.out_len = r->log_tail_len;
    tpuci__w_rerun(b, &rerun);
    tpuci__buf_free(&msg);
    tpuci__buf_free(&trace);
    tpuci__buf_free(&type);
  }
}

static void tpuci__w_command(tpuci__buf_t *out, const tpuci__junit_command_t *cmd,
                             const tpuci__strv_t *props, tpuci__junit_counts_t *total) {
  tpuci__junit_counts_t c;
  tpuci__buf_t body, msg, text, type;
  const tpuci__junit_run_t *last = cmd->n_runs ? &cmd->runs[cmd->n_runs - 1] : NULL;
  tpuci__w_suite_head_t head = {.name = cmd->instance, .kind = "command", .props = props};
  tpuci_outcome_t o = cmd->outcome;
  int passing = o == TPUCI_OUTCOME_PASSED || o == TPUCI_OUTCOME_FLAKY || o == TPUCI_OUTCOME_CACHED;
  size_t k, failed_runs = 0;

  memset(&c, 0, sizeof(c));
  tpuci__buf_init(&body);
  tpuci__buf_init(&msg);
  tpuci__buf_init(&text);
  tpuci__buf_init(&type);
  for (k = 0; k < cmd->n_runs; k++) {
    c.time_s += cmd->runs[k].time_s;
    if (cmd->runs[k].outcome != TPUCI_OUTCOME_PASSED &&
        cmd->runs[k].outcome != TPUCI_OUTCOME_CACHED)
      failed_runs++;
  }
  c.tests = 1;
  tpuci__w_case_open(&body, "tpuci", cmd->instance, c.time_s);
  if (passing && failed_runs == 0) {
    tpuci__buf_adds(&body, "/>\n");
    goto done;
  }
  tpuci__buf_adds(&body, ">\n");
  if (!passing) {
    if (last == NULL || o == TPUCI_OUTCOME_NONE) {
      tpuci__buf_addf(&msg, "%s: %s", o == TPUCI_OUTCOME_NONE ? "not run" : tpuci_outcome_name(o),
                      cmd->why ? cmd->why : "it never started");
      tpuci__buf_addf(&text, "'%s' did not run: %s.\n", cmd->instance,
                      cmd->why ? cmd->why : "it never started");
    } else {
      tpuci__run_message(&msg, last);
      tpuci__run_body(&text, cmd, cmd->n_runs - 1);
    }
    tpuci__buf_addf(&type, "tpuci.%s", o == TPUCI_OUTCOME_NONE ? "not-run" : tpuci_outcome_name(o));
  }
  /* Surefire's order, as for tests. */
  if (!passing && !tpuci__outcome_is_error(o)) {
    c.failures++;
    tpuci__w_outcome(&body, "failure", msg.data, type.data, text.data);
  }
  tpuci__w_cmd_earlier(&body, cmd, 0, !passing);
  if (!passing && tpuci__outcome_is_error(o)) {
    c.errors++;
    tpuci__w_outcome(&body, "error", msg.data, type.data, text.data);
  }
  tpuci__w_cmd_earlier(&body, cmd, 1, !passing);
  /* The last attempt's output when it did not pass. */
  if (last && !passing)
    tpuci__w_textn(&body, "      ", "system-out", last->log_tail, last->log_tail_len);
  tpuci__buf_adds(&body, "    </testcase>\n");
done:
  head.attempts = cmd->n_runs;
  head.flaky = o == TPUCI_OUTCOME_FLAKY && failed_runs > 0 ? 1 : 0;
  head.last = last ? tpuci_outcome_name(last->outcome) : NULL;
  tpuci__w_suite_out(out, &head, &c, &body, total);
  tpuci__buf_free(&body);
  tpuci__buf_free(&msg);
  tpuci__buf_free(&text);
  tpuci__buf_free(&type);
}

void tpuci__junit_write_run(tpuci__buf_t *out, const tpuci__junit_suite_t *suites, size_t n) {
  tpuci__junit_counts_t total;
  tpuci__buf_t b;
  size_t i;

  memset(&total, 0, sizeof(total));
  tpuci__buf_init(&b);
  for (i = 0; i < n; i++) {
    if (suites[i].history) tpuci__w_suite(&b, &suites[i], &total);
    else if (suites[i].command) tpuci__w_command(&b, suites[i].command, suites[i].props, &total);
  }
  tpuci__junit_write_doc(out, &total, &b);
  tpuci__buf_free(&b);
}

void tpuci__junit_write_doc(tpuci__buf_t *out, const tpuci__junit_counts_t *total,
                            const tpuci__buf_t *suites) {
  tpuci__buf_adds(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"tpuci\"");
  tpuci__w_counts(out, total, 1);
  tpuci__buf_adds(out, ">\n");
  if (suites->data && suites->len) tpuci__buf_add(out, suites->data, suites->len);
  tpuci__buf_adds(out, "</testsuites>\n");
}

int tpuci__junit_write_run_file(const char *path, const tpuci__junit_suite_t *suites, size_t n,
                                tpuci__err_t *err) {
  tpuci__buf_t b;
  int r;
  tpuci__buf_init(&b);
  tpuci__junit_write_run(&b, suites, n);
  r = tpuci__write_file_atomic(path, b.data, b.len);
  tpuci__buf_free(&b);
  if (r != 0) return tpuci__err_set(err, r, "%s: cannot write: %s", path, tpuci_strerror(r));
  return 0;
}

void tpuci__junit_write_merged(tpuci__buf_t *out, const tpuci__history_t *const *hs, size_t n) {
  tpuci__junit_suite_t *s = tpuci__malloc((n + 1) * sizeof(*s));
  size_t i;
  memset(s, 0, (n + 1) * sizeof(*s));
  for (i = 0; i < n; i++) s[i].history = hs[i];
  tpuci__junit_write_run(out, s, n);
  free(s);
}

int tpuci__junit_write_merged_file(const char *path, const tpuci__history_t *const *hs, size_t n,
                                   tpuci__err_t *err) {
  tpuci__buf_t b;
  int r;
  tpuci__buf_init(&b);
  tpuci__junit_write_merged(&b, hs, n);
  r = tpuci__write_file_atomic(path, b.data, b.len);
  tpuci__buf_free(&b);
  if (r != 0) return tpuci__err_set(err, r, "%s: cannot write: %s", path, tpuci_strerror(r));
  return 0;
}
