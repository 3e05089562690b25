/* What each emulated host of an instance gets from its topology. */
#include <stdio.h>
#include <string.h>

#include "plan/host_env.h"

int tpuci__topology_slice(const tpuci__topology_t *t, tpuci__slice_t *s,
                          tpuci__err_t *err) {
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
    int rc = tpuci__err_set(err, e.code ? e.code : TPUCI_ESPEC,
                            "%s%stopology '%s': %s", t->where ? t->where : "",
                            t->where ? ": " : "", t->name ? t->name : "?",
                            e.msg ? e.msg : "invalid");
    tpuci__err_clear(&e);
    return rc;
  }
  return 0;
}

int tpuci__topology_host_env(const tpuci__instance_t *inst,
                             const tpuci__slice_t *s, int host,
                             tpuci__kvlist_t *out, tpuci__err_t *err) {
  tpuci__kvlist_t gen = {NULL, 0, 0};
  char num[16];
  size_t i;
  int rc = tpuci__slice_host_env(s, host, NULL, &gen, err);
  if (rc != 0) return rc;
  snprintf(num, sizeof(num), "%d", host);
  tpuci__kv_set(&gen, "TPUCI_HOST", num);
  snprintf(num, sizeof(num), "%d", s->hosts);
  tpuci__kv_set(&gen, "TPUCI_HOSTS", num);
  for (i = 0; i < gen.len; i++)
    if (tpuci__kv_get(&inst->env, gen.items[i].key) == NULL)
      tpuci__kv_set(out, gen.items[i].key, gen.items[i].value);
  tpuci__kv_free(&gen);
  return 0;
}

