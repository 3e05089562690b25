/* A job's accelerator options in a pod (pod.h): what a pod spec can say
 * of them, what it cannot, and the quantities resources are written in. */
#include "export/k8s/pod.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/github.h"

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

/* A device a GKE TPU node's google.com/tpu gives its pods. */
static int tpuci__k8s_tpu_device(const tpuci__device_t *d) {
  return strncmp(d->host, "/dev/accel", 10) == 0 || strncmp(d->host, "/dev/vfio", 9) == 0;
}

char *tpuci__k8s_ctr_refusal(const tpuci__ctr_opts_t *c, int tpu) {
  size_t i;
  for (i = 0; i < c->ndevices; i++) {
    if (tpu && tpuci__k8s_tpu_device(&c->devices[i])) continue;
    return tpuci__printf(
        "devices: a pod cannot name a device of its node (a device plugin's "
        "resource gives them: on a GKE TPU slice google.com/tpu brings /dev/accel* "
        "and /dev/vfio, which are left out then); remove '%s', or leave the job "
        "out with --only",
        c->devices[i].host);
  }
  if (c->nulimits > 0)
    return tpuci__printf("ulimits: a pod spec has no resource limits (%s, ...): set "
                         "them in the image or its command (ulimit), or leave the job "
                         "out with --only",
                         c->ulimits[0].name);
  if (c->gpus != NULL) {
    const tpuci__gpus_t *g = c->gpus;
    if (g->count <= 0)
      return tpuci__strdup(
          g->count < 0 ? "gpus = \"all\": a pod asks for a number of GPUs (" TPUCI__K8S_RESOURCE_GPU
                         "); give a count"
                       : "gpus: a pod asks for a number of GPUs (" TPUCI__K8S_RESOURCE_GPU
                         "), not for device ids; "
                         "give a count");
    if (g->driver != NULL && strcmp(g->driver, "nvidia") != 0)
      return tpuci__printf("gpus.driver = \"%s\": the export asks for " TPUCI__K8S_RESOURCE_GPU
                           " (NVIDIA's device plugin)",
                           g->driver);
    if (g->caps.len != 1 || strcmp(g->caps.items[0], "gpu") != 0)
      return tpuci__strdup("gpus.capabilities: a pod asks for whole GPUs (" TPUCI__K8S_RESOURCE_GPU
                           "); leave out capabilities other "
                           "than \"gpu\"");
  }
  return NULL;
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
