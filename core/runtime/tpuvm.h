/* Whether this machine is a TPU VM, for `tpuci doctor --real`: the
 * device nodes a TPU driver makes, what the Compute Engine metadata
 * server (or, without one, the environment) says of the slice, and
 * whether the plan's real topologies match it. Synchronous, bounded:
 * the metadata server gets 2 s. */
#ifndef TPUCI_RUNTIME_TPUVM_H
#define TPUCI_RUNTIME_TPUVM_H

#include "base/util.h"
#include "plan/plan.h"

/* The metadata server: $GCE_METADATA_HOST (host[:port], as Google's
 * client libraries read it), else metadata.google.internal. */
#define TPUCI__METADATA_DEFAULT "metadata.google.internal"

/* Appends "ok ...", "warn ...", "FAIL ..." lines to `report` (as the
 * engine doctors do). What the machine is comes from the metadata server:
 * a Cloud TPU VM's `accelerator-type` (or `tpu-env`'s ACCELERATOR_TYPE);
 * else a Compute Engine instance's `machine-type`, which for TPU7x and
 * later (no Cloud TPU API nodes) is a TPU machine type such as
 * tpu7x-standard-4t; else TPU_ACCELERATOR_TYPE. `plan` may be NULL; with
 * one, each real topology of a selected instance is compared with the
 * machine's accelerator type, or its machine type when only that is known.
 * Returns 0, or TPUCI_EENGINE when the machine does not look like a TPU
 * VM (no TPU device node, or nothing says which slice it is), err then
 * naming what is missing. */
int tpuci__tpuvm_doctor(const tpuci__plan_t *plan, tpuci__buf_t *report, tpuci__err_t *err);

/* The value of `key` in the metadata's `tpu-env` text (lines of
 * "KEY: 'value'", quotes optional): a new string, or NULL when it has
 * no such line. */
char *tpuci__tpu_env_value(const char *text, const char *key);

#endif /* TPUCI_RUNTIME_TPUVM_H */
