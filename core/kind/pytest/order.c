/* Order dependence: its cases, the checks' search, how it reads
 * (order.h). */
#include "kind/pytest/order.h"

#include <stdlib.h>
#include <string.h>

/* Whether a failing run is the test's own failure, not the end of its
 * attempt (a timeout, a crash, a cancel cut it short: "tpuci.*"). */
static int tpuci__order_own_failure(const tpuci__test_t *r) {
  return tpuci__test_outcome_failing(r->outcome) &&
         (r->type == NULL || strncmp(r->type, "tpuci.", 6) != 0);
}

/* The tests that ran before `id` in attempt `attempt` (in the order its
 * collection says), into out. Returns 0 when the attempt did not say
 * what it collected, or `id` is not in it. */
static int tpuci__order_before(const tpuci__history_t *h, int attempt, const char *id,
                               tpuci__strv_t *out) {
  const tpuci__attempt_rec_t *rec = tpuci__history_attempt(h, attempt);
  size_t i;
  if (rec == NULL || !rec->has_collection) return 0;
  for (i = 0; i < rec->collected.len; i++) {
    const char *x = rec->collected.items[i];
    size_t k;
    if (strcmp(x, id) == 0) return 1;
    k = tpuci__idmap_get(&h->map, x);
    if (k != TPUCI__IDMAP_NONE && tpuci__history_run_in(&h->tests[k], attempt) != NULL)
      tpuci__strv_push(out, x);
  }
  tpuci__strv_free(out);
  return 0;
}

static int tpuci__strv_same(const tpuci__strv_t *a, const tpuci__strv_t *b) {
  size_t i;
  if (a->len != b->len) return 0;
  for (i = 0; i < a->len; i++)
    if (strcmp(a->items[i], b->items[i]) != 0) return 0;
  return 1;
}

size_t tpuci__order_find(const tpuci__history_t *h, tpuci__order_cases_t *cases) {
  size_t i, cap = 0;
  memset(cases, 0, sizeof(*cases));
  for (i = 0; i < h->len; i++) {
    const tpuci__test_hist_t *t = &h->tests[i];
    const tpuci__test_t *fin = tpuci__history_final(t);
    tpuci__order_case_t c;
    size_t k;
    int fa = -1;
    if (fin == NULL || fin->outcome != TPUCI_TEST_PASSED) continue;
    for (k = t->len - 1; k > 0; k--)
      if (tpuci__order_own_failure(&t->runs[k - 1].result)) {
        fa = t->runs[k - 1].attempt;
        break;
      }
    if (fa < 0) continue;
    memset(&c, 0, sizeof(c));
    c.fail_attempt = fa;
    c.pass_attempt = t->runs[t->len - 1].attempt;
    if (!tpuci__order_before(h, fa, t->id, &c.before_fail) ||
        !tpuci__order_before(h, c.pass_attempt, t->id, &c.before_pass) ||
        tpuci__strv_same(&c.before_fail, &c.before_pass)) {
      /* Nothing says its order mattered: a flaky test. */
      tpuci__strv_free(&c.before_fail);
      tpuci__strv_free(&c.before_pass);
      continue;
    }
    c.test = i;
    c.id = tpuci__strdup(t->id);
    c.brittle = c.before_fail.len == 0;
    if (cases->len == cap) {
      cap = cap ? 2 * cap : 4;
      cases->items = tpuci__realloc(cases->items, cap * sizeof(*cases->items));
    }
    cases->items[cases->len++] = c;
  }
  return cases->len;
}

void tpuci__order_cases_free(tpuci__order_cases_t *cases) {
  size_t i;
  for (i = 0; i < cases->len; i++) {
    free(cases->items[i].id);
    tpuci__strv_free(&cases->items[i].before_fail);
    tpuci__strv_free(&cases->items[i].before_pass);
  }
  free(cases->items);
  memset(cases, 0, sizeof(*cases));
}

void tpuci__order_mark(tpuci__history_t *h, const tpuci__order_cases_t *cases) {
  size_t i;
  for (i = 0; i < cases->len; i++) {
    const tpuci__order_case_t *c = &cases->items[i];
    tpuci__test_hist_t *t = &h->tests[c->test];
    t->order_dep = 1;
    t->order_confirmed = 0;
    t->order_brittle = c->brittle;
    t->fail_attempt = c->fail_attempt;
    t->pass_attempt = c->pass_attempt;
    tpuci__strv_free(&t->candidates);
    tpuci__strv_copy(&t->candidates, c->brittle ? &c->before_pass : &c->before_fail);
  }
}

/* ------------------------------------------------------------------ */
/* The checks' search                                                  */

void tpuci__order_search_init(tpuci__order_search_t *s, const tpuci__order_case_t *c) {
  memset(s, 0, sizeof(*s));
  s->brittle = c->brittle;
  tpuci__strv_copy(&s->left, c->brittle ? &c->before_pass : &c->before_fail);
}

void tpuci__order_search_free(tpuci__order_search_t *s) {
  tpuci__strv_free(&s->left);
  tpuci__strv_free(&s->half);
  free(s->culprit);
  memset(s, 0, sizeof(*s));
}

/* The search is over; with one candidate left, it is the culprit. */
static void tpuci__order_search_end(tpuci__order_search_t *s) {
  if (s->confirmed && s->left.len == 1 && s->culprit == NULL)
    s->culprit = tpuci__strdup(s->left.items[0]);
  s->stage = TPUCI__ORDER_DONE;
}

int tpuci__order_search_next(tpuci__order_search_t *s, const tpuci__order_case_t *c,
                             tpuci__strv_t *out) {
  size_t i, n = s->left.len, from, to;
  if (s->stage == TPUCI__ORDER_DONE) return 0;
  tpuci__strv_free(&s->half);
  if (s->stage == TPUCI__ORDER_CONFIRM) {
    /* After all of them again (a brittle test: alone). */
    if (!s->brittle) tpuci__strv_copy(&s->half, &s->left);
  } else if (s->stage == TPUCI__ORDER_APART) {
    /* Where they did not run: alone (a brittle test: after them all). */
    if (s->brittle) tpuci__strv_copy(&s->half, &s->left);
  } else {
    if (n <= 1) {
      tpuci__order_search_end(s);
      return 0;
    }
    from = s->second ? n / 2 : 0;
    to = s->second ? n : n / 2;
    for (i = from; i < to; i++) tpuci__strv_push(&s->half, s->left.items[i]);
  }
  for (i = 0; i < s->half.len; i++) tpuci__strv_push(out, s->half.items[i]);
  tpuci__strv_push(out, c->id);
  return 1;
}

void tpuci__order_search_result(tpuci__order_search_t *s, int failed) {
  int found;
  if (failed < 0 || s->stage == TPUCI__ORDER_DONE) {
    tpuci__order_search_end(s);
    return;
  }
  if (s->stage == TPUCI__ORDER_CONFIRM) {
    /* The failure must come back where it happened. */
    if (!failed) {
      s->flaky = 1;
      s->stage = TPUCI__ORDER_DONE;
      return;
    }
    s->came_back = 1;
    s->stage = TPUCI__ORDER_APART;
    return;
  }
  if (s->stage == TPUCI__ORDER_APART) {
    /* It must pass there every time: a failure where its candidates
     * did not run (a brittle test: after all of them, where its setter
     * ran) is chance, not order (iDFlakies tells order-dependent from
     * nondeterministic so). */
    if (failed) {
      s->flaky = 1;
      s->failed_apart = 1;
      s->stage = TPUCI__ORDER_DONE;
      return;
    }
    if (++s->apart < TPUCI__ORDER_APART_RUNS) return;
    s->confirmed = 1;
    s->stage = TPUCI__ORDER_BISECT;
    if (s->left.len <= 1) tpuci__order_search_end(s);
    return;
  }
  /* A polluter's half makes it fail; a brittle test's setter, pass. */
  found = s->brittle ? !failed : failed;
  if (found) {
    tpuci__strv_free(&s->left);
    tpuci__strv_copy(&s->left, &s->half);
    s->second = 0;
    if (s->left.len <= 1) tpuci__order_search_end(s);
  } else if (!s->second) {
    s->second = 1;
  } else {
    /* Neither half alone: it takes tests of both. */
    tpuci__order_search_end(s);
  }
}

void tpuci__order_search_apply(const tpuci__order_search_t *s, const tpuci__order_case_t *c,
                               tpuci__history_t *h) {
  tpuci__test_hist_t *t = &h->tests[c->test];
  if (s->flaky) {
    /* It passed again after the same tests: chance, not order. */
    t->order_dep = 0;
    tpuci__strv_free(&t->candidates);
    return;
  }
  t->order_confirmed = s->confirmed;
  t->order_apart = s->apart;
  free(t->polluter);
  t->polluter = s->culprit ? tpuci__strdup(s->culprit) : NULL;
}

/* ------------------------------------------------------------------ */
/* Text                                                                */

void tpuci__order_process_name(tpuci__buf_t *b, int attempt) {
  if (attempt == 0) tpuci__buf_adds(b, "the failing-first process");
  else tpuci__buf_addf(b, "attempt %d", attempt);
}

/* "A, B, C and 4 more". */
static void tpuci__order_list(tpuci__buf_t *b, const tpuci__strv_t *ids) {
  size_t i;
  for (i = 0; i < ids->len && i < 3; i++) tpuci__buf_addf(b, "%s%s", i ? ", " : "", ids->items[i]);
  if (ids->len > 3) tpuci__buf_addf(b, " and %zu more", ids->len - 3);
}

char *tpuci__order_text(const tpuci__history_t *h, const tpuci__test_hist_t *t) {
  tpuci__buf_t b;
  size_t n = t->candidates.len;
  (void) h;
  if (!t->order_dep) return NULL;
  tpuci__buf_init(&b);
  if (t->order_brittle) {
    tpuci__buf_adds(&b, "failed first in ");
    tpuci__order_process_name(&b, t->fail_attempt);
    tpuci__buf_addf(&b, ", passed after %zu test%s in ", n, n == 1 ? "" : "s");
    tpuci__order_process_name(&b, t->pass_attempt);
  } else {
    tpuci__buf_addf(&b, "failed after %zu test%s in ", n, n == 1 ? "" : "s");
    tpuci__order_process_name(&b, t->fail_attempt);
    tpuci__buf_adds(&b, ", passed in ");
    tpuci__order_process_name(&b, t->pass_attempt);
  }
  if (t->polluter)
    tpuci__buf_addf(&b, "; it %s after %s (found by %d check%s; it passed %s in %d of %d runs)",
                    t->order_brittle ? "passes" : "fails", t->polluter, t->order_checks,
                    t->order_checks == 1 ? "" : "s",
                    t->order_brittle ? "after all of them" : "alone", t->order_apart,
                    t->order_apart);
  else if (t->order_confirmed)
    tpuci__buf_addf(&b,
                    "; the failure came back, and it passed %s in %d of %d runs (%d check%s); "
                    "candidates: ",
                    t->order_brittle ? "after all of them" : "alone", t->order_apart,
                    t->order_apart, t->order_checks, t->order_checks == 1 ? "" : "s");
  else if (t->order_checks > 0)
    tpuci__buf_addf(&b,
                    "; unconfirmed: the checks stopped after %d (%d run%s apart); "
                    "candidates: ",
                    t->order_checks, t->order_apart, t->order_apart == 1 ? "" : "s");
  else tpuci__buf_adds(&b, "; not checked; candidates: ");
  if (t->polluter == NULL) tpuci__order_list(&b, &t->candidates);
  return tpuci__buf_steal(&b);
}

void tpuci__order_notes(tpuci__history_t *h) {
  size_t i;
  for (i = 0; i < h->len; i++) {
    free(h->tests[i].order_note);
    h->tests[i].order_note = tpuci__order_text(h, &h->tests[i]);
  }
}
