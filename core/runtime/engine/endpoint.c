/* Finding the engine's endpoint: DOCKER_HOST and its TLS variables,
 * Docker contexts, the default socket. */
#include "runtime/engine/endpoint.h"

#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

/* The largest config.json or meta.json read (they are a few KiB). */
#define TPUCI__DOCKER_CONFIG_MAX (4u << 20)

/* Files. */

static int tpuci__set(const char *s) { return s != NULL && *s != '\0'; }

/* $DOCKER_CONFIG, else $HOME/.docker; NULL without either. */
static char *tpuci__config_dir(const tpuci__docker_env_t *env) {
  if (tpuci__set(env->config_dir)) return tpuci__strdup(env->config_dir);
  if (tpuci__set(env->home)) return tpuci__printf("%s/.docker", env->home);
  return NULL;
}

/* Whether a readable regular file is at path; else 0 with *why. */
static int tpuci__readable(const char *path, const char **why) {
  struct stat st;
  if (stat(path, &st) != 0) {
    *why = errno == ENOENT ? "missing" : strerror(errno);
    return 0;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = tpuci__file_kind(st.st_mode);
    return 0;
  }
  if (access(path, R_OK) != 0) {
    *why = strerror(errno);
    return 0;
  }
  return 1;
}

/* Reads a JSON file. Returns 0 (*out NULL when the file is missing and
 * missing_ok), or TPUCI_EENGINE naming the file. */
static int tpuci__json_file(const char *path, int missing_ok, json_t **out, tpuci__err_t *err) {
  char *text = NULL;
  size_t len = 0;
  json_error_t je;
  int rc = tpuci__read_file_max(path, TPUCI__DOCKER_CONFIG_MAX, &text, &len);
  *out = NULL;
  if (rc == UV_ENOENT && missing_ok) return 0;
  if (rc != 0) {
    char *why = tpuci__read_why(path, rc);
    tpuci__err_set(err, TPUCI_EENGINE, "cannot read %s: %s", path, why);
    free(why);
    return TPUCI_EENGINE;
  }
  *out = json_loadb(text, len, 0, &je);
  /* config.json holds credentials: the parser's text, which quotes the
   * file near the error, never goes into the message, only where. */
  tpuci__wipe_free(text);
  if (*out == NULL)
    return tpuci__err_set(err, TPUCI_EENGINE, "%s: not valid JSON (line %d, column %d)", path,
                          je.line, je.column);
  return 0;
}

/* A client key with a passphrase: OpenSSL would ask for it on the
 * terminal, from inside a request, with the loop stopped. tpuci never
 * prompts, so such a key is refused before anything is tried. */
static int tpuci__tls_key_check(const char *path, tpuci__err_t *err) {
  char *text = NULL;
  size_t len = 0;
  int encrypted;
  if (tpuci__read_file_max(path, TPUCI__DOCKER_CONFIG_MAX, &text, &len) != 0)
    return 0; /* unreadable: the handshake says so */
  /* PKCS#8 ("BEGIN ENCRYPTED PRIVATE KEY") and OpenSSL's older PEM
   * encryption ("Proc-Type: 4,ENCRYPTED"). */
  encrypted = strstr(text, "-----BEGIN ENCRYPTED ") != NULL ||
              strstr(text, "Proc-Type: 4,ENCRYPTED") != NULL;
  tpuci__wipe_free(text);
  if (!encrypted) return 0;
  return tpuci__err_set(err, TPUCI_EENGINE,
                        "the TLS key %s is encrypted with a passphrase, which "
                        "tpuci does not ask for: use the key without one "
                        "(openssl pkey -in %s -out plain.pem asks for it "
                        "once; put plain.pem in its place)",
                        path, path);
}

/* DOCKER_HOST. */

/* DOCKER_CERT_PATH's three files; each must be there: a TLS engine
 * rejects a client without its certificate with a less clear message. */
static int tpuci__env_tls(const tpuci__docker_env_t *env, tpuci__docker_host_t *h,
                          tpuci__err_t *err) {
  static const char *const names[3] = {"ca.pem", "cert.pem", "key.pem"};
  int verify = tpuci__set(env->tls_verify);
  char *dir = tpuci__set(env->cert_path) ? tpuci__strdup(env->cert_path) : tpuci__config_dir(env);
  char *files[3];
  const char *why = NULL;
  int i, rc = 0;

  if (dir == NULL)
    return tpuci__err_set(err, TPUCI_EENGINE,
                          "DOCKER_TLS_VERIFY is set but neither "
                          "DOCKER_CERT_PATH nor HOME says where ca.pem, "
                          "cert.pem and key.pem are");
  for (i = 0; i < 3; i++) files[i] = tpuci__printf("%s/%s", dir, names[i]);
  /* Without verification the CA is not used. */
  for (i = verify ? 0 : 1; i < 3 && rc == 0; i++) {
    if (tpuci__readable(files[i], &why)) continue;
    rc = tpuci__err_set(err, TPUCI_EENGINE,
                        "%s is set but the TLS file %s is %s; put ca.pem, "
                        "cert.pem and key.pem in %s or set DOCKER_CERT_PATH",
                        verify ? "DOCKER_TLS_VERIFY" : "DOCKER_CERT_PATH", files[i], why,
                        tpuci__set(env->cert_path) ? "that folder" : dir);
  }
  if (rc == 0) rc = tpuci__tls_key_check(files[2], err);
  if (rc == 0) tpuci__docker_host_set_tls(h, verify, verify ? files[0] : NULL, files[1], files[2]);
  for (i = 0; i < 3; i++) free(files[i]);
  free(dir);
  return rc;
}

static int tpuci__from_docker_host(const tpuci__docker_env_t *env, tpuci__docker_host_t *out,
                                   tpuci__err_t *err) {
  /* TLS as the docker CLI (DOCKER_TLS_VERIFY) and the Engine SDK's
   * client.FromEnv (DOCKER_CERT_PATH alone: TLS, engine not checked). */
  int tls = tpuci__set(env->tls_verify) || tpuci__set(env->cert_path);
  int rc = tpuci__docker_host_parse_as("DOCKER_HOST", env->docker_host, tls, out, err);
  if (rc != 0) return rc;
  if (tpuci__set(env->docker_context)) out->context_ignored = tpuci__strdup(env->docker_context);
  /* A unix socket has no TLS, nor has ssh (the channel is ssh's). */
  if (!tls || out->unix_path != NULL || out->ssh_host != NULL) return 0;
  rc = tpuci__env_tls(env, out, err);
  if (rc != 0) tpuci__docker_host_free(out);
  return rc;
}

/* Contexts. */

/* config.json's currentContext: *name NULL when none. */
static int tpuci__current_context(const char *cfgdir, char **name, tpuci__err_t *err) {
  char *path = tpuci__printf("%s/config.json", cfgdir);
  json_t *j;
  const char *cur;
  int rc = tpuci__json_file(path, 1, &j, err);
  *name = NULL;
  free(path);
  if (rc != 0) return rc;
  cur = json_string_value(json_object_get(j, "currentContext"));
  if (tpuci__set(cur)) *name = tpuci__strdup(cur);
  json_decref(j);
  return 0;
}

/* The context's TLS files that are there (the docker CLI uses those). */
static int tpuci__context_tls(const char *dir, const char *name, int skip_verify,
                              tpuci__docker_host_t *h, tpuci__err_t *err) {
  char *ca = tpuci__printf("%s/ca.pem", dir);
  char *cert = tpuci__printf("%s/cert.pem", dir);
  char *key = tpuci__printf("%s/key.pem", dir);
  const char *why;
  int has_ca = tpuci__readable(ca, &why);
  int has_cert = tpuci__readable(cert, &why);
  int has_key = tpuci__readable(key, &why);
  int rc = 0;

  if (has_cert != has_key)
    rc = tpuci__err_set(err, TPUCI_EENGINE, "Docker context '%s': %s is there but %s is not", name,
                        has_cert ? cert : key, has_cert ? key : cert);
  else if (has_key) rc = tpuci__tls_key_check(key, err);
  if (rc == 0 && (has_ca || has_cert || skip_verify))
    tpuci__docker_host_set_tls(h, !skip_verify, has_ca ? ca : NULL, has_cert ? cert : NULL,
                               has_cert ? key : NULL);
  free(ca);
  free(cert);
  free(key);
  return rc;
}

/* Whether the context's folder has TLS files: then a tcp:// Host
 * defaults to the TLS port. */
static int tpuci__context_has_tls(const char *dir) {
  const char *why;
  static const char *const names[3] = {"ca.pem", "cert.pem", "key.pem"};
  int i, any = 0;
  for (i = 0; i < 3 && !any; i++) {
    char *p = tpuci__printf("%s/%s", dir, names[i]);
    any = tpuci__readable(p, &why);
    free(p);
  }
  return any;
}

static int tpuci__from_context(const char *cfgdir, const char *name, int from_env,
                               tpuci__docker_host_t *out, tpuci__err_t *err) {
  char hex[65];
  char *meta, *tlsdir, *what;
  json_t *j = NULL, *ep;
  const char *host;
  int rc, skip = 0, tls = 0;

  tpuci__sha256_hex(name, strlen(name), hex);
  meta = tpuci__printf("%s/contexts/meta/%s/meta.json", cfgdir, hex);
  tlsdir = tpuci__printf("%s/contexts/tls/%s/docker", cfgdir, hex);
  rc = tpuci__json_file(meta, 1, &j, err);
  if (rc == 0 && j == NULL)
    rc = tpuci__err_set(err, TPUCI_EENGINE,
                        "unknown Docker context '%s' (from %s): no %s in "
                        "%s/contexts/meta; `docker context ls` lists the "
                        "contexts",
                        name,
                        from_env ? "DOCKER_CONTEXT"
                                 : "config.json's "
                                   "currentContext",
                        hex, cfgdir);
  ep = json_object_get(json_object_get(j, "Endpoints"), "docker");
  if (rc == 0 && !json_is_object(ep))
    rc = tpuci__err_set(err, TPUCI_EENGINE, "Docker context '%s': %s has no Endpoints.docker", name,
                        meta);
  host = json_string_value(json_object_get(ep, "Host"));
  /* The docker CLI would quietly try its default socket: a context that
   * names no engine is refused instead of running somewhere else. */
  if (rc == 0 && !tpuci__set(host))
    rc = tpuci__err_set(err, TPUCI_EENGINE,
                        "Docker context '%s': %s has no Endpoints.docker.Host, "
                        "so it names no engine; give it one (docker context "
                        "update %s --docker host=unix://%s) or set DOCKER_HOST",
                        name, meta, name, TPUCI__DOCKER_DEFAULT_SOCKET);
  if (rc == 0) {
    skip = json_is_true(json_object_get(ep, "SkipTLSVerify"));
    tls = skip || tpuci__context_has_tls(tlsdir);
    what = tpuci__printf("Docker context '%s': Host", name);
    rc = tpuci__docker_host_parse_as(what, host, tls, out, err);
    free(what);
  }
  if (rc == 0 && out->unix_path == NULL && out->ssh_host == NULL && tls) {
    rc = tpuci__context_tls(tlsdir, name, skip, out, err);
    if (rc != 0) tpuci__docker_host_free(out);
  }
  if (rc == 0) {
    out->context = tpuci__strdup(name);
    out->context_env = from_env;
  }
  json_decref(j);
  free(meta);
  free(tlsdir);
  return rc == 0 ? 0 : TPUCI_EENGINE;
}

/* Resolution. */

void tpuci__docker_env_get(tpuci__docker_env_t *env) {
  env->docker_host = getenv("DOCKER_HOST");
  env->docker_context = getenv("DOCKER_CONTEXT");
  env->tls_verify = getenv("DOCKER_TLS_VERIFY");
  env->cert_path = getenv("DOCKER_CERT_PATH");
  env->config_dir = getenv("DOCKER_CONFIG");
  env->home = getenv("HOME");
}

int tpuci__docker_host_resolve(const tpuci__docker_env_t *env, tpuci__docker_host_t *out,
                               tpuci__err_t *err) {
  char *cfgdir, *name = NULL;
  int rc = 0, from_env = 0;

  /* DOCKER_HOST wins over any context, as in the docker CLI. */
  if (tpuci__set(env->docker_host))
    return tpuci__from_docker_host(env, out, err) == 0 ? 0 : TPUCI_EENGINE;
  cfgdir = tpuci__config_dir(env);
  if (tpuci__set(env->docker_context)) {
    name = tpuci__strdup(env->docker_context);
    from_env = 1;
  } else if (cfgdir != NULL) {
    rc = tpuci__current_context(cfgdir, &name, err);
  }
  if (rc == 0 && name != NULL && strcmp(name, "default") != 0) {
    if (cfgdir == NULL)
      rc = tpuci__err_set(err, TPUCI_EENGINE,
                          "DOCKER_CONTEXT=%s but neither DOCKER_CONFIG nor "
                          "HOME says where the Docker config folder is",
                          name);
    else rc = tpuci__from_context(cfgdir, name, from_env, out, err);
  } else if (rc == 0) {
    rc = tpuci__docker_host_parse(NULL, out, err);
  }
  free(name);
  free(cfgdir);
  return rc == 0 ? 0 : TPUCI_EENGINE;
}

int tpuci__docker_host_from_env(tpuci__docker_host_t *out, tpuci__err_t *err) {
  tpuci__docker_env_t env;
  tpuci__docker_env_get(&env);
  return tpuci__docker_host_resolve(&env, out, err);
}

/* Bind mounts on a remote engine. */

static int tpuci__strv_has(const tpuci__strv_t *v, const char *s) {
  size_t i;
  for (i = 0; i < v->len; i++)
    if (strcmp(v->items[i], s) == 0) return 1;
  return 0;
}

void tpuci__remote_mount_warnings(const tpuci__plan_t *plan, tpuci__runtime_kind_t kind,
                                  const tpuci__docker_host_t *h, tpuci__strv_t *out) {
  tpuci__strv_t seen = {0};
  char *where;
  size_t i;

  if (!tpuci__docker_host_remote(h)) return;
  where = tpuci__docker_host_describe(h);
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    /* A swarm task's results come back through its log (logres.h). */
    int mounts = inst->nmounts > 0, results = inst->runs_pytest && kind != TPUCI__RUNTIME_SWARM;
    if (!inst->selected || inst->runtime != kind || !(mounts || results) ||
        tpuci__strv_has(&seen, inst->job))
      continue;
    tpuci__strv_push(&seen, inst->job);
    /* The engine resolves a bind mount's source on its own machine. */
    tpuci__strv_take(out, tpuci__printf("job '%s': the engine (%s) is reached %s and "
                                        "may run on another machine, where the job's %s folders of "
                                        "that machine, not of this one: %s would be lost",
                                        inst->job, where, tpuci__docker_host_via(h),
                                        mounts && results ? "bind mounts and pytest results folder "
                                                            "are"
                                        : mounts          ? "bind mounts are"
                                                          : "pytest results folder is",
                                        mounts && results ? "sources and JUnit"
                                        : mounts          ? "sources"
                                                          : "JUnit"));
  }
  tpuci__strv_free(&seen);
  free(where);
}

char *tpuci__remote_results_refusal(const tpuci__plan_t *plan, tpuci__runtime_kind_t kind,
                                    const tpuci__docker_host_t *h) {
  size_t i;
  if (h->ssh_host == NULL) return NULL;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    char *where, *m;
    if (!inst->selected || inst->runtime != kind || !inst->runs_pytest) continue;
    where = tpuci__docker_host_describe(h);
    m = tpuci__printf("%s: job '%s': the engine (%s) runs on another machine, where "
                      "a pytest job's results folder (a bind mount of a folder of "
                      "this machine) would be a folder of that machine, and its JUnit "
                      "would never come back: run tpuci on that machine, or run the job "
                      "there with hosts = ... and its image (docs/ssh.md), which copies "
                      "the results back",
                      inst->where ? inst->where : "spec", inst->job, where);
    free(where);
    return m;
  }
  return NULL;
}

void tpuci__endpoint_doctor(const tpuci__docker_host_t *h, const tpuci__plan_t *plan,
                            tpuci__runtime_kind_t kind, tpuci__buf_t *report) {
  char *tls = tpuci__docker_host_tls_text(h);
  tpuci__strv_t w = {0};
  size_t i;

  if (tls != NULL) tpuci__buf_addf(report, "%s tls: %s\n", h->tls_verify ? "ok  " : "warn", tls);
  free(tls);
  if (h->context_ignored != NULL)
    tpuci__buf_addf(report,
                    "warn context: DOCKER_CONTEXT=%s is not used: DOCKER_HOST "
                    "wins over it (as with the docker CLI)\n",
                    h->context_ignored);
  if (plan != NULL) tpuci__remote_mount_warnings(plan, kind, h, &w);
  for (i = 0; i < w.len; i++) tpuci__buf_addf(report, "warn mounts: %s\n", w.items[i]);
  tpuci__strv_free(&w);
}
