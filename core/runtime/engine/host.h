/* Where the Docker Engine is: DOCKER_HOST parsing and what a connection
 * to it needs (TLS files). Pure, no I/O: endpoint.h finds the values
 * (environment, Docker contexts, files). */
#ifndef TPUCI_ENGINE_HOST_H
#define TPUCI_ENGINE_HOST_H

#include "runtime/http/target.h"
#include "base/util.h"

#define TPUCI__DOCKER_DEFAULT_SOCKET "/var/run/docker.sock"

typedef struct {
  char *unix_path; /* the socket for unix://, else NULL */
  char *url_base;  /* "http://localhost", "http(s)://host:port" */
  char *display;   /* "unix:///var/run/docker.sock", "tcp://h:2375" */
  int from_env;    /* DOCKER_HOST was set (and not empty) */
  /* TLS, for tcp:// only (url_base is https://). */
  int tls;
  int tls_verify;  /* the engine's certificate is checked */
  char *ca_file;   /* NULL: the system's CAs */
  char *cert_file; /* the client's certificate and key; NULL: none */
  char *key_file;
  /* The Docker context that named the endpoint, or NULL; context_env:
   * it came from DOCKER_CONTEXT (else config.json's currentContext). */
  char *context;
  int context_env;
  /* DOCKER_CONTEXT was set but DOCKER_HOST wins: its value, or NULL. */
  char *context_ignored;
  /* ssh://[user@]host[:port] (ssh_host set): the engine of another
   * machine, each connection `ssh ... host docker system dial-stdio`
   * (runtime/http/sshdial.h), which curl reaches through a local socket
   * of the dialer's; url_base is http://localhost. */
  char *ssh_host;
  char *ssh_user;   /* NULL: ssh's (its config's, else the login) */
  int ssh_port;     /* 0: ssh's (its config's, else 22) */
  char *ssh_config; /* `ssh -F`; NULL: ssh's own files */
} tpuci__docker_host_t;

/* Parses a DOCKER_HOST value; NULL or "" means the default socket.
 * Accepted: unix:///abs/path, unix://rel/path, tcp://host[:port]
 * (port 2375 by default), http://host[:port], ssh://[user@]host[:port].
 * Returns 0, or TPUCI_EUSAGE with err filled ("DOCKER_HOST=npipe://x:
 * unsupported scheme ..."). */
int tpuci__docker_host_parse(const char *value, tpuci__docker_host_t *out, tpuci__err_t *err);

/* The same, for an engine spoken to over TLS when `tls` is set: a tcp://
 * endpoint's default port is then 2376 (as the docker CLI's), and
 * url_base is https://. `what` names the value in messages
 * ("DOCKER_HOST", "context 'x'"). The TLS files are set apart
 * (tpuci__docker_host_set_tls). */
int tpuci__docker_host_parse_as(const char *what, const char *value, int tls,
                                tpuci__docker_host_t *out, tpuci__err_t *err);

/* Sets the TLS mode and files (copied; NULL: none) of a tcp:// host. */
void tpuci__docker_host_set_tls(tpuci__docker_host_t *h, int verify, const char *ca,
                                const char *cert, const char *key);

/* What the HTTP client (runtime/http/http.h) is given to reach the
 * engine: h's strings (borrowed: out lives no longer than h), the ssh
 * tunnel's `docker system dial-stdio`, and the TLS hints that name
 * DOCKER_CERT_PATH and the Docker context's TLS folder. */
void tpuci__docker_host_target(const tpuci__docker_host_t *h, tpuci__http_target_t *out);

/* Copies src into dst (every string duplicated). */
void tpuci__docker_host_copy(tpuci__docker_host_t *dst, const tpuci__docker_host_t *src);

/* The endpoint ssh://[user@]host[:port] for a worker reached with ssh
 * (`config`: its `-F` file, may be NULL): what the docker runtime uses
 * on a slice's workers. */
void tpuci__docker_host_ssh(tpuci__docker_host_t *out, const char *user, const char *host, int port,
                            const char *config);

/* Whether the engine may be on another machine: it is reached over TCP
 * or ssh (a tunnel to a remote engine looks local, so loopback counts
 * too). */
int tpuci__docker_host_remote(const tpuci__docker_host_t *h);

/* "DOCKER_HOST unset, tried unix:///var/run/docker.sock",
 * "DOCKER_HOST=tcp://h:2376 with TLS", "DOCKER_CONTEXT=ci at tcp://h:2376
 * with TLS". Returns a new string. */
char *tpuci__docker_host_describe(const tpuci__docker_host_t *h);

/* How a remote engine is reached, for messages: "over ssh", "over TCP". */
const char *tpuci__docker_host_via(const tpuci__docker_host_t *h);

/* The TLS files and mode in one line, for `tpuci doctor`: "the engine's
 * certificate is checked against /p/ca.pem; client certificate
 * /p/cert.pem"; NULL without TLS. Returns a new string. */
char *tpuci__docker_host_tls_text(const tpuci__docker_host_t *h);

void tpuci__docker_host_free(tpuci__docker_host_t *h);

#endif /* TPUCI_ENGINE_HOST_H */
