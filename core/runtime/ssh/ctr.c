/* A host's container on its worker (ssh.h): a job with an image on
 * runtime "ssh" runs in a container of the worker's own engine, made
 * with `docker create` by the session's script before its ready line
 * (remote.c) and started once the whole gang is connected. This file
 * writes that part of the script: the job's image, its environment, the
 * worker's network, the host's results folder, its mounts and limits,
 * and the accelerator options (plan.h's tpuci__ctr_opts_t) as the docker
 * CLI's flags. Pure. */
#include <stdio.h>
#include <string.h>

#include "runtime/ssh/ssh.h"

static void tpuci__word(tpuci__buf_t *b, const char *s) {
  tpuci__buf_adds(b, " ");
  tpuci__buf_add_shell(b, s);
}

static void tpuci__flag(tpuci__buf_t *b, const char *flag, const char *value) {
  tpuci__word(b, flag);
  tpuci__word(b, value);
}

/* A field of the docker CLI's comma-separated values (--mount, --gpus):
 * quoted when it holds a comma or a quote. */
static void tpuci__csv_field(tpuci__buf_t *b, const char *s) {
  if (strpbrk(s, ",\"") == NULL) {
    tpuci__buf_adds(b, s);
    return;
  }
  tpuci__buf_adds(b, "\"");
  for (; *s; s++) {
    if (*s == '"') tpuci__buf_adds(b, "\"");
    tpuci__buf_add(b, s, 1);
  }
  tpuci__buf_adds(b, "\"");
}

/* A device glob as a pattern sh expands: the glob's characters bare,
 * anything else quoted. */
static void tpuci__glob_word(tpuci__buf_t *b, const char *g) {
  for (; *g; g++) {
    char c = *g;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
        strchr("/_.*?[]!^-", c) != NULL) {
      tpuci__buf_add(b, g, 1);
    } else {
      char one[2] = {c, '\0'};
      tpuci__buf_add_shell(b, one);
    }
  }
}

/* Devices: fixed ones as flags; a glob's matches on the worker (each at
 * its own path) gathered first into "$@", none being an error there. */
static void tpuci__devices(tpuci__buf_t *pre, tpuci__buf_t *b, const tpuci__ctr_opts_t *c) {
  size_t i;
  for (i = 0; i < c->ndevices; i++) {
    const tpuci__device_t *d = &c->devices[i];
    const char *perms = d->perms ? d->perms : "rwm";
    if (!d->glob) {
      char *v = tpuci__printf("%s:%s:%s", d->host, d->target ? d->target : d->host, perms);
      tpuci__flag(b, "--device", v);
      free(v);
      continue;
    }
    tpuci__buf_adds(pre, "m=0\nfor x in ");
    tpuci__glob_word(pre, d->host);
    tpuci__buf_adds(pre, "; do [ -e \"$x\" ] || continue; m=1; set -- \"$@\" --device \"$x:$x:");
    tpuci__buf_adds(pre, perms);
    tpuci__buf_adds(pre, "\"; done\n[ \"$m\" = 1 ] || { echo ");
    {
      char *msg = tpuci__printf("devices: '%s' matches nothing on this worker", d->host);
      tpuci__buf_add_shell(pre, msg);
      free(msg);
    }
    tpuci__buf_adds(pre, " >&2; exit 125; }\n");
  }
}

static void tpuci__gpus(tpuci__buf_t *b, const tpuci__gpus_t *g) {
  tpuci__buf_t v;
  size_t i;
  tpuci__buf_init(&v);
  if (g->count < 0) {
    tpuci__buf_adds(&v, "count=all");
  } else if (g->count > 0) {
    tpuci__buf_addf(&v, "count=%d", g->count);
  } else {
    tpuci__buf_t ids;
    tpuci__buf_init(&ids);
    tpuci__buf_adds(&ids, "device=");
    for (i = 0; i < g->ids.len; i++) {
      if (i > 0) tpuci__buf_adds(&ids, ",");
      tpuci__buf_adds(&ids, g->ids.items[i]);
    }
    tpuci__csv_field(&v, ids.data);
    tpuci__buf_free(&ids);
  }
  if (g->driver != NULL) {
    tpuci__buf_adds(&v, ",driver=");
    tpuci__csv_field(&v, g->driver);
  }
  if (g->caps.len > 0) {
    tpuci__buf_t caps;
    tpuci__buf_init(&caps);
    tpuci__buf_adds(&caps, "capabilities=");
    for (i = 0; i < g->caps.len; i++) {
      if (i > 0) tpuci__buf_adds(&caps, ",");
      tpuci__buf_adds(&caps, g->caps.items[i]);
    }
    tpuci__buf_adds(&v, ",");
    tpuci__csv_field(&v, caps.data);
    tpuci__buf_free(&caps);
  }
  tpuci__flag(b, "--gpus", v.data);
  tpuci__buf_free(&v);
}

static void tpuci__accel(tpuci__buf_t *pre, tpuci__buf_t *b, const tpuci__ctr_opts_t *c) {
  char num[32];
  size_t i;
  if (c->shm_bytes > 0) {
    snprintf(num, sizeof(num), "%llu", (unsigned long long) c->shm_bytes);
    tpuci__flag(b, "--shm-size", num);
  }
  if (c->ipc != NULL) tpuci__flag(b, "--ipc", c->ipc);
  if (c->privileged) tpuci__word(b, "--privileged");
  tpuci__devices(pre, b, c);
  for (i = 0; i < c->cap_add.len; i++) tpuci__flag(b, "--cap-add", c->cap_add.items[i]);
  for (i = 0; i < c->cap_drop.len; i++) tpuci__flag(b, "--cap-drop", c->cap_drop.items[i]);
  for (i = 0; i < c->nulimits; i++) {
    char *v = tpuci__printf("%s=%lld:%lld", c->ulimits[i].name, (long long) c->ulimits[i].soft,
                            (long long) c->ulimits[i].hard);
    tpuci__flag(b, "--ulimit", v);
    free(v);
  }
  if (c->gpus != NULL) tpuci__gpus(b, c->gpus);
  for (i = 0; i < c->sysctls.len; i++) {
    char *v = tpuci__printf("%s=%s", c->sysctls.items[i].key, c->sysctls.items[i].value);
    tpuci__flag(b, "--sysctl", v);
    free(v);
  }
}

static void tpuci__mount(tpuci__buf_t *b, const tpuci__mount_t *m) {
  tpuci__buf_t v;
  tpuci__buf_init(&v);
  tpuci__buf_adds(&v, "type=bind,");
  {
    char *src = tpuci__printf("source=%s", m->source);
    char *dst = tpuci__printf("target=%s", m->target);
    tpuci__csv_field(&v, src);
    tpuci__buf_adds(&v, ",");
    tpuci__csv_field(&v, dst);
    free(src);
    free(dst);
  }
  if (m->read_only) tpuci__buf_adds(&v, ",readonly");
  tpuci__flag(b, "--mount", v.data);
  tpuci__buf_free(&v);
}

char *tpuci__ssh_ctr_create(const tpuci__ssh_ctr_t *c) {
  tpuci__buf_t pre, b;
  char num[32];
  size_t i;

  tpuci__buf_init(&pre);
  tpuci__buf_init(&b);
  tpuci__buf_adds(&pre, "set --\n");
  tpuci__buf_adds(&b, "docker create");
  tpuci__flag(&b, "--name", c->name);
  for (i = 0; c->labels != NULL && i < c->labels->len; i++) {
    char *v = tpuci__printf("%s=%s", c->labels->items[i].key, c->labels->items[i].value);
    tpuci__flag(&b, "--label", v);
    free(v);
  }
  /* An init as PID 1 (signals reach the job, zombies are reaped), the
   * worker's own network (a TPU VM's: the slice's interconnect and the
   * peers' addresses), no stdin. */
  tpuci__word(&b, "--init");
  tpuci__flag(&b, "--network", "host");
  tpuci__flag(&b, "--pull", tpuci__pull_name(c->pull));
  for (i = 0; c->env != NULL && i < c->env->len; i++) tpuci__flag(&b, "-e", c->env->items[i]);
  if (c->workdir != NULL && *c->workdir) tpuci__flag(&b, "-w", c->workdir);
  if (c->results != NULL) {
    /* The host's folder on the worker ($d, the script's), copied back
     * after the attempt as a process host's is. */
    char *dst = tpuci__printf("target=%s", c->results);
    tpuci__buf_adds(&b, " --mount \"type=bind,source=$d/results,\"");
    tpuci__buf_add_shell(&b, dst);
    free(dst);
  }
  for (i = 0; i < c->nmounts; i++) tpuci__mount(&b, &c->mounts[i]);
  if (c->cpus > 0) {
    snprintf(num, sizeof(num), "%.3f", c->cpus);
    tpuci__flag(&b, "--cpus", num);
  }
  if (c->memory_bytes > 0) {
    /* Swap as large as memory means no swap: an OOM kill is real. */
    snprintf(num, sizeof(num), "%llu", (unsigned long long) c->memory_bytes);
    tpuci__flag(&b, "--memory", num);
    tpuci__flag(&b, "--memory-swap", num);
  }
  if (c->ctr != NULL) tpuci__accel(&pre, &b, c->ctr);
  tpuci__buf_adds(&b, " \"$@\"");
  tpuci__word(&b, c->image);
  for (i = 0; c->argv != NULL && i < c->argv->len; i++) tpuci__word(&b, c->argv->items[i]);
  /* Its id goes nowhere; what docker says on failure is the session's
   * last word (the attempt is infra). */
  tpuci__buf_adds(&b, " > /dev/null || exit 125\n");
  tpuci__buf_add(&pre, b.data, b.len);
  tpuci__buf_free(&b);
  return tpuci__buf_steal(&pre);
}
