/* The table of job kinds (kinds.h). */
#include <stddef.h>

#include "kind/kinds.h"
#include "kind/pytest/config.h"
#include "kind/pytest/kind.h"

const tpuci__kind_entry_t tpuci__kinds[TPUCI__NKINDS] = {
    {.ops = &tpuci__kind_pytest,
     .spec = &tpuci__pytest_spec,
     .run_new = tpuci__pytest_kind_new,
     .run_free = tpuci__pytest_kind_free},
    {.ops = &tpuci__kind_command,
     .spec = NULL, /* no record: every job without another kind's */
     .run_new = tpuci__command_kind_new,
     .run_free = tpuci__command_kind_free},
};

void tpuci__kind_specs(const tpuci__kind_spec_t *out[TPUCI__NKINDS + 1]) {
  size_t k, n = 0;
  for (k = 0; k < TPUCI__NKINDS; k++)
    if (tpuci__kinds[k].spec != NULL) out[n++] = tpuci__kinds[k].spec;
  out[n] = NULL;
}

const tpuci__kind_entry_t *tpuci__kind_entry(const tpuci__kind_t *ops) {
  size_t k;
  for (k = 0; k < TPUCI__NKINDS; k++)
    if (tpuci__kinds[k].ops == ops) return &tpuci__kinds[k];
  return NULL;
}
