/* Groups and processes besides the attempts (kind/kind.h).
 *
 * A group: instances (its parts) whose first attempts wait for one step
 * of theirs, which runs once with one slot while the parts that reach
 * the queue's head wait without one; once it ends they go back to the
 * front of the queue, each then running its part or, as its kind says,
 * finishing without running (a failed step's failure is every part's).
 *
 * Processes besides an instance's attempts, which its kind asks for: a
 * FIFO whose SIDE_FIRST ones start before the queue's attempts and whose
 * SIDE_LAST ones start once the queue is empty. An instance finishes when
 * its attempts are over and its kind lets it (tpuci__instance_settle). */
#include <stdlib.h>
#include <string.h>

#include "sched/internal.h"

/* ------------------------------------------------------------------ */
/* Groups                                                              */

typedef struct {
  char *name;
  size_t index;
} tpuci__named_t;

static int tpuci__cmp_named(const void *a, const void *b) {
  const tpuci__named_t *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->index < y->index ? -1 : x->index > y->index);
}

void tpuci__groups_build(tpuci__sched_t *s) {
  const tpuci__plan_t *plan = s->plan;
  tpuci__named_t *v;
  size_t *members;
  size_t i, j, n = 0;

  s->group_of = tpuci__malloc(s->qcap * sizeof(int));
  for (i = 0; i < plan->ninstances; i++) s->group_of[i] = -1;
  v = tpuci__malloc(s->qcap * sizeof(*v));
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__kind_binding_t *k = s->kind_of[i];
    char *name;
    if (!plan->instances[i].selected || k->ops->group == NULL ||
        (name = k->ops->group(k->run, i)) == NULL)
      continue;
    v[n].name = name;
    v[n++].index = i;
  }
  if (n > 1) qsort(v, n, sizeof(*v), tpuci__cmp_named);
  members = tpuci__malloc((n + 1) * sizeof(*members));
  for (i = 0; i < n; i = j) {
    tpuci__group_t *g;
    size_t m = 0;
    int gi = (int) s->ngroups;
    for (j = i; j < n && strcmp(v[j].name, v[i].name) == 0; j++) {
      members[m++] = v[j].index;
      s->group_of[v[j].index] = gi;
    }
    s->groups = tpuci__realloc(s->groups, (s->ngroups + 1) * sizeof(*s->groups));
    g = &s->groups[s->ngroups++];
    memset(g, 0, sizeof(*g));
    g->name = tpuci__strdup(v[i].name);
    g->kind = s->kind_of[v[i].index];
    g->waiting = tpuci__malloc((m + 1) * sizeof(*g->waiting));
    /* Members in plan order (the sort kept it within a name). */
    if (g->kind->ops->group_begin != NULL &&
        g->kind->ops->group_begin(g->kind->run, gi, g->name, members, m))
      g->state = TPUCI__GROUP_READY;
  }
  for (i = 0; i < n; i++) free(v[i].name);
  free(v);
  free(members);
}

void tpuci__groups_free(tpuci__sched_t *s) {
  size_t i;
  for (i = 0; i < s->ngroups; i++) {
    free(s->groups[i].name);
    free(s->groups[i].waiting);
    free(s->groups[i].cause);
    free(s->groups[i].log_path);
  }
  free(s->groups);
  free(s->group_of);
  s->groups = NULL;
  s->group_of = NULL;
  s->ngroups = 0;
}

void tpuci__step_done(tpuci__sched_t *s, tpuci__satt_t *t, const tpuci__proc_end_t *end) {
  int gi = s->group_of[t->a.index];
  tpuci__group_t *g = &s->groups[gi];
  tpuci_outcome_t o = TPUCI_OUTCOME_FAILED;
  char *cause = NULL;
  size_t k;

  g->log_path = end->log_path ? tpuci__strdup(end->log_path) : NULL;
  if (g->kind->ops->step_done == NULL ||
      g->kind->ops->step_done(g->kind->run, gi, &t->kp, end, &o, &cause) == 0) {
    g->state = TPUCI__GROUP_READY;
    free(cause);
    for (k = 0; k < s->plan->ninstances && g->kind->ops->ready; k++)
      if (s->group_of[k] == gi && s->plan->instances[k].selected &&
          !(s->opts.done && s->opts.done[k]))
        g->kind->ops->ready(g->kind->run, k);
  } else {
    char *msg;
    g->state = TPUCI__GROUP_FAILED;
    g->outcome = o;
    g->cause = cause ? cause : tpuci__strdup(tpuci_outcome_name(o));
    msg = tpuci__printf("%s: %s; log: %s", g->name, g->cause,
                        g->log_path ? g->log_path : "(no output)");
    tpuci__emit_message(s, msg);
    free(msg);
  }
  /* The parts that waited go back to the front of the queue, in order. */
  for (k = g->nwaiting; k > 0; k--) {
    s->qhead = (s->qhead + s->qcap - 1) % s->qcap;
    s->queue[s->qhead] = g->waiting[k - 1];
    s->qlen++;
  }
  g->nwaiting = 0;
  if (s->stop != TPUCI__STOP_NONE) tpuci__drain(s);
}

/* ------------------------------------------------------------------ */
/* Processes besides the attempts                                      */

static void tpuci__side_queue(void *sched, size_t index, tpuci__proc_role_t role) {
  tpuci__sched_t *s = sched;
  if (s->nside == s->side_cap) {
    s->side_cap = s->side_cap ? 2 * s->side_cap : 8;
    s->side = tpuci__realloc(s->side, s->side_cap * sizeof(*s->side));
  }
  s->side[s->nside].index = index;
  s->side[s->nside].role = role;
  s->nside++;
  s->sides_open[index]++;
}

static void tpuci__side_stop(void *sched, size_t index, tpuci__proc_role_t role) {
  tpuci__sched_t *s = sched;
  tpuci__satt_t *t;
  if (s->stop != TPUCI__STOP_NONE) return; /* the run's stop stops it */
  for (t = s->running_list; t != NULL; t = t->next)
    if (t->a.index == index && t->kp.role == role && !t->finished && !t->superseded) {
      t->superseded = 1;
      if (!t->timed_out) t->cancelled = 1;
      tpuci__attempt_stop(t, 0);
    }
}

void tpuci__side_host(tpuci__sched_t *s) {
  s->kind_host.side = tpuci__side_queue;
  s->kind_host.side_stop = tpuci__side_stop;
}

int tpuci__side_start(tpuci__sched_t *s, tpuci__proc_role_t role) {
  tpuci__side_t head;
  size_t k;
  for (k = 0; k < s->nside && s->side[k].role != role; k++) {}
  if (k == s->nside) return 0;
  head = s->side[k];
  if (s->slots + tpuci__plan_hosts(s->plan, &s->plan->instances[head.index]) > s->opts.jobs)
    return 0;
  memmove(&s->side[k], &s->side[k + 1], (s->nside - k - 1) * sizeof(*s->side));
  s->nside--;
  tpuci__attempt_start(s, head.index, head.role);
  return 1;
}

size_t tpuci__side_count(const tpuci__sched_t *s, tpuci__proc_role_t role) {
  size_t k, n = 0;
  for (k = 0; k < s->nside; k++) n += s->side[k].role == role;
  return n;
}

/* The queued processes besides the attempts will not run: each
 * instance's kind is told, and the instance settles. */
void tpuci__side_drain(tpuci__sched_t *s) {
  while (s->nside > 0) {
    tpuci__side_t head = s->side[--s->nside];
    const tpuci__kind_binding_t *k = s->kind_of[head.index];
    s->sides_open[head.index]--;
    if (k->ops->settle) k->ops->settle(k->run, head.index, 1);
    tpuci__instance_settle(s, head.index);
  }
}

void tpuci__side_done(tpuci__sched_t *s, size_t index) {
  s->sides_open[index]--;
  if (s->main_done[index]) tpuci__instance_settle(s, index);
}

void tpuci__instance_settle(tpuci__sched_t *s, size_t index) {
  const tpuci__kind_binding_t *k = s->kind_of[index];
  s->main_done[index] = 1;
  if (s->settled[index]) return;
  if (k->ops->settle != NULL && k->ops->settle(k->run, index, 0)) return;
  if (s->sides_open[index] > 0) return;
  s->settled[index] = 1;
  tpuci__instance_finish(s, index);
}
