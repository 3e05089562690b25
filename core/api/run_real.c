/* A --real run's start: doctor's TPU checks of this machine (ctx.h,
 * tpuci__real_check). */
#include <stdlib.h>
#include <string.h>

#include "api/ctx.h"
#include "runtime/tpuvm.h"

/* --real: the run starts with doctor's TPU checks when a selected
 * instance runs on this machine (local or docker) on real hardware. A
 * machine that is not a TPU VM is said once; each pytest attempt's device
 * check (its TPU device nodes first) then ends it infra, never failed. */
void tpuci__real_check(tpuci__run_t *run) {
  tpuci__buf_t b;
  tpuci__err_t e = {0, NULL};
  size_t i;
  int here = 0;
  if (!run->ctx->real) return;
  for (i = 0; i < run->plan.ninstances && !here; i++) {
    const tpuci__instance_t *in = &run->plan.instances[i];
    const tpuci__topology_t *t;
    if (!in->selected || in->topology < 0 || (size_t) in->topology >= run->plan.ntopologies)
      continue;
    t = &run->plan.topologies[in->topology];
    here = tpuci__runtime_props(in->runtime)->here && t->emulate != NULL &&
           strcmp(t->emulate, "real") == 0;
  }
  if (!here) return;
  tpuci__buf_init(&b);
  if (tpuci__tpuvm_doctor(&run->plan, &b, &e) != 0) {
    char *msg = tpuci__printf("warning: --real: this machine is not the TPU the spec expects: "
                              "%s (`tpuci doctor --real` says more); each pytest attempt's "
                              "device check ends infra",
                              e.msg ? e.msg : "the TPU checks failed");
    tpuci__message(run, msg);
    free(msg);
  }
  tpuci__err_clear(&e);
  tpuci__buf_free(&b);
}
