/* Where the Docker Engine is: DOCKER_HOST parsing. Pure, no I/O. */
#ifndef TPUCI_ENGINE_HOST_H
#define TPUCI_ENGINE_HOST_H

#include "base/util.h"

#define TPUCI__DOCKER_DEFAULT_SOCKET "/var/run/docker.sock"

typedef struct {
  char *unix_path;   /* the socket for unix://, else NULL */
  char *url_base;    /* "http://localhost" or "http://host:port" */
  char *display;     /* "unix:///var/run/docker.sock", "tcp://h:2375" */
  int from_env;      /* DOCKER_HOST was set (and not empty) */
} tpuci__docker_host_t;

/* Parses a DOCKER_HOST value; NULL or "" means the default socket.
 * Accepted: unix:///abs/path, unix://rel/path, tcp://host[:port]
 * (port 2375 by default), http://host[:port]. Returns 0, or TPUCI_EUSAGE
 * with err filled ("DOCKER_HOST=ssh://x: unsupported scheme ..."). */
int tpuci__docker_host_parse(const char *value, tpuci__docker_host_t *out,
                             tpuci__err_t *err);

/* Parses getenv("DOCKER_HOST"). */
int tpuci__docker_host_from_env(tpuci__docker_host_t *out, tpuci__err_t *err);

/* "DOCKER_HOST unset, tried unix:///var/run/docker.sock" or
 * "DOCKER_HOST=tcp://h:2375". Returns a new string. */
char *tpuci__docker_host_describe(const tpuci__docker_host_t *h);

void tpuci__docker_host_free(tpuci__docker_host_t *h);

#endif /* TPUCI_ENGINE_HOST_H */
