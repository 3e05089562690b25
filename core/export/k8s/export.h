/* Kubernetes manifests of a spec (`tpuci export kubernetes`): per
 * selected job instance an Indexed Job (completions = parallelism = the
 * instance's hosts) and, for a gang of more than one host, the headless
 * Service its pods' hostnames live under (or, with the jobset option, a
 * JobSet for a gang of more than one host). On a GKE TPU slice when the
 * instance's topology is a catalogue type GKE offers; as tpuci's CPU
 * emulation on any cluster otherwise. docs/kubernetes.md describes the
 * manifests and every choice made here.
 *
 * The export's policy: which instances, its options, what it refuses
 * and why, each instance's environment and command (export.c). The
 * objects themselves are built by core/pod/ (pod.h, manifest.h).
 *
 * Pure: nothing here talks to a cluster. */
#ifndef TPUCI_EXPORT_K8S_H
#define TPUCI_EXPORT_K8S_H

#include "pod/pod.h"
#include "plan/plan.h"
#include "base/util.h"

typedef struct {
  /* Every instance with a topology runs tpuci's CPU emulation of it, with
   * no TPU node selector or resource. Without it, an instance whose
   * topology is a catalogue type asks for a GKE TPU slice, and one with a
   * custom topology (not a real TPU type) is emulated. */
  int emulated;
  /* The spec's mounts are left out (the image must hold what they would
   * bring). Without it a job with mounts cannot be exported. */
  int no_mounts;
  /* A run id: the tpuci.run label, TPUCI_RUN_ID, and part of every name
   * (so manifests of two runs can coexist). NULL: none. */
  const char *run;
  /* A PersistentVolumeClaim the pods write their results into (under
   * <name>/<host>/). NULL: an emptyDir, and pytest jobs print their JUnit
   * file to the log. */
  const char *results_claim;
  /* An instance of more than one host is one JobSet
   * (jobset.x-k8s.io/v1alpha2) instead of an Indexed Job and a Service
   * (docs/kubernetes.md, JobSet). */
  int jobset;
} tpuci__k8s_opts_t;

void tpuci__k8s_opts_init(tpuci__k8s_opts_t *opts);

/* Appends the manifests of the plan's selected instances to `out`: a
 * comment, then one YAML document per object, written by libyaml's
 * emitter. `opts` may be NULL (the defaults). Returns 0; TPUCI_EUSAGE
 * with a one-line message in `err` (which may be NULL) when an instance
 * cannot be exported (a local job, mounts without no_mounts, a docker
 * network mode, a TPU type GKE does not offer, pytest shards on a gang,
 * ...: the message starts with the job's "file:line: job 'name': ") or
 * an option is invalid; TPUCI_ENOMATCH when no instance is selected;
 * TPUCI_ENOMEM or TPUCI_EIO when the emitter fails. On error `out` is
 * left as it was. */
int tpuci__export_kubernetes(const tpuci__plan_t *plan, const tpuci__k8s_opts_t *opts,
                             tpuci__buf_t *out, tpuci__err_t *err);

#endif /* TPUCI_EXPORT_K8S_H */
