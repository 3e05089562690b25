/* The docker runtime driver (runtime/runtime.h): the runtime object,
 * starting and signalling attempts (the attempt core runs them:
 * runtime/unit/unit.h, with the operations of attempt.c; the checks
 * before a run: prepare.c; the shared parts: objects.c; what every
 * engine driver's runtime object has: engine/erun.h). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/engine/container.h"
#include "runtime/engine/gang.h"
#include "runtime/docker/driver.h"

static void tpuci__dk_free(tpuci__runtime_t *rt) {
  tpuci__dk_t *dk = (tpuci__dk_t *) rt;
  size_t i;
  if (dk == NULL) return;
  for (i = 0; i < dk->norphans; i++) {
    free(dk->orphans[i].id);
    free(dk->orphans[i].name);
  }
  free(dk->orphans);
  free(dk->images);
  tpuci__erun_release(&dk->e);
  free(dk);
}

static int tpuci__dk_start(tpuci__runtime_t *rt, tpuci__attempt_t *a) {
  return tpuci__unit_start(rt, "docker", &tpuci__dk_ops, a, TPUCI__DK_GRACE_MS,
                           &((tpuci__dk_t *) rt)->atts);
}

static const tpuci__erun_ops_t tpuci__dk_erun = {
    TPUCI__RUNTIME_DOCKER,
    "docker",
    "docker engine",
    "",
    "the Docker Engine",
    NULL,
    NULL,
    tpuci__dk_prepare,
    tpuci__dk_start,
    tpuci__dk_free,
    tpuci__dk_prepare_end,
    tpuci__dk_maybe_closed,
};

int tpuci__runtime_docker_new(uv_loop_t *loop, const tpuci__runtime_opts_t *opts,
                              tpuci__runtime_t **out, tpuci__err_t *err) {
  tpuci__dk_t *dk = tpuci__calloc(1, sizeof(*dk));
  (void) err;
  tpuci__unit_rt_init(&dk->e.rt, "docker", loop, &dk->atts, tpuci__dk_maybe_closed);
  *out = tpuci__erun_init(&dk->e, &tpuci__dk_erun, loop, opts);
  return 0;
}
