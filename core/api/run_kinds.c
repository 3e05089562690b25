/* What a run hands its job kinds (kind/kinds.h): the rows bound, the
 * tests that failed last time read from the history, and every row's
 * state made from what the run read of its records. */
#include <stdlib.h>
#include <string.h>

#include "api/ctx.h"
#include "base/idmap.h"
#include "kind/pytest/flaky.h"
#include "kind/pytest/pytest_run.h"

/* Failing first: each selected pytest instance's tests that failed in
 * its last run, from the history (its identity's newest run there), for
 * the scheduler (run->first; every entry made, most empty), those that
 * fail steadily apart (run->steady, for every pytest instance). A probe
 * has none. */
/* "unit: failing first: 8 tests failed in each of their last 5 runs ...". */
static void tpuci__first_steady_tell(tpuci__run_t *run, const char *name,
                                     const tpuci__strv_t *ids) {
  tpuci__buf_t b;
  size_t i;
  tpuci__buf_init(&b);
  tpuci__buf_addf(&b,
                  "%s: failing first: %zu test%s failed in each of %s last %d runs, so running "
                  "%s first tells nothing new: %s in %s attempts only (pytest.failed_first = "
                  "\"always\" runs %s first too): ",
                  name, ids->len, ids->len == 1 ? "" : "s", ids->len == 1 ? "its" : "their",
                  TPUCI__FLAKY_STEADY_RUNS, ids->len == 1 ? "it" : "them",
                  ids->len == 1 ? "it runs" : "they run", ids->len == 1 ? "its" : "their",
                  ids->len == 1 ? "it" : "them");
  for (i = 0; i < ids->len && i < 3; i++) tpuci__buf_addf(&b, "%s%s", i ? ", " : "", ids->items[i]);
  if (ids->len > 3) tpuci__buf_addf(&b, " and %zu more", ids->len - 3);
  tpuci__message(run, b.data);
  tpuci__buf_free(&b);
}

void tpuci__first_load(tpuci__run_t *run, const char *state_dir) {
  size_t n = run->plan.ninstances, i, m = 0, k;
  char **names = tpuci__calloc(n + 1, sizeof(*names));
  const char **uniq = tpuci__calloc(n + 1, sizeof(*uniq));
  tpuci__strv_t *got, *steady;
  unsigned char *told;
  tpuci__idmap_t at;
  char *path;

  run->first = tpuci__calloc(n + 1, sizeof(*run->first));
  run->steady = tpuci__calloc(n + 1, sizeof(*run->steady));
  for (i = 0; i < n; i++) {
    run->first[i] = tpuci__calloc(1, sizeof(*run->first[i]));
    run->steady[i] = tpuci__calloc(1, sizeof(*run->steady[i]));
  }
  tpuci__idmap_init(&at);
  for (i = 0; i < n && run->repeat == 0; i++) {
    const tpuci__instance_t *inst = &run->plan.instances[i];
    const tpuci__pytest_t *py = tpuci__pytest_of(inst);
    if (!inst->selected || py == NULL) continue;
    names[i] = tpuci__group_name_of(inst->name);
    if (tpuci__idmap_get(&at, names[i]) == TPUCI__IDMAP_NONE) {
      tpuci__idmap_put(&at, names[i], m);
      uniq[m++] = names[i];
    }
  }
  got = tpuci__calloc(m + 1, sizeof(*got));
  steady = tpuci__calloc(m + 1, sizeof(*steady));
  told = tpuci__calloc(m + 1, 1);
  path = tpuci__printf("%s/%s", state_dir, TPUCI__FLAKY_FILE);
  if (m > 0) tpuci__flaky_last_failed(path, uniq, m, got, steady);
  for (i = 0; i < n; i++) {
    const tpuci__pytest_t *py = tpuci__pytest_of(&run->plan.instances[i]);
    if (names[i] == NULL || (k = tpuci__idmap_get(&at, names[i])) == TPUCI__IDMAP_NONE) continue;
    tpuci__strv_copy(run->steady[i], &steady[k]);
    if (!py->failed_first) continue;
    tpuci__strv_copy(run->first[i], &got[k]);
    if (py->failed_first_steady) {
      size_t j;
      for (j = 0; j < steady[k].len; j++) tpuci__strv_push(run->first[i], steady[k].items[j]);
    } else if (steady[k].len > 0 && !told[k]) {
      told[k] = 1;
      tpuci__first_steady_tell(run, names[i], &steady[k]);
    }
  }
  for (k = 0; k < m; k++) {
    tpuci__strv_free(&got[k]);
    tpuci__strv_free(&steady[k]);
  }
  free(steady);
  free(told);
  for (i = 0; i < n; i++) free(names[i]);
  tpuci__idmap_free(&at);
  free(got);
  free(names);
  free(uniq);
  /* New tests are new to this history: read before the run adds to it. */
  for (i = 0; i < n && run->repeat == 0; i++) {
    const tpuci__instance_t *inst = &run->plan.instances[i];
    const tpuci__pytest_t *py = tpuci__pytest_of(inst);
    if (!inst->selected || py == NULL || py->new_tests_runs < 2) continue;
    /* No store (or none that reads): no job has a run in it. */
    if ((run->known = tpuci__flaky_recent(path, 0)) == NULL) run->known = json_object();
    break;
  }
  free(path);
}

/* The job kinds an instance may be (kind/kinds.h's rows, the command
 * kind last, which claims every other one). Their states are made once
 * the run's records are read (tpuci__kinds_new). */
void tpuci__kinds_bind(tpuci__run_t *run) {
  size_t k;
  for (k = 0; k < TPUCI__NKINDS; k++) {
    run->kinds[k].ops = tpuci__kinds[k].ops;
    run->kinds[k].run = NULL;
  }
}

/* Every kind's state for the run, from what the run read of its records
 * (`done`: the cache's hits). */
void tpuci__kinds_new(tpuci__run_t *run, const tpuci_run_options_t *opts,
                      const unsigned char *done) {
  tpuci__kind_args_t a;
  size_t i, k;
  memset(&a, 0, sizeof(a));
  a.plan = &run->plan;
  a.results = run->results;
  a.timings = &run->timings;
  a.collections = &run->collections;
  a.preselect = run->preselect;
  a.preselect_tests = run->preselect_tests;
  a.first = run->first;
  a.steady = run->steady;
  a.known = run->known;
  a.no_first = run->repeat != 0;
  a.done = done;
  a.state_dir = opts->state_dir ? opts->state_dir : ".tpuci";
  a.affected = opts->affected;
  a.no_select = opts->no_select;
  run->nonfile = tpuci__calloc(run->plan.ninstances + 1, sizeof(*run->nonfile));
  for (i = 0; i < run->plan.ninstances; i++) run->nonfile[i] = tpuci__cache_nonfile(run, i);
  a.keys = run->nonfile;
  for (k = 0; k < TPUCI__NKINDS; k++) run->kinds[k].run = tpuci__kinds[k].run_new(&a);
}
