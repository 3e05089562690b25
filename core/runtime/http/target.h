/* core/runtime/http/: an HTTP client on the libuv loop (http.h) and the
 * ssh tunnels it may reach its server through (sshdial.h), for any
 * runtime driver that talks to a server over HTTP: the Docker Engine
 * client (runtime/engine/) today, a Kubernetes API server's tomorrow.
 * It knows no server's API: it may use core/runtime/'s own shared
 * headers (sshcmd.h), plan/ and base/, and includes no driver and not
 * runtime/engine/ (tests/layout/includes.py).
 *
 * This header: where a server is and how a connection reaches it (a
 * unix socket, TCP, TLS, or an ssh tunnel whose remote command bridges
 * its stdin and stdout to the server). Pure, no I/O: the engine client
 * makes one from DOCKER_HOST (runtime/engine/host.h). */
#ifndef TPUCI_HTTP_TARGET_H
#define TPUCI_HTTP_TARGET_H

typedef struct {
  char *url_base;  /* "http://localhost", "https://host:port": paths follow */
  char *unix_path; /* connect to this socket instead of url_base's host; NULL: none */
  char *display;   /* the server in messages: "unix:///var/run/docker.sock" */
  /* What messages call the server ("the engine"); NULL: "the server". */
  const char *peer;
  /* TLS (url_base is https://). */
  int tls;
  int tls_verify;  /* the server's certificate is checked */
  char *ca_file;   /* NULL: the system's CAs */
  char *cert_file; /* the client's certificate and key; NULL: none */
  char *key_file;
  /* What to do when the server wants a client certificate and got none,
   * and when it refused ours (where the certificate and key go:
   * DOCKER_CERT_PATH for an engine); NULL: no hint. Static. */
  const char *tls_hint_none;
  const char *tls_hint_refused;
  /* An ssh tunnel (ssh_host set): each connection is `ssh ... ssh_host
   * ssh_command...`, whose stdin and stdout are the connection
   * (sshdial.h); url_base is then http://localhost. */
  char *ssh_host;
  char *ssh_user;   /* NULL: ssh's (its config's, else the login) */
  int ssh_port;     /* 0: ssh's (its config's, else 22) */
  char *ssh_config; /* `ssh -F`; NULL: ssh's own files */
  /* The remote command, NULL-terminated, static ({"docker", "system",
   * "dial-stdio", NULL}); ssh_docker: it is docker's, which the advice
   * about its failures names (runtime/sshcmd.h's tpuci__ssh_advice). */
  const char *const *ssh_command;
  int ssh_docker;
} tpuci__http_target_t;

/* Copies src into dst (every string duplicated; the static ones shared). */
void tpuci__http_target_copy(tpuci__http_target_t *dst, const tpuci__http_target_t *src);

/* Frees what tpuci__http_target_copy() made. */
void tpuci__http_target_free(tpuci__http_target_t *t);

/* "ssh root@10.0.0.2:2222" for messages, for a target with ssh_host.
 * New. */
char *tpuci__http_target_ssh(const tpuci__http_target_t *t);

#endif /* TPUCI_HTTP_TARGET_H */
