/* The console's end of a run: the table of instances, the tests that
 * failed, the counts and the verdict (console.h). */
#include "console.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define C_RED "\033[31m"
#define C_GREEN "\033[32m"
#define C_YELLOW "\033[33m"
#define C_DIM "\033[2m"
#define C_BOLD "\033[1m"

/* The run's verdict, in lower case. */
const char *tpuci_console__verdict(tpuci_run_t *run) {
  const char *v = tpuci_run_verdict(run);
  return v ? v : "failed";
}

const char *tpuci_console__outcome_label(tpuci_outcome_t o) {
  return o == TPUCI_OUTCOME_NONE ? "not run" : tpuci_outcome_name(o);
}

const char *tpuci_console__outcome_label_of(tpuci_run_t *run, size_t i) {
  if (tpuci_instance_quarantined(run, i)) return "quarantined";
  return tpuci_console__outcome_label(tpuci_instance_outcome(run, i));
}

/* The tests of instance i that never got a result, on
 * one line: the first few by node id, then how many more (the JSON and
 * JUnit reports list every one). */
static void not_run_line(tpuci_console_t *c, tpuci_run_t *run, size_t i, size_t nt) {
  tpuci_test_info_t t = TPUCI_TEST_INFO_INIT;
  size_t k, n = 0, shown = 0;
  const char *sep = "";
  for (k = 0; k < nt; k++) {
    if (tpuci_test_info(run, i, k, &t) != 0 || t.runs != 0 || !t.failing || t.quarantined) continue;
    if (n == 0)
      fprintf(c->out, "  %snot run%s ", tpuci_console__color_of(c, TPUCI_OUTCOME_FAILED),
              tpuci_console__reset(c));
    n++;
    if (shown < 3) {
      fprintf(c->out, "%s%s", sep, tpuci_console__safe(t.id, 0));
      sep = ", ";
      shown++;
    }
  }
  if (n > shown) fprintf(c->out, " and %zu more", n - shown);
  if (n > 0) fprintf(c->out, ": no attempt got to %s\n", n == 1 ? "it" : "them");
}

/* A quarantined test's entry, after its line: "(quarantined until D,
 * owner O: reason)". */
static void quarantine_note(tpuci_console_t *c, const tpuci_test_info_t *t) {
  if (!t->quarantined) return;
  fprintf(c->out, "\n           quarantined until %s by %s (%s): %s",
          tpuci_console__safe(t->quarantine_until, 0), tpuci_console__safe(t->quarantine_owner, 0),
          tpuci_console__safe(t->quarantine_where, 0),
          tpuci_console__safe(t->quarantine_reason, 0));
}

/* pytest instances: their failed and flaky tests, by node id (a
 * quarantined one says so, and its failure does not count); those that
 * never got a result on one line, after them; then the quarantined tests
 * that passed their last runs and can be released. */
static void tests_summary(tpuci_console_t *c, tpuci_run_t *run) {
  size_t i, k, n = tpuci_run_instance_count(run);
  for (i = 0; i < n; i++) {
    size_t nt = tpuci_test_count(run, i), failing = 0, flaky = 0, quarantined = 0, order = 0;
    tpuci_test_info_t t = TPUCI_TEST_INFO_INIT;
    if (nt == 0 || !tpuci_run_instance_selected(run, i)) continue;
    for (k = 0; k < nt; k++) {
      if (tpuci_test_info(run, i, k, &t) != 0) continue;
      if (t.failing && t.quarantined) quarantined++;
      else if (t.failing) failing++;
      else if (t.flaky) flaky++;
      else if (t.order_dependent) order++;
    }
    fprintf(c->out, "%s: %zu test%s, %zu failed, %zu flaky",
            tpuci_console__safe(tpuci_run_instance_name(run, i), 0), nt, nt == 1 ? "" : "s",
            failing, flaky);
    if (order > 0) fprintf(c->out, ", %zu order-dependent", order);
    tpuci_console__unaffected_note(c, run, i);
    if (quarantined > 0) fprintf(c->out, ", %zu quarantined (failed, not counted)", quarantined);
    fputc('\n', c->out);
    for (k = 0; k < nt; k++) {
      const char *label;
      if (tpuci_test_info(run, i, k, &t) != 0 || !(t.failing || t.flaky || t.order_dependent))
        continue;
      if (t.runs == 0 && !t.quarantined) continue; /* not run: below */
      label = t.failing ? (t.quarantined ? "quarantined" : t.outcome)
              : t.flaky ? "flaky"
                        : "order-dependent";
      fprintf(c->out, "  %s%-6s%s %s",
              t.failing && !t.quarantined ? tpuci_console__color_of(c, TPUCI_OUTCOME_FAILED)
                                          : tpuci_console__color_of(c, TPUCI_OUTCOME_FLAKY),
              label, tpuci_console__reset(c), tpuci_console__safe(t.id, 0));
      if (t.failing && t.quarantined) fprintf(c->out, " (%s)", t.outcome);
      if (t.message) {
        const char *nl = strchr(t.message, '\n');
        int len = nl ? (int) (nl - t.message) : (int) strlen(t.message);
        char *first = strndup(t.message, (size_t) (len > 160 ? 160 : len));
        fprintf(c->out, ": %s", tpuci_console__safe(first, 0));
        free(first);
      }
      if (t.order_dependent && t.order) fprintf(c->out, "\n           %s", t.order);
      quarantine_note(c, &t);
      fputc('\n', c->out);
    }
    not_run_line(c, run, i, nt);
    for (k = 0; k < nt; k++)
      if (tpuci_test_info(run, i, k, &t) == 0 && t.release_ready)
        fprintf(c->out,
                "  ready to release: %s (%s, owner %s): passed its last runs; "
                "`tpuci flaky --release` lists the entries to remove\n",
                tpuci_console__safe(t.id, 0), tpuci_console__safe(t.quarantine_where, 0),
                tpuci_console__safe(t.quarantine_owner, 0));
  }
  tpuci_console__quarantine_passing(c, run);
}

void tpuci_console_summary(tpuci_console_t *c, tpuci_run_t *run) {
  static const tpuci_outcome_t order[] = {
      TPUCI_OUTCOME_PASSED, TPUCI_OUTCOME_FLAKY, TPUCI_OUTCOME_FAILED,   TPUCI_OUTCOME_TIMEOUT,
      TPUCI_OUTCOME_OOM,    TPUCI_OUTCOME_INFRA, TPUCI_OUTCOME_CANCELLED};
  size_t i, k, n = tpuci_run_instance_count(run), width = 8, total = 0, quarantined = 0;
  int owidth;
  size_t unwritten = tpuci_run_write_errors(run);
  const char *verdict = tpuci_console__verdict(run), *summary = tpuci_run_summary_path(run);
  char d[32];

  for (i = 0; i < n; i++) {
    size_t w;
    if (!tpuci_run_instance_selected(run, i)) continue;
    /* A past run's names (`tpuci show`, merge) are a file's text. */
    w = strlen(tpuci_console__safe(tpuci_run_instance_name(run, i), 0));
    if (w > width) width = w;
    total++;
  }
  if (width > 60) width = 60;
  /* "order-dependent" and "not-applicable" are wider than the column. */
  owidth = 9;
  if (tpuci_outcome_count(run, TPUCI_OUTCOME_NOT_APPLICABLE) > 0) owidth = 14;
  if (tpuci_outcome_count(run, TPUCI_OUTCOME_ORDER_DEPENDENT) > 0) owidth = 15;
  {
    /* With -q the table lists only what did not pass: none, no table. */
    size_t shown = 0;
    for (i = 0; i < n; i++)
      if (tpuci_run_instance_selected(run, i) &&
          (!c->quiet || (tpuci_instance_outcome(run, i) != TPUCI_OUTCOME_PASSED &&
                         tpuci_instance_outcome(run, i) != TPUCI_OUTCOME_CACHED)))
        shown++;
    if (shown > 0)
      fprintf(c->out, "\n%-*s  %-*s  %8s  %9s\n", (int) width, "instance", owidth, "outcome",
              "attempts", "duration");
  }
  for (i = 0; i < n; i++) {
    tpuci_outcome_t o;
    if (!tpuci_run_instance_selected(run, i)) continue;
    o = tpuci_instance_outcome(run, i);
    if (c->quiet && (o == TPUCI_OUTCOME_PASSED || o == TPUCI_OUTCOME_CACHED)) continue;
    tpuci_console__duration(tpuci_console__instance_ms(run, i), d, sizeof(d));
    fprintf(
        c->out, "%-*s  %s%-*s%s  %8zu  %9s\n", (int) width,
        tpuci_console__safe(tpuci_run_instance_name(run, i), 0),
        tpuci_console__color_of(c, tpuci_instance_quarantined(run, i) ? TPUCI_OUTCOME_FLAKY : o),
        owidth, tpuci_console__outcome_label_of(run, i), tpuci_console__reset(c),
        tpuci_attempt_count(run, i), d);
  }
  fputc('\n', c->out);
  tests_summary(c, run);
  for (i = 0; i < n; i++)
    quarantined += tpuci_run_instance_selected(run, i) && tpuci_instance_quarantined(run, i);
  /* Instances, not tests: the lines above count a pytest instance's tests. */
  fputs("instances: ", c->out);
  for (k = 0; k < sizeof(order) / sizeof(order[0]); k++)
    fprintf(
        c->out, "%s%s %zu", k ? ", " : "", tpuci_outcome_name(order[k]),
        tpuci_outcome_count(run, order[k]) - (order[k] == TPUCI_OUTCOME_FAILED ? quarantined : 0));
  if (quarantined > 0) fprintf(c->out, ", quarantined %zu", quarantined);
  if (tpuci_outcome_count(run, TPUCI_OUTCOME_CACHED) > 0)
    fprintf(c->out, ", cached %zu", tpuci_outcome_count(run, TPUCI_OUTCOME_CACHED));
  if (tpuci_outcome_count(run, TPUCI_OUTCOME_ORDER_DEPENDENT) > 0)
    fprintf(c->out, ", order-dependent %zu",
            tpuci_outcome_count(run, TPUCI_OUTCOME_ORDER_DEPENDENT));
  /* The machines' failures, apart from the tests' (docs/ssh.md). */
  if (tpuci_outcome_count(run, TPUCI_OUTCOME_PREEMPTED) > 0)
    fprintf(c->out, ", preempted %zu", tpuci_outcome_count(run, TPUCI_OUTCOME_PREEMPTED));
  if (tpuci_outcome_count(run, TPUCI_OUTCOME_NO_CAPACITY) > 0)
    fprintf(c->out, ", no-capacity %zu", tpuci_outcome_count(run, TPUCI_OUTCOME_NO_CAPACITY));
  /* run --test: the jobs whose selection does not collect it. */
  if (tpuci_outcome_count(run, TPUCI_OUTCOME_NOT_APPLICABLE) > 0)
    fprintf(c->out, ", not-applicable %zu", tpuci_outcome_count(run, TPUCI_OUTCOME_NOT_APPLICABLE));
  tpuci_console__duration(tpuci_run_duration_ms(run), d, sizeof(d));
  fprintf(c->out, " (of %zu) in %s\n", total, d);
  if (total > 0 && tpuci_outcome_count(run, TPUCI_OUTCOME_NOT_APPLICABLE) == total)
    fprintf(c->out, "--test: no pytest job's selection collects it: every job is "
                    "not-applicable\n");
  if (strcmp(verdict, "passed") == 0)
    fprintf(c->out, "%sverdict: PASSED%s\n", c->color ? C_BOLD C_GREEN : "",
            tpuci_console__reset(c));
  else if (strcmp(verdict, "interrupted") == 0)
    fprintf(c->out, "%sverdict: INTERRUPTED%s\n", c->color ? C_BOLD C_YELLOW : "",
            tpuci_console__reset(c));
  else if (strcmp(verdict, "not-run") == 0 &&
           tpuci_outcome_count(run, TPUCI_OUTCOME_PREEMPTED) +
                   tpuci_outcome_count(run, TPUCI_OUTCOME_NO_CAPACITY) >
               0)
    fprintf(c->out,
            "%sverdict: NOT RUN: no machines (preempted or no capacity), no test failed%s\n",
            c->color ? C_BOLD C_YELLOW : "", tpuci_console__reset(c));
  else if (strcmp(verdict, "not-run") == 0)
    fprintf(c->out, "%sverdict: NOT RUN%s\n", c->color ? C_BOLD C_RED : "",
            tpuci_console__reset(c));
  else
    fprintf(c->out, "%sverdict: FAILED%s\n", c->color ? C_BOLD C_RED : "", tpuci_console__reset(c));
  if (unwritten > 0)
    fprintf(c->out, "%srecords incomplete: %zu file%s could not be written (exit code %d)%s\n",
            c->color ? C_BOLD C_RED : "", unwritten, unwritten == 1 ? "" : "s",
            tpuci_run_exit_code(run), tpuci_console__reset(c));
  if (summary != NULL) fprintf(c->out, "summary: %s\n", tpuci_console__path(summary));
  else fprintf(c->out, "summary: not written\n");
  if (c->style == TPUCI_CONSOLE_GITHUB) {
    tpuci_console__gh_annotations(c, run);
    tpuci_console__gh_step_summary(run);
  }
  fflush(c->out);
}
