/* What each emulated host of an instance gets from its topology. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/host_env.h"

extern char **environ;

/* The names TPU software (libtpu, torch_xla, JAX) reads from its
 * environment: passed on to the hosts of real hardware. */
static int tpuci__tpu_env_name(const char *kv) {
  static const char *const prefixes[] = {"TPU_",
                                         "CLOUD_TPU_",
                                         "LIBTPU_",
                                         "PJRT_",
                                         "XLA_",
                                         "MEGASCALE_",
                                         "ALLOW_MULTIPLE_LIBTPU_LOAD="};
  size_t i;
  for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
    if (strncmp(kv, prefixes[i], strlen(prefixes[i])) == 0) return 1;
  return 0;
}

/* This machine's own place in a slice: true here, wrong on any other
 * host (each worker of a slice has its own, from its metadata server). */
static int tpuci__tpu_identity(const char *kv, size_t len) {
  static const char *const names[] = {"TPU_WORKER_ID", "CLOUD_TPU_TASK_ID", "TPU_HOSTNAME_OVERRIDE",
                                      "MEGASCALE_SLICE_ID"};
  size_t i;
  for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strlen(names[i]) == len && strncmp(kv, names[i], len) == 0) return 1;
  return 0;
}

/* This process's TPU environment into `out`: the names TPU software
 * reads, each a shell name (a name such as `TPU_A;id>/tmp/x;B` is left
 * out: it would be code in an ssh worker's script), but this machine's
 * identity. */
static void tpuci__tpu_env_pass(tpuci__kvlist_t *out) {
  char **e;
  for (e = environ; e && *e; e++) {
    const char *eq = strchr(*e, '=');
    char *key;
    if (eq == NULL || !tpuci__tpu_env_name(*e) || !tpuci__env_name_valid(*e, (size_t) (eq - *e)) ||
        tpuci__tpu_identity(*e, (size_t) (eq - *e)))
      continue;
    key = tpuci__strndup(*e, (size_t) (eq - *e));
    tpuci__kv_set(out, key, eq + 1);
    free(key);
  }
}

int tpuci__topology_slice(const tpuci__topology_t *t, tpuci__slice_t *s, tpuci__err_t *err) {
  tpuci__slice_req_t req;
  tpuci__err_t e = {0, NULL};
  memset(&req, 0, sizeof(req));
  req.name = t->name;
  req.base = t->base;
  req.hosts = t->hosts;
  req.chips_per_host = t->chips_per_host;
  req.cores_per_chip = t->cores_per_chip;
  req.emulate = t->emulate;
  if (tpuci__slice_resolve(s, &req, &e) != 0) {
    int rc = tpuci__err_set(err, e.code ? e.code : TPUCI_ESPEC, "%s%stopology '%s': %s",
                            t->where ? t->where : "", t->where ? ": " : "", t->name ? t->name : "?",
                            e.msg ? e.msg : "invalid");
    tpuci__err_clear(&e);
    return rc;
  }
  return 0;
}

/* TPU_PROCESS_BOUNDS for one chip per process on a host of `chips`:
 * JAX's multi-process test launcher's table (tpu-topology.md, "Bounds it
 * uses to split one host"); other counts, which no catalogue host has, a
 * row of processes (inferred). */
static void tpuci__chip_process_bounds(int chips, char *out, size_t n) {
  if (chips == 4) snprintf(out, n, "2,2,1");
  else if (chips == 8) snprintf(out, n, "4,2,1");
  else snprintf(out, n, "%d,1,1", chips);
}

/* One process of pytest.per_chip: process `chip` of `chips` on one host
 * gets that chip alone, as torch_xla's and JAX's per-process launches set
 * it (tpu-topology.md 4b and JAX's TPU pytest mode), and under emulation
 * its share of the host's CPU devices. */
static void tpuci__per_chip_env(const tpuci__slice_t *s, int chip, int chips,
                                tpuci__kvlist_t *gen) {
  tpuci__buf_t b;
  char num[64];
  int i, share = s->devices_per_host / chips > 0 ? s->devices_per_host / chips : 1;

  snprintf(num, sizeof(num), "%d", chip);
  tpuci__kv_set(gen, "TPU_VISIBLE_CHIPS", num);
  tpuci__kv_set(gen, "CLOUD_TPU_TASK_ID", num);
  tpuci__kv_set(gen, "TPUCI_CHIP", num);
  snprintf(num, sizeof(num), "%d", chips);
  tpuci__kv_set(gen, "TPUCI_CHIPS", num);
  tpuci__kv_set(gen, "TPU_CHIPS_PER_PROCESS_BOUNDS", "1,1,1");
  tpuci__chip_process_bounds(chips, num, sizeof(num));
  tpuci__kv_set(gen, "TPU_PROCESS_BOUNDS", num);
  snprintf(num, sizeof(num), "%d", TPUCI__TPU_PROCESS_PORT + chip);
  tpuci__kv_set(gen, "TPU_PROCESS_PORT", num);
  tpuci__buf_init(&b);
  for (i = 0; i < chips; i++)
    tpuci__buf_addf(&b, "%slocalhost:%d", i ? "," : "", TPUCI__TPU_PROCESS_PORT + i);
  tpuci__kv_set(gen, "TPU_PROCESS_ADDRESSES", b.data);
  tpuci__buf_free(&b);
  tpuci__kv_set(gen, "ALLOW_MULTIPLE_LIBTPU_LOAD", "1");
  /* Emulated: the devices this process's chip stands for. */
  snprintf(num, sizeof(num), "%d", share);
  if (tpuci__kv_get(gen, "CPU_NUM_DEVICES") != NULL) tpuci__kv_set(gen, "CPU_NUM_DEVICES", num);
  if (tpuci__kv_get(gen, "JAX_NUM_CPU_DEVICES") != NULL)
    tpuci__kv_set(gen, "JAX_NUM_CPU_DEVICES", num);
  if (tpuci__kv_get(gen, "XLA_FLAGS") != NULL) {
    char *flags = tpuci__printf("--xla_force_host_platform_device_count=%d", share);
    tpuci__kv_set(gen, "XLA_FLAGS", flags);
    free(flags);
  }
}

int tpuci__topology_host_env(const tpuci__instance_t *inst, const tpuci__slice_t *s, int host,
                             const char *const *hostnames, tpuci__kvlist_t *out,
                             tpuci__err_t *err) {
  tpuci__kvlist_t gen = {NULL, 0, 0};
  tpuci__gang_net_t net;
  char num[16];
  size_t i;
  int rc;
  memset(&net, 0, sizeof(net));
  net.hostnames = hostnames;
  rc = tpuci__slice_host_env(s, host, hostnames ? &net : NULL, &gen, err);
  if (rc != 0) return rc;
  snprintf(num, sizeof(num), "%d", host);
  tpuci__kv_set(&gen, "TPUCI_HOST", num);
  snprintf(num, sizeof(num), "%d", s->hosts);
  tpuci__kv_set(&gen, "TPUCI_HOSTS", num);
  if (s->emulate == TPUCI__EMULATE_REAL) tpuci__tpu_env_pass(&gen);
  if (inst->per_chip && inst->shard > 0)
    tpuci__per_chip_env(s, inst->shard - 1, inst->shards, &gen);
  for (i = 0; i < gen.len; i++)
    if (tpuci__kv_get(&inst->env, gen.items[i].key) == NULL)
      tpuci__kv_set(out, gen.items[i].key, gen.items[i].value);
  tpuci__kv_free(&gen);
  return 0;
}

int tpuci__devices_expect(const tpuci__plan_t *p, const tpuci__instance_t *inst,
                          tpuci__devices_expect_t *out, tpuci__err_t *err) {
  const char *fw = inst->expect_devices;
  tpuci__slice_t s;
  int rc, per = inst->per_chip && inst->shard > 0;

  if (fw == NULL || inst->topology < 0 || (size_t) inst->topology >= p->ntopologies) return 0;
  rc = tpuci__topology_slice(&p->topologies[inst->topology], &s, err);
  if (rc != 0) return rc;
  out->emulated = NULL;
  rc = 1;
  switch (s.emulate) {
    case TPUCI__EMULATE_REAL: out->platform = "tpu"; break;
    case TPUCI__EMULATE_JAX:
      if (strcmp(fw, "torch_xla") == 0) rc = 0;
      out->emulated = "jax";
      out->platform = "cpu";
      break;
    case TPUCI__EMULATE_PJRT:
      if (strcmp(fw, "jax") == 0) rc = 0;
      out->emulated = "torch_xla";
      out->platform = "cpu";
      break;
    default: rc = 0;
  }
  /* pytest.per_chip: one chip each, and its share of the devices (as
   * tpuci__per_chip_env gives it). */
  out->frameworks = fw;
  out->chips = per ? 1 : s.chips_per_host;
  out->devices = per ? s.devices_per_host / inst->shards : s.devices_per_host;
  if (out->devices < 1) out->devices = 1;
  tpuci__slice_free(&s);
  return rc;
}

char *tpuci__devices_arg(const tpuci__plan_t *p, const tpuci__instance_t *inst) {
  tpuci__devices_expect_t e;
  tpuci__err_t err = {0, NULL};
  int rc = tpuci__devices_expect(p, inst, &e, &err);
  tpuci__err_clear(&err);
  if (rc != 1) return NULL;
  /* "auto": each that imports; one named: it must import. */
  if (strcmp(e.frameworks, "auto") != 0)
    return tpuci__printf("%s %s %d %d", e.frameworks, e.platform, e.devices, e.chips);
  if (e.emulated != NULL)
    return tpuci__printf("%s? %s %d %d", e.emulated, e.platform, e.devices, e.chips);
  return tpuci__printf("jax?,torch_xla? %s %d %d", e.platform, e.devices, e.chips);
}
