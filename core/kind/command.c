/* The command kind (kind.h): an instance runs its command, its outcome is
 * its exit status's, and every attempt runs the same. An instance with
 * expect_devices checks the devices of its topology before its command
 * (kind/devices.h): its attempts get a results folder for the verdict,
 * and one whose check failed is infra, its command not run. Without
 * that the scheduler's defaults are this kind. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "kind/devices.h"
#include "kind/kind.h"
#include "plan/host_env.h"

struct tpuci__kind_run_s {
  const tpuci__plan_t *plan; /* borrowed for the run */
};

tpuci__kind_run_t *tpuci__command_kind_new(const tpuci__kind_args_t *a) {
  tpuci__kind_run_t *kr = tpuci__calloc(1, sizeof(*kr));
  kr->plan = a->plan;
  return kr;
}

void tpuci__command_kind_free(tpuci__kind_run_t *kr) { free(kr); }

static int tpuci__command_claims(const tpuci__instance_t *inst) {
  (void) inst;
  return 1;
}

/* An attempt of an instance with a device check runs the check, then its
 * command (tpuci__devices_command_argv), with a results folder for the
 * verdict that containers see mounted, as a pytest attempt's. */
static int tpuci__command_prepare(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p, char **cause) {
  const tpuci__instance_t *inst;
  const tpuci__driver_t *d;
  char *devices;
  int r;

  if (kr == NULL || p->role != TPUCI__PROC_ATTEMPT) return 0;
  inst = &kr->plan->instances[p->index];
  devices = tpuci__devices_arg(kr->plan, inst);
  if (devices == NULL) return 0;
  d = tpuci__driver(inst->runtime);
  p->results_dir = tpuci__printf("%s/results-%d", p->dir, p->number);
  p->results_path = d->results_mount ? d->results_mount : p->results_dir;
  tpuci__devices_command_argv(inst, devices, p->results_path, &p->argv);
  free(devices);
  r = tpuci__mkdir_p(p->results_dir, 0777);
  if (r != 0) *cause = tpuci__printf("cannot create %s: %s", p->results_dir, uv_strerror(r));
  return r;
}

/* A host whose devices are not the topology's: the attempt is infra, and
 * the cause says what it saw ("device check: jax sees 8 cpu devices,
 * expected 4 TPU chips on worker-0"). */
static tpuci_outcome_t tpuci__command_ended(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p,
                                            const tpuci__proc_end_t *end, char **cause) {
  char *devices = p->results_dir ? tpuci__devices_mismatch(p->results_dir) : NULL;
  (void) kr;
  if (devices == NULL) return end->outcome;
  free(*cause);
  *cause = tpuci__printf("device check: %s", devices);
  free(devices);
  return TPUCI_OUTCOME_INFRA;
}

const tpuci__kind_t tpuci__kind_command = {
    .name = "command",
    .claims = tpuci__command_claims,
    .prepare = tpuci__command_prepare,
    .ended = tpuci__command_ended,
};

void tpuci__attempt_result_free(tpuci__attempt_result_t *r) {
  free(r->cause);
  free(r->log_path);
  r->cause = NULL;
  r->log_path = NULL;
}

void tpuci__instance_result_free(tpuci__instance_result_t *r) {
  size_t i;
  for (i = 0; i < r->nattempts; i++) tpuci__attempt_result_free(&r->attempts[i]);
  free(r->attempts);
  r->attempts = NULL;
  r->nattempts = 0;
  r->outcome = TPUCI_OUTCOME_NONE;
  if (r->kind_data != NULL && r->kind_free != NULL) r->kind_free(r->kind_data);
  r->kind_data = NULL;
  r->kind_free = NULL;
}

void tpuci__results_host_dirs(const char *results_dir, tpuci__strv_t *out) {
  struct stat st;
  size_t first = out->len;
  int i;
  for (i = 0;; i++) {
    char *dir = tpuci__printf("%s/worker-%d", results_dir, i);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
      free(dir);
      break;
    }
    tpuci__strv_take(out, dir);
  }
  if (out->len == first) tpuci__strv_push(out, results_dir);
}

char *tpuci__results_first_string(const char *results_dir, const char *file, const char *key,
                                  size_t max) {
  tpuci__strv_t dirs = {0};
  char *said = NULL;
  size_t k;
  tpuci__results_host_dirs(results_dir, &dirs);
  for (k = 0; k < dirs.len && said == NULL; k++) {
    char *path = tpuci__printf("%s/%s", dirs.items[k], file);
    json_t *o = json_load_file(path, 0, NULL);
    const char *m = json_string_value(json_object_get(o, key));
    if (m != NULL) said = tpuci__strndup(m, strnlen(m, max));
    json_decref(o);
    free(path);
  }
  tpuci__strv_free(&dirs);
  return said;
}
