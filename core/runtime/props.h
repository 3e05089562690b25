/* What each runtime is, as the rest of the core asks it: a table of
 * properties, one row per runtime, so that no file outside core/runtime/
 * tests a runtime by its name (tests/layout/runtime_names.py). The
 * functions of a runtime are its driver's (runtime.h); this header is a
 * leaf that plan/ and spec/, which lie below runtime/, may include too.
 * Adding a runtime: docs/architecture.md, "Adding a runtime driver". */
#ifndef TPUCI_RUNTIME_PROPS_H
#define TPUCI_RUNTIME_PROPS_H

typedef enum {
  TPUCI__RUNTIME_LOCAL = 0,
  TPUCI__RUNTIME_DOCKER,
  TPUCI__RUNTIME_SWARM,
  TPUCI__RUNTIME_SSH,
  TPUCI__RUNTIME__COUNT
} tpuci__runtime_kind_t;

/* A job that names no runtime. */
#define TPUCI__RUNTIME_DEFAULT TPUCI__RUNTIME_LOCAL

typedef struct {
  const char *name; /* as specs and reports name it */
  /* Runs its processes on this machine: a TPU it runs on is this
   * machine's (tpuci run --real checks the devices here). */
  unsigned here : 1;
  /* Runs each host in a container that sees the job's bind mounts: a
   * path the job reports is taken back to this machine through them. */
  unsigned containers : 1;
  /* An engine a run may switch its container jobs to (--engine). */
  unsigned engine : 1;
  /* Builds the spec's images (image { build = ... }) on this machine. */
  unsigned builds_images : 1;
  /* Its containers are a Swarm service's tasks: what a service's
   * ContainerSpec cannot say is refused (tpuci__ctr_opts_refusal, plan/plan.h). */
  unsigned services : 1;
  /* Its hosts are workers it reaches over SSH (a process, or a
   * container made by the worker's engine, each). */
  unsigned workers : 1;
  /* Its machines can be preempted or lack capacity (retries.capacity). */
  unsigned capacity : 1;
  /* Without a workdir, the job runs in the spec's folder, and a relative
   * workdir is taken from there (else: the image's or the worker's). */
  unsigned workdir_spec : 1;
} tpuci__runtime_props_t;

/* The row of `kind`; an unknown kind has the name "unknown" and no
 * property. */
const tpuci__runtime_props_t *tpuci__runtime_props(tpuci__runtime_kind_t kind);
/* Its name ("unknown" for none). */
const char *tpuci__runtime_kind_name(tpuci__runtime_kind_t kind);
/* The kind of a name; -1 when unknown. */
int tpuci__runtime_kind_parse(const char *name);

#endif /* TPUCI_RUNTIME_PROPS_H */
