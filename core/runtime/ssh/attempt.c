/* The ssh runtime's attempt: one ssh session per host of the job's
 * topology, host i on worker i of its `hosts` declaration. The phases,
 * the gang's stop, the verdict and the cleanup are the attempt core's
 * (runtime/unit/unit.h); this file is its operations:
 *
 *   output   spawns the host's session (remote.c's script); the host is
 *            ready once the worker printed its ready line (connected,
 *            its folder made); a session that ends before is infra,
 *            named by ssh's last word
 *   start    "go" on the session's stdin: every host starts only once
 *            all are connected (the gang's start barrier)
 *   stop     a signal name on stdin, which the worker sends to the job's
 *            process group; SIGKILL also closes stdin and, if ssh has not
 *            ended 10 s later, kills the client here
 *   halt     closes stdin: a host that did not start never does
 *   exit     the session's exit status is the job's; 255 (ssh's own
 *            failure, or a job's exit 255) is looked up in the worker's
 *            rc file over a new connection: none there, the connection
 *            dropped, and the attempt is infra
 *   remove   the worker's results/ copied back (tar over ssh), its
 *            folder removed */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <errno.h>
#include <unistd.h>

#include "runtime/engine/container.h"
#include "runtime/ssh/ssh.h"

/* After a SIGKILL, how long ssh may take to end before it is killed. */
#define TPUCI__SSH_KILL_WAIT_MS 10000
/* A host told not to start, still connecting: up to ssh's own
 * ConnectTimeout and a login. */
#define TPUCI__SSH_HALT_WAIT_MS 30000
/* The stdout kept while looking for the ready line. */
#define TPUCI__SSH_PRE_MAX 65536

/* Where an ssh host's session is (the core's u.state says whether the
 * job started and how it ended), moved only by tpuci__ssh_set:
 *
 *   IDLE -> CONNECTING (output: the session spawned)
 *   CONNECTING -> UNREACHED (it ended before the worker's ready line:
 *   nothing was made there), or -> CONNECTED (the ready line came: the
 *   worker's folder exists; "go" on stdin starts the job)
 *   CONNECTED -> ENDED (the session ended) <-> LOOKUP (its exit 255
 *   looked up in the worker's rc file over a new connection)
 *   ENDED -> CLEANING (results back, the folder removed) -> CLEANED */
typedef enum {
  TPUCI__SSH_IDLE = 0,
  TPUCI__SSH_CONNECTING,
  TPUCI__SSH_UNREACHED,
  TPUCI__SSH_CONNECTED,
  TPUCI__SSH_ENDED,
  TPUCI__SSH_LOOKUP,
  TPUCI__SSH_CLEANING,
  TPUCI__SSH_CLEANED
} tpuci__ssh_state_t;

/* Whether the worker's script ran: its folder was made (CONNECTED or
 * later). */
#define TPUCI__SSH_REACHED(s) ((s)->state >= TPUCI__SSH_CONNECTED)

typedef struct {
  tpuci__unit_t u;
  tpuci__ssh_state_t state;
  tpuci__sshproc_t main;   /* the session (CONNECTING, CONNECTED) */
  tpuci__sshproc_t side;   /* the rc lookup, the cleanup */
  tpuci__strv_t dest;      /* ssh ... destination */
  char *remote;            /* the session's command */
  char *dir;               /* the host's folder on the worker */
  char *target;            /* "root@10.0.0.2:2222", for messages */
  char *results;           /* the host's results folder here, or NULL */
  char *ctr;               /* a job with an image: its container's name */
  tpuci__buf_t pre;        /* stdout before the ready line */
  tpuci__buf_t rc_out;     /* the rc lookup's answer */
  tpuci__lines_t lines[2]; /* a gang host's, prefixed */
  int log_fd;              /* a gang host's own log, or -1 */
  char *log_path;
} tpuci__ssh_unit_t;

typedef struct {
  tpuci__unit_att_t ua;
  tpuci__ssh_rt_t *r;
  const tpuci__hostset_t *hs;
  char nonce[40];
  tpuci__ssh_capacity_t cap; /* the machines' failures */
} tpuci__ssh_att_t;

#define TPUCI__SSH_ATT(u) ((tpuci__ssh_att_t *) (u)->att)

static const char *const tpuci__ssh_names[] = {"IDLE",  "CONNECTING", "UNREACHED", "CONNECTED",
                                               "ENDED", "LOOKUP",     "CLEANING",  "CLEANED"};
static const unsigned tpuci__ssh_moves[] = {
    [TPUCI__SSH_IDLE] = TPUCI__MOVE(TPUCI__SSH_CONNECTING),
    [TPUCI__SSH_CONNECTING] = TPUCI__MOVE(TPUCI__SSH_UNREACHED) | TPUCI__MOVE(TPUCI__SSH_CONNECTED),
    [TPUCI__SSH_UNREACHED] = 0,
    [TPUCI__SSH_CONNECTED] = TPUCI__MOVE(TPUCI__SSH_ENDED),
    [TPUCI__SSH_ENDED] = TPUCI__MOVE(TPUCI__SSH_LOOKUP) | TPUCI__MOVE(TPUCI__SSH_CLEANING),
    [TPUCI__SSH_LOOKUP] = TPUCI__MOVE(TPUCI__SSH_ENDED),
    [TPUCI__SSH_CLEANING] = TPUCI__MOVE(TPUCI__SSH_CLEANED),
    [TPUCI__SSH_CLEANED] = 0,
};

static const tpuci__unit_machine_t tpuci__ssh_machine = {
    .what = "ssh session", .names = tpuci__ssh_names, .moves = tpuci__ssh_moves};

static void tpuci__ssh_set(tpuci__ssh_unit_t *s, tpuci__ssh_state_t to) {
  tpuci__unit_move(s->u.att, &tpuci__ssh_machine, s->u.name, (int) s->state, (int) to);
  s->state = to;
}

static const char *tpuci__ssh_who(const tpuci__ssh_unit_t *s) {
  return s->u.host ? s->u.host : "worker-0";
}

static void tpuci__ssh_infra(tpuci__ssh_unit_t *s, const char *what, char *why) {
  tpuci__unit_infra(s->u.att, tpuci__printf("ssh: %s (%s, hosts '%s'): %s%s%s", tpuci__ssh_who(s),
                                            s->target, TPUCI__SSH_ATT(&s->u)->hs->name, what,
                                            why ? ": " : "", why ? why : ""));
  free(why);
}

/* Output. */

static void tpuci__ssh_log_write(tpuci__ssh_unit_t *s, const char *buf, size_t n) {
  int r;
  if (s->log_fd < 0 || (r = tpuci__write_all(s->log_fd, buf, n)) == 0) return;
  /* Its lines are still in the attempt's log. */
  tpuci__attempt_write_error(s->u.att->a, s->log_path, r);
  close(s->log_fd);
  s->log_fd = -1;
}

typedef struct {
  tpuci__attempt_t *a;
  int stream;
} tpuci__ssh_sink_t;

static void tpuci__ssh_on_lines(void *p, const char *buf, size_t len) {
  tpuci__ssh_sink_t *k = p;
  tpuci__attempt_output(k->a, k->stream, buf, len);
}

/* A chunk of the job's output: a gang host's into its own log and, line
 * by line with its prefix, the attempt's; a lone host's as it is. */
static void tpuci__ssh_emit(tpuci__ssh_unit_t *s, int stream, const char *buf, size_t n) {
  tpuci__ssh_sink_t k = {s->u.att->a, stream};
  if (n == 0) return;
  if (s->u.host == NULL) {
    tpuci__attempt_output(s->u.att->a, stream, buf, n);
    return;
  }
  tpuci__ssh_log_write(s, buf, n);
  tpuci__lines_feed(&s->lines[stream - 1], buf, n, tpuci__ssh_on_lines, &k);
}

static void tpuci__ssh_flush(tpuci__ssh_unit_t *s) {
  int i;
  if (s->u.host == NULL) return;
  for (i = 0; i < 2; i++) {
    tpuci__ssh_sink_t k = {s->u.att->a, i + 1};
    tpuci__lines_flush(&s->lines[i], tpuci__ssh_on_lines, &k);
  }
}

/* stdout before the ready line: what the login printed passes on; the
 * line itself makes the host ready. */
static void tpuci__ssh_pre(tpuci__ssh_unit_t *s, const char *buf, size_t n) {
  tpuci__ssh_att_t *att = TPUCI__SSH_ATT(&s->u);
  char line[96];
  const char *at;
  size_t len = (size_t) snprintf(line, sizeof(line), TPUCI__SSH_READY " %s\n", att->nonce);

  tpuci__buf_add(&s->pre, buf, n);
  tpuci__buf_add(&s->pre, "", 0);
  at = s->pre.data ? strstr(s->pre.data, line) : NULL;
  if (at == NULL) {
    /* Keep what may be the start of the line; pass the rest on. */
    if (s->pre.len > TPUCI__SSH_PRE_MAX) {
      size_t keep = len - 1;
      tpuci__ssh_emit(s, 1, s->pre.data, s->pre.len - keep);
      memmove(s->pre.data, s->pre.data + s->pre.len - keep, keep);
      s->pre.len = keep;
    }
    return;
  }
  {
    size_t before = (size_t) (at - s->pre.data), after = before + len;
    tpuci__ssh_emit(s, 1, s->pre.data, before);
    tpuci__ssh_set(s, TPUCI__SSH_CONNECTED);
    tpuci__unit_created(&s->u);
    tpuci__unit_ready(&s->u);
    tpuci__ssh_emit(s, 1, s->pre.data + after, s->pre.len - after);
    tpuci__buf_free(&s->pre);
    tpuci__buf_init(&s->pre);
  }
}

static void tpuci__ssh_on_output(tpuci__sshproc_t *p, int stream, const char *buf, size_t n) {
  tpuci__ssh_unit_t *s = p->data;
  if (stream == 1 && s->state == TPUCI__SSH_CONNECTING) tpuci__ssh_pre(s, buf, n);
  else tpuci__ssh_emit(s, stream, buf, n);
}

/* The end of a session. */

static void tpuci__ssh_on_rc(tpuci__sshproc_t *p) {
  tpuci__ssh_unit_t *s = p->data;
  tpuci__unit_att_t *ua = s->u.att;
  char *end = NULL;
  long rc = -1;
  int nostart = 0;
  tpuci__ssh_set(s, TPUCI__SSH_ENDED);
  tpuci__unit_req_end(ua);
  if (p->status == 0 && s->rc_out.len > 0) {
    tpuci__buf_add(&s->rc_out, "", 0);
    nostart = strncmp(s->rc_out.data, TPUCI__SSH_RC_NOSTART "\n",
                      sizeof(TPUCI__SSH_RC_NOSTART "\n") - 1) == 0;
    rc = strtol(s->rc_out.data, &end, 10);
    /* A container's "137 oom": the kernel killed it for memory. */
    if (end != s->rc_out.data &&
        strncmp(end, " " TPUCI__SSH_RC_OOM "\n", sizeof(" " TPUCI__SSH_RC_OOM "\n") - 1) == 0) {
      s->u.oom = 1;
      end += sizeof(" " TPUCI__SSH_RC_OOM) - 1;
    }
    if (end == s->rc_out.data || (*end != '\n' && *end != '\0')) rc = -1;
  }
  if (nostart) {
    /* docker refused to start the container: its words are the last
     * line of the job's stderr. */
    tpuci__ssh_infra(s, "docker could not start the container there",
                     tpuci__sshproc_last_line(&s->main));
    tpuci__unit_ended_infra(&s->u);
  } else if (rc >= 0) {
    /* The job itself exited 255. */
    tpuci__unit_exited(&s->u, rc);
  } else {
    tpuci__ssh_infra(s, "the connection dropped while the job ran",
                     tpuci__sshproc_last_line(&s->main));
    tpuci__unit_ended_infra(&s->u);
  }
  tpuci__buf_free(&s->side.tail);
  tpuci__unit_step(ua);
}

static void tpuci__ssh_rc_output(tpuci__sshproc_t *p, int stream, const char *buf, size_t n) {
  tpuci__ssh_unit_t *s = p->data;
  if (stream == 1 && s->rc_out.len < 64) tpuci__buf_add(&s->rc_out, buf, n);
}

/* Starts a side process of the unit (the rc lookup, the cleanup). */
static void tpuci__ssh_side(tpuci__ssh_unit_t *s, const tpuci__strv_t *argv,
                            void (*out)(tpuci__sshproc_t *, int, const char *, size_t),
                            void (*done)(tpuci__sshproc_t *)) {
  memset(&s->side, 0, sizeof(s->side));
  s->side.data = s;
  s->side.on_output = out;
  s->side.on_done = done;
  tpuci__unit_req_begin(s->u.att);
  tpuci__sshproc_spawn(&s->side, TPUCI__SSH_ATT(&s->u)->r->loop, argv, 0);
}

static void tpuci__ssh_lookup_rc(tpuci__ssh_unit_t *s) {
  tpuci__strv_t argv = {0};
  tpuci__strv_copy(&argv, &s->dest);
  tpuci__strv_take(&argv, tpuci__ssh_rc_command(s->dir));
  tpuci__ssh_set(s, TPUCI__SSH_LOOKUP);
  tpuci__ssh_side(s, &argv, tpuci__ssh_rc_output, tpuci__ssh_on_rc);
  tpuci__strv_free(&argv);
}

static void tpuci__ssh_on_main_done(tpuci__sshproc_t *p) {
  tpuci__ssh_unit_t *s = p->data;
  tpuci__unit_att_t *ua = s->u.att;
  int reached = s->state == TPUCI__SSH_CONNECTED;
  tpuci__ssh_set(s, reached ? TPUCI__SSH_ENDED : TPUCI__SSH_UNREACHED);
  tpuci__unit_req_end(ua);
  if (!reached && s->pre.len > 0) tpuci__ssh_emit(s, 1, s->pre.data, s->pre.len);
  tpuci__ssh_flush(s);
  if (!reached) {
    /* Never reached the worker's script: unreachable, refused, a bad
     * host key, a broken login. */
    if (p->spawn_error)
      tpuci__ssh_infra(s, "cannot run ssh",
                       tpuci__printf("%s: %s", tpuci__ssh_client(), uv_strerror(p->spawn_error)));
    else if (!ua->stop && !ua->signalled) {
      char *last = tpuci__sshproc_last_line(p);
      tpuci__ssh_att_t *att = TPUCI__SSH_ATT(&s->u);
      /* Not there to connect to: the machines, not the login. */
      if (tpuci__ssh_connect_failed(last) && ua->infra == NULL) {
        att->cap.outcome = TPUCI_OUTCOME_NO_CAPACITY;
        tpuci__ssh_infra(s, "no capacity: the worker is not there", last);
      } else {
        tpuci__ssh_infra(s, "cannot start the job there",
                         last ? last
                              : tpuci__printf("the session ended (exit %lld) before "
                                              "the job started",
                                              (long long) p->status));
      }
    }
    tpuci__unit_ready(&s->u);
  } else if (s->u.state == TPUCI__U_STARTED) {
    if (p->killed || p->status < 0) {
      tpuci__ssh_infra(s, "ssh did not end after SIGKILL and was killed here",
                       tpuci__sshproc_last_line(p));
      tpuci__unit_ended_infra(&s->u);
    } else if (p->status == 255) {
      tpuci__ssh_lookup_rc(s);
    } else {
      tpuci__unit_exited(&s->u, (long) p->status);
    }
  }
  tpuci__unit_step(ua);
}

/* The operations. */

static void tpuci__ssh_op_create(tpuci__unit_t *u) {
  /* The worker's folder is made by the session itself. */
  (void) u;
}

static void tpuci__ssh_op_output(tpuci__unit_t *u) {
  tpuci__ssh_unit_t *s = (tpuci__ssh_unit_t *) u;
  tpuci__strv_t argv = {0};
  tpuci__strv_copy(&argv, &s->dest);
  tpuci__strv_push(&argv, s->remote);
  memset(&s->main, 0, sizeof(s->main));
  s->main.data = s;
  s->main.on_output = tpuci__ssh_on_output;
  s->main.on_done = tpuci__ssh_on_main_done;
  tpuci__ssh_set(s, TPUCI__SSH_CONNECTING);
  tpuci__unit_req_begin(u->att);
  tpuci__sshproc_spawn(&s->main, TPUCI__SSH_ATT(u)->r->loop, &argv, 1);
  tpuci__strv_free(&argv);
}

static void tpuci__ssh_op_start(tpuci__unit_t *u) {
  tpuci__ssh_unit_t *s = (tpuci__ssh_unit_t *) u;
  int r = tpuci__sshproc_write(&s->main, "go\n");
  if (r != 0) {
    tpuci__ssh_infra(s, "cannot start the job", tpuci__strdup(uv_strerror(r)));
    tpuci__unit_started(u, 0);
    return;
  }
  tpuci__unit_started(u, 1);
}

static void tpuci__ssh_op_watch(tpuci__unit_t *u) {
  /* The session's end says it (tpuci__ssh_on_main_done). */
  (void) u;
}

static void tpuci__ssh_op_stop(tpuci__unit_t *u, int signum) {
  tpuci__ssh_unit_t *s = (tpuci__ssh_unit_t *) u;
  const char *name = tpuci__ssh_signame(signum);
  char line[16];
  if (name != NULL) {
    snprintf(line, sizeof(line), "%s\n", name);
    (void) tpuci__sshproc_write(&s->main, line);
  }
  if (signum == SIGKILL || name == NULL) {
    /* The end of stdin kills the group too, also when the line above
     * could not be written. */
    tpuci__sshproc_close_stdin(&s->main);
    tpuci__sshproc_deadline(&s->main, TPUCI__SSH_KILL_WAIT_MS);
  }
}

/* The end of stdin: a host that is still connecting (or waits for "go")
 * never runs, and removes its folder itself. */
static void tpuci__ssh_op_halt(tpuci__unit_t *u) {
  tpuci__ssh_unit_t *s = (tpuci__ssh_unit_t *) u;
  if (s->state != TPUCI__SSH_CONNECTING && s->state != TPUCI__SSH_CONNECTED) return;
  tpuci__sshproc_close_stdin(&s->main);
  tpuci__sshproc_deadline(&s->main, TPUCI__SSH_HALT_WAIT_MS);
}

static void tpuci__ssh_on_cleaned(tpuci__sshproc_t *p) {
  tpuci__ssh_unit_t *s = p->data;
  tpuci__unit_att_t *ua = s->u.att;
  tpuci__ssh_set(s, TPUCI__SSH_CLEANED);
  tpuci__unit_req_end(ua);
  if (p->status != 0) {
    char *why =
        p->spawn_error ? tpuci__strdup(uv_strerror(p->spawn_error)) : tpuci__sshproc_last_line(p);
    tpuci__unit_tell(ua,
                     "ssh: %s (%s): could not %sremove %s there: %s; "
                     "remove it by hand (`rm -rf %s` on the worker)",
                     tpuci__ssh_who(s), s->target, s->results ? "copy the results back and " : "",
                     s->dir, why ? why : "failed", s->dir);
    free(why);
  }
  tpuci__buf_free(&p->tail);
  tpuci__unit_step(ua);
}

/* The cleanup: with results, `sh -c` here runs ssh into a file and tar
 * takes it apart in the host's results folder. */
static void tpuci__ssh_op_remove(tpuci__unit_t *u) {
  tpuci__ssh_unit_t *s = (tpuci__ssh_unit_t *) u;
  tpuci__strv_t argv = {0};
  if (!TPUCI__SSH_REACHED(s)) return;
  if (s->results != NULL) {
    tpuci__strv_push(&argv, "sh");
    tpuci__strv_push(&argv, "-c");
    tpuci__strv_push(&argv, "d=$1; shift; \"$@\" > \"$d/.tpuci-copy.tar\" && "
                            "tar -xf \"$d/.tpuci-copy.tar\" -C \"$d\"; rc=$?; "
                            "rm -f \"$d/.tpuci-copy.tar\"; exit $rc");
    tpuci__strv_push(&argv, "tpuci-copy");
    tpuci__strv_push(&argv, s->results);
  }
  {
    size_t i;
    for (i = 0; i < s->dest.len; i++) tpuci__strv_push(&argv, s->dest.items[i]);
  }
  tpuci__strv_take(&argv, tpuci__ssh_cleanup_command(s->dir, s->results != NULL, s->ctr));
  tpuci__ssh_set(s, TPUCI__SSH_CLEANING);
  tpuci__ssh_side(s, &argv, NULL, tpuci__ssh_on_cleaned);
  tpuci__strv_free(&argv);
}

/* Whether the attempt failed: infra, a host's non-zero exit, or stopped
 * by the scheduler (a timeout: a preempted worker hangs its peers). */
static int tpuci__ssh_failed(tpuci__unit_att_t *ua) {
  size_t i;
  if (ua->infra != NULL || ua->signalled) return 1;
  for (i = 0; i < ua->nunits; i++) {
    const tpuci__unit_t *u = tpuci__unit_at(ua, i);
    if (u->state == TPUCI__U_EXITED && u->status != 0) return 1;
  }
  return 0;
}

static void tpuci__ssh_capacity_told(tpuci__ssh_att_t *att) {
  if (att->cap.note != NULL) tpuci__unit_tell(&att->ua, "ssh: %s", att->cap.note);
}

static void tpuci__ssh_on_capacity(tpuci__ssh_capacity_t *c) {
  tpuci__ssh_att_t *att = c->data;
  tpuci__ssh_capacity_told(att);
  tpuci__unit_req_end(&att->ua);
  tpuci__unit_step(&att->ua);
}

/* GONE: after a failed attempt whose workers all connected, whether one
 * was taken away meanwhile (capacity.c). */
static int tpuci__ssh_op_gone(tpuci__unit_att_t *ua, int first) {
  tpuci__ssh_att_t *att = (tpuci__ssh_att_t *) ua;
  if (!first || att->cap.outcome != 0 || !tpuci__ssh_failed(ua) ||
      (att->hs->describe == NULL && att->hs->gcloud == NULL))
    return 1;
  att->cap.data = att;
  att->cap.done = tpuci__ssh_on_capacity;
  tpuci__unit_req_begin(ua);
  if (tpuci__ssh_capacity_check(&att->cap, att->r->loop, att->hs, att->r->plan->spec_dir)) return 1;
  tpuci__ssh_capacity_told(att);
  tpuci__unit_req_end(ua);
  return 1;
}

/* A capacity outcome wins over how the hosts ended, and says why. */
static void tpuci__ssh_op_outcome(tpuci__unit_att_t *ua, tpuci__gang_verdict_t *v,
                                  tpuci__exit_t *ex) {
  tpuci__ssh_att_t *att = (tpuci__ssh_att_t *) ua;
  if (att->cap.outcome == 0) return;
  ex->capacity = att->cap.outcome;
  if (att->cap.why != NULL) {
    char *cause = tpuci__printf("preempted: %s%s%s", att->cap.why, ex->cause ? "; " : "",
                                ex->cause ? ex->cause : "");
    free(v->cause);
    v->cause = cause;
    ex->cause = cause;
  }
}

static void tpuci__ssh_op_att_release(tpuci__unit_att_t *ua) {
  tpuci__ssh_capacity_free(&((tpuci__ssh_att_t *) ua)->cap);
}

static char *tpuci__ssh_op_keep(tpuci__unit_att_t *ua, tpuci__unit_t *u) {
  tpuci__ssh_unit_t *s = (tpuci__ssh_unit_t *) u;
  (void) ua;
  if (u == NULL || !TPUCI__SSH_REACHED(s)) return NULL;
  if (s->ctr != NULL)
    return tpuci__printf("kept %s's container %s and folder %s on %s: see its output with "
                         "`docker logs %s` there; `tpuci gc SPEC` (or `docker rm -f %s; "
                         "rm -rf %s` there) removes them",
                         tpuci__ssh_who(s), s->ctr, s->dir, s->target, s->ctr, s->ctr, s->dir);
  return tpuci__printf("kept %s's folder %s on %s (its results/, pgid and rc); "
                       "`tpuci gc SPEC` (or `rm -rf %s` there) removes it",
                       tpuci__ssh_who(s), s->dir, s->target, s->dir);
}

static void tpuci__ssh_op_release(tpuci__unit_t *u) {
  tpuci__ssh_unit_t *s = (tpuci__ssh_unit_t *) u;
  tpuci__strv_free(&s->dest);
  free(s->remote);
  free(s->dir);
  free(s->target);
  free(s->results);
  free(s->ctr);
  free(s->log_path);
  tpuci__buf_free(&s->pre);
  tpuci__buf_free(&s->rc_out);
  tpuci__buf_free(&s->main.tail);
  tpuci__buf_free(&s->side.tail);
  tpuci__lines_free(&s->lines[0]);
  tpuci__lines_free(&s->lines[1]);
  if (s->log_fd >= 0) close(s->log_fd);
}

/* init. */

/* s with every `from` replaced by `to`. New. */
static char *tpuci__ssh_replace(const char *s, const char *from, const char *to) {
  tpuci__buf_t b;
  size_t n = strlen(from);
  const char *at;
  tpuci__buf_init(&b);
  while (n > 0 && (at = strstr(s, from)) != NULL) {
    tpuci__buf_add(&b, s, (size_t) (at - s));
    tpuci__buf_adds(&b, to);
    s = at + n;
  }
  tpuci__buf_adds(&b, s);
  return tpuci__buf_steal(&b);
}

/* The job's paths into its results folder (TPUCI__RESULTS_MOUNT, the
 * driver's results_mount) point at the host's folder on the worker. */
static void tpuci__ssh_rewrite(tpuci__strv_t *v, const char *from, const char *to) {
  size_t i;
  for (i = 0; i < v->len; i++) {
    char *n;
    if (strstr(v->items[i], from) == NULL) continue;
    n = tpuci__ssh_replace(v->items[i], from, to);
    free(v->items[i]);
    v->items[i] = n;
  }
}

/* A job with an image: host s's container on its worker, named and
 * labelled as the docker runtime's are (so `tpuci gc` over the worker's
 * engine knows them). Returns the script's lines that create it. */
static char *tpuci__ssh_unit_ctr(tpuci__ssh_att_t *att, tpuci__ssh_unit_t *s,
                                 const tpuci__strv_t *env) {
  tpuci__attempt_t *a = att->ua.a;
  const tpuci__instance_t *inst = a->inst;
  const tpuci__image_t *img = &a->plan->images[inst->image];
  tpuci__kvlist_t labels = {0};
  tpuci__ssh_ctr_t c;
  char *text;

  s->ctr = att->ua.gang ? tpuci__ctr_host_name(a->run_id, inst->name, a->number, s->u.index)
                        : tpuci__ctr_name(a->run_id, inst->name, a->number);
  tpuci__ctr_labels(&labels, a->run_id, inst->job, inst->name, a->number, a->keep_on_failure);
  memset(&c, 0, sizeof(c));
  c.name = s->ctr;
  c.image = img->ref;
  c.pull = img->pull;
  c.labels = &labels;
  c.env = env;
  c.workdir = inst->workdir;
  c.results = a->results_dir != NULL ? a->results_path : NULL;
  c.mounts = inst->mounts;
  c.nmounts = inst->nmounts;
  c.cpus = inst->cpus;
  c.memory_bytes = inst->memory_bytes;
  c.ctr = &inst->ctr;
  c.argv = a->argv;
  text = tpuci__ssh_ctr_create(&c);
  tpuci__kv_free(&labels);
  return text;
}

static int tpuci__ssh_unit_init(tpuci__ssh_att_t *att, tpuci__ssh_unit_t *s,
                                const tpuci__slice_t *slice, const char *const *addrs,
                                const char *control) {
  tpuci__attempt_t *a = att->ua.a;
  tpuci__runtime_t *rt = &att->r->rt;
  tpuci__strv_t env = {0}, argv = {0};
  tpuci__ssh_remote_t rem;
  char prefix[64];
  char *remote_results, *create = NULL;
  int i = s->u.index, rc;

  s->target = tpuci__ssh_host_text(&att->hs->hosts[i]);
  s->dir = tpuci__printf("/tmp/tpuci-%s/i%zu.a%d.h%d", a->run_id, a->index, a->number, i);
  s->u.name = tpuci__printf("%s on %s", tpuci__ssh_who(s), s->target);
  snprintf(prefix, sizeof(prefix), "[%s] ", s->u.host ? s->u.host : "");
  tpuci__lines_init(&s->lines[0], s->u.host ? prefix : NULL);
  tpuci__lines_init(&s->lines[1], s->u.host ? prefix : NULL);
  /* No terminal: the output stays as the job wrote it. */
  {
    static const char *const opts[] = {"-T", NULL};
    tpuci__ssh_argv(att->hs, (size_t) i, control, opts, &s->dest);
  }

  rc = tpuci__attempt_host_env_named(a, slice, i, slice && att->ua.gang ? addrs : NULL, &env,
                                     &rt->err);
  if (rc != 0) return rc;
  if (a->results_dir != NULL) {
    s->results = s->u.host ? tpuci__printf("%s/%s", a->results_dir, s->u.host)
                           : tpuci__strdup(a->results_dir);
    rc = tpuci__mkdir_p(s->results, 0777);
    if (rc != 0) {
      tpuci__strv_free(&env);
      return tpuci__err_set(&rt->err, TPUCI_EUSAGE, "cannot create the results folder %s: %s",
                            s->results, uv_strerror(rc));
    }
  }
  tpuci__strv_copy(&argv, a->argv);
  memset(&rem, 0, sizeof(rem));
  if (a->inst->image >= 0) {
    /* In a container: the results folder is mounted where the job's
     * paths say. */
    rem.create = create = tpuci__ssh_unit_ctr(att, s, &env);
    rem.ctr = s->ctr;
  } else if (a->results_path != NULL) {
    remote_results = tpuci__printf("%s/results", s->dir);
    tpuci__ssh_rewrite(&env, a->results_path, remote_results);
    tpuci__ssh_rewrite(&argv, a->results_path, remote_results);
    free(remote_results);
  }
  rem.dir = s->dir;
  rem.nonce = att->nonce;
  rem.workdir = a->inst->workdir;
  rem.env = &env;
  rem.argv = &argv;
  s->remote = tpuci__ssh_remote_command(&rem);
  free(create);
  tpuci__strv_free(&env);
  tpuci__strv_free(&argv);
  if (s->u.host != NULL) {
    s->log_path = tpuci__printf("%s/attempt-%d." TPUCI__GANG_HOST_FMT ".log", a->dir, a->number, i);
    if (tpuci__mkdir_p(a->dir, 0755) == 0)
      s->log_fd = open(s->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_APPEND, 0644);
    if (s->log_fd < 0) tpuci__attempt_write_error(a, s->log_path, TPUCI__ERRNO);
  }
  return 0;
}

static int tpuci__ssh_op_init(tpuci__unit_att_t *ua, tpuci__runtime_t *rt,
                              const tpuci__slice_t *slice) {
  tpuci__ssh_att_t *att = (tpuci__ssh_att_t *) ua;
  tpuci__attempt_t *a = ua->a;
  const tpuci__plan_t *plan = a->plan;
  const char **addrs;
  char *control;
  size_t i;
  int rc = 0;

  att->r = (tpuci__ssh_rt_t *) rt;
  for (i = 0; i < ua->nunits; i++) ((tpuci__ssh_unit_t *) tpuci__unit_at(ua, i))->log_fd = -1;
  if (a->inst->hostset < 0 || (size_t) a->inst->hostset >= plan->nhostsets)
    return tpuci__err_set(&rt->err, TPUCI_EUSAGE, "%s: job '%s': runtime 'ssh' has no hosts",
                          a->inst->where, a->inst->job);
  att->hs = &plan->hostsets[a->inst->hostset];
  if (ua->nunits > att->hs->nhosts)
    return tpuci__err_set(&rt->err, TPUCI_EUSAGE,
                          "%s: job '%s': %zu hosts, but hosts '%s' (%s) has %zu", a->inst->where,
                          a->inst->job, ua->nunits, att->hs->name, att->hs->where, att->hs->nhosts);
  {
    /* Tells the worker's ready line from anything a login prints. */
    uv_timeval64_t tv;
    uv_gettimeofday(&tv);
    snprintf(att->nonce, sizeof(att->nonce), "%lx.%lx.%zu.%d", (unsigned long) getpid(),
             (unsigned long) tv.tv_usec ^ (unsigned long) tv.tv_sec, a->index, a->number);
  }
  addrs = tpuci__calloc(att->hs->nhosts + 1, sizeof(*addrs));
  for (i = 0; i < att->hs->nhosts; i++) addrs[i] = att->hs->hosts[i].host;
  control = tpuci__ssh_control_path(att->r);
  for (i = 0; i < ua->nunits && rc == 0; i++)
    rc = tpuci__ssh_unit_init(att, (tpuci__ssh_unit_t *) tpuci__unit_at(ua, i), slice, addrs,
                              control);
  free(control);
  free(addrs);
  return rc;
}

const tpuci__unit_ops_t tpuci__ssh_ops = {
    .kind = "process",
    .flags = TPUCI__UNIT_NO_IMAGE,
    .att_size = sizeof(tpuci__ssh_att_t),
    .unit_size = sizeof(tpuci__ssh_unit_t),
    .init = tpuci__ssh_op_init,
    .create = tpuci__ssh_op_create,
    .output = tpuci__ssh_op_output,
    .start = tpuci__ssh_op_start,
    .watch = tpuci__ssh_op_watch,
    .stop = tpuci__ssh_op_stop,
    .halt = tpuci__ssh_op_halt,
    .remove = tpuci__ssh_op_remove,
    .keep = tpuci__ssh_op_keep,
    .gone = tpuci__ssh_op_gone,
    .outcome = tpuci__ssh_op_outcome,
    .release = tpuci__ssh_op_release,
    .att_release = tpuci__ssh_op_att_release,
};
