/* core/runtime/ssh/: runtime "ssh", a gang's hosts on the workers of a
 * `hosts` declaration, each reached with the system's OpenSSH client
 * (docs/ssh.md). Private to this folder; it includes runtime.h, the
 * attempt core (runtime/unit/unit.h, which brings the gang's verdict and
 * line prefixing of runtime/engine/gang.h), core/plan/ and core/base/.
 *
 *   client.c  ssh's command lines; running one to its end (doctor)
 *   doctor.c  `tpuci doctor` and `tpuci gc SPEC` for the workers
 *   remote.c  what runs on a worker (a POSIX sh script), pure
 *   ctr.c     a job with an image: its container on the worker, made
 *             with the worker's docker CLI (the script's part), pure
 *   proc.c    a child process (ssh, or sh around it) on the loop
 *   attempt.c the attempt core's operations: one session per host
 *   driver.c  the runtime object: the checks, the first connection to
 *             each worker (prepare), closing the shared connections */
#ifndef TPUCI_RUNTIME_SSH_H
#define TPUCI_RUNTIME_SSH_H

#include <stdint.h>
#include <uv.h>

#include "runtime/runtime.h"
#include "runtime/sshcmd.h"
#include "runtime/unit/unit.h"

/* doctor.c: which of plan->hostsets the selected ssh jobs use, flags
 * each (new array): TPUCI__SSH_USED, and TPUCI__SSH_DOCKER when a job
 * with an image does (its workers need a working docker). */
#define TPUCI__SSH_USED 1
#define TPUCI__SSH_DOCKER 2
unsigned char *tpuci__ssh_used(const tpuci__plan_t *plan);
/* The remote command that checks a worker's docker: prints its engine's
 * version, fails as `docker version` does. */
#define TPUCI__SSH_DOCKER_CHECK "docker version --format '{{.Server.Version}}'"

/* Appends to out the ssh command line that reaches worker i of hs, up to
 * and including the destination: the client, `-F` when the declaration
 * gives a config and the rest of tpuci__ssh_base_argv (runtime/sshcmd.h),
 * the options `opts` (NULL, or NULL-terminated: "-T", "-O" "exit"),
 * then "--" and the host: the host is never read as an option. The
 * remote command follows. */
void tpuci__ssh_argv(const tpuci__hostset_t *hs, size_t i, const char *control_path,
                     const char *const *opts, tpuci__strv_t *out);

/* Runs argv to its end (blocking), stdin on /dev/null: its exit status
 * (255: ssh's own failure), or -1 when it could not run or was killed;
 * every line it wrote to stdout (up to 1 MiB) into `out` (NULL: stdout
 * on /dev/null); the last line it wrote to stderr, trimmed, into *last
 * (new string, or NULL when it wrote none). */
int tpuci__ssh_run_capture(const tpuci__strv_t *argv, tpuci__buf_t *out, char **last);

/* remote.c: what a worker runs.
 *
 * A host's session runs one POSIX sh script (given to the login shell as
 * `exec sh -c '...'`): it makes the unit's folder `dir` (and its
 * results/), prints the ready line TPUCI__SSH_READY " <nonce>" on
 * stdout and waits for "go" on stdin: the gang's start barrier, since
 * tpuci sends "go" to every host only once all are connected (EOF or
 * anything else: it removes the folder and ends without running). Then the job runs in a
 * session and process group of its own (setsid), stdin /dev/null, in
 * `workdir` (the login's home when NULL) with `env`; its group id goes
 * to dir/pgid. Each later line on stdin is a signal name sent to the
 * whole group ("TERM", "KILL"); the end of stdin (tpuci stopped, or the
 * connection dropped) kills the group and leaves dir/lost. When the job ends, what is left
 * of its group is killed, its exit status (128+N for signal N) goes to
 * dir/rc and is the session's exit status. */
#define TPUCI__SSH_READY "tpuci-ssh-ready"

typedef struct {
  const char *dir;           /* the unit's folder on the worker */
  const char *nonce;         /* of the ready line */
  const char *workdir;       /* or NULL */
  const tpuci__strv_t *env;  /* "K=V" */
  const tpuci__strv_t *argv; /* the job's command */
  /* A job with an image: its container's name, and the script's part
   * that creates it (ctr.c), before the ready line; the job is then
   * `docker start -a` of it, signals go to it (`docker kill -s`), and
   * the end of stdin removes it. NULL: the job runs on the worker. */
  const char *ctr;
  const char *create;
} tpuci__ssh_remote_t;

/* The remote command of a host's session (one ssh argument). New. */
char *tpuci__ssh_remote_command(const tpuci__ssh_remote_t *r);
/* After ssh's exit 255: prints dir/rc (the job's own exit 255; a
 * container's: TPUCI__SSH_RC_NOSTART, or "<status> "
 * TPUCI__SSH_RC_OOM), or "lost" when the job's stdin ended first (the
 * connection dropped). New. */
#define TPUCI__SSH_RC_NOSTART "nostart"
#define TPUCI__SSH_RC_OOM "oom"
char *tpuci__ssh_rc_command(const char *dir);
/* `tpuci gc SPEC` on a worker: prints each unit folder of a dead run
 * (its job ended: dir/rc; or its group is gone; or, never started, an
 * hour old) and unless dry_run removes it. New. */
char *tpuci__ssh_gc_command(int dry_run);
/* Writes dir/results as a tar stream to stdout when `results`, then
 * removes the container `ctr` (NULL: none) and dir (and its parent once
 * empty). New. */
char *tpuci__ssh_cleanup_command(const char *dir, int results, const char *ctr);
/* ctr.c: what makes a host's container. */
typedef struct {
  const char *name;   /* the container's */
  const char *image;  /* its reference */
  tpuci__pull_t pull; /* docker create --pull */
  const tpuci__kvlist_t *labels;
  const tpuci__strv_t *env;     /* "K=V" */
  const char *workdir;          /* or NULL */
  const char *results;          /* where the host's results/ is mounted, or NULL */
  const tpuci__mount_t *mounts; /* the worker's folders */
  size_t nmounts;
  double cpus;
  uint64_t memory_bytes;
  const tpuci__ctr_opts_t *ctr; /* accelerator options, or NULL */
  const tpuci__strv_t *argv;    /* the command; empty: the image's */
} tpuci__ssh_ctr_t;
/* The session script's lines that create it (`docker create ... ||
 * exit 125`, after expanding device globs on the worker). New. */
char *tpuci__ssh_ctr_create(const tpuci__ssh_ctr_t *c);

/* The name of signal `signum` as sh's kill takes it ("TERM"), or NULL. */
const char *tpuci__ssh_signame(int signum);

/* proc.c: a child on the loop, its stdin a pipe (when asked), stdout and
 * stderr read into on_output; on_done once it exited and every handle
 * closed (also when it could not be spawned: spawn_error). It runs in a
 * session of its own, so the terminal's Ctrl-C reaches tpuci only. */
typedef struct tpuci__sshproc_s tpuci__sshproc_t;
struct tpuci__sshproc_s {
  uv_process_t proc;
  uv_pipe_t in, out, err;
  uv_timer_t timer; /* SIGKILL after a deadline; the drain */
  int open;         /* handles not closed yet */
  int reading;      /* output pipes not at EOF */
  int in_open;      /* stdin can still be written */
  int exited;
  int spawn_error; /* 0, or uv's code */
  int killed;      /* tpuci killed it (the deadline) */
  int64_t status;  /* exit status; -1 when killed by a signal */
  int term_signal;
  tpuci__buf_t tail; /* the last bytes of its stderr */
  void (*on_output)(tpuci__sshproc_t *p, int stream, const char *buf, size_t len);
  void (*on_done)(tpuci__sshproc_t *p);
  void *data;
};

/* Spawns argv (NULL-terminated items) with stdin a pipe when with_stdin
 * (else /dev/null). Always ends with on_done. */
void tpuci__sshproc_spawn(tpuci__sshproc_t *p, uv_loop_t *loop, const tpuci__strv_t *argv,
                          int with_stdin);
/* Writes a short line (at most PIPE_BUF bytes: all or nothing) to its
 * stdin: 0, or a negative code. */
int tpuci__sshproc_write(tpuci__sshproc_t *p, const char *line);
/* Closes its stdin (EOF for the other side). */
void tpuci__sshproc_close_stdin(tpuci__sshproc_t *p);
/* SIGKILLs it if it has not exited after `ms`. */
void tpuci__sshproc_deadline(tpuci__sshproc_t *p, uint64_t ms);
/* The last non-empty line of its stderr, trimmed, or NULL. New. */
char *tpuci__sshproc_last_line(const tpuci__sshproc_t *p);

/* capacity.c: the machines' failures (docs/ssh.md, "Capacity"). */
typedef struct tpuci__ssh_capacity_s tpuci__ssh_capacity_t;
struct tpuci__ssh_capacity_s {
  const tpuci__hostset_t *hs;
  int outcome;           /* 0, TPUCI_OUTCOME_PREEMPTED or _NO_CAPACITY */
  char *why;             /* what showed it */
  char *note;            /* why it could not be told, for the user */
  tpuci__sshproc_t proc; /* the describe command */
  tpuci__buf_t out;      /* its stdout */
  int too_big;
  void (*done)(tpuci__ssh_capacity_t *c); /* after an asynchronous check */
  void *data;
};
/* Whether ssh's last line says the worker was not there to connect to
 * (refused, timed out, no route): no capacity, not a broken login. */
int tpuci__ssh_connect_failed(const char *line);
/* After a failed attempt: whether hs's workers were taken away, from its
 * describe command (run in `dir`; 1: started, c->done follows) or its
 * gcloud file read again (0: c is filled now). */
int tpuci__ssh_capacity_check(tpuci__ssh_capacity_t *c, uv_loop_t *loop, const tpuci__hostset_t *hs,
                              const char *dir);
void tpuci__ssh_capacity_free(tpuci__ssh_capacity_t *c);

/* attempt.c: the attempt core's operations (runtime/unit/unit.h). */
typedef struct tpuci__ssh_rt_s tpuci__ssh_rt_t;
struct tpuci__ssh_rt_s {
  tpuci__runtime_t rt;
  uv_loop_t *loop;
  tpuci__unit_list_t atts;
  char *control_dir; /* ssh's control sockets, made here (0700) */
  const tpuci__plan_t *plan;
  /* prepare's first connections, and closing's `ssh -O exit`s. */
  tpuci__sshproc_t *procs;
  size_t nprocs;
  size_t procs_open; /* not done yet */
  size_t *proc_hostset, *proc_host;
  unsigned char *proc_docker; /* the worker runs containers */
  size_t ntargets;            /* workers prepare reached (or tried) */
  void (*prepare_cb)(tpuci__runtime_t *rt, int status);
  int aborted;
  int closing;
  void (*close_cb)(tpuci__runtime_t *rt);
};
extern const tpuci__unit_ops_t tpuci__ssh_ops;

/* client.c: the control socket template of the runtime's connections.
 * New. */
char *tpuci__ssh_control_path(const tpuci__ssh_rt_t *r);

#endif /* TPUCI_RUNTIME_SSH_H */
