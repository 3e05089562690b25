/* The context: made, freed, and its last error. */
#include <stdlib.h>
#include <string.h>

#include "api/ctx.h"

int tpuci__fail(tpuci_ctx_t *ctx, tpuci__err_t *e) {
  int code = e->code;
  tpuci__err_clear(&ctx->err);
  ctx->err = *e;
  e->msg = NULL;
  return code;
}

int tpuci_ctx_new(tpuci_ctx_t **out, const tpuci_ctx_options_t *opts) {
  tpuci_ctx_t *ctx;
  if (out == NULL) return TPUCI_EUSAGE;
  ctx = tpuci__calloc(1, sizeof(*ctx));
  if (opts != NULL) {
    size_t n = opts->size < sizeof(ctx->opts) ? opts->size : sizeof(ctx->opts);
    memcpy(&ctx->opts, opts, n);
  }
  ctx->opts.size = sizeof(ctx->opts);
  if (ctx->opts.load_timeout_ms == 0) ctx->opts.load_timeout_ms = TPUCI__LOAD_TIMEOUT_MS;
  if (ctx->opts.load_memory_bytes == 0) ctx->opts.load_memory_bytes = TPUCI__LOAD_MEMORY;
  tpuci__plan_init(&ctx->plan);
  tpuci__timings_init(&ctx->timings);
  tpuci__collections_init(&ctx->collections);
  ctx->rd.jsonl_fd = -1;
  *out = ctx;
  return 0;
}

void tpuci__results_free(tpuci_ctx_t *ctx) {
  size_t i;
  tpuci__quar_free(ctx);
  tpuci__cache_free(ctx);
  for (i = 0; i < ctx->nresults; i++) tpuci__instance_result_free(&ctx->results[i]);
  free(ctx->results);
  ctx->results = NULL;
  ctx->nresults = 0;
  tpuci__sched_free(ctx->sched);
  ctx->sched = NULL;
  tpuci__pytest_kind_free(ctx->pytest_kind);
  ctx->pytest_kind = NULL;
  for (i = 0; ctx->first && ctx->first[i]; i++) {
    tpuci__strv_free(ctx->first[i]);
    free(ctx->first[i]);
  }
  free(ctx->first);
  ctx->first = NULL;
  tpuci__rundir_close(&ctx->rd);
  if (ctx->report) json_decref(ctx->report);
  ctx->report = NULL;
  json_decref(ctx->recent);
  ctx->recent = NULL;
  ctx->ran = 0;
  tpuci__timings_free(&ctx->timings);
  tpuci__timings_init(&ctx->timings);
  free(ctx->timings_path);
  ctx->timings_path = NULL;
  tpuci__collections_free(&ctx->collections);
  free(ctx->collections_path);
  ctx->collections_path = NULL;
  tpuci__strv_free(&ctx->write_paths);
  tpuci__strv_free(&ctx->write_errors);
  free(ctx->summary_path);
  ctx->summary_path = NULL;
}

void tpuci__preselect_free(tpuci_ctx_t *ctx) {
  size_t i;
  for (i = 0; ctx->preselect && i < ctx->plan.ninstances; i++) {
    if (ctx->preselect[i] == NULL) continue;
    tpuci__strv_free(ctx->preselect[i]);
    free(ctx->preselect[i]);
  }
  free(ctx->preselect);
  ctx->preselect = NULL;
}

void tpuci_ctx_free(tpuci_ctx_t *ctx) {
  if (ctx == NULL) return;
  tpuci__preselect_free(ctx);
  tpuci__results_free(ctx);
  tpuci__timings_free(&ctx->timings);
  tpuci__plan_free(&ctx->plan);
  tpuci__err_clear(&ctx->err);
  free(ctx);
}

const char *tpuci_last_error(const tpuci_ctx_t *ctx) {
  return ctx && ctx->err.msg ? ctx->err.msg : "";
}

void tpuci_free(void *p) { free(p); }
