/* A gang's start barrier in its containers, for both engine drivers: the
 * wait step each host of a gang runs before the job's command, and the
 * lines it prints on its way. A host's container starts as soon as the
 * engine gets to it, and its peers' names resolve only once their
 * containers are up (docker's and podman's DNS, a swarm's overlay
 * network), so a job that looks its peers up once at start could miss
 * one. The wait step, a POSIX `sh` script (gate.sh, embedded at build
 * time without its comment lines; sh -c SCRIPT tpuci-gang ARGV),
 * looks every host's name up (getent, else nslookup, else python3) until
 * all resolve, then runs the job's command as its child (its exit code;
 * SIGTERM passed on), and once it ended stays, idle, until tpuci's end
 * name resolves: a host's name goes when its container does, and a peer
 * may still look it up. Nothing is added to the output but lines that
 * start with the attempt's key, which the driver's output filter
 * (output.h) takes out:
 *
 *   KEY gang wait worker-1 worker-3   the names that do not resolve yet
 *                                      (printed when that set changes)
 *   KEY gang none                     no tool to look names up with: the
 *                                      command starts at once
 *   KEY gang ready                    every name resolves; it waits for
 *                                      the go: until tpuci's go name
 *                                      (tpuci__gate_name) resolves too,
 *                                      which the driver makes exist once
 *                                      every host is ready (a host whose
 *                                      peers resolve cannot start at once:
 *                                      its job could end, and its name go,
 *                                      before a slower peer saw it)
 *   KEY gang up                       the job starts
 *   KEY gang done 0                   the job's command ended with 0 or
 *                                      an exit that lets its peers run on
 *                                      (pytest's 1 and 5); the
 *                                      host waits, idle, until tpuci's
 *                                      end name (tpuci__gate_name)
 *                                      resolves, which the driver makes
 *                                      exist once every host said so or
 *                                      ended, then exits with that status.
 *                                      A SIGTERM ends the wait at once,
 *                                      and one that came while the
 *                                      command ran skips it: tpuci stops
 *                                      the gang
 *
 * Any other status (a failure that stops the gang: an exit, an OOM kill,
 * a signal) ends the host at once, as does a command that a SIGTERM
 * reached: the gang is being stopped. Without a lookup tool ("gang
 * none"), and on podman, whose driver asks for no end step (netavark 1.4
 * stalls on the end's network join: docker.md), the command is exec'd:
 * the host's name goes when its command ends.
 *
 * The deadline is the attempt core's (unit.h, TPUCI__UNIT_GATE). Pure,
 * but for the key's randomness and tpuci__gate_line's message. */
#ifndef TPUCI_ENGINE_GATE_H
#define TPUCI_ENGINE_GATE_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/engine/gang.h"
#include "runtime/runtime.h"
#include "base/util.h"

/* The first word of every line tpuci's own steps print in a container of
 * an attempt: "#tpuci-" and 8 random hex digits. New string. */
char *tpuci__ctl_key(void);

/* Whether `line` (len bytes, no newline) is one of the attempt's own
 * (starts with `key` and a space); *rest is what follows the space. */
int tpuci__ctl_line(const char *key, const char *line, size_t len, const char **rest,
                    size_t *rest_len);

/* The command of host m->host of a gang of m->nhosts, whose lines start
 * with m->gate_key: the wait step for the names worker-0 ..
 * worker-<nhosts-1> and the go, then `argv`, then, with m->gate_end, the
 * end step for a status of 0 or one of `peer_exits` (bit n: exit n lets
 * the peers run on, runtime.h); any other status stops the gang, and
 * the host exits at once (appended to out). Without the end step
 * (podman: docker.md) the command is exec'd, as with no lookup tool:
 * the host's name goes when its command ends. */
void tpuci__gate_argv(const tpuci__gang_member_t *m, uint32_t peer_exits, const tpuci__strv_t *argv,
                      tpuci__strv_t *out);

/* What a line of the wait step says (after the key and its space). */
typedef enum {
  TPUCI__SAY_OTHER = 0, /* not the wait step's */
  TPUCI__SAY_WAIT,      /* *names: the names that do not resolve yet */
  TPUCI__SAY_NONE,      /* it cannot look names up */
  TPUCI__SAY_UP,        /* the job starts */
  TPUCI__SAY_READY,     /* every name resolves: waiting for the go */
  TPUCI__SAY_DONE       /* *status: the job's command ended */
} tpuci__gate_say_t;

/* The two names tpuci makes exist on a gang's network for its hosts'
 * wait steps: the go (they start their commands) and the end (they
 * exit). */
typedef enum { TPUCI__GATE_GO = 0, TPUCI__GATE_END } tpuci__gate_sign_t;

/* The name of a gang's go or end on its network ("tpuci-go-<hex of
 * key>", "tpuci-end-<hex of key>"). New string. */
char *tpuci__gate_name(const char *key, tpuci__gate_sign_t sign);
/* Appends the go's command to argv: a shell that sleeps until it is
 * removed (what every image with /bin/sh can run). */
void tpuci__gate_go_argv(tpuci__strv_t *argv);

/* *names (for WAIT) is a new string: "worker-1 worker-3"; *status (for
 * DONE) the command's exit status, else 0. */
tpuci__gate_say_t tpuci__gate_parse(const char *rest, size_t len, char **names, long *status);
/* A line of tpuci's own (after the key) from host `host` of attempt `a`:
 * where its wait step is (gang.h: TPUCI__GATE_WAITING with *waiting the
 * names it waits for, a new string; _READY; _STARTED; _DONE with
 * *status), or TPUCI__GATE_SILENT when the line says no such thing. A
 * wait step that cannot look names up is told to the user here. */
tpuci__gate_state_t tpuci__gate_line(tpuci__attempt_t *a, const char *host, const char *rest,
                                     size_t len, char **waiting, long *status);

#endif /* TPUCI_ENGINE_GATE_H */
