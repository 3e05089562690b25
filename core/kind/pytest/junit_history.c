/* The tests of one job instance across its attempts. */
#include <stdlib.h>
#include <string.h>

#include "kind/pytest/junit.h"

void tpuci__history_init(tpuci__history_t *h, const char *instance) {
  memset(h, 0, sizeof(*h));
  h->instance = tpuci__strdup(instance ? instance : "");
  tpuci__idmap_init(&h->map);
}

static void tpuci__attempt_rec_free(tpuci__attempt_rec_t *a) {
  free(a->cause);
  free(a->running);
  tpuci__strv_free(&a->selected);
  tpuci__strv_free(&a->collected);
}

void tpuci__history_free(tpuci__history_t *h) {
  size_t i, k;
  for (i = 0; i < h->len; i++) {
    tpuci__test_hist_t *t = &h->tests[i];
    for (k = 0; k < t->len; k++) tpuci__test_free(&t->runs[k].result);
    free(t->runs);
    free(t->id);
    free(t->path);
    free(t->fail_path);
    tpuci__strv_free(&t->candidates);
    free(t->polluter);
    free(t->order_note);
  }
  for (i = 0; i < h->n_attempts; i++) tpuci__attempt_rec_free(&h->attempts[i]);
  if (h->first) tpuci__attempt_rec_free(h->first);
  free(h->first);
  free(h->tests);
  free(h->attempts);
  free(h->instance);
  free(h->rootdir);
  free(h->tree);
  free(h->inputs);
  tpuci__idmap_free(&h->map);
  memset(h, 0, sizeof(*h));
}

static tpuci__test_hist_t *tpuci__history_test(tpuci__history_t *h, const char *id) {
  size_t k = tpuci__idmap_get(&h->map, id);
  tpuci__test_hist_t *t;

  if (k != TPUCI__IDMAP_NONE) return &h->tests[k];
  if (h->len == h->cap) {
    h->cap = h->cap ? h->cap * 2 : 16;
    h->tests = tpuci__realloc(h->tests, h->cap * sizeof(*h->tests));
  }
  t = &h->tests[h->len];
  memset(t, 0, sizeof(*t));
  t->id = tpuci__strdup(id);
  tpuci__idmap_put(&h->map, t->id, h->len);
  h->len++;
  return t;
}

/* The test's run in attempt `attempt` (0: the failing-first process),
 * or NULL. */
static tpuci__test_run_t *tpuci__run_at(const tpuci__test_hist_t *t, int attempt) {
  /* Runs are in attempt order, so only the last one can match the
   * attempt being looked at when it is the latest; search backwards. */
  size_t k = t->len;
  while (k > 0) {
    tpuci__test_run_t *r = &t->runs[--k];
    if (r->attempt == attempt) return r;
    if (r->attempt < attempt) break;
  }
  return NULL;
}

static const tpuci__test_run_t *tpuci__run_in(const tpuci__test_hist_t *t, int attempt) {
  return tpuci__run_at(t, attempt);
}

const tpuci__test_run_t *tpuci__history_run_in(const tpuci__test_hist_t *t, int attempt) {
  return tpuci__run_at(t, attempt);
}

const tpuci__attempt_rec_t *tpuci__history_attempt(const tpuci__history_t *h, int attempt) {
  if (attempt == 0) return h->first;
  if (attempt < 1 || (size_t) attempt > h->n_attempts) return NULL;
  return &h->attempts[attempt - 1];
}

const tpuci__strv_t *tpuci__attempt_scope(const tpuci__attempt_rec_t *rec) {
  if (rec->has_collection) return &rec->collected;
  if (rec->has_selection) return &rec->selected;
  return NULL;
}

/* Adds a run of attempt `number` to t, in attempt order (the failing-
 * first process, attempt 0, may end after attempt 1); the result is
 * moved in. */
static void tpuci__run_push(tpuci__test_hist_t *t, int number, tpuci__test_t *r) {
  size_t at = t->len;
  if (t->len == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 2;
    t->runs = tpuci__realloc(t->runs, t->cap * sizeof(*t->runs));
  }
  while (at > 0 && t->runs[at - 1].attempt > number) at--;
  memmove(&t->runs[at + 1], &t->runs[at], (t->len - at) * sizeof(*t->runs));
  t->runs[at].attempt = number;
  t->runs[at].result = *r;
  t->len++;
  memset(r, 0, sizeof(*r));
}

/* Puts the tests in the order of `collected` (an attempt's collection:
 * pytest's order), those it does not hold after them as they were: the
 * failing-first process may have reported its tests first. */
static void tpuci__history_sort(tpuci__history_t *h, const tpuci__strv_t *collected) {
  tpuci__test_hist_t *sorted = tpuci__malloc((h->cap ? h->cap : 1) * sizeof(*sorted));
  unsigned char *used = tpuci__calloc(h->len ? h->len : 1, 1);
  size_t i, n = 0;
  for (i = 0; i < collected->len; i++) {
    size_t k = tpuci__idmap_get(&h->map, collected->items[i]);
    if (k == TPUCI__IDMAP_NONE || used[k]) continue;
    used[k] = 1;
    sorted[n++] = h->tests[k];
  }
  for (i = 0; i < h->len; i++)
    if (!used[i]) sorted[n++] = h->tests[i];
  free(h->tests);
  h->tests = sorted;
  tpuci__idmap_free(&h->map);
  tpuci__idmap_init(&h->map);
  for (i = 0; i < h->len; i++) tpuci__idmap_put(&h->map, h->tests[i].id, i);
  free(used);
}

/* The test the attempt was cut short in: a run of its own saying so
 * (see tpuci__history_add()). */
static void tpuci__cut_run(tpuci__history_t *h, const tpuci__attempt_rec_t *rec, int number,
                           const char *stacks) {
  tpuci__test_hist_t *t = tpuci__history_test(h, rec->running);
  int error = rec->outcome == TPUCI_OUTCOME_INFRA || rec->outcome == TPUCI_OUTCOME_CANCELLED ||
              rec->outcome == TPUCI_OUTCOME_PREEMPTED || rec->outcome == TPUCI_OUTCOME_NO_CAPACITY;
  const char *what = tpuci_outcome_name(rec->outcome);
  tpuci__test_t *r, fresh;

  if (tpuci__run_at(t, number) != NULL) {
    r = &tpuci__run_at(t, number)->result;
    if (tpuci__test_outcome_failing(r->outcome)) return;
    /* It reported (its call passed) but never finished its teardown. */
    error = 1;
    free(r->type);
    free(r->message);
    free(r->text);
  } else {
    memset(&fresh, 0, sizeof(fresh));
    r = &fresh;
    r->id = tpuci__strdup(t->id);
    tpuci__junit_mangle(t->id, &r->classname, &r->name);
    r->line = -1;
    r->time_s = 0;
  }
  r->outcome = error ? TPUCI_TEST_ERROR : TPUCI_TEST_FAILED;
  r->type = tpuci__printf("tpuci.%s", rec->outcome == TPUCI_OUTCOME_FAILED ? "crash" : what);
  r->message = tpuci__strdup(rec->cause && *rec->cause ? rec->cause : what);
  {
    /* "(timeout: timed out after 2s)"; a cause that names its outcome
     * already ("cancelled: interrupted") is not said twice. */
    const char *cause = rec->cause && *rec->cause ? rec->cause : "no cause known";
    size_t n = strlen(what);
    int named = strncmp(cause, what, n) == 0 && (cause[n] == ':' || cause[n] == ' ');
    r->text =
        tpuci__printf("Attempt %d ended (%s%s%s) while this test was running; pytest "
                      "never reported its end.\n%s",
                      number, named ? "" : what, named ? "" : ": ", cause, stacks ? stacks : "");
  }
  if (r == &fresh) tpuci__run_push(t, number, &fresh);
}

void tpuci__history_add(tpuci__history_t *h, const tpuci__junit_attempt_t *a,
                        tpuci__junit_t *report) {
  tpuci__attempt_rec_t *rec;
  const tpuci__strv_t *scope;
  int number;
  size_t i;
  tpuci__idmap_t sel;

  if (a->first) {
    /* The failing-first process: apart from the attempts (one a run). */
    if (h->first) tpuci__attempt_rec_free(h->first);
    else h->first = tpuci__malloc(sizeof(*h->first));
    rec = h->first;
    number = 0;
  } else {
    if (h->n_attempts == h->cap_attempts) {
      h->cap_attempts = h->cap_attempts ? h->cap_attempts * 2 : 4;
      h->attempts = tpuci__realloc(h->attempts, h->cap_attempts * sizeof(*h->attempts));
    }
    rec = &h->attempts[h->n_attempts++];
    number = (int) h->n_attempts;
  }
  memset(rec, 0, sizeof(*rec));
  rec->outcome = a->outcome;
  rec->exit_code = a->exit_code;
  rec->cause = tpuci__strdup(a->cause);
  rec->time_s = a->time_s > 0 ? a->time_s : 0;
  rec->reported = report != NULL;
  rec->cut = a->cut;
  rec->running = a->running ? tpuci__strdup(a->running) : NULL;
  if (a->selected != NULL) {
    rec->has_selection = 1;
    for (i = 0; i < a->n_selected; i++)
      if (a->selected[i] != NULL) tpuci__strv_push(&rec->selected, a->selected[i]);
  }
  if (a->has_collection) {
    rec->has_collection = 1;
    for (i = 0; i < a->n_collected; i++)
      if (a->collected[i] != NULL) tpuci__strv_push(&rec->collected, a->collected[i]);
  }
  /* What it was to run are tests of the instance, in that order; the
   * first attempt that says what it collected puts them in pytest's. */
  scope = tpuci__attempt_scope(rec);
  for (i = 0; scope != NULL && i < scope->len; i++) tpuci__history_test(h, scope->items[i]);
  if (!a->first && rec->has_collection && !h->ordered) {
    h->ordered = 1;
    tpuci__history_sort(h, &rec->collected);
  }

  if (report != NULL) {
    for (i = 0; i < report->len; i++) {
      tpuci__test_t *r = &report->items[i];
      tpuci__test_hist_t *t;
      if (r->id == NULL) r->id = tpuci__junit_node_id(r->classname, r->name, r->file);
      t = tpuci__history_test(h, r->id);
      if (tpuci__run_at(t, number) != NULL) {
        /* The parser merges duplicates; a report built otherwise that
         * has one test twice keeps the later one. */
        tpuci__test_run_t *old = tpuci__run_at(t, number);
        rec->tests--;
        if (tpuci__test_outcome_failing(old->result.outcome)) rec->failing--;
        tpuci__test_free(&old->result);
        memmove(old, old + 1, (size_t) (&t->runs[t->len] - (old + 1)) * sizeof(*old));
        t->len--;
      }
      rec->tests++;
      if (tpuci__test_outcome_failing(r->outcome)) rec->failing++;
      tpuci__run_push(t, number, r);
    }
    tpuci__junit_free(report);
  }
  if (rec->running != NULL && rec->outcome != TPUCI_OUTCOME_PASSED)
    tpuci__cut_run(h, rec, number, a->stacks);

  /* Tests this attempt should have run but did not report. */
  tpuci__idmap_init(&sel);
  if (scope != NULL) {
    for (i = 0; i < scope->len; i++) {
      const char *id = scope->items[i];
      size_t k = tpuci__idmap_get(&h->map, id);
      if (tpuci__idmap_get(&sel, id) != TPUCI__IDMAP_NONE) continue;
      tpuci__idmap_put(&sel, id, i);
      if (k == TPUCI__IDMAP_NONE || tpuci__run_in(&h->tests[k], number) == NULL) rec->missing++;
    }
  } else {
    for (i = 0; i < h->len; i++)
      if (tpuci__run_in(&h->tests[i], number) == NULL) rec->missing++;
  }
  tpuci__idmap_free(&sel);
}

const tpuci__test_t *tpuci__history_final(const tpuci__test_hist_t *t) {
  return t->len ? &t->runs[t->len - 1].result : NULL;
}

int tpuci__test_cancelled(const tpuci__test_t *r) {
  return r->type != NULL && strcmp(r->type, "tpuci.cancelled") == 0;
}

int tpuci__history_flaky(const tpuci__test_hist_t *t) {
  size_t k;
  if (t->order_dep || t->len < 2 || tpuci__test_outcome_failing(t->runs[t->len - 1].result.outcome))
    return 0;
  for (k = 0; k + 1 < t->len; k++)
    if (tpuci__test_outcome_failing(t->runs[k].result.outcome) &&
        !tpuci__test_cancelled(&t->runs[k].result))
      return 1;
  return 0;
}

int tpuci__attempt_abnormal(const tpuci__attempt_rec_t *a) {
  /* Not this job's test (run --test): no case of its own. */
  if (a->outcome == TPUCI_OUTCOME_NOT_APPLICABLE) return 0;
  if (a->cut) return 1;
  switch (a->outcome) {
    case TPUCI_OUTCOME_PASSED: return !a->reported;
    case TPUCI_OUTCOME_FAILED: return !a->reported || a->failing == 0;
    default: return 1; /* timeout, oom, infra, cancelled, never ran */
  }
}

/* tpuci__history_failed_ids(), or with `unfinished` only the tests that
 * did not finish: the last attempt's cut test and those without a result. */
static size_t tpuci__history_again(const tpuci__history_t *h, tpuci__strv_t *out, int *unknown,
                                   int unfinished) {
  const tpuci__attempt_rec_t *last;
  const tpuci__strv_t *scope;
  int number;
  size_t i, n = 0;
  tpuci__idmap_t in_scope;

  if (unknown) *unknown = 0;
  if (h->n_attempts == 0) return 0;
  last = &h->attempts[h->n_attempts - 1];
  number = (int) h->n_attempts;
  scope = tpuci__attempt_scope(last);
  if (unknown) *unknown = scope == NULL && tpuci__attempt_abnormal(last);
  tpuci__idmap_init(&in_scope);
  for (i = 0; scope != NULL && i < scope->len; i++) tpuci__idmap_put(&in_scope, scope->items[i], i);

  /* The scope's tests are all in h->tests (tpuci__history_add()), so one
   * pass in first-known order is the collection order. */
  for (i = 0; i < h->len; i++) {
    const tpuci__test_hist_t *t = &h->tests[i];
    const tpuci__test_t *f = tpuci__history_final(t);
    int again =
        f == NULL || (unfinished ? last->running != NULL && strcmp(last->running, t->id) == 0 &&
                                       tpuci__run_in(t, number) != NULL
                                 : tpuci__test_outcome_failing(f->outcome));
    if (!again && scope != NULL && tpuci__run_in(t, number) == NULL &&
        tpuci__idmap_get(&in_scope, t->id) != TPUCI__IDMAP_NONE)
      again = 1; /* it was to run and did not */
    if (again) {
      tpuci__strv_push(out, t->id);
      n++;
    }
  }
  tpuci__idmap_free(&in_scope);
  return n;
}

size_t tpuci__history_failed_ids(const tpuci__history_t *h, tpuci__strv_t *out, int *unknown) {
  return tpuci__history_again(h, out, unknown, 0);
}

size_t tpuci__history_unfinished_ids(const tpuci__history_t *h, tpuci__strv_t *out, int *unknown) {
  return tpuci__history_again(h, out, unknown, 1);
}

int tpuci__history_recovered_after(const tpuci__history_t *h, size_t k) {
  size_t i;
  for (i = k + 1; i < h->n_attempts; i++)
    if (!tpuci__attempt_abnormal(&h->attempts[i])) return 1;
  return 0;
}

void tpuci__history_summarize(const tpuci__history_t *h, tpuci__history_summary_t *s) {
  size_t i;
  memset(s, 0, sizeof(*s));
  for (i = 0; i < h->len; i++) {
    const tpuci__test_t *f = tpuci__history_final(&h->tests[i]);
    s->tests++;
    if (f == NULL) {
      s->not_run++;
      continue;
    }
    switch (f->outcome) {
      case TPUCI_TEST_PASSED: s->passed++; break;
      case TPUCI_TEST_FAILED: s->failed++; break;
      case TPUCI_TEST_ERROR: s->errors++; break;
      case TPUCI_TEST_SKIPPED: s->skipped++; break;
      case TPUCI_TEST_XFAIL: s->xfail++; break;
      case TPUCI_TEST_UNAFFECTED: s->unaffected++; break;
      default: break;
    }
    if (tpuci__history_flaky(&h->tests[i])) s->flaky++;
  }
  for (i = 0; i < h->n_attempts; i++) {
    if (!tpuci__attempt_abnormal(&h->attempts[i])) continue;
    s->abnormal_attempts++;
    if (!tpuci__history_recovered_after(h, i)) s->abnormal_failing++;
  }
}

int tpuci__history_all_pass(const tpuci__history_t *h) {
  size_t i;
  for (i = 0; i < h->len; i++) {
    const tpuci__test_t *f = tpuci__history_final(&h->tests[i]);
    if (f == NULL || tpuci__test_outcome_failing(f->outcome)) return 0;
  }
  return 1;
}

void tpuci__history_unaffected(tpuci__history_t *h, int attempt, const char *id, const char *run) {
  tpuci__test_hist_t *t = tpuci__history_test(h, id);
  tpuci__test_t r;
  if (tpuci__run_at(t, attempt) != NULL) return;
  memset(&r, 0, sizeof(r));
  r.id = tpuci__strdup(id);
  r.classname = tpuci__strdup("");
  r.name = tpuci__strdup("");
  r.line = -1;
  r.outcome = TPUCI_TEST_UNAFFECTED;
  r.type = tpuci__strdup("tpuci.unaffected");
  r.message =
      run ? tpuci__printf("unaffected: nothing it needs changed since it passed in run %s", run)
          : tpuci__strdup("unaffected: nothing it needs changed since it passed");
  r.text = run ? tpuci__strdup(run) : NULL;
  tpuci__run_push(t, attempt, &r);
}
