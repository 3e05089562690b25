/* New tests run again before their pass counts (pytest.new_tests, kind.h).
 *
 * A test is new when the history (flaky.h) has runs of its job (its
 * instance without the shard) and none of them has the test: added or
 * renamed since. Once an instance's attempts, failing-first process and
 * order checks are over, each of its new tests that passed runs again,
 * in processes of their own one after the other (each runs the new tests
 * that have not failed yet), until it has had pytest.new_tests.runs runs
 * in all. A new test that fails any of them fails its instance: its
 * final result becomes a failure saying so, whatever its attempts said,
 * so a flaky test is caught before it lands (Datadog's early flake
 * detection does the same). Not for a gang (several hosts) or a probe;
 * when more than TPUCI__NEW_SHARE_MAX of an instance's tests are new (a
 * renamed folder, a history of another branch), none is run again and a
 * line says so. */
#include <stdlib.h>
#include <string.h>

#include "kind/pytest/kind_run.h"
#include "kind/pytest/progress.h"

/* At most this share (in percent) of an instance's tests may be new. */
#define TPUCI__NEW_SHARE_MAX 30

struct tpuci__pnew_s {
  tpuci__strv_t all;     /* its new tests that passed their attempt */
  size_t *runs, *fails;  /* per test of `all`: runs in all, failed */
  char **first;          /* per test: its first failure's message */
  tpuci__strv_t running; /* what the queued or running process runs */
  int procs;             /* processes run */
  int queued;
  int done;
};

void tpuci__pk_new_begin(tpuci__kind_run_t *kr) {
  const char *key;
  json_t *v;
  tpuci__idmap_init(&kr->known_jobs);
  kr->news = tpuci__calloc(kr->n + 1, sizeof(*kr->news));
  if (kr->o.known == NULL) return;
  json_object_foreach((json_t *) kr->o.known, key, v) {
    const char *sep = strchr(key, '\x1f');
    char *job;
    (void) v;
    if (sep == NULL) continue;
    job = tpuci__strndup(key, (size_t) (sep - key));
    if (tpuci__idmap_get(&kr->known_jobs, job) != TPUCI__IDMAP_NONE) {
      free(job);
      continue;
    }
    /* The map borrows its keys: the list owns them. */
    tpuci__strv_take(&kr->known_names, job);
    tpuci__idmap_put(&kr->known_jobs, job, kr->known_names.len - 1);
  }
}

void tpuci__pk_new_free(tpuci__kind_run_t *kr) {
  size_t i, k;
  for (i = 0; kr->news && i < kr->n; i++) {
    tpuci__pnew_t *nw = kr->news[i];
    if (nw == NULL) continue;
    for (k = 0; k < nw->all.len; k++) free(nw->first[k]);
    free(nw->first);
    free(nw->runs);
    free(nw->fails);
    tpuci__strv_free(&nw->all);
    tpuci__strv_free(&nw->running);
    free(nw);
  }
  free(kr->news);
  tpuci__idmap_free(&kr->known_jobs);
  tpuci__strv_free(&kr->known_names);
}

int tpuci__pk_new_queued(const tpuci__kind_run_t *kr, size_t index) {
  return kr->news[index] != NULL && kr->news[index]->queued;
}

void tpuci__pk_new_only(const tpuci__kind_run_t *kr, size_t index, tpuci__strv_t *out) {
  tpuci__strv_copy(out, &kr->news[index]->running);
}

char *tpuci__pk_new_name(const tpuci__kind_run_t *kr, size_t index) {
  return tpuci__printf("new-%d", kr->news[index]->procs);
}

/* Instance `index`'s new tests that passed, into nw->all; 0 when there
 * are none to run again (said why, where that is news). */
static int tpuci__new_find(tpuci__kind_run_t *kr, size_t index, tpuci__pnew_t *nw) {
  const tpuci__instance_t *inst = &kr->plan->instances[index];
  const tpuci__history_t *h = tpuci__res_history(&kr->results[index]);
  char *job = tpuci__group_name_of(inst->name), *msg = NULL;
  size_t i, total = 0, fresh = 0;

  if (tpuci__idmap_get(&kr->known_jobs, job) == TPUCI__IDMAP_NONE) {
    msg = tpuci__printf("%s: new tests: the history has no run of %s yet, so no test of it is "
                        "new (each ran once)",
                        inst->name, job);
  } else {
    for (i = 0; i < h->len; i++) {
      const tpuci__test_t *r = tpuci__history_final(&h->tests[i]);
      char *key;
      if (r == NULL || r->outcome == TPUCI_TEST_UNAFFECTED) continue;
      total++;
      key = tpuci__printf("%s\x1f%s", job, h->tests[i].id);
      if (json_object_get(kr->o.known, key) == NULL) {
        fresh++;
        if (r->outcome == TPUCI_TEST_PASSED) tpuci__strv_push(&nw->all, h->tests[i].id);
      }
      free(key);
    }
    if (fresh * 100 > total * TPUCI__NEW_SHARE_MAX) {
      msg = tpuci__printf("%s: new tests: %zu of its %zu test%s %s new to the history (over "
                          "%d%%: a rename, or another branch's history): none runs again",
                          inst->name, fresh, total, total == 1 ? "" : "s",
                          fresh == 1 ? "is" : "are", TPUCI__NEW_SHARE_MAX);
      tpuci__strv_free(&nw->all);
    }
  }
  if (msg) kr->host->message(kr->host->sched, msg);
  free(msg);
  free(job);
  nw->runs = tpuci__calloc(nw->all.len + 1, sizeof(*nw->runs));
  nw->fails = tpuci__calloc(nw->all.len + 1, sizeof(*nw->fails));
  nw->first = tpuci__calloc(nw->all.len + 1, sizeof(*nw->first));
  for (i = 0; i < nw->all.len; i++) nw->runs[i] = 1;
  return nw->all.len > 0;
}

/* The new tests that have not failed yet, while runs are left. */
static int tpuci__new_queue(tpuci__kind_run_t *kr, size_t index) {
  tpuci__pnew_t *nw = kr->news[index];
  int want = tpuci__pytest_of(&kr->plan->instances[index])->new_tests_runs;
  size_t i, bytes = 0;
  tpuci__strv_free(&nw->running);
  if (nw->procs + 1 >= want || kr->host->stopping(kr->host->sched)) return 0;
  for (i = 0; i < nw->all.len; i++) {
    if (nw->fails[i] > 0) continue;
    /* An argument's length is capped: the rest are not run again. */
    if ((bytes += strlen(nw->all.items[i]) + 1) > TPUCI__ONLY_MAX_BYTES) break;
    tpuci__strv_push(&nw->running, nw->all.items[i]);
  }
  if (nw->running.len == 0) return 0;
  nw->procs++;
  nw->queued = 1;
  kr->host->side(kr->host->sched, index, TPUCI__PROC_SIDE_LAST);
  return 1;
}

/* Each new test that failed a run: its final result becomes a failure
 * that says so; the console hears of it. */
static void tpuci__new_apply(tpuci__kind_run_t *kr, size_t index) {
  tpuci__pnew_t *nw = kr->news[index];
  const tpuci__instance_t *inst = &kr->plan->instances[index];
  int runs = tpuci__pytest_of(inst)->new_tests_runs;
  tpuci__history_t *h = tpuci__res_history(&kr->results[index]);
  size_t i, failed = 0;
  tpuci__buf_t b;
  tpuci__buf_init(&b);
  for (i = 0; i < nw->all.len; i++) {
    size_t at = tpuci__idmap_get(&h->map, nw->all.items[i]);
    tpuci__test_t *r;
    if (nw->fails[i] == 0 || at == TPUCI__IDMAP_NONE || h->tests[at].len == 0) continue;
    r = &h->tests[at].runs[h->tests[at].len - 1].result;
    r->outcome = TPUCI_TEST_FAILED;
    free(r->type);
    r->type = tpuci__strdup("tpuci.new_test_failed");
    free(r->message);
    r->message = tpuci__printf("new test, failed %zu of its %zu runs (pytest.new_tests.runs = "
                               "%d): not counted as passing",
                               nw->fails[i], nw->runs[i], runs);
    free(r->text);
    r->text = tpuci__printf("%s\n\nits first failure:\n%s", r->message,
                            nw->first[i] ? nw->first[i] : "(no message)");
    tpuci__buf_addf(&b, "%s%s (%zu of %zu)", failed++ ? ", " : "", nw->all.items[i], nw->fails[i],
                    nw->runs[i]);
  }
  {
    char *msg =
        tpuci__printf("%s: new tests: %zu new test%s ran again, up to %d runs each: %s%s",
                      inst->name, nw->all.len, nw->all.len == 1 ? "" : "s", runs,
                      failed ? "failed in some runs: " : "every run passed", failed ? b.data : "");
    kr->host->message(kr->host->sched, msg);
    free(msg);
  }
  tpuci__buf_free(&b);
}

int tpuci__pk_new_next(tpuci__kind_run_t *kr, size_t index) {
  const tpuci__instance_t *inst = &kr->plan->instances[index];
  const tpuci__pytest_t *py = tpuci__pytest_of(inst);
  tpuci__pnew_t *nw = kr->news[index];
  if (nw == NULL) {
    if (py == NULL || py->new_tests_runs < 2 || kr->o.known == NULL || kr->o.no_first ||
        tpuci__res_history(&kr->results[index]) == NULL || tpuci__plan_hosts(kr->plan, inst) != 1 ||
        kr->host->stopping(kr->host->sched))
      return 0;
    nw = kr->news[index] = tpuci__calloc(1, sizeof(*nw));
    if (!tpuci__new_find(kr, index, nw)) {
      nw->done = 1;
      return 0;
    }
  }
  if (nw->done) return 0;
  if (nw->queued) return 1;
  if (tpuci__new_queue(kr, index)) return 1;
  nw->done = 1;
  tpuci__new_apply(kr, index);
  return 0;
}

void tpuci__pk_new_dropped(tpuci__kind_run_t *kr, size_t index) {
  tpuci__pnew_t *nw = kr->news[index];
  if (nw == NULL || !nw->queued) return;
  nw->queued = 0;
  tpuci__strv_free(&nw->running);
}

tpuci_outcome_t tpuci__pk_new_done(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p,
                                   const tpuci__proc_end_t *end, char **cause) {
  tpuci__pnew_t *nw = kr->news[p->index];
  tpuci__junit_t j;
  tpuci__progress_t pr;
  tpuci__idmap_t at;
  size_t i, k;

  memset(&j, 0, sizeof(j));
  memset(&pr, 0, sizeof(pr));
  tpuci__progress_read(p->results_dir, &j, &pr);
  tpuci__idmap_init(&at);
  for (i = 0; i < nw->all.len; i++) tpuci__idmap_put(&at, nw->all.items[i], i);
  for (i = 0; i < j.len; i++) {
    const tpuci__test_t *t = &j.items[i];
    if (t->id == NULL || (k = tpuci__idmap_get(&at, t->id)) == TPUCI__IDMAP_NONE) continue;
    if (t->outcome == TPUCI_TEST_SKIPPED) continue;
    nw->runs[k]++;
    if (!tpuci__test_outcome_failing(t->outcome)) continue;
    if (nw->fails[k]++ == 0)
      nw->first[k] = tpuci__strdup(t->text ? t->text : t->message ? t->message : "");
  }
  /* The test it was in when it was stopped (a timeout, a crash) failed
   * that run. */
  if (pr.running != NULL && (k = tpuci__idmap_get(&at, pr.running)) != TPUCI__IDMAP_NONE &&
      end->outcome != TPUCI_OUTCOME_CANCELLED) {
    nw->runs[k]++;
    if (nw->fails[k]++ == 0)
      nw->first[k] =
          tpuci__printf("it did not finish: the process %s%s%s", tpuci_outcome_name(end->outcome),
                        *cause ? ": " : "", *cause ? *cause : "");
  }
  tpuci__idmap_free(&at);
  tpuci__junit_free(&j);
  tpuci__progress_free(&pr);
  free(*cause);
  *cause = NULL;
  nw->queued = 0;
  tpuci__strv_free(&nw->running);
  return end->outcome;
}
