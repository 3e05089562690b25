/* What differs when the engine behind DOCKER_HOST is Podman's
 * Docker-compatible service (`podman system service`): telling it apart
 * from GET /version, the open-files and process limits tpuci asks for
 * when a rootful podman cannot give containers its own defaults, whether
 * it reports OOM kills, and hints for its errors (docs/docker.md,
 * "Podman"). Pure apart from tpuci__podman_probe() (one connection to
 * the engine's socket, /proc). */
#ifndef TPUCI_ENGINE_PODMAN_H
#define TPUCI_ENGINE_PODMAN_H

#include <jansson.h>
#include <stdint.h>

#include "plan/plan.h"

/* A rootful podman gives every container RLIMIT_NOFILE and RLIMIT_NPROC
 * of this much (soft and hard) unless told otherwise; raising a hard
 * limit that far needs CAP_SYS_RESOURCE. */
#define TPUCI__PODMAN_RLIMIT_DEFAULT 1048576ull
/* The first podman whose State.OOMKilled is ever true
 * (containers/podman#13102, fixed by #21523 for podman 5.0): before, its
 * conmon records an OOM kill in a file podman does not read. */
#define TPUCI__PODMAN_OOM_MAJOR 5

/* Whether a GET /version answer is podman's: one of its Components is
 * named "Podman Engine". Then *major and *minor hold its version (0 when
 * unreadable). */
int tpuci__podman_detect(json_t *version, int *major, int *minor);

/* The limits of the process serving the engine's socket. */
typedef struct {
  int known; /* read: pid, uid, hard limits, capabilities */
  long pid;
  long uid;
  unsigned long long nofile; /* hard RLIMIT_NOFILE; ULLONG_MAX: unlimited */
  unsigned long long nproc;  /* hard RLIMIT_NPROC */
  int sys_resource;          /* CAP_SYS_RESOURCE in its effective set */
  /* Whether tpuci sets HostConfig.Ulimits: a rootful service without
   * CAP_SYS_RESOURCE with a hard limit under podman's default would fail
   * to start every container ("error setting rlimit type 7: operation
   * not permitted"). A rootless podman clamps to its own limits itself. */
  int needed;
} tpuci__podman_limits_t;

/* The hard limits of "Max open files" and "Max processes" in the text of
 * /proc/<pid>/limits. 0, or -1 when either is missing. */
int tpuci__proc_hard_limits(const char *text, unsigned long long *nofile,
                            unsigned long long *nproc);
/* Whether the CapEff line of /proc/<pid>/status has capability `cap`:
 * 1 or 0, -1 without a readable line. */
int tpuci__proc_has_cap(const char *status, int cap);
/* Sets l->needed from the other fields. */
void tpuci__podman_limits_decide(tpuci__podman_limits_t *l);
/* Fills *out for the service at `unix_path`: its pid and uid from
 * SO_PEERCRED over a connection of its own, then /proc/<pid>/limits and
 * /proc/<pid>/status. known = 0 when a step fails (a remote engine, a
 * socket passed on by systemd is another process's). Never blocks. */
void tpuci__podman_probe(const char *unix_path, tpuci__podman_limits_t *out);
/* Adds nofile and nproc to HostConfig.Ulimits (soft = hard = the
 * service's hard limit) of a create body when l->needed, unless the
 * job's ulimits give them. */
void tpuci__podman_body_limits(json_t *body, const tpuci__podman_limits_t *l);
/* One line for `tpuci doctor` about *l, without "ok"/"warn". New string. */
char *tpuci__podman_limits_text(const tpuci__podman_limits_t *l);

/* Whether a failed POST /containers/{id}/kill says the container is not
 * running any more: Docker answers 409, podman 500 "can only kill running
 * containers". */
int tpuci__podman_not_running(long status, const char *message);

/* Podman's Docker-compatible API ignores HostConfig.DeviceRequests
 * (containers/podman#22645): a job with `gpus` would get no GPU without
 * a word. The refusal of the plan's first selected docker instance with
 * gpus ("spec.lua:3: job 'x': gpus: ..."), a new string; NULL when none
 * has them. */
char *tpuci__podman_gpus_refusal(const tpuci__plan_t *plan);

/* What to do about a podman error message, or NULL: its init binary
 * missing (HostConfig.Init), limits it cannot set. */
const char *tpuci__podman_hint(const char *engine_message);

/* A container of a podman that never reports OOM kills exited 137
 * (SIGKILL from someone other than tpuci) under a memory limit: `cause`
 * (may be NULL: "exit 137") with what that probably means. New string. */
char *tpuci__podman_oom_cause(const char *cause, uint64_t memory_bytes, const char *version);

#endif /* TPUCI_ENGINE_PODMAN_H */
