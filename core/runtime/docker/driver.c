/* The docker runtime driver (runtime/runtime.h): the runtime object,
 * starting and signalling attempts (the attempt core runs them:
 * runtime/unit/unit.h, with the operations of attempt.c; the checks
 * before a run: prepare.c; the shared parts: objects.c). */
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

static int tpuci__dk_start(tpuci__runtime_t *rt, tpuci__attempt_t *a) {
  tpuci__dk_t *dk = (tpuci__dk_t *) rt;
  if (dk->closing)
    return tpuci__err_set(&rt->err, TPUCI_ESTATE, "the docker runtime is closing");
  return tpuci__unit_start(rt, "docker", &tpuci__dk_ops, a, TPUCI__DK_GRACE_MS,
                           &dk->atts);
}

static void tpuci__dk_changed(tpuci__unit_list_t *l) {
  tpuci__dk_maybe_closed((tpuci__dk_t *) ((char *) l - offsetof(tpuci__dk_t, atts)));
}

static void tpuci__dk_close(tpuci__runtime_t *rt,
                            void (*cb)(tpuci__runtime_t *rt)) {
  tpuci__dk_t *dk = (tpuci__dk_t *) rt;
  dk->closing = 1;
  dk->close_cb = cb;
  tpuci__dk_maybe_closed(dk);
}

static void tpuci__dk_free(tpuci__runtime_t *rt) {
  tpuci__dk_t *dk = (tpuci__dk_t *) rt;
  size_t i;
  if (dk == NULL) return;
  for (i = 0; i < dk->norphans; i++) {
    free(dk->orphans[i].id);
    free(dk->orphans[i].name);
  }
  free(dk->orphans);
  free(dk->run_id);
  free(dk->images);
  tpuci__err_clear(&dk->rt.err);
  free(dk);
}

int tpuci__runtime_docker_new(uv_loop_t *loop,
                              const tpuci__runtime_opts_t *opts,
                              tpuci__runtime_t **out, tpuci__err_t *err) {
  tpuci__dk_t *dk = tpuci__calloc(1, sizeof(*dk));
  (void) err;
  tpuci__unit_rt_init(&dk->rt, "docker", loop, &dk->atts, tpuci__dk_changed);
  dk->rt.prepare = tpuci__dk_prepare;
  dk->rt.start = tpuci__dk_start;
  dk->rt.abort = tpuci__dk_abort;
  dk->rt.close = tpuci__dk_close;
  dk->rt.free = tpuci__dk_free;
  dk->loop = loop;
  dk->run_id = tpuci__strdup(opts && opts->run_id ? opts->run_id : "");
  dk->keep_failed = opts ? opts->keep_failed : 0;
  *out = &dk->rt;
  return 0;
}
