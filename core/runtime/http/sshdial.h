/* Connections to a server through ssh (target.h's ssh_host), the Docker
 * CLI's way for an ssh:// engine: each connection is a child `ssh [-F
 * config] ... [-p port] [-l user] -- host COMMAND...` (target.h's
 * ssh_command: `docker system dial-stdio` for an engine), whose stdin
 * and stdout are the socket the dialer accepted on a local socket of its
 * own, where curl connected (no bytes are relayed: ssh reads and writes
 * curl's connection itself). All connections of a dialer
 * share one ssh connection (ControlMaster, a control socket in a private
 * folder), so a new one costs a session on it, not a handshake.
 *
 * The child runs in a session of its own (the terminal's Ctrl-C is
 * tpuci's), is reaped on the loop, and its stderr is read for what ssh
 * (or the remote command) said when it failed. */
#ifndef TPUCI_HTTP_SSHDIAL_H
#define TPUCI_HTTP_SSHDIAL_H

#include <uv.h>

#include "runtime/http/target.h"
#include "base/util.h"

typedef struct tpuci__sshdial_s tpuci__sshdial_t;
typedef struct tpuci__sshconn_s tpuci__sshconn_t;

/* A dialer for `target` (ssh_host set; copied) on `loop`: makes its
 * private control folder. 0, or TPUCI_EENGINE with err filled. */
int tpuci__sshdial_new(uv_loop_t *loop, const tpuci__http_target_t *target, tpuci__sshdial_t **out,
                       tpuci__err_t *err);

/* The local socket curl connects to (CURLOPT_UNIX_SOCKET_PATH): each
 * connection accepted there gets its ssh. */
const char *tpuci__sshdial_path(const tpuci__sshdial_t *d);

/* A socket for a new connection, for curl to connect to the path above
 * (close-on-exec, bound to a name the dialer knows it by), with a
 * reference to the connection in *conn (tpuci__sshconn_unref); or -1
 * with *error set (uv's code) and *conn NULL. */
int tpuci__sshdial_open(tpuci__sshdial_t *d, tpuci__sshconn_t **conn, int *error);

/* The connection whose socket is fd, if it is one of this dialer's and
 * not *conn already: *conn (a reference, or NULL) is replaced by a
 * reference to it. */
void tpuci__sshdial_attach(tpuci__sshdial_t *d, int fd, tpuci__sshconn_t **conn);

/* curl is done with socket fd: it is closed, and its ssh, which then
 * reads the end of its stdin, ends (or is ended). */
void tpuci__sshdial_closed_fd(tpuci__sshdial_t *d, int fd);

/* Whether the connection's ssh has ended and what it wrote to stderr is
 * read. When it has not, cb(data) is called once it has, or after a
 * short wait (an ssh still connecting), from the loop; a later call
 * replaces the callback (cb NULL: none). */
int tpuci__sshconn_ended(tpuci__sshconn_t *c, void (*cb)(void *data), void *data);

/* After the connection ended: NULL when ssh exited 0 (the server closed
 * the connection), else what went wrong, "ssh root@10.0.0.2: Permission
 * denied (publickey)." (owned by the connection), and in *advice what to
 * do (sshcmd.h's tpuci__ssh_advice). */
const char *tpuci__sshconn_error(const tpuci__sshconn_t *c, const char **advice);

/* Drops a reference from tpuci__sshdial_open. */
void tpuci__sshconn_unref(tpuci__sshconn_t *c);

/* Closes the dialer once curl closed every socket: waits for each ssh to
 * end (SIGTERM, then SIGKILL, if it does not), ends the shared
 * connection (`ssh -O exit`), removes the control folder, frees the
 * dialer and calls cb(data). Connections still referenced stay valid
 * until unreferenced. */
void tpuci__sshdial_close(tpuci__sshdial_t *d, void (*cb)(void *data), void *data);

#endif /* TPUCI_HTTP_SSHDIAL_H */
