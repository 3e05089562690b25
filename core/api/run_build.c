/* A run's first step when the spec builds images (ctx.h,
 * tpuci__run_build; docs/docker.md, "Images built from the spec"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/ctx.h"
#include "runtime/runtime.h"

/* A swarm's nodes do not have what this engine built. */
static int tpuci__build_refuse_swarm(const tpuci__plan_t *plan, size_t k, tpuci__err_t *err) {
  const tpuci__image_t *img = &plan->images[k];
  size_t i;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *in = &plan->instances[i];
    if (!in->selected || in->image != (int) k || in->runtime != TPUCI__RUNTIME_SWARM) continue;
    return tpuci__err_set(err, TPUCI_ESPEC,
                          "%s: job '%s' runs on swarm, and image '%s' is built from the spec: "
                          "the swarm's nodes would not have it; push it to a registry and "
                          "give its ref instead of build, or use runtime = \"docker\"",
                          in->where ? in->where : "spec", in->job, img->name);
  }
  return 0;
}

static void tpuci__build_told(tpuci_ctx_t *ctx, const tpuci__image_t *img,
                              const tpuci__docker_built_t *b, uint64_t ms, const char *log) {
  char *msg = tpuci__printf("built image '%s' (%s) from %s: %.19s in %.1f s, %d of %d "
                            "steps from the engine's cache (log: %s)",
                            img->name, img->ref, img->build->context, b->id, (double) ms / 1000,
                            b->cached, b->steps, log);
  tpuci__message(ctx, msg);
  free(msg);
  if (b->log_error != 0) {
    msg = tpuci__printf("warning: the build log %s is incomplete: %s", log, strerror(b->log_error));
    tpuci__message(ctx, msg);
    free(msg);
  }
}

int tpuci__run_build(tpuci_ctx_t *ctx, tpuci__err_t *err) {
  tpuci__plan_t *plan = &ctx->plan;
  char *dir = NULL;
  size_t k;
  int rc = 0;
  for (k = 0; k < plan->nimages && rc == 0; k++) {
    tpuci__image_t *img = &plan->images[k];
    tpuci__docker_built_t b;
    uint64_t t0;
    char *log;
    if (img->build == NULL) continue;
    if ((rc = tpuci__build_refuse_swarm(plan, k, err)) != 0) break;
    if (!tpuci__plan_image_used(plan, k, TPUCI__RUNTIME_DOCKER)) continue;
    if (dir == NULL) {
      dir = tpuci__printf("%s/build", ctx->run.rd.dir);
      if (tpuci__mkdir_p(dir, 0755) != 0) {
        rc = tpuci__err_set(err, TPUCI_EIO, "cannot make %s: %s", dir, strerror(errno));
        break;
      }
    }
    log = tpuci__printf("%s/%s.log", dir, img->name);
    t0 = tpuci__now_ms();
    rc = tpuci__runtime_docker_build(img, log, &b, err);
    if (rc == 0) {
      free(img->id);
      img->id = b.id;
      tpuci__build_told(ctx, img, &b, tpuci__now_ms() - t0, log);
    }
    free(log);
  }
  free(dir);
  return rc;
}
