/* A job instance's Kubernetes objects, from a description of it: the
 * description (tpuci__k8s_obj_t: its name, mode, hosts, environment and
 * command, which the caller fills after checking the instance: the
 * export's core/export/k8s/export.c) and the builders that write it with
 * libyaml's emitter. manifest.c writes the Indexed Job, its headless
 * Service and the pod template; jobset.c a multi-host instance as a
 * JobSet instead. Builders return 1 on success and 0 on an emitter
 * error, as libyaml does. */
#ifndef TPUCI_POD_MANIFEST_H
#define TPUCI_POD_MANIFEST_H

#include <yaml.h>

#include "pod/pod.h"

/* How an instance runs. */
typedef enum {
  TPUCI__K8S_PLAIN = 0, /* no topology: one pod, no TPU */
  TPUCI__K8S_TPU,       /* a GKE TPU slice */
  TPUCI__K8S_EMULATED   /* tpuci's CPU emulation of its topology */
} tpuci__k8s_mode_t;

/* One environment variable; `indexed`: its value is the pod's completion
 * index (host 0, 1, ...), read from the Job controller's annotation. */
typedef struct {
  char *key;
  char *value;
  int indexed;
} tpuci__k8s_var_t;

typedef struct {
  const tpuci__instance_t *inst;
  const tpuci__topology_t *topo; /* NULL: none */
  char *name;                    /* of the Job (JobSet), the Service and the gang */
  /* The pods' hostnames are "<host_prefix>-<index>.<name>": the Job's
   * name for an Indexed Job, "<name>-slice-0" for a JobSet's. */
  char *host_prefix;
  int hosts;
  int jobset; /* written as a JobSet (jobset.c) */
  tpuci__k8s_mode_t mode;
  tpuci__slice_t slice; /* when topo */
  tpuci__gke_tpu_t gke; /* TPU mode */
  tpuci__k8s_var_t *env;
  size_t nenv;
  tpuci__strv_t command;
  char *label_job, *label_instance;
} tpuci__k8s_obj_t;

/* The objects of a stream, and what every one of them shares. */
typedef struct {
  const tpuci__plan_t *plan; /* its images */
  char *label_run;           /* the tpuci.run label; NULL without a run */
  /* Where the container's results folder is mounted (the attempt's
   * TPUCI_RESULTS), and the PersistentVolumeClaim it is a folder
   * "<name>/<index>" of, or NULL: an emptyDir. */
  const char *results_mount;
  const char *results_claim;
  /* The instances' mounts are left out: the tpuci.dropped-mounts
   * annotation names where each would have gone. */
  int mounts_dropped;
  tpuci__k8s_obj_t *objs;
  size_t nobjs;
} tpuci__k8s_doc_t;

/* The name of a JobSet's one replicated Job (one per slice: tpuci's
 * topologies are one slice each). */
#define TPUCI__K8S_JOBSET_RJOB "slice"

/* The YAML stream of every object of `d`, then a flush: per object an
 * Indexed Job (and, for more than one host, its headless Service before
 * it), or the JobSet when the object says so. */
int tpuci__k8s_stream(yaml_emitter_t *e, const tpuci__k8s_doc_t *d);

/* The parts the objects are made of (manifest.c), which jobset.c uses. */
int tpuci__k8s_doc_start(yaml_emitter_t *e);
int tpuci__k8s_doc_end(yaml_emitter_t *e);
int tpuci__k8s_kint(yaml_emitter_t *e, const char *key, long long v);
int tpuci__k8s_labels(yaml_emitter_t *e, const tpuci__k8s_doc_t *d, const tpuci__k8s_obj_t *o);
/* metadata: name, labels and (with `annotations`) tpuci's annotations;
 * `more`, when not NULL, writes further annotations inside the map. */
int tpuci__k8s_metadata(yaml_emitter_t *e, const tpuci__k8s_doc_t *d, const tpuci__k8s_obj_t *o,
                        int annotations, int (*more)(yaml_emitter_t *, const tpuci__k8s_obj_t *));
/* `template:` and the pod template of one host. */
int tpuci__k8s_pod(yaml_emitter_t *e, const tpuci__k8s_doc_t *d, const tpuci__k8s_obj_t *o);

/* The JobSet of a multi-host instance (jobset.c). */
int tpuci__k8s_jobset(yaml_emitter_t *e, const tpuci__k8s_doc_t *d, const tpuci__k8s_obj_t *o);

#endif /* TPUCI_POD_MANIFEST_H */
