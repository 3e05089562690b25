/* The table of runtime drivers, and the environment every attempt gets. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

/* One row per runtime (props.h's kinds), each field named. */
static const tpuci__driver_t tpuci__drivers[TPUCI__RUNTIME__COUNT] = {
    /* The log and two output pipes. */
    [TPUCI__RUNTIME_LOCAL] = {.kind = TPUCI__RUNTIME_LOCAL,
                              .fds_per_host = 3,
                              .create = tpuci__runtime_local_new},
    /* The log, the attach and wait connections, under a memory limit
     * the stats stream, and short requests; measured 3, 3.5 for a gang's
     * host, 4 with the stats stream. */
    [TPUCI__RUNTIME_DOCKER] = {.kind = TPUCI__RUNTIME_DOCKER,
                               .results_mount = TPUCI__RESULTS_MOUNT,
                               .gangs = 1,
                               .fds_per_host = 5,
                               .create = tpuci__runtime_docker_new,
                               .check = tpuci__runtime_docker_check,
                               .gc = tpuci__runtime_docker_gc,
                               .doctor = tpuci__runtime_docker_doctor,
                               .image_ids = tpuci__runtime_docker_image_ids,
                               .one_machine = 1},
    /* The log, the task's followed log stream and short requests (the
     * task list is one request for every attempt). */
    [TPUCI__RUNTIME_SWARM] = {.kind = TPUCI__RUNTIME_SWARM,
                              .results_mount = TPUCI__RESULTS_MOUNT,
                              .gangs = 1,
                              .fds_per_host = 4,
                              .create = tpuci__runtime_swarm_new,
                              .check = tpuci__runtime_swarm_check,
                              .gc = tpuci__runtime_swarm_gc,
                              .doctor = tpuci__runtime_swarm_doctor,
                              .image_ids = tpuci__runtime_swarm_image_ids},
    /* One ssh client per host: its stdin, stdout and stderr pipes, the
     * host's log, and a second client's pipes (the cleanup). The job's
     * results folder is rewritten to the host's folder on the worker. */
    [TPUCI__RUNTIME_SSH] = {.kind = TPUCI__RUNTIME_SSH,
                            .results_mount = TPUCI__RESULTS_MOUNT,
                            .gangs = 1,
                            .fds_per_host = 6,
                            .create = tpuci__runtime_ssh_new,
                            .doctor = tpuci__runtime_ssh_doctor,
                            .gc_hosts = tpuci__runtime_ssh_gc},
};
#define TPUCI__NDRIVERS (sizeof(tpuci__drivers) / sizeof(tpuci__drivers[0]))

const tpuci__driver_t *tpuci__driver(tpuci__runtime_kind_t kind) {
  if ((int) kind < 0 || kind >= TPUCI__RUNTIME__COUNT || tpuci__drivers[kind].create == NULL)
    return NULL;
  return &tpuci__drivers[kind];
}

int tpuci__runtime_new(tpuci__runtime_kind_t kind, uv_loop_t *loop,
                       const tpuci__runtime_opts_t *opts, tpuci__runtime_t **out,
                       tpuci__err_t *err) {
  const tpuci__driver_t *d = tpuci__driver(kind);
  if (d == NULL) return tpuci__err_set(err, TPUCI_EUSAGE, "unknown runtime %d", (int) kind);
  return d->create(loop, opts, out, err);
}

/* Whether a selected instance of the plan runs on `kind`. */
static int tpuci__plan_uses(const tpuci__plan_t *plan, tpuci__runtime_kind_t kind) {
  size_t i;
  for (i = 0; i < plan->ninstances; i++)
    if (plan->instances[i].selected && plan->instances[i].runtime == kind) return 1;
  return 0;
}

int tpuci__runtime_check(const tpuci__plan_t *plan, tpuci__err_t *err) {
  size_t i;
  for (i = 0; i < TPUCI__NDRIVERS; i++) {
    const tpuci__driver_t *d = &tpuci__drivers[i];
    int r;
    if (d->check == NULL || !tpuci__plan_uses(plan, d->kind)) continue;
    r = d->check(plan, err);
    if (r != 0) return r;
  }
  return 0;
}

int tpuci__runtime_gc(const tpuci__plan_t *plan, int dry_run, tpuci__buf_t *report,
                      tpuci__err_t *err) {
  size_t i;
  int n = 0;
  for (i = 0; i < TPUCI__NDRIVERS; i++) {
    const tpuci__driver_t *d = &tpuci__drivers[i];
    int r = 0;
    /* With a spec, only what its jobs use. */
    if (plan != NULL && !tpuci__plan_uses(plan, d->kind)) continue;
    if (d->gc != NULL) r = d->gc(dry_run, report, err);
    if (r >= 0 && d->gc_hosts != NULL && plan != NULL) {
      int h = d->gc_hosts(plan, dry_run, report, err);
      r = h < 0 ? h : r + h;
    }
    if (r < 0) return r;
    n += r;
  }
  return n;
}

int tpuci__runtime_doctor(const tpuci__plan_t *plan, tpuci__buf_t *report, tpuci__err_t *err) {
  size_t i;
  int first = 0;
  for (i = 0; i < TPUCI__NDRIVERS; i++) {
    const tpuci__driver_t *d = &tpuci__drivers[i];
    tpuci__err_t e = {0, NULL};
    int r;
    if (d->doctor == NULL) continue;
    r = d->doctor(plan, report, first == 0 ? err : &e);
    tpuci__err_clear(&e);
    if (r != 0 && first == 0) first = r;
  }
  return first;
}

static void tpuci__env_push(tpuci__strv_t *out, const char *k, const char *v) {
  tpuci__strv_take(out, tpuci__printf("%s=%s", k, v));
}

void tpuci__attempt_env(const tpuci__attempt_t *a, tpuci__strv_t *out) {
  const tpuci__instance_t *inst = a->inst;
  char num[32];
  size_t i;

  tpuci__env_push(out, "TPUCI", "1");
  tpuci__env_push(out, "TPUCI_RUN_ID", a->run_id);
  tpuci__env_push(out, "TPUCI_JOB", inst->job);
  tpuci__env_push(out, "TPUCI_INSTANCE", inst->name);
  snprintf(num, sizeof(num), "%d", a->number);
  tpuci__env_push(out, "TPUCI_ATTEMPT", num);
  snprintf(num, sizeof(num), "%d", inst->retry.attempts);
  tpuci__env_push(out, "TPUCI_MAX_ATTEMPTS", num);
  if (a->results_path) tpuci__env_push(out, "TPUCI_RESULTS", a->results_path);
  for (i = 0; i < inst->matrix.len; i++) {
    char *key = tpuci__printf("TPUCI_MATRIX_%s", inst->matrix.items[i].key);
    char *p;
    for (p = key + 13; *p; p++)
      *p = isalnum((unsigned char) *p) ? (char) toupper((unsigned char) *p) : '_';
    tpuci__env_push(out, key, inst->matrix.items[i].value);
    free(key);
  }
  for (i = 0; i < inst->env.len; i++)
    tpuci__env_push(out, inst->env.items[i].key, inst->env.items[i].value);
}

int tpuci__attempt_host_env(const tpuci__attempt_t *a, const tpuci__slice_t *s, int host,
                            tpuci__strv_t *out, tpuci__err_t *err) {
  return tpuci__attempt_host_env_named(a, s, host, NULL, out, err);
}

int tpuci__attempt_host_env_named(const tpuci__attempt_t *a, const tpuci__slice_t *s, int host,
                                  const char *const *hostnames, tpuci__strv_t *out,
                                  tpuci__err_t *err) {
  tpuci__kvlist_t env = {NULL, 0, 0};
  size_t i;
  if (s != NULL) {
    int rc = tpuci__topology_host_env(a->inst, s, host, hostnames, &env, err);
    if (rc != 0) return rc;
  }
  tpuci__attempt_env(a, out);
  for (i = 0; i < env.len; i++) tpuci__env_push(out, env.items[i].key, env.items[i].value);
  tpuci__kv_free(&env);
  return 0;
}
