/* Order dependence: a test of a run that failed in one process and
 * passed in another (the failing-first process, its shard's attempt, a
 * retry), whose tests before it differed. Part of core/kind/pytest/
 * (pytest_run.h says what the folder may use); the scheduler runs the
 * checks (core/kind/pytest/order_run.c).
 *
 * Each such test is a case. Its candidates are the tests that ran before
 * it in the process where it failed (a polluter among them left
 * something behind); when it failed first in its process, those before
 * it where it passed (one of them sets up what it needs: it is
 * "brittle"). Without checks a case is reported order-dependent as it
 * is. The checks (iDFlakies' idea, bounded) run it again in processes of
 * their own: first after all its candidates (or alone, when brittle) to
 * confirm the failure comes back (when it does not, the test is flaky,
 * not order-dependent); then TPUCI__ORDER_APART_RUNS times where its
 * candidates did not run (alone; a brittle test after them), where it
 * must pass every time (a failure there is chance, not order: flaky);
 * then after one half of them, then the other, to name the one test
 * that makes it fail (or pass, when brittle). */
#ifndef TPUCI_PYTEST_ORDER_H
#define TPUCI_PYTEST_ORDER_H

#include <stddef.h>

#include "kind/pytest/junit.h"
#include "base/util.h"

/* Bounds of the checks: processes per instance, cases per instance (the
 * run is bounded too: pytest/order_run.c). */
#define TPUCI__ORDER_PROCS_MAX 10
#define TPUCI__ORDER_CASES_MAX 3
/* The runs apart from its candidates a test must pass before it is
 * confirmed order-dependent. */
#define TPUCI__ORDER_APART_RUNS 2

typedef struct {
  size_t test; /* index into the history's tests */
  char *id;
  int fail_attempt;          /* where it failed (0: the failing-first process) */
  int pass_attempt;          /* where it passed */
  tpuci__strv_t before_fail; /* the tests that ran before it there, in order */
  tpuci__strv_t before_pass;
  int brittle; /* nothing ran before it where it failed */
} tpuci__order_case_t;

typedef struct {
  tpuci__order_case_t *items;
  size_t len;
} tpuci__order_cases_t;

/* The cases of a history: each test whose final result passed after a
 * run that failed (not one an attempt's end cut short), where the
 * processes of the two runs said what they collected and ran different
 * tests before it. `cases` is filled (freed with tpuci__order_cases_free).
 * Returns how many. */
size_t tpuci__order_find(const tpuci__history_t *h, tpuci__order_cases_t *cases);
void tpuci__order_cases_free(tpuci__order_cases_t *cases);

/* Marks each case's test order-dependent, unconfirmed, with its
 * candidates (what the checks did not get to says so). */
void tpuci__order_mark(tpuci__history_t *h, const tpuci__order_cases_t *cases);

/* The search the checks make for one case. */
enum { TPUCI__ORDER_CONFIRM = 0, TPUCI__ORDER_APART, TPUCI__ORDER_BISECT, TPUCI__ORDER_DONE };
typedef struct {
  int stage;
  int brittle;
  tpuci__strv_t left; /* candidates the culprit is among */
  tpuci__strv_t half; /* what the running check put before the test */
  int second;         /* the half being tried is the second one */
  int came_back;      /* the failure came back where it happened */
  int apart;          /* runs apart from the candidates it passed */
  int confirmed;      /* came back, and passed every run apart */
  int flaky;          /* it did not come back, or failed apart: flaky */
  int failed_apart;   /* that was a failure apart from its candidates */
  char *culprit;      /* the one test found, or NULL */
} tpuci__order_search_t;

void tpuci__order_search_init(tpuci__order_search_t *s, const tpuci__order_case_t *c);
void tpuci__order_search_free(tpuci__order_search_t *s);
/* The next check's tests, in order (the case's test last), into `out`:
 * 1, or 0 when the search is over. */
int tpuci__order_search_next(tpuci__order_search_t *s, const tpuci__order_case_t *c,
                             tpuci__strv_t *out);
/* What the check said: `failed` 1 when the test failed there, 0 when it
 * passed, -1 when it did not say (the check ended without its result:
 * the search stops where it is). */
void tpuci__order_search_result(tpuci__order_search_t *s, int failed);
/* Puts what the search found into the case's test. */
void tpuci__order_search_apply(const tpuci__order_search_t *s, const tpuci__order_case_t *c,
                               tpuci__history_t *h);

/* How a test's order dependence reads: "failed after 3 tests in the
 * failing-first process, passed in attempt 1; it fails after
 * tests/t.py::test_polluter (found by 3 checks)". A new string, or NULL
 * when it is not order-dependent. */
char *tpuci__order_text(const tpuci__history_t *h, const tpuci__test_hist_t *t);
/* Sets every order-dependent test's order_note (tpuci__order_text()). */
void tpuci__order_notes(tpuci__history_t *h);
/* "the failing-first process" or "attempt N", into b. */
void tpuci__order_process_name(tpuci__buf_t *b, int attempt);

#endif /* TPUCI_PYTEST_ORDER_H */
