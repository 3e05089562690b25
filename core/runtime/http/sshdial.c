/* Connections through ssh (sshdial.h): a child ssh per connection
 * running the target's command (`docker system dial-stdio` for an
 * ssh:// engine), its stdin and stdout a socket the
 * dialer accepted on its listening socket, whose other end curl speaks
 * HTTP on.
 *
 * curl connects to the listening socket (CURLOPT_UNIX_SOCKET_PATH) with
 * a socket the dialer made for the request (CURLOPT_OPENSOCKETFUNCTION),
 * bound to a name of the kernel's choosing; the accepted socket's peer
 * name says whose it is, so each request knows its own ssh. (libcurl's
 * CURL_SOCKOPT_ALREADY_CONNECTED would spare the listening socket, but
 * curl 7.88 connects such a socket all the same, and fails.)
 *
 * A connection's record lives while its handles are open (the child,
 * its stderr pipe, two timers) or a request holds a reference to it (to
 * say why its connection failed). */
#define _GNU_SOURCE /* accept4 */
#include "runtime/http/sshdial.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "runtime/sshcmd.h"

/* Once curl closed the socket, how long ssh may take to end before
 * SIGTERM, and then before SIGKILL. */
#define TPUCI__DIAL_TERM_MS 3000
#define TPUCI__DIAL_KILL_MS 2000
/* After ssh exited, how long its stderr may stay open (a ControlPersist
 * master it forked keeps nothing of ours, but be sure). */
#define TPUCI__DIAL_DRAIN_MS 200
/* How long a failed request waits for its ssh's last word. */
#define TPUCI__DIAL_WAIT_MS 1500
/* `ssh -O exit` at close. */
#define TPUCI__DIAL_EXIT_MS 5000
/* The stderr kept for the last line. */
#define TPUCI__DIAL_TAIL 4096

struct tpuci__sshconn_s {
  tpuci__sshdial_t *d;
  uv_process_t proc;
  uv_pipe_t err;
  uv_timer_t timer;        /* TERM and KILL after the socket closed; drain */
  uv_timer_t wait;         /* the waiter's cap */
  int fd;                  /* curl's socket while curl has it, else -1 */
  struct sockaddr_un name; /* its name, for the accepted peer */
  socklen_t namelen;
  int spawned;   /* its ssh was started (or failed to) */
  int proc_init; /* uv_spawn was called: proc is a handle */
  int handles;   /* open handles */
  int refs;      /* requests' references, and 1 for its handles */
  int exited, err_done, ended, killed;
  int64_t status;
  int term_signal;
  tpuci__buf_t tail;
  char *error;
  const char *advice;
  void (*cb)(void *data);
  void *cb_data;
  tpuci__sshconn_t *prev, *next;
};

struct tpuci__sshdial_s {
  uv_loop_t *loop;
  tpuci__http_target_t host;
  char *control_dir;
  char *path; /* the listening socket, in control_dir */
  int lfd;
  uv_poll_t lpoll;
  char *target;            /* "ssh root@10.0.0.2" */
  tpuci__sshconn_t *conns; /* whose handles are open */
  int used;                /* a connection was started: a master may run */
  int closing;
  uv_process_t exit_proc; /* `ssh -O exit` */
  uv_timer_t timer;       /* its cap, and the asynchronous end */
  int handles;
  void (*close_cb)(void *data);
  void *close_data;
};

static void tpuci__dial_maybe_closed(tpuci__sshdial_t *d);

/* The command line up to the destination (the remote command follows). */
static void tpuci__dial_argv(const tpuci__sshdial_t *d, tpuci__strv_t *argv) {
  char *control = tpuci__printf("%s/%%C", d->control_dir);
  tpuci__ssh_base_argv(argv, d->host.ssh_config, control, d->host.ssh_user, d->host.ssh_port);
  free(control);
  tpuci__strv_push(argv, "-T");
  tpuci__strv_push(argv, "--");
  tpuci__strv_push(argv, d->host.ssh_host);
}

/* Connections. */

static void tpuci__conn_free(tpuci__sshconn_t *c) {
  tpuci__buf_free(&c->tail);
  free(c->error);
  free(c);
}

void tpuci__sshconn_unref(tpuci__sshconn_t *c) {
  if (c != NULL && --c->refs == 0) tpuci__conn_free(c);
}

static void tpuci__conn_handle_closed(uv_handle_t *h) {
  tpuci__sshconn_t *c = h->data;
  tpuci__sshdial_t *d = c->d;
  if (--c->handles > 0) return;
  if (c->prev) c->prev->next = c->next;
  else d->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  c->d = NULL;
  tpuci__sshconn_unref(c);
  tpuci__dial_maybe_closed(d);
}

static void tpuci__conn_close(tpuci__sshconn_t *c, uv_handle_t *h) {
  if (!uv_is_closing(h)) uv_close(h, tpuci__conn_handle_closed);
}

/* It exited and its stderr is read: what went wrong, the waiter, then
 * its handles go. */
static void tpuci__conn_maybe_ended(tpuci__sshconn_t *c) {
  void (*cb)(void *);
  if (!c->exited || !c->err_done || c->ended) return;
  c->ended = 1;
  if (c->status != 0 && !c->killed) {
    char *last = tpuci__ssh_last_line(c->tail.data ? c->tail.data : "", c->tail.len);
    c->error = last ? tpuci__printf("%s: %s", c->d->target, last)
               : c->term_signal
                   ? tpuci__printf("%s: ssh was killed by signal %d", c->d->target, c->term_signal)
                   : tpuci__printf("%s: ssh exited %lld and said nothing", c->d->target,
                                   (long long) c->status);
    c->advice =
        tpuci__ssh_advice(c->term_signal ? -1 : (int) c->status, last, c->d->host.ssh_docker);
    free(last);
  }
  cb = c->cb;
  c->cb = NULL;
  uv_timer_stop(&c->wait);
  if (cb) cb(c->cb_data);
  if (c->proc_init) tpuci__conn_close(c, (uv_handle_t *) &c->proc);
  tpuci__conn_close(c, (uv_handle_t *) &c->err);
  tpuci__conn_close(c, (uv_handle_t *) &c->timer);
  tpuci__conn_close(c, (uv_handle_t *) &c->wait);
}

static void tpuci__conn_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  static char slab[4096];
  (void) h;
  (void) suggested;
  /* Kept at once: one buffer serves every connection. */
  buf->base = slab;
  buf->len = sizeof(slab);
}

static void tpuci__conn_err_done(tpuci__sshconn_t *c) {
  if (c->err_done) return;
  c->err_done = 1;
  uv_read_stop((uv_stream_t *) &c->err);
  tpuci__conn_maybe_ended(c);
}

static void tpuci__conn_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  tpuci__sshconn_t *c = s->data;
  if (n > 0) {
    if (c->tail.len + (size_t) n > 2 * TPUCI__DIAL_TAIL) {
      size_t keep = c->tail.len > TPUCI__DIAL_TAIL ? TPUCI__DIAL_TAIL : c->tail.len;
      memmove(c->tail.data, c->tail.data + c->tail.len - keep, keep);
      c->tail.len = keep;
    }
    tpuci__buf_add(&c->tail, buf->base, (size_t) n);
    return;
  }
  if (n < 0) tpuci__conn_err_done(c);
}

static void tpuci__conn_on_drain(uv_timer_t *t) { tpuci__conn_err_done(t->data); }

static void tpuci__conn_exit(uv_process_t *p, int64_t status, int signum) {
  tpuci__sshconn_t *c = p->data;
  c->exited = 1;
  c->status = signum ? -1 : status;
  c->term_signal = signum;
  uv_timer_stop(&c->timer);
  if (!c->err_done) uv_timer_start(&c->timer, tpuci__conn_on_drain, TPUCI__DIAL_DRAIN_MS, 0);
  tpuci__conn_maybe_ended(c);
}

static void tpuci__conn_on_kill(uv_timer_t *t) {
  tpuci__sshconn_t *c = t->data;
  if (c->exited) return;
  c->killed = 1;
  uv_process_kill(&c->proc, SIGKILL);
}

static void tpuci__conn_on_term(uv_timer_t *t) {
  tpuci__sshconn_t *c = t->data;
  if (c->exited) return;
  c->killed = 1;
  uv_process_kill(&c->proc, SIGTERM);
  uv_timer_start(&c->timer, tpuci__conn_on_kill, TPUCI__DIAL_KILL_MS, 0);
}

/* Its socket is closed: ssh sees the end of its stdin and ends; one that
 * does not (still connecting) is ended. */
static void tpuci__conn_release_fd(tpuci__sshconn_t *c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
  if (!c->spawned) {
    /* Never accepted: no ssh to wait for. */
    c->spawned = c->exited = c->err_done = 1;
    c->killed = 1;
    tpuci__conn_maybe_ended(c);
    return;
  }
  if (!c->exited) uv_timer_start(&c->timer, tpuci__conn_on_term, TPUCI__DIAL_TERM_MS, 0);
}

/* Starts the ssh of a connection on `sock`, the accepted end. */
static void tpuci__conn_spawn(tpuci__sshconn_t *c, int sock) {
  tpuci__sshdial_t *d = c->d;
  uv_stdio_container_t io[3];
  tpuci__strv_t argv = {0};
  const char *const *cmd;
  int r;

  c->spawned = 1;
  c->proc_init = 1;
  c->handles++;
  tpuci__dial_argv(d, &argv);
  for (cmd = d->host.ssh_command; cmd != NULL && *cmd != NULL; cmd++) tpuci__strv_push(&argv, *cmd);
  memset(io, 0, sizeof(io));
  io[0].flags = UV_INHERIT_FD;
  io[0].data.fd = sock;
  io[1].flags = UV_INHERIT_FD;
  io[1].data.fd = sock;
  io[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  io[2].data.stream = (uv_stream_t *) &c->err;
  /* (Ctrl-C is tpuci's, which may still need the server: the engine to
   * remove its containers.) */
  r = tpuci__ssh_spawn(d->loop, &c->proc, &argv, io, 3, tpuci__conn_exit);
  tpuci__strv_free(&argv);
  close(sock);
  if (r != 0) {
    /* curl reads the end of the connection; the request says why. */
    c->exited = c->err_done = c->ended = 1;
    c->error = tpuci__printf("cannot run %s: %s", tpuci__ssh_client(), uv_strerror(r));
    c->advice = "install the OpenSSH client (apt-get install openssh-client), or set "
                "TPUCI_SSH to one";
    if (c->cb) {
      void (*cb)(void *) = c->cb;
      c->cb = NULL;
      cb(c->cb_data);
    }
    /* The process handle still needs closing (libuv's rule). */
    tpuci__conn_close(c, (uv_handle_t *) &c->proc);
    tpuci__conn_close(c, (uv_handle_t *) &c->err);
    tpuci__conn_close(c, (uv_handle_t *) &c->timer);
    tpuci__conn_close(c, (uv_handle_t *) &c->wait);
    return;
  }
  d->used = 1;
  uv_read_start((uv_stream_t *) &c->err, tpuci__conn_alloc, tpuci__conn_read);
  if (c->fd < 0) tpuci__conn_release_fd(c);
}

/* A connection came: the connection whose socket it is gets its ssh. */
static void tpuci__dial_on_accept(uv_poll_t *p, int status, int events) {
  tpuci__sshdial_t *d = p->data;
  (void) events;
  if (status < 0) return;
  for (;;) {
    struct sockaddr_un peer;
    socklen_t len = sizeof(peer);
    tpuci__sshconn_t *c;
    int sock = accept4(d->lfd, (struct sockaddr *) &peer, &len, SOCK_CLOEXEC);
    if (sock < 0) return;
    for (c = d->conns; c != NULL; c = c->next)
      if (!c->spawned && c->namelen == len && memcmp(&c->name, &peer, len) == 0) break;
    if (c == NULL) {
      /* Not a socket of ours. */
      close(sock);
      continue;
    }
    tpuci__conn_spawn(c, sock);
  }
}

const char *tpuci__sshdial_path(const tpuci__sshdial_t *d) { return d->path; }

int tpuci__sshdial_open(tpuci__sshdial_t *d, tpuci__sshconn_t **conn, int *error) {
  tpuci__sshconn_t *c;
  int fd;

  *conn = NULL;
  *error = 0;
  if (d->closing) {
    *error = UV_ECANCELED;
    return -1;
  }
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  c = tpuci__calloc(1, sizeof(*c));
  c->namelen = sizeof(c->name);
  /* A name of the kernel's choosing ("autobind"): sa_family alone. */
  c->name.sun_family = AF_UNIX;
  if (fd < 0 || bind(fd, (struct sockaddr *) &c->name, sizeof(sa_family_t)) != 0 ||
      getsockname(fd, (struct sockaddr *) &c->name, &c->namelen) != 0) {
    *error = TPUCI__ERRNO;
    if (fd >= 0) close(fd);
    free(c);
    return -1;
  }
  c->d = d;
  c->fd = fd;
  c->refs = 2;
  tpuci__buf_init(&c->tail);
  uv_pipe_init(d->loop, &c->err, 0);
  uv_timer_init(d->loop, &c->timer);
  uv_timer_init(d->loop, &c->wait);
  c->err.data = c->timer.data = c->wait.data = c->proc.data = c;
  c->handles = 3;
  c->next = d->conns;
  if (d->conns) d->conns->prev = c;
  d->conns = c;
  *conn = c;
  return fd;
}

void tpuci__sshdial_attach(tpuci__sshdial_t *d, int fd, tpuci__sshconn_t **conn) {
  tpuci__sshconn_t *c;
  if (*conn != NULL && (*conn)->fd == fd) return;
  for (c = d->conns; c != NULL; c = c->next)
    if (c->fd == fd) {
      c->refs++;
      tpuci__sshconn_unref(*conn);
      *conn = c;
      return;
    }
}

void tpuci__sshdial_closed_fd(tpuci__sshdial_t *d, int fd) {
  tpuci__sshconn_t *c;
  for (c = d->conns; c != NULL; c = c->next)
    if (c->fd == fd) {
      tpuci__conn_release_fd(c);
      return;
    }
  /* Not one of ours (curl's own): close it as curl would. */
  close(fd);
}

static void tpuci__conn_on_wait(uv_timer_t *t) {
  tpuci__sshconn_t *c = t->data;
  void (*cb)(void *) = c->cb;
  c->cb = NULL;
  if (cb) cb(c->cb_data);
}

int tpuci__sshconn_ended(tpuci__sshconn_t *c, void (*cb)(void *data), void *data) {
  if (c->ended || c->d == NULL) return 1;
  c->cb = cb;
  c->cb_data = data;
  if (cb != NULL) uv_timer_start(&c->wait, tpuci__conn_on_wait, TPUCI__DIAL_WAIT_MS, 0);
  else uv_timer_stop(&c->wait);
  return 0;
}

const char *tpuci__sshconn_error(const tpuci__sshconn_t *c, const char **advice) {
  *advice = c->advice;
  return c->error;
}

/* The dialer. */

int tpuci__sshdial_new(uv_loop_t *loop, const tpuci__http_target_t *host, tpuci__sshdial_t **out,
                       tpuci__err_t *err) {
  tpuci__sshdial_t *d;
  char *dir;
  int rc = tpuci__ssh_control_dir_new(&dir, host->display, err);
  if (rc != 0) return rc;
  d = tpuci__calloc(1, sizeof(*d));
  d->loop = loop;
  d->control_dir = dir;
  d->path = tpuci__printf("%s/server.sock", dir);
  d->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  rc = d->lfd < 0 ? TPUCI__ERRNO : 0;
  if (rc == 0) {
    struct sockaddr_un a;
    memset(&a, 0, sizeof(a));
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", d->path);
    if (bind(d->lfd, (struct sockaddr *) &a, sizeof(a)) != 0 || listen(d->lfd, 128) != 0)
      rc = TPUCI__ERRNO;
  }
  if (rc == 0) rc = uv_poll_init(loop, &d->lpoll, d->lfd);
  if (rc != 0) {
    if (d->lfd >= 0) close(d->lfd);
    tpuci__ssh_control_dir_remove(dir);
    free(d->path);
    free(dir);
    free(d);
    return tpuci__err_set(err, TPUCI_EENGINE,
                          "%s: cannot make the local socket for "
                          "ssh's connections in /tmp: %s",
                          host->display, uv_strerror(rc));
  }
  d->lpoll.data = d;
  uv_poll_start(&d->lpoll, UV_READABLE, tpuci__dial_on_accept);
  tpuci__http_target_copy(&d->host, host);
  d->target = tpuci__http_target_ssh(host);
  uv_timer_init(loop, &d->timer);
  d->timer.data = d;
  d->handles = 2;
  *out = d;
  return 0;
}

static void tpuci__dial_freed(uv_handle_t *h) {
  tpuci__sshdial_t *d = h->data;
  void (*cb)(void *) = d->close_cb;
  void *data = d->close_data;
  if (--d->handles > 0) return;
  close(d->lfd);
  tpuci__ssh_control_dir_remove(d->control_dir);
  free(d->control_dir);
  free(d->path);
  free(d->target);
  tpuci__http_target_free(&d->host);
  free(d);
  if (cb) cb(data);
}

static void tpuci__dial_on_exit_done(uv_process_t *p, int64_t status, int signum) {
  tpuci__sshdial_t *d = p->data;
  (void) status;
  (void) signum;
  uv_close((uv_handle_t *) &d->exit_proc, tpuci__dial_freed);
  uv_close((uv_handle_t *) &d->timer, tpuci__dial_freed);
}

static void tpuci__dial_on_exit_late(uv_timer_t *t) {
  tpuci__sshdial_t *d = t->data;
  uv_process_kill(&d->exit_proc, SIGKILL);
}

/* Every connection's handles closed: the shared connection ends now (not
 * ControlPersist later), then the dialer goes. */
static void tpuci__dial_maybe_closed(tpuci__sshdial_t *d) {
  uv_stdio_container_t io[3];
  tpuci__strv_t argv = {0};
  size_t i;
  int r = -1;

  if (!d->closing || d->conns != NULL || uv_is_closing((uv_handle_t *) &d->timer)) return;
  if (d->used) {
    tpuci__dial_argv(d, &argv);
    /* "-O exit" before the destination ("--" ends the options). */
    for (i = 0; i < argv.len && strcmp(argv.items[i], "--") != 0; i++) {}
    free(argv.items[i]);
    argv.items[i] = tpuci__strdup("-O");
    free(argv.items[i + 1]);
    argv.items[i + 1] = tpuci__strdup("exit");
    tpuci__strv_push(&argv, "--");
    tpuci__strv_push(&argv, d->host.ssh_host);
    memset(io, 0, sizeof(io));
    io[0].flags = io[1].flags = io[2].flags = UV_IGNORE;
    d->exit_proc.data = d;
    r = tpuci__ssh_spawn(d->loop, &d->exit_proc, &argv, io, 3, tpuci__dial_on_exit_done);
    tpuci__strv_free(&argv);
    d->handles++;
    if (r != 0) uv_close((uv_handle_t *) &d->exit_proc, tpuci__dial_freed);
    else uv_timer_start(&d->timer, tpuci__dial_on_exit_late, TPUCI__DIAL_EXIT_MS, 0);
  }
  if (r != 0) uv_close((uv_handle_t *) &d->timer, tpuci__dial_freed);
}

void tpuci__sshdial_close(tpuci__sshdial_t *d, void (*cb)(void *data), void *data) {
  tpuci__sshconn_t *c;
  d->closing = 1;
  d->close_cb = cb;
  d->close_data = data;
  uv_close((uv_handle_t *) &d->lpoll, tpuci__dial_freed);
  for (c = d->conns; c != NULL; c = c->next)
    if (c->fd >= 0) tpuci__conn_release_fd(c);
  tpuci__dial_maybe_closed(d);
}
