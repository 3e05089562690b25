/* The command kind (kind.h): an instance runs its command, its outcome is
 * its exit status's, and every attempt runs the same. It needs none of
 * the table's operations: the scheduler's defaults are this kind. */
#include <stdlib.h>

#include "kind/kind.h"

static int tpuci__command_claims(const tpuci__instance_t *inst) {
  (void) inst;
  return 1;
}

const tpuci__kind_t tpuci__kind_command = {
    .name = "command",
    .claims = tpuci__command_claims,
};

void tpuci__attempt_result_free(tpuci__attempt_result_t *r) {
  free(r->cause);
  free(r->log_path);
  r->cause = NULL;
  r->log_path = NULL;
}
