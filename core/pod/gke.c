/* What a pod of one host of a TPU type asks GKE for (see pod.h).
 *
 * tpu-topology.md 4c: GKE schedules TPU pods by the node labels
 * cloud.google.com/gke-tpu-accelerator (tpu-v4-podslice,
 * tpu-v5-lite-podslice, tpu-v5p-slice, tpu-v6e-slice, tpu7x) and
 * cloud.google.com/gke-tpu-topology (2x2x1, 2x4, 4x4, ...), and the
 * resource google.com/tpu, "<chips per VM>" (xpk system_characteristics.py,
 * the GKE device plugin, pytorch/xla's ARC runner pods in 2b:
 * google.com/tpu: 4, tpu-v4-podslice, 2x2x1 on ct4p-hightpu-4t). Every
 * value comes from the catalogue row (core/plan/topology_catalogue.yaml,
 * the same rows `tpuci topologies` shows), which names the source of
 * each; v2 and v3 have no GKE accelerator there (GKE does not offer
 * them). */
#include "pod/pod.h"

#include <string.h>

int tpuci__gke_tpu(const tpuci__tpu_type_t *row, tpuci__gke_tpu_t *out) {
  memset(out, 0, sizeof(*out));
  if (row == NULL || row->gke_accelerator == NULL) return -1;
  out->accelerator = row->gke_accelerator;
  /* The label has the chip topology, TPU_TOPOLOGY's value. */
  out->topology = row->topology;
  out->chips = row->chips_per_host;
  out->machine_type = row->machine_type;
  return 0;
}
