/* A job's accelerator options in a pod (ctr.h): what a pod spec says of
 * them, and the quantities resources are written in. */
#include "pod/ctr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/emit.h"

char *tpuci__k8s_bytes(uint64_t n) {
  static const char *const units[] = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"};
  int i;
  for (i = 0; i < 6; i++) {
    uint64_t unit = (uint64_t) 1 << (10 * (6 - i));
    if (n >= unit && n % unit == 0)
      return tpuci__printf("%llu%s", (unsigned long long) (n / unit), units[i]);
  }
  return tpuci__printf("%llu", (unsigned long long) n);
}

char *tpuci__k8s_cpus(double cpus) {
  long long m = llround(cpus * 1000.0);
  if (m < 1) m = 1;
  if (m % 1000 == 0) return tpuci__printf("%lld", m / 1000);
  return tpuci__printf("%lldm", m);
}

char *tpuci__k8s_dropped_devices(const tpuci__ctr_opts_t *c) {
  tpuci__buf_t b;
  size_t i;
  if (c->ndevices == 0) return NULL;
  tpuci__buf_init(&b);
  for (i = 0; i < c->ndevices; i++) tpuci__buf_addf(&b, "%s%s", i ? "," : "", c->devices[i].host);
  return tpuci__buf_steal(&b);
}

int tpuci__k8s_gpus(const tpuci__ctr_opts_t *c) {
  return c->gpus != NULL && c->gpus->count > 0 ? c->gpus->count : 0;
}

static int tpuci__k8s_list(yaml_emitter_t *e, const char *key, const tpuci__strv_t *v) {
  size_t i;
  int ok;
  if (v->len == 0) return 1;
  ok = tpuci__emit_plain(e, key) && tpuci__emit_seq(e, YAML_BLOCK_SEQUENCE_STYLE);
  for (i = 0; ok && i < v->len; i++) ok = tpuci__emit_str(e, v->items[i]);
  return ok && tpuci__emit_seq_end(e);
}

int tpuci__k8s_ctr_security(yaml_emitter_t *e, const tpuci__ctr_opts_t *c) {
  int caps = c->cap_add.len > 0 || c->cap_drop.len > 0;
  if (!c->privileged && !caps) return 1;
  return tpuci__emit_plain(e, "securityContext") && tpuci__emit_map(e) &&
         (!c->privileged || (tpuci__emit_plain(e, "privileged") && tpuci__emit_plain(e, "true"))) &&
         (!caps || (tpuci__emit_plain(e, "capabilities") && tpuci__emit_map(e) &&
                    tpuci__k8s_list(e, "add", &c->cap_add) &&
                    tpuci__k8s_list(e, "drop", &c->cap_drop) && tpuci__emit_map_end(e))) &&
         tpuci__emit_map_end(e);
}

int tpuci__k8s_shm_mount(yaml_emitter_t *e, const tpuci__ctr_opts_t *c) {
  if (c->shm_bytes == 0) return 1;
  return tpuci__emit_map(e) && tpuci__emit_kv(e, "name", TPUCI__K8S_SHM_VOLUME) &&
         tpuci__emit_kv(e, "mountPath", "/dev/shm") && tpuci__emit_map_end(e);
}

int tpuci__k8s_shm_volume(yaml_emitter_t *e, const tpuci__ctr_opts_t *c) {
  char *size;
  int ok;
  if (c->shm_bytes == 0) return 1;
  size = tpuci__k8s_bytes(c->shm_bytes);
  ok = tpuci__emit_map(e) && tpuci__emit_kv(e, "name", TPUCI__K8S_SHM_VOLUME) &&
       tpuci__emit_plain(e, "emptyDir") && tpuci__emit_map(e) &&
       tpuci__emit_kv(e, "medium", "Memory") && tpuci__emit_kv(e, "sizeLimit", size) &&
       tpuci__emit_map_end(e) && tpuci__emit_map_end(e);
  free(size);
  return ok;
}

int tpuci__k8s_pod_opts(yaml_emitter_t *e, const tpuci__ctr_opts_t *c) {
  size_t i;
  int ok = 1;
  if (c->ipc != NULL && strcmp(c->ipc, "host") == 0)
    ok = tpuci__emit_plain(e, "hostIPC") && tpuci__emit_plain(e, "true");
  if (ok && c->sysctls.len > 0) {
    ok = tpuci__emit_plain(e, "securityContext") && tpuci__emit_map(e) &&
         tpuci__emit_plain(e, "sysctls") && tpuci__emit_seq(e, YAML_BLOCK_SEQUENCE_STYLE);
    for (i = 0; ok && i < c->sysctls.len; i++)
      ok = tpuci__emit_map(e) && tpuci__emit_kv(e, "name", c->sysctls.items[i].key) &&
           tpuci__emit_kv(e, "value", c->sysctls.items[i].value) && tpuci__emit_map_end(e);
    ok = ok && tpuci__emit_seq_end(e) && tpuci__emit_map_end(e);
  }
  return ok;
}
