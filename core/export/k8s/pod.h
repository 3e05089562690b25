/* What a pod of the Kubernetes export gets from a job's accelerator
 * options (pod.c), and the quantities its resources are written in:
 * private to core/export/k8s/. docs/kubernetes.md, "Accelerator
 * options", says what maps where and what is refused. */
#ifndef TPUCI_K8S_POD_H
#define TPUCI_K8S_POD_H

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

/* Why the options cannot be exported: a new string naming the key
 * ("ulimits: a pod spec has no resource limits ..."), or NULL. `tpu`:
 * the pod runs on a GKE TPU slice, whose google.com/tpu resource gives
 * it the TPU's device files, so devices under /dev/accel and /dev/vfio
 * are left out (tpuci__k8s_dropped_devices) instead of refused. */
char *tpuci__k8s_ctr_refusal(const tpuci__ctr_opts_t *c, int tpu);

/* The host paths of the devices a TPU pod leaves out, comma-separated
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

#endif /* TPUCI_K8S_POD_H */
