/* Choosing a runtime driver, and the environment every attempt gets. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

int tpuci__runtime_new(tpuci__runtime_kind_t kind, uv_loop_t *loop,
                       const tpuci__runtime_opts_t *opts,
                       tpuci__runtime_t **out, tpuci__err_t *err) {
  switch (kind) {
    case TPUCI__RUNTIME_LOCAL:
      return tpuci__runtime_local_new(loop, opts, out, err);
    case TPUCI__RUNTIME_DOCKER:
      return tpuci__runtime_docker_new(loop, opts, out, err);
    default:
      return tpuci__err_set(err, TPUCI_EUSAGE, "unknown runtime %d",
                            (int) kind);
  }
}

int tpuci__runtime_check(const tpuci__plan_t *plan, tpuci__err_t *err) {
  size_t i;
  for (i = 0; i < plan->ninstances; i++)
    if (plan->instances[i].selected &&
        plan->instances[i].runtime == TPUCI__RUNTIME_DOCKER)
      return tpuci__runtime_docker_check(plan, err);
  return 0;
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

/* Topologies at run time. */

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

int tpuci__attempt_host_env(const tpuci__attempt_t *a, const tpuci__slice_t *s,
                            int host, tpuci__strv_t *out, tpuci__err_t *err) {
  tpuci__kvlist_t env = {NULL, 0, 0};
  size_t i;
  if (s != NULL) {
    int rc = tpuci__topology_host_env(a->inst, s, host, &env, err);
    if (rc != 0) return rc;
  }
  tpuci__attempt_env(a, out);
  for (i = 0; i < env.len; i++)
    tpuci__env_push(out, env.items[i].key, env.items[i].value);
  tpuci__kv_free(&env);
  return 0;
}
