/* Runtime "ssh": a gang's hosts are the workers of a `hosts` declaration,
 * each reached with the system's OpenSSH client (docs/ssh.md).
 *
 * The plan, the spec checks and the documentation are in place; the
 * driver that runs the workers is not built yet, so check() refuses a
 * run before anything starts (exit 2) and says so. */
#include <stdio.h>
#include <string.h>

#include "runtime/ssh/ssh.h"

int tpuci__runtime_ssh_check(const tpuci__plan_t *plan, tpuci__err_t *err) {
  size_t i;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *in = &plan->instances[i];
    if (!in->selected || in->runtime != TPUCI__RUNTIME_SSH) continue;
    return tpuci__err_set(err, TPUCI_ESPEC,
                          "%s: job '%s': runtime 'ssh': running over SSH is not "
                          "available in this build yet (`tpuci plan` shows the "
                          "workers; docs/ssh.md)", in->where, in->job);
  }
  return 0;
}

int tpuci__runtime_ssh_new(uv_loop_t *loop, const tpuci__runtime_opts_t *opts,
                           tpuci__runtime_t **out, tpuci__err_t *err) {
  (void) loop;
  (void) opts;
  *out = NULL;
  return tpuci__err_set(err, TPUCI_ESPEC,
                        "runtime 'ssh': running over SSH is not available in "
                        "this build yet (docs/ssh.md)");
}
