/* Container create bodies, names, labels, liveness of a run. */
#include "runtime/engine/container.h"

#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static json_t *tpuci__strv_json(const tpuci__strv_t *v) {
  json_t *a = json_array();
  size_t i;
  if (v == NULL) return a;
  for (i = 0; i < v->len; i++) json_array_append_new(a, json_string(v->items[i]));
  return a;
}

json_t *tpuci__ctr_mount(const tpuci__mount_t *m) {
  return json_pack("{s:s, s:s, s:s, s:b}", "Type", "bind", "Source", m->source, "Target", m->target,
                   "ReadOnly", m->read_only != 0);
}

json_t *tpuci__ctr_create_body(const tpuci__ctr_spec_t *s) {
  json_t *body = json_object();
  json_t *hc = json_object();
  json_t *labels = json_object();
  size_t i;

  json_object_set_new(body, "Image", json_string(s->image));
  if (s->argv != NULL && s->argv->len > 0)
    json_object_set_new(body, "Cmd", tpuci__strv_json(s->argv));
  json_object_set_new(body, "Env", tpuci__strv_json(s->env));
  if (s->workdir != NULL && *s->workdir)
    json_object_set_new(body, "WorkingDir", json_string(s->workdir));
  if (s->hostname != NULL) json_object_set_new(body, "Hostname", json_string(s->hostname));
  json_object_set_new(body, "Tty", json_false());
  json_object_set_new(body, "OpenStdin", json_false());
  json_object_set_new(body, "AttachStdin", json_false());
  json_object_set_new(body, "AttachStdout", json_true());
  json_object_set_new(body, "AttachStderr", json_true());
  if (s->labels != NULL)
    for (i = 0; i < s->labels->len; i++)
      json_object_set_new(labels, s->labels->items[i].key, json_string(s->labels->items[i].value));
  json_object_set_new(body, "Labels", labels);

  /* An init process as PID 1 reaps zombies and forwards signals. */
  json_object_set_new(hc, "Init", json_true());
  if (s->nmounts > 0) {
    json_t *mounts = json_array();
    for (i = 0; i < s->nmounts; i++) json_array_append_new(mounts, tpuci__ctr_mount(&s->mounts[i]));
    json_object_set_new(hc, "Mounts", mounts);
  }
  if (s->cpus > 0)
    json_object_set_new(hc, "NanoCpus", json_integer((json_int_t) (s->cpus * 1e9 + 0.5)));
  if (s->memory_bytes > 0) {
    json_object_set_new(hc, "Memory", json_integer((json_int_t) s->memory_bytes));
    /* Swap as large as memory means no swap: an OOM kill is real. */
    json_object_set_new(hc, "MemorySwap", json_integer((json_int_t) s->memory_bytes));
  }
  if (s->network != NULL && *s->network)
    json_object_set_new(hc, "NetworkMode", json_string(s->network));
  tpuci__ctr_host_opts(hc, s->ctr, s->devices, s->ndevices);
  json_object_set_new(body, "HostConfig", hc);
  if (s->network != NULL && *s->network && s->alias != NULL) {
    json_t *ep = json_pack("{s:[s]}", "Aliases", s->alias);
    json_t *eps = json_object();
    json_t *nc = json_object();
    json_object_set_new(eps, s->network, ep);
    json_object_set_new(nc, "EndpointsConfig", eps);
    json_object_set_new(body, "NetworkingConfig", nc);
  }
  return body;
}

json_t *tpuci__ctr_caps_json(const tpuci__strv_t *caps) {
  json_t *a = json_array();
  size_t i;
  for (i = 0; i < caps->len; i++) {
    char *name = tpuci__cap_engine_name(caps->items[i]);
    json_array_append_new(a, json_string(name));
    free(name);
  }
  return a;
}

json_t *tpuci__ctr_ulimits_json(const tpuci__ctr_opts_t *c) {
  json_t *a = json_array();
  size_t i;
  for (i = 0; i < c->nulimits; i++)
    json_array_append_new(
        a, json_pack("{s:s, s:I, s:I}", "Name", c->ulimits[i].name, "Soft",
                     (json_int_t) c->ulimits[i].soft, "Hard", (json_int_t) c->ulimits[i].hard));
  return a;
}

json_t *tpuci__ctr_sysctls_json(const tpuci__ctr_opts_t *c) {
  json_t *o = json_object();
  size_t i;
  for (i = 0; i < c->sysctls.len; i++)
    json_object_set_new(o, c->sysctls.items[i].key, json_string(c->sysctls.items[i].value));
  return o;
}

static json_t *tpuci__gpus_json(const tpuci__gpus_t *g) {
  json_t *r = json_object();
  if (g->driver != NULL) json_object_set_new(r, "Driver", json_string(g->driver));
  json_object_set_new(r, "Count", json_integer(g->count));
  if (g->count == 0) json_object_set_new(r, "DeviceIDs", tpuci__strv_json(&g->ids));
  /* One list: a device must have every capability of it. */
  json_object_set_new(r, "Capabilities", json_pack("[o]", tpuci__strv_json(&g->caps)));
  json_object_set_new(r, "Options", json_object());
  return json_pack("[o]", r);
}

void tpuci__ctr_host_opts(json_t *hc, const tpuci__ctr_opts_t *c, const tpuci__device_t *devices,
                          size_t ndevices) {
  size_t i;
  if (ndevices > 0) {
    json_t *a = json_array();
    for (i = 0; i < ndevices; i++)
      json_array_append_new(
          a, json_pack("{s:s, s:s, s:s}", "PathOnHost", devices[i].host, "PathInContainer",
                       devices[i].target ? devices[i].target : devices[i].host, "CgroupPermissions",
                       devices[i].perms ? devices[i].perms : "rwm"));
    json_object_set_new(hc, "Devices", a);
  }
  if (c == NULL) return;
  if (c->shm_bytes > 0) json_object_set_new(hc, "ShmSize", json_integer((json_int_t) c->shm_bytes));
  if (c->ipc != NULL) json_object_set_new(hc, "IpcMode", json_string(c->ipc));
  if (c->privileged) json_object_set_new(hc, "Privileged", json_true());
  if (c->cap_add.len > 0) json_object_set_new(hc, "CapAdd", tpuci__ctr_caps_json(&c->cap_add));
  if (c->cap_drop.len > 0) json_object_set_new(hc, "CapDrop", tpuci__ctr_caps_json(&c->cap_drop));
  if (c->nulimits > 0) json_object_set_new(hc, "Ulimits", tpuci__ctr_ulimits_json(c));
  if (c->gpus != NULL) json_object_set_new(hc, "DeviceRequests", tpuci__gpus_json(c->gpus));
  if (c->sysctls.len > 0) json_object_set_new(hc, "Sysctls", tpuci__ctr_sysctls_json(c));
}

/* Appends a copy of d (its target the host path when it has none). */
static void tpuci__dev_push(tpuci__device_t **out, size_t *n, size_t *cap, const char *host,
                            const tpuci__device_t *d) {
  tpuci__device_t *x;
  const char *target = d->target ? d->target : host;
  size_t i;
  for (i = 0; i < *n; i++)
    if (strcmp((*out)[i].target, target) == 0) return;
  if (*n == *cap) {
    *cap = *cap ? 2 * *cap : 4;
    *out = tpuci__realloc(*out, *cap * sizeof(**out));
  }
  x = &(*out)[(*n)++];
  x->host = tpuci__strdup(host);
  x->target = tpuci__strdup(target);
  x->perms = tpuci__strdup(d->perms ? d->perms : "rwm");
  x->glob = 0;
}

int tpuci__ctr_devices(const tpuci__ctr_opts_t *c, const char *where, const char *job,
                       tpuci__device_t **out, size_t *n, tpuci__err_t *err) {
  size_t i, k, cap = 0;
  *out = NULL;
  *n = 0;
  for (i = 0; c != NULL && i < c->ndevices; i++) {
    const tpuci__device_t *d = &c->devices[i];
    glob_t g;
    int rc;
    if (!d->glob) {
      tpuci__dev_push(out, n, &cap, d->host, d);
      continue;
    }
    memset(&g, 0, sizeof(g));
    rc = glob(d->host, 0, NULL, &g);
    if (rc != 0) {
      globfree(&g);
      tpuci__ctr_devices_free(*out, *n);
      *out = NULL;
      *n = 0;
      return tpuci__err_set(err, TPUCI_EUSAGE,
                            "%s%sjob '%s': devices: '%s' %s on this machine (the "
                            "engine's host): is the accelerator there and its "
                            "driver loaded?",
                            where ? where : "", where ? ": " : "", job ? job : "?", d->host,
                            rc == GLOB_NOMATCH ? "matches no device" : "cannot be read");
    }
    for (k = 0; k < g.gl_pathc; k++) tpuci__dev_push(out, n, &cap, g.gl_pathv[k], d);
    globfree(&g);
  }
  return 0;
}

void tpuci__ctr_devices_free(tpuci__device_t *d, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    free(d[i].host);
    free(d[i].target);
    free(d[i].perms);
  }
  free(d);
}

json_t *tpuci__net_create_body(const char *name, const tpuci__kvlist_t *labels, int internal) {
  json_t *body = json_object();
  json_t *l = json_object();
  size_t i;
  json_object_set_new(body, "Name", json_string(name));
  json_object_set_new(body, "CheckDuplicate", json_true());
  json_object_set_new(body, "Driver", json_string("bridge"));
  json_object_set_new(body, "Internal", json_boolean(internal));
  if (labels != NULL)
    for (i = 0; i < labels->len; i++)
      json_object_set_new(l, labels->items[i].key, json_string(labels->items[i].value));
  json_object_set_new(body, "Labels", l);
  return body;
}

int tpuci__ctr_is_ours(json_t *inspect, json_t *body) {
  json_t *have = json_object_get(json_object_get(inspect, "Config"), "Labels");
  json_t *want = json_object_get(body, "Labels");
  const char *key;
  json_t *v;
  if (!json_is_object(have) || !json_is_object(want) || json_object_size(want) == 0) return 0;
  json_object_foreach(want, key, v) {
    if (!json_equal(v, json_object_get(have, key))) return 0;
  }
  return 1;
}

static int tpuci__name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

char *tpuci__docker_sanitize(const char *s) {
  char *out = tpuci__strdup(s ? s : "");
  char *p;
  for (p = out; *p; p++)
    if (!tpuci__name_char(*p)) *p = '_';
  return out;
}

static uint32_t tpuci__fnv1a(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) {
    h ^= (unsigned char) *s;
    h *= 16777619u;
  }
  return h;
}

static char *tpuci__ctr_name_x(const char *run_id, const char *instance, int attempt, int host) {
  char *run = tpuci__docker_sanitize(run_id);
  char *inst = tpuci__docker_sanitize(instance);
  char tail[64], hash[16] = "";
  size_t fixed, room, n;
  char *name;

  /* A run id longer than a third of the budget is cut too. */
  if (strlen(run) > TPUCI__NAME_MAX / 3) run[TPUCI__NAME_MAX / 3] = '\0';
  if (host >= 0) snprintf(tail, sizeof(tail), "-%d-worker-%d", attempt, host);
  else snprintf(tail, sizeof(tail), "-%d", attempt);
  fixed = strlen("tpuci-") + strlen(run) + 1 + strlen(tail);
  room = TPUCI__NAME_MAX - fixed;
  n = strlen(inst);
  if (strcmp(inst, instance ? instance : "") != 0 || n > room) {
    snprintf(hash, sizeof(hash), "-%08x", (unsigned) tpuci__fnv1a(instance ? instance : ""));
    room -= strlen(hash);
    if (n > room) inst[room] = '\0';
    /* Trailing '_' from brackets read badly before the hash. */
    n = strlen(inst);
    while (n > 1 && inst[n - 1] == '_') inst[--n] = '\0';
  }
  name = tpuci__printf("tpuci-%s-%s%s%s", run, inst, hash, tail);
  free(run);
  free(inst);
  return name;
}

char *tpuci__ctr_name(const char *run_id, const char *instance, int attempt) {
  return tpuci__ctr_name_x(run_id, instance, attempt, -1);
}

char *tpuci__ctr_host_name(const char *run_id, const char *instance, int attempt, int host) {
  return tpuci__ctr_name_x(run_id, instance, attempt, host < 0 ? 0 : host);
}

const char *tpuci__docker_hostname(void) {
  static char name[256];
  if (name[0] == '\0') {
    if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0')
      snprintf(name, sizeof(name), "unknown");
    name[sizeof(name) - 1] = '\0';
  }
  return name;
}

/* Field 22 of /proc/<pid>/stat: the start time in clock ticks since boot.
 * NULL where there is no /proc. */
char *tpuci__docker_pidstart(long pid) {
  char path[64], buf[1024];
  FILE *f;
  size_t n;
  char *p;
  int field;

  snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
  f = fopen(path, "r");
  if (f == NULL) return NULL;
  n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  /* The command name may hold spaces and parentheses: skip to the last
   * ')'; field 3 follows. */
  p = strrchr(buf, ')');
  if (p == NULL) return NULL;
  p++;
  for (field = 3; field < 22 && p != NULL; field++) { p = strchr(p + 1, ' '); }
  if (p == NULL) return NULL;
  p++;
  n = strcspn(p, " \n");
  return n > 0 ? tpuci__strndup(p, n) : NULL;
}

void tpuci__ctr_labels(tpuci__kvlist_t *out, const char *run_id, const char *job,
                       const char *instance, int attempt, int keep) {
  char num[32];
  char *start = tpuci__docker_pidstart((long) getpid());
  tpuci__kv_set(out, TPUCI__LABEL_RUN, run_id);
  tpuci__kv_set(out, TPUCI__LABEL_JOB, job ? job : "");
  tpuci__kv_set(out, TPUCI__LABEL_INSTANCE, instance ? instance : "");
  snprintf(num, sizeof(num), "%d", attempt);
  tpuci__kv_set(out, TPUCI__LABEL_ATTEMPT, num);
  snprintf(num, sizeof(num), "%ld", (long) getpid());
  tpuci__kv_set(out, TPUCI__LABEL_PID, num);
  if (start != NULL) tpuci__kv_set(out, TPUCI__LABEL_PIDSTART, start);
  tpuci__kv_set(out, TPUCI__LABEL_HOST, tpuci__docker_hostname());
  if (keep) tpuci__kv_set(out, TPUCI__LABEL_KEEP, "1");
  free(start);
}

int tpuci__docker_is_swarm(json_t *o) {
  const char *scope = json_string_value(json_object_get(o, "Scope"));
  json_t *labels = json_object_get(o, "Labels");
  if (scope != NULL && strcmp(scope, "swarm") == 0) return 1;
  return json_object_get(labels, "com.docker.swarm.service.id") != NULL;
}

int tpuci__docker_run_alive(json_t *labels) {
  const char *host = json_string_value(json_object_get(labels, TPUCI__LABEL_HOST));
  const char *pid = json_string_value(json_object_get(labels, TPUCI__LABEL_PID));
  const char *start = json_string_value(json_object_get(labels, TPUCI__LABEL_PIDSTART));
  char *end;
  long p;

  if (host == NULL || pid == NULL) return 0;
  if (strcmp(host, tpuci__docker_hostname()) != 0) return -1;
  p = strtol(pid, &end, 10);
  if (*pid == '\0' || *end != '\0' || p <= 0) return 0;
  if (kill((pid_t) p, 0) != 0 && errno != EPERM) return 0;
  if (start != NULL) {
    char *now = tpuci__docker_pidstart(p);
    int same = now == NULL || strcmp(now, start) == 0;
    free(now);
    if (!same) return 0;
  }
  return 1;
}

size_t tpuci__docker_count_dead(json_t *list) {
  size_t i, n = 0;
  json_t *o;
  json_array_foreach(list, i, o) {
    if (!tpuci__docker_is_swarm(o) && tpuci__docker_run_alive(json_object_get(o, "Labels")) == 0)
      n++;
  }
  return n;
}
