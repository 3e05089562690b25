/* The table of job kinds (kinds.h). */
#include <stddef.h>

#include "kind/kinds.h"
#include "kind/pytest/kind.h"

static const char *const tpuci__pytest_keys[] = {"pytest", NULL};
static const char *const tpuci__command_keys[] = {NULL};

const tpuci__kind_entry_t tpuci__kinds[TPUCI__NKINDS] = {
    {.ops = &tpuci__kind_pytest,
     .spec_keys = tpuci__pytest_keys,
     .run_new = tpuci__pytest_kind_new,
     .run_free = tpuci__pytest_kind_free},
    {.ops = &tpuci__kind_command,
     .spec_keys = tpuci__command_keys,
     .run_new = tpuci__command_kind_new,
     .run_free = tpuci__command_kind_free},
};

const tpuci__kind_entry_t *tpuci__kind_entry(const tpuci__kind_t *ops) {
  size_t k;
  for (k = 0; k < TPUCI__NKINDS; k++)
    if (tpuci__kinds[k].ops == ops) return &tpuci__kinds[k];
  return NULL;
}
