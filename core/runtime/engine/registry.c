/* Registry credentials from the Docker config (registry.h). */
#include "runtime/engine/registry.h"

#include <stdlib.h>
#include <string.h>
#include <uv.h>

/* Registry names. */

static int tpuci__is_hub(const char *host) {
  return strcmp(host, "docker.io") == 0 || strcmp(host, "index.docker.io") == 0 ||
         strcmp(host, "registry-1.docker.io") == 0;
}

char *tpuci__registry_host(const char *ref) {
  const char *slash = strchr(ref, '/');
  char *first;
  int lower = 1;
  const char *p;
  if (slash == NULL) return tpuci__strdup("docker.io");
  first = tpuci__strndup(ref, (size_t) (slash - ref));
  for (p = first; *p; p++)
    if (*p >= 'A' && *p <= 'Z') lower = 0;
  /* "library/python", "user/app": a Docker Hub repository, not a host. */
  if (strpbrk(first, ".:") == NULL && strcmp(first, "localhost") != 0 && lower) {
    free(first);
    return tpuci__strdup("docker.io");
  }
  if (tpuci__is_hub(first)) {
    free(first);
    return tpuci__strdup("docker.io");
  }
  return first;
}

char *tpuci__registry_key_host(const char *key) {
  const char *s = key;
  char *host;
  if (strncmp(s, "https://", 8) == 0) s += 8;
  else if (strncmp(s, "http://", 7) == 0) s += 7;
  host = tpuci__strndup(s, strcspn(s, "/"));
  if (tpuci__is_hub(host)) {
    free(host);
    return tpuci__strdup("docker.io");
  }
  return host;
}

char *tpuci__registry_server(const char *host) {
  return tpuci__strdup(strcmp(host, "docker.io") == 0 ? TPUCI__DOCKER_HUB_SERVER : host);
}

/* The config file. */

int tpuci__regconf_parse(tpuci__regconf_t *c, const char *path, const char *text,
                         tpuci__err_t *err) {
  json_error_t je;
  memset(c, 0, sizeof(*c));
  c->path = tpuci__strdup(path);
  c->json = json_loads(text, 0, &je);
  if (c->json == NULL || !json_is_object(c->json)) {
    /* The parser's text quotes the file at the error, which may be a
     * secret: only where it is goes into the message. */
    int line = c->json == NULL ? je.line : 1, column = c->json == NULL ? je.column : 1;
    json_decref(c->json);
    c->json = NULL;
    return tpuci__err_set(err, TPUCI_EIMAGE,
                          "cannot read the Docker config %s: not a JSON "
                          "object (line %d, column %d)",
                          path, line, column);
  }
  return 0;
}

int tpuci__regconf_load(tpuci__regconf_t *c, tpuci__err_t *err) {
  const char *dir = getenv("DOCKER_CONFIG"), *home = getenv("HOME");
  char *path, *text = NULL;
  size_t len;
  int rc;
  memset(c, 0, sizeof(*c));
  if (dir != NULL && dir[0] != '\0') path = tpuci__printf("%s/config.json", dir);
  else if (home != NULL && home[0] != '\0') path = tpuci__printf("%s/.docker/config.json", home);
  else return 0;
  rc = tpuci__read_file_max(path, 16 * 1024 * 1024, &text, &len);
  if (rc == UV_ENOENT) {
    c->path = path;
    return 0;
  }
  if (rc != 0) {
    char *why = tpuci__read_why(path, rc);
    tpuci__err_set(err, TPUCI_EIMAGE, "cannot read the Docker config %s: %s", path, why);
    free(why);
    free(path);
    return TPUCI_EIMAGE;
  }
  rc = tpuci__regconf_parse(c, path, text, err);
  tpuci__wipe_free(text);
  free(path);
  return rc;
}

void tpuci__regconf_free(tpuci__regconf_t *c) {
  free(c->path);
  json_decref(c->json);
  memset(c, 0, sizeof(*c));
}

/* Picking. */

/* The value of `obj`'s key whose registry host is `host`. */
static json_t *tpuci__by_host(json_t *obj, const char *host, const char **key_out) {
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) {
    char *h = tpuci__registry_key_host(key);
    int same = strcmp(h, host) == 0;
    free(h);
    if (same) {
      if (key_out) *key_out = key;
      return v;
    }
  }
  return NULL;
}

static int tpuci__helper_name(json_t *v, tpuci__regauth_t *out, tpuci__cred_source_t source) {
  const char *name = json_string_value(v);
  if (name == NULL || name[0] == '\0') return 0;
  out->source = source;
  out->helper = tpuci__printf("docker-credential-%s", name);
  return 1;
}

/* An "auths" entry: {"auth": base64(user:password)}, {"username",
 * "password"} or {"identitytoken"}. Returns 1 when it holds credentials,
 * 0 when it is empty (what `docker login` leaves there with a
 * credsStore), or TPUCI_EIMAGE. */
static int tpuci__from_auths(const tpuci__regconf_t *c, const char *key, json_t *entry,
                             tpuci__regauth_t *out, tpuci__err_t *err) {
  const char *auth = json_string_value(json_object_get(entry, "auth"));
  const char *token = json_string_value(json_object_get(entry, "identitytoken"));
  const char *user = json_string_value(json_object_get(entry, "username"));
  const char *pass = json_string_value(json_object_get(entry, "password"));
  char *plain = NULL, *colon;
  size_t len;

  if (token != NULL && token[0] != '\0') {
    char *u = NULL;
    if (auth != NULL && auth[0] != '\0' && tpuci__base64_decode(auth, &plain, &len) == 0 &&
        (colon = strchr(plain, ':')) != NULL)
      u = tpuci__strndup(plain, (size_t) (colon - plain));
    out->header = tpuci__regauth_header(u ? u : user, NULL, token, out->server);
    free(u);
    tpuci__wipe_free(plain);
    out->source = TPUCI__CRED_AUTHS;
    return 1;
  }
  if (auth != NULL && auth[0] != '\0') {
    if (tpuci__base64_decode(auth, &plain, &len) != 0 || strlen(plain) != len ||
        (colon = strchr(plain, ':')) == NULL) {
      tpuci__wipe_free(plain);
      return tpuci__err_set(err, TPUCI_EIMAGE,
                            "the Docker config %s: auths[\"%s\"].auth is not "
                            "base64 of user:password",
                            c->path, key);
    }
    *colon = '\0';
    out->header = tpuci__regauth_header(plain, colon + 1, NULL, out->server);
    *colon = ':';
    tpuci__wipe_free(plain);
    out->source = TPUCI__CRED_AUTHS;
    return 1;
  }
  if (user != NULL && pass != NULL) {
    out->header = tpuci__regauth_header(user, pass, NULL, out->server);
    out->source = TPUCI__CRED_AUTHS;
    return 1;
  }
  return 0;
}

int tpuci__regauth_pick(const tpuci__regconf_t *c, const char *ref, tpuci__regauth_t *out,
                        tpuci__err_t *err) {
  const char *key = NULL;
  json_t *entry;
  int rc;
  memset(out, 0, sizeof(*out));
  out->host = tpuci__registry_host(ref);
  out->server = tpuci__registry_server(out->host);
  if (c->json == NULL) return 0;
  entry = tpuci__by_host(json_object_get(c->json, "credHelpers"), out->host, NULL);
  if (entry != NULL && tpuci__helper_name(entry, out, TPUCI__CRED_HELPER)) return 0;
  entry = tpuci__by_host(json_object_get(c->json, "auths"), out->host, &key);
  if (entry != NULL) {
    rc = tpuci__from_auths(c, key, entry, out, err);
    if (rc < 0) {
      tpuci__regauth_free(out);
      return rc;
    }
    if (rc == 1) return 0;
  }
  tpuci__helper_name(json_object_get(c->json, "credsStore"), out, TPUCI__CRED_STORE);
  return 0;
}

int tpuci__regauth_from_helper(tpuci__regauth_t *a, const char *out, size_t len,
                               tpuci__err_t *err) {
  json_t *j = json_loadb(out, len, 0, NULL);
  const char *user = json_string_value(json_object_get(j, "Username"));
  const char *secret = json_string_value(json_object_get(j, "Secret"));
  if (secret == NULL || secret[0] == '\0') {
    json_decref(j);
    return tpuci__err_set(err, TPUCI_EIMAGE,
                          "%s get: for %s it printed no Secret (not the "
                          "credential helpers' JSON)",
                          a->helper, a->server);
  }
  free(a->header);
  /* The helpers' way of storing an identity token. */
  if (user != NULL && strcmp(user, "<token>") == 0)
    a->header = tpuci__regauth_header(NULL, NULL, secret, a->server);
  else a->header = tpuci__regauth_header(user ? user : "", secret, NULL, a->server);
  json_decref(j);
  return 0;
}

char *tpuci__regauth_header(const char *user, const char *password, const char *token,
                            const char *server) {
  json_t *o = json_object();
  char *text, *b64;
  if (token != NULL) {
    json_object_set_new(o, "identitytoken", json_string(token));
    if (user != NULL && user[0] != '\0') json_object_set_new(o, "username", json_string(user));
  } else {
    json_object_set_new(o, "username", json_string(user ? user : ""));
    json_object_set_new(o, "password", json_string(password ? password : ""));
  }
  json_object_set_new(o, "serveraddress", json_string(server));
  text = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  b64 = tpuci__base64((const unsigned char *) text, strlen(text), 1);
  tpuci__wipe_free(text);
  return b64;
}

char *tpuci__regauth_describe(const tpuci__regauth_t *a, const tpuci__regconf_t *c) {
  const char *path = c->path ? c->path : "the Docker config";
  switch (a->source) {
    case TPUCI__CRED_AUTHS: return tpuci__printf("credentials from %s (auths) were sent", path);
    case TPUCI__CRED_HELPER:
    case TPUCI__CRED_STORE:
      if (a->header == NULL)
        return tpuci__printf("no credentials were sent: %s (%s in %s) has "
                             "none for %s",
                             a->helper,
                             a->source == TPUCI__CRED_HELPER ? "credHelpers" : "credsStore", path,
                             a->server);
      return tpuci__printf("credentials from %s (%s in %s) were sent", a->helper,
                           a->source == TPUCI__CRED_HELPER ? "credHelpers" : "credsStore", path);
    default: return tpuci__printf("no credentials were sent: %s has none for %s", path, a->host);
  }
}

void tpuci__regauth_free(tpuci__regauth_t *a) {
  free(a->host);
  free(a->server);
  free(a->helper);
  tpuci__wipe_free(a->header);
  memset(a, 0, sizeof(*a));
}
