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
int tpuci__topology_slice(const tpuci__topology_t *t, tpuci__slice_t *s, tpuci__err_t *err);

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
int tpuci__topology_host_env(const tpuci__instance_t *inst, const tpuci__slice_t *s, int host,
                             const char *const *hostnames, tpuci__kvlist_t *out, tpuci__err_t *err);

/* What the device check of an instance expects each of its processes
 * to see (docs/pytest.md, "The device check"). */
typedef struct {
  const char *frameworks; /* "auto", "jax", "torch_xla": expect_devices */
  const char *emulated;   /* the one framework the emulation is for, or NULL */
  const char *platform;   /* "tpu" (real hardware) or "cpu" (emulated) */
  int devices;            /* devices one process sees */
  int chips;              /* the chips they are (real), or emulate */
} tpuci__devices_expect_t;

/* Whether instance `inst` (of plan `p`) has a device check, and what it
 * expects: 1 with `out` filled; 0 when it has none (expect_devices off,
 * no topology, or an emulation whose framework expect_devices leaves
 * out: "jax" checks the jax emulation and real hardware, "torch_xla" the
 * pjrt emulation and real hardware; "none" and "xrt" emulate nothing it
 * can count); or TPUCI_ESPEC with err (the topology does not resolve).
 * Under emulation a framework sees the host's emulated devices, or with
 * pytest.per_chip its process's share; on real hardware the host's TPU
 * devices, or one chip's with pytest.per_chip. */
int tpuci__devices_expect(const tpuci__plan_t *p, const tpuci__instance_t *inst,
                          tpuci__devices_expect_t *out, tpuci__err_t *err);

/* The same as the one argument the check takes ("FRAMEWORKS PLATFORM
 * DEVICES CHIPS": "jax?,torch_xla? tpu 4 4"; FRAMEWORKS the ones to ask,
 * a "?" after one that is asked only if it imports), a new string; NULL
 * when there is no check or it fails to resolve (the plan was checked
 * when it was made). */
char *tpuci__devices_arg(const tpuci__plan_t *p, const tpuci__instance_t *inst);

#endif /* TPUCI_PLAN_HOST_ENV_H */
