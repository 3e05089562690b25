/* A gang's outcome and its per-host log lines (pure), and what each host
 * of an attempt runs with (its environment, mounts and create body). */
#include "runtime/engine/gang.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "runtime/engine/container.h"
#include "runtime/engine/gate.h"

#define TPUCI__MIB (1024.0 * 1024.0)

/* Of the hosts that pass `own`-ness, the one whose wait answered first. */
static int tpuci__gang_first(const tpuci__gang_host_t *h, size_t n, int own) {
  int best = -1;
  size_t i;
  for (i = 0; i < n; i++) {
    if (!h[i].exited || (h[i].status == 0 && !h[i].oom)) continue;
    if (own && h[i].stopped) continue;
    if (best < 0 || h[i].order < h[best].order) best = (int) i;
  }
  return best;
}

void tpuci__gang_verdict(const tpuci__gang_host_t *hosts, size_t n, uint64_t memory_bytes,
                         tpuci__gang_verdict_t *out) {
  const tpuci__gang_host_t *c;
  char *what = NULL;
  int k;

  memset(out, 0, sizeof(*out));
  out->host = -1;
  out->exit_code = 0;
  k = tpuci__gang_first(hosts, n, 1);
  if (k < 0) k = tpuci__gang_first(hosts, n, 0);
  if (k < 0) return; /* every host exited 0 */

  c = &hosts[k];
  out->host = k;
  out->exit_code = (int) c->status;
  if (c->status > 128 && c->status < 128 + 64 && (c->signals & (1ull << (c->status - 128)))) {
    out->term_signal = (int) c->status - 128;
    out->exit_code = -1;
  }
  if (c->oom) {
    out->oom = 1;
    if (memory_bytes > 0)
      what = tpuci__printf("killed by the kernel: out of memory (memory "
                           "limit %.0f MiB%s)",
                           (double) memory_bytes / TPUCI__MIB,
                           c->oom_unreported == TPUCI__OOM_STATS
                               ? "; the engine reported no OOM kill, but "
                                 "its stats showed the limit reached"
                               : "");
    else what = tpuci__strdup("killed by the kernel: out of memory");
  } else if (c->oom_unreported == TPUCI__OOM_PROBABLY && memory_bytes > 0) {
    /* The limit and a SIGKILL nobody here sent say so, whatever the
     * engine did not: `retries.on = {"oom"}` must catch it. */
    out->oom = 1;
    what = tpuci__printf("exit %ld (SIGKILL, not sent by tpuci, under a "
                         "memory limit of %.0f MiB: probably out of memory; "
                         "the engine reported no OOM kill)",
                         c->status, (double) memory_bytes / TPUCI__MIB);
  } else if (c->name != NULL) {
    if (out->term_signal)
      what =
          tpuci__printf("killed by signal %d (%s)", out->term_signal, strsignal(out->term_signal));
    else what = tpuci__printf("exit %d", out->exit_code);
  }
  if (what != NULL && c->name != NULL) {
    out->cause = tpuci__printf("%s: %s", c->name, what);
    free(what);
  } else {
    out->cause = what;
  }
}

void tpuci__gang_verdict_free(tpuci__gang_verdict_t *v) {
  free(v->cause);
  v->cause = NULL;
}

/* Lines. */

void tpuci__lines_init(tpuci__lines_t *l, const char *prefix) {
  l->prefix = tpuci__strdup(prefix ? prefix : "");
  tpuci__buf_init(&l->partial);
}

void tpuci__lines_free(tpuci__lines_t *l) {
  free(l->prefix);
  l->prefix = NULL;
  tpuci__buf_free(&l->partial);
}

/* Appends the held partial line, completed by `len` bytes of buf, as one
 * prefixed line. */
static void tpuci__lines_emit(tpuci__lines_t *l, tpuci__buf_t *out, const char *buf, size_t len) {
  tpuci__buf_adds(out, l->prefix);
  if (l->partial.len > 0) tpuci__buf_add(out, l->partial.data, l->partial.len);
  tpuci__buf_add(out, buf, len);
  tpuci__buf_add(out, "\n", 1);
  l->partial.len = 0;
  if (l->partial.data) l->partial.data[0] = '\0';
}

void tpuci__lines_feed(tpuci__lines_t *l, const char *buf, size_t len, tpuci__lines_cb cb,
                       void *data) {
  tpuci__buf_t out;
  tpuci__buf_init(&out);
  while (len > 0) {
    const char *nl = memchr(buf, '\n', len);
    size_t n;
    if (nl != NULL) {
      n = (size_t) (nl - buf);
      tpuci__lines_emit(l, &out, buf, n);
      buf += n + 1;
      len -= n + 1;
      continue;
    }
    /* No newline: hold it, up to the limit. */
    n = len;
    if (l->partial.len + n >= TPUCI__LINES_MAX) {
      n = TPUCI__LINES_MAX - l->partial.len;
      tpuci__lines_emit(l, &out, buf, n);
    } else {
      tpuci__buf_add(&l->partial, buf, n);
    }
    buf += n;
    len -= n;
  }
  if (out.len > 0) cb(data, out.data, out.len);
  tpuci__buf_free(&out);
}

void tpuci__lines_flush(tpuci__lines_t *l, tpuci__lines_cb cb, void *data) {
  tpuci__buf_t out;
  if (l->partial.len == 0) return;
  tpuci__buf_init(&out);
  tpuci__lines_emit(l, &out, "", 0);
  cb(data, out.data, out.len);
  tpuci__buf_free(&out);
}

/* A host's environment and mounts. */

int tpuci__host_run_init(tpuci__host_run_t *r, const tpuci__attempt_t *a,
                         const tpuci__slice_t *slice, const tpuci__gang_member_t *m,
                         const char *gang_host, tpuci__err_t *err) {
  const tpuci__instance_t *inst = a->inst;
  int rc;
  memset(r, 0, sizeof(*r));
  if (m->gate_key != NULL) tpuci__gate_argv(m, a->peer_exits, a->argv, &r->argv);
  else tpuci__strv_copy(&r->argv, a->argv);
  rc = tpuci__attempt_host_env(a, slice, m->host, &r->env, err);
  if (rc != 0) {
    tpuci__strv_free(&r->env);
    tpuci__strv_free(&r->argv);
    return rc;
  }
  r->mounts = tpuci__calloc(inst->nmounts + 1, sizeof(*r->mounts));
  if (inst->nmounts > 0) memcpy(r->mounts, inst->mounts, inst->nmounts * sizeof(*r->mounts));
  r->nmounts = inst->nmounts;
  if (a->results_dir != NULL) {
    tpuci__mount_t *mount = &r->mounts[r->nmounts];
    r->results = gang_host != NULL ? tpuci__printf("%s/%s", a->results_dir, gang_host)
                                   : tpuci__strdup(a->results_dir);
    rc = tpuci__mkdir_p(r->results, 0777);
    if (rc != 0) {
      tpuci__err_set(err, TPUCI_EUSAGE, "cannot create the results folder %s: %s", r->results,
                     uv_strerror(rc));
      tpuci__host_run_free(r);
      return TPUCI_EUSAGE;
    }
    mount->source = r->results;
    mount->target = (char *) (a->results_path ? a->results_path : TPUCI__RESULTS_MOUNT);
    mount->read_only = 0;
    r->nmounts++;
  }
  return 0;
}

void tpuci__host_run_free(tpuci__host_run_t *r) {
  tpuci__strv_free(&r->argv);
  tpuci__strv_free(&r->env);
  free(r->mounts);
  free(r->results);
  memset(r, 0, sizeof(*r));
}

json_t *tpuci__gang_host_body(const tpuci__attempt_t *a, const tpuci__slice_t *slice,
                              const tpuci__gang_member_t *m, const char *network,
                              const tpuci__kvlist_t *labels, tpuci__err_t *err) {
  const tpuci__instance_t *inst = a->inst;
  int gang = m->nhosts > 1;
  /* A lone container has no wait step. */
  tpuci__gang_member_t member = {.host = m->host,
                                 .nhosts = m->nhosts,
                                 .gate_key = gang ? m->gate_key : NULL,
                                 .gate_end = m->gate_end};
  tpuci__host_run_t run;
  tpuci__ctr_spec_t spec;
  tpuci__device_t *devices;
  size_t ndevices;
  char name[32];
  json_t *body;

  snprintf(name, sizeof(name), TPUCI__GANG_HOST_FMT, m->host);
  if (tpuci__ctr_devices(&inst->ctr, inst->where, inst->job, &devices, &ndevices, err) != 0)
    return NULL;
  if (tpuci__host_run_init(&run, a, slice, &member, gang ? name : NULL, err) != 0) {
    tpuci__ctr_devices_free(devices, ndevices);
    return NULL;
  }
  memset(&spec, 0, sizeof(spec));
  spec.image = tpuci__image_engine_ref(&a->plan->images[inst->image]);
  spec.argv = &run.argv;
  spec.env = &run.env;
  spec.workdir = inst->workdir;
  spec.mounts = run.mounts;
  spec.nmounts = run.nmounts;
  spec.cpus = inst->cpus;
  spec.memory_bytes = inst->memory_bytes;
  spec.network = gang ? network : inst->network;
  spec.labels = labels;
  spec.hostname = gang ? name : NULL;
  spec.alias = gang ? name : NULL;
  spec.ctr = &inst->ctr;
  spec.devices = devices;
  spec.ndevices = ndevices;
  body = tpuci__ctr_create_body(&spec);
  tpuci__ctr_devices_free(devices, ndevices);
  tpuci__host_run_free(&run);
  return body;
}
