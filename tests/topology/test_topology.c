/* The TPU catalogue, resolved slices and per-host environments.
 *
 * The expected values below are written by hand from
 * /work/shared/tpu-topology.md ("the doc"), section 4a's accelerator table,
 * 4b's variables (device plugin chips-per-dim table, v4-16 tpu-env
 * example) and 2a/3 for the emulation switches; they are not computed by
 * the code under test. Where the doc states a rule rather than a value
 * (host bounds = topology / chips-per-host bounds), the value is worked
 * out by hand in the comment of the row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan/topology.h"

typedef struct {
  const char *type, *layout;
  int is_default;
  int hosts, chips_per_host, cores_per_chip, devices_per_host;
  const char *topology, *host_bounds, *chips_per_host_bounds;
  int has_process_bounds; /* v4 and later, not tpu7x */
  const char *gke, *machine;
} expect_row_t;

/* clang-format off */
static const expect_row_t rows[] = {
  /* 4a: v2-8/v3-8 "2 TC/chip, 4 chips, host bounds 1,1,1, 1 x 4 (8 cores)";
   * 2a: xla_dist "TPU_CHIPS_PER_HOST_BOUNDS=2,2,1", "v2/v3=8" devices.
   * Topology: not in the doc, 1,1,1 hosts x 2,2 chips = 2x2 (inferred). */
  {"v2-8",   "1x4",  1, 1,  4, 2, 8, "2x2",   "1,1,1", "2,2,1", 0, NULL, NULL},
  /* 4a: v2-32/v3-32 "16 chips, host bounds 2,2,1, 4 x 4". */
  {"v2-32",  "4x4",  1, 4,  4, 2, 8, "4x4",   "2,2,1", "2,2,1", 0, NULL, NULL},
  {"v3-8",   "1x4",  1, 1,  4, 2, 8, "2x2",   "1,1,1", "2,2,1", 0, NULL, NULL},
  {"v3-32",  "4x4",  1, 4,  4, 2, 8, "4x4",   "2,2,1", "2,2,1", 0, NULL, NULL},
  /* 4a: "v3-64/128/256/512: 2,4,1 / 4,4,1 / 4,8,1 / 8,8,1, 8/16/32/64 x 4". */
  {"v3-64",  "8x4",  1, 8,  4, 2, 8, "4x8",   "2,4,1", "2,2,1", 0, NULL, NULL},
  {"v3-128", "16x4", 1, 16, 4, 2, 8, "8x8",   "4,4,1", "2,2,1", 0, NULL, NULL},
  {"v3-256", "32x4", 1, 32, 4, 2, 8, "8x16",  "4,8,1", "2,2,1", 0, NULL, NULL},
  {"v3-512", "64x4", 1, 64, 4, 2, 8, "16x16", "8,8,1", "2,2,1", 0, NULL, NULL},
  /* 4a: v4 "2 (megacore)", tpu-v4-podslice / ct4p-hightpu-4t; v4-8 2x2x1
   * 1 x 4 (xla_dist 1,1,1); v4-16 2x2x2 2 x 4 (1,1,2); v4-32 2x2x4 4 x 4
   * (1,1,4); v4-64/128 2x4x4/4x4x4, 8/16 x 4 (1,2,4 / 2,2,4). 4b tpu-env:
   * CHIPS_PER_HOST_BOUNDS 2,2,1, TPU_PROCESS_BOUNDS = HOST_BOUNDS. */
  {"v4-8",   "1x4",  1, 1,  4, 2, 4, "2x2x1", "1,1,1", "2,2,1", 1, "tpu-v4-podslice", "ct4p-hightpu-4t"},
  {"v4-16",  "2x4",  1, 2,  4, 2, 4, "2x2x2", "1,1,2", "2,2,1", 1, "tpu-v4-podslice", "ct4p-hightpu-4t"},
  {"v4-32",  "4x4",  1, 4,  4, 2, 4, "2x2x4", "1,1,4", "2,2,1", 1, "tpu-v4-podslice", "ct4p-hightpu-4t"},
  {"v4-64",  "8x4",  1, 8,  4, 2, 4, "2x4x4", "1,2,4", "2,2,1", 1, "tpu-v4-podslice", "ct4p-hightpu-4t"},
  {"v4-128", "16x4", 1, 16, 4, 2, 4, "4x4x4", "2,2,4", "2,2,1", 1, "tpu-v4-podslice", "ct4p-hightpu-4t"},
  /* 4a: v5p-8/16/32 "2 (megacore), 4/8/16 chips, 2x2x1/2x2x2/2x2x4,
   * 1/2/4 x 4, tpu-v5p-slice / ct5p-hightpu-4t". Host bounds by hand:
   * 2x2x2 / 2,2,1 = 1,1,2; 2x2x4 / 2,2,1 = 1,1,4. */
  {"v5p-8",  "1x4",  1, 1,  4, 2, 4, "2x2x1", "1,1,1", "2,2,1", 1, "tpu-v5p-slice", "ct5p-hightpu-4t"},
  {"v5p-16", "2x4",  1, 2,  4, 2, 4, "2x2x2", "1,1,2", "2,2,1", 1, "tpu-v5p-slice", "ct5p-hightpu-4t"},
  {"v5p-32", "4x4",  1, 4,  4, 2, 4, "2x2x4", "1,1,4", "2,2,1", 1, "tpu-v5p-slice", "ct5p-hightpu-4t"},
  /* 4a: v5litepod-1 "1 chip, 1x1, 1 VM, ct5lp-hightpu-1t"; -4 "2x2, 1 VM,
   * ct5lp-hightpu-4t"; 4b chips-per-dim 1 -> 1,1,1, 4 -> 2,2,1. */
  {"v5litepod-1",  "1x1", 1, 1, 1, 1, 1, "1x1", "1,1,1", "1,1,1", 1, "tpu-v5-lite-podslice", "ct5lp-hightpu-1t"},
  {"v5litepod-4",  "1x4", 1, 1, 4, 1, 4, "2x2", "1,1,1", "2,2,1", 1, "tpu-v5-lite-podslice", "ct5lp-hightpu-4t"},
  /* 4a: v5litepod-8 "2x4, 1 VM x 8 (ct5lp-hightpu-8t) or 2 VMs x 4
   * (ct5lp-hightpu-4t, xpk default)". 8 -> 2,4,1; 2x4 / 2,2,1 = 1,2,1. */
  {"v5litepod-8",  "2x4", 1, 2, 4, 1, 4, "2x4", "1,2,1", "2,2,1", 1, "tpu-v5-lite-podslice", "ct5lp-hightpu-4t"},
  {"v5litepod-8",  "1x8", 0, 1, 8, 1, 8, "2x4", "1,1,1", "2,4,1", 1, "tpu-v5-lite-podslice", "ct5lp-hightpu-8t"},
  /* 4a: v5litepod-16/32/64/256 "4x4/4x8/8x8/16x16, 4/8/16/64 VMs x 4,
   * ct5lp-hightpu-4t". 4x4/2,2 = 2,2,1; 4x8 = 2,4,1; 8x8 = 4,4,1;
   * 16x16 = 8,8,1. */
  {"v5litepod-16",  "4x4",  1, 4,  4, 1, 4, "4x4",   "2,2,1", "2,2,1", 1, "tpu-v5-lite-podslice", "ct5lp-hightpu-4t"},
  {"v5litepod-32",  "8x4",  1, 8,  4, 1, 4, "4x8",   "2,4,1", "2,2,1", 1, "tpu-v5-lite-podslice", "ct5lp-hightpu-4t"},
  {"v5litepod-64",  "16x4", 1, 16, 4, 1, 4, "8x8",   "4,4,1", "2,2,1", 1, "tpu-v5-lite-podslice", "ct5lp-hightpu-4t"},
  {"v5litepod-256", "64x4", 1, 64, 4, 1, 4, "16x16", "8,8,1", "2,2,1", 1, "tpu-v5-lite-podslice", "ct5lp-hightpu-4t"},
  /* 4a: v6e-1/-4 "1x1 / 2x2, 1 VM, tpu-v6e-slice, ct6e-standard-1t/-4t";
   * v6e-8 "2x4, 1 VM (ct6e-standard-8t) or 2 VMs (ct6e-standard-4t)"
   * (default: the single VM, see docs/topology.md); v6e-16/32/64
   * "4x4/4x8/8x8, 4/8/16 VMs x 4 (ct6e-standard-4t)". */
  {"v6e-1",  "1x1",  1, 1,  1, 1, 1, "1x1", "1,1,1", "1,1,1", 1, "tpu-v6e-slice", "ct6e-standard-1t"},
  {"v6e-4",  "1x4",  1, 1,  4, 1, 4, "2x2", "1,1,1", "2,2,1", 1, "tpu-v6e-slice", "ct6e-standard-4t"},
  {"v6e-8",  "1x8",  1, 1,  8, 1, 8, "2x4", "1,1,1", "2,4,1", 1, "tpu-v6e-slice", "ct6e-standard-8t"},
  {"v6e-8",  "2x4",  0, 2,  4, 1, 4, "2x4", "1,2,1", "2,2,1", 1, "tpu-v6e-slice", "ct6e-standard-4t"},
  {"v6e-16", "4x4",  1, 4,  4, 1, 4, "4x4", "2,2,1", "2,2,1", 1, "tpu-v6e-slice", "ct6e-standard-4t"},
  {"v6e-32", "8x4",  1, 8,  4, 1, 4, "4x8", "2,4,1", "2,2,1", 1, "tpu-v6e-slice", "ct6e-standard-4t"},
  {"v6e-64", "16x4", 1, 16, 4, 1, 4, "8x8", "4,4,1", "2,2,1", 1, "tpu-v6e-slice", "ct6e-standard-4t"},
  /* 4a: tpu7x "2 TC/chip, tpu7x-8 = 4 chips, 2x2x1 (3D), chips/4 VMs x 4
   * (tpu7x-standard-4t), label tpu7x"; -16/-32 by the same rule with
   * v4/v5p's shapes (inferred). No process bounds: 4b "tpu7x appends ,2". */
  {"tpu7x-8",  "1x4", 1, 1, 4, 2, 4, "2x2x1", "1,1,1", "2,2,1", 0, "tpu7x", "tpu7x-standard-4t"},
  {"tpu7x-16", "2x4", 1, 2, 4, 2, 4, "2x2x2", "1,1,2", "2,2,1", 0, "tpu7x", "tpu7x-standard-4t"},
  {"tpu7x-32", "4x4", 1, 4, 4, 2, 4, "2x2x4", "1,1,4", "2,2,1", 0, "tpu7x", "tpu7x-standard-4t"},
};
/* clang-format on */

#define NROWS (sizeof(rows) / sizeof(rows[0]))

static void check_env(const tpuci__kvlist_t *env, const char *key,
                      const char *want, const char *ctx) {
  const char *got = tpuci__kv_get(env, key);
  if (want == NULL && got == NULL) return;
  if (want == NULL || got == NULL || strcmp(want, got) != 0) {
    print_error("%s: %s: want %s, got %s\n", ctx, key, want ? want : "(unset)",
                got ? got : "(unset)");
    fail();
  }
}

static void check_env_int(const tpuci__kvlist_t *env, const char *key,
                          int want, const char *ctx) {
  char num[16];
  snprintf(num, sizeof(num), "%d", want);
  check_env(env, key, num, ctx);
}

/* "worker-0,worker-1,...", or "localhost" for one host (4b: the device
 * plugin sets localhost single-host). */
static char *want_hostnames(int hosts) {
  tpuci__buf_t b;
  int i;
  if (hosts == 1) return tpuci__strdup("localhost");
  tpuci__buf_init(&b);
  for (i = 0; i < hosts; i++) tpuci__buf_addf(&b, "%sworker-%d", i ? "," : "", i);
  return tpuci__buf_steal(&b);
}

static tpuci__slice_t resolve_row(const expect_row_t *x, const char *emulate) {
  tpuci__slice_t s;
  tpuci__slice_req_t r;
  tpuci__err_t err = {0, NULL};
  memset(&r, 0, sizeof(r));
  r.name = x->type;
  r.layout = x->layout;
  r.emulate = emulate;
  if (tpuci__slice_resolve(&s, &r, &err) != 0) {
    print_error("%s:%s: %s\n", x->type, x->layout, err.msg);
    fail();
  }
  return s;
}

/* ------------------------------------------------------------------ */

static void test_catalogue_rows(void **state) {
  size_t i, j, found;
  (void) state;
  assert_int_equal(tpuci__tpu_catalogue_size(), NROWS);
  assert_null(tpuci__tpu_catalogue_at(NROWS));
  for (i = 0; i < NROWS; i++) {
    const expect_row_t *x = &rows[i];
    const tpuci__tpu_type_t *t = tpuci__tpu_find_layout(x->type, x->layout);
    if (t == NULL) {
      print_error("%s:%s missing\n", x->type, x->layout);
      fail();
    }
    assert_string_equal(t->type, x->type);
    assert_int_equal(t->is_default_layout, x->is_default);
    assert_int_equal(t->hosts, x->hosts);
    assert_int_equal(t->chips_per_host, x->chips_per_host);
    assert_int_equal(t->cores_per_chip, x->cores_per_chip);
    assert_int_equal(t->devices_per_host, x->devices_per_host);
    assert_string_equal(t->topology, x->topology);
    assert_string_equal(t->host_bounds, x->host_bounds);
    assert_string_equal(t->chips_per_host_bounds, x->chips_per_host_bounds);
    if (x->gke == NULL) {
      assert_null(t->gke_accelerator);
      assert_null(t->machine_type);
    } else {
      assert_string_equal(t->gke_accelerator, x->gke);
      assert_string_equal(t->machine_type, x->machine);
    }
    /* A source for every value (machine_type: only on GKE). */
    for (j = 0; j < TPUCI__TPU_NSOURCES; j++) {
      if (x->gke == NULL && strcmp(tpuci__tpu_source_key(j), "machine_type") == 0)
        assert_null(t->sources[j]);
      else
        assert_true(t->sources[j] != NULL && *t->sources[j] != '\0');
    }
    assert_non_null(t->generation);
  }
  /* Every catalogue row is expected, and each type has one default. */
  for (i = 0; i < tpuci__tpu_catalogue_size(); i++) {
    const tpuci__tpu_type_t *t = tpuci__tpu_catalogue_at(i);
    int defaults = 0;
    found = 0;
    for (j = 0; j < NROWS; j++)
      if (strcmp(rows[j].type, t->type) == 0 &&
          strcmp(rows[j].layout, t->layout) == 0)
        found++;
    assert_int_equal(found, 1);
    for (j = 0; j < tpuci__tpu_catalogue_size(); j++) {
      const tpuci__tpu_type_t *o = tpuci__tpu_catalogue_at(j);
      if (strcmp(o->type, t->type) == 0) defaults += o->is_default_layout;
    }
    assert_int_equal(defaults, 1);
  }
}

/* Host 0 and the last host of every row, under every emulate mode. */
static void test_every_row_env(void **state) {
  static const char *const modes[] = {"pjrt", "xrt", "jax", "none"};
  size_t i, m;
  (void) state;
  for (i = 0; i < NROWS; i++) {
    const expect_row_t *x = &rows[i];
    char *names = want_hostnames(x->hosts);
    for (m = 0; m < 4; m++) {
      tpuci__slice_t s = resolve_row(x, modes[m]);
      int hosts[2], k;
      hosts[0] = 0;
      hosts[1] = x->hosts - 1;
      assert_int_equal(s.hosts, x->hosts);
      for (k = 0; k < 2; k++) {
        tpuci__kvlist_t env = {NULL, 0, 0};
        tpuci__err_t err = {0, NULL};
        char ctx[96], addr[64];
        const char *master = x->hosts == 1 ? "localhost" : "worker-0";
        const char *plat;
        int h = hosts[k];
        snprintf(ctx, sizeof(ctx), "%s:%s %s host %d", x->type, x->layout,
                 modes[m], h);
        assert_int_equal(tpuci__slice_host_env(&s, h, NULL, &env, &err), 0);

        check_env_int(&env, "TPU_WORKER_ID", h, ctx);
        check_env(&env, "TPU_WORKER_HOSTNAMES", names, ctx);
        check_env(&env, "TPU_ACCELERATOR_TYPE", x->type, ctx);
        check_env(&env, "TPU_TOPOLOGY", x->topology, ctx);
        check_env(&env, "TPU_HOST_BOUNDS", x->host_bounds, ctx);
        check_env(&env, "TPU_CHIPS_PER_HOST_BOUNDS", x->chips_per_host_bounds,
                  ctx);
        check_env(&env, "TPU_PROCESS_BOUNDS",
                  x->has_process_bounds ? x->host_bounds : NULL, ctx);
        check_env(&env, "TPU_CHIPS_PER_PROCESS_BOUNDS",
                  x->has_process_bounds ? x->chips_per_host_bounds : NULL,
                  ctx);
        check_env_int(&env, "CLOUD_TPU_TASK_ID", h, ctx);
        check_env(&env, "TPU_SKIP_MDS_QUERY", "true", ctx);

        check_env(&env, "PJRT_DEVICE", m == 0 ? "CPU" : NULL, ctx);
        if (m == 0 || m == 1)
          check_env_int(&env, "CPU_NUM_DEVICES", x->devices_per_host, ctx);
        else
          check_env(&env, "CPU_NUM_DEVICES", NULL, ctx);
        check_env(&env, "XRT_DEVICE_MAP",
                  m == 1 ? "CPU:0;/job:localservice/replica:0/task:0/"
                           "device:XLA_CPU:0"
                         : NULL,
                  ctx);
        check_env(&env, "XRT_WORKERS",
                  m == 1 ? "localservice:0;grpc://localhost:40934" : NULL, ctx);
        check_env(&env, "JAX_PLATFORMS", m == 2 ? "cpu" : NULL, ctx);
        if (m == 2) {
          char flags[80];
          snprintf(flags, sizeof(flags),
                   "--xla_force_host_platform_device_count=%d",
                   x->devices_per_host);
          check_env(&env, "XLA_FLAGS", flags, ctx);
          check_env_int(&env, "JAX_NUM_CPU_DEVICES", x->devices_per_host, ctx);
          snprintf(addr, sizeof(addr), "%s:8482", master);
          check_env(&env, "JAX_COORDINATOR_ADDRESS", addr, ctx);
          check_env(&env, "JAX_COORDINATOR_PORT", "8482", ctx);
          check_env_int(&env, "TPUCI_JAX_PROCESS_ID", h, ctx);
          check_env_int(&env, "TPUCI_JAX_NUM_PROCESSES", x->hosts, ctx);
        } else {
          check_env(&env, "XLA_FLAGS", NULL, ctx);
          check_env(&env, "JAX_COORDINATOR_ADDRESS", NULL, ctx);
        }
        /* Never pretend to be a TPU (doc 6). */
        plat = tpuci__kv_get(&env, "JAX_PLATFORMS");
        assert_true(plat == NULL || strstr(plat, "tpu") == NULL);

        check_env(&env, "MASTER_ADDR", master, ctx);
        check_env(&env, "MASTER_PORT", "29500", ctx);
        check_env_int(&env, "WORLD_SIZE", x->hosts, ctx);
        check_env_int(&env, "RANK", h, ctx);
        check_env_int(&env, "NODE_RANK", h, ctx);
        check_env_int(&env, "NNODES", x->hosts, ctx);
        check_env(&env, "LOCAL_RANK", "0", ctx);
        check_env_int(&env, "nnodes", x->hosts, ctx);
        check_env(&env, "nproc_per_node", "1", ctx);
        check_env_int(&env, "node_id", h, ctx);
        tpuci__kv_free(&env);
      }
      tpuci__slice_free(&s);
    }
    free(names);
  }
}

/* The doc's examples, spelled out. */
static void test_doc_examples(void **state) {
  tpuci__slice_t s;
  tpuci__kvlist_t env = {NULL, 0, 0};
  (void) state;

  /* v4-16: 2 hosts, 2x2x2, 1,1,2, 2,2,1; worker 1 last; 4 devices. The
   * tpu-env metadata example (4b) has the process bounds. */
  assert_int_equal(tpuci__slice_from_type(&s, "v4-16", 0, "pjrt", NULL), 0);
  assert_int_equal(s.hosts, 2);
  assert_int_equal(tpuci__slice_host_env(&s, 1, NULL, &env, NULL), 0);
  assert_string_equal(tpuci__kv_get(&env, "TPU_TOPOLOGY"), "2x2x2");
  assert_string_equal(tpuci__kv_get(&env, "TPU_HOST_BOUNDS"), "1,1,2");
  assert_string_equal(tpuci__kv_get(&env, "TPU_CHIPS_PER_HOST_BOUNDS"),
                      "2,2,1");
  assert_string_equal(tpuci__kv_get(&env, "TPU_PROCESS_BOUNDS"), "1,1,2");
  assert_string_equal(tpuci__kv_get(&env, "TPU_CHIPS_PER_PROCESS_BOUNDS"),
                      "2,2,1");
  assert_string_equal(tpuci__kv_get(&env, "TPU_WORKER_ID"), "1");
  assert_string_equal(tpuci__kv_get(&env, "TPU_WORKER_HOSTNAMES"),
                      "worker-0,worker-1");
  assert_string_equal(tpuci__kv_get(&env, "CPU_NUM_DEVICES"), "4");
  tpuci__kv_free(&env);
  tpuci__slice_free(&s);

  /* v3-8: one host, 8 devices (2 per chip). */
  assert_int_equal(tpuci__slice_from_type(&s, "v3-8", 0, "pjrt", NULL), 0);
  assert_int_equal(s.hosts, 1);
  assert_int_equal(tpuci__slice_host_env(&s, 0, NULL, &env, NULL), 0);
  assert_string_equal(tpuci__kv_get(&env, "CPU_NUM_DEVICES"), "8");
  assert_string_equal(tpuci__kv_get(&env, "TPU_WORKER_HOSTNAMES"), "localhost");
  tpuci__kv_free(&env);
  tpuci__slice_free(&s);

  /* v5litepod-16: 4 hosts x 4 chips, 4x4. */
  assert_int_equal(tpuci__slice_from_type(&s, "v5litepod-16", 0, NULL, NULL),
                   0);
  assert_int_equal(s.hosts, 4);
  assert_int_equal(s.chips_per_host, 4);
  assert_int_equal(s.emulate, TPUCI__EMULATE_PJRT);
  assert_string_equal(s.topology, "4x4");
  tpuci__slice_free(&s);

  /* v5litepod-8 defaults to xpk's 2 VMs x 4; hosts = 1 is 1 VM x 8. */
  assert_int_equal(tpuci__slice_from_type(&s, "v5litepod-8", 0, NULL, NULL),
                   0);
  assert_int_equal(s.hosts, 2);
  assert_string_equal(s.row->machine_type, "ct5lp-hightpu-4t");
  tpuci__slice_free(&s);
  assert_int_equal(tpuci__slice_from_type(&s, "v5litepod-8", 1, NULL, NULL),
                   0);
  assert_int_equal(s.chips_per_host, 8);
  assert_string_equal(s.row->machine_type, "ct5lp-hightpu-8t");
  assert_string_equal(s.chips_per_host_bounds, "2,4,1");
  tpuci__slice_free(&s);
}

/* The whole environment of v4-16's host 1, in order, for each mode. */
static void check_order(const tpuci__kvlist_t *env, const char *const *want) {
  size_t i;
  for (i = 0; want[i] != NULL; i++) {
    char key[64];
    const char *eq = strchr(want[i], '=');
    assert_non_null(eq);
    snprintf(key, sizeof(key), "%.*s", (int) (eq - want[i]), want[i]);
    assert_true(i < env->len);
    assert_string_equal(env->items[i].key, key);
    assert_string_equal(env->items[i].value, eq + 1);
  }
  assert_int_equal(env->len, i);
}

#define TPU_V4_16_HOST1                                                   \
  "TPU_WORKER_ID=1", "TPU_WORKER_HOSTNAMES=worker-0,worker-1",            \
      "TPU_ACCELERATOR_TYPE=v4-16", "TPU_TOPOLOGY=2x2x2",                 \
      "TPU_HOST_BOUNDS=1,1,2", "TPU_CHIPS_PER_HOST_BOUNDS=2,2,1",         \
      "TPU_PROCESS_BOUNDS=1,1,2", "TPU_CHIPS_PER_PROCESS_BOUNDS=2,2,1",   \
      "CLOUD_TPU_TASK_ID=1", "TPU_SKIP_MDS_QUERY=true"
#define TORCH_V4_16_HOST1                                                 \
  "MASTER_ADDR=worker-0", "MASTER_PORT=29500", "WORLD_SIZE=2", "RANK=1",  \
      "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=1", "NODE_RANK=1", "NNODES=2",    \
      "nnodes=2", "nproc_per_node=1", "node_id=1"

static void test_env_order(void **state) {
  static const char *const pjrt[] = {TPU_V4_16_HOST1, "PJRT_DEVICE=CPU",
                                     "CPU_NUM_DEVICES=4", TORCH_V4_16_HOST1,
                                     NULL};
  static const char *const xrt[] = {
      TPU_V4_16_HOST1,
      "XRT_DEVICE_MAP=CPU:0;/job:localservice/replica:0/task:0/device:XLA_CPU:0",
      "XRT_WORKERS=localservice:0;grpc://localhost:40934",
      "CPU_NUM_DEVICES=4", TORCH_V4_16_HOST1, NULL};
  static const char *const jax[] = {
      TPU_V4_16_HOST1,
      "JAX_PLATFORMS=cpu",
      "XLA_FLAGS=--xla_force_host_platform_device_count=4",
      "JAX_NUM_CPU_DEVICES=4",
      "JAX_COORDINATOR_ADDRESS=worker-0:8482",
      "JAX_COORDINATOR_PORT=8482",
      "JAX_CPU_COLLECTIVES_IMPLEMENTATION=gloo",
      "TPUCI_JAX_PROCESS_ID=1",
      "TPUCI_JAX_NUM_PROCESSES=2",
      TORCH_V4_16_HOST1,
      NULL};
  static const char *const none[] = {TPU_V4_16_HOST1, TORCH_V4_16_HOST1,
                                     NULL};
  static const char *const *const want[] = {pjrt, xrt, jax, none};
  static const char *const modes[] = {"pjrt", "xrt", "jax", "none"};
  int m;
  (void) state;
  for (m = 0; m < 4; m++) {
    tpuci__slice_t s;
    tpuci__kvlist_t env = {NULL, 0, 0};
    assert_int_equal(tpuci__slice_from_type(&s, "v4-16", 0, modes[m], NULL),
                     0);
    assert_int_equal(tpuci__slice_host_env(&s, 1, NULL, &env, NULL), 0);
    check_order(&env, want[m]);
    tpuci__kv_free(&env);
    tpuci__slice_free(&s);
  }
}

static void test_env_net_and_append(void **state) {
  static const char *const names[] = {"node0", "node1", "node2", "node3"};
  tpuci__gang_net_t net;
  tpuci__slice_t s;
  tpuci__kvlist_t env = {NULL, 0, 0};
  (void) state;
  memset(&net, 0, sizeof(net));
  net.hostnames = names;
  net.master_port = 9999; /* ignite's multinode script */
  net.jax_port = 10000;
  net.xrt_port = 51011;
  assert_int_equal(tpuci__slice_from_type(&s, "v5litepod-16", 0, "jax", NULL),
                   0);
  tpuci__kv_set(&env, "FOO", "bar");
  assert_int_equal(tpuci__slice_host_env(&s, 3, &net, &env, NULL), 0);
  assert_string_equal(env.items[0].key, "FOO"); /* appended after */
  assert_string_equal(env.items[1].key, "TPU_WORKER_ID");
  assert_string_equal(tpuci__kv_get(&env, "TPU_WORKER_HOSTNAMES"),
                      "node0,node1,node2,node3");
  assert_string_equal(tpuci__kv_get(&env, "MASTER_ADDR"), "node0");
  assert_string_equal(tpuci__kv_get(&env, "MASTER_PORT"), "9999");
  assert_string_equal(tpuci__kv_get(&env, "JAX_COORDINATOR_ADDRESS"),
                      "node0:10000");
  assert_string_equal(tpuci__kv_get(&env, "JAX_COORDINATOR_PORT"), "10000");
  assert_string_equal(tpuci__kv_get(&env, "TPUCI_JAX_PROCESS_ID"), "3");
  tpuci__kv_free(&env);
  tpuci__slice_free(&s);

  assert_int_equal(tpuci__slice_from_type(&s, "v3-8", 0, "xrt", NULL), 0);
  assert_int_equal(tpuci__slice_host_env(&s, 0, &net, &env, NULL), 0);
  assert_string_equal(tpuci__kv_get(&env, "XRT_WORKERS"),
                      "localservice:0;grpc://localhost:51011");
  /* A single host ignores the gang names: localhost, as on GKE. */
  assert_string_equal(tpuci__kv_get(&env, "TPU_WORKER_HOSTNAMES"), "localhost");
  assert_string_equal(tpuci__kv_get(&env, "MASTER_ADDR"), "localhost");
  tpuci__kv_free(&env);
  tpuci__slice_free(&s);
}

static void test_env_errors(void **state) {
  static const char *const bad_comma[] = {"a", "b,c"};
  static const char *const bad_empty[] = {"a", ""};
  static const char *const bad_null[] = {"a", NULL};
  static const char *const bad_colon[] = {"a:1", "b"};
  const char *const *bad[] = {bad_comma, bad_empty, bad_null, bad_colon};
  int ports[] = {-1, 65536, 100000};
  tpuci__gang_net_t net;
  tpuci__slice_t s;
  tpuci__kvlist_t env = {NULL, 0, 0};
  tpuci__err_t err = {0, NULL};
  size_t i;
  (void) state;
  assert_int_equal(tpuci__slice_from_type(&s, "v4-16", 0, "jax", NULL), 0);
  tpuci__kv_set(&env, "KEEP", "1");

  assert_int_equal(tpuci__slice_host_env(&s, 2, NULL, &env, &err),
                   TPUCI_EUSAGE);
  assert_string_equal(err.msg,
                      "host 2 is out of range (the slice has 2 hosts)");
  assert_int_equal(tpuci__slice_host_env(&s, -1, NULL, &env, &err),
                   TPUCI_EUSAGE);
  for (i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
    memset(&net, 0, sizeof(net));
    net.master_port = ports[i];
    assert_int_equal(tpuci__slice_host_env(&s, 0, &net, &env, &err),
                     TPUCI_EUSAGE);
    assert_non_null(strstr(err.msg, "master_port must be 1..65535"));
    memset(&net, 0, sizeof(net));
    net.jax_port = ports[i];
    assert_int_equal(tpuci__slice_host_env(&s, 0, &net, &env, &err),
                     TPUCI_EUSAGE);
    assert_non_null(strstr(err.msg, "jax_port"));
    memset(&net, 0, sizeof(net));
    net.xrt_port = ports[i];
    assert_int_equal(tpuci__slice_host_env(&s, 0, &net, &env, &err),
                     TPUCI_EUSAGE);
    assert_non_null(strstr(err.msg, "xrt_port"));
  }
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    memset(&net, 0, sizeof(net));
    net.hostnames = bad[i];
    assert_int_equal(tpuci__slice_host_env(&s, 0, &net, &env, &err),
                     TPUCI_EUSAGE);
    assert_non_null(strstr(err.msg, "hostname"));
  }
  /* Nothing was added by the failed calls. */
  assert_int_equal(env.len, 1);
  tpuci__err_clear(&err);
  tpuci__kv_free(&env);
  tpuci__slice_free(&s);
}

/* ------------------------------------------------------------------ */
/* Custom slices                                                       */

static void test_custom_ok(void **state) {
  tpuci__slice_t s;
  tpuci__slice_req_t r;
  tpuci__kvlist_t env = {NULL, 0, 0};
  (void) state;
  /* 4b chips-per-dim: 4 -> 2,2,1; host bounds 1,1,N; topology = product. */
  r = (tpuci__slice_req_t){
      .name = "mine", .hosts = 2, .chips_per_host = 4, .cores_per_chip = 1, .emulate = "pjrt"};
  assert_int_equal(tpuci__slice_custom(&s, &r, NULL), 0);
  assert_null(s.row);
  assert_null(s.generation);
  assert_string_equal(s.name, "mine");
  assert_string_equal(s.accelerator_type, "mine");
  assert_int_equal(s.devices_per_host, 4);
  assert_string_equal(s.chips_per_host_bounds, "2,2,1");
  assert_string_equal(s.host_bounds, "1,1,2");
  assert_string_equal(s.topology, "2x2x2");
  assert_string_equal(s.process_bounds, "1,1,2");
  assert_int_equal(tpuci__slice_host_env(&s, 1, NULL, &env, NULL), 0);
  assert_string_equal(tpuci__kv_get(&env, "TPU_ACCELERATOR_TYPE"), "mine");
  assert_string_equal(tpuci__kv_get(&env, "CPU_NUM_DEVICES"), "4");
  tpuci__kv_free(&env);
  tpuci__slice_free(&s);

  r = (tpuci__slice_req_t){.name = "one", .hosts = 1, .chips_per_host = 1, .cores_per_chip = 1};
  assert_int_equal(tpuci__slice_custom(&s, &r, NULL), 0);
  assert_string_equal(s.chips_per_host_bounds, "1,1,1");
  assert_string_equal(s.topology, "1x1x1");
  tpuci__slice_free(&s);
  r = (tpuci__slice_req_t){
      .name = "two", .hosts = 3, .chips_per_host = 2, .cores_per_chip = 2, .emulate = "jax"};
  assert_int_equal(tpuci__slice_custom(&s, &r, NULL), 0);
  assert_string_equal(s.chips_per_host_bounds, "1,2,1");
  assert_string_equal(s.host_bounds, "1,1,3");
  assert_string_equal(s.topology, "1x2x3");
  assert_int_equal(s.devices_per_host, 4); /* each TensorCore a device */
  assert_int_equal(s.emulate, TPUCI__EMULATE_JAX);
  tpuci__slice_free(&s);
  r = (tpuci__slice_req_t){
      .name = "eight", .hosts = 256, .chips_per_host = 8, .cores_per_chip = 1, .emulate = "none"};
  assert_int_equal(tpuci__slice_custom(&s, &r, NULL), 0);
  assert_string_equal(s.chips_per_host_bounds, "2,4,1");
  assert_string_equal(s.host_bounds, "1,1,256");
  assert_string_equal(s.topology, "2x4x256");
  tpuci__slice_free(&s);
}

typedef struct {
  const char *name;
  int hosts, chips, cores;
  const char *emulate;
  const char *msg;
} bad_custom_t;

static void test_custom_bad(void **state) {
  static const bad_custom_t bad[] = {
    {"c", 0, 4, 1, NULL, "hosts must be 1..256, got 0"},
    {"c", -1, 4, 1, NULL, "hosts must be 1..256, got -1"},
    {"c", 257, 4, 1, NULL, "hosts must be 1..256, got 257"},
    {"c", 2, 0, 1, NULL, "chips_per_host must be 1, 2, 4 or 8, got 0"},
    {"c", 2, 3, 1, NULL, "chips_per_host must be 1, 2, 4 or 8, got 3"},
    {"c", 2, 5, 1, NULL, "chips_per_host must be 1, 2, 4 or 8, got 5"},
    {"c", 2, 16, 1, NULL, "chips_per_host must be 1, 2, 4 or 8, got 16"},
    {"c", 2, -4, 1, NULL, "chips_per_host must be 1, 2, 4 or 8, got -4"},
    {"c", 2, 4, 0, NULL, "cores_per_chip must be 1 or 2, got 0"},
    {"c", 2, 4, 3, NULL, "cores_per_chip must be 1 or 2, got 3"},
    {"c", 2, 4, -1, NULL, "cores_per_chip must be 1 or 2, got -1"},
    {"c", 2, 4, 1, "tpu",
     "emulate must be \"pjrt\", \"xrt\", \"jax\", \"none\" or \"real\", got \"tpu\""},
    {"c", 2, 4, 1, "PJRT",
     "emulate must be \"pjrt\", \"xrt\", \"jax\", \"none\" or \"real\", got \"PJRT\""},
    {"c", 2, 4, 1, "",
     "emulate must be \"pjrt\", \"xrt\", \"jax\", \"none\" or \"real\", got \"\""},
    {NULL, 2, 4, 1, NULL, "a topology needs a name"},
    {"", 2, 4, 1, NULL, "a topology needs a name"},
    {"a b", 2, 4, 1, NULL, "name 'a b': use letters, digits, '.', '_' and '-'"},
    {"a,b", 2, 4, 1, NULL, "name 'a,b': use letters, digits, '.', '_' and '-'"},
    {"v4-8", 1, 4, 2, NULL,
     "'v4-8' is a catalogue type; a custom topology needs another name"},
    {"v4-61", 1, 4, 2, NULL,
     "unknown TPU type 'v4-61' (did you mean 'v4-64'?); a custom topology "
     "with a name this close to a catalogue type needs a base"},
  };
  size_t i;
  (void) state;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    tpuci__slice_t s;
    tpuci__err_t err = {0, NULL};
    tpuci__slice_req_t r = {.name = bad[i].name,
                            .hosts = bad[i].hosts,
                            .chips_per_host = bad[i].chips,
                            .cores_per_chip = bad[i].cores,
                            .emulate = bad[i].emulate};
    int rc = tpuci__slice_custom(&s, &r, &err);
    if (rc != TPUCI_ESPEC || err.msg == NULL ||
        strcmp(err.msg, bad[i].msg) != 0) {
      print_error("case %zu: rc %d, msg %s\n", i, rc, err.msg ? err.msg : "-");
      fail();
    }
    assert_null(s.name); /* zeroed on failure */
    assert_null(strchr(err.msg, '\n'));
    tpuci__err_clear(&err);
  }
}

/* tpuci__slice_resolve: catalogue types with overrides, bases. */
static void test_resolve(void **state) {
  tpuci__slice_t s;
  tpuci__slice_req_t r;
  tpuci__err_t err = {0, NULL};
  tpuci__strv_t w = {NULL, 0, 0};
  (void) state;

  /* A catalogue type with matching numbers is that type. */
  memset(&r, 0, sizeof(r));
  r.name = "v4-16";
  r.hosts = 2;
  r.chips_per_host = 4;
  r.cores_per_chip = 2;
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), 0);
  assert_string_equal(s.row->type, "v4-16");
  tpuci__slice_free(&s);

  /* ... and with other numbers an error naming the fix. */
  r.hosts = 3;
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), TPUCI_ESPEC);
  assert_string_equal(err.msg,
                      "v4-16 has no layout with 3 hosts (layouts: 2x4 (2 "
                      "hosts, default)); for other numbers declare a custom "
                      "topology with base = \"v4-16\"");
  r.hosts = 0;
  r.chips_per_host = 8;
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), TPUCI_ESPEC);
  assert_string_equal(err.msg,
                      "v4-16 has 4 chips per host, not 8; for other numbers "
                      "declare a custom topology with base = \"v4-16\"");
  r.chips_per_host = 0;
  r.cores_per_chip = 1;
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), TPUCI_ESPEC);
  assert_non_null(strstr(err.msg, "v4-16 has 2 TensorCores per chip, not 1"));

  /* Layouts by name, and conflicts. */
  memset(&r, 0, sizeof(r));
  r.name = "v6e-8";
  r.layout = "2x4";
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), 0);
  assert_int_equal(s.hosts, 2);
  tpuci__slice_free(&s);
  r.hosts = 1;
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), TPUCI_ESPEC);
  assert_string_equal(err.msg,
                      "layout '2x4' of v6e-8 has 2 hosts, not 1 (layouts: "
                      "1x8 (1 host, default), 2x4 (2 hosts))");
  r.hosts = 0;
  r.layout = "4x2";
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), TPUCI_ESPEC);
  assert_string_equal(err.msg,
                      "v6e-8 has no layout '4x2' (layouts: 1x8 (1 host, "
                      "default), 2x4 (2 hosts))");
  r.name = "custom";
  r.layout = "1x8";
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), TPUCI_ESPEC);
  assert_string_equal(err.msg,
                      "layout '1x8' needs a catalogue type, and 'custom' is "
                      "not one");

  /* A base with changed numbers that make another catalogue type. */
  memset(&r, 0, sizeof(r));
  r.name = "big";
  r.base = "v4-8";
  r.hosts = 4;
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), 0);
  assert_non_null(s.row);
  assert_string_equal(s.name, "big");
  assert_string_equal(s.accelerator_type, "v4-32");
  assert_string_equal(s.topology, "2x2x4");
  tpuci__slice_warnings(&s, &w);
  assert_int_equal(w.len, 1); /* only pjrt multi-host */
  tpuci__strv_free(&w);
  tpuci__slice_free(&s);

  r.base = "v5litepod-16";
  r.hosts = 2;
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), 0);
  assert_string_equal(s.accelerator_type, "v5litepod-8"); /* counts chips */
  assert_string_equal(s.host_bounds, "1,2,1");
  tpuci__slice_free(&s);

  r.base = "v5litepod-8";
  r.hosts = 1; /* the base's own 1x8 layout */
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), 0);
  assert_int_equal(s.chips_per_host, 8);
  assert_string_equal(s.row->layout, "1x8");
  tpuci__slice_free(&s);

  /* A base with numbers no catalogue row has: computed, and a warning. */
  r.base = "v4-8";
  r.hosts = 3;
  r.emulate = "jax";
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), 0);
  assert_null(s.row);
  assert_string_equal(s.generation, "v4");
  assert_string_equal(s.accelerator_type, "v4-24");
  assert_string_equal(s.host_bounds, "1,1,3");
  assert_string_equal(s.topology, "2x2x3");
  assert_int_equal(s.devices_per_host, 4); /* megacore */
  tpuci__slice_warnings(&s, &w);
  assert_int_equal(w.len, 1);
  assert_non_null(strstr(w.items[0], "not a v4 layout in the catalogue"));
  tpuci__strv_free(&w);
  tpuci__slice_free(&s);

  /* v2/v3 bases: devices per TensorCore, no process bounds. */
  memset(&r, 0, sizeof(r));
  r.name = "v3-16ish";
  r.base = "v3-8";
  r.hosts = 2;
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), 0);
  assert_string_equal(s.accelerator_type, "v3-16");
  assert_int_equal(s.devices_per_host, 8);
  assert_null(s.process_bounds);
  tpuci__slice_free(&s);

  /* Bad bases. */
  r.base = "v4-9";
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), TPUCI_ESPEC);
  assert_string_equal(err.msg,
                      "base: unknown TPU type 'v4-9' (did you mean 'v4-8'?)");
  r.base = "nothing-like-it";
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), TPUCI_ESPEC);
  assert_string_equal(err.msg, "base: unknown TPU type 'nothing-like-it'");
  r.base = "v4-8";
  r.name = "v4-16";
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), TPUCI_ESPEC);
  assert_string_equal(err.msg,
                      "'v4-16' is a catalogue type; a topology with a base "
                      "needs another name");
  r.name = "x";
  r.hosts = 300;
  assert_int_equal(tpuci__slice_resolve(&s, &r, &err), TPUCI_ESPEC);
  assert_string_equal(err.msg, "hosts must be 1..256, got 300");

  /* from_type on an unknown type suggests. */
  assert_int_equal(tpuci__slice_from_type(&s, "v5e-16", 0, NULL, &err),
                   TPUCI_ESPEC);
  assert_string_equal(err.msg, "unknown TPU type 'v5e-16' (did you mean "
                               "'v5litepod-16'?)");
  tpuci__err_clear(&err);
}

/* ------------------------------------------------------------------ */
/* Warnings                                                            */

static size_t warnings_for(const char *type, const char *emulate,
                           tpuci__strv_t *w) {
  tpuci__slice_t s;
  assert_int_equal(tpuci__slice_from_type(&s, type, 0, emulate, NULL), 0);
  tpuci__slice_warnings(&s, w);
  tpuci__slice_free(&s);
  return w->len;
}

static void test_warnings(void **state) {
  tpuci__strv_t w = {NULL, 0, 0};
  size_t i;
  (void) state;
  assert_int_equal(warnings_for("v4-16", "pjrt", &w), 1);
  assert_non_null(strstr(w.items[0], "emulate = \"pjrt\" with 2 hosts"));
  assert_non_null(strstr(w.items[0], "no cross-process coordinator"));
  assert_non_null(strstr(w.items[0], "emulate = \"jax\""));
  assert_non_null(strstr(w.items[0], "gloo"));
  assert_null(strchr(w.items[0], '\n'));
  tpuci__strv_free(&w);
  assert_int_equal(warnings_for("v4-16", "xrt", &w), 1);
  assert_non_null(strstr(w.items[0], "emulate = \"xrt\" with 2 hosts"));
  tpuci__strv_free(&w);
  assert_int_equal(warnings_for("v4-16", "jax", &w), 0);
  assert_int_equal(warnings_for("v4-16", "none", &w), 0);
  assert_int_equal(warnings_for("v4-8", "pjrt", &w), 0);
  assert_int_equal(warnings_for("v3-8", "xrt", &w), 0);
  /* Every multi-host row warns under pjrt, no single-host row does. */
  for (i = 0; i < NROWS; i++) {
    tpuci__slice_t s = resolve_row(&rows[i], "pjrt");
    tpuci__slice_warnings(&s, &w);
    assert_int_equal(w.len, rows[i].hosts > 1 ? 1 : 0);
    tpuci__strv_free(&w);
    tpuci__slice_free(&s);
  }
}

/* ------------------------------------------------------------------ */
/* Lookup and suggestions                                              */

static void test_lookup(void **state) {
  (void) state;
  assert_int_equal(tpuci__tpu_find("v5litepod-8", 0)->hosts, 2);
  assert_int_equal(tpuci__tpu_find("v5litepod-8", 1)->chips_per_host, 8);
  assert_int_equal(tpuci__tpu_find("v5litepod-8", 2)->chips_per_host, 4);
  assert_null(tpuci__tpu_find("v5litepod-8", 3));
  assert_int_equal(tpuci__tpu_find("v6e-8", 0)->hosts, 1);
  assert_string_equal(tpuci__tpu_find_layout("v6e-8", NULL)->layout, "1x8");
  assert_string_equal(tpuci__tpu_find_layout("v6e-8", "2x4")->machine_type,
                      "ct6e-standard-4t");
  assert_null(tpuci__tpu_find_layout("v6e-8", "8x1"));
  assert_null(tpuci__tpu_find("v9-8", 0));
  assert_null(tpuci__tpu_find(NULL, 0));
  assert_null(tpuci__tpu_find("V4-8", 0)); /* names are exact */
  assert_int_equal(tpuci__tpu_layout_count("v5litepod-8"), 2);
  assert_int_equal(tpuci__tpu_layout_count("v4-8"), 1);
  assert_int_equal(tpuci__tpu_layout_count("nope"), 0);
}

static void test_suggest(void **state) {
  (void) state;
  assert_string_equal(tpuci__tpu_suggest("v4-61"), "v4-64");
  assert_string_equal(tpuci__tpu_suggest("v4-9"), "v4-8");
  assert_string_equal(tpuci__tpu_suggest("v5litepod16"), "v5litepod-16");
  assert_string_equal(tpuci__tpu_suggest("v5lite-8"), "v5litepod-8");
  assert_string_equal(tpuci__tpu_suggest("v6e8"), "v6e-8");
  assert_string_equal(tpuci__tpu_suggest("tpu7x-4"), "tpu7x-8");
  assert_string_equal(tpuci__tpu_suggest("v5e-16"), "v5litepod-16");
  assert_string_equal(tpuci__tpu_suggest("v5e-256"), "v5litepod-256");
  /* v3-64 and v5p-8 are both 2 edits away: the longer common prefix wins. */
  assert_string_equal(tpuci__tpu_suggest("v5p-64"), "v5p-8");
  assert_string_equal(tpuci__tpu_suggest("v6e-65"), "v6e-64");
  assert_null(tpuci__tpu_suggest("v3-8"));  /* exact: nothing to suggest */
  assert_null(tpuci__tpu_suggest("xyz"));
  assert_null(tpuci__tpu_suggest(""));
  assert_null(tpuci__tpu_suggest(NULL));
  assert_null(tpuci__tpu_suggest("gpu-a100-80gb"));
}

static void test_emulate_names(void **state) {
  tpuci__emulate_t e;
  int i;
  (void) state;
  for (i = 0; i < TPUCI__EMULATE__COUNT; i++) {
    assert_int_equal(tpuci__emulate_parse(
                         tpuci__emulate_name((tpuci__emulate_t) i), &e), 0);
    assert_int_equal(e, i);
  }
  assert_string_equal(tpuci__emulate_name(TPUCI__EMULATE_XRT), "xrt");
  assert_int_equal(tpuci__emulate_parse("cuda", &e), -1);
  assert_int_equal(tpuci__emulate_parse(NULL, &e), -1);
}

/* ------------------------------------------------------------------ */
/* Text                                                                */

static void test_catalogue_text(void **state) {
  char *t = tpuci__tpu_catalogue_text();
  size_t i, lines = 0;
  const char *p;
  (void) state;
  assert_true(strncmp(t, "TYPE ", 5) == 0);
  for (i = 0; i < NROWS; i++) {
    char want[64];
    snprintf(want, sizeof(want), "\n%s ", rows[i].type);
    assert_non_null(strstr(t, want));
  }
  /* The header and one line per row, then a blank line and notes. */
  for (p = t; *p && !(p[0] == '\n' && p[1] == '\n'); p++)
    if (*p == '\n') lines++;
  assert_int_equal(lines + 1, NROWS + 1);
  assert_non_null(strstr(t, "v5litepod-8    2x4*"));
  free(t);
}

static void test_describe(void **state) {
  tpuci__err_t err = {0, NULL};
  char *t;
  (void) state;

  t = tpuci__tpu_describe("v4-16", NULL, &err);
  assert_non_null(t);
  assert_non_null(strstr(t, "v4-16 (layout 2x4, default): TPU v4, 2 hosts"));
  assert_non_null(strstr(t, "source: tpu-topology.md"));
  assert_non_null(strstr(t, "emulate: pjrt\n"));
  assert_non_null(strstr(t, "warning: emulate = \"pjrt\" with 2 hosts"));
  assert_non_null(strstr(t, "\nhost 1 (worker-1):\n  TPU_WORKER_ID=1\n"));
  assert_non_null(strstr(t, "  TPU_WORKER_HOSTNAMES=worker-0,worker-1\n"));
  free(t);

  t = tpuci__tpu_describe("v5litepod-8:1x8", "jax", &err);
  assert_non_null(t);
  assert_non_null(strstr(t, "(layout 1x8)"));
  assert_non_null(strstr(t, "other layouts: v5litepod-8:2x4"));
  assert_non_null(strstr(t, "XLA_FLAGS=--xla_force_host_platform_device_count=8\n"));
  assert_null(strstr(t, "warning:"));
  assert_null(strstr(t, "host 1"));
  free(t);

  t = tpuci__tpu_describe("v3-512", "none", &err);
  assert_non_null(t);
  assert_non_null(strstr(t, "\nhost 1 (worker-1):"));
  assert_non_null(strstr(t, "(hosts 2..62: the same"));
  assert_non_null(strstr(t, "\nhost 63 (worker-63):"));
  assert_null(strstr(t, "\nhost 2 "));
  assert_null(strstr(t, "PJRT_DEVICE"));
  free(t);

  assert_null(tpuci__tpu_describe("v4-61", NULL, &err));
  assert_int_equal(err.code, TPUCI_EUSAGE);
  assert_string_equal(err.msg, "unknown TPU type 'v4-61' (did you mean 'v4-64'?)");
  assert_null(tpuci__tpu_describe("zzz", NULL, &err));
  assert_string_equal(err.msg,
                      "unknown TPU type 'zzz' (`tpuci topologies` lists them)");
  assert_null(tpuci__tpu_describe("v4-16", "tpu", &err));
  assert_int_equal(err.code, TPUCI_EUSAGE);
  assert_non_null(strstr(err.msg, "emulate must be"));
  assert_null(tpuci__tpu_describe("v4-16:1x8", NULL, &err));
  assert_int_equal(err.code, TPUCI_EUSAGE);
  assert_non_null(strstr(err.msg, "v4-16 has no layout '1x8'"));
  assert_null(tpuci__tpu_describe("", NULL, &err));
  assert_null(tpuci__tpu_describe(NULL, NULL, &err));
  tpuci__err_clear(&err);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_catalogue_rows),
    cmocka_unit_test(test_every_row_env),
    cmocka_unit_test(test_doc_examples),
    cmocka_unit_test(test_env_order),
    cmocka_unit_test(test_env_net_and_append),
    cmocka_unit_test(test_env_errors),
    cmocka_unit_test(test_custom_ok),
    cmocka_unit_test(test_custom_bad),
    cmocka_unit_test(test_resolve),
    cmocka_unit_test(test_warnings),
    cmocka_unit_test(test_lookup),
    cmocka_unit_test(test_suggest),
    cmocka_unit_test(test_emulate_names),
    cmocka_unit_test(test_catalogue_text),
    cmocka_unit_test(test_describe),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
