/* Shard groups (kind.h): the shards of one pytest instance share one
 * collection of its tests, the group's step (a collect process) or the
 * last run's record of it, split by recorded durations; then each shard
 * runs its part. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind/pytest/kind_run.h"

static tpuci__pgroup_t *tpuci__pk_group_at(tpuci__kind_run_t *kr, int g) {
  if ((size_t) g >= kr->ngroups) {
    kr->groups = tpuci__realloc(kr->groups, ((size_t) g + 1) * sizeof(*kr->groups));
    memset(&kr->groups[kr->ngroups], 0, ((size_t) g + 1 - kr->ngroups) * sizeof(*kr->groups));
    kr->ngroups = (size_t) g + 1;
  }
  return &kr->groups[g];
}

char *tpuci__pk_group(tpuci__kind_run_t *kr, size_t i) {
  const tpuci__instance_t *inst = &kr->plan->instances[i];
  if (tpuci__pytest_of(inst) == NULL || inst->shards <= 1) return NULL;
  return tpuci__pytest_group_name(inst);
}

/* Splits a group's tests (what the collection pass listed, or the last
 * run's collection) and makes each shard's assignment. 0, or an error
 * from the split. */
static int tpuci__group_plan(tpuci__kind_run_t *kr, tpuci__pgroup_t *g,
                             const tpuci__instance_t *inst, const tpuci__strv_t *all,
                             double overhead_s, tpuci__err_t *e) {
  size_t n = (size_t) inst->shards, k, index = (size_t) (inst - kr->plan->instances);
  tpuci__shard_by_t by = tpuci__pytest_of(inst)->shard_by;
  tpuci__strv_t ids = {0};
  int r;
  /* The split is of what runs: not the tests the run leaves out as
   * unaffected (deps.h). */
  for (k = 0; k < all->len; k++)
    if (!tpuci__pk_unaffected(kr, index, all->items[k])) tpuci__strv_push(&ids, all->items[k]);
  /* Tests that failed last time fail a shard, which then retries them. */
  {
    /* A run that records splits by traced durations, a plain one never. */
    tpuci__shard_ask_t ask = {.ids = (const char *const *) ids.items,
                              .n = ids.len,
                              .timings = kr->o.timings,
                              .shards = n,
                              .by = by,
                              .traced = kr->deps_of != NULL && kr->deps_of[index] >= 0,
                              /* Not retried: no retry of them to plan for. */
                              .no_retry = kr->o.steady && !tpuci__pytest_of(inst)->retry_steady
                                              ? kr->o.steady[index]
                                              : NULL};
    r = tpuci__shard_plan_ask_retry(&ask, tpuci__shard_retry_s(inst, overhead_s), &g->plan, e);
  }
  g->left_out = all->len - ids.len;
  tpuci__strv_free(&ids);
  if (r != 0) return r;
  g->ready = 1;
  g->assign = tpuci__calloc(n, sizeof(*g->assign));
  g->filter = 1;
  for (k = 0; k < n; k++) {
    g->assign[k] = tpuci__shard_assignment(&g->plan, by, k + 1);
    if (strlen(g->assign[k]) > TPUCI__SHARD_ASSIGNMENT_MAX) g->filter = 0;
  }
  return 0;
}

/* Back to no split (the collection pass will make one); frees it. */
static void tpuci__group_unplan(tpuci__pgroup_t *g) {
  size_t k;
  for (k = 0; g->assign != NULL && k < g->plan.n; k++) free(g->assign[k]);
  free(g->assign);
  g->assign = NULL;
  tpuci__shard_plan_free(&g->plan);
  g->ready = 0;
  g->from_record = 0;
}

int tpuci__pk_group_begin(tpuci__kind_run_t *kr, int gi, const char *name, const size_t *members,
                          size_t n) {
  tpuci__pgroup_t *g = tpuci__pk_group_at(kr, gi);
  const tpuci__instance_t *inst = &kr->plan->instances[members[0]];
  const tpuci__collection_t *rec;
  tpuci__err_t e = {0, NULL};
  size_t i;

  g->used = 1;
  g->name = tpuci__strdup(name);
  for (i = 0; i < n; i++) kr->group_of[members[i]] = gi;
  /* A group whose key matches its record is split now, from the last
   * run's collection: no collection pass. */
  g->key = tpuci__collection_key(kr->plan, inst);
  rec = kr->o.collections ? tpuci__collection_get(kr->o.collections, g->name, g->key) : NULL;
  if (rec != NULL && rec->ids.len > 0 &&
      tpuci__group_plan(kr, g, inst, &rec->ids, rec->overhead_s, &e) == 0) {
    g->from_record = 1;
    /* Too big to pass: node ids, which only a fresh collection may give. */
    if (!g->filter) tpuci__group_unplan(g);
  }
  tpuci__err_clear(&e);
  return g->ready;
}

/* "suite: 200 tests in 4 shards (by recorded durations), predicted ...". */
static void tpuci__group_tell(tpuci__kind_run_t *kr, tpuci__pgroup_t *g,
                              const tpuci__instance_t *inst) {
  tpuci__buf_t b;
  size_t k, n = 0;

  for (k = 0; k < g->plan.n; k++) n += g->plan.shards[k].ids.len;
  g->told = 1;
  tpuci__buf_init(&b);
  tpuci__buf_addf(&b, "%s: %zu test%s in %d shard%s (%s), %s", g->name, n, n == 1 ? "" : "s",
                  inst->shards, inst->shards == 1 ? "" : "s",
                  g->plan.by_count ? "by count: no recorded durations" : "by recorded durations",
                  g->plan.by_count ? "tests per shard" : "predicted");
  /* Without durations a prediction would be a guess: say the counts. */
  for (k = 0; k < g->plan.n; k++)
    if (g->plan.by_count) tpuci__buf_addf(&b, "%s %zu", k ? "," : "", g->plan.shards[k].ids.len);
    else tpuci__buf_addf(&b, "%s %.1fs", k ? "," : "", g->plan.shards[k].predicted_s);
  if (g->plan.retrying > 0)
    tpuci__buf_addf(&b, " (with the retry of the tests that failed last time, in %zu %s)",
                    g->plan.retrying, g->plan.retrying == 1 ? "shard" : "shards");
  if (g->from_record) tpuci__buf_adds(&b, "; from the last run's collection");
  kr->host->message(kr->host->sched, b.data);
  tpuci__buf_free(&b);
}

int tpuci__pk_part(tpuci__kind_run_t *kr, size_t index, tpuci__part_skip_t *out) {
  tpuci__pgroup_t *g = &kr->groups[kr->group_of[index]];
  const tpuci__instance_t *inst = &kr->plan->instances[index];
  const tpuci__shard_t *part;

  if (!g->told) tpuci__group_tell(kr, g, inst);
  part = &g->plan.shards[inst->shard - 1];
  if (part->ids.len == 0) {
    /* A test new since the split never goes to a shard without one. */
    out->outcome = TPUCI_OUTCOME_PASSED;
    out->cause = tpuci__strdup("no test assigned to this shard (fewer tests than shards)");
    return 1;
  }
  /* Without its assignment a shard runs the node ids of its part. */
  if (kr->select[index] == NULL && !g->filter) {
    kr->select[index] = tpuci__calloc(1, sizeof(*kr->select[index]));
    tpuci__strv_copy(kr->select[index], &part->ids);
  }
  return 0;
}

void tpuci__pk_shard_seen(tpuci__kind_run_t *kr, size_t index, const char *results_dir) {
  tpuci__pgroup_t *g = &kr->groups[kr->group_of[index]];
  unsigned long count, crc;
  char *msg;

  if (g->warned || !tpuci__pytest_suite_seen(results_dir, &count, &crc)) return;
  if (!g->seen) {
    g->seen = 1;
    g->seen_count = count;
    g->seen_crc = crc;
    g->seen_by = index;
    return;
  }
  if (count == g->seen_count && crc == g->seen_crc) return;
  g->warned = 1;
  msg = tpuci__printf("warning: %s: its shards collected different tests (%s: %lu, %s: %lu%s): "
                      "a test only some of them collected may have run twice or not at all; "
                      "the collection must be the same in every process (a parametrization "
                      "over a set, a random or time-dependent id?)",
                      g->name, kr->plan->instances[g->seen_by].name, g->seen_count,
                      kr->plan->instances[index].name, count,
                      count == g->seen_count ? ", other node ids" : "");
  kr->host->message(kr->host->sched, msg);
  free(msg);
}

int tpuci__pk_step_done(tpuci__kind_run_t *kr, int gi, const tpuci__kind_proc_t *p,
                        const tpuci__proc_end_t *end, tpuci_outcome_t *outcome, char **cause) {
  tpuci__pgroup_t *g = &kr->groups[gi];
  const tpuci__instance_t *inst = &kr->plan->instances[p->index];
  const tpuci__exit_t *ex = end->exit;
  tpuci_outcome_t o = end->outcome;
  tpuci__strv_t ids = {0};
  tpuci__err_t e = {0, NULL};
  char *text = NULL, *setup = NULL;
  size_t len = 0;
  int r = 0;

  /* The setup problem is read from the log of a failed collection. */
  if (o == TPUCI_OUTCOME_FAILED && end->log_path != NULL)
    (void) tpuci__read_file(end->log_path, &text, &len);
  /* An incomplete log would hide tests: the collection failed. */
  if (o == TPUCI_OUTCOME_PASSED && end->log_problem == NULL && end->log_path != NULL &&
      tpuci__read_file(end->log_path, &text, &len) == 0 &&
      tpuci__collect_parse(text, len, &ids, &e) == 0 && ids.len > 0 &&
      tpuci__group_plan(kr, g, inst, &ids, -1, &e) == 0) {
    tpuci__strv_copy(&g->ids, &ids);
    tpuci__group_tell(kr, g, inst);
  } else if (o == TPUCI_OUTCOME_FAILED &&
             (setup = tpuci__pytest_collect_setup_problem(kr->plan, inst, text, len, ex)) != NULL) {
    /* What the image lacks: infra, and no shard of the group retries. */
    size_t i;
    r = 1;
    *outcome = TPUCI_OUTCOME_INFRA;
    *cause = setup;
    for (i = 0; i < kr->n; i++)
      if (kr->group_of[i] == gi) kr->setup_failed[i] = 1;
  } else {
    r = 1;
    *outcome = o == TPUCI_OUTCOME_PASSED ? TPUCI_OUTCOME_FAILED : o;
    if (o == TPUCI_OUTCOME_PASSED && end->log_problem != NULL) {
      *outcome = TPUCI_OUTCOME_INFRA;
      *cause = tpuci__printf("test collection log incomplete: %s", end->log_problem);
    } else if (o == TPUCI_OUTCOME_FAILED && ex->exit_code == TPUCI__PYTEST_NO_TESTS) {
      int allowed = tpuci__pytest_of(inst)->allow_empty;
      *outcome = allowed ? TPUCI_OUTCOME_PASSED : TPUCI_OUTCOME_FAILED;
      *cause = tpuci__printf(
          "collection selected no test%s",
          allowed ? " (allowed: allow_empty)"
                  : " (pytest exit 5; set pytest.allow_empty = true if that is fine)");
    } else if (o == TPUCI_OUTCOME_TIMEOUT) {
      *cause = tpuci__printf("test collection %s", end->timeout_text);
    } else if (o == TPUCI_OUTCOME_PASSED) {
      *cause = tpuci__printf("test collection listed no node ids%s%s", e.msg ? ": " : "",
                             e.msg ? e.msg : "");
    } else if (ex->infra || ex->oom) {
      *cause = tpuci__printf("test collection: %s", ex->cause ? ex->cause : tpuci_outcome_name(o));
    } else {
      *cause = tpuci__printf("test collection failed (exit %d)", ex->exit_code);
    }
  }
  free(text);
  tpuci__strv_free(&ids);
  tpuci__err_clear(&e);
  return r;
}

/* The node ids the first attempt of shard instance `i` that kept its
 * part of the whole suite collected, or NULL (none did). */
static const tpuci__strv_t *tpuci__shard_collected(const tpuci__kind_run_t *kr, size_t i) {
  const tpuci__history_t *h = tpuci__res_history(&kr->results[i]);
  size_t k;
  for (k = 0; h != NULL && k < h->n_attempts; k++)
    if (!h->attempts[k].has_selection && h->attempts[k].has_collection)
      return &h->attempts[k].collected;
  return NULL;
}

static int tpuci__cmp_secs(const void *a, const void *b) {
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* What the pytest attempts of shard group `gi` took beyond their tests,
 * the median, from its retries when it had any (a retry's cost is what
 * the split plans for), else its first attempts; -1 when none ran. */
static double tpuci__group_overhead(const tpuci__kind_run_t *kr, size_t gi) {
  double *v = NULL, out = -1;
  size_t n = 0, cap = 0, i, k, j, r;
  int retries;

  for (retries = 1; retries >= 0 && n == 0; retries--)
    for (i = 0; i < kr->n; i++) {
      const tpuci__history_t *h = tpuci__res_history(&kr->results[i]);
      size_t from, to;
      if (kr->group_of[i] != (int) gi || h == NULL) continue;
      from = retries ? 1 : 0;
      to = retries ? h->n_attempts : h->n_attempts > 0;
      for (k = from; k < to; k++) {
        double tests = 0;
        if (!h->attempts[k].reported || h->attempts[k].cut) continue;
        for (j = 0; j < h->len; j++)
          for (r = 0; r < h->tests[j].len; r++)
            if (h->tests[j].runs[r].attempt == (int) k + 1)
              tests += h->tests[j].runs[r].result.time_s;
        if (n == cap) v = tpuci__realloc(v, (cap = cap ? 2 * cap : 8) * sizeof(*v));
        v[n++] = h->attempts[k].time_s > tests ? h->attempts[k].time_s - tests : 0;
      }
    }
  if (n > 0) {
    qsort(v, n, sizeof(*v), tpuci__cmp_secs);
    out = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
  free(v);
  return out;
}

size_t tpuci__pytest_kind_collections(const tpuci__kind_run_t *kr, tpuci__collections_t *c) {
  size_t gi, i, n = 0;
  if (kr == NULL) return 0;
  for (gi = 0; gi < kr->ngroups; gi++) {
    const tpuci__pgroup_t *g = &kr->groups[gi];
    tpuci__strv_t ids = {0};
    size_t shards = g->plan.n, found = 0, k;
    const tpuci__strv_t **parts;
    int whole = g->filter;

    /* A split that left tests out as unaffected collected only part of
     * the suite: the record keeps the whole one it had. */
    if (!g->used || !g->ready || g->left_out > 0) continue;
    parts = tpuci__calloc(shards + 1, sizeof(*parts));
    /* Whole when every shard with a part (all selected) collected it. */
    for (i = 0; i < kr->n; i++) {
      const tpuci__instance_t *inst = &kr->plan->instances[i];
      if (kr->group_of[i] != (int) gi) continue;
      k = (size_t) inst->shard - 1;
      found++;
      if (g->plan.shards[k].ids.len == 0) continue;
      if ((parts[k] = tpuci__shard_collected(kr, i)) == NULL) whole = 0;
    }
    if (found < shards) whole = 0;
    for (k = 0; whole && k < shards; k++)
      for (i = 0; parts[k] != NULL && i < parts[k]->len; i++)
        tpuci__strv_push(&ids, parts[k]->items[i]);
    free(parts);
    if (whole && ids.len > 0) {
      tpuci__collection_put(c, g->name, g->key, &ids, tpuci__group_overhead(kr, gi));
      n++;
    } else if (g->ids.len > 0) {
      tpuci__collection_put(c, g->name, g->key, &g->ids, tpuci__group_overhead(kr, gi));
      n++;
    }
    tpuci__strv_free(&ids);
  }
  return n;
}

void tpuci__pk_groups_free(tpuci__kind_run_t *kr) {
  size_t i;
  for (i = 0; i < kr->ngroups; i++) {
    tpuci__pgroup_t *g = &kr->groups[i];
    free(g->name);
    tpuci__group_unplan(g);
    free(g->key);
    tpuci__strv_free(&g->ids);
  }
  free(kr->groups);
  kr->groups = NULL;
  kr->ngroups = 0;
}
