/* The console under GitHub Actions (see console.h): workflow commands
 * (::error and ::warning annotations where the test or the job is) and
 * the Markdown summary appended to $GITHUB_STEP_SUMMARY. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "console.h"

/* A workflow command's message (`property` 0) or property value, as
 * GitHub's toolkit escapes them (escapeData: '%', CR, LF; escapeProperty
 * also ':' and ','), from the text made safe first: no escape code or
 * other control reaches the log (a message keeps its line breaks, as
 * %0A). */
static void gh_escape_as(FILE *out, const char *text, int property) {
  const char *s = tpuci_console__safe(text, !property);
  for (; *s; s++) {
    if (*s == '%') fputs("%25", out);
    else if (*s == '\r') fputs("%0D", out);
    else if (*s == '\n') fputs("%0A", out);
    else if (property && *s == ':') fputs("%3A", out);
    else if (property && *s == ',') fputs("%2C", out);
    else fputc(*s, out);
  }
}

static void gh_escape(FILE *out, const char *s) { gh_escape_as(out, s, 0); }
static void gh_property(FILE *out, const char *s) { gh_escape_as(out, s, 1); }

/* GitHub places an annotation by a path relative to the repository's
 * root: $GITHUB_WORKSPACE (else the current folder). An absolute path, or
 * one relative to the current folder (`cwd_relative`), below that root
 * becomes relative to it; anything else is written as it is. Returns a
 * new string. */
static char *gh_path(const char *path, int cwd_relative) {
  const char *ws = getenv("GITHUB_WORKSPACE");
  char *abs_path, *base, *real, *cwd, *out;
  size_t n;

  if (path == NULL) return NULL;
  if (path[0] != '/' && !cwd_relative) return strdup(path);
  if ((cwd = getcwd(NULL, 0)) == NULL) return strdup(path);
  abs_path = malloc(strlen(cwd) + strlen(path) + 2);
  base = strdup(ws && ws[0] == '/' ? ws : cwd);
  if (abs_path == NULL || base == NULL) {
    free(abs_path);
    free(base);
    free(cwd);
    return strdup(path);
  }
  if (path[0] == '/') strcpy(abs_path, path);
  else sprintf(abs_path, "%s/%s", cwd, path);
  free(cwd);
  /* Compare real paths when they exist (a workspace behind a link). */
  if ((real = realpath(abs_path, NULL)) != NULL) {
    free(abs_path);
    abs_path = real;
  }
  if ((real = realpath(base, NULL)) != NULL) {
    free(base);
    base = real;
  }
  n = strlen(base);
  while (n > 1 && base[n - 1] == '/') base[--n] = '\0';
  if (strncmp(abs_path, base, n) == 0 && abs_path[n] == '/') out = strdup(abs_path + n + 1);
  else out = strdup(abs_path);
  free(abs_path);
  free(base);
  return out;
}

/* GitHub shows at most this many ::error and this many ::warning
 * annotations of a step; the rest are dropped without a word. */
#define GH_ANNOTATIONS_MAX 10
/* Instances a grouped annotation's title names before "and N more". */
#define GH_TITLE_NAMES 3

/* One annotation: a failing (or flaky, or quarantined) test, or an
 * instance without such tests, at one place with one label; the
 * instances it happened in (matrix instances that failed alike). */
typedef struct {
  int warning;
  char *file; /* relative to the repository, or NULL */
  int line;
  char *test;  /* the test's id; NULL for an instance */
  char *label; /* "failed", "flaky", "quarantined until ..." */
  char *msg;
  const char **names; /* the instances (borrowed from the context) */
  size_t nnames;
} gh_note_t;

typedef struct {
  gh_note_t *v;
  size_t len;
} gh_notes_t;

static int same_str(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

/* What a note says and where, as gh_note_t has it (test, label and
 * msg are copied; msg NULL is ""). */
typedef struct {
  int warning;
  char *file;
  int line;
  const char *test;
  const char *label;
  const char *msg;
} gh_what_t;

/* Adds instance `name` to the note at the same place with the same test
 * and label, or a new note. w->file is taken over. */
static void gh_note(gh_notes_t *ns, const gh_what_t *w, const char *name) {
  int warning = w->warning, line = w->line;
  char *file = w->file;
  const char *test = w->test, *label = w->label;
  gh_note_t *n = NULL;
  size_t k;
  for (k = 0; k < ns->len && n == NULL; k++) {
    gh_note_t *o = &ns->v[k];
    if (o->warning == warning && o->line == line && same_str(o->file, file) &&
        same_str(o->test, test) && same_str(o->label, label))
      n = o;
  }
  if (n == NULL) {
    gh_note_t *v = realloc(ns->v, (ns->len + 1) * sizeof(*v));
    if (v == NULL) {
      free(file);
      return;
    }
    ns->v = v;
    n = &ns->v[ns->len++];
    memset(n, 0, sizeof(*n));
    n->warning = warning;
    n->file = file;
    n->line = line;
    n->test = test ? strdup(test) : NULL;
    n->label = strdup(label);
    n->msg = strdup(w->msg ? w->msg : "");
  } else {
    free(file);
  }
  {
    const char **names = realloc(n->names, (n->nnames + 1) * sizeof(*names));
    if (names == NULL) return;
    n->names = names;
    n->names[n->nnames++] = name;
  }
}

static void gh_notes_free(gh_notes_t *ns) {
  size_t k;
  for (k = 0; k < ns->len; k++) {
    free(ns->v[k].file);
    free(ns->v[k].test);
    free(ns->v[k].label);
    free(ns->v[k].msg);
    free(ns->v[k].names);
  }
  free(ns->v);
}

/* pytest instance i's failing tests (an error each, a warning for a
 * quarantined one) or its flaky ones (warnings), where each failed in
 * the project (else where the test is). Returns how many. */
static size_t gh_note_tests(gh_notes_t *ns, tpuci_run_t *run, size_t i, int flaky) {
  size_t k, n = tpuci_test_count(run, i), written = 0;
  tpuci_test_info_t t = TPUCI_TEST_INFO_INIT;
  for (k = 0; k < n; k++) {
    char label[512];
    const char *file;
    gh_what_t w;
    if (tpuci_test_info(run, i, k, &t) != 0) continue;
    if (flaky ? !(t.flaky || t.order_dependent) : !t.failing) continue;
    file = t.failure_file ? t.failure_file : t.file;
    w.warning = 1;
    w.file = gh_path(file, 0);
    w.line = t.failure_file ? t.failure_line : t.line;
    w.test = t.id;
    w.msg = t.message ? t.message : t.outcome;
    if (flaky && t.order_dependent) {
      w.label = "order-dependent";
      w.msg = t.order ? t.order : "failed in one order, passed in another";
    } else if (flaky) {
      w.label = "flaky";
      w.msg = t.message ? t.message : "failed, then passed on a later attempt";
    } else if (t.quarantined) {
      snprintf(label, sizeof(label), "quarantined until %s (%s)", t.quarantine_until,
               t.quarantine_owner);
      w.label = label;
    } else {
      w.warning = 0;
      w.label = t.outcome;
    }
    gh_note(ns, &w, tpuci_run_instance_name(run, i));
    written++;
  }
  return written;
}

/* Instance i failed (an error) or was flaky (a warning) and has no test
 * to show it: at the line of the spec that declared its job, with the
 * cause (a flaky one's: the failure that was retried away). */
static void gh_note_instance(gh_notes_t *ns, tpuci_run_t *run, size_t i) {
  const char *where = tpuci_run_instance_where(run, i), *colon, *cause = NULL;
  tpuci_outcome_t o = tpuci_instance_outcome(run, i);
  tpuci_attempt_info_t info = TPUCI_ATTEMPT_INFO_INIT;
  size_t k = tpuci_attempt_count(run, i);
  int flaky = o == TPUCI_OUTCOME_FLAKY || o == TPUCI_OUTCOME_ORDER_DEPENDENT, line = 0;
  char *file = NULL;
  gh_what_t w;

  if (where && (colon = strrchr(where, ':')) != NULL) {
    char spec[1024];
    size_t n = (size_t) (colon - where);
    if (n >= sizeof(spec)) n = sizeof(spec) - 1;
    memcpy(spec, where, n);
    spec[n] = '\0';
    file = gh_path(spec, 1);
    line = atoi(colon + 1);
  }
  while (k > 0 && tpuci_attempt_info(run, i, k - 1, &info) == 0) {
    cause = info.cause;
    if (!flaky || info.outcome != TPUCI_OUTCOME_PASSED) break;
    k--;
  }
  w.warning = flaky;
  w.file = file;
  w.line = line;
  w.test = NULL;
  w.label = tpuci_outcome_name(o);
  w.msg = cause;
  gh_note(ns, &w, tpuci_run_instance_name(run, i));
}

/* "a, b, c and 4 more" */
static void gh_names(char *buf, size_t size, const gh_note_t *n) {
  size_t k, used = 0;
  buf[0] = '\0';
  for (k = 0; k < n->nnames && k < GH_TITLE_NAMES; k++)
    used += (size_t) snprintf(buf + used, used < size ? size - used : 0, "%s%s", k ? ", " : "",
                              n->names[k]);
  if (n->nnames > GH_TITLE_NAMES && used < size)
    snprintf(buf + used, size - used, " and %zu more", n->nnames - GH_TITLE_NAMES);
}

/* "::error file=F,line=L,title=T::MESSAGE" (or ::warning). */
static void gh_command(FILE *out, const gh_note_t *n) {
  char names[1024], title[1536];
  gh_names(names, sizeof(names), n);
  if (n->test) snprintf(title, sizeof(title), "%s %s in %s", n->test, n->label, names);
  else snprintf(title, sizeof(title), "tpuci: %s %s", names, n->label);
  fprintf(out, "::%s ", n->warning ? "warning" : "error");
  if (n->file) {
    fputs("file=", out);
    gh_property(out, n->file);
    if (n->line > 0) fprintf(out, ",line=%d", n->line);
    fputc(',', out);
  }
  fputs("title=", out);
  gh_property(out, title);
  fputs("::", out);
  gh_escape(out, n->msg);
  fputc('\n', out);
}

void tpuci_console__gh_annotations(tpuci_console_t *c, tpuci_run_t *run) {
  gh_notes_t ns = {NULL, 0};
  size_t i, k, n = tpuci_run_instance_count(run), shown[2] = {0, 0}, left[2] = {0, 0};
  int w;

  for (i = 0; i < n; i++) {
    tpuci_outcome_t o = tpuci_instance_outcome(run, i);
    if (!tpuci_run_instance_selected(run, i) || tpuci_attempt_count(run, i) == 0) continue;
    if (o == TPUCI_OUTCOME_CACHED) continue; /* a cached pass is no news */
    if (o == TPUCI_OUTCOME_PASSED) {
      gh_note_tests(&ns, run, i, 1); /* flaky tests of a passing instance */
      continue;
    }
    if (gh_note_tests(&ns, run, i, 0) > 0) {
      gh_note_tests(&ns, run, i, 1);
      continue;
    }
    if (gh_note_tests(&ns, run, i, 1) > 0 &&
        (o == TPUCI_OUTCOME_FLAKY || o == TPUCI_OUTCOME_ORDER_DEPENDENT))
      continue;
    gh_note_instance(&ns, run, i);
  }
  for (k = 0; k < ns.len; k++) {
    w = ns.v[k].warning;
    if (shown[w] < GH_ANNOTATIONS_MAX) {
      gh_command(c->out, &ns.v[k]);
      shown[w]++;
    } else {
      left[w]++;
    }
  }
  for (w = 0; w < 2; w++)
    if (left[w] > 0)
      fprintf(c->out,
              "::notice title=tpuci::%zu more %s not annotated (GitHub shows %d per "
              "step); the step summary lists every %s\n",
              left[w],
              w              ? (left[w] == 1 ? "warning (a flaky, order-dependent or quarantined "
                                               "test) is"
                                             : "warnings (flaky, order-dependent or quarantined "
                                               "tests) are")
              : left[w] == 1 ? "failure is"
                             : "failures are",
              GH_ANNOTATIONS_MAX, w ? "flaky and quarantined test" : "failed test and instance");
  gh_notes_free(&ns);
}

/* Text as a Markdown code span in a table cell, whatever it holds: the
 * fence is one backtick longer than the longest run of backticks inside,
 * '|' is escaped (GitHub's tables split on it even in code spans), line
 * breaks become spaces, and a text that starts or ends with a backtick or
 * a space is padded so the span keeps it. Nothing in a code span is
 * Markdown or HTML, so no name or message can break the page. */
static void md_code(FILE *f, const char *s, size_t max) {
  size_t i, len = strlen(s ? s : ""), run = 0, longest = 0;
  int pad;
  if (s == NULL || len == 0) {
    fputs("` `", f);
    return;
  }
  if (len > max) len = max;
  for (i = 0; i < len; i++) {
    run = s[i] == '`' ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  pad = s[0] == '`' || s[0] == ' ' || s[len - 1] == '`' || s[len - 1] == ' ';
  for (i = 0; i <= longest; i++) fputc('`', f);
  if (pad) fputc(' ', f);
  for (i = 0; i < len; i++) {
    if (s[i] == '|') fputs("\\|", f);
    else if (s[i] == '\n' || s[i] == '\r') fputc(' ', f);
    else fputc(s[i], f);
  }
  if (pad) fputc(' ', f);
  for (i = 0; i <= longest; i++) fputc('`', f);
}

/* The first line of a message, for a table cell. */
static void md_first_line(FILE *f, const char *msg) {
  const char *nl = msg ? strpbrk(msg, "\r\n") : NULL;
  size_t n = msg ? (nl ? (size_t) (nl - msg) : strlen(msg)) : 0;
  char buf[256];
  if (n == 0) {
    fputs(" ", f);
    return;
  }
  if (n >= sizeof(buf)) n = sizeof(buf) - 1;
  memcpy(buf, msg, n);
  buf[n] = '\0';
  md_code(f, buf, sizeof(buf));
}

/* The failed (or flaky, or order-dependent: `flaky` 1, 2) tests of every
 * pytest instance, as a table. Returns how many rows were written. */
static size_t gh_summary_tests(FILE *f, tpuci_run_t *run, int flaky) {
  size_t i, k, n = tpuci_run_instance_count(run), rows = 0;
  tpuci_test_info_t t = TPUCI_TEST_INFO_INIT;
  for (i = 0; i < n; i++) {
    size_t nt = tpuci_run_instance_selected(run, i) ? tpuci_test_count(run, i) : 0;
    for (k = 0; k < nt; k++) {
      if (tpuci_test_info(run, i, k, &t) != 0 || !(flaky == 2 ? t.order_dependent
                                                   : flaky    ? t.flaky
                                                              : t.failing))
        continue;
      if (rows++ == 0)
        fprintf(f, "\n#### %s tests\n\n| test | instance | %s | message |\n|---|---|---|---|\n",
                flaky == 2 ? "Order-dependent"
                : flaky    ? "Flaky"
                           : "Failed",
                flaky ? "runs" : "outcome");
      fputs("| ", f);
      md_code(f, t.id, 1024);
      fputs(" | ", f);
      md_code(f, tpuci_run_instance_name(run, i), 1024);
      if (flaky) fprintf(f, " | %d | ", t.runs);
      else if (t.quarantined) {
        fprintf(f, " | %s, quarantined until %s by ", t.outcome, t.quarantine_until);
        md_code(f, t.quarantine_owner, 256);
        fputs(" | ", f);
      } else fprintf(f, " | %s | ", t.outcome);
      md_first_line(f, flaky == 2 && t.order ? t.order : t.message);
      fputs(" |\n", f);
    }
  }
  return rows;
}

/* The quarantined tests that passed their last runs, as a list. */
static void gh_summary_release(FILE *f, tpuci_run_t *run) {
  size_t i, k, n = tpuci_run_instance_count(run), rows = 0;
  tpuci_test_info_t t = TPUCI_TEST_INFO_INIT;
  for (i = 0; i < n; i++) {
    size_t nt = tpuci_run_instance_selected(run, i) ? tpuci_test_count(run, i) : 0;
    for (k = 0; k < nt; k++) {
      if (tpuci_test_info(run, i, k, &t) != 0 || !t.release_ready) continue;
      if (rows++ == 0)
        fputs("\n#### Quarantined tests ready to release\n\n"
              "(they passed their last runs: `tpuci flaky --release` lists the entries to "
              "remove)\n\n",
              f);
      fputs("- ", f);
      md_code(f, t.id, 1024);
      fputs(" (", f);
      md_code(f, t.quarantine_where, 1024);
      fputs(")\n", f);
    }
  }
}

/* "Tests left out as unaffected: 40 (not run: nothing they need changed
 * since they passed)", when a run left any out (docs/pytest.md). */
static void gh_summary_unaffected(FILE *f, tpuci_run_t *run) {
  size_t i, k, n = tpuci_run_instance_count(run), count = 0;
  for (i = 0; i < n; i++) {
    size_t nt = tpuci_run_instance_selected(run, i) ? tpuci_test_count(run, i) : 0;
    for (k = 0; k < nt; k++) {
      tpuci_test_info_t t = TPUCI_TEST_INFO_INIT;
      count += tpuci_test_info(run, i, k, &t) == 0 && strcmp(t.outcome, "unaffected") == 0;
    }
  }
  if (count > 0)
    fprintf(f,
            "\nTests left out as unaffected: %zu (not run: nothing they need changed since "
            "they passed)\n",
            count);
}

/* Appends to $GITHUB_STEP_SUMMARY: the verdict, a table of every
 * instance, the counts, the tests left out as unaffected, then the failed
 * and the flaky tests. */
void tpuci_console__gh_step_summary(tpuci_run_t *run) {
  const char *path = getenv("GITHUB_STEP_SUMMARY");
  size_t i, n = tpuci_run_instance_count(run);
  char d[32];
  FILE *f;

  if (path == NULL || *path == '\0' || (f = fopen(path, "a")) == NULL) return;
  fprintf(f, "### tpuci: %s%s\n\n", tpuci_console__verdict(run),
          tpuci_run_write_errors(run) ? " (records incomplete)" : "");
  fprintf(f, "| instance | outcome | attempts | time |\n|---|---|---:|---:|\n");
  for (i = 0; i < n; i++) {
    if (!tpuci_run_instance_selected(run, i)) continue;
    tpuci_console__duration(tpuci_console__instance_ms(run, i), d, sizeof(d));
    fputs("| ", f);
    md_code(f, tpuci_run_instance_name(run, i), 1024);
    fprintf(f, " | %s | %zu | %s |\n", tpuci_console__outcome_label_of(run, i),
            tpuci_attempt_count(run, i), d);
  }
  tpuci_console__duration(tpuci_run_duration_ms(run), d, sizeof(d));
  fprintf(f, "\n%zu passed, ", tpuci_outcome_count(run, TPUCI_OUTCOME_PASSED));
  /* Passes whose inputs had not changed: not run (docs/cache.md). */
  if (tpuci_outcome_count(run, TPUCI_OUTCOME_CACHED) > 0)
    fprintf(f, "%zu cached, ", tpuci_outcome_count(run, TPUCI_OUTCOME_CACHED));
  if (tpuci_outcome_count(run, TPUCI_OUTCOME_ORDER_DEPENDENT) > 0)
    fprintf(f, "%zu order-dependent, ", tpuci_outcome_count(run, TPUCI_OUTCOME_ORDER_DEPENDENT));
  if (tpuci_outcome_count(run, TPUCI_OUTCOME_PREEMPTED) > 0)
    fprintf(f, "%zu preempted, ", tpuci_outcome_count(run, TPUCI_OUTCOME_PREEMPTED));
  if (tpuci_outcome_count(run, TPUCI_OUTCOME_NO_CAPACITY) > 0)
    fprintf(f, "%zu no-capacity, ", tpuci_outcome_count(run, TPUCI_OUTCOME_NO_CAPACITY));
  if (tpuci_outcome_count(run, TPUCI_OUTCOME_NOT_APPLICABLE) > 0)
    fprintf(f, "%zu not-applicable, ", tpuci_outcome_count(run, TPUCI_OUTCOME_NOT_APPLICABLE));
  fprintf(
      f, "%zu flaky, %zu failed, %zu timeout, %zu oom, %zu infra, %zu cancelled in %s\n",
      tpuci_outcome_count(run, TPUCI_OUTCOME_FLAKY), tpuci_outcome_count(run, TPUCI_OUTCOME_FAILED),
      tpuci_outcome_count(run, TPUCI_OUTCOME_TIMEOUT), tpuci_outcome_count(run, TPUCI_OUTCOME_OOM),
      tpuci_outcome_count(run, TPUCI_OUTCOME_INFRA),
      tpuci_outcome_count(run, TPUCI_OUTCOME_CANCELLED), d);
  gh_summary_unaffected(f, run);
  gh_summary_tests(f, run, 0);
  gh_summary_tests(f, run, 1);
  gh_summary_tests(f, run, 2);
  gh_summary_release(f, run);
  fputc('\n', f);
  fclose(f);
}
