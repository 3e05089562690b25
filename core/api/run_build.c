/* A run's first step when the spec builds images (ctx.h,
 * tpuci__run_build; docs/docker.md, "Images built from the spec"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/ctx.h"
#include "runtime/runtime.h"

static void tpuci__build_told(tpuci__run_t *run, const tpuci__image_t *img,
                              const tpuci__docker_built_t *b, uint64_t ms, const char *log) {
  char *msg = tpuci__printf("built image '%s' (%s) from %s: %.19s in %.1f s, %d of %d "
                            "steps from the engine's cache (log: %s)",
                            img->name, img->ref, img->build->context, b->id, (double) ms / 1000,
                            b->cached, b->steps, log);
  tpuci__message(run, msg);
  free(msg);
  if (b->log_error != 0) {
    msg = tpuci__printf("warning: the build log %s is incomplete: %s", log, strerror(b->log_error));
    tpuci__message(run, msg);
    free(msg);
  }
}

int tpuci__run_build(tpuci__run_t *run, tpuci__err_t *err) {
  tpuci__plan_t *plan = &run->plan;
  char *dir = NULL;
  size_t k;
  int rc = 0;
  for (k = 0; k < plan->nimages && rc == 0; k++) {
    tpuci__image_t *img = &plan->images[k];
    tpuci__docker_built_t b;
    uint64_t t0;
    char *log;
    /* A swarm job on a built image was refused before the run
     * (tpuci__docker_build_check). */
    if (img->build == NULL || !tpuci__plan_image_built_here(plan, k)) continue;
    if (dir == NULL) {
      dir = tpuci__printf("%s/build", run->rd.dir);
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
      tpuci__build_told(run, img, &b, tpuci__now_ms() - t0, log);
    }
    free(log);
  }
  free(dir);
  return rc;
}
