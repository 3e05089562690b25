/* `tpuci doctor` for runtime "ssh": every worker of every `hosts`
 * declaration a selected job uses, reached once with BatchMode (no
 * prompt), one line each; and `tpuci gc SPEC`: what dead runs left in
 * /tmp on each of them. */
#include <stdlib.h>
#include <string.h>

#include "runtime/ssh/ssh.h"

/* Checks worker i of hs (and its docker, for jobs with an image);
 * returns 0 or TPUCI_EENGINE, with err filled when it is the first
 * failure (err_free). */
static int tpuci__ssh_doctor_one(const tpuci__hostset_t *hs, size_t i, int docker,
                                 tpuci__buf_t *report, int err_free, tpuci__err_t *err) {
  tpuci__strv_t argv = {NULL, 0, 0};
  tpuci__buf_t out;
  char *target = tpuci__ssh_host_text(&hs->hosts[i]), *last = NULL;
  int st;

  tpuci__buf_init(&out);
  tpuci__ssh_argv(hs, i, NULL, NULL, &argv);
  tpuci__strv_push(&argv, docker ? TPUCI__SSH_DOCKER_CHECK : "true");
  st = tpuci__ssh_run_capture(&argv, &out, &last);
  tpuci__strv_free(&argv);
  if (st == 0) {
    char *version = docker ? tpuci__ssh_last_line(out.data ? out.data : "", out.len) : NULL;
    tpuci__buf_addf(report, "ok   ssh: worker-%zu %s (hosts '%s', %s): reachable%s%s\n", i, target,
                    hs->name, hs->where, version ? ", docker engine " : "", version ? version : "");
    free(version);
  } else {
    char *why = last && docker && st != 255 ? tpuci__printf("docker does not work there: %s; %s",
                                                            last, tpuci__ssh_advice(st, last, 1))
                : last                      ? tpuci__strdup(last)
                : st == 255 ? tpuci__strdup("ssh failed (exit 255) and said nothing")
                : st < 0    ? tpuci__strdup("ssh was killed")
                            : tpuci__printf("`%s` exited %d on it",
                                         docker ? TPUCI__SSH_DOCKER_CHECK : "true", st);
    tpuci__buf_addf(report, "FAIL ssh: worker-%zu %s (hosts '%s', %s): %s\n", i, target, hs->name,
                    hs->where, why);
    if (err_free)
      tpuci__err_set(err, TPUCI_EENGINE, "hosts '%s' (%s): worker-%zu %s: %s", hs->name, hs->where,
                     i, target, why);
    free(why);
  }
  free(last);
  free(target);
  tpuci__buf_free(&out);
  return st == 0 ? 0 : TPUCI_EENGINE;
}

/* Which hostsets selected ssh jobs use (calloc'd flags). */
unsigned char *tpuci__ssh_used(const tpuci__plan_t *plan) {
  unsigned char *used = tpuci__calloc(plan->nhostsets + 1, 1);
  size_t i;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *in = &plan->instances[i];
    if (in->selected && in->runtime == TPUCI__RUNTIME_SSH && in->hostset >= 0 &&
        (size_t) in->hostset < plan->nhostsets)
      used[in->hostset] |= TPUCI__SSH_USED | (in->image >= 0 ? TPUCI__SSH_DOCKER : 0);
  }
  return used;
}

int tpuci__runtime_ssh_doctor(const tpuci__plan_t *plan, tpuci__buf_t *report, tpuci__err_t *err) {
  unsigned char *used;
  size_t i, k;
  int first = 0;

  if (plan == NULL || plan->nhostsets == 0) return 0;
  used = tpuci__ssh_used(plan);
  for (i = 0; i < plan->nhostsets; i++) {
    if (!used[i]) continue;
    for (k = 0; k < plan->hostsets[i].nhosts; k++) {
      int r = tpuci__ssh_doctor_one(&plan->hostsets[i], k, used[i] & TPUCI__SSH_DOCKER, report,
                                    first == 0, err);
      if (r != 0 && first == 0) first = r;
    }
  }
  free(used);
  return first;
}

int tpuci__runtime_ssh_gc(const tpuci__plan_t *plan, int dry_run, tpuci__buf_t *report,
                          tpuci__err_t *err) {
  unsigned char *used;
  char *cmd;
  size_t i, k;
  int n = 0, rc = 0;

  if (plan == NULL || plan->nhostsets == 0) return 0;
  /* Here: the control folders of a tpuci killed before its clean end. */
  n = tpuci__ssh_control_dirs_gc(dry_run, report);
  used = tpuci__ssh_used(plan);
  cmd = tpuci__ssh_gc_command(dry_run);
  for (i = 0; i < plan->nhostsets && rc == 0; i++) {
    const tpuci__hostset_t *hs = &plan->hostsets[i];
    if (!used[i]) continue;
    for (k = 0; k < hs->nhosts && rc == 0; k++) {
      tpuci__strv_t argv = {NULL, 0, 0};
      tpuci__buf_t out;
      char *target = tpuci__ssh_host_text(&hs->hosts[k]), *last = NULL, *line, *save = NULL;
      int st;
      tpuci__buf_init(&out);
      tpuci__ssh_argv(hs, k, NULL, NULL, &argv);
      tpuci__strv_push(&argv, cmd);
      st = tpuci__ssh_run_capture(&argv, &out, &last);
      tpuci__strv_free(&argv);
      tpuci__buf_add(&out, "", 0);
      for (line = strtok_r(out.data, "\n", &save); line != NULL;
           line = strtok_r(NULL, "\n", &save)) {
        tpuci__buf_addf(report, "%s ssh: worker-%zu %s (hosts '%s'): %s\n",
                        dry_run ? "would remove" : "removed", k, target, hs->name, line);
        n++;
      }
      if (st != 0)
        rc = tpuci__err_set(err, TPUCI_EENGINE, "ssh: worker-%zu %s (hosts '%s', %s): %s", k,
                            target, hs->name, hs->where, last ? last : "the cleanup failed");
      tpuci__buf_free(&out);
      free(last);
      free(target);
    }
  }
  free(cmd);
  free(used);
  return rc != 0 ? rc : n;
}
