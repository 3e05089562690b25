/* The built-in catalogue of TPU accelerator types, lookup and suggestions.
 *
 * Every row comes from /work/shared/tpu-topology.md (below: "the doc"),
 * section 4a unless said otherwise; the `source` string of each row names
 * the doc's sources, and "inferred" marks values the doc does not state but
 * which follow from a rule it does state:
 *
 * - Host bounds = topology / chips-per-host bounds, per dimension (the GKE
 *   device plugin computes TPU_HOST_BOUNDS from "topology / chips-per-dim",
 *   doc 4b). Stated outright only for v2/v3 and v4 (xla_dist, doc 4a).
 * - Chips-per-host bounds from the device plugin's getChipsPerDim table
 *   (doc 4b): 1 -> 1,1,1; 2 -> 1,2,1; 4 -> 2,2,1; 8 -> 2,4,1. For v2/v3,
 *   xla_dist sets 2,2,1 on TPU VMs (doc 2a).
 * - Devices per host: 2 per chip on v2/v3, 1 per chip on v4 and later
 *   (torch_xla num_logical_cores_per_chip, doc 4a).
 * - v2/v3 topology strings are not in the doc: inferred as host bounds x
 *   (2,2) chips per host, written 2-D like v5e/v6e ("4x4").
 * - tpu7x: the doc gives "tpu7x-8 ... 2x2x1 ... (3D), chips/4 VMs x 4";
 *   -16 and -32 are inferred from that rule with v4/v5p's 3-D shapes. */
#include "plan/topology.h"

#include <string.h>

/* Sources, shared by the rows of one generation. */
#define SRC_V2V3                                                          \
  "tpu-topology.md 4a (torch_xla _internal/tpu.py, xla_dist: hosts, "     \
  "host bounds); 2a (xla_dist: chips-per-host bounds 2,2,1, "             \
  "TPU_NUM_DEVICES=8); topology inferred"
#define SRC_V4                                                            \
  "tpu-topology.md 4a (xpk: topology, tpu-v4-podslice/ct4p-hightpu-4t; "  \
  "xla_dist: host bounds); 4b (tpu-env metadata example for v4-16)"
#define SRC_V5P                                                           \
  "tpu-topology.md 4a (xpk: topology, hosts, tpu-v5p-slice/"              \
  "ct5p-hightpu-4t); host bounds inferred (device plugin rule, 4b)"
#define SRC_V5E_SMALL                                                     \
  "tpu-topology.md 4a (TPU v5e docs); bounds from device plugin table "   \
  "(4b)"
#define SRC_V5E_8                                                         \
  "tpu-topology.md 4a (v5e docs; xpk default 2 VMs x 4); host bounds "    \
  "inferred (device plugin rule, 4b)"
#define SRC_V5E                                                           \
  "tpu-topology.md 4a (GKE \"TPUs in GKE\": v5litepod-16 = 4 VMs x 4 "    \
  "chips; xpk); host bounds inferred (device plugin rule, 4b)"
#define SRC_V6E_SMALL                                                     \
  "tpu-topology.md 4a (TPU v6e docs); bounds from device plugin table "   \
  "(4b)"
#define SRC_V6E_8                                                         \
  "tpu-topology.md 4a (TPU v6e docs: 1 VM ct6e-standard-8t or 2 VMs "     \
  "ct6e-standard-4t); host bounds inferred (device plugin rule, 4b)"
#define SRC_V6E                                                           \
  "tpu-topology.md 4a (TPU v6e docs: 4/8/16 VMs x 4, ct6e-standard-4t); " \
  "host bounds inferred (device plugin rule, 4b)"
#define SRC_TPU7X                                                         \
  "tpu-topology.md 4a (xpk: tpu7x, tpu7x-standard-4t, 2x2x1 3-D, "        \
  "chips/4 VMs); -16/-32 shapes and host bounds inferred"

/* type, generation, hosts, chips/host, TC/chip, devices/host, topology,
 * host bounds, chips-per-host bounds, GKE accelerator, machine type,
 * source, layout, default. */
static const tpuci__tpu_type_t tpuci__catalogue[] = {
  /* v2, v3: 4 chips per host, 2 TensorCores per chip, each a device. */
  {"v2-8", "v2", 1, 4, 2, 8, "2x2", "1,1,1", "2,2,1", NULL, NULL,
   SRC_V2V3, "1x4", 1},
  {"v2-32", "v2", 4, 4, 2, 8, "4x4", "2,2,1", "2,2,1", NULL, NULL,
   SRC_V2V3, "4x4", 1},
  {"v3-8", "v3", 1, 4, 2, 8, "2x2", "1,1,1", "2,2,1", NULL, NULL,
   SRC_V2V3, "1x4", 1},
  {"v3-32", "v3", 4, 4, 2, 8, "4x4", "2,2,1", "2,2,1", NULL, NULL,
   SRC_V2V3, "4x4", 1},
  {"v3-64", "v3", 8, 4, 2, 8, "4x8", "2,4,1", "2,2,1", NULL, NULL,
   SRC_V2V3, "8x4", 1},
  {"v3-128", "v3", 16, 4, 2, 8, "8x8", "4,4,1", "2,2,1", NULL, NULL,
   SRC_V2V3, "16x4", 1},
  {"v3-256", "v3", 32, 4, 2, 8, "8x16", "4,8,1", "2,2,1", NULL, NULL,
   SRC_V2V3, "32x4", 1},
  {"v3-512", "v3", 64, 4, 2, 8, "16x16", "8,8,1", "2,2,1", NULL, NULL,
   SRC_V2V3, "64x4", 1},

  /* v4: megacore (2 TensorCores, one device per chip), 4 chips per VM. */
  {"v4-8", "v4", 1, 4, 2, 4, "2x2x1", "1,1,1", "2,2,1", "tpu-v4-podslice",
   "ct4p-hightpu-4t", SRC_V4, "1x4", 1},
  {"v4-16", "v4", 2, 4, 2, 4, "2x2x2", "1,1,2", "2,2,1", "tpu-v4-podslice",
   "ct4p-hightpu-4t", SRC_V4, "2x4", 1},
  {"v4-32", "v4", 4, 4, 2, 4, "2x2x4", "1,1,4", "2,2,1", "tpu-v4-podslice",
   "ct4p-hightpu-4t", SRC_V4, "4x4", 1},
  {"v4-64", "v4", 8, 4, 2, 4, "2x4x4", "1,2,4", "2,2,1", "tpu-v4-podslice",
   "ct4p-hightpu-4t", SRC_V4, "8x4", 1},
  {"v4-128", "v4", 16, 4, 2, 4, "4x4x4", "2,2,4", "2,2,1",
   "tpu-v4-podslice", "ct4p-hightpu-4t", SRC_V4, "16x4", 1},

  /* v5p: megacore, 4 chips per VM. */
  {"v5p-8", "v5p", 1, 4, 2, 4, "2x2x1", "1,1,1", "2,2,1", "tpu-v5p-slice",
   "ct5p-hightpu-4t", SRC_V5P, "1x4", 1},
  {"v5p-16", "v5p", 2, 4, 2, 4, "2x2x2", "1,1,2", "2,2,1", "tpu-v5p-slice",
   "ct5p-hightpu-4t", SRC_V5P, "2x4", 1},
  {"v5p-32", "v5p", 4, 4, 2, 4, "2x2x4", "1,1,4", "2,2,1", "tpu-v5p-slice",
   "ct5p-hightpu-4t", SRC_V5P, "4x4", 1},

  /* v5e (v5litepod): 1 TensorCore per chip; -N counts chips. */
  {"v5litepod-1", "v5e", 1, 1, 1, 1, "1x1", "1,1,1", "1,1,1",
   "tpu-v5-lite-podslice", "ct5lp-hightpu-1t", SRC_V5E_SMALL, "1x1", 1},
  {"v5litepod-4", "v5e", 1, 4, 1, 4, "2x2", "1,1,1", "2,2,1",
   "tpu-v5-lite-podslice", "ct5lp-hightpu-4t", SRC_V5E_SMALL, "1x4", 1},
  /* Two real layouts; xpk's default (2 VMs x 4 chips) is ours. */
  {"v5litepod-8", "v5e", 2, 4, 1, 4, "2x4", "1,2,1", "2,2,1",
   "tpu-v5-lite-podslice", "ct5lp-hightpu-4t", SRC_V5E_8, "2x4", 1},
  {"v5litepod-8", "v5e", 1, 8, 1, 8, "2x4", "1,1,1", "2,4,1",
   "tpu-v5-lite-podslice", "ct5lp-hightpu-8t", SRC_V5E_8, "1x8", 0},
  {"v5litepod-16", "v5e", 4, 4, 1, 4, "4x4", "2,2,1", "2,2,1",
   "tpu-v5-lite-podslice", "ct5lp-hightpu-4t", SRC_V5E, "4x4", 1},
  {"v5litepod-32", "v5e", 8, 4, 1, 4, "4x8", "2,4,1", "2,2,1",
   "tpu-v5-lite-podslice", "ct5lp-hightpu-4t", SRC_V5E, "8x4", 1},
  {"v5litepod-64", "v5e", 16, 4, 1, 4, "8x8", "4,4,1", "2,2,1",
   "tpu-v5-lite-podslice", "ct5lp-hightpu-4t", SRC_V5E, "16x4", 1},
  {"v5litepod-256", "v5e", 64, 4, 1, 4, "16x16", "8,8,1", "2,2,1",
   "tpu-v5-lite-podslice", "ct5lp-hightpu-4t", SRC_V5E, "64x4", 1},

  /* v6e: treated as lite (1 TensorCore per chip); -N counts chips. */
  {"v6e-1", "v6e", 1, 1, 1, 1, "1x1", "1,1,1", "1,1,1", "tpu-v6e-slice",
   "ct6e-standard-1t", SRC_V6E_SMALL, "1x1", 1},
  {"v6e-4", "v6e", 1, 4, 1, 4, "2x2", "1,1,1", "2,2,1", "tpu-v6e-slice",
   "ct6e-standard-4t", SRC_V6E_SMALL, "1x4", 1},
  /* Two real layouts. The doc names no xpk default for v6e-8; ours is the
   * single VM: the v6e docs list it first, JAX's launcher table treats an
   * 8-chip 2x4 v6e as one host, and one host works with every emulate mode
   * (PJRT's CPU client cannot span hosts). */
  {"v6e-8", "v6e", 1, 8, 1, 8, "2x4", "1,1,1", "2,4,1", "tpu-v6e-slice",
   "ct6e-standard-8t", SRC_V6E_8, "1x8", 1},
  {"v6e-8", "v6e", 2, 4, 1, 4, "2x4", "1,2,1", "2,2,1", "tpu-v6e-slice",
   "ct6e-standard-4t", SRC_V6E_8, "2x4", 0},
  {"v6e-16", "v6e", 4, 4, 1, 4, "4x4", "2,2,1", "2,2,1", "tpu-v6e-slice",
   "ct6e-standard-4t", SRC_V6E, "4x4", 1},
  {"v6e-32", "v6e", 8, 4, 1, 4, "4x8", "2,4,1", "2,2,1", "tpu-v6e-slice",
   "ct6e-standard-4t", SRC_V6E, "8x4", 1},
  {"v6e-64", "v6e", 16, 4, 1, 4, "8x8", "4,4,1", "2,2,1", "tpu-v6e-slice",
   "ct6e-standard-4t", SRC_V6E, "16x4", 1},

  /* tpu7x: 2 TensorCores per chip, 4 chips per VM, 3-D; -N counts TCs.
   * One device per chip by torch_xla's "v4 and later" rule (weak: the doc
   * calls only v4 and v5p megacore). */
  {"tpu7x-8", "tpu7x", 1, 4, 2, 4, "2x2x1", "1,1,1", "2,2,1", "tpu7x",
   "tpu7x-standard-4t", SRC_TPU7X, "1x4", 1},
  {"tpu7x-16", "tpu7x", 2, 4, 2, 4, "2x2x2", "1,1,2", "2,2,1", "tpu7x",
   "tpu7x-standard-4t", SRC_TPU7X, "2x4", 1},
  {"tpu7x-32", "tpu7x", 4, 4, 2, 4, "2x2x4", "1,1,4", "2,2,1", "tpu7x",
   "tpu7x-standard-4t", SRC_TPU7X, "4x4", 1},
};

#define TPUCI__NCATALOGUE (sizeof(tpuci__catalogue) / sizeof(tpuci__catalogue[0]))

size_t tpuci__tpu_catalogue_size(void) { return TPUCI__NCATALOGUE; }

const tpuci__tpu_type_t *tpuci__tpu_catalogue_at(size_t i) {
  return i < TPUCI__NCATALOGUE ? &tpuci__catalogue[i] : NULL;
}

const tpuci__tpu_type_t *tpuci__tpu_find(const char *type, int hosts) {
  size_t i;
  if (type == NULL) return NULL;
  for (i = 0; i < TPUCI__NCATALOGUE; i++) {
    const tpuci__tpu_type_t *t = &tpuci__catalogue[i];
    if (strcmp(t->type, type) != 0) continue;
    if (hosts == 0 ? t->is_default_layout : t->hosts == hosts) return t;
  }
  return NULL;
}

const tpuci__tpu_type_t *tpuci__tpu_find_layout(const char *type,
                                                const char *layout) {
  size_t i;
  if (type == NULL) return NULL;
  if (layout == NULL) return tpuci__tpu_find(type, 0);
  for (i = 0; i < TPUCI__NCATALOGUE; i++) {
    const tpuci__tpu_type_t *t = &tpuci__catalogue[i];
    if (strcmp(t->type, type) == 0 && strcmp(t->layout, layout) == 0)
      return t;
  }
  return NULL;
}

int tpuci__tpu_layout_count(const char *type) {
  size_t i;
  int n = 0;
  if (type == NULL) return 0;
  for (i = 0; i < TPUCI__NCATALOGUE; i++)
    if (strcmp(tpuci__catalogue[i].type, type) == 0) n++;
  return n;
}

const char *tpuci__tpu_suggest(const char *type) {
  const char *best = NULL;
  size_t i, cap, best_d, best_p;

  if (type == NULL || *type == '\0') return NULL;
  if (tpuci__tpu_find(type, 0) != NULL) return NULL;
  /* "v5e-16" is what people call v5litepod-16 (jax device kind "TPU v5e",
   * doc 3); the accelerator type says v5litepod. */
  if (strncmp(type, "v5e-", 4) == 0) {
    char want[64];
    const tpuci__tpu_type_t *t;
    if (strlen(type) < sizeof(want) - 8) {
      memcpy(want, "v5litepod-", 10);
      strcpy(want + 10, type + 4);
      t = tpuci__tpu_find(want, 0);
      if (t != NULL) return t->type;
    }
  }
  cap = strlen(type) > 6 ? 3 : 2;
  best_d = cap + 1;
  best_p = 0;
  for (i = 0; i < TPUCI__NCATALOGUE; i++) {
    const char *name = tpuci__catalogue[i].type;
    size_t d = tpuci__edit_distance(type, name, cap), p = 0;
    while (type[p] && type[p] == name[p]) p++;
    /* Ties go to the longer common prefix ("v5p-64": v5p-8, not v3-64),
     * then to the earlier row. */
    if (d < best_d || (d == best_d && d <= cap && p > best_p)) {
      best_d = d;
      best_p = p;
      best = name;
    }
  }
  return best;
}
