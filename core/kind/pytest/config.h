/* What the plan holds of a pytest instance, and how a job's pytest
 * record makes it: the kind's loader (spec.c), which core/spec/ calls
 * through kind/kinds.c's row (plan/kind_spec.h). */
#ifndef TPUCI_PYTEST_CONFIG_H
#define TPUCI_PYTEST_CONFIG_H

#include "plan/kind_spec.h"
#include "plan/plan.h"

/* The pytest record's loader: its key "pytest", its parts
 * (pytest.per_chip: one per chip) and each instance's record. */
extern const tpuci__kind_spec_t tpuci__pytest_spec;

#endif /* TPUCI_PYTEST_CONFIG_H */
