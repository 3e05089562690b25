/* A job instance's Kubernetes objects (manifest.h): the Indexed Job,
 * the headless Service of a gang, the pod template of one host with its
 * container, and their metadata; the stream of them all. */
#include "pod/manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pod/ctr.h"
#include "base/emit.h"

static const char *const tpuci__k8s_mode_names[] = {"plain", "tpu", "emulated"};

/* Whole seconds, rounded up, of a non-zero duration. */
static char *tpuci__k8s_seconds(uint64_t ms) {
  return tpuci__printf("%llu", (unsigned long long) ((ms + 999) / 1000));
}

static int tpuci__k8s_int(yaml_emitter_t *e, long long v) {
  char num[32];
  snprintf(num, sizeof(num), "%lld", v);
  return tpuci__emit_plain(e, num);
}

int tpuci__k8s_kint(yaml_emitter_t *e, const char *key, long long v) {
  return tpuci__emit_plain(e, key) && tpuci__k8s_int(e, v);
}

/* key: value, the value a string the kubelet expands (tpuci__quote_k8s). */
static int tpuci__k8s_kv_esc(yaml_emitter_t *e, const char *key, const char *value) {
  char *v = tpuci__quote_k8s(value);
  int ok = tpuci__emit_kv(e, key, v);
  free(v);
  return ok;
}

int tpuci__k8s_doc_start(yaml_emitter_t *e) {
  yaml_event_t ev;
  return yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 0) &&
         yaml_emitter_emit(e, &ev);
}

int tpuci__k8s_doc_end(yaml_emitter_t *e) {
  yaml_event_t ev;
  return yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(e, &ev);
}

int tpuci__k8s_labels(yaml_emitter_t *e, const tpuci__k8s_doc_t *d, const tpuci__k8s_obj_t *o) {
  return tpuci__emit_plain(e, "labels") && tpuci__emit_map(e) &&
         tpuci__emit_kv(e, "app.kubernetes.io/managed-by", "tpuci") &&
         (d->label_run == NULL || tpuci__emit_kv(e, "tpuci.run", d->label_run)) &&
         tpuci__emit_kv(e, "tpuci.job", o->label_job) &&
         tpuci__emit_kv(e, "tpuci.instance", o->label_instance) &&
         tpuci__emit_kv(e, "tpuci.gang", o->name) && tpuci__emit_map_end(e);
}

/* The annotations say in full what the labels had to shorten, and what
 * the export decided. */
static int tpuci__k8s_annotations(yaml_emitter_t *e, const tpuci__k8s_doc_t *d,
                                  const tpuci__k8s_obj_t *o,
                                  int (*more)(yaml_emitter_t *, const tpuci__k8s_obj_t *)) {
  const tpuci__instance_t *inst = o->inst;
  tpuci__buf_t b;
  size_t i;
  int ok;

  ok = tpuci__emit_plain(e, "annotations") && tpuci__emit_map(e) &&
       tpuci__emit_kv(e, "tpuci.instance", inst->name) &&
       (inst->where == NULL || tpuci__emit_kv(e, "tpuci.where", inst->where)) &&
       (o->topo == NULL || tpuci__emit_kv(e, "tpuci.topology", o->topo->name)) &&
       tpuci__emit_kv(e, "tpuci.mode", tpuci__k8s_mode_names[o->mode]);
  if (ok && o->mode == TPUCI__K8S_EMULATED)
    ok = tpuci__emit_kv(e, "tpuci.emulate", tpuci__emulate_name(o->slice.emulate));
  if (ok && o->mode == TPUCI__K8S_TPU && o->gke.machine_type)
    ok = tpuci__emit_kv(e, "tpuci.machine-type", o->gke.machine_type);
  tpuci__buf_init(&b);
  if (ok && inst->retry.attempts > 1) {
    /* Kubernetes retries any failure; what tpuci would retry, for people
     * and tools (docs/kubernetes.md, Retries). */
    static const tpuci_outcome_t outcomes[] = {TPUCI_OUTCOME_FAILED, TPUCI_OUTCOME_TIMEOUT,
                                               TPUCI_OUTCOME_OOM, TPUCI_OUTCOME_INFRA};
    char num[16];
    for (i = 0; i < sizeof(outcomes) / sizeof(outcomes[0]); i++)
      if (tpuci__retry_wants(&inst->retry, outcomes[i]))
        tpuci__buf_addf(&b, "%s%s", b.len ? "," : "", tpuci_outcome_name(outcomes[i]));
    snprintf(num, sizeof(num), "%d", inst->retry.attempts);
    ok = tpuci__emit_kv(e, "tpuci.attempts", num) &&
         tpuci__emit_kv(e, "tpuci.retry-on", b.len ? b.data : "nothing");
  }
  if (ok && inst->ctr.ndevices > 0) {
    /* The TPU's device files, which google.com/tpu gives the pod. */
    char *devs = tpuci__k8s_dropped_devices(&inst->ctr);
    ok = tpuci__emit_kv(e, "tpuci.dropped-devices", devs);
    free(devs);
  }
  if (ok && d->mounts_dropped && inst->nmounts > 0) {
    /* Where the image must hold what the mounts would have brought. */
    b.len = 0;
    for (i = 0; i < inst->nmounts; i++)
      tpuci__buf_addf(&b, "%s%s", i ? "," : "", inst->mounts[i].target);
    ok = tpuci__emit_kv(e, "tpuci.dropped-mounts", b.data);
  }
  tpuci__buf_free(&b);
  return ok && (more == NULL || more(e, o)) && tpuci__emit_map_end(e);
}

int tpuci__k8s_metadata(yaml_emitter_t *e, const tpuci__k8s_doc_t *d, const tpuci__k8s_obj_t *o,
                        int annotations, int (*more)(yaml_emitter_t *, const tpuci__k8s_obj_t *)) {
  return tpuci__emit_plain(e, "metadata") && tpuci__emit_map(e) &&
         tpuci__emit_kv(e, "name", o->name) && tpuci__k8s_labels(e, d, o) &&
         (!annotations || tpuci__k8s_annotations(e, d, o, more)) && tpuci__emit_map_end(e);
}

/* The headless Service whose name is the pods' subdomain: each pod of
 * the gang is "<name>-<index>.<name>" to the others. Not-ready pods are
 * published too, so peers resolve each other as soon as they start. */
static int tpuci__k8s_service(yaml_emitter_t *e, const tpuci__k8s_doc_t *d,
                              const tpuci__k8s_obj_t *o) {
  return tpuci__k8s_doc_start(e) && tpuci__emit_map(e) && tpuci__emit_kv(e, "apiVersion", "v1") &&
         tpuci__emit_kv(e, "kind", "Service") && tpuci__k8s_metadata(e, d, o, 0, NULL) &&
         tpuci__emit_plain(e, "spec") && tpuci__emit_map(e) &&
         tpuci__emit_kv(e, "clusterIP", "None") &&
         tpuci__emit_plain(e, "publishNotReadyAddresses") && tpuci__emit_plain(e, "true") &&
         tpuci__emit_plain(e, "selector") && tpuci__emit_map(e) &&
         tpuci__emit_kv(e, "tpuci.gang", o->name) && tpuci__emit_map_end(e) &&
         tpuci__emit_map_end(e) && tpuci__emit_map_end(e) && tpuci__k8s_doc_end(e);
}

static int tpuci__k8s_env(yaml_emitter_t *e, const tpuci__k8s_obj_t *o) {
  size_t i;
  int ok = tpuci__emit_plain(e, "env") && tpuci__emit_seq(e, YAML_BLOCK_SEQUENCE_STYLE);
  for (i = 0; ok && i < o->nenv; i++) {
    const tpuci__k8s_var_t *v = &o->env[i];
    ok = tpuci__emit_map(e) && tpuci__emit_kv(e, "name", v->key);
    if (ok && v->indexed)
      ok = tpuci__emit_plain(e, "valueFrom") && tpuci__emit_map(e) &&
           tpuci__emit_plain(e, "fieldRef") && tpuci__emit_map(e) &&
           tpuci__emit_kv(e, "fieldPath", TPUCI__K8S_INDEX_FIELD) && tpuci__emit_map_end(e) &&
           tpuci__emit_map_end(e);
    else if (ok) ok = tpuci__k8s_kv_esc(e, "value", v->value);
    ok = ok && tpuci__emit_map_end(e);
  }
  return ok && tpuci__emit_seq_end(e);
}

static int tpuci__k8s_resources(yaml_emitter_t *e, const tpuci__k8s_obj_t *o) {
  const tpuci__instance_t *inst = o->inst;
  char *cpu = inst->cpus > 0 ? tpuci__k8s_cpus(inst->cpus) : NULL;
  char *mem = inst->memory_bytes > 0 ? tpuci__k8s_bytes(inst->memory_bytes) : NULL;
  char tpu[16], gpu[16];
  int ok = 1, k, gpus = tpuci__k8s_gpus(&inst->ctr);

  snprintf(tpu, sizeof(tpu), "%d", o->gke.chips);
  snprintf(gpu, sizeof(gpu), "%d", gpus);
  if (cpu || mem || o->mode == TPUCI__K8S_TPU || gpus > 0) {
    /* Requests equal to limits: what the limits would default them to,
     * and what an extended resource such as google.com/tpu requires. */
    ok = tpuci__emit_plain(e, "resources") && tpuci__emit_map(e);
    for (k = 0; ok && k < 2; k++)
      ok = tpuci__emit_plain(e, k == 0 ? "limits" : "requests") && tpuci__emit_map(e) &&
           (cpu == NULL || tpuci__emit_kv(e, "cpu", cpu)) &&
           (mem == NULL || tpuci__emit_kv(e, "memory", mem)) &&
           (o->mode != TPUCI__K8S_TPU || tpuci__emit_kv(e, TPUCI__GKE_RESOURCE_TPU, tpu)) &&
           (gpus == 0 || tpuci__emit_kv(e, TPUCI__K8S_RESOURCE_GPU, gpu)) && tpuci__emit_map_end(e);
    ok = ok && tpuci__emit_map_end(e);
  }
  free(cpu);
  free(mem);
  return ok;
}

static int tpuci__k8s_container(yaml_emitter_t *e, const tpuci__k8s_doc_t *d,
                                const tpuci__k8s_obj_t *o) {
  static const char *const pull[] = {"IfNotPresent", "Always", "Never"};
  const tpuci__instance_t *inst = o->inst;
  const tpuci__image_t *img = &d->plan->images[inst->image];
  size_t i;
  int ok;

  ok = tpuci__emit_plain(e, "containers") && tpuci__emit_seq(e, YAML_BLOCK_SEQUENCE_STYLE) &&
       tpuci__emit_map(e) && tpuci__emit_kv(e, "name", "tpuci") &&
       tpuci__emit_kv(e, "image", img->ref) &&
       tpuci__emit_kv(e, "imagePullPolicy", pull[img->pull]) &&
       (inst->workdir == NULL || tpuci__emit_kv(e, "workingDir", inst->workdir));
  if (ok && o->command.len > 0) {
    ok = tpuci__emit_plain(e, "command") && tpuci__emit_seq(e, YAML_BLOCK_SEQUENCE_STYLE);
    for (i = 0; ok && i < o->command.len; i++) {
      char *arg = tpuci__quote_k8s(o->command.items[i]);
      ok = tpuci__emit_str(e, arg);
      free(arg);
    }
    ok = ok && tpuci__emit_seq_end(e);
  }
  ok = ok && tpuci__k8s_env(e, o) && tpuci__k8s_resources(e, o) &&
       tpuci__k8s_ctr_security(e, &inst->ctr) && tpuci__emit_plain(e, "volumeMounts") &&
       tpuci__emit_seq(e, YAML_BLOCK_SEQUENCE_STYLE) && tpuci__k8s_shm_mount(e, &inst->ctr) &&
       tpuci__emit_map(e) && tpuci__emit_kv(e, "name", TPUCI__K8S_RESULTS_VOLUME) &&
       tpuci__emit_kv(e, "mountPath", d->results_mount);
  if (ok && d->results_claim != NULL) {
    /* One folder per pod in the claim: <name>/<index>. */
    char *sub = tpuci__printf("%s/$(JOB_COMPLETION_INDEX)", o->name);
    ok = tpuci__emit_kv(e, "subPathExpr", sub);
    free(sub);
  }
  return ok && tpuci__emit_map_end(e) && tpuci__emit_seq_end(e) && tpuci__emit_map_end(e) &&
         tpuci__emit_seq_end(e);
}

int tpuci__k8s_pod(yaml_emitter_t *e, const tpuci__k8s_doc_t *d, const tpuci__k8s_obj_t *o) {
  const tpuci__instance_t *inst = o->inst;
  char *deadline = inst->timeout_ms ? tpuci__k8s_seconds(inst->timeout_ms) : NULL;
  char *grace = inst->grace_ms ? tpuci__k8s_seconds(inst->grace_ms) : NULL;
  int ok;

  ok = tpuci__emit_plain(e, "template") && tpuci__emit_map(e) && tpuci__emit_plain(e, "metadata") &&
       tpuci__emit_map(e) && tpuci__k8s_labels(e, d, o) && tpuci__emit_map_end(e) &&
       tpuci__emit_plain(e, "spec") && tpuci__emit_map(e) &&
       tpuci__emit_kv(e, "restartPolicy", "Never") &&
       /* A JobSet's controller sets its pods' subdomain itself. */
       (o->hosts == 1 || o->jobset || tpuci__emit_kv(e, "subdomain", o->name)) &&
       /* The pod's environment is the job's and tpuci's, not one
        * variable per Service of the namespace. */
       tpuci__emit_plain(e, "enableServiceLinks") && tpuci__emit_plain(e, "false") &&
       /* tpuci's timeout is per attempt, and so is a pod's deadline. */
       (deadline == NULL ||
        (tpuci__emit_plain(e, "activeDeadlineSeconds") && tpuci__emit_plain(e, deadline))) &&
       (grace == NULL ||
        (tpuci__emit_plain(e, "terminationGracePeriodSeconds") && tpuci__emit_plain(e, grace))) &&
       tpuci__k8s_pod_opts(e, &inst->ctr);
  if (ok && o->mode == TPUCI__K8S_TPU)
    ok = tpuci__emit_plain(e, "nodeSelector") && tpuci__emit_map(e) &&
         tpuci__emit_kv(e, TPUCI__GKE_LABEL_ACCELERATOR, o->gke.accelerator) &&
         tpuci__emit_kv(e, TPUCI__GKE_LABEL_TOPOLOGY, o->gke.topology) && tpuci__emit_map_end(e) &&
         /* TPU nodes carry google.com/tpu=true:NoSchedule (4c). */
         tpuci__emit_plain(e, "tolerations") && tpuci__emit_seq(e, YAML_BLOCK_SEQUENCE_STYLE) &&
         tpuci__emit_map(e) && tpuci__emit_kv(e, "key", TPUCI__GKE_RESOURCE_TPU) &&
         tpuci__emit_kv(e, "operator", "Exists") && tpuci__emit_kv(e, "effect", "NoSchedule") &&
         tpuci__emit_map_end(e) && tpuci__emit_seq_end(e);
  ok = ok && tpuci__k8s_container(e, d, o) && tpuci__emit_plain(e, "volumes") &&
       tpuci__emit_seq(e, YAML_BLOCK_SEQUENCE_STYLE) && tpuci__k8s_shm_volume(e, &inst->ctr) &&
       tpuci__emit_map(e) && tpuci__emit_kv(e, "name", TPUCI__K8S_RESULTS_VOLUME);
  if (ok && d->results_claim != NULL)
    ok = tpuci__emit_plain(e, "persistentVolumeClaim") && tpuci__emit_map(e) &&
         tpuci__emit_kv(e, "claimName", d->results_claim) && tpuci__emit_map_end(e);
  else if (ok)
    ok = tpuci__emit_plain(e, "emptyDir") && tpuci__emit_map(e) && tpuci__emit_map_end(e);
  ok = ok && tpuci__emit_map_end(e) && tpuci__emit_seq_end(e) && tpuci__emit_map_end(e) &&
       tpuci__emit_map_end(e);
  free(deadline);
  free(grace);
  return ok;
}

/* An Indexed Job of `hosts` pods, all needed at once (a gang): each pod
 * is one host, its completion index the host's number. backoffLimit
 * counts failed pods of every index: a gang's failed attempt usually
 * fails each of its pods, so it gets (attempts - 1) x hosts. */
static int tpuci__k8s_job(yaml_emitter_t *e, const tpuci__k8s_doc_t *d, const tpuci__k8s_obj_t *o) {
  long long backoff =
      (long long) (o->inst->retry.attempts > 1 ? o->inst->retry.attempts - 1 : 0) * o->hosts;
  return tpuci__k8s_doc_start(e) && tpuci__emit_map(e) &&
         tpuci__emit_kv(e, "apiVersion", "batch/v1") && tpuci__emit_kv(e, "kind", "Job") &&
         tpuci__k8s_metadata(e, d, o, 1, NULL) && tpuci__emit_plain(e, "spec") &&
         tpuci__emit_map(e) && tpuci__emit_kv(e, "completionMode", "Indexed") &&
         tpuci__k8s_kint(e, "completions", o->hosts) &&
         tpuci__k8s_kint(e, "parallelism", o->hosts) &&
         tpuci__k8s_kint(e, "backoffLimit", backoff) && tpuci__k8s_pod(e, d, o) &&
         tpuci__emit_map_end(e) && tpuci__emit_map_end(e) && tpuci__k8s_doc_end(e);
}

int tpuci__k8s_stream(yaml_emitter_t *e, const tpuci__k8s_doc_t *d) {
  yaml_event_t ev;
  size_t i;
  int ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(e, &ev);
  for (i = 0; ok && i < d->nobjs; i++)
    ok = d->objs[i].jobset ? tpuci__k8s_jobset(e, d, &d->objs[i])
                           : (d->objs[i].hosts == 1 || tpuci__k8s_service(e, d, &d->objs[i])) &&
                                 tpuci__k8s_job(e, d, &d->objs[i]);
  return ok && yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev) &&
         yaml_emitter_flush(e);
}
