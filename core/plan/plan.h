/* core/plan/: what a spec expands into, as plain C data. The plan (this
 * header: job instances, images, topologies, retry policies, the names of
 * outcomes and runtimes; plan.c prints it as text and JSON; a job's
 * container options for accelerators: ctr_opts.c), the TPU
 * catalogue and resolved slices (topology.h), and what each emulated host
 * of an instance gets from its topology (host_env.h). A job kind's record
 * of an instance is the kind's: the plan holds it and calls the kind's
 * operations on it (tpuci__kind_config_t below; how a kind's loader makes
 * it from a spec: kind_spec.h). Pure data and pure functions: no I/O, no
 * Lua, no loop. Built by core/spec/, read by every folder after it; it
 * may use only core/base/. */
#ifndef TPUCI_PLAN_H
#define TPUCI_PLAN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "runtime/props.h"

typedef enum { TPUCI__PULL_MISSING = 0, TPUCI__PULL_ALWAYS, TPUCI__PULL_NEVER } tpuci__pull_t;

/* "missing", "always" or "never" (the plan JSON's and `docker create
 * --pull`'s words). */
const char *tpuci__pull_name(tpuci__pull_t pull);

/* image "name" { build = { context, dockerfile, args, target } }: built
 * by the engine from the spec's tree, never pulled. */
typedef struct {
  char *context;      /* absolute */
  char *dockerfile;   /* as written (relative to the context), or NULL */
  char *target;       /* or NULL */
  tpuci__strv_t args; /* NAME, value, NAME, value ... sorted by name */
} tpuci__image_build_t;

/* image "name" { ref = "...", pull = "missing" } */
typedef struct {
  char *name;
  char *ref; /* "gcr.io/tpu-pytorch/xla:r1.5" */
  tpuci__pull_t pull;
  char *where;                 /* "spec.lua:3" */
  tpuci__image_build_t *build; /* or NULL: pulled */
  /* The id the run's build gave ("sha256:..."): containers start from it
   * and the results cache keys it, whatever the tag names by then. */
  char *id;
} tpuci__image_t;

/* What an engine is asked to run: the id the run's build gave, else the
 * ref. */
const char *tpuci__image_engine_ref(const tpuci__image_t *img);

/* topology "name" { ... } or a catalogue type referenced by name. */
typedef struct {
  char *name;
  char *base; /* catalogue type it refines, or NULL */
  int hosts;  /* >= 1 */
  int chips_per_host;
  int cores_per_chip;
  char *emulate; /* "pjrt", "xrt", "jax", "none" */
  char *where;
} tpuci__topology_t;

/* One machine of a `hosts` declaration: `[user@]host[:port]`. */
typedef struct {
  char *user; /* NULL: ssh's (the config's, else the login) */
  char *host; /* name or address, without brackets */
  int port;   /* 0: ssh's (the config's, else 22) */
} tpuci__ssh_host_t;

/* hosts "slice" { "root@10.0.0.2", ..., ssh_config = "ci/ssh_config" } or
 * hosts "slice" { gcloud = "tpu.json", user = "me" }: the workers of a
 * slice reached over SSH, in worker order (docs/ssh.md). */
typedef struct {
  char *name;
  char *where;      /* "spec.lua:3" */
  char *ssh_config; /* absolute; `ssh -F`; NULL: ssh's own */
  char *gcloud;     /* absolute path of the describe file, or NULL */
  char *match;      /* an instances list's names: a glob, or NULL */
  char *label;      /* an instances list's label "key=value", or NULL */
  /* A command (sh -c, in the spec's folder) whose output is a fresh
   * describe or instances list, run after a failed attempt; NULL: the
   * gcloud file is read again (docs/ssh.md, "Capacity"). */
  char *describe;
  uint64_t describe_timeout_ms; /* 0: unset (tpuci__hostset_describe_ms) */
  tpuci__ssh_host_t *hosts;
  size_t nhosts; /* >= 1 */
} tpuci__hostset_t;

/* plan/gcloud.c. The workers of hs (hosts and nhosts, empty; hs->gcloud
 * names the file in messages) from a gcloud document's text: a
 * `tpu-vm describe`'s networkEndpoints[].ipAddress in order, or an
 * `instances list`'s instances (named like hs->match, with the label
 * hs->label) networkInterfaces[0].networkIP, by their metadata's
 * agent-worker-number when each has one, else by name; 1 to 256, each
 * letters, digits, '.', ':' and '-' not starting with '-', `user` (may
 * be NULL) their login. NULL, or a new message "gcloud: 'FILE'...": then
 * hs may hold some workers (the plan frees them). */
char *tpuci__gcloud_parse(tpuci__hostset_t *hs, const char *text, size_t len, const char *user);
/* Whether a fresh gcloud document says hs's workers were taken away: 1
 * and *why (new) when the TPU's state or a found worker's instance status
 * is PREEMPTED, TERMINATED, STOPPING, ..., or a worker is not in it while
 * it names another worker (or hs's workers came from a gcloud file); 0
 * when every worker is there; -1 and *why when the text says neither, or
 * names none of the workers (found by internal or external address, or
 * an instance's name): no evidence. `aliases` (may be NULL; an entry may
 * be NULL) is another name of each worker, the HostName its ssh_config
 * gives it, matched the same way. */
int tpuci__gcloud_check(const tpuci__hostset_t *hs, const char *const *aliases, const char *text,
                        size_t len, char **why);

/* "user@host:port" as the spec writes it ("[::1]" for an IPv6 address
 * with a port). New string. */
char *tpuci__ssh_host_text(const tpuci__ssh_host_t *h);
/* Frees what it holds and zeroes it (plan/hostset.c). */
void tpuci__hostset_free(tpuci__hostset_t *hs);
/* {"name", "where", "ssh_config", "gcloud", "instances", "label",
 * "describe", "describe_timeout_ms", "workers": [{"target", "user",
 * "host", "port"}]}: `tpuci plan --json`'s "ssh". New reference. */
json_t *tpuci__hostset_json(const tpuci__hostset_t *hs);

/* How long hs's describe command may take: its describe_timeout, else a
 * minute. */
uint64_t tpuci__hostset_describe_ms(const tpuci__hostset_t *hs);
/* Its `tpuci plan` lines: the declaration, `-F`, each worker. */
void tpuci__hostset_text(const tpuci__hostset_t *hs, tpuci__buf_t *b);

/* When and how an instance is tried again. */
typedef struct {
  int attempts;        /* total attempts, >= 1 */
  unsigned on;         /* bit (1u << outcome) set: retry that outcome */
  uint64_t backoff_ms; /* wait before attempt 2 */
  double factor;       /* each later wait is multiplied by this */
  uint64_t max_backoff_ms;
  int rerun_unfinished; /* pytest: a retry runs only the tests that did
                             not finish (retries.rerun = "unfinished") */
  /* retries.capacity: attempts after a preempted or no-capacity one,
   * which never count against `attempts`, and the wait before each. */
  int capacity_attempts;
  uint64_t capacity_wait_ms;
} tpuci__retry_t;

/* The wait before attempt `next` (2-based: next == 2 is the first retry):
 * backoff * factor^(next-2), capped at max_backoff_ms. */
uint64_t tpuci__retry_delay(const tpuci__retry_t *r, int next);

/* "passed" -> TPUCI_OUTCOME_PASSED; -1 when unknown (plan/outcome.c). */
int tpuci__outcome_parse(const char *name);

/* Whether an attempt that ended with `outcome` may be retried. */
int tpuci__retry_wants(const tpuci__retry_t *r, int outcome);

typedef struct {
  char *source; /* host path, absolute after loading */
  char *target; /* path in the container */
  int read_only;
} tpuci__mount_t;

/* A device the container gets (`devices`; Docker's HostConfig.Devices).
 * A host path holding '*', '?' or '[' is a glob, expanded when an
 * attempt starts (each match at its own path). */
typedef struct {
  char *host;   /* absolute path or glob on the engine's host */
  char *target; /* path in the container; NULL: the host path */
  char *perms;  /* cgroup permissions: "rwm" or a part of it */
  int glob;
} tpuci__device_t;

/* One resource limit (`ulimits`): soft and hard, -1 for unlimited. */
typedef struct {
  char *name; /* "nofile", "memlock", ... */
  int64_t soft, hard;
} tpuci__ulimit_t;

/* `gpus`: one Docker DeviceRequest. */
typedef struct {
  int count;          /* -1: all; 0: the ids; else that many */
  tpuci__strv_t ids;  /* DeviceIDs, when count is 0 */
  char *driver;       /* NULL: the engine picks by capabilities */
  tpuci__strv_t caps; /* every device has all of these ("gpu") */
} tpuci__gpus_t;

/* The container options accelerators need, with Compose's names
 * (docs/spec.md, "Accelerators"); all zero when the job gives none.
 * Lists are sorted by name, as the prelude leaves them. */
typedef struct {
  uint64_t shm_bytes; /* shm_size; 0: the engine's default */
  char *ipc;          /* "host", "private", "shareable"; NULL: default */
  int privileged;
  tpuci__device_t *devices;
  size_t ndevices;
  tpuci__strv_t cap_add; /* capability names without "CAP_", or "ALL" */
  tpuci__strv_t cap_drop;
  tpuci__ulimit_t *ulimits;
  size_t nulimits;
  tpuci__gpus_t *gpus; /* NULL: none */
  tpuci__kvlist_t sysctls;
} tpuci__ctr_opts_t;

/* Whether any option is given. */
int tpuci__ctr_opts_any(const tpuci__ctr_opts_t *c);
void tpuci__ctr_opts_free(tpuci__ctr_opts_t *c);
/* A deep copy into `dst` (overwritten). */
void tpuci__ctr_opts_copy(tpuci__ctr_opts_t *dst, const tpuci__ctr_opts_t *src);
/* The bytes its strings take, roughly (the plan's size cap). */
size_t tpuci__ctr_opts_bytes(const tpuci__ctr_opts_t *c);
/* The options given, as a JSON object keyed by their spec names (`{}`
 * when none): `tpuci plan --json`'s "container". New reference. */
json_t *tpuci__ctr_opts_json(const tpuci__ctr_opts_t *c);
/* The options given as `tpuci plan` lines ("  shm_size: 16 GiB\n"). */
void tpuci__ctr_opts_text(const tpuci__ctr_opts_t *c, tpuci__buf_t *b);
/* Why runtime `kind` cannot give a container these options: a new
 * string naming the first key it lacks and why ("privileged: not
 * available with runtime 'swarm': ..."), or NULL when it can. Only swarm
 * lacks some; the local runtime ignores them all (the prelude warns). */
char *tpuci__ctr_opts_refusal(const tpuci__ctr_opts_t *c, int kind);
/* "CAP_SYS_ADMIN" for "SYS_ADMIN", "ALL" for "ALL": the engines' form.
 * New string. */
char *tpuci__cap_engine_name(const char *cap);

struct tpuci__instance_s;

/* What the plan does with a job kind's part of an instance
 * (`inst->kind`, `inst->kind_config`): the kind's own record of the
 * instance, which the plan holds without knowing what is in it (the
 * pytest kind's: kind/pytest/config.h). Declared here, filled by the
 * kind (its loader sets it: plan/kind_spec.h), since the plan lies below
 * the job kinds. */
typedef struct {
  const char *name;                  /* the kind's, and the key of its part of the JSON */
  void (*free)(void *config);        /* frees it and what it holds (NULL: nothing to) */
  void *(*copy)(const void *config); /* a deep copy */
  /* Its part of the instance as `tpuci plan --json` shows it, under
   * `name` (the instance is given: the kind may show its shards). New
   * reference. */
  json_t *(*json)(const struct tpuci__instance_s *in);
  /* Whether a retry runs again only part of an instance (the tests that
   * failed, or only those that did not finish: retry.rerun_unfinished),
   * which the JSON's "retry" says as "rerun". */
  int partial_retries;
  /* When the device check runs (expect_devices), for `tpuci plan`'s
   * "devices:" line ("per process"); NULL: "before the command". */
  const char *devices_when;
} tpuci__kind_config_t;

/* One job instance: a job with one matrix combination bound. */
typedef struct tpuci__instance_s {
  char *name;             /* "unit[python=3.11,torch=2.1]" */
  char *job;              /* "unit" */
  char *where;            /* "spec.lua:12" */
  tpuci__kvlist_t matrix; /* this instance's values, in declared order */

  tpuci__runtime_kind_t runtime;
  tpuci__strv_t argv;       /* `run` becomes {"/bin/sh", "-c", run} */
  char *run;                /* the shell string, when given as `run` */
  tpuci__kvlist_t env;      /* added to the inherited environment */
  char *workdir;            /* NULL: the spec's folder (local runtime) */
  uint64_t timeout_ms;      /* 0: none */
  uint64_t idle_timeout_ms; /* no output this long: timeout; 0: none */
  /* A gang's start deadline: every host up and every host's name
   * resolving on each, or the attempt is infra; 0: no start barrier (the
   * hosts start their commands at once). 3 minutes unless the spec says. */
  uint64_t start_timeout_ms;
  uint64_t grace_ms; /* SIGTERM to SIGKILL */
  tpuci__retry_t retry;

  int image;    /* index into plan->images, or -1 */
  int topology; /* index into plan->topologies, or -1 */
  int hostset;  /* index into plan->hostsets (runtime ssh), or -1 */
  tpuci__mount_t *mounts;
  size_t nmounts;
  double cpus;           /* 0: no limit */
  uint64_t memory_bytes; /* 0: no limit */
  char *network;         /* docker network mode; NULL: engine default */
  tpuci__ctr_opts_t ctr; /* shm_size, devices, ... (docker, swarm) */
  /* Its job kind's record of it, which only that kind reads (the
   * pytest kind's: tpuci__pytest_of(), kind/pytest/config.h); NULL for
   * the command kind, which keeps none. */
  const tpuci__kind_config_t *kind;
  void *kind_config;
  /* What the folders below the job kinds need to know of an instance,
   * which name no kind: its kind sets these when the spec is loaded (all
   * 0 for the command kind).
   *
   * A job split into parts, each an instance of its own with "shard" =
   * "i/N" in its matrix (pytest.shards, pytest.per_chip): `shards` is N
   * and `shard` this part's i. Not split: `shard` is 0 and `shards` 1
   * (0 for the command kind), so `shards > 1` tells a part. */
  int shards;
  int shard;
  /* Each part runs on a chip of its own of the one host, part i on chip
   * i - 1 (pytest.per_chip): its environment and devices (host_env.c). */
  int per_chip;
  /* Its command runs pytest (argv[0] is the Python), whose JUnit comes
   * back through each attempt's results folder: `tpuci doctor` checks
   * that the image's Python imports pytest (runtime/docker/netprobe.c),
   * and a remote engine's checks warn or refuse
   * (runtime/engine/endpoint.c). */
  int runs_pytest;
  /* The results cache (docs/cache.md): `cache = false` sets no_cache;
   * `inputs` are globs relative to the spec's folder, the only files of
   * the mounts (the working folder) that count in the key; none: all. */
  int no_cache;
  tpuci__strv_t inputs;
  /* The device check before the command or the first test (spec.md,
   * expect_devices; pytest.md, "The device check"): "auto" (every
   * framework that imports), "jax" or "torch_xla"; NULL: none. */
  char *expect_devices;

  int selected; /* chosen by tpuci_plan_select() */
  /* A repetition of a flake probe (`tpuci run --repeat N`): 1 ... N, and
   * the index of the instance it repeats; 0 when it is none. */
  int repeat;
  size_t repeat_of;
} tpuci__instance_t;

typedef struct {
  char *spec_path; /* as given */
  char *spec_dir;  /* absolute */
  tpuci__image_t *images;
  size_t nimages;
  tpuci__topology_t *topologies;
  size_t ntopologies;
  tpuci__hostset_t *hostsets;
  size_t nhostsets;
  tpuci__instance_t *instances;
  size_t ninstances;
  size_t cap_instances;
  tpuci__strv_t warnings;
} tpuci__plan_t;

/* The number of emulated hosts of an instance: its topology's, else 1.
 * It is also the number of slots each attempt takes. */
/* Instance i of the plan, or NULL when there is no plan or no such
 * instance (the API's accessors, of a context and of a run). */
const tpuci__instance_t *tpuci__plan_instance(const tpuci__plan_t *p, size_t i);
int tpuci__plan_hosts(const tpuci__plan_t *p, const tpuci__instance_t *inst);
/* Whether a selected instance of runtime `kind` runs plan image `k`. */
int tpuci__plan_image_used(const tpuci__plan_t *p, size_t k, tpuci__runtime_kind_t kind);
/* Whether a selected instance runs image k on a runtime that builds the
 * spec's images here (props.h, builds_images). */
int tpuci__plan_image_built_here(const tpuci__plan_t *p, size_t k);

void tpuci__plan_init(tpuci__plan_t *p);
void tpuci__plan_free(tpuci__plan_t *p);
/* Appends a zeroed instance (image, topology, hostset -1) and returns it. */
tpuci__instance_t *tpuci__plan_add_instance(tpuci__plan_t *p);
/* A deep copy of `src` into `dst` (overwritten): every string and list
 * its own, so either can be freed first. */
void tpuci__instance_copy(tpuci__instance_t *dst, const tpuci__instance_t *src);
/* Frees what an instance holds (not the instance itself). */
void tpuci__instance_free(tpuci__instance_t *in);

/* An instance as `tpuci plan --json` shows it (every field of the plan
 * entry, the hosts' environments with a topology). New reference. */
json_t *tpuci__plan_instance_json(const tpuci__plan_t *p, const tpuci__instance_t *in);

/* Serialisations used by `tpuci plan`. */
char *tpuci__plan_to_json(const tpuci__plan_t *p);
/* The same, with `extra` (may be NULL) called on each instance's object
 * before it is written, to add fields of the caller's. */
char *tpuci__plan_to_json_x(const tpuci__plan_t *p,
                            void (*extra)(void *ud, const tpuci__instance_t *inst, json_t *o),
                            void *ud);
char *tpuci__plan_to_text(const tpuci__plan_t *p);

#endif /* TPUCI_PLAN_H */
