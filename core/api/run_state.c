/* A run's state (ctx.h, tpuci__run_t): everything one tpuci_run() made
 * (or tpuci_load_run() read back), freed at once before the next one and
 * with the context. */
#include <stdlib.h>

#include "api/ctx.h"

void tpuci__run_state_free(tpuci_ctx_t *ctx) {
  size_t i, k;
  tpuci__quar_free(ctx);
  tpuci__cache_free(ctx);
  for (i = 0; i < ctx->run.nresults; i++) tpuci__instance_result_free(&ctx->run.results[i]);
  free(ctx->run.results);
  ctx->run.results = NULL;
  ctx->run.nresults = 0;
  tpuci__sched_free(ctx->run.sched);
  tpuci__strv_free(&ctx->run.held);
  ctx->run.hold = 0;
  ctx->run.sched = NULL;
  for (k = 0; k < TPUCI__NKINDS; k++) {
    if (ctx->run.kinds[k].run != NULL) tpuci__kinds[k].run_free(ctx->run.kinds[k].run);
    ctx->run.kinds[k].run = NULL;
  }
  free(ctx->run.nonfile);
  ctx->run.nonfile = NULL;
  for (i = 0; ctx->run.first && ctx->run.first[i]; i++) {
    tpuci__strv_free(ctx->run.first[i]);
    free(ctx->run.first[i]);
  }
  free(ctx->run.first);
  ctx->run.first = NULL;
  json_decref(ctx->run.known);
  ctx->run.known = NULL;
  tpuci__rundir_close(&ctx->run.rd);
  if (ctx->run.report) json_decref(ctx->run.report);
  ctx->run.report = NULL;
  json_decref(ctx->run.recent);
  ctx->run.recent = NULL;
  ctx->run.ran = 0;
  tpuci__timings_free(&ctx->run.timings);
  tpuci__timings_init(&ctx->run.timings);
  free(ctx->run.timings_path);
  ctx->run.timings_path = NULL;
  tpuci__collections_free(&ctx->run.collections);
  free(ctx->run.collections_path);
  ctx->run.collections_path = NULL;
  tpuci__strv_free(&ctx->run.write_paths);
  tpuci__strv_free(&ctx->run.write_errors);
  free(ctx->run.summary_path);
  ctx->run.summary_path = NULL;
}
