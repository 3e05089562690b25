/* What a tpuci container looks like to the engine: the create request
 * body (with the job's accelerator options), its name, its labels, and
 * whether the run that made it is still alive. Pure apart from
 * tpuci__docker_run_alive() (kill(2), /proc) and tpuci__ctr_devices()
 * (glob(3)). */
#ifndef TPUCI_ENGINE_CONTAINER_H
#define TPUCI_ENGINE_CONTAINER_H

#include <jansson.h>
#include <stdint.h>

#include "plan/plan.h"
#include "base/util.h"

/* Labels every tpuci object carries. */
#define TPUCI__LABEL_RUN "tpuci.run"
#define TPUCI__LABEL_JOB "tpuci.job"
#define TPUCI__LABEL_INSTANCE "tpuci.instance"
#define TPUCI__LABEL_ATTEMPT "tpuci.attempt"
#define TPUCI__LABEL_PID "tpuci.pid"
#define TPUCI__LABEL_PIDSTART "tpuci.pidstart"
#define TPUCI__LABEL_HOST "tpuci.host"
#define TPUCI__LABEL_KEEP "tpuci.keep"

/* Longest container name tpuci makes. */
#define TPUCI__NAME_MAX 128

typedef struct {
  const char *image;         /* reference */
  const tpuci__strv_t *argv; /* Cmd; may be empty: image default */
  const tpuci__strv_t *env;  /* "K=V" */
  const char *workdir;       /* may be NULL */
  const tpuci__mount_t *mounts;
  size_t nmounts;
  double cpus;           /* 0: no limit */
  uint64_t memory_bytes; /* 0: no limit */
  const char *network;   /* NetworkMode; NULL: engine default */
  const tpuci__kvlist_t *labels;
  const char *hostname; /* may be NULL */
  /* The name the container has on `network` (a gang's "worker-1"):
   * NetworkingConfig.EndpointsConfig[network].Aliases. May be NULL. */
  const char *alias;
  /* The job's accelerator options (shm_size, ipc, privileged, cap_add,
   * cap_drop, ulimits, gpus, sysctls) or NULL; its devices are not read
   * from there but from `devices`, their globs expanded
   * (tpuci__ctr_devices). */
  const tpuci__ctr_opts_t *ctr;
  const tpuci__device_t *devices;
  size_t ndevices;
} tpuci__ctr_spec_t;

/* The body of POST /containers/create. A new reference. */
json_t *tpuci__ctr_create_body(const tpuci__ctr_spec_t *s);

/* The accelerator options of `c` as HostConfig fields, set on `hc`:
 * ShmSize, IpcMode, Privileged, CapAdd and CapDrop ("CAP_SYS_ADMIN"),
 * Ulimits, DeviceRequests (gpus: Count -1 for "all", or DeviceIDs, and
 * Capabilities [[...]]) and Sysctls; and `devices` as Devices
 * (PathOnHost, PathInContainer, CgroupPermissions). `c` may be NULL. */
void tpuci__ctr_host_opts(json_t *hc, const tpuci__ctr_opts_t *c, const tpuci__device_t *devices,
                          size_t ndevices);

/* Pieces of those, which a swarm service takes too: ["CAP_SYS_ADMIN",
 * ...]; [{"Name", "Soft", "Hard"}, ...] of c->ulimits; {"net.core.x":
 * "1"} of c->sysctls. New references. */
json_t *tpuci__ctr_caps_json(const tpuci__strv_t *caps);
json_t *tpuci__ctr_ulimits_json(const tpuci__ctr_opts_t *c);
json_t *tpuci__ctr_sysctls_json(const tpuci__ctr_opts_t *c);

/* The devices of `c` as the engine gets them, in their order: each glob
 * replaced by the paths it matches on this machine now (sorted; a path
 * already given is left out), each with its container path (the host
 * path unless one is given) and permissions. Returns 0 with *out and *n
 * (free with tpuci__ctr_devices_free), or TPUCI_EUSAGE with err when a
 * glob matches nothing ("spec.lua:3: job 'tpu': devices: '/dev/accel*'
 * matches no device ..."). Reads the file system (glob(3)). */
int tpuci__ctr_devices(const tpuci__ctr_opts_t *c, const char *where, const char *job,
                       tpuci__device_t **out, size_t *n, tpuci__err_t *err);
void tpuci__ctr_devices_free(tpuci__device_t *d, size_t n);

/* A bind mount as an entry of HostConfig.Mounts: {"Type": "bind",
 * "Source", "Target", "ReadOnly"}. Unlike HostConfig.Binds, the engine
 * refuses a source that does not exist instead of creating it as an empty
 * root-owned folder. New reference. */
json_t *tpuci__ctr_mount(const tpuci__mount_t *m);

/* Whether a container (a GET /containers/{id}/json answer) was made from
 * `body` (a create body): it carries every one of the body's labels,
 * which name the run, the attempt and the tpuci process. */
int tpuci__ctr_is_ours(json_t *inspect, json_t *body);

/* Characters outside [A-Za-z0-9_.-] become '_'. New string. */
char *tpuci__docker_sanitize(const char *s);

/* "tpuci-<run>-<instance>-<attempt>", sanitised and at most
 * TPUCI__NAME_MAX bytes. When sanitising changed the instance name or it
 * had to be cut, 8 hex digits of its hash are added so that distinct
 * instances keep distinct names. New string. */
char *tpuci__ctr_name(const char *run_id, const char *instance, int attempt);

/* The container of host `host` of a gang: tpuci__ctr_name()'s name with
 * "-worker-<host>" added, within TPUCI__NAME_MAX bytes (the instance part
 * is cut and hashed to make room). New string. */
char *tpuci__ctr_host_name(const char *run_id, const char *instance, int attempt, int host);

/* The body of POST /networks/create for a gang's private network: a
 * bridge with Internal set (no route out of the engine's host), the
 * labels, and CheckDuplicate (a name taken answers 409). New reference. */
json_t *tpuci__net_create_body(const char *name, const tpuci__kvlist_t *labels, int internal);

/* The labels tpuci puts on the objects of one attempt. */
void tpuci__ctr_labels(tpuci__kvlist_t *out, const char *run_id, const char *job,
                       const char *instance, int attempt, int keep);

/* This process's identity for the labels: hostname, pid, and the pid's
 * start time (so that a recycled pid does not look alive). */
const char *tpuci__docker_hostname(void);
char *tpuci__docker_pidstart(long pid);

/* Whether the run that labelled an object is alive: 1 alive, 0 dead, -1
 * unknown (made on another host). `labels` is the object's Labels. */
int tpuci__docker_run_alive(json_t *labels);

/* Whether an entry of GET /containers/json or GET /networks belongs to
 * the swarm: a service's task container (label com.docker.swarm.service.id)
 * or a swarm-scoped network. The swarm driver owns those (gc, leftovers);
 * the docker driver leaves them alone. */
int tpuci__docker_is_swarm(json_t *o);
/* How many objects of a GET /containers or /networks list belong to a
 * run that is over (not the swarm's). */
size_t tpuci__docker_count_dead(json_t *list);

#endif /* TPUCI_ENGINE_CONTAINER_H */
