/* What a pod gets from a job's accelerator options (ctr.c), and the
 * quantities its resources are written in. Which options a pod cannot
 * express is the caller's to refuse first (the export refuses them in
 * core/export/k8s/export.c, saying what to do): these write what the
 * others become. docs/kubernetes.md, "Accelerator options", says what
 * maps where and what is refused. */
#ifndef TPUCI_POD_CTR_H
#define TPUCI_POD_CTR_H

#include <stdint.h>
#include <yaml.h>

#include "plan/plan.h"

/* The resource a GPU count becomes (NVIDIA's device plugin). */
#define TPUCI__K8S_RESOURCE_GPU "nvidia.com/gpu"
/* The memory emptyDir that shm_size becomes, mounted at /dev/shm. */
#define TPUCI__K8S_SHM_VOLUME "tpuci-shm"

/* Quantities: bytes as "2Gi", "512Mi", "1000"; CPUs as "2", "1500m" (at
 * least 1m). New strings. */
char *tpuci__k8s_bytes(uint64_t n);
char *tpuci__k8s_cpus(double cpus);

/* The host paths of the devices a TPU pod leaves out (every device left
 * once the refusal has turned the others down), comma-separated
 * ("/dev/accel*,/dev/vfio/0"), for the tpuci.dropped-devices annotation;
 * a new string, or NULL when there are none. */
char *tpuci__k8s_dropped_devices(const tpuci__ctr_opts_t *c);

/* How many nvidia.com/gpu the container asks for: gpus' count, 0 for
 * none (the refusal has turned every other form down). */
int tpuci__k8s_gpus(const tpuci__ctr_opts_t *c);

/* Emitters, each 1 on success and 0 on an emitter error, writing
 * nothing when the options give nothing for it:
 * - the container's securityContext: privileged, capabilities add and
 *   drop (names without CAP_);
 * - its volumeMounts entry for /dev/shm (inside the sequence);
 * - the pod's volumes entry for it: emptyDir, medium Memory, sizeLimit;
 * - the pod spec's hostIPC (ipc = "host") and securityContext.sysctls. */
int tpuci__k8s_ctr_security(yaml_emitter_t *e, const tpuci__ctr_opts_t *c);
int tpuci__k8s_shm_mount(yaml_emitter_t *e, const tpuci__ctr_opts_t *c);
int tpuci__k8s_shm_volume(yaml_emitter_t *e, const tpuci__ctr_opts_t *c);
int tpuci__k8s_pod_opts(yaml_emitter_t *e, const tpuci__ctr_opts_t *c);

#endif /* TPUCI_POD_CTR_H */
