/* The console's lines for pytest tests as the run goes: a line per test
 * that failed, as its process's progress reports it (TPUCI_EVENT_TEST_FAILED),
 * and how many failed so far, for the board. Uses only tpuci.h. */
#include "console.h"

#include <stdlib.h>
#include <string.h>

/* Whether this test of this instance failed before (a retry's, the
 * failing-first process's): the count is of tests, not of failures. */
static int seen_before(tpuci_console_t *c, const tpuci_event_t *ev) {
  size_t i, n = strlen(ev->name) + strlen(ev->test) + 2;
  char *key = malloc(n), **grown;
  if (key == NULL) return 1;
  snprintf(key, n, "%s%c%s", ev->name, '\x1f', ev->test);
  for (i = 0; i < c->nfailed_tests; i++)
    if (strcmp(c->failed_tests[i], key) == 0) {
      free(key);
      return 1;
    }
  grown = realloc(c->failed_tests, (c->nfailed_tests + 1) * sizeof(*grown));
  if (grown == NULL) {
    free(key);
    return 1;
  }
  c->failed_tests = grown;
  c->failed_tests[c->nfailed_tests++] = key;
  return 0;
}

void tpuci_console__test_failed(tpuci_console_t *c, const tpuci_event_t *ev) {
  char line[1024];
  const char *msg = ev->message;
  int n;
  if (ev->test == NULL) return;
  seen_before(c, ev);
  n = snprintf(line, sizeof(line), "%s%s: FAILED %s", ev->name,
               ev->attempt == 0  ? " (failing first)"
               : ev->attempt < 0 ? " (run again after its attempts)"
                                 : "",
               ev->test);
  if (msg != NULL && *msg && n > 0 && (size_t) n < sizeof(line)) {
    size_t len = strcspn(msg, "\n");
    snprintf(line + n, sizeof(line) - (size_t) n, " - %.*s", (int) (len > 300 ? 300 : len), msg);
  }
  /* Test ids and messages are the job's text: no escape code or
   * workflow command of theirs (tpuci_text_safe). */
  fprintf(c->out, "[%stest   %s] %s\n", c->color ? "\033[31m" : "", c->color ? "\033[0m" : "",
          tpuci_console__safe(line, 0));
}

void tpuci_console__unaffected_note(tpuci_console_t *c, tpuci_run_t *run, size_t i) {
  size_t k, n = 0, nt = tpuci_test_count(run, i);
  tpuci_test_info_t t = TPUCI_TEST_INFO_INIT;
  for (k = 0; k < nt; k++)
    n += tpuci_test_info(run, i, k, &t) == 0 && strcmp(t.outcome, "unaffected") == 0;
  if (n > 0) fprintf(c->out, ", %zu unaffected (not run: nothing they need changed)", n);
}

void tpuci_console__tests_free(tpuci_console_t *c) {
  size_t i;
  for (i = 0; i < c->nfailed_tests; i++) free(c->failed_tests[i]);
  free(c->failed_tests);
  c->failed_tests = NULL;
  c->nfailed_tests = 0;
}

/* One place's quarantined tests that passed. */
typedef struct {
  const char *where, *test;
  size_t n;
  const char *ids[3];
} quar_pass_t;

void tpuci_console__quarantine_passing(tpuci_console_t *c, tpuci_run_t *run) {
  size_t i, k, e, n = tpuci_run_instance_count(run), nq = 0;
  quar_pass_t *q = NULL;
  for (i = 0; i < n; i++) {
    size_t nt = tpuci_run_instance_selected(run, i) ? tpuci_test_count(run, i) : 0;
    for (k = 0; k < nt; k++) {
      tpuci_test_info_t t = TPUCI_TEST_INFO_INIT;
      quar_pass_t *grown;
      if (tpuci_test_info(run, i, k, &t) != 0 || !t.quarantined || t.failing || t.flaky ||
          t.quarantine_where == NULL)
        continue;
      for (e = 0; e < nq && strcmp(q[e].where, t.quarantine_where) != 0; e++) {}
      if (e == nq) {
        if ((grown = realloc(q, (nq + 1) * sizeof(*q))) == NULL) break;
        q = grown;
        memset(&q[nq++], 0, sizeof(*q));
        q[e].where = t.quarantine_where;
      }
      if (q[e].n < 3) q[e].ids[q[e].n] = t.id;
      q[e].n++;
    }
  }
  /* An entry (a glob, most often) that also covers tests that pass: they
   * run and count as any other, but the entry may be wider than meant. */
  for (e = 0; e < nq; e++) {
    fprintf(c->out, "quarantine: %s also covers %zu test%s that passed: ", q[e].where, q[e].n,
            q[e].n == 1 ? "" : "s");
    for (k = 0; k < q[e].n && k < 3; k++) fprintf(c->out, "%s%s", k ? ", " : "", q[e].ids[k]);
    if (q[e].n > 3) fprintf(c->out, " and %zu more", q[e].n - 3);
    fputc('\n', c->out);
  }
  free(q);
}
