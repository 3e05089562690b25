/* DOCKER_HOST parsing, TLS settings and descriptions. */
#include "runtime/engine/host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tpuci__host_valid(const char *s, size_t n) {
  size_t i;
  if (n == 0) return 0;
  for (i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '-' || c == '_' || c == ':' || c == '[' || c == ']'))
      return 0;
  }
  return 1;
}

/* host[:port][/]; an IPv6 literal is [addr][:port]. */
static int tpuci__parse_hostport(const char *what, const char *value, const char *rest, int tls,
                                 tpuci__docker_host_t *out, tpuci__err_t *err) {
  size_t n = strlen(rest);
  const char *colon;
  char *host;
  /* The docker CLI's defaults: 2376 is the engine's TLS port. */
  long port = tls ? 2376 : 2375;

  if (n > 0 && rest[n - 1] == '/') n--;
  if (memchr(rest, '/', n) != NULL)
    return tpuci__err_set(err, TPUCI_EUSAGE,
                          "%s=%s: a path after host:port is not "
                          "supported",
                          what, value);
  if (n > 0 && rest[0] == '[') {
    const char *close = memchr(rest, ']', n);
    colon = close != NULL && close + 1 < rest + n && close[1] == ':' ? close + 1 : NULL;
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
      return tpuci__err_set(err, TPUCI_EUSAGE, "%s=%s: bad port number", what, value);
    }
    free(pstr);
  }
  if (!tpuci__host_valid(host, strlen(host))) {
    free(host);
    return tpuci__err_set(err, TPUCI_EUSAGE, "%s=%s: bad host name", what, value);
  }
  out->url_base = tpuci__printf("%s://%s:%ld", tls ? "https" : "http", host, port);
  out->display = tpuci__printf("tcp://%s:%ld", host, port);
  free(host);
  return 0;
}

/* ssh://[user@]host[:port][/], as the docker CLI takes it: no path. */
static int tpuci__parse_ssh(const char *what, const char *value, tpuci__docker_host_t *out,
                            tpuci__err_t *err) {
  const char *rest = value + 6, *at = strchr(rest, '@'), *colon, *end;
  size_t n = strlen(rest), i;
  long port = 0;
  char *host;

  if (n > 0 && rest[n - 1] == '/') n--;
  if (memchr(rest, '/', n) != NULL || memchr(rest, '?', n) != NULL)
    return tpuci__err_set(err, TPUCI_EUSAGE,
                          "%s=%s: a path after the host is not supported "
                          "(ssh://[user@]host[:port])",
                          what, value);
  if (at != NULL && (size_t) (at - rest) < n) {
    for (i = 0; rest + i < at; i++) {
      char c = rest[i];
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '.' || c == '-' || c == '_'))
        break;
    }
    if (rest + i != at || i == 0 || rest[0] == '-')
      return tpuci__err_set(err, TPUCI_EUSAGE, "%s=%s: bad user name", what, value);
    out->ssh_user = tpuci__strndup(rest, i);
    n -= i + 1;
    rest = at + 1;
  }
  end = rest + n;
  if (n > 0 && rest[0] == '[') {
    const char *close = memchr(rest, ']', n);
    colon = close != NULL && close + 1 < end && close[1] == ':' ? close + 1 : NULL;
  } else {
    colon = memchr(rest, ':', n);
  }
  if (colon != NULL) {
    char *pstr = tpuci__strndup(colon + 1, (size_t) (end - colon - 1)), *e;
    port = strtol(pstr, &e, 10);
    if (*pstr == '\0' || *e != '\0' || port <= 0 || port > 65535) {
      free(pstr);
      return tpuci__err_set(err, TPUCI_EUSAGE, "%s=%s: bad port number", what, value);
    }
    free(pstr);
    end = colon;
  }
  if (rest < end && rest[0] == '[' && end[-1] == ']') {
    rest++;
    end--;
  }
  host = tpuci__strndup(rest, (size_t) (end - rest));
  if (!tpuci__host_valid(host, strlen(host)) || host[0] == '-') {
    free(host);
    return tpuci__err_set(err, TPUCI_EUSAGE, "%s=%s: bad host name", what, value);
  }
  tpuci__docker_host_ssh(out, NULL, host, (int) port, NULL);
  free(host);
  return 0;
}

void tpuci__docker_host_ssh(tpuci__docker_host_t *out, const char *user, const char *host, int port,
                            const char *config) {
  int v6 = strchr(host, ':') != NULL;
  char portbuf[16] = "";
  if (user != NULL) {
    free(out->ssh_user);
    out->ssh_user = tpuci__strdup(user);
  }
  out->ssh_host = tpuci__strdup(host);
  out->ssh_port = port;
  out->ssh_config = tpuci__strdup(config);
  /* curl connects to the dialer's local socket (runtime/http/sshdial.h). */
  out->url_base = tpuci__strdup("http://localhost");
  if (port > 0) snprintf(portbuf, sizeof(portbuf), ":%d", port);
  out->display =
      tpuci__printf("ssh://%s%s%s%s%s%s", out->ssh_user ? out->ssh_user : "",
                    out->ssh_user ? "@" : "", v6 ? "[" : "", host, v6 ? "]" : "", portbuf);
}

int tpuci__docker_host_parse_as(const char *what, const char *value, int tls,
                                tpuci__docker_host_t *out, tpuci__err_t *err) {
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
      return tpuci__err_set(err, TPUCI_EUSAGE, "%s=%s: no socket path after unix://", what, value);
    out->unix_path = tpuci__strdup(path);
    out->url_base = tpuci__strdup("http://localhost");
    out->display = tpuci__strdup(value);
    return 0;
  }
  if (strncmp(value, "tcp://", 6) == 0 || strncmp(value, "http://", 7) == 0) {
    const char *rest = value + (value[0] == 't' ? 6 : 7);
    int rc = tpuci__parse_hostport(what, value, rest, tls, out, err);
    if (rc != 0) tpuci__docker_host_free(out);
    return rc;
  }
  if (strncmp(value, "ssh://", 6) == 0) {
    /* TLS does not apply: ssh is the secure channel. */
    int rc = tpuci__parse_ssh(what, value, out, err);
    if (rc != 0) tpuci__docker_host_free(out);
    return rc;
  }
  return tpuci__err_set(err, TPUCI_EUSAGE,
                        "%s=%s: unsupported scheme; use "
                        "unix:///path/to/docker.sock, tcp://host:port or "
                        "ssh://[user@]host[:port]",
                        what, value);
}

int tpuci__docker_host_parse(const char *value, tpuci__docker_host_t *out, tpuci__err_t *err) {
  return tpuci__docker_host_parse_as("DOCKER_HOST", value, 0, out, err);
}

void tpuci__docker_host_set_tls(tpuci__docker_host_t *h, int verify, const char *ca,
                                const char *cert, const char *key) {
  h->tls = 1;
  h->tls_verify = verify;
  free(h->ca_file);
  free(h->cert_file);
  free(h->key_file);
  h->ca_file = tpuci__strdup(ca);
  h->cert_file = tpuci__strdup(cert);
  h->key_file = tpuci__strdup(key);
}

void tpuci__docker_host_target(const tpuci__docker_host_t *h, tpuci__http_target_t *out) {
  static const char *const dial_stdio[] = {"docker", "system", "dial-stdio", NULL};
  memset(out, 0, sizeof(*out));
  out->url_base = h->url_base;
  out->unix_path = h->unix_path;
  out->display = h->display;
  out->peer = "the engine";
  out->tls = h->tls;
  out->tls_verify = h->tls_verify;
  out->ca_file = h->ca_file;
  out->cert_file = h->cert_file;
  out->key_file = h->key_file;
  out->tls_hint_none = "put the client certificate and key the engine's CA signed in "
                       "DOCKER_CERT_PATH (cert.pem, key.pem), or in the Docker context's "
                       "TLS folder";
  out->tls_hint_refused = "the engine trusts another CA (its --tlscacert): use a client "
                          "certificate and key that CA signed, in DOCKER_CERT_PATH (cert.pem, "
                          "key.pem) or the Docker context's TLS folder";
  out->ssh_host = h->ssh_host;
  out->ssh_user = h->ssh_user;
  out->ssh_port = h->ssh_port;
  out->ssh_config = h->ssh_config;
  out->ssh_command = dial_stdio;
  out->ssh_docker = 1;
}

void tpuci__docker_host_copy(tpuci__docker_host_t *dst, const tpuci__docker_host_t *src) {
  *dst = *src;
  dst->unix_path = tpuci__strdup(src->unix_path);
  dst->url_base = tpuci__strdup(src->url_base);
  dst->display = tpuci__strdup(src->display);
  dst->ca_file = tpuci__strdup(src->ca_file);
  dst->cert_file = tpuci__strdup(src->cert_file);
  dst->key_file = tpuci__strdup(src->key_file);
  dst->context = tpuci__strdup(src->context);
  dst->context_ignored = tpuci__strdup(src->context_ignored);
  dst->ssh_host = tpuci__strdup(src->ssh_host);
  dst->ssh_user = tpuci__strdup(src->ssh_user);
  dst->ssh_config = tpuci__strdup(src->ssh_config);
}

int tpuci__docker_host_remote(const tpuci__docker_host_t *h) { return h->unix_path == NULL; }

char *tpuci__docker_host_describe(const tpuci__docker_host_t *h) {
  const char *tls = !h->tls ? "" : h->tls_verify ? " with TLS" : " with TLS (engine not verified)";
  if (h->context != NULL && h->context_env)
    return tpuci__printf("DOCKER_CONTEXT=%s at %s%s", h->context, h->display, tls);
  if (h->context != NULL)
    return tpuci__printf("context %s (config.json's currentContext) at %s%s", h->context,
                         h->display, tls);
  if (!h->from_env) return tpuci__printf("DOCKER_HOST unset, tried %s", h->display);
  return tpuci__printf("DOCKER_HOST=%s%s", h->display, tls);
}

const char *tpuci__docker_host_via(const tpuci__docker_host_t *h) {
  return h->ssh_host != NULL ? "over ssh" : "over TCP";
}

char *tpuci__docker_host_tls_text(const tpuci__docker_host_t *h) {
  tpuci__buf_t b;
  if (!h->tls) return NULL;
  tpuci__buf_init(&b);
  if (!h->tls_verify) tpuci__buf_adds(&b, "the engine's certificate is NOT checked");
  else if (h->ca_file != NULL)
    tpuci__buf_addf(&b, "the engine's certificate is checked against %s", h->ca_file);
  else
    tpuci__buf_adds(&b, "the engine's certificate is checked against the "
                        "system's CAs");
  if (h->cert_file != NULL)
    tpuci__buf_addf(&b, "; client certificate %s, key %s", h->cert_file, h->key_file);
  else tpuci__buf_adds(&b, "; no client certificate");
  return tpuci__buf_steal(&b);
}

void tpuci__docker_host_free(tpuci__docker_host_t *h) {
  free(h->unix_path);
  free(h->url_base);
  free(h->display);
  free(h->ca_file);
  free(h->cert_file);
  free(h->key_file);
  free(h->context);
  free(h->context_ignored);
  free(h->ssh_host);
  free(h->ssh_user);
  free(h->ssh_config);
  memset(h, 0, sizeof(*h));
}
