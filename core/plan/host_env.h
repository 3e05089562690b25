/* What each emulated host of an instance gets from its topology: the
 * slice (hosts, chips, the emulation) and each host's environment. Pure:
 * the plan's data in, strings out (but for real hardware, which passes
 * this process's TPU environment on). Runtimes add tpuci's own variables
 * (runtime/runtime.h, tpuci__attempt_host_env). */
#ifndef TPUCI_PLAN_HOST_ENV_H
#define TPUCI_PLAN_HOST_ENV_H

#include "base/util.h"
#include "plan/plan.h"
#include "plan/topology.h"

/* The name of host `host` of a gang: "worker-<host>" (its container's
 * hostname and network alias, and its entry in TPU_WORKER_HOSTNAMES). */
#define TPUCI__GANG_HOST_FMT "worker-%d"

/* The TPU runtime port of a host's first process; process i of
 * pytest.per_chip gets this + i (torch_xla's base port, tpu-topology.md
 * 4b: TPU_PROCESS_PORT). */
#define TPUCI__TPU_PROCESS_PORT 8476

/* The slice of a plan topology: its resolved numbers resolved again (the
 * same slice the loader checked). Returns 0, or TPUCI_ESPEC with err
 * filled ("spec.lua:3: topology 'x': ..."). */
int tpuci__topology_slice(const tpuci__topology_t *t, tpuci__slice_t *s,
                          tpuci__err_t *err);

/* What host `host` of an instance's slice gets from its topology: the
 * slice's variables (tpuci__slice_host_env, hostnames "worker-0".. for a
 * gang unless `hostnames` (NULL, or s->hosts names in worker order:
 * a slice's real workers) names them, "localhost" for one host), then
 * TPUCI_HOST=<host> and
 * TPUCI_HOSTS=<hosts>. On real hardware (emulate "real") the
 * variables of this process's environment that TPU software reads (names
 * starting TPU_, CLOUD_TPU_, LIBTPU_, PJRT_, XLA_, MEGASCALE_, and
 * ALLOW_MULTIPLE_LIBTPU_LOAD) come too, as they are, but for names that
 * are not [A-Za-z_][A-Za-z0-9_]* and this machine's identity in its
 * slice (TPU_WORKER_ID, CLOUD_TPU_TASK_ID, TPU_HOSTNAME_OVERRIDE,
 * MEGASCALE_SLICE_ID: each host has its own). A pytest.per_chip
 * instance (shard i of N) is process i - 1 on chip i - 1: TPU_VISIBLE_CHIPS,
 * CLOUD_TPU_TASK_ID, TPU_PROCESS_BOUNDS, TPU_CHIPS_PER_PROCESS_BOUNDS
 * (1,1,1), TPU_PROCESS_PORT, TPU_PROCESS_ADDRESSES,
 * ALLOW_MULTIPLE_LIBTPU_LOAD=1, TPUCI_CHIP, TPUCI_CHIPS, and emulated its
 * share of the CPU devices. The job's own env wins: a key the job sets is
 * left out (it reaches the host with the job's value through
 * tpuci__attempt_env). Appends to `out`; 0 or TPUCI_EUSAGE. */
int tpuci__topology_host_env(const tpuci__instance_t *inst,
                             const tpuci__slice_t *s, int host,
                             const char *const *hostnames,
                             tpuci__kvlist_t *out, tpuci__err_t *err);

#endif /* TPUCI_PLAN_HOST_ENV_H */
