/* A gang (one container per emulated TPU host, one attempt): how the
 * hosts' exits become the attempt's outcome, how each host's output is
 * prefixed line by line in the attempt's log (both pure), and each
 * host's create body. */
#ifndef TPUCI_ENGINE_GANG_H
#define TPUCI_ENGINE_GANG_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/runtime.h"
#include "plan/topology.h"
#include "base/util.h"

enum { TPUCI__OOM_STATS = 1, TPUCI__OOM_PROBABLY };

/* Where a gang host's wait step is (gate.h): nothing said yet, some
 * names do not resolve yet, they all do and it waits for the go, its
 * command started, its command ended and it waits for the end. */
typedef enum {
  TPUCI__GATE_SILENT = 0,
  TPUCI__GATE_WAITING,
  TPUCI__GATE_READY,
  TPUCI__GATE_STARTED,
  TPUCI__GATE_DONE
} tpuci__gate_state_t;

/* One container of an attempt, as the outcome logic sees it. */
typedef struct {
  const char *name; /* "worker-1"; NULL for a lone container */
  int exited;       /* its wait answered */
  long status;      /* exit status (wait, then inspect) */
  int oom;          /* State.OOMKilled, or see oom_unreported */
  /* The engine reported no OOM kill of a container that ended by a
   * SIGKILL tpuci did not send, under a memory limit (exit 137):
   * TPUCI__OOM_STATS when its stats showed the limit reached (oom is then
   * set), TPUCI__OOM_PROBABLY when nothing said (the verdict is an OOM
   * kill all the same, whose cause says it was probably out of memory);
   * 0 otherwise. */
  int oom_unreported;
  uint64_t signals;    /* bit n: tpuci sent signal n to it */
  int stopped;         /* tpuci had signalled it before it exited */
  unsigned long order; /* 1, 2, ...: the order its wait answered in */
} tpuci__gang_host_t;

/* What the attempt's exit looks like (tpuci__exit_t's fields). */
typedef struct {
  int exit_code; /* -1 when none */
  int term_signal;
  int oom;
  int host;    /* the host that decided, -1 when none did */
  char *cause; /* NULL, or owned: "worker-1: exit 3" */
} tpuci__gang_verdict_t;

/* Decides the outcome of containers that all ran (the caller handles
 * engine failures and attempts stopped before they started). The first
 * cause wins: of the containers that failed on their own (a non-zero
 * exit or an OOM kill before tpuci signalled them), the one whose wait
 * answered first speaks for the attempt; the exits of the others, which
 * tpuci then stopped, do not mask it. With no such container, the first
 * that exited non-zero at all (tpuci stopped it: a timeout, Ctrl-C)
 * speaks; with none, the attempt passed (exit 0). An exit status 128+N
 * for a signal N that tpuci sent to that container is reported as the
 * signal (exit_code -1).
 *
 * The cause: for an OOM kill, "killed by the kernel: out of memory
 * (memory limit 16 MiB)" (without the limit when memory_bytes is 0;
 * with oom_unreported the text says the engine did not report it, and
 * for TPUCI__OOM_PROBABLY (an OOM kill too, under a memory limit) "exit
 * 137 (... probably out of memory ...)" also for a lone container); for
 * a failure of a named host (a gang), "worker-1: exit 3" or "worker-1:
 * killed by signal 9 (Killed)", and the OOM text prefixed the same way;
 * NULL otherwise (the scheduler words a lone container's exit). */
void tpuci__gang_verdict(const tpuci__gang_host_t *hosts, size_t n, uint64_t memory_bytes,
                         tpuci__gang_verdict_t *out);
void tpuci__gang_verdict_free(tpuci__gang_verdict_t *v);

/* Prefixes every line of one host's stream ("[worker-1] "). Only whole
 * lines are passed on, so that the lines of concurrent hosts never mix
 * within a line; a partial line is held until its newline, until it
 * reaches TPUCI__LINES_MAX bytes, or until the stream ends, and is then
 * passed on with a newline added. */
#define TPUCI__LINES_MAX 8192

typedef void (*tpuci__lines_cb)(void *data, const char *buf, size_t len);

typedef struct {
  char *prefix;
  tpuci__buf_t partial;
} tpuci__lines_t;

void tpuci__lines_init(tpuci__lines_t *l, const char *prefix);
/* Calls cb at most once per call, with every complete line of the chunk. */
void tpuci__lines_feed(tpuci__lines_t *l, const char *buf, size_t len, tpuci__lines_cb cb,
                       void *data);
/* At the end of the stream: a held partial line, with a newline. */
void tpuci__lines_flush(tpuci__lines_t *l, tpuci__lines_cb cb, void *data);
void tpuci__lines_free(tpuci__lines_t *l);

/* Host `host` of an attempt's `nhosts` (a gang when nhosts > 1; a lone
 * container is host 0 of 1), and its gang's wait step (gate.h):
 * `gate_key` (NULL: none), with its end step when `gate_end`. */
typedef struct {
  int host;
  int nhosts;
  const char *gate_key;
  int gate_end;
} tpuci__gang_member_t;

/* What every engine driver gives host `m->host` of attempt `a` besides its
 * image and command: its environment (tpuci__attempt_host_env with
 * `slice`, which may be NULL for a job without a topology) and its
 * mounts: the job's, then with a->results_dir that folder read-write at
 * a->results_path (TPUCI__RESULTS_MOUNT when NULL); a gang's host
 * (`gang_host` "worker-<i>", NULL for a lone container) gets a subfolder
 * of its own, made here. With m->gate_key (a gang's host whose job has a
 * start_timeout), `argv` is the attempt's command behind the gang's wait
 * step (gate.h), with its end step when m->gate_end; else a copy of it. */
typedef struct {
  tpuci__strv_t argv;
  tpuci__strv_t env;
  tpuci__mount_t *mounts;
  size_t nmounts;
  char *results; /* the results folder on this machine, or NULL */
} tpuci__host_run_t;

/* 0, or a code with err filled (and nothing to free). */
int tpuci__host_run_init(tpuci__host_run_t *r, const tpuci__attempt_t *a,
                         const tpuci__slice_t *slice, const tpuci__gang_member_t *m,
                         const char *gang_host, tpuci__err_t *err);
void tpuci__host_run_free(tpuci__host_run_t *r);

/* The create body of host m->host of attempt `a`:
 * the image and command, the host's environment (tpuci__attempt_host_env
 * with `slice`, which may be NULL for a job without a topology), the
 * job's mounts, limits and accelerator options (its device globs
 * expanded: tpuci__ctr_devices), and the labels. With nhosts > 1 (a gang) the
 * host is "worker-<host>": its Hostname, its alias on `network`, which is
 * its NetworkMode. With a->results_dir, that folder (for a gang its
 * subfolder worker-<host>, created here) is bind-mounted read-write at
 * a->results_path (TPUCI__RESULTS_MOUNT when NULL). Returns a new
 * reference, or NULL with err filled. Not pure: creates the folder,
 * reads /dev. In a gang with m->gate_key, the command is behind the
 * gang's wait step, and its end step with m->gate_end (tpuci__host_run_t). */
json_t *tpuci__gang_host_body(const tpuci__attempt_t *a, const tpuci__slice_t *slice,
                              const tpuci__gang_member_t *m, const char *network,
                              const tpuci__kvlist_t *labels, tpuci__err_t *err);

#endif /* TPUCI_ENGINE_GANG_H */
