/* A run as an object (tpuci_run_t, ctx.h's struct tpuci_run_s): made for
 * a run of the context's plan or a record read back, linked to its
 * context until freed; its instances, its error, and what it frees. */
#include <stdlib.h>
#include <string.h>

#include "api/ctx.h"

tpuci__run_t *tpuci__run_new(tpuci_ctx_t *ctx) {
  tpuci__run_t *run = tpuci__calloc(1, sizeof(*run));
  run->ctx = ctx;
  tpuci__plan_init(&run->plan);
  run->plan_owned = 1;
  tpuci__timings_init(&run->timings);
  tpuci__collections_init(&run->collections);
  run->rd.jsonl_fd = -1;
  run->next = ctx->runs;
  ctx->runs = run;
  return run;
}

void tpuci__run_take(tpuci__run_t *run) {
  tpuci_ctx_t *ctx = run->ctx;
  size_t n = ctx->plan.ninstances, k;
  tpuci__plan_free(&run->plan);
  /* The context's plan, with an instances array of the run's own: a
   * selection made for a next run does not change this one's. The rest
   * (strings, topologies, host sets) is the context's, read only. */
  run->plan = ctx->plan;
  run->plan.instances = tpuci__malloc((n ? n : 1) * sizeof(*run->plan.instances));
  if (n) memcpy(run->plan.instances, ctx->plan.instances, n * sizeof(*run->plan.instances));
  run->plan.cap_instances = n;
  /* Its images too: the id a run's build gives is that run's (another
   * run of the context may build while this one's containers start). */
  run->plan.images =
      tpuci__malloc((ctx->plan.nimages ? ctx->plan.nimages : 1) * sizeof(*run->plan.images));
  for (k = 0; k < ctx->plan.nimages; k++) {
    run->plan.images[k] = ctx->plan.images[k];
    run->plan.images[k].id = ctx->plan.images[k].id ? tpuci__strdup(ctx->plan.images[k].id) : NULL;
  }
  memset(&run->plan.warnings, 0, sizeof(run->plan.warnings));
  run->plan_owned = 0;
  /* The selection of tests and repetitions is the run's now. */
  run->preselect = ctx->preselect;
  run->preselect_tests = ctx->preselect_tests;
  run->repeat = ctx->repeat;
  ctx->preselect = NULL;
  ctx->preselect_tests = 0;
}

static void tpuci__run_unlink(tpuci__run_t *run) {
  tpuci__run_t **p;
  for (p = &run->ctx->runs; *p != NULL; p = &(*p)->next)
    if (*p == run) {
      *p = run->next;
      return;
    }
}

void tpuci__run_destroy(tpuci__run_t *run) {
  size_t i;
  tpuci__run_unlink(run);
  tpuci__run_state_free(run);
  for (i = 0; run->preselect && i < run->plan.ninstances; i++) {
    if (run->preselect[i] == NULL) continue;
    tpuci__strv_free(run->preselect[i]);
    free(run->preselect[i]);
  }
  free(run->preselect);
  tpuci__timings_free(&run->timings);
  if (run->plan_owned) {
    tpuci__plan_free(&run->plan);
  } else {
    free(run->plan.instances);
    for (i = 0; i < run->plan.nimages; i++) free(run->plan.images[i].id);
    free(run->plan.images);
    tpuci__strv_free(&run->plan.warnings);
  }
  free(run->error);
  free(run);
}

void tpuci_run_free(tpuci_run_t *run) {
  /* A run still going on has handles on a loop: freeing it is the
   * caller's error (tpuci.h), and it is left alone. */
  if (run == NULL || run->running) return;
  tpuci__run_destroy(run);
}

tpuci_ctx_t *tpuci_run_ctx(const tpuci_run_t *run) { return run ? run->ctx : NULL; }

int tpuci_run_error(const tpuci_run_t *run) { return run ? run->run_error : TPUCI_EUSAGE; }

const char *tpuci_run_error_message(const tpuci_run_t *run) {
  return run && run->error ? run->error : "";
}

void tpuci__run_fail(tpuci__run_t *run, int code, const char *msg) {
  tpuci__err_t e = {0, NULL};
  run->run_error = code;
  free(run->error);
  run->error = tpuci__strdup(msg);
  tpuci__err_set(&e, code, "%s", msg);
  tpuci__fail(run->ctx, &e);
}

size_t tpuci_run_instance_count(const tpuci_run_t *run) { return run ? run->plan.ninstances : 0; }

#define TPUCI__RUN_INST(run, i) tpuci__plan_instance((run) ? &(run)->plan : NULL, (i))

const char *tpuci_run_instance_name(const tpuci_run_t *run, size_t i) {
  const tpuci__instance_t *in = TPUCI__RUN_INST(run, i);
  return in ? in->name : NULL;
}

const char *tpuci_run_instance_job(const tpuci_run_t *run, size_t i) {
  const tpuci__instance_t *in = TPUCI__RUN_INST(run, i);
  return in ? in->job : NULL;
}

const char *tpuci_run_instance_where(const tpuci_run_t *run, size_t i) {
  const tpuci__instance_t *in = TPUCI__RUN_INST(run, i);
  return in ? in->where : NULL;
}

int tpuci_run_instance_selected(const tpuci_run_t *run, size_t i) {
  const tpuci__instance_t *in = TPUCI__RUN_INST(run, i);
  return in ? in->selected : 0;
}
