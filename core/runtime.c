/* Choosing a runtime driver, and the environment every attempt gets. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

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
