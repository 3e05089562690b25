/* core/pod/: what a job's instance is as Kubernetes objects, built from
 * the plan alone: its pods (one per host, with the job's image, command,
 * environment, resources and accelerator options: ctr.h), the Indexed
 * Job and headless Service, or the JobSet, around them (manifest.h), the
 * names and labels they carry and what a GKE TPU slice asks for (this
 * header). Pure: nothing here talks to a cluster, reads an option of a
 * command or decides what may be exported; it uses core/plan/ and
 * core/base/ only (tests/layout/includes.py), so that both the
 * Kubernetes export (core/export/k8s/, which checks each instance and
 * describes it) and a Kubernetes runtime driver could build the same
 * objects. docs/kubernetes.md describes them and every choice made
 * here. */
#ifndef TPUCI_POD_POD_H
#define TPUCI_POD_POD_H

#include <stdint.h>

#include "plan/plan.h"
#include "plan/topology.h"
#include "base/util.h"

/* ------------------------------------------------------------------ */
/* GKE TPU scheduling (tpu-topology.md 4c)                             */

#define TPUCI__GKE_LABEL_ACCELERATOR "cloud.google.com/gke-tpu-accelerator"
#define TPUCI__GKE_LABEL_TOPOLOGY "cloud.google.com/gke-tpu-topology"
/* The extended resource (chips per VM) and the taint key of TPU nodes. */
#define TPUCI__GKE_RESOURCE_TPU "google.com/tpu"

/* What a pod of one host of a catalogue type asks GKE for. Strings are
 * the catalogue's (static). */
typedef struct {
  const char *accelerator;  /* node label gke-tpu-accelerator */
  const char *topology;     /* node label gke-tpu-topology */
  int chips;                /* google.com/tpu, chips per VM */
  const char *machine_type; /* the node pool's machine type, for people */
} tpuci__gke_tpu_t;

/* Fills *out for catalogue row `row`. Returns 0, or -1 when GKE does not
 * offer the type (v2, v3: no gke-tpu-accelerator value). */
int tpuci__gke_tpu(const tpuci__tpu_type_t *row, tpuci__gke_tpu_t *out);

/* ------------------------------------------------------------------ */
/* Names and labels                                                    */

/* The longest object name: an Indexed Job's pods are named and
 * hostnamed "<job>-<index>", a DNS-1123 label of at most 63 characters,
 * and a gang has at most 256 hosts ("-255"). */
#define TPUCI__K8S_NAME_MAX 59
/* The longest JobSet name: its pods are named and hostnamed
 * "<jobset>-slice-<job>-<index>" and the JobSet's webhook wants that
 * plus the pod's "-abcde" suffix to be a DNS-1035 label of at most 63
 * (kubernetes-sigs/jobset pkg/webhooks/jobset_webhook.go): 63 minus
 * "-slice-0-255-abcde". */
#define TPUCI__K8S_JOBSET_NAME_MAX 45
/* The longest label value. */
#define TPUCI__K8S_LABEL_MAX 63

/* 32-bit FNV-1a over a, a NUL byte, then b (either may be NULL: ""). */
uint32_t tpuci__k8s_hash(const char *a, const char *b);

/* The object name of an instance: "<run>-<instance>" lower-cased, every
 * run of other characters than [a-z0-9] one '-', cut to fit, with
 * "tpuci-" in front when it would not start with a letter, then '-' and
 * the 8 hex digits of tpuci__k8s_hash(run, instance). A DNS-1035 label
 * (so a valid Service, Job and pod hostname prefix) of at most
 * TPUCI__K8S_NAME_MAX characters. `run` may be NULL. A new string. */
char *tpuci__k8s_name(const char *run, const char *instance);
/* The same of at most `max` (>= 20) characters. */
char *tpuci__k8s_name_max(const char *run, const char *instance, size_t max);

/* A label value for any text: the text itself when it is a valid label
 * value (at most 63 of [A-Za-z0-9._-], starting and ending with a letter
 * or digit) and not empty; else the text with other characters as '-',
 * trimmed to start and end with a letter or digit and cut to 54, then
 * '-' and the 8 hex digits of its hash. A new string. */
char *tpuci__k8s_label_value(const char *text);

/* Whether s is a valid label value (the empty string is). */
int tpuci__k8s_label_value_valid(const char *s);

/* Whether s is a DNS-1123 subdomain (a PersistentVolumeClaim name):
 * 1..253 of [a-z0-9.-], starting and ending with [a-z0-9]. */
int tpuci__k8s_subdomain_valid(const char *s);

/* Whether s can name an environment variable on every Kubernetes
 * version: [-._a-zA-Z][-._a-zA-Z0-9]* (newer ones accept more). */
int tpuci__k8s_env_name_valid(const char *s);

/* ------------------------------------------------------------------ */
/* Pods                                                                */

/* Where a pod's results folder is mounted; TPUCI_RESULTS names it. */
#define TPUCI__K8S_RESULTS_VOLUME "tpuci-results"
/* The annotation the Job controller puts the completion index in. */
#define TPUCI__K8S_INDEX_FIELD "metadata.annotations['batch.kubernetes.io/job-completion-index']"

/* A pod's command, argument or environment value that the container gets
 * as s: the kubelet expands "$(VAR)" and reads "$$" as '$', so a '$'
 * before '(' or '$' is doubled (export/quote.h lists the other places
 * spec text lands in). A new string. */
char *tpuci__quote_k8s(const char *s);

#endif /* TPUCI_POD_POD_H */
