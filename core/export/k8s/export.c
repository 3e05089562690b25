/* The Kubernetes manifests of a spec (see export.h and docs/kubernetes.md):
 * the export's policy. Each selected instance is checked (what a pod
 * cannot express is refused, with what to do) and turned into an object
 * description first (its name, mode, environment and command); only when
 * every instance can be exported is anything written, by core/pod/'s
 * builders (manifest.h), so an error never leaves half a manifest. */
#include "export/k8s/export.h"
#include "pod/ctr.h"
#include "pod/manifest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "kind/pytest/pytest_run.h"
#include "runtime/runtime.h"
#include "base/emit.h"

void tpuci__k8s_opts_init(tpuci__k8s_opts_t *opts) { memset(opts, 0, sizeof(*opts)); }

/* ------------------------------------------------------------------ */
/* The environment                                                     */

static void tpuci__k8s_var_set(tpuci__k8s_obj_t *o, const char *key, const char *value,
                               int indexed) {
  size_t i;
  for (i = 0; i < o->nenv; i++) {
    if (strcmp(o->env[i].key, key) == 0) {
      free(o->env[i].value);
      o->env[i].value = tpuci__strdup(value);
      o->env[i].indexed = indexed;
      return;
    }
  }
  o->env = tpuci__realloc(o->env, (o->nenv + 1) * sizeof(*o->env));
  o->env[o->nenv].key = tpuci__strdup(key);
  o->env[o->nenv].value = tpuci__strdup(value);
  o->env[o->nenv].indexed = indexed;
  o->nenv++;
}

/* An error about one instance: "spec.lua:12: job 'tpu': ...". */
static int tpuci__k8s_fail(tpuci__err_t *err, const tpuci__instance_t *inst, const char *fmt, ...)
    TPUCI__PRINTF(3, 4);

static int tpuci__k8s_fail(tpuci__err_t *err, const tpuci__instance_t *inst, const char *fmt, ...) {
  va_list ap, cp;
  char *msg;
  int n, r;

  va_start(ap, fmt);
  va_copy(cp, ap);
  n = vsnprintf(NULL, 0, fmt, cp);
  va_end(cp);
  msg = tpuci__malloc(n > 0 ? (size_t) n + 1 : 1);
  msg[0] = '\0';
  if (n > 0) vsnprintf(msg, (size_t) n + 1, fmt, ap);
  va_end(ap);
  r = tpuci__err_set(err, TPUCI_EUSAGE, "%s%sjob '%s': %s", inst->where ? inst->where : "",
                     inst->where ? ": " : "", inst->job ? inst->job : inst->name, msg);
  free(msg);
  return r;
}

/* What tpuci gives every attempt (TPUCI=1, TPUCI_JOB, TPUCI_RESULTS, the
 * matrix, then the job's env: tpuci__attempt_env), but TPUCI_ATTEMPT,
 * which no pod can know, and TPUCI_RUN_ID without a run. */
static void tpuci__k8s_attempt_env(tpuci__k8s_obj_t *o, const char *run) {
  tpuci__attempt_t a;
  tpuci__strv_t kv = {NULL, 0, 0};
  size_t i;

  memset(&a, 0, sizeof(a));
  a.inst = o->inst;
  a.run_id = run ? run : "";
  a.number = 1;
  a.results_path = TPUCI__RESULTS_MOUNT;
  tpuci__attempt_env(&a, &kv);
  for (i = 0; i < kv.len; i++) {
    char *eq = strchr(kv.items[i], '=');
    int own = 0;
    if (eq == NULL) continue;
    *eq = '\0';
    own = tpuci__kv_get(&o->inst->env, kv.items[i]) != NULL;
    if (!own && strcmp(kv.items[i], "TPUCI_ATTEMPT") == 0) continue;
    if (!own && run == NULL && strcmp(kv.items[i], "TPUCI_RUN_ID") == 0) continue;
    tpuci__k8s_var_set(o, kv.items[i], eq + 1, 0);
  }
  tpuci__strv_free(&kv);
}

/* Whether a variable of tpuci's per-host environment reaches a real TPU
 * pod: GKE sets the TPU_* ones itself (device plugin, and its webhook
 * for TPU_WORKER_ID / TPU_WORKER_HOSTNAMES on Indexed Jobs,
 * tpu-topology.md 4b, 4c), so only the rendezvous and tpuci's own stay. */
static int tpuci__k8s_tpu_keeps(const char *key) {
  return strncmp(key, "TPU_", 4) != 0 && strncmp(key, "CLOUD_TPU_", 10) != 0;
}

/* The topology's per-host environment (tpuci__slice_host_env plus
 * TPUCI_HOST and TPUCI_HOSTS, as tpuci__topology_host_env gives a
 * container), with the gang's hostnames "<name>-<i>.<name>": the pods'
 * names under the headless Service. A value equal on every host is
 * written as it is; one that is the host's index on every host becomes
 * the completion index. */
static int tpuci__k8s_topology_env(tpuci__k8s_obj_t *o, tpuci__err_t *err) {
  tpuci__kvlist_t *per;
  tpuci__strv_t names = {NULL, 0, 0};
  tpuci__gang_net_t net;
  tpuci__slice_t s = o->slice;
  int h, r = 0;
  size_t i;

  memset(&net, 0, sizeof(net));
  for (h = 0; h < o->hosts; h++)
    tpuci__strv_take(&names, tpuci__printf("%s-%d.%s", o->host_prefix, h, o->name));
  net.hostnames = (const char *const *) names.items;
  /* A real TPU brings its own runtime: no emulation switches. */
  if (o->mode == TPUCI__K8S_TPU) s.emulate = TPUCI__EMULATE_NONE;
  per = tpuci__calloc((size_t) o->hosts, sizeof(*per));
  for (h = 0; h < o->hosts && r == 0; h++) {
    char num[16];
    r = tpuci__slice_host_env(&s, h, &net, &per[h], err);
    snprintf(num, sizeof(num), "%d", h);
    tpuci__kv_set(&per[h], "TPUCI_HOST", num);
    snprintf(num, sizeof(num), "%d", o->hosts);
    tpuci__kv_set(&per[h], "TPUCI_HOSTS", num);
  }
  for (i = 0; r == 0 && i < per[0].len; i++) {
    const char *key = per[0].items[i].key;
    int same = 1, index = 1;
    if (tpuci__kv_get(&o->inst->env, key) != NULL) continue; /* the job's wins */
    if (o->mode == TPUCI__K8S_TPU && !tpuci__k8s_tpu_keeps(key)) continue;
    for (h = 0; h < o->hosts; h++) {
      const char *v = tpuci__kv_get(&per[h], key);
      char num[16];
      snprintf(num, sizeof(num), "%d", h);
      if (v == NULL || strcmp(v, per[0].items[i].value) != 0) same = 0;
      if (v == NULL || strcmp(v, num) != 0) index = 0;
    }
    if (same) tpuci__k8s_var_set(o, key, per[0].items[i].value, 0);
    else if (index) tpuci__k8s_var_set(o, key, "", 1);
    else
      r = tpuci__k8s_fail(err, o->inst,
                          "%s differs between hosts in a way one pod template "
                          "cannot say",
                          key);
  }
  for (h = 0; h < o->hosts; h++) tpuci__kv_free(&per[h]);
  free(per);
  tpuci__strv_free(&names);
  return r;
}

/* ------------------------------------------------------------------ */
/* The command                                                         */

/* Python run before tpuci's pytest bootstrap in the same -c when a job is
 * sharded or has allow_empty: core/kind/pytest/plugin/tpuci_k8s.py, embedded
 * at build time by cmake/embed.cmake. It deals this shard's tests
 * round-robin in collection order (what tpuci does when it has no
 * recorded durations, shard.h), after -m and -k have deselected theirs,
 * and makes pytest's exit 5 (nothing collected) a pass where tpuci counts
 * it as one: allow_empty, or a shard that got no test. The pod's
 * environment tells it which: TPUCI_K8S_SHARD ("I/N") and
 * TPUCI_K8S_ALLOW_EMPTY ("1"). */
extern const char tpuci__py_tpuci_k8s[];

/* Prints the JUnit file into the log after pytest, when there is no
 * claim to keep it: "$@" is the pytest command, its exit code is kept. */
static const char tpuci__k8s_pytest_wrapper[] =
    "\"$@\"; rc=$?\n"
    "if [ -f " TPUCI__RESULTS_MOUNT "/" TPUCI__JUNIT_FILE " ]; then\n"
    "  echo '--- tpuci junit.xml begin ---'\n"
    "  cat " TPUCI__RESULTS_MOUNT "/" TPUCI__JUNIT_FILE "\n"
    "  echo\n"
    "  echo '--- tpuci junit.xml end ---'\n"
    "fi\n"
    "exit $rc\n";

static void tpuci__k8s_command(tpuci__k8s_obj_t *o, const tpuci__k8s_opts_t *opts) {
  const tpuci__instance_t *inst = o->inst;
  tpuci__strv_t argv = {NULL, 0, 0};
  size_t i;

  if (tpuci__pytest_of(inst) == NULL) {
    tpuci__strv_copy(&argv, &inst->argv);
  } else {
    const tpuci__pytest_t *py = tpuci__pytest_of(inst);
    tpuci__pytest_argv(inst, TPUCI__RESULTS_MOUNT, NULL, NULL, &argv);
    if (inst->shards > 1 || py->allow_empty) {
      /* argv[2] is the bootstrap's code: tpuci_k8s.py goes first. */
      char *both = tpuci__printf("%s%s", tpuci__py_tpuci_k8s, argv.items[2]);
      free(argv.items[2]);
      argv.items[2] = both;
      if (inst->shards > 1) {
        char shard[48];
        snprintf(shard, sizeof(shard), "%d/%d", inst->shard, inst->shards);
        tpuci__k8s_var_set(o, "TPUCI_K8S_SHARD", shard, 0);
      }
      if (py->allow_empty) tpuci__k8s_var_set(o, "TPUCI_K8S_ALLOW_EMPTY", "1", 0);
    }
    if (opts->results_claim == NULL) {
      tpuci__strv_push(&o->command, "/bin/sh");
      tpuci__strv_push(&o->command, "-c");
      tpuci__strv_push(&o->command, tpuci__k8s_pytest_wrapper);
      tpuci__strv_push(&o->command, "tpuci-pytest");
    }
  }
  for (i = 0; i < argv.len; i++) tpuci__strv_push(&o->command, argv.items[i]);
  tpuci__strv_free(&argv);
}

/* ------------------------------------------------------------------ */
/* Checking and describing each instance                               */

/* A device a GKE TPU node's google.com/tpu gives its pods. */
static int tpuci__k8s_tpu_device(const tpuci__device_t *d) {
  return strncmp(d->host, "/dev/accel", 10) == 0 || strncmp(d->host, "/dev/vfio", 9) == 0;
}

/* Why the options cannot be exported: a new string naming the key
 * ("ulimits: a pod spec has no resource limits ..."), or NULL. `tpu`:
 * the pod runs on a GKE TPU slice, whose google.com/tpu resource gives
 * it the TPU's device files, so devices under /dev/accel and /dev/vfio
 * are left out (tpuci__k8s_dropped_devices) instead of refused. */
static char *tpuci__k8s_ctr_refusal(const tpuci__ctr_opts_t *c, int tpu) {
  size_t i;
  for (i = 0; i < c->ndevices; i++) {
    if (tpu && tpuci__k8s_tpu_device(&c->devices[i])) continue;
    return tpuci__printf(
        "devices: a pod cannot name a device of its node (a device plugin's "
        "resource gives them: on a GKE TPU slice google.com/tpu brings /dev/accel* "
        "and /dev/vfio, which are left out then); remove '%s', or leave the job "
        "out with --only",
        c->devices[i].host);
  }
  if (c->nulimits > 0)
    return tpuci__printf("ulimits: a pod spec has no resource limits (%s, ...): set "
                         "them in the image or its command (ulimit), or leave the job "
                         "out with --only",
                         c->ulimits[0].name);
  if (c->gpus != NULL) {
    const tpuci__gpus_t *g = c->gpus;
    if (g->count <= 0)
      return tpuci__strdup(
          g->count < 0 ? "gpus = \"all\": a pod asks for a number of GPUs (" TPUCI__K8S_RESOURCE_GPU
                         "); give a count"
                       : "gpus: a pod asks for a number of GPUs (" TPUCI__K8S_RESOURCE_GPU
                         "), not for device ids; "
                         "give a count");
    if (g->driver != NULL && strcmp(g->driver, "nvidia") != 0)
      return tpuci__printf("gpus.driver = \"%s\": the export asks for " TPUCI__K8S_RESOURCE_GPU
                           " (NVIDIA's device plugin)",
                           g->driver);
    if (g->caps.len != 1 || strcmp(g->caps.items[0], "gpu") != 0)
      return tpuci__strdup("gpus.capabilities: a pod asks for whole GPUs (" TPUCI__K8S_RESOURCE_GPU
                           "); leave out capabilities other "
                           "than \"gpu\"");
  }
  return NULL;
}

static int tpuci__k8s_prepare(tpuci__k8s_doc_t *d, const tpuci__k8s_opts_t *opts,
                              tpuci__k8s_obj_t *o, tpuci__err_t *err) {
  const tpuci__instance_t *inst = o->inst;
  char *why;
  size_t i;
  int r;

  /* The loader drops the image of a runtime = "local" job. */
  if (inst->image < 0)
    return tpuci__k8s_fail(err, inst,
                           "runs as a local process, and a pod runs an image: give "
                           "the job an image (without runtime = \"local\"), or leave "
                           "it out with --only");
  if (inst->nmounts > 0 && !opts->no_mounts)
    return tpuci__k8s_fail(err, inst,
                           "mounts %s at %s, a folder of this machine, which a pod "
                           "cannot see (a hostPath names a folder of whichever node "
                           "runs the pod): build an image that holds it and export "
                           "with --no-mounts (docs/kubernetes.md, Mounts)",
                           inst->mounts[0].source, inst->mounts[0].target);
  if (inst->network != NULL && strcmp(inst->network, "bridge") != 0)
    return tpuci__k8s_fail(err, inst,
                           "network = \"%s\" is a Docker network mode, which a pod "
                           "spec cannot express: remove it, or leave the job out "
                           "with --only",
                           inst->network);

  o->hosts = 1;
  o->mode = TPUCI__K8S_PLAIN;
  if (inst->topology >= 0) {
    o->topo = &d->plan->topologies[inst->topology];
    r = tpuci__topology_slice(o->topo, &o->slice, err);
    if (r != 0) return r; /* the loader resolved it already: cannot happen */
    o->hosts = o->slice.hosts;
    if (opts->emulated || o->slice.row == NULL) {
      o->mode = TPUCI__K8S_EMULATED;
    } else if (tpuci__gke_tpu(o->slice.row, &o->gke) != 0) {
      char *topo = tpuci__printf("'%s'%s%s%s", o->topo->name, o->topo->where ? " (" : "",
                                 o->topo->where ? o->topo->where : "", o->topo->where ? ")" : "");
      r = tpuci__k8s_fail(err, inst,
                          "topology %s is a %s type, which GKE does not offer as a "
                          "TPU slice: export with --emulated to run its CPU "
                          "emulation on any cluster",
                          topo, o->slice.generation);
      free(topo);
      return r;
    } else {
      o->mode = TPUCI__K8S_TPU;
    }
  }
  if ((why = tpuci__k8s_ctr_refusal(&inst->ctr, o->mode == TPUCI__K8S_TPU)) != NULL) {
    r = tpuci__k8s_fail(err, inst, "%s", why);
    free(why);
    return r;
  }
  if (inst->idle_timeout_ms)
    return tpuci__k8s_fail(err, inst,
                           "idle_timeout: a Kubernetes Job cannot stop a pod that goes "
                           "quiet (it has only activeDeadlineSeconds, which `timeout` "
                           "becomes): leave it out of the export, e.g. idle_timeout = "
                           "tpuci.env(\"IDLE_TIMEOUT\")");
  if (inst->per_chip)
    return tpuci__k8s_fail(err, inst,
                           "pytest.per_chip is not exported: a pod is one host's "
                           "processes, not one chip's; leave per_chip out of the "
                           "exported spec");
  if (inst->shards > 1 && o->hosts > 1)
    return tpuci__k8s_fail(err, inst,
                           "pytest shards on a %d-host topology are not supported "
                           "(as with tpuci run): shard a single-host job, or run the "
                           "gang unsharded",
                           o->hosts);

  o->jobset = opts->jobset && o->hosts > 1;
  if (o->jobset) {
    o->name = tpuci__k8s_name_max(opts->run, inst->name, TPUCI__K8S_JOBSET_NAME_MAX);
    o->host_prefix = tpuci__printf("%s-%s-0", o->name, TPUCI__K8S_JOBSET_RJOB);
  } else {
    o->name = tpuci__k8s_name(opts->run, inst->name);
    o->host_prefix = tpuci__strdup(o->name);
  }
  o->label_job = tpuci__k8s_label_value(inst->job ? inst->job : inst->name);
  o->label_instance = tpuci__k8s_label_value(inst->name);
  tpuci__k8s_attempt_env(o, opts->run);
  if (o->topo != NULL) {
    r = tpuci__k8s_topology_env(o, err);
    if (r != 0) return r;
  }
  for (i = 0; i < o->nenv; i++)
    if (!tpuci__k8s_env_name_valid(o->env[i].key))
      return tpuci__k8s_fail(err, inst,
                             "environment variable '%s' has a name Kubernetes "
                             "refuses (it wants [-._a-zA-Z][-._a-zA-Z0-9]*)",
                             o->env[i].key);
  tpuci__k8s_command(o, opts);
  return 0;
}

static void tpuci__k8s_obj_free(tpuci__k8s_obj_t *o) {
  size_t i;
  for (i = 0; i < o->nenv; i++) {
    free(o->env[i].key);
    free(o->env[i].value);
  }
  free(o->env);
  if (o->topo != NULL) tpuci__slice_free(&o->slice);
  tpuci__strv_free(&o->command);
  free(o->name);
  free(o->host_prefix);
  free(o->label_job);
  free(o->label_instance);
}

/* What the file holds, for people: a comment before the stream (libyaml
 * has no comment events). */
static void tpuci__k8s_header(tpuci__buf_t *out, const tpuci__k8s_doc_t *d) {
  size_t i;
  char *line = tpuci__printf("Generated by tpuci from %s (tpuci export kubernetes). Change",
                             d->plan->spec_path ? d->plan->spec_path : "a spec");
  tpuci__quote_comment(out, line);
  free(line);
  tpuci__quote_comment(out, "the spec and export again rather than editing this file. Apply");
  tpuci__quote_comment(out, "with kubectl apply -f FILE; docs/kubernetes.md says what is here.");
  tpuci__quote_comment(out, "");
  for (i = 0; i < d->nobjs; i++) {
    const tpuci__k8s_obj_t *o = &d->objs[i];
    char *what;
    const char *kind = o->jobset ? "JobSet" : "Job";
    if (o->mode == TPUCI__K8S_TPU)
      what = tpuci__printf("%s: %s %s, %d pod%s on a GKE TPU %s slice (%s %s, %d chip%s each)",
                           o->inst->name, kind, o->name, o->hosts, o->hosts == 1 ? "" : "s",
                           o->slice.accelerator_type, o->gke.accelerator, o->gke.topology,
                           o->gke.chips, o->gke.chips == 1 ? "" : "s");
    else if (o->mode == TPUCI__K8S_EMULATED)
      what = tpuci__printf("%s: %s %s, %d pod%s emulating %s on CPU (emulate = \"%s\")",
                           o->inst->name, kind, o->name, o->hosts, o->hosts == 1 ? "" : "s",
                           o->topo->name, tpuci__emulate_name(o->slice.emulate));
    else what = tpuci__printf("%s: Job %s, 1 pod", o->inst->name, o->name);
    tpuci__quote_comment(out, what);
    free(what);
  }
}

int tpuci__export_kubernetes(const tpuci__plan_t *plan, const tpuci__k8s_opts_t *opts,
                             tpuci__buf_t *out, tpuci__err_t *err) {
  tpuci__k8s_opts_t defaults;
  tpuci__k8s_doc_t d;
  yaml_emitter_t e;
  size_t start = out->len, i, k, nsel = 0;
  int r = 0;

  if (opts == NULL) {
    tpuci__k8s_opts_init(&defaults);
    opts = &defaults;
  }
  memset(&d, 0, sizeof(d));
  d.plan = plan;
  d.results_claim = opts->results_claim;
  d.results_mount = TPUCI__RESULTS_MOUNT;
  d.mounts_dropped = opts->no_mounts;

  if (opts->run != NULL &&
      (*opts->run == '\0' || tpuci__text_problem(opts->run, strlen(opts->run), &k)))
    return tpuci__err_set(err, TPUCI_EUSAGE, "the run id must be a non-empty UTF-8 string");
  if (opts->results_claim != NULL && !tpuci__k8s_subdomain_valid(opts->results_claim))
    return tpuci__err_set(err, TPUCI_EUSAGE,
                          "'%s' cannot name a PersistentVolumeClaim: use a-z, 0-9, "
                          "'-' and '.', starting and ending with a letter or digit",
                          opts->results_claim);
  for (i = 0; i < plan->ninstances; i++) nsel += plan->instances[i].selected != 0;
  if (nsel == 0)
    return tpuci__err_set(err, TPUCI_ENOMATCH, "%s: no job instance selected",
                          plan->spec_path ? plan->spec_path : "the spec");

  d.label_run = opts->run ? tpuci__k8s_label_value(opts->run) : NULL;
  d.objs = tpuci__calloc(nsel, sizeof(*d.objs));
  for (i = 0; i < plan->ninstances && r == 0; i++) {
    if (!plan->instances[i].selected) continue;
    d.objs[d.nobjs].inst = &plan->instances[i];
    r = tpuci__k8s_prepare(&d, opts, &d.objs[d.nobjs++], err);
  }
  /* Names carry a 32-bit hash of the instance's: a clash is unlikely,
   * and an error rather than one Job replacing another. */
  for (i = 0; r == 0 && i < d.nobjs; i++)
    for (k = i + 1; r == 0 && k < d.nobjs; k++)
      if (strcmp(d.objs[i].name, d.objs[k].name) == 0)
        r = tpuci__err_set(err, TPUCI_EUSAGE,
                           "instances '%s' and '%s' get the same Kubernetes name '%s'; "
                           "rename one of them",
                           d.objs[i].inst->name, d.objs[k].inst->name, d.objs[i].name);
  if (r != 0) goto done;

  tpuci__k8s_header(out, &d);
  memset(&e, 0, sizeof(e));
  if (!yaml_emitter_initialize(&e)) {
    r = tpuci__err_set(err, TPUCI_ENOMEM, "cannot start the YAML emitter");
    goto done;
  }
  yaml_emitter_set_output(&e, tpuci__emit_write, out);
  yaml_emitter_set_unicode(&e, 1);
  yaml_emitter_set_indent(&e, 2);
  yaml_emitter_set_width(&e, -1);
  if (!tpuci__k8s_stream(&e, &d))
    r = tpuci__err_set(
        err, e.error == YAML_MEMORY_ERROR || e.problem == NULL ? TPUCI_ENOMEM : TPUCI_EIO,
        "%s: cannot write the manifests: %s", plan->spec_path ? plan->spec_path : "the spec",
        e.problem ? e.problem : "out of memory");
  yaml_emitter_delete(&e);

done:
  if (r != 0) {
    out->len = start;
    if (out->data) out->data[start] = '\0';
  }
  for (i = 0; i < d.nobjs; i++) tpuci__k8s_obj_free(&d.objs[i]);
  free(d.objs);
  free(d.label_run);
  return r;
}
