/* The pytest job kind's operations (kind.h): what each process of a
 * pytest instance runs, what its results are, what a retry runs, and the
 * instance's final outcome. Shard groups are shard_group.c's; the
 * processes besides the attempts, order_run.c's. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kind/devices.h"
#include "kind/pytest/flaky.h"
#include "kind/pytest/kind_run.h"
#include "runtime/tree.h"

static int tpuci__pk_claims(const tpuci__instance_t *inst) {
  return tpuci__pytest_of(inst) != NULL;
}

static int tpuci__pk_check(const tpuci__plan_t *plan, const tpuci__instance_t *inst, int hosts,
                           tpuci__err_t *err) {
  (void) plan;
  if (hosts > 1 && inst->shards > 1)
    return tpuci__err_set(err, TPUCI_EUSAGE,
                          "%s: '%s': pytest shards on a %d-host topology are not "
                          "supported (shard a single-host job, or run the gang unsharded)",
                          inst->where, inst->name, hosts);
  return 0;
}

static void tpuci__pk_attach(tpuci__kind_run_t *kr, const tpuci__kind_host_t *host) {
  kr->host = host;
}

/* The attempt's command: its selection (a retry's, rerun --failed's, a
 * shard's node ids), or a shard's assignment of the whole suite; a
 * process besides the attempts: only its tests, in pytest's order. */
static void tpuci__pk_argv(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p) {
  const tpuci__instance_t *inst = &kr->plan->instances[p->index];
  if (p->role == TPUCI__PROC_SIDE_FIRST || p->role == TPUCI__PROC_SIDE_LAST) {
    tpuci__strv_t only = {0};
    tpuci__pk_side_only(kr, p, &only);
    tpuci__pytest_argv_shard(inst, p->results_path, NULL, &only, NULL, NULL, NULL, &p->argv);
    tpuci__strv_free(&only);
  } else {
    /* A shard that keeps its part of the whole suite gets its
     * assignment; every test runs in pytest's order. */
    const char *assign = NULL;
    char *devices = tpuci__devices_arg(kr->plan, inst);
    int g = kr->group_of[p->index];
    if (g >= 0 && kr->groups[g].filter && kr->select[p->index] == NULL)
      assign = kr->groups[g].assign[inst->shard - 1];
    tpuci__pytest_argv_shard(inst, p->results_path, kr->select[p->index], NULL, assign,
                             tpuci__pk_deps_arg(kr, p->index), devices, &p->argv);
    free(devices);
  }
}

static int tpuci__pk_prepare(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p, char **cause) {
  const tpuci__instance_t *inst = &kr->plan->instances[p->index];
  const tpuci__driver_t *d = tpuci__driver(inst->runtime);
  tpuci__pproc_t *pp;
  char *side = NULL;
  int r;

  if (p->role == TPUCI__PROC_STEP) {
    p->log_name = tpuci__strdup("collect.log");
    tpuci__pytest_collect_argv(inst, &p->argv);
    return 0;
  }
  if (p->role != TPUCI__PROC_ATTEMPT) {
    side = tpuci__pk_side_name(kr, p);
    p->log_name = tpuci__printf("%s.log", side);
  }
  /* pytest writes its JUnit file here; containers see it mounted. */
  p->results_dir = side ? tpuci__printf("%s/results-%s", p->dir, side)
                        : tpuci__printf("%s/results-%d", p->dir, p->number);
  free(side);
  /* A host whose pytest ran to its end does not cut its peers' short:
   * host 0's report is the gang's. */
  p->peer_exits = (1u << TPUCI__PYTEST_FAILED) | (1u << TPUCI__PYTEST_NO_TESTS);
  p->results_path = d->results_mount ? d->results_mount : p->results_dir;
  tpuci__pk_argv(kr, p);
  pp = tpuci__calloc(1, sizeof(*pp));
  tpuci__live_init(&pp->live, p->results_dir, p->hosts);
  p->data = pp;
  r = tpuci__mkdir_p(p->results_dir, 0777);
  if (r != 0) *cause = tpuci__printf("cannot create %s: %s", p->results_dir, uv_strerror(r));
  return r;
}

static const char *tpuci__pk_poll(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p, uint64_t now_ms,
                                  uint64_t *since_ms) {
  tpuci__pproc_t *pp = p->data;
  tpuci__live_fail_t *f;
  size_t n, i;
  if (pp == NULL) return NULL;
  tpuci__live_poll(&pp->live, now_ms);
  free(pp->text);
  pp->text = tpuci__live_text(&pp->live, since_ms);
  f = tpuci__live_failed(&pp->live, &n);
  for (i = 0; i < n; i++) {
    /* An order check's failures are what it looks for, not news; a new
     * test's are. */
    if (p->role != TPUCI__PROC_SIDE_LAST || tpuci__pk_new_queued(kr, p->index))
      kr->host->test_failed(kr->host->sched, p, f[i].id, f[i].message);
    tpuci__live_fail_free(&f[i]);
  }
  free(f);
  return pp->text;
}

/* Whether an attempt of `run --test` found nothing of it to run: its
 * first attempt ran the preselected ids, and pytest said exit 5 (nothing
 * collected after the job's markers and -k). */
static int tpuci__pk_not_applicable(const tpuci__kind_run_t *kr, const tpuci__kind_proc_t *p,
                                    const tpuci__proc_end_t *end) {
  const tpuci__instance_result_t *r = &kr->results[p->index];
  if (!kr->o.preselect_tests || kr->o.preselect == NULL || kr->o.preselect[p->index] == NULL)
    return 0;
  if (tpuci__res_history(r) != NULL && tpuci__res_history(r)->n_attempts > 0) return 0;
  return end->outcome == TPUCI_OUTCOME_FAILED && end->exit->term_signal == 0 &&
         end->exit->exit_code == TPUCI__PYTEST_NO_TESTS;
}

/* An attempt whose test results do not count: `outcome`, told by `why`
 * (taken: it becomes *cause), none of its results read. `scope` says
 * what it was to run, for the tests a retry runs (NULL: none of them is
 * this job's). */
static tpuci_outcome_t tpuci__pk_set_aside(const tpuci__instance_t *inst,
                                           tpuci__instance_result_t *r,
                                           const tpuci__proc_end_t *end, tpuci_outcome_t outcome,
                                           char *why, const tpuci__strv_t *scope, char **cause) {
  char *py_cause = NULL;
  tpuci_outcome_t o;
  free(*cause);
  *cause = why;
  o = tpuci__pytest_after(tpuci__res_history(r), inst, NULL, outcome, end->exit, *cause,
                          end->duration_ms, scope, &py_cause);
  free(py_cause);
  return o;
}

static tpuci_outcome_t tpuci__pk_ended(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p,
                                       const tpuci__proc_end_t *end, char **cause) {
  const tpuci__instance_t *inst = &kr->plan->instances[p->index];
  tpuci__instance_result_t *r = &kr->results[p->index];
  char *py_cause = NULL, *devices, *setup;
  tpuci_outcome_t o;
  if (p->role != TPUCI__PROC_ATTEMPT) return tpuci__pk_side_ended(kr, p, end, cause);
  tpuci__pk_history(kr, p->index);
  /* A host whose devices are not the topology's: the attempt is infra,
   * and none of its test results counts (its results folder is not read;
   * a retry runs everything it was to run). */
  devices = p->results_dir ? tpuci__devices_mismatch(p->results_dir) : NULL;
  if (devices != NULL) {
    char *why = tpuci__printf("device check: %s", devices);
    free(devices);
    return tpuci__pk_set_aside(inst, r, end, TPUCI_OUTCOME_INFRA, why, kr->select[p->index], cause);
  }
  /* `run --test ID` where this job's own selection (markers, -k)
   * collects nothing of it: not this job's test, neither a pass nor a
   * failure. No scope: the ids are not this job's tests, so none is
   * "not run". */
  if (tpuci__pk_not_applicable(kr, p, end)) {
    const tpuci__pytest_t *py = tpuci__pytest_of(inst);
    tpuci__buf_t b;
    tpuci__buf_init(&b);
    tpuci__buf_adds(&b, "--test: not collected by this job's selection");
    if (py->markers) tpuci__buf_addf(&b, " -m '%s'", py->markers);
    if (py->k) tpuci__buf_addf(&b, " -k '%s'", py->k);
    return tpuci__pk_set_aside(inst, r, end, TPUCI_OUTCOME_NOT_APPLICABLE, tpuci__buf_steal(&b),
                               NULL, cause);
  }
  /* What the image or machine lacks (python3, pytest) is no test's
   * failure: infra, with the image named, and not retried. */
  setup = end->outcome == TPUCI_OUTCOME_FAILED
              ? tpuci__pytest_setup_problem(kr->plan, inst, p->results_dir, end->exit)
              : NULL;
  if (setup != NULL) {
    kr->setup_failed[p->index] = 1;
    return tpuci__pk_set_aside(inst, r, end, TPUCI_OUTCOME_INFRA, setup, kr->select[p->index],
                               cause);
  }
  o = tpuci__pytest_after(tpuci__res_history(r), inst, p->results_dir, end->outcome, end->exit,
                          *cause, end->duration_ms, kr->select[p->index], &py_cause);
  tpuci__pk_deps_ended(kr, p);
  if (kr->group_of[p->index] >= 0 && kr->groups[kr->group_of[p->index]].filter &&
      kr->select[p->index] == NULL)
    tpuci__pk_shard_seen(kr, p->index, p->results_dir);
  if (py_cause) {
    free(*cause);
    *cause = py_cause;
  }
  return o;
}

static void tpuci__pk_release(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p) {
  tpuci__pproc_t *pp = p->data;
  (void) kr;
  if (pp != NULL) {
    tpuci__live_free(&pp->live);
    free(pp->text);
    free(pp);
  }
  tpuci__strv_free(&p->argv);
  free(p->log_name);
  free(p->results_dir);
}

/* A retry runs only what failed or did not run, where pytest said. */
/* Whether every test a retry would run failed in each of its last runs
 * before this one too (kr->o.steady): a retry tells nothing new, and the
 * instance is not retried unless pytest.retry_steady. Says so. */
static int tpuci__pk_only_steady(tpuci__kind_run_t *kr, size_t index, const tpuci__strv_t *next) {
  const tpuci__instance_t *inst = &kr->plan->instances[index];
  const tpuci__strv_t *steady = kr->o.steady ? kr->o.steady[index] : NULL;
  tpuci__idmap_t in;
  tpuci__buf_t b;
  size_t i, all = 1;
  if (steady == NULL || steady->len == 0 || next->len == 0 || tpuci__pytest_of(inst)->retry_steady)
    return 0;
  tpuci__idmap_init(&in);
  for (i = 0; i < steady->len; i++) tpuci__idmap_put(&in, steady->items[i], i);
  for (i = 0; i < next->len && all; i++)
    all = tpuci__idmap_get(&in, next->items[i]) != TPUCI__IDMAP_NONE;
  tpuci__idmap_free(&in);
  if (!all) return 0;
  tpuci__buf_init(&b);
  tpuci__buf_addf(&b,
                  "%s: no retry: its %zu failed test%s failed in each of %s last %d runs before "
                  "this one too, so a retry tells nothing new (pytest.retry_steady = true retries "
                  "%s): ",
                  inst->name, next->len, next->len == 1 ? "" : "s",
                  next->len == 1 ? "its" : "their", TPUCI__FLAKY_STEADY_RUNS,
                  next->len == 1 ? "it" : "them");
  for (i = 0; i < next->len && i < 3; i++)
    tpuci__buf_addf(&b, "%s%s", i ? ", " : "", next->items[i]);
  if (next->len > 3) tpuci__buf_addf(&b, " and %zu more", next->len - 3);
  kr->host->message(kr->host->sched, b.data);
  tpuci__buf_free(&b);
  return 1;
}

static int tpuci__pk_retry(tpuci__kind_run_t *kr, size_t index) {
  const tpuci__instance_t *inst = &kr->plan->instances[index];
  tpuci__strv_t *next;
  int r;
  if (kr->setup_failed[index]) return -1; /* a retry would lack it too */
  if (tpuci__res_history(&kr->results[index]) == NULL) return 0;
  next = tpuci__calloc(1, sizeof(*next));
  r = tpuci__pytest_next_selection(tpuci__res_history(&kr->results[index]), kr->select[index],
                                   inst->retry.rerun_unfinished, next);
  if (r < 0) {
    /* retries.rerun = "unfinished", and every test finished. */
    free(next);
    return -1;
  }
  if (r == 0) {
    free(next);
    next = NULL;
  }
  if (next != NULL && tpuci__pk_only_steady(kr, index, next)) {
    tpuci__strv_free(next);
    free(next);
    return -1;
  }
  if (kr->select[index]) {
    tpuci__strv_free(kr->select[index]);
    free(kr->select[index]);
  }
  kr->select[index] = next;
  return 0;
}

static tpuci_outcome_t tpuci__pk_outcome(tpuci__kind_run_t *kr, size_t index, tpuci_outcome_t o) {
  const tpuci__history_t *h = tpuci__res_history(&kr->results[index]);
  size_t i, flaky = 0, order = 0;
  if (h == NULL) return o;
  /* It passes only when every test it collected did: a last attempt
   * that passed its own selection is not enough. */
  if (!tpuci__history_all_pass(h) && (o == TPUCI_OUTCOME_PASSED || o == TPUCI_OUTCOME_FLAKY))
    return TPUCI_OUTCOME_FAILED;
  if (o != TPUCI_OUTCOME_PASSED && o != TPUCI_OUTCOME_FLAKY) return o;
  /* Of one that passes, its tests say what kind: flaky (a test failed,
   * then passed: also in the failing-first process only), or
   * order-dependent when every such test is. */
  for (i = 0; i < h->len; i++) {
    flaky += tpuci__history_flaky(&h->tests[i]);
    order += h->tests[i].order_dep != 0;
  }
  if (order > 0 && flaky == 0) return TPUCI_OUTCOME_ORDER_DEPENDENT;
  if (flaky > 0) return TPUCI_OUTCOME_FLAKY;
  return o;
}

const tpuci__kind_t tpuci__kind_pytest = {
    .name = "pytest",
    .claims = tpuci__pk_claims,
    .check = tpuci__pk_check,
    .attach = tpuci__pk_attach,
    .group = tpuci__pk_group,
    .group_begin = tpuci__pk_group_begin,
    .step_done = tpuci__pk_step_done,
    .part = tpuci__pk_part,
    .ready = tpuci__pk_ready,
    .prepare = tpuci__pk_prepare,
    .poll = tpuci__pk_poll,
    .ended = tpuci__pk_ended,
    .release = tpuci__pk_release,
    .retry = tpuci__pk_retry,
    .settle = tpuci__pk_settle,
    .outcome = tpuci__pk_outcome,
};

tpuci__history_t *tpuci__pk_history(tpuci__kind_run_t *kr, size_t index) {
  tpuci__pytest_result_t *pr = tpuci__res_pytest(&kr->results[index]);
  if (pr->history == NULL) {
    pr->history = tpuci__calloc(1, sizeof(*pr->history));
    tpuci__history_init(pr->history, kr->plan->instances[index].name);
    if (kr->tree) pr->history->tree = tpuci__strdup(kr->tree);
    /* Its attempts record what each test needs: a tracer slows them. */
    pr->history->traced = kr->deps_of != NULL && kr->deps_of[index] >= 0;
  }
  return pr->history;
}

/* The nearest folder upwards from `dir` with a .git (a folder, or a
 * worktree's or submodule's file), resolved; NULL when there is none. */
static char *tpuci__pk_git_top(const char *dir) {
  char *cur = realpath(dir, NULL);
  struct stat st;
  while (cur != NULL) {
    char *dotgit = tpuci__printf("%s/.git", cur), *slash;
    int found = stat(dotgit, &st) == 0;
    free(dotgit);
    if (found) return cur;
    slash = strrchr(cur, '/');
    if (slash == NULL || slash == cur) break;
    *slash = '\0';
  }
  free(cur);
  return NULL;
}

/* The content key (runtime/tree.h) of the git work tree holding the
 * spec, the state folder left out, as the run starts: what the history
 * store records as the run's files (flaky.h). NULL outside git, when the
 * key cannot be made, with no pytest instance selected, and for a flake
 * probe (whose runs the store does not keep). */
static char *tpuci__pk_tree(const tpuci__plan_t *plan, const tpuci__kind_args_t *o) {
  tpuci__tree_opts_t to;
  tpuci__tree_key_t key;
  tpuci__err_t e = {0, NULL};
  const char *exclude[1];
  char *top, *state, *tree = NULL;
  size_t i, any = 0;
  for (i = 0; i < plan->ninstances; i++)
    any += plan->instances[i].selected && tpuci__pytest_of(&plan->instances[i]) != NULL;
  if (any == 0 || o->no_first || plan->spec_dir == NULL) return NULL;
  if ((top = tpuci__pk_git_top(plan->spec_dir)) == NULL) return NULL;
  state = o->state_dir ? realpath(o->state_dir, NULL) : NULL;
  memset(&to, 0, sizeof(to));
  exclude[0] = state;
  to.exclude = exclude;
  to.nexclude = state != NULL;
  /* Without a key (git failed, a file could not be read) the tree is
   * unknown, which only makes the store count fewer flips: not the run's
   * failure, and not worth a warning on every run. */
  if (tpuci__tree_key(top, &to, &key, &e) == 0) tree = tpuci__strdup(key.hex);
  tpuci__err_clear(&e);
  free(state);
  free(top);
  return tree;
}

tpuci__kind_run_t *tpuci__pytest_kind_new(const tpuci__kind_args_t *o) {
  tpuci__kind_run_t *kr = tpuci__calloc(1, sizeof(*kr));
  const tpuci__plan_t *plan = o->plan;
  size_t i;
  kr->plan = plan;
  kr->results = o->results;
  kr->o = *o;
  kr->n = plan->ninstances;
  kr->select = tpuci__calloc(kr->n + 1, sizeof(*kr->select));
  kr->group_of = tpuci__malloc((kr->n + 1) * sizeof(*kr->group_of));
  kr->first = tpuci__calloc(kr->n + 1, sizeof(*kr->first));
  kr->first_pending = tpuci__calloc(kr->n + 1, 1);
  kr->setup_failed = tpuci__calloc(kr->n + 1, 1);
  kr->ochecks = tpuci__calloc(kr->n + 1, sizeof(*kr->ochecks));
  for (i = 0; i < kr->n; i++) {
    kr->group_of[i] = -1;
    if (o->preselect == NULL || o->preselect[i] == NULL || o->preselect[i]->len == 0) continue;
    kr->select[i] = tpuci__calloc(1, sizeof(*kr->select[i]));
    tpuci__strv_copy(kr->select[i], o->preselect[i]);
  }
  kr->tree = tpuci__pk_tree(plan, o);
  tpuci__pk_deps_begin(kr);
  tpuci__pk_new_begin(kr);
  return kr;
}

void tpuci__pytest_kind_free(tpuci__kind_run_t *kr) {
  size_t i;
  if (kr == NULL) return;
  for (i = 0; i < kr->n; i++) {
    if (kr->select[i] == NULL) continue;
    tpuci__strv_free(kr->select[i]);
    free(kr->select[i]);
  }
  free(kr->select);
  free(kr->setup_failed);
  tpuci__pk_groups_free(kr);
  free(kr->group_of);
  tpuci__pk_order_free(kr);
  tpuci__pk_deps_free(kr);
  tpuci__pk_new_free(kr);
  free(kr->tree);
  free(kr);
}

static void tpuci__pytest_result_free(void *data) {
  tpuci__pytest_result_t *pr = data;
  size_t i;
  if (pr->first) tpuci__attempt_result_free(pr->first);
  free(pr->first);
  tpuci__strv_free(&pr->first_tests);
  for (i = 0; i < pr->nchecks; i++) {
    free(pr->checks[i].test);
    free(pr->checks[i].cause);
    free(pr->checks[i].log_path);
  }
  free(pr->checks);
  if (pr->history) {
    tpuci__history_free(pr->history);
    free(pr->history);
  }
  free(pr);
}

tpuci__pytest_result_t *tpuci__res_pytest(tpuci__instance_result_t *r) {
  if (r->kind_data == NULL) {
    r->kind_data = tpuci__calloc(1, sizeof(tpuci__pytest_result_t));
    r->kind_free = tpuci__pytest_result_free;
  }
  return r->kind_free == tpuci__pytest_result_free ? r->kind_data : NULL;
}

const tpuci__pytest_result_t *tpuci__res_pytest_of(const tpuci__instance_result_t *r) {
  static const tpuci__pytest_result_t none;
  return r->kind_data != NULL && r->kind_free == tpuci__pytest_result_free ? r->kind_data : &none;
}

tpuci__history_t *tpuci__res_history(const tpuci__instance_result_t *r) {
  return tpuci__res_pytest_of(r)->history;
}
