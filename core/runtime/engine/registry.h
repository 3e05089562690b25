/* Registry credentials for image pulls, the way the docker CLI finds
 * them: the Docker config ($DOCKER_CONFIG/config.json, else
 * ~/.docker/config.json), its "credHelpers" (per registry), its "auths"
 * (user:password in base64, or an identity token) and its "credsStore"
 * (one helper for every registry). What the engine gets is the
 * X-Registry-Auth header: base64url of a JSON auth configuration.
 * Pure (reading the config file aside); running a helper is
 * credhelper.h's. Nothing here prints or keeps a secret anywhere but in
 * the header it builds (docs/docker.md, "Private registries"). */
#ifndef TPUCI_ENGINE_REGISTRY_H
#define TPUCI_ENGINE_REGISTRY_H

#include <jansson.h>
#include <stddef.h>

#include "runtime/engine/base64.h"
#include "base/util.h"

/* The registry of Docker Hub, as config keys and helpers name it. */
#define TPUCI__DOCKER_HUB_SERVER "https://index.docker.io/v1/"

/* The registry an image reference names, as the docker CLI reads it:
 * "127.0.0.1:5000/busybox:1" -> "127.0.0.1:5000"; "python:3.11",
 * "library/python", "docker.io/x/y", "index.docker.io/x" -> "docker.io".
 * The first component is a registry when it has a '.' or ':' or is
 * "localhost". New string. */
char *tpuci__registry_host(const char *ref);
/* A config key or helper's server as a registry host: the scheme and
 * any path go, Docker Hub's names become "docker.io". New string. */
char *tpuci__registry_key_host(const char *key);
/* What the engine and helpers call the registry: Docker Hub's
 * "https://index.docker.io/v1/", else the host itself. New string. */
char *tpuci__registry_server(const char *host);

/* The Docker config, read once per pull. */
typedef struct {
  char *path;   /* the file looked at; NULL: no HOME nor DOCKER_CONFIG */
  json_t *json; /* its content; NULL when the file does not exist */
} tpuci__regconf_t;

/* Reads the config. A missing file is no error (no credentials);
 * unreadable or invalid JSON is TPUCI_EIMAGE with err naming the file. */
int tpuci__regconf_load(tpuci__regconf_t *c, tpuci__err_t *err);
/* The same from a JSON text (tests); `path` names it in messages. */
int tpuci__regconf_parse(tpuci__regconf_t *c, const char *path, const char *text,
                         tpuci__err_t *err);
void tpuci__regconf_free(tpuci__regconf_t *c);

/* Where the credentials for one registry come from. */
typedef enum {
  TPUCI__CRED_NONE = 0, /* nothing for this registry: pull anonymously */
  TPUCI__CRED_AUTHS,    /* an "auths" entry: header is set */
  TPUCI__CRED_HELPER,   /* "credHelpers": helper is set */
  TPUCI__CRED_STORE     /* "credsStore": helper is set */
} tpuci__cred_source_t;

typedef struct {
  char *host;   /* "docker.io", "127.0.0.1:5000" */
  char *server; /* tpuci__registry_server(host) */
  tpuci__cred_source_t source;
  char *helper; /* "docker-credential-NAME" to run with `get` */
  char *header; /* the X-Registry-Auth value, or NULL */
} tpuci__regauth_t;

/* Picks the credentials for `ref`: "credHelpers" for its host first, then
 * an "auths" entry with credentials in it, then "credsStore"; nothing
 * else is no credentials. An "auths" entry that cannot be decoded is
 * TPUCI_EIMAGE (the message names the file and the key, never the
 * value). */
int tpuci__regauth_pick(const tpuci__regconf_t *c, const char *ref, tpuci__regauth_t *out,
                        tpuci__err_t *err);
/* Applies what `helper get` printed ({"ServerURL", "Username",
 * "Secret"}; Username "<token>" means Secret is an identity token): sets
 * a->header. Not JSON, or no Secret, is TPUCI_EIMAGE. */
int tpuci__regauth_from_helper(tpuci__regauth_t *a, const char *out, size_t len, tpuci__err_t *err);
/* The X-Registry-Auth value: base64url of {"username", "password",
 * "serveraddress"}, or {"identitytoken", "serveraddress"} (and the
 * username when there is one) when `token` is set. New string. */
char *tpuci__regauth_header(const char *user, const char *password, const char *token,
                            const char *server);
/* "credentials from ~/.docker/config.json (auths)", "credentials from
 * docker-credential-pass (credHelpers in FILE)", for messages. New
 * string. */
char *tpuci__regauth_describe(const tpuci__regauth_t *a, const tpuci__regconf_t *c);
void tpuci__regauth_free(tpuci__regauth_t *a);

#endif /* TPUCI_ENGINE_REGISTRY_H */
