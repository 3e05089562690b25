/* A multi-host instance as one JobSet (what `tpuci export kubernetes
 * --jobset` asks for, docs/kubernetes.md "JobSet"): jobset.x-k8s.io/v1alpha2,
 * the shape GKE runs multi-host TPU slices in. Its one replicated Job
 * (TPUCI__K8S_JOBSET_RJOB, one replica: tpuci's topologies are one slice
 * each) is the Indexed Job manifest.c writes, one pod per host, with
 * backoffLimit 0: a failed pod fails its Job, and the JobSet's
 * failurePolicy then recreates every Job of the gang, up to maxRestarts
 * (the job's attempts - 1) times. The JobSet's controller makes the
 * headless Service (network.enableDNSHostnames) and sets the pods'
 * subdomain; the pods are "<name>-slice-0-<index>.<name>". */
#include "pod/manifest.h"

#include "base/emit.h"

/* Its child Jobs each on a node pool of their own on a GKE TPU slice
 * (kubernetes-sigs/jobset api/jobset/v1alpha2/jobset_types.go,
 * ExclusiveKey): a slice is one node pool. */
#define TPUCI__K8S_EXCLUSIVE "alpha.jobset.sigs.k8s.io/exclusive-topology"
#define TPUCI__GKE_LABEL_NODEPOOL "cloud.google.com/gke-nodepool"

static int tpuci__k8s_jobset_annotations(yaml_emitter_t *e, const tpuci__k8s_obj_t *o) {
  if (o->mode != TPUCI__K8S_TPU) return 1;
  return tpuci__emit_kv(e, TPUCI__K8S_EXCLUSIVE, TPUCI__GKE_LABEL_NODEPOOL);
}

static int tpuci__k8s_true(yaml_emitter_t *e, const char *key) {
  return tpuci__emit_plain(e, key) && tpuci__emit_plain(e, "true");
}

int tpuci__k8s_jobset(yaml_emitter_t *e, const tpuci__k8s_doc_t *d, const tpuci__k8s_obj_t *o) {
  int restarts = o->inst->retry.attempts > 1 ? o->inst->retry.attempts - 1 : 0;
  return tpuci__k8s_doc_start(e) && tpuci__emit_map(e) &&
         tpuci__emit_kv(e, "apiVersion", "jobset.x-k8s.io/v1alpha2") &&
         tpuci__emit_kv(e, "kind", "JobSet") &&
         tpuci__k8s_metadata(e, d, o, 1, tpuci__k8s_jobset_annotations) &&
         tpuci__emit_plain(e, "spec") && tpuci__emit_map(e) &&
         tpuci__emit_plain(e, "failurePolicy") && tpuci__emit_map(e) &&
         tpuci__k8s_kint(e, "maxRestarts", restarts) && tpuci__emit_map_end(e) &&
         /* The headless Service, named after the JobSet, publishing pods
          * before they are ready so that peers resolve at once. */
         tpuci__emit_plain(e, "network") && tpuci__emit_map(e) &&
         tpuci__k8s_true(e, "enableDNSHostnames") &&
         tpuci__k8s_true(e, "publishNotReadyAddresses") && tpuci__emit_map_end(e) &&
         tpuci__emit_plain(e, "replicatedJobs") && tpuci__emit_seq(e, YAML_BLOCK_SEQUENCE_STYLE) &&
         tpuci__emit_map(e) && tpuci__emit_kv(e, "name", TPUCI__K8S_JOBSET_RJOB) &&
         tpuci__k8s_kint(e, "replicas", 1) && tpuci__emit_plain(e, "template") &&
         tpuci__emit_map(e) && tpuci__emit_plain(e, "metadata") && tpuci__emit_map(e) &&
         tpuci__k8s_labels(e, d, o) && tpuci__emit_map_end(e) && tpuci__emit_plain(e, "spec") &&
         tpuci__emit_map(e) && tpuci__emit_kv(e, "completionMode", "Indexed") &&
         tpuci__k8s_kint(e, "completions", o->hosts) &&
         tpuci__k8s_kint(e, "parallelism", o->hosts) && tpuci__k8s_kint(e, "backoffLimit", 0) &&
         tpuci__k8s_pod(e, d, o) && tpuci__emit_map_end(e) && tpuci__emit_map_end(e) &&
         tpuci__emit_map_end(e) && tpuci__emit_seq_end(e) && tpuci__emit_map_end(e) &&
         tpuci__emit_map_end(e) && tpuci__k8s_doc_end(e);
}
