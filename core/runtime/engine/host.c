/* DOCKER_HOST parsing. */
#include "runtime/engine/host.h"

#include <stdlib.h>
#include <string.h>

static int tpuci__host_valid(const char *s, size_t n) {
  size_t i;
  if (n == 0) return 0;
  for (i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' ||
          c == ':' || c == '[' || c == ']'))
      return 0;
  }
  return 1;
}

/* host[:port][/]; an IPv6 literal is [addr][:port]. */
static int tpuci__parse_hostport(const char *value, const char *rest,
                                 tpuci__docker_host_t *out,
                                 tpuci__err_t *err) {
  size_t n = strlen(rest);
  const char *colon;
  char *host;
  long port = 2375;

  if (n > 0 && rest[n - 1] == '/') n--;
  if (memchr(rest, '/', n) != NULL)
    return tpuci__err_set(err, TPUCI_EUSAGE,
                          "DOCKER_HOST=%s: a path after host:port is not "
                          "supported",
                          value);
  if (n > 0 && rest[0] == '[') {
    const char *close = memchr(rest, ']', n);
    colon = close != NULL && close + 1 < rest + n && close[1] == ':'
                ? close + 1
                : NULL;
  } else {
    colon = memchr(rest, ':', n);
  }
  host = tpuci__strndup(rest, colon != NULL ? (size_t) (colon - rest) : n);
  if (colon != NULL) {
    char *end;
    char *pstr = tpuci__strndup(colon + 1, n - (size_t) (colon + 1 - rest));
    port = strtol(pstr, &end, 10);
    if (*pstr == '\0' || *end != '\0' || port <= 0 || port > 65535) {
      free(pstr);
      free(host);
      return tpuci__err_set(err, TPUCI_EUSAGE,
                            "DOCKER_HOST=%s: bad port number", value);
    }
    free(pstr);
  }
  if (!tpuci__host_valid(host, strlen(host))) {
    free(host);
    return tpuci__err_set(err, TPUCI_EUSAGE,
                          "DOCKER_HOST=%s: bad host name", value);
  }
  out->url_base = tpuci__printf("http://%s:%ld", host, port);
  out->display = tpuci__printf("tcp://%s:%ld", host, port);
  free(host);
  return 0;
}

int tpuci__docker_host_parse(const char *value, tpuci__docker_host_t *out,
                             tpuci__err_t *err) {
  memset(out, 0, sizeof(*out));
  if (value == NULL || *value == '\0') {
    out->unix_path = tpuci__strdup(TPUCI__DOCKER_DEFAULT_SOCKET);
    out->url_base = tpuci__strdup("http://localhost");
    out->display = tpuci__strdup("unix://" TPUCI__DOCKER_DEFAULT_SOCKET);
    return 0;
  }
  out->from_env = 1;
  if (strncmp(value, "unix://", 7) == 0) {
    const char *path = value + 7;
    if (*path == '\0')
      return tpuci__err_set(err, TPUCI_EUSAGE,
                            "DOCKER_HOST=%s: no socket path after unix://",
                            value);
    out->unix_path = tpuci__strdup(path);
    out->url_base = tpuci__strdup("http://localhost");
    out->display = tpuci__strdup(value);
    return 0;
  }
  if (strncmp(value, "tcp://", 6) == 0 || strncmp(value, "http://", 7) == 0) {
    const char *rest = value + (value[0] == 't' ? 6 : 7);
    int rc = tpuci__parse_hostport(value, rest, out, err);
    if (rc != 0) tpuci__docker_host_free(out);
    return rc;
  }
  return tpuci__err_set(err, TPUCI_EUSAGE,
                        "DOCKER_HOST=%s: unsupported scheme; use "
                        "unix:///path/to/docker.sock or tcp://host:port "
                        "(TLS and ssh:// are not supported)",
                        value);
}

int tpuci__docker_host_from_env(tpuci__docker_host_t *out,
                                tpuci__err_t *err) {
  return tpuci__docker_host_parse(getenv("DOCKER_HOST"), out, err);
}

char *tpuci__docker_host_describe(const tpuci__docker_host_t *h) {
  if (!h->from_env) return tpuci__printf("DOCKER_HOST unset, tried %s",
                                         h->display);
  return tpuci__printf("DOCKER_HOST=%s", h->display);
}

void tpuci__docker_host_free(tpuci__docker_host_t *h) {
  free(h->unix_path);
  free(h->url_base);
  free(h->display);
  memset(h, 0, sizeof(*h));
}
