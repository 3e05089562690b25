/* The system's OpenSSH client as tpuci runs it, for the two places that
 * reach other machines with it: the ssh runtime (runtime/ssh/, a gang's
 * hosts on a slice's workers) and the HTTP client's ssh tunnels
 * (runtime/http/sshdial.c: an ssh:// engine's `ssh HOST docker system
 * dial-stdio`). Which
 * client, the options every connection gets, and what ssh's last word on
 * stderr means for the user; the private folder of the control sockets. */
#ifndef TPUCI_RUNTIME_SSHCMD_H
#define TPUCI_RUNTIME_SSHCMD_H

#include <uv.h>

#include "base/util.h"

/* How long ssh tries to connect before it gives up (ConnectTimeout). */
#define TPUCI__SSH_CONNECT_TIMEOUT_S 10

/* The ssh client: $TPUCI_SSH when set (tests), else "ssh" on PATH. */
const char *tpuci__ssh_client(void);

/* Appends the client and the options every connection gets: `-F config`
 * (may be NULL: ssh's own files), BatchMode=yes (never a prompt),
 * LogLevel=ERROR, ConnectTimeout and, with control_path (may be NULL),
 * ControlMaster=auto, that ControlPath and ControlPersist=30s (a shared
 * connection: later sessions cost no handshake). Then `-p port` (when
 * port > 0) and `-l user` (when not NULL). The destination follows. */
void tpuci__ssh_base_argv(tpuci__strv_t *out, const char *config, const char *control_path,
                          const char *user, int port);

/* Makes a private folder (0700: ssh refuses a control socket others
 * could reach) for the control sockets, /tmp/tpuci-ssh-<pid>-XXXXXX
 * (this process's pid): 0 and *dir (new), or TPUCI_EENGINE with err
 * saying so, after `who`. */
#define TPUCI__SSH_CONTROL_PREFIX "/tmp/tpuci-ssh-"
int tpuci__ssh_control_dir_new(char **dir, const char *who, tpuci__err_t *err);
/* Removes it, and any socket a master left in it. */
void tpuci__ssh_control_dir_remove(const char *dir);
/* `tpuci gc`: removes (unless dry_run) the control folders a killed
 * tpuci left here: this user's /tmp/tpuci-ssh-<pid>-XXXXXX folders
 * whose process is gone; a line each in report ("removed ssh: control
 * folder /tmp/tpuci-ssh-... (its tpuci, pid N, is gone)"). Returns how
 * many. */
int tpuci__ssh_control_dirs_gc(int dry_run, tpuci__buf_t *report);

/* Spawns argv (ssh, or sh around it) on `loop` with `stdio` (n entries),
 * in a session of its own: the terminal's Ctrl-C is tpuci's to handle
 * (with the grace, and the cleanup that may need ssh), not ssh's to die
 * of. uv_spawn's return; proc is to be closed either way (libuv's rule). */
int tpuci__ssh_spawn(uv_loop_t *loop, uv_process_t *proc, const tpuci__strv_t *argv,
                     uv_stdio_container_t *stdio, int n, uv_exit_cb exit_cb);

/* The last non-empty line of s[0..n), trimmed; NULL when none: what ssh
 * said last on stderr. New. */
char *tpuci__ssh_last_line(const char *s, size_t n);

/* What to do about ssh's failure: `status` is its exit status (255: ssh's
 * own failure; else the remote command's; -1: killed), `last` its last
 * line on stderr (may be NULL); `docker` when the remote command was
 * docker's (`docker system dial-stdio`, `docker version`). A static
 * string, never NULL: "ssh refused the login: ...", "ssh does not trust
 * the host's key ...", "docker failed there: ...". */
const char *tpuci__ssh_advice(int status, const char *last, int docker);

#endif /* TPUCI_RUNTIME_SSHCMD_H */
