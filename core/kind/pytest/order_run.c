/* The processes of a pytest instance besides its attempts, and its end
 * (kind.h).
 *
 * Failing first: the tests that failed in the instance's last run run
 * first, in a process of their own (its failing-first process, recorded
 * as attempt 0), started before any attempt; the instance's attempts
 * run every test of it (those too) in pytest's own order, so that no
 * result depends on an order tpuci made. A test that failed in one
 * process and passed in another with other tests before it is
 * order-dependent (order.h): once the instance's attempts are over,
 * bounded order checks run it again after its candidates, to see the
 * failure come back and name the test that causes it. The instance
 * finishes when all of that is over (tpuci__pk_settle). */
#include <stdlib.h>
#include <string.h>

#include "kind/pytest/kind_run.h"

/* No order check starts once the run's checks took this many processes,
 * or this long together. */
#define TPUCI__ORDER_PROCS_RUN_MAX 32
#define TPUCI__ORDER_RUN_MS (10 * 60 * 1000)

void tpuci__pk_order_free(tpuci__kind_run_t *kr) {
  size_t i;
  for (i = 0; i < kr->n; i++) {
    if (kr->first[i]) {
      tpuci__strv_free(kr->first[i]);
      free(kr->first[i]);
    }
    if (kr->ochecks[i]) {
      tpuci__order_cases_free(&kr->ochecks[i]->cases);
      tpuci__order_search_free(&kr->ochecks[i]->search);
      tpuci__strv_free(&kr->ochecks[i]->running);
      free(kr->ochecks[i]);
    }
  }
  free(kr->first);
  free(kr->first_pending);
  free(kr->ochecks);
}

void tpuci__pk_side_only(const tpuci__kind_run_t *kr, const tpuci__kind_proc_t *p,
                         tpuci__strv_t *out) {
  size_t i = p->index;
  if (p->role == TPUCI__PROC_SIDE_FIRST && kr->first[i] != NULL)
    tpuci__strv_copy(out, kr->first[i]);
  else if (p->role == TPUCI__PROC_SIDE_LAST && tpuci__pk_new_queued(kr, i))
    tpuci__pk_new_only(kr, i, out);
  else if (p->role == TPUCI__PROC_SIDE_LAST && kr->ochecks[i] != NULL)
    tpuci__strv_copy(out, &kr->ochecks[i]->running);
}

char *tpuci__pk_side_name(const tpuci__kind_run_t *kr, const tpuci__kind_proc_t *p) {
  if (p->role == TPUCI__PROC_SIDE_FIRST) return tpuci__strdup("first");
  if (tpuci__pk_new_queued(kr, p->index)) return tpuci__pk_new_name(kr, p->index);
  return tpuci__printf("check-%d", kr->ochecks[p->index] ? kr->ochecks[p->index]->procs : 0);
}

/* "A, B and 3 more". */
static void tpuci__ids_text(tpuci__buf_t *b, const tpuci__strv_t *ids) {
  size_t i;
  for (i = 0; i < ids->len && i < 3; i++) tpuci__buf_addf(b, "%s%s", i ? ", " : "", ids->items[i]);
  if (ids->len > 3) tpuci__buf_addf(b, " and %zu more", ids->len - 3);
}

/* ------------------------------------------------------------------ */
/* Failing first                                                       */

/* Queues instance `index`'s failing-first process when it has tests
 * that failed last time among `among` (NULL: any). */
static void tpuci__first_queue(tpuci__kind_run_t *kr, size_t index, const tpuci__strv_t *among) {
  const tpuci__instance_t *inst = &kr->plan->instances[index];
  const tpuci__strv_t *failed = kr->o.first ? kr->o.first[index] : NULL;
  tpuci__strv_t ids = {0};
  tpuci__idmap_t in;
  tpuci__buf_t b;
  size_t i, bytes = 0;

  if (failed == NULL || failed->len == 0 || kr->o.no_first ||
      !tpuci__pytest_of(inst)->failed_first || kr->select[index] != NULL ||
      tpuci__plan_hosts(kr->plan, inst) != 1 || kr->first_pending[index] ||
      kr->first[index] != NULL)
    return;
  tpuci__idmap_init(&in);
  for (i = 0; among != NULL && i < among->len; i++) tpuci__idmap_put(&in, among->items[i], i);
  for (i = 0; i < failed->len; i++) {
    if (among != NULL && tpuci__idmap_get(&in, failed->items[i]) == TPUCI__IDMAP_NONE) continue;
    /* An argument's length is capped: the rest stay in their places. */
    if ((bytes += strlen(failed->items[i]) + 1) > TPUCI__ONLY_MAX_BYTES) break;
    tpuci__strv_push(&ids, failed->items[i]);
  }
  tpuci__idmap_free(&in);
  /* Every test of it failed: the attempt runs them all anyway. */
  if (ids.len == 0 || (among != NULL && ids.len == among->len)) {
    tpuci__strv_free(&ids);
    return;
  }
  kr->first[index] = tpuci__calloc(1, sizeof(*kr->first[index]));
  *kr->first[index] = ids;
  tpuci__strv_copy(&tpuci__res_pytest(&kr->results[index])->first_tests, &ids);
  kr->first_pending[index] = 1;
  kr->host->side(kr->host->sched, index, TPUCI__PROC_SIDE_FIRST);
  tpuci__buf_init(&b);
  tpuci__buf_addf(&b,
                  "%s: failing first: %zu test%s that failed last time run%s first, in a "
                  "process of %s own (its attempts run every test in pytest's order): ",
                  inst->name, ids.len, ids.len == 1 ? "" : "s", ids.len == 1 ? "s" : "",
                  ids.len == 1 ? "its" : "their");
  tpuci__ids_text(&b, &ids);
  kr->host->message(kr->host->sched, b.data);
  tpuci__buf_free(&b);
}

void tpuci__pk_ready(tpuci__kind_run_t *kr, size_t index) {
  const tpuci__instance_t *inst = &kr->plan->instances[index];
  int g = kr->group_of[index];
  if (tpuci__pytest_of(inst) == NULL) return;
  tpuci__pk_deps_tell(kr, index);
  /* A shard's: those of its part. */
  if (g >= 0) tpuci__first_queue(kr, index, &kr->groups[g].plan.shards[inst->shard - 1].ids);
  else tpuci__first_queue(kr, index, NULL);
}

/* "failing first: 1 failed, 1 passed in 2.1s". */
static void tpuci__first_tell(tpuci__kind_run_t *kr, size_t index,
                              const tpuci__attempt_result_t *r) {
  const tpuci__history_t *h = tpuci__res_history(&kr->results[index]);
  size_t i, failed = 0, passed = 0, other = 0;
  char d[32];
  char *msg;
  for (i = 0; h != NULL && i < h->len; i++) {
    const tpuci__test_run_t *run = tpuci__history_run_in(&h->tests[i], 0);
    if (run == NULL) continue;
    if (tpuci__test_outcome_failing(run->result.outcome)) failed++;
    else if (run->result.outcome == TPUCI_TEST_PASSED) passed++;
    else other++;
  }
  msg = tpuci__printf(
      "%s: failing first: %zu failed, %zu passed%s in %s (%s%s%s); log: %s",
      kr->plan->instances[index].name, failed, passed, other ? ", others skipped" : "",
      tpuci__duration_format(r->duration_ms, d, sizeof(d)), tpuci_outcome_name(r->outcome),
      r->cause ? ": " : "", r->cause ? r->cause : "",
      r->log_path ? tpuci__path_shown(r->log_path) : "(no output)");
  kr->host->message(kr->host->sched, msg);
  free(msg);
}

static tpuci_outcome_t tpuci__first_done(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p,
                                         const tpuci__proc_end_t *end, char **cause) {
  size_t index = p->index;
  tpuci__instance_result_t *r = &kr->results[index];
  tpuci__attempt_result_t *res = tpuci__calloc(1, sizeof(*res));
  tpuci__pytest_ended_t ended = {.results_dir = p->results_dir,
                                 .outcome = end->outcome,
                                 .exit = end->exit,
                                 .cause = *cause,
                                 .duration_ms = end->duration_ms};
  tpuci_outcome_t o;
  char *py_cause = NULL;

  o = tpuci__pytest_after_first(tpuci__pk_history(kr, index), &kr->plan->instances[index], &ended,
                                &py_cause);
  if (py_cause) {
    free(*cause);
    *cause = py_cause;
  }
  res->outcome = o;
  res->exit_code = end->exit->exit_code;
  res->term_signal = end->exit->term_signal;
  res->start_ms = p->start_ms;
  res->duration_ms = end->duration_ms;
  res->cause = *cause;
  *cause = NULL;
  res->log_path = end->log_path ? tpuci__strdup(end->log_path) : NULL;
  tpuci__res_pytest(r)->first = res;
  kr->first_pending[index] = 0;
  tpuci__first_tell(kr, index, res);
  return o;
}

/* ------------------------------------------------------------------ */
/* Order checks                                                        */

/* Queues the next check of instance `index`, or says nothing is left:
 * 1 when one is queued. */
static int tpuci__check_next(tpuci__kind_run_t *kr, size_t index) {
  tpuci__ochecks_t *oc = kr->ochecks[index];
  tpuci__history_t *h = tpuci__res_history(&kr->results[index]);
  while (oc->at < oc->cases.len) {
    const tpuci__order_case_t *c = &oc->cases.items[oc->at];
    size_t bytes = 0, i;
    if (!oc->searching) {
      if (oc->at >= TPUCI__ORDER_CASES_MAX) break;
      tpuci__order_search_init(&oc->search, c);
      oc->searching = 1;
    }
    tpuci__strv_free(&oc->running);
    if (!kr->host->stopping(kr->host->sched) && oc->procs < TPUCI__ORDER_PROCS_MAX &&
        kr->order_procs < TPUCI__ORDER_PROCS_RUN_MAX && kr->order_ms < TPUCI__ORDER_RUN_MS &&
        tpuci__order_search_next(&oc->search, c, &oc->running)) {
      for (i = 0; i < oc->running.len; i++) bytes += strlen(oc->running.items[i]) + 1;
      if (bytes <= TPUCI__ONLY_MAX_BYTES) {
        oc->procs++;
        kr->order_procs++;
        oc->queued = 1;
        kr->host->side(kr->host->sched, index, TPUCI__PROC_SIDE_LAST);
        return 1;
      }
    }
    tpuci__strv_free(&oc->running);
    /* This case is as far as it gets. */
    tpuci__order_search_apply(&oc->search, c, h);
    tpuci__order_search_free(&oc->search);
    oc->searching = 0;
    oc->at++;
  }
  return 0;
}

static tpuci_outcome_t tpuci__check_done(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p,
                                         const tpuci__proc_end_t *end, char **cause) {
  size_t index = p->index;
  tpuci__ochecks_t *oc = kr->ochecks[index];
  tpuci__pytest_result_t *r = tpuci__res_pytest(&kr->results[index]);
  const tpuci__order_case_t *c = &oc->cases.items[oc->at];
  tpuci__order_check_t *chk;
  int failed = tpuci__pytest_test_result(p->results_dir, c->id);
  char *msg;

  r->checks = tpuci__realloc(r->checks, (r->nchecks + 1) * sizeof(*r->checks));
  chk = &r->checks[r->nchecks++];
  memset(chk, 0, sizeof(*chk));
  chk->test = tpuci__strdup(c->id);
  chk->before = oc->running.len > 0 ? oc->running.len - 1 : 0;
  chk->failed = failed;
  chk->start_ms = p->start_ms;
  chk->duration_ms = end->duration_ms;
  kr->order_ms += end->duration_ms;
  chk->cause = *cause;
  *cause = NULL;
  chk->log_path = end->log_path ? tpuci__strdup(end->log_path) : NULL;
  r->history->tests[c->test].order_checks++;
  msg = tpuci__printf("%s: order check: %s %s after %zu test%s%s", kr->plan->instances[index].name,
                      c->id,
                      failed > 0    ? "failed"
                      : failed == 0 ? "passed"
                                    : "did not report",
                      chk->before, chk->before == 1 ? "" : "s", chk->before == 0 ? " (alone)" : "");
  kr->host->message(kr->host->sched, msg);
  free(msg);
  tpuci__order_search_result(&oc->search, failed);
  tpuci__strv_free(&oc->running);
  oc->queued = 0;
  return end->outcome;
}

tpuci_outcome_t tpuci__pk_side_ended(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p,
                                     const tpuci__proc_end_t *end, char **cause) {
  if (p->role == TPUCI__PROC_SIDE_FIRST) return tpuci__first_done(kr, p, end, cause);
  if (tpuci__pk_new_queued(kr, p->index)) return tpuci__pk_new_done(kr, p, end, cause);
  return tpuci__check_done(kr, p, end, cause);
}

/* The instance's order cases, found once its attempts (and its failing-
 * first process) are over: marked order-dependent, and the check of the
 * first one queued. 1 when a check is queued. */
static int tpuci__order_begin(tpuci__kind_run_t *kr, size_t index) {
  tpuci__history_t *h = tpuci__res_history(&kr->results[index]);
  tpuci__ochecks_t *oc;
  if (h == NULL || tpuci__pytest_of(&kr->plan->instances[index]) == NULL ||
      tpuci__plan_hosts(kr->plan, &kr->plan->instances[index]) != 1)
    return 0;
  oc = tpuci__calloc(1, sizeof(*oc));
  kr->ochecks[index] = oc;
  if (tpuci__order_find(h, &oc->cases) == 0) return 0;
  tpuci__order_mark(h, &oc->cases);
  if (kr->o.no_first) return 0;
  return tpuci__check_next(kr, index);
}

int tpuci__pk_settle(tpuci__kind_run_t *kr, size_t index, int dropped) {
  tpuci__ochecks_t *oc = kr->ochecks[index];
  if (dropped) {
    /* What was queued will not run: nothing to wait for. */
    kr->first_pending[index] = 0;
    if (oc != NULL && oc->queued) {
      oc->queued = 0;
      tpuci__strv_free(&oc->running);
    }
    tpuci__pk_new_dropped(kr, index);
    return 0;
  }
  if (kr->first_pending[index]) {
    /* It has nothing left to say first: it never outlasts the attempts
     * (its runs so far are kept; the test it was in is cut short). */
    kr->host->side_stop(kr->host->sched, index, TPUCI__PROC_SIDE_FIRST);
    return 1;
  }
  if (oc != NULL && oc->queued) return 1;
  if (oc == NULL) {
    if (tpuci__order_begin(kr, index)) return 1;
  } else if (tpuci__check_next(kr, index)) {
    return 1;
  }
  /* Then its new tests, again. */
  if (tpuci__pk_new_next(kr, index)) return 1;
  if (tpuci__res_history(&kr->results[index]))
    tpuci__order_notes(tpuci__res_history(&kr->results[index]));
  return 0;
}
