/* A job's container options for accelerators (plan.h's
 * tpuci__ctr_opts_t): freeing them, their size, and their JSON and text
 * forms for `tpuci plan`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "plan/plan.h"

int tpuci__ctr_opts_any(const tpuci__ctr_opts_t *c) {
  return c->shm_bytes > 0 || c->ipc != NULL || c->privileged || c->ndevices > 0 ||
         c->cap_add.len > 0 || c->cap_drop.len > 0 || c->nulimits > 0 || c->gpus != NULL ||
         c->sysctls.len > 0;
}

void tpuci__ctr_opts_free(tpuci__ctr_opts_t *c) {
  size_t i;
  free(c->ipc);
  for (i = 0; i < c->ndevices; i++) {
    free(c->devices[i].host);
    free(c->devices[i].target);
    free(c->devices[i].perms);
  }
  free(c->devices);
  tpuci__strv_free(&c->cap_add);
  tpuci__strv_free(&c->cap_drop);
  for (i = 0; i < c->nulimits; i++) free(c->ulimits[i].name);
  free(c->ulimits);
  if (c->gpus != NULL) {
    tpuci__strv_free(&c->gpus->ids);
    free(c->gpus->driver);
    tpuci__strv_free(&c->gpus->caps);
    free(c->gpus);
  }
  tpuci__kv_free(&c->sysctls);
  memset(c, 0, sizeof(*c));
}

void tpuci__ctr_opts_copy(tpuci__ctr_opts_t *dst, const tpuci__ctr_opts_t *src) {
  size_t i;
  memset(dst, 0, sizeof(*dst));
  dst->shm_bytes = src->shm_bytes;
  dst->ipc = tpuci__strdup(src->ipc);
  dst->privileged = src->privileged;
  if (src->ndevices > 0) {
    dst->devices = tpuci__calloc(src->ndevices, sizeof(*dst->devices));
    for (i = 0; i < src->ndevices; i++) {
      dst->devices[i].host = tpuci__strdup(src->devices[i].host);
      dst->devices[i].target = tpuci__strdup(src->devices[i].target);
      dst->devices[i].perms = tpuci__strdup(src->devices[i].perms);
      dst->devices[i].glob = src->devices[i].glob;
    }
    dst->ndevices = src->ndevices;
  }
  tpuci__strv_copy(&dst->cap_add, &src->cap_add);
  tpuci__strv_copy(&dst->cap_drop, &src->cap_drop);
  if (src->nulimits > 0) {
    dst->ulimits = tpuci__calloc(src->nulimits, sizeof(*dst->ulimits));
    for (i = 0; i < src->nulimits; i++) {
      dst->ulimits[i] = src->ulimits[i];
      dst->ulimits[i].name = tpuci__strdup(src->ulimits[i].name);
    }
    dst->nulimits = src->nulimits;
  }
  if (src->gpus != NULL) {
    dst->gpus = tpuci__calloc(1, sizeof(*dst->gpus));
    dst->gpus->count = src->gpus->count;
    tpuci__strv_copy(&dst->gpus->ids, &src->gpus->ids);
    dst->gpus->driver = tpuci__strdup(src->gpus->driver);
    tpuci__strv_copy(&dst->gpus->caps, &src->gpus->caps);
  }
  tpuci__kv_copy(&dst->sysctls, &src->sysctls);
}

#define TPUCI__STR_BYTES(s) ((s) ? strlen(s) + 16 : 0)

static size_t tpuci__strv_bytes(const tpuci__strv_t *v) {
  size_t n = 0, i;
  for (i = 0; i < v->len; i++) n += TPUCI__STR_BYTES(v->items[i]) + 8;
  return n;
}

size_t tpuci__ctr_opts_bytes(const tpuci__ctr_opts_t *c) {
  size_t n = TPUCI__STR_BYTES(c->ipc), i;
  for (i = 0; i < c->ndevices; i++)
    n += sizeof(c->devices[i]) + TPUCI__STR_BYTES(c->devices[i].host) +
         TPUCI__STR_BYTES(c->devices[i].target) + TPUCI__STR_BYTES(c->devices[i].perms);
  n += tpuci__strv_bytes(&c->cap_add) + tpuci__strv_bytes(&c->cap_drop);
  for (i = 0; i < c->nulimits; i++)
    n += sizeof(c->ulimits[i]) + TPUCI__STR_BYTES(c->ulimits[i].name);
  if (c->gpus != NULL)
    n += sizeof(*c->gpus) + tpuci__strv_bytes(&c->gpus->ids) + TPUCI__STR_BYTES(c->gpus->driver) +
         tpuci__strv_bytes(&c->gpus->caps);
  for (i = 0; i < c->sysctls.len; i++)
    n += TPUCI__STR_BYTES(c->sysctls.items[i].key) + TPUCI__STR_BYTES(c->sysctls.items[i].value) +
         16;
  return n;
}

#undef TPUCI__STR_BYTES

char *tpuci__ctr_opts_refusal(const tpuci__ctr_opts_t *c, int kind) {
  /* What a Swarm service's TaskTemplate.ContainerSpec lacks (it has
   * Sysctls, Ulimits, CapabilityAdd and CapabilityDrop; a tmpfs mount
   * gives /dev/shm its size). */
  const char *key = NULL, *why = NULL;
  if (!tpuci__runtime_props((tpuci__runtime_kind_t) kind)->services) return NULL;
  if (c->privileged) {
    key = "privileged";
    why = "a Swarm service cannot be privileged (its ContainerSpec has no "
          "Privileged; cap_add works)";
  } else if (c->ndevices > 0) {
    key = "devices";
    why = "a Swarm service cannot be given host devices (its ContainerSpec has "
          "no Devices)";
  } else if (c->gpus != NULL) {
    key = "gpus";
    why = "a Swarm service takes no device requests (its ContainerSpec has no "
          "DeviceRequests; Swarm's GPUs are generic resources its nodes advertise)";
  } else if (c->ipc != NULL) {
    key = "ipc";
    why = "a Swarm service has no IPC mode (its ContainerSpec has no IpcMode; "
          "shm_size works)";
  }
  if (key == NULL) return NULL;
  return tpuci__printf("%s: not available with runtime 'swarm': %s; run the job "
                       "on docker (runtime = \"docker\", or tpuci run --engine docker)",
                       key, why);
}

char *tpuci__cap_engine_name(const char *cap) {
  if (strcmp(cap, "ALL") == 0) return tpuci__strdup(cap);
  return tpuci__printf("CAP_%s", cap);
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */

static json_t *tpuci__strv_to_json(const tpuci__strv_t *v) {
  json_t *a = json_array();
  size_t i;
  for (i = 0; i < v->len; i++) json_array_append_new(a, json_string(v->items[i]));
  return a;
}

json_t *tpuci__ctr_opts_json(const tpuci__ctr_opts_t *c) {
  json_t *o = json_object(), *a;
  size_t i;

  if (c->shm_bytes > 0) json_object_set_new(o, "shm_size", json_integer((json_int_t) c->shm_bytes));
  if (c->ipc != NULL) json_object_set_new(o, "ipc", json_string(c->ipc));
  if (c->privileged) json_object_set_new(o, "privileged", json_true());
  if (c->ndevices > 0) {
    a = json_array();
    for (i = 0; i < c->ndevices; i++) {
      const tpuci__device_t *d = &c->devices[i];
      json_array_append_new(a, json_pack("{s:s, s:s?, s:s, s:b}", "host", d->host, "container",
                                         d->target, "permissions", d->perms, "glob", d->glob != 0));
    }
    json_object_set_new(o, "devices", a);
  }
  if (c->cap_add.len > 0) json_object_set_new(o, "cap_add", tpuci__strv_to_json(&c->cap_add));
  if (c->cap_drop.len > 0) json_object_set_new(o, "cap_drop", tpuci__strv_to_json(&c->cap_drop));
  if (c->nulimits > 0) {
    json_t *u = json_object();
    for (i = 0; i < c->nulimits; i++)
      json_object_set_new(u, c->ulimits[i].name,
                          json_pack("{s:I, s:I}", "soft", (json_int_t) c->ulimits[i].soft, "hard",
                                    (json_int_t) c->ulimits[i].hard));
    json_object_set_new(o, "ulimits", u);
  }
  if (c->gpus != NULL) {
    json_t *g = json_object();
    if (c->gpus->count != 0) json_object_set_new(g, "count", json_integer(c->gpus->count));
    if (c->gpus->count == 0)
      json_object_set_new(g, "device_ids", tpuci__strv_to_json(&c->gpus->ids));
    if (c->gpus->driver != NULL) json_object_set_new(g, "driver", json_string(c->gpus->driver));
    json_object_set_new(g, "capabilities", tpuci__strv_to_json(&c->gpus->caps));
    json_object_set_new(o, "gpus", g);
  }
  if (c->sysctls.len > 0) {
    json_t *s = json_object();
    for (i = 0; i < c->sysctls.len; i++)
      json_object_set_new(s, c->sysctls.items[i].key, json_string(c->sysctls.items[i].value));
    json_object_set_new(o, "sysctls", s);
  }
  return o;
}

/* ------------------------------------------------------------------ */
/* Text                                                                */

/* "16 GiB" for a whole number of KiB, MiB, GiB or TiB, else bytes. */
static void tpuci__size_text(tpuci__buf_t *b, uint64_t n) {
  static const char *const units[] = {"TiB", "GiB", "MiB", "KiB"};
  int i;
  for (i = 0; i < 4; i++) {
    uint64_t unit = (uint64_t) 1 << (10 * (4 - i));
    if (n >= unit && n % unit == 0) {
      tpuci__buf_addf(b, "%llu %s", (unsigned long long) (n / unit), units[i]);
      return;
    }
  }
  tpuci__buf_addf(b, "%llu bytes", (unsigned long long) n);
}

static void tpuci__limit_text(tpuci__buf_t *b, int64_t v) {
  if (v < 0) tpuci__buf_adds(b, "unlimited");
  else tpuci__buf_addf(b, "%lld", (long long) v);
}

static void tpuci__list_text(tpuci__buf_t *b, const char *label, const tpuci__strv_t *v) {
  size_t i;
  if (v->len == 0) return;
  tpuci__buf_addf(b, "  %-9s ", label);
  for (i = 0; i < v->len; i++) tpuci__buf_addf(b, "%s%s", i ? ", " : "", v->items[i]);
  tpuci__buf_adds(b, "\n");
}

void tpuci__ctr_opts_text(const tpuci__ctr_opts_t *c, tpuci__buf_t *b) {
  size_t i;

  if (c->shm_bytes > 0) {
    tpuci__buf_adds(b, "  shm_size: ");
    tpuci__size_text(b, c->shm_bytes);
    tpuci__buf_adds(b, " at /dev/shm\n");
  }
  if (c->ipc != NULL) tpuci__buf_addf(b, "  ipc:      %s\n", c->ipc);
  if (c->privileged) tpuci__buf_adds(b, "  privileged (every device and capability)\n");
  for (i = 0; i < c->ndevices; i++) {
    const tpuci__device_t *d = &c->devices[i];
    if (d->glob)
      tpuci__buf_addf(b, "  device:   %s (%s; a glob, expanded when an attempt starts)\n", d->host,
                      d->perms);
    else
      tpuci__buf_addf(b, "  device:   %s -> %s (%s)\n", d->host, d->target ? d->target : d->host,
                      d->perms);
  }
  tpuci__list_text(b, "cap_add:", &c->cap_add);
  tpuci__list_text(b, "cap_drop:", &c->cap_drop);
  if (c->nulimits > 0) {
    tpuci__buf_adds(b, "  ulimits: ");
    for (i = 0; i < c->nulimits; i++) {
      const tpuci__ulimit_t *u = &c->ulimits[i];
      tpuci__buf_addf(b, " %s=", u->name);
      tpuci__limit_text(b, u->soft);
      if (u->hard != u->soft) {
        tpuci__buf_adds(b, ":");
        tpuci__limit_text(b, u->hard);
      }
    }
    tpuci__buf_adds(b, "\n");
  }
  if (c->gpus != NULL) {
    const tpuci__gpus_t *g = c->gpus;
    tpuci__buf_adds(b, "  gpus:     ");
    if (g->count < 0) tpuci__buf_adds(b, "all");
    else if (g->count > 0) tpuci__buf_addf(b, "%d", g->count);
    else
      for (i = 0; i < g->ids.len; i++)
        tpuci__buf_addf(b, "%s%s", i ? "," : "ids ", g->ids.items[i]);
    if (g->driver != NULL) tpuci__buf_addf(b, ", driver %s", g->driver);
    tpuci__buf_adds(b, ", capabilities ");
    for (i = 0; i < g->caps.len; i++) tpuci__buf_addf(b, "%s%s", i ? "," : "", g->caps.items[i]);
    tpuci__buf_adds(b, "\n");
  }
  if (c->sysctls.len > 0) {
    tpuci__buf_adds(b, "  sysctls: ");
    for (i = 0; i < c->sysctls.len; i++) {
      const char *v = c->sysctls.items[i].value;
      /* "net.ipv4.tcp_rmem='4096 87380 6291456'" */
      const char *q = strchr(v, ' ') != NULL ? "'" : "";
      tpuci__buf_addf(b, " %s=%s%s%s", c->sysctls.items[i].key, q, v, q);
    }
    tpuci__buf_adds(b, "\n");
  }
}
