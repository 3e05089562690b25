/* The context: made and freed (what outlives a run: the options, the
 * plan, the selection for the next run; a run is run_object.c's). */
#include <stdlib.h>
#include <string.h>

#include "api/ctx.h"

void tpuci_ctx_options_init(tpuci_ctx_options_t *opts) {
  memset(opts, 0, sizeof(*opts));
  opts->size = sizeof(*opts);
}

int tpuci_ctx_new(tpuci_ctx_t **out, const tpuci_ctx_options_t *opts) {
  tpuci_ctx_t *ctx;
  if (out == NULL) return TPUCI_EUSAGE;
  ctx = tpuci__calloc(1, sizeof(*ctx));
  tpuci_ctx_options_init(&ctx->opts);
  if (opts != NULL &&
      tpuci__struct_in(&ctx->opts, sizeof(ctx->opts), opts, TPUCI__CTX_OPTIONS_MIN) != 0) {
    free(ctx);
    return TPUCI_EUSAGE;
  }
  if (ctx->opts.load_timeout_ms == 0) ctx->opts.load_timeout_ms = TPUCI__LOAD_TIMEOUT_MS;
  if (ctx->opts.load_memory_bytes == 0) ctx->opts.load_memory_bytes = TPUCI__LOAD_MEMORY;
  tpuci__plan_init(&ctx->plan);
  *out = ctx;
  return 0;
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
  ctx->preselect_tests = 0;
}

void tpuci_ctx_free(tpuci_ctx_t *ctx) {
  if (ctx == NULL) return;
  tpuci__preselect_free(ctx);
  /* The runs left (none may be going on: tpuci.h). */
  while (ctx->runs != NULL) tpuci__run_destroy(ctx->runs);
  tpuci__plan_free(&ctx->plan);
  tpuci__err_clear(&ctx->err);
  free(ctx);
}
