/* Runtime "ssh": a gang's hosts are the workers of a `hosts` declaration,
 * each reached with the system's OpenSSH client (docs/ssh.md). The
 * runtime object: prepare (one first
 * connection to every worker the run uses, which stays as ssh's shared
 * control connection: a worker that is not there (refused, timed out)
 * is said and left to its attempts (no capacity); another unreachable
 * one (a bad host key, a broken login) stops the run before any job
 * starts, exit 3), starting attempts on the attempt core (attempt.c's
 * operations) and closing the shared connections. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ssh/ssh.h"

#define TPUCI__SSH_GRACE_MS 5000

/* The runtime's own processes: prepare's first connections, close's
 * `ssh -O exit`s. */

static void tpuci__ssh_procs_free(tpuci__ssh_rt_t *r) {
  size_t i;
  for (i = 0; i < r->nprocs; i++) tpuci__buf_free(&r->procs[i].tail);
  free(r->procs);
  r->procs = NULL;
  r->nprocs = r->procs_open = 0;
}

/* Every worker of every `hosts` a selected job uses, as (hostset, host)
 * pairs into r->proc_hostset and r->proc_host. */
static size_t tpuci__ssh_targets(tpuci__ssh_rt_t *r, const tpuci__plan_t *plan) {
  unsigned char *used = tpuci__ssh_used(plan);
  size_t i, k, n = 0;
  for (i = 0; i < plan->nhostsets; i++)
    if (used[i]) n += plan->hostsets[i].nhosts;
  free(r->proc_hostset);
  free(r->proc_host);
  free(r->proc_docker);
  r->proc_hostset = tpuci__calloc(n + 1, sizeof(size_t));
  r->proc_host = tpuci__calloc(n + 1, sizeof(size_t));
  r->proc_docker = tpuci__calloc(n + 1, 1);
  n = 0;
  for (i = 0; i < plan->nhostsets; i++) {
    if (!used[i]) continue;
    for (k = 0; k < plan->hostsets[i].nhosts; k++) {
      r->proc_hostset[n] = i;
      r->proc_host[n] = k;
      r->proc_docker[n] = (used[i] & TPUCI__SSH_DOCKER) != 0;
      n++;
    }
  }
  free(used);
  return n;
}

/* Runs one process per target, `extra` before the destination (may be
 * NULL), the remote command `cmd` (may be NULL) after it, or on a worker
 * that runs containers `docker_cmd` when not NULL. */
static void tpuci__ssh_procs_run(tpuci__ssh_rt_t *r, size_t n, const char *extra, const char *cmd,
                                 const char *docker_cmd, void (*done)(tpuci__sshproc_t *)) {
  char *control = tpuci__ssh_control_path(r);
  size_t i;
  r->procs = tpuci__calloc(n + 1, sizeof(*r->procs));
  r->nprocs = r->procs_open = n;
  for (i = 0; i < n; i++) {
    const tpuci__hostset_t *hs = &r->plan->hostsets[r->proc_hostset[i]];
    tpuci__strv_t argv = {0};
    const char *opts[] = {"-O", extra, NULL};
    tpuci__ssh_argv(hs, r->proc_host[i], control, extra != NULL ? opts : NULL, &argv);
    if (docker_cmd != NULL && r->proc_docker[i]) tpuci__strv_push(&argv, docker_cmd);
    else if (cmd != NULL) tpuci__strv_push(&argv, cmd);
    r->procs[i].data = r;
    r->procs[i].on_done = done;
    tpuci__sshproc_spawn(&r->procs[i], r->loop, &argv, 0);
    tpuci__strv_free(&argv);
  }
  free(control);
}

/* prepare. */

static void tpuci__ssh_prepared(tpuci__ssh_rt_t *r) {
  void (*cb)(tpuci__runtime_t *, int) = r->prepare_cb;
  size_t i, failed = 0;
  int status = 0;
  r->prepare_cb = NULL;
  for (i = 0; i < r->nprocs; i++) {
    const tpuci__sshproc_t *p = &r->procs[i];
    const tpuci__hostset_t *hs = &r->plan->hostsets[r->proc_hostset[i]];
    char *target, *why;
    if (p->status == 0) continue;
    target = tpuci__ssh_host_text(&hs->hosts[r->proc_host[i]]);
    why = p->spawn_error
              ? tpuci__printf("cannot run %s: %s", tpuci__ssh_client(), uv_strerror(p->spawn_error))
              : tpuci__sshproc_last_line(p);
    if (why == NULL)
      why = p->killed || p->status < 0
                ? tpuci__strdup("ssh was killed")
                : tpuci__printf("ssh exited %lld and said nothing", (long long) p->status);
    if (p->status == 255 && !p->killed && tpuci__ssh_connect_failed(why)) {
      /* Not there (yet): no capacity, which its jobs' attempts say and
       * retries.capacity retries; not a reason to stop the run. */
      if (r->rt.on_message != NULL) {
        char *m = tpuci__printf("ssh: worker-%zu %s (hosts '%s', %s) is not there: %s; its "
                                "jobs' attempts end no-capacity (retries.capacity)",
                                r->proc_host[i], target, hs->name, hs->where, why);
        r->rt.on_message(&r->rt, m);
        free(m);
      }
    } else if (failed == 0 && r->proc_docker[i] && p->status > 0 && p->status != 255) {
      /* Reached, but its docker does not work: no container would start. */
      failed++;
      tpuci__err_set(&r->rt.err, TPUCI_EENGINE,
                     "ssh: worker-%zu %s (hosts '%s', %s): docker does not work there: %s; %s",
                     r->proc_host[i], target, hs->name, hs->where, why,
                     tpuci__ssh_advice((int) p->status, why, 1));
    } else if (failed++ == 0) {
      tpuci__err_set(&r->rt.err, TPUCI_EENGINE,
                     "ssh: worker-%zu %s (hosts '%s', %s) cannot be reached: %s "
                     "(`tpuci doctor` checks every worker)",
                     r->proc_host[i], target, hs->name, hs->where, why);
    } else if (r->rt.on_message != NULL) {
      char *m = tpuci__printf("ssh: worker-%zu %s (hosts '%s', %s) cannot be reached "
                              "either: %s",
                              r->proc_host[i], target, hs->name, hs->where, why);
      r->rt.on_message(&r->rt, m);
      free(m);
    }
    free(target);
    free(why);
  }
  if (r->aborted) {
    tpuci__err_clear(&r->rt.err);
    tpuci__err_set(&r->rt.err, UV_ECANCELED, "cancelled while connecting to the workers");
    status = UV_ECANCELED;
  } else if (failed > 0) {
    status = TPUCI_EENGINE;
  }
  /* The targets stay for close's `ssh -O exit`. */
  tpuci__ssh_procs_free(r);
  if (cb) cb(&r->rt, status);
}

static void tpuci__ssh_on_probed(tpuci__sshproc_t *p) {
  tpuci__ssh_rt_t *r = p->data;
  if (--r->procs_open > 0) return;
  tpuci__ssh_prepared(r);
}

static int tpuci__ssh_prepare(tpuci__runtime_t *rt, const tpuci__plan_t *plan,
                              void (*cb)(tpuci__runtime_t *rt, int status)) {
  tpuci__ssh_rt_t *r = (tpuci__ssh_rt_t *) rt;
  size_t n;
  r->plan = plan;
  n = tpuci__ssh_targets(r, plan);
  r->prepare_cb = cb;
  if (n == 0) {
    tpuci__ssh_prepared(r);
    return 0;
  }
  /* `true` over the connection that then stays as the shared one; on
   * the workers of jobs with an image, whether their docker works. */
  tpuci__ssh_procs_run(r, n, NULL, "true", TPUCI__SSH_DOCKER_CHECK, tpuci__ssh_on_probed);
  r->ntargets = n;
  return 0;
}

static void tpuci__ssh_abort(tpuci__runtime_t *rt) {
  tpuci__ssh_rt_t *r = (tpuci__ssh_rt_t *) rt;
  size_t i;
  if (r->prepare_cb == NULL) return;
  r->aborted = 1;
  for (i = 0; i < r->nprocs; i++) tpuci__sshproc_deadline(&r->procs[i], 0);
}

/* start. */

static int tpuci__ssh_start(tpuci__runtime_t *rt, tpuci__attempt_t *a) {
  tpuci__ssh_rt_t *r = (tpuci__ssh_rt_t *) rt;
  if (r->closing) return tpuci__err_set(&rt->err, TPUCI_ESTATE, "the ssh runtime is closing");
  return tpuci__unit_start(rt, "ssh", &tpuci__ssh_ops, a, TPUCI__SSH_GRACE_MS, &r->atts);
}

/* close. */

static void tpuci__ssh_closed(tpuci__ssh_rt_t *r) {
  void (*cb)(tpuci__runtime_t *) = r->close_cb;
  tpuci__ssh_procs_free(r);
  tpuci__ssh_control_dir_remove(r->control_dir);
  r->close_cb = NULL;
  if (cb) cb(&r->rt);
}

static void tpuci__ssh_on_exited(tpuci__sshproc_t *p) {
  tpuci__ssh_rt_t *r = p->data;
  if (--r->procs_open > 0) return;
  tpuci__ssh_closed(r);
}

static void tpuci__ssh_maybe_closed(tpuci__ssh_rt_t *r) {
  if (!r->closing || r->atts.atts != NULL || r->atts.handles > 0 || r->close_cb == NULL ||
      r->nprocs > 0)
    return;
  if (r->ntargets == 0) {
    tpuci__ssh_closed(r);
    return;
  }
  /* The shared connections end now, not ControlPersist later. */
  tpuci__ssh_procs_run(r, r->ntargets, "exit", NULL, NULL, tpuci__ssh_on_exited);
  r->ntargets = 0;
}

static void tpuci__ssh_changed(tpuci__runtime_t *rt) {
  tpuci__ssh_maybe_closed((tpuci__ssh_rt_t *) rt);
}

static void tpuci__ssh_close(tpuci__runtime_t *rt, void (*cb)(tpuci__runtime_t *rt)) {
  tpuci__ssh_rt_t *r = (tpuci__ssh_rt_t *) rt;
  r->closing = 1;
  r->close_cb = cb;
  tpuci__ssh_maybe_closed(r);
}

static void tpuci__ssh_free(tpuci__runtime_t *rt) {
  tpuci__ssh_rt_t *r = (tpuci__ssh_rt_t *) rt;
  if (r == NULL) return;
  tpuci__ssh_procs_free(r);
  free(r->proc_hostset);
  free(r->proc_host);
  free(r->proc_docker);
  free(r->control_dir);
  tpuci__err_clear(&r->rt.err);
  free(r);
}

int tpuci__runtime_ssh_new(uv_loop_t *loop, const tpuci__runtime_opts_t *opts,
                           tpuci__runtime_t **out, tpuci__err_t *err) {
  tpuci__ssh_rt_t *r;
  char *dir;
  int rc = tpuci__ssh_control_dir_new(&dir, "ssh", err);
  *out = NULL;
  if (rc != 0) return rc;
  r = tpuci__calloc(1, sizeof(*r));
  r->control_dir = dir;
  tpuci__unit_rt_init(&r->rt, "ssh", loop, &r->atts, tpuci__ssh_changed);
  r->rt.prepare = tpuci__ssh_prepare;
  r->rt.abort = tpuci__ssh_abort;
  r->rt.start = tpuci__ssh_start;
  r->rt.close = tpuci__ssh_close;
  r->rt.free = tpuci__ssh_free;
  r->loop = loop;
  (void) opts;
  *out = &r->rt;
  return 0;
}
