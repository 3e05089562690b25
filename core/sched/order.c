/* The processes of a pytest instance besides its attempts, and its end.
 *
 * Failing first: the tests that failed in the instance's last run run
 * first, in a process of their own (its failing-first process, recorded
 * as attempt 0), started before any attempt; the instance's attempts
 * run every test of it (those too) in pytest's own order, so that no
 * result depends on an order tpuci made. A test that failed in one
 * process and passed in another with other tests before it is
 * order-dependent (pytest/order.h): once the instance's attempts are
 * over, bounded order checks run it again after its candidates, to see
 * the failure come back and name the test that causes it. The instance
 * finishes when all of that is over (tpuci__instance_settle). */
#include <stdlib.h>
#include <string.h>

#include "pytest/pytest_run.h"
#include "sched/internal.h"

/* No order check starts once the run's checks took this many processes,
 * or this long together. */
#define TPUCI__ORDER_PROCS_RUN_MAX 32
#define TPUCI__ORDER_RUN_MS (10 * 60 * 1000)

void tpuci__side_free(tpuci__sched_t *s) {
  size_t i;
  for (i = 0; i < s->qcap; i++) {
    if (s->first && s->first[i]) {
      tpuci__strv_free(s->first[i]);
      free(s->first[i]);
    }
    if (s->ochecks && s->ochecks[i]) {
      tpuci__order_cases_free(&s->ochecks[i]->cases);
      tpuci__order_search_free(&s->ochecks[i]->search);
      tpuci__strv_free(&s->ochecks[i]->running);
      free(s->ochecks[i]);
    }
  }
  free(s->first);
  free(s->ochecks);
  free(s->first_pending);
  free(s->main_done);
  free(s->settled);
  free(s->side);
}

static void tpuci__side_push(tpuci__sched_t *s, size_t index, int kind) {
  if (s->nside == s->side_cap) {
    s->side_cap = s->side_cap ? 2 * s->side_cap : 8;
    s->side = tpuci__realloc(s->side, s->side_cap * sizeof(*s->side));
  }
  s->side[s->nside].index = index;
  s->side[s->nside].kind = kind;
  s->nside++;
}

int tpuci__side_start(tpuci__sched_t *s, int kind) {
  tpuci__side_t head;
  size_t k;
  if (s->slots + 1 > s->opts.jobs) return 0;
  for (k = 0; k < s->nside && s->side[k].kind != kind; k++) {}
  if (k == s->nside) return 0;
  head = s->side[k];
  memmove(&s->side[k], &s->side[k + 1], (s->nside - k - 1) * sizeof(*s->side));
  s->nside--;
  tpuci__attempt_start(s, head.index, head.kind);
  return 1;
}

size_t tpuci__side_count(const tpuci__sched_t *s, int kind) {
  size_t k, n = 0;
  for (k = 0; k < s->nside; k++) n += s->side[k].kind == kind;
  return n;
}

void tpuci__side_drain(tpuci__sched_t *s) {
  while (s->nside > 0) {
    tpuci__side_t head = s->side[--s->nside];
    if (head.kind == TPUCI__ATT_FIRST) s->first_pending[head.index] = 0;
    tpuci__instance_settle(s, head.index);
  }
}

void tpuci__side_only(const tpuci__sched_t *s, const tpuci__satt_t *t, tpuci__strv_t *out) {
  size_t i = t->a.index;
  if (t->kind == TPUCI__ATT_FIRST && s->first[i] != NULL) tpuci__strv_copy(out, s->first[i]);
  else if (t->kind == TPUCI__ATT_CHECK && s->ochecks[i] != NULL)
    tpuci__strv_copy(out, &s->ochecks[i]->running);
}

/* "A, B and 3 more". */
static void tpuci__ids_text(tpuci__buf_t *b, const tpuci__strv_t *ids) {
  size_t i;
  for (i = 0; i < ids->len && i < 3; i++) tpuci__buf_addf(b, "%s%s", i ? ", " : "", ids->items[i]);
  if (ids->len > 3) tpuci__buf_addf(b, " and %zu more", ids->len - 3);
}

/* ------------------------------------------------------------------ */
/* Failing first                                                       */

void tpuci__first_queue(tpuci__sched_t *s, size_t index, const tpuci__strv_t *among) {
  const tpuci__instance_t *inst = &s->plan->instances[index];
  const tpuci__strv_t *failed = s->opts.first ? s->opts.first[index] : NULL;
  tpuci__strv_t ids = {0};
  tpuci__idmap_t in;
  tpuci__buf_t b;
  size_t i, bytes = 0;

  if (failed == NULL || failed->len == 0 || s->opts.no_first || !inst->pytest->failed_first ||
      s->select[index] != NULL || tpuci__plan_hosts(s->plan, inst) != 1 ||
      s->first_pending[index] || s->first[index] != NULL)
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
  s->first[index] = tpuci__calloc(1, sizeof(*s->first[index]));
  *s->first[index] = ids;
  tpuci__strv_copy(&s->results[index].first_tests, &ids);
  s->first_pending[index] = 1;
  tpuci__side_push(s, index, TPUCI__ATT_FIRST);
  tpuci__buf_init(&b);
  tpuci__buf_addf(&b, "%s: failing first: %zu test%s that failed last time run%s first, in a "
                  "process of %s own (its attempts run every test in pytest's order): ",
                  inst->name, ids.len, ids.len == 1 ? "" : "s", ids.len == 1 ? "s" : "",
                  ids.len == 1 ? "its" : "their");
  tpuci__ids_text(&b, &ids);
  tpuci__emit_message(s, b.data);
  tpuci__buf_free(&b);
}

void tpuci__first_group(tpuci__sched_t *s, size_t gi) {
  const tpuci__group_t *g = &s->groups[gi];
  size_t i;
  if (g->state != TPUCI__GROUP_READY) return;
  for (i = 0; i < s->plan->ninstances; i++) {
    int k;
    if (s->group_of[i] != (int) gi || !s->plan->instances[i].selected ||
        (s->opts.done && s->opts.done[i]))
      continue;
    k = s->plan->instances[i].pytest->shard - 1;
    tpuci__first_queue(s, i, &g->plan.shards[k].ids);
  }
}

/* "failing first: 1 failed, 1 passed in 2.1s". */
static void tpuci__first_tell(tpuci__sched_t *s, size_t index, const tpuci__attempt_result_t *r) {
  const tpuci__history_t *h = s->results[index].history;
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
  msg = tpuci__printf("%s: failing first: %zu failed, %zu passed%s in %s (%s%s%s); log: %s",
                      s->plan->instances[index].name, failed, passed,
                      other ? ", others skipped" : "",
                      tpuci__duration_format(r->duration_ms, d, sizeof(d)),
                      tpuci_outcome_name(r->outcome), r->cause ? ": " : "",
                      r->cause ? r->cause : "",
                      r->log_path ? tpuci__path_shown(r->log_path) : "(no output)");
  tpuci__emit_message(s, msg);
  free(msg);
}

void tpuci__first_done(tpuci__sched_t *s, tpuci__satt_t *t, tpuci_outcome_t o,
                       const tpuci__exit_t *ex, uint64_t duration, char *cause) {
  size_t index = t->a.index;
  tpuci__instance_result_t *r = &s->results[index];
  tpuci__attempt_result_t *res = tpuci__calloc(1, sizeof(*res));
  char *py_cause = NULL;

  if (r->history == NULL) {
    r->history = tpuci__calloc(1, sizeof(*r->history));
    tpuci__history_init(r->history, t->a.inst->name);
  }
  o = tpuci__pytest_after_first(r->history, t->a.inst, t->results_dir, o, ex, cause, duration,
                                &py_cause);
  if (py_cause) {
    free(cause);
    cause = py_cause;
  }
  res->outcome = o;
  res->exit_code = ex->exit_code;
  res->term_signal = ex->term_signal;
  res->start_ms = t->start_ms;
  res->duration_ms = duration;
  res->cause = cause;
  res->log_path = t->log_made ? tpuci__strdup(t->log_path) : NULL;
  r->first = res;
  s->first_pending[index] = 0;
  tpuci__first_tell(s, index, res);
  if (s->main_done[index]) tpuci__instance_settle(s, index);
}

/* ------------------------------------------------------------------ */
/* Order checks                                                        */

/* Starts the next check of instance `index`, or says nothing is left:
 * 1 when one is queued. */
static int tpuci__check_next(tpuci__sched_t *s, size_t index) {
  tpuci__ochecks_t *oc = s->ochecks[index];
  tpuci__history_t *h = s->results[index].history;
  while (oc->at < oc->cases.len) {
    const tpuci__order_case_t *c = &oc->cases.items[oc->at];
    size_t bytes = 0, i;
    if (!oc->searching) {
      if (oc->at >= TPUCI__ORDER_CASES_MAX) break;
      tpuci__order_search_init(&oc->search, c);
      oc->searching = 1;
    }
    tpuci__strv_free(&oc->running);
    if (s->stop == TPUCI__STOP_NONE && oc->procs < TPUCI__ORDER_PROCS_MAX &&
        s->order_procs < TPUCI__ORDER_PROCS_RUN_MAX && s->order_ms < TPUCI__ORDER_RUN_MS &&
        tpuci__order_search_next(&oc->search, c, &oc->running)) {
      for (i = 0; i < oc->running.len; i++) bytes += strlen(oc->running.items[i]) + 1;
      if (bytes <= TPUCI__ONLY_MAX_BYTES) {
        oc->procs++;
        s->order_procs++;
        tpuci__side_push(s, index, TPUCI__ATT_CHECK);
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

/* What the check said of its test: 1 failed, 0 passed, -1 nothing. */
static int tpuci__check_said(const tpuci__satt_t *t, const char *id) {
  return tpuci__pytest_test_result(t->results_dir, id);
}

void tpuci__check_done(tpuci__sched_t *s, tpuci__satt_t *t, tpuci_outcome_t o,
                       uint64_t duration, char *cause) {
  size_t index = t->a.index;
  tpuci__ochecks_t *oc = s->ochecks[index];
  tpuci__instance_result_t *r = &s->results[index];
  const tpuci__order_case_t *c = &oc->cases.items[oc->at];
  tpuci__order_check_t *chk;
  int failed = tpuci__check_said(t, c->id);
  char *msg;

  r->checks = tpuci__realloc(r->checks, (r->nchecks + 1) * sizeof(*r->checks));
  chk = &r->checks[r->nchecks++];
  memset(chk, 0, sizeof(*chk));
  chk->test = tpuci__strdup(c->id);
  chk->before = oc->running.len > 0 ? oc->running.len - 1 : 0;
  chk->failed = failed;
  chk->start_ms = t->start_ms;
  chk->duration_ms = duration;
  s->order_ms += duration;
  chk->cause = cause;
  (void) o;
  chk->log_path = t->log_made ? tpuci__strdup(t->log_path) : NULL;
  s->results[index].history->tests[c->test].order_checks++;
  msg = tpuci__printf("%s: order check: %s %s after %zu test%s%s", t->a.inst->name, c->id,
                      failed > 0 ? "failed" : failed == 0 ? "passed" : "did not report",
                      chk->before, chk->before == 1 ? "" : "s",
                      chk->before == 0 ? " (alone)" : "");
  tpuci__emit_message(s, msg);
  free(msg);
  tpuci__order_search_result(&oc->search, failed);
  tpuci__strv_free(&oc->running);
  tpuci__instance_settle(s, index);
}

/* The instance's order cases, found once its attempts (and its failing-
 * first process) are over: marked order-dependent, and the checks of
 * the first ones queued. 1 when a check is queued. */
static int tpuci__order_begin(tpuci__sched_t *s, size_t index) {
  tpuci__history_t *h = s->results[index].history;
  tpuci__ochecks_t *oc;
  if (h == NULL || s->plan->instances[index].pytest == NULL ||
      tpuci__plan_hosts(s->plan, &s->plan->instances[index]) != 1)
    return 0;
  oc = tpuci__calloc(1, sizeof(*oc));
  s->ochecks[index] = oc;
  if (tpuci__order_find(h, &oc->cases) == 0) return 0;
  tpuci__order_mark(h, &oc->cases);
  if (s->opts.no_first) return 0;
  return tpuci__check_next(s, index);
}

/* The instance's attempts are over and its failing-first process still
 * runs (it hangs in a test, or its slot came late): it has nothing left
 * to say first, so it never outlasts them; stopped as a cancel stops an
 * attempt (its runs so far are kept; the test it was in is cut short). */
static void tpuci__first_stop(tpuci__sched_t *s, size_t index) {
  tpuci__satt_t *t;
  if (s->stop != TPUCI__STOP_NONE) return;  /* the run's stop stops it */
  for (t = s->running_list; t != NULL; t = t->next)
    if (t->a.index == index && t->kind == TPUCI__ATT_FIRST && !t->finished && !t->superseded) {
      t->superseded = 1;
      if (!t->timed_out) t->cancelled = 1;
      tpuci__attempt_stop(t, 0);
    }
}

void tpuci__instance_settle(tpuci__sched_t *s, size_t index) {
  s->main_done[index] = 1;
  if (s->settled[index]) return;
  if (s->first_pending[index]) {
    tpuci__first_stop(s, index);
    return;
  }
  if (s->ochecks[index] == NULL) {
    if (tpuci__order_begin(s, index)) return;
  } else if (tpuci__check_next(s, index)) {
    return;
  }
  s->settled[index] = 1;
  if (s->results[index].history) tpuci__order_notes(s->results[index].history);
  tpuci__instance_finish(s, index);
}
