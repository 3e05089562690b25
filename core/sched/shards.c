/* pytest shard groups: the shards of one instance share one collection
 * of its tests (a collect attempt), then each runs its part. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pytest/pytest_run.h"
#include "sched/internal.h"

/* ------------------------------------------------------------------ */
/* Shards: one collection per group, then each shard runs its part     */

/* Records an attempt that ran nothing (an empty shard, a failed
 * collection) and finishes the instance. */
void tpuci__attempt_synthetic(tpuci__sched_t *s, size_t index,
                                     tpuci_outcome_t o, const char *cause,
                                     const char *log_path) {
  const tpuci__instance_t *inst = &s->plan->instances[index];
  tpuci__attempt_result_t *res = tpuci__result_add(&s->results[index]);
  tpuci_event_t ev;
  int number = s->next_attempt[index];

  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_ATTEMPT_STARTED;
  ev.instance = index;
  ev.name = inst->name;
  ev.attempt = number;
  ev.max_attempts = inst->retry.attempts;
  tpuci__emit(s, &ev);
  res->outcome = o;
  res->exit_code = -1;
  res->start_ms = tpuci__now_ms();
  res->cause = tpuci__strdup(cause);
  res->log_path = tpuci__strdup(log_path);
  tpuci__attempt_report(s, index, number, res);
  tpuci__instance_settle(s, index);
}

/* Splits a group's tests (what the collection pass listed, or the last
 * run's collection) and makes each shard's assignment. 0, or an error
 * from the split. */
static int tpuci__group_plan(tpuci__sched_t *s, tpuci__group_t *g,
                             const tpuci__instance_t *inst, const tpuci__strv_t *ids,
                             double overhead_s, tpuci__err_t *e) {
  size_t n = (size_t) inst->pytest->shards, k;
  /* Tests that failed last time fail a shard, which then retries them. */
  int r = tpuci__shard_plan_retry((const char *const *) ids->items, ids->len, s->opts.timings,
                                  n, inst->pytest->shard_by,
                                  tpuci__shard_retry_s(inst, overhead_s), &g->plan, e);
  if (r != 0) return r;
  g->state = TPUCI__GROUP_READY;
  g->assign = tpuci__calloc(n, sizeof(*g->assign));
  g->filter = 1;
  for (k = 0; k < n; k++) {
    g->assign[k] = tpuci__shard_assignment(&g->plan, inst->pytest->shard_by, k + 1);
    if (strlen(g->assign[k]) > TPUCI__SHARD_ASSIGNMENT_MAX) g->filter = 0;
  }
  return 0;
}

/* Back to no split (the collection pass will make one); frees it. */
void tpuci__group_unplan(tpuci__group_t *g) {
  size_t k;
  for (k = 0; g->assign != NULL && k < g->plan.n; k++) free(g->assign[k]);
  free(g->assign);
  g->assign = NULL;
  tpuci__shard_plan_free(&g->plan);
  g->state = TPUCI__GROUP_NEW;
  g->from_record = 0;
}

/* "suite: 200 tests in 4 shards (by recorded durations), predicted ...". */
static void tpuci__group_tell(tpuci__sched_t *s, tpuci__group_t *g,
                              const tpuci__instance_t *inst) {
  tpuci__buf_t b;
  size_t k, n = 0;

  for (k = 0; k < g->plan.n; k++) n += g->plan.shards[k].ids.len;
  g->told = 1;
  tpuci__buf_init(&b);
  tpuci__buf_addf(&b, "%s: %zu tests in %d shards (%s), %s", g->name, n,
                  inst->pytest->shards,
                  g->plan.by_count ? "by count: no recorded durations" : "by recorded durations",
                  g->plan.by_count ? "tests per shard" : "predicted");
  /* Without durations a prediction would be a guess: say the counts. */
  for (k = 0; k < g->plan.n; k++)
    if (g->plan.by_count)
      tpuci__buf_addf(&b, "%s %zu", k ? "," : "", g->plan.shards[k].ids.len);
    else
      tpuci__buf_addf(&b, "%s %.1fs", k ? "," : "", g->plan.shards[k].predicted_s);
  if (g->plan.retrying > 0)
    tpuci__buf_addf(&b, " (with the retry of the tests that failed last time, in %zu %s)",
                    g->plan.retrying, g->plan.retrying == 1 ? "shard" : "shards");
  if (g->from_record)
    tpuci__buf_adds(&b, "; from the last run's collection");
  tpuci__emit_message(s, b.data);
  tpuci__buf_free(&b);
}

/* A shard whose group is collected: its part, or nothing to do. */
void tpuci__shard_start(tpuci__sched_t *s, size_t index) {
  tpuci__group_t *g = &s->groups[s->group_of[index]];
  const tpuci__instance_t *inst = &s->plan->instances[index];
  const tpuci__shard_t *part;

  if (g->state == TPUCI__GROUP_FAILED) {
    tpuci__attempt_synthetic(s, index, g->outcome, g->cause, g->log_path);
    return;
  }
  if (!g->told) tpuci__group_tell(s, g, inst);
  part = &g->plan.shards[inst->pytest->shard - 1];
  if (part->ids.len == 0) {
    /* A test new since the split never goes to a shard without one. */
    tpuci__attempt_synthetic(s, index, TPUCI_OUTCOME_PASSED,
                             "no test assigned to this shard (fewer tests than shards)",
                             g->log_path);
    return;
  }
  /* Without its assignment a shard runs the node ids of its part. */
  if (s->select[index] == NULL && !g->filter) {
    s->select[index] = tpuci__calloc(1, sizeof(*s->select[index]));
    tpuci__strv_copy(s->select[index], &part->ids);
  }
  tpuci__attempt_start(s, index, 0);
}

/* After an attempt of shard `index` that kept its part of the whole
 * suite: what it collected must be what the group's other shards did, or
 * a test only some of them saw may have run twice or not at all. */
void tpuci__shard_seen(tpuci__sched_t *s, size_t index, const char *results_dir) {
  tpuci__group_t *g = &s->groups[s->group_of[index]];
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
                      g->name, s->plan->instances[g->seen_by].name, g->seen_count,
                      s->plan->instances[index].name, count,
                      count == g->seen_count ? ", other node ids" : "");
  tpuci__emit_message(s, msg);
  free(msg);
}

void tpuci__collect_done(tpuci__sched_t *s, tpuci__satt_t *t,
                                tpuci_outcome_t o, const tpuci__exit_t *ex) {
  tpuci__group_t *g = &s->groups[s->group_of[t->a.index]];
  const tpuci__instance_t *inst = t->a.inst;
  tpuci__strv_t ids = {0};
  tpuci__err_t e = {0, NULL};
  char *text = NULL, *msg;
  size_t len = 0, k;

  g->log_path = t->log_made ? tpuci__strdup(t->log_path) : NULL;
  /* An incomplete log would hide tests: the collection failed. */
  if (o == TPUCI_OUTCOME_PASSED && t->log_errno == 0 && ex->log_lost == NULL &&
      tpuci__read_file(t->log_path, &text, &len) == 0 &&
      tpuci__collect_parse(text, len, &ids, &e) == 0 && ids.len > 0 &&
      tpuci__group_plan(s, g, inst, &ids, -1, &e) == 0) {
    tpuci__strv_copy(&g->ids, &ids);
    tpuci__group_tell(s, g, inst);
    tpuci__first_group(s, (size_t) s->group_of[t->a.index]);
  } else {
    g->state = TPUCI__GROUP_FAILED;
    g->outcome = o == TPUCI_OUTCOME_PASSED ? TPUCI_OUTCOME_FAILED : o;
    if (o == TPUCI_OUTCOME_PASSED && t->log_errno) {
      g->outcome = TPUCI_OUTCOME_INFRA;
      g->cause = tpuci__printf("test collection log incomplete: %s", strerror(t->log_errno));
    } else if (o == TPUCI_OUTCOME_PASSED && ex->log_lost != NULL) {
      g->outcome = TPUCI_OUTCOME_INFRA;
      g->cause = tpuci__printf("test collection log incomplete: %s", ex->log_lost);
    } else if (o == TPUCI_OUTCOME_FAILED && ex->exit_code == TPUCI__PYTEST_NO_TESTS) {
      g->outcome = inst->pytest->allow_empty ? TPUCI_OUTCOME_PASSED : TPUCI_OUTCOME_FAILED;
      g->cause = tpuci__printf("collection selected no test%s",
                               inst->pytest->allow_empty ? " (allowed: allow_empty)"
                                                         : " (pytest exit 5; set pytest.allow_empty = true if that is fine)");
    } else if (o == TPUCI_OUTCOME_TIMEOUT) {
      tpuci__buf_t b;
      tpuci__buf_init(&b);
      tpuci__buf_adds(&b, "test collection ");
      tpuci__timeout_text(t, &b);
      g->cause = tpuci__buf_steal(&b);
    } else if (o == TPUCI_OUTCOME_PASSED) {
      g->cause = tpuci__printf("test collection listed no node ids%s%s",
                               e.msg ? ": " : "", e.msg ? e.msg : "");
    } else if (ex->infra || ex->oom) {
      g->cause = tpuci__printf("test collection: %s", ex->cause ? ex->cause : tpuci_outcome_name(o));
    } else {
      g->cause = tpuci__printf("test collection failed (exit %d)", ex->exit_code);
    }
    msg = tpuci__printf("%s: %s; log: %s", g->name, g->cause,
                        g->log_path ? g->log_path : "(no output)");
    tpuci__emit_message(s, msg);
    free(msg);
  }
  free(text);
  tpuci__strv_free(&ids);
  tpuci__err_clear(&e);

  /* The shards that waited go back to the front of the queue, in order. */
  for (k = g->nwaiting; k > 0; k--) {
    s->qhead = (s->qhead + s->qcap - 1) % s->qcap;
    s->queue[s->qhead] = g->waiting[k - 1];
    s->qlen++;
  }
  g->nwaiting = 0;
  if (s->stop != TPUCI__STOP_NONE) tpuci__drain(s);
}

typedef struct {
  char *name;
  size_t index;
} tpuci__named_t;

static int tpuci__cmp_named(const void *a, const void *b) {
  const tpuci__named_t *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->index < y->index ? -1 : x->index > y->index);
}

/* Groups the selected pytest shards of one instance (same name but for
 * shard=i/N): each group collects its tests once. */
void tpuci__groups_build(tpuci__sched_t *s) {
  const tpuci__plan_t *plan = s->plan;
  tpuci__named_t *v;
  size_t i, n = 0;

  s->group_of = tpuci__malloc(s->qcap * sizeof(int));
  for (i = 0; i < plan->ninstances; i++) s->group_of[i] = -1;
  v = tpuci__malloc(s->qcap * sizeof(*v));
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    if (!inst->selected || inst->pytest == NULL || inst->pytest->shards <= 1) continue;
    v[n].name = tpuci__pytest_group_name(inst);
    v[n++].index = i;
  }
  qsort(v, n, sizeof(*v), tpuci__cmp_named);
  for (i = 0; i < n; i++) {
    if (i == 0 || strcmp(v[i].name, v[i - 1].name) != 0) {
      tpuci__group_t *g;
      s->groups = tpuci__realloc(s->groups, (s->ngroups + 1) * sizeof(*s->groups));
      g = &s->groups[s->ngroups++];
      memset(g, 0, sizeof(*g));
      g->name = tpuci__strdup(v[i].name);
      g->waiting = tpuci__malloc(((size_t) plan->instances[v[i].index].pytest->shards + 1) *
                                 sizeof(*g->waiting));
    }
    s->group_of[v[i].index] = (int) s->ngroups - 1;
  }
  for (i = 0; i < n; i++) free(v[i].name);
  free(v);
  /* A group whose key matches its record is split now, from the last
   * run's collection: no collection pass. */
  for (i = 0; i < plan->ninstances; i++) {
    tpuci__group_t *g = s->group_of[i] >= 0 ? &s->groups[s->group_of[i]] : NULL;
    const tpuci__collection_t *rec;
    tpuci__err_t e = {0, NULL};
    if (g == NULL || g->key != NULL) continue;
    g->key = tpuci__collection_key(plan, &plan->instances[i]);
    rec = s->opts.collections ? tpuci__collection_get(s->opts.collections, g->name, g->key)
                              : NULL;
    if (rec != NULL && rec->ids.len > 0 &&
        tpuci__group_plan(s, g, &plan->instances[i], &rec->ids, rec->overhead_s, &e) == 0) {
      g->from_record = 1;
      /* Too big to pass: node ids, which only a fresh collection may give. */
      if (!g->filter) tpuci__group_unplan(g);
    }
    tpuci__err_clear(&e);
  }
}

/* The node ids the first attempt of shard instance `i` that kept its
 * part of the whole suite collected, or NULL (none did). */
static const tpuci__strv_t *tpuci__shard_collected(const tpuci__sched_t *s, size_t i) {
  const tpuci__history_t *h = s->results[i].history;
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
static double tpuci__group_overhead(const tpuci__sched_t *s, size_t gi) {
  double *v = NULL, out = -1;
  size_t n = 0, cap = 0, i, k, j, r;
  int retries;

  for (retries = 1; retries >= 0 && n == 0; retries--)
    for (i = 0; i < s->plan->ninstances; i++) {
      const tpuci__history_t *h = s->results[i].history;
      size_t from, to;
      if (s->group_of[i] != (int) gi || h == NULL) continue;
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

size_t tpuci__sched_collections(const tpuci__sched_t *s, tpuci__collections_t *c) {
  size_t gi, i, n = 0;
  for (gi = 0; gi < s->ngroups; gi++) {
    const tpuci__group_t *g = &s->groups[gi];
    tpuci__strv_t ids = {0};
    size_t shards = g->plan.n, found = 0, k;
    const tpuci__strv_t **parts;
    int whole = g->filter;

    if (g->state != TPUCI__GROUP_READY) continue;
    parts = tpuci__calloc(shards + 1, sizeof(*parts));
    /* Whole when every shard with a part (all selected) collected it. */
    for (i = 0; i < s->plan->ninstances; i++) {
      const tpuci__instance_t *inst = &s->plan->instances[i];
      if (s->group_of[i] != (int) gi) continue;
      k = (size_t) inst->pytest->shard - 1;
      found++;
      if (g->plan.shards[k].ids.len == 0) continue;
      if ((parts[k] = tpuci__shard_collected(s, i)) == NULL) whole = 0;
    }
    if (found < shards) whole = 0;
    for (k = 0; whole && k < shards; k++)
      for (i = 0; parts[k] != NULL && i < parts[k]->len; i++)
        tpuci__strv_push(&ids, parts[k]->items[i]);
    free(parts);
    if (whole && ids.len > 0) {
      tpuci__collection_put(c, g->name, g->key, &ids, tpuci__group_overhead(s, gi));
      n++;
    } else if (g->ids.len > 0) {
      tpuci__collection_put(c, g->name, g->key, &g->ids, tpuci__group_overhead(s, gi));
      n++;
    }
    tpuci__strv_free(&ids);
  }
  return n;
}
