/* Finding the engine: DOCKER_HOST with DOCKER_TLS_VERIFY and
 * DOCKER_CERT_PATH, Docker contexts (config.json, meta.json, the TLS
 * folder, the SHA-256 of a name), their precedence, missing files; and
 * the warning about bind mounts on a remote engine. Each test builds a
 * Docker config folder of its own under a temporary folder. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "runtime/engine/endpoint.h"
#include "runtime/engine/host.h"

typedef struct {
  char dir[64];     /* the test's folder */
  char *cfg;        /* dir/cfg: DOCKER_CONFIG */
  char *certs;      /* dir/certs: DOCKER_CERT_PATH */
  tpuci__docker_env_t env;
} fx_t;

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void mkdirs(const char *path) {
  char *cmd = tpuci__printf("mkdir -p '%s'", path);
  assert_int_equal(system(cmd), 0);
  free(cmd);
}

static int setup(void **state) {
  fx_t *fx = tpuci__calloc(1, sizeof(*fx));
  snprintf(fx->dir, sizeof(fx->dir), "/tmp/tpuci-endpoint.XXXXXX");
  assert_non_null(mkdtemp(fx->dir));
  fx->cfg = tpuci__printf("%s/cfg", fx->dir);
  fx->certs = tpuci__printf("%s/certs", fx->dir);
  mkdirs(fx->cfg);
  mkdirs(fx->certs);
  fx->env.config_dir = fx->cfg;
  fx->env.home = "/nonexistent-home";
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fx_t *fx = *state;
  char *cmd = tpuci__printf("rm -rf '%s'", fx->dir);
  assert_int_equal(system(cmd), 0);
  free(cmd);
  free(fx->cfg);
  free(fx->certs);
  free(fx);
  return 0;
}

static void certs(fx_t *fx, int ca, int cert, int key) {
  char p[256];
  snprintf(p, sizeof(p), "%s/ca.pem", fx->certs);
  if (ca) put(p, "CA\n");
  snprintf(p, sizeof(p), "%s/cert.pem", fx->certs);
  if (cert) put(p, "CERT\n");
  snprintf(p, sizeof(p), "%s/key.pem", fx->certs);
  if (key) put(p, "KEY\n");
}

/* A context `name` with endpoint `host` (a JSON value) and `skip`, and
 * the TLS files given (1 each). */
static void context(fx_t *fx, const char *name, const char *host, int skip,
                    int ca, int cert, int key) {
  char hex[65];
  char *d, *p, *body;
  tpuci__sha256_hex(name, strlen(name), hex);
  d = tpuci__printf("%s/contexts/meta/%s", fx->cfg, hex);
  mkdirs(d);
  p = tpuci__printf("%s/meta.json", d);
  body = tpuci__printf("{\"Name\":\"%s\",\"Metadata\":{},\"Endpoints\":{"
                       "\"docker\":{\"Host\":%s,\"SkipTLSVerify\":%s}}}",
                       name, host, skip ? "true" : "false");
  put(p, body);
  free(body);
  free(p);
  free(d);
  d = tpuci__printf("%s/contexts/tls/%s/docker", fx->cfg, hex);
  mkdirs(d);
  p = tpuci__printf("%s/ca.pem", d);
  if (ca) put(p, "CA\n");
  free(p);
  p = tpuci__printf("%s/cert.pem", d);
  if (cert) put(p, "CERT\n");
  free(p);
  p = tpuci__printf("%s/key.pem", d);
  if (key) put(p, "KEY\n");
  free(p);
  free(d);
}

static void current(fx_t *fx, const char *json) {
  char *p = tpuci__printf("%s/config.json", fx->cfg);
  put(p, json);
  free(p);
}

/* Resolves and expects failure with `want` in the message. */
static void fails(fx_t *fx, const char *want) {
  tpuci__docker_host_t h;
  tpuci__err_t err = {0, NULL};
  assert_int_equal(tpuci__docker_host_resolve(&fx->env, &h, &err),
                   TPUCI_EENGINE);
  assert_non_null(err.msg);
  if (strstr(err.msg, want) == NULL) fail_msg("'%s' lacks '%s'", err.msg, want);
  assert_null(strchr(err.msg, '\n'));
  tpuci__err_clear(&err);
}

static void resolves(fx_t *fx, tpuci__docker_host_t *h) {
  tpuci__err_t err = {0, NULL};
  int rc = tpuci__docker_host_resolve(&fx->env, h, &err);
  if (rc != 0) fail_msg("resolve failed: %s", err.msg);
}

static void ends_with(const char *s, const char *tail) {
  size_t n = s ? strlen(s) : 0, m = strlen(tail);
  if (s == NULL || n < m || strcmp(s + n - m, tail) != 0)
    fail_msg("'%s' does not end with '%s'", s ? s : "(null)", tail);
}

static void test_sha256(void **state) {
  char hex[65];
  char big[1000];
  (void) state;
  tpuci__sha256_hex("", 0, hex);
  assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  tpuci__sha256_hex("abc", 3, hex);
  assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  /* 56 bytes: the length no longer fits the first padding block. */
  tpuci__sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
  assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  memset(big, 'a', sizeof(big));
  tpuci__sha256_hex(big, sizeof(big), hex);
  assert_string_equal(hex, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
  /* A context's folder, as `docker context create local` names it. */
  tpuci__sha256_hex("local", 5, hex);
  assert_string_equal(hex, "25bf8e1a2393f1108d37029b3df5593236c755742ec93465bbafa9b290bddcf6");
}

static void test_default(void **state) {
  fx_t *fx = *state;
  tpuci__docker_host_t h;
  char *d;
  resolves(fx, &h);
  assert_string_equal(h.unix_path, TPUCI__DOCKER_DEFAULT_SOCKET);
  assert_int_equal(h.tls, 0);
  assert_null(h.context);
  assert_int_equal(tpuci__docker_host_remote(&h), 0);
  tpuci__docker_host_free(&h);
  /* "default" is the default socket, from either place. */
  current(fx, "{\"currentContext\": \"default\", \"auths\": {}}");
  resolves(fx, &h);
  assert_string_equal(h.unix_path, TPUCI__DOCKER_DEFAULT_SOCKET);
  assert_null(h.context);
  d = tpuci__docker_host_describe(&h);
  assert_string_equal(d, "DOCKER_HOST unset, tried unix:///var/run/docker.sock");
  free(d);
  tpuci__docker_host_free(&h);
  fx->env.docker_context = "default";
  resolves(fx, &h);
  assert_string_equal(h.unix_path, TPUCI__DOCKER_DEFAULT_SOCKET);
  tpuci__docker_host_free(&h);
}

static void test_tls_verify(void **state) {
  fx_t *fx = *state;
  tpuci__docker_host_t h;
  char *d;
  certs(fx, 1, 1, 1);
  fx->env.docker_host = "tcp://10.0.0.5";
  fx->env.tls_verify = "1";
  fx->env.cert_path = fx->certs;
  resolves(fx, &h);
  /* 2376 is the TLS port. */
  assert_string_equal(h.url_base, "https://10.0.0.5:2376");
  assert_int_equal(h.tls, 1);
  assert_int_equal(h.tls_verify, 1);
  ends_with(h.ca_file, "/certs/ca.pem");
  ends_with(h.cert_file, "/certs/cert.pem");
  ends_with(h.key_file, "/certs/key.pem");
  assert_int_equal(tpuci__docker_host_remote(&h), 1);
  d = tpuci__docker_host_describe(&h);
  assert_string_equal(d, "DOCKER_HOST=tcp://10.0.0.5:2376 with TLS");
  free(d);
  d = tpuci__docker_host_tls_text(&h);
  assert_non_null(strstr(d, "checked against"));
  assert_non_null(strstr(d, "/certs/ca.pem"));
  free(d);
  tpuci__docker_host_free(&h);
  /* A port given stays. */
  fx->env.docker_host = "tcp://10.0.0.5:2375";
  resolves(fx, &h);
  assert_string_equal(h.url_base, "https://10.0.0.5:2375");
  tpuci__docker_host_free(&h);
  /* Without DOCKER_CERT_PATH: the config folder's files. */
  fx->env.cert_path = NULL;
  fx->env.config_dir = fx->certs;
  resolves(fx, &h);
  ends_with(h.ca_file, "/certs/ca.pem");
  tpuci__docker_host_free(&h);
  fx->env.config_dir = NULL;
  fx->env.home = fx->dir;
  fails(fx, "/.docker/ca.pem is missing");
  /* An empty DOCKER_TLS_VERIFY is unset: plain HTTP. */
  fx->env.tls_verify = "";
  resolves(fx, &h);
  assert_string_equal(h.url_base, "http://10.0.0.5:2375");
  assert_int_equal(h.tls, 0);
  tpuci__docker_host_free(&h);
}

static void test_tls_missing(void **state) {
  fx_t *fx = *state;
  fx->env.docker_host = "tcp://h:2376";
  fx->env.tls_verify = "1";
  fx->env.cert_path = fx->certs;
  fails(fx, "/certs/ca.pem is missing");
  certs(fx, 1, 0, 0);
  fails(fx, "/certs/cert.pem is missing");
  certs(fx, 0, 1, 0);
  fails(fx, "/certs/key.pem is missing");
  fails(fx, "DOCKER_TLS_VERIFY is set");
}

static void test_cert_path_alone(void **state) {
  fx_t *fx = *state;
  tpuci__docker_host_t h;
  char *d;
  fx->env.docker_host = "tcp://h";
  fx->env.cert_path = fx->certs;
  /* Without verification the CA is not needed. */
  certs(fx, 0, 1, 0);
  fails(fx, "DOCKER_CERT_PATH is set but the TLS file");
  certs(fx, 0, 0, 1);
  resolves(fx, &h);
  assert_string_equal(h.url_base, "https://h:2376");
  assert_int_equal(h.tls, 1);
  assert_int_equal(h.tls_verify, 0);
  assert_null(h.ca_file);
  d = tpuci__docker_host_describe(&h);
  assert_string_equal(d, "DOCKER_HOST=tcp://h:2376 with TLS (engine not verified)");
  free(d);
  d = tpuci__docker_host_tls_text(&h);
  assert_non_null(strstr(d, "NOT checked"));
  free(d);
  tpuci__docker_host_free(&h);
  /* A unix socket has no TLS. */
  fx->env.docker_host = "unix:///run/x.sock";
  fx->env.tls_verify = "1";
  resolves(fx, &h);
  assert_int_equal(h.tls, 0);
  assert_string_equal(h.url_base, "http://localhost");
  tpuci__docker_host_free(&h);
}

static void test_context(void **state) {
  fx_t *fx = *state;
  tpuci__docker_host_t h;
  char *d;
  context(fx, "ci", "\"tcp://build.example:2376\"", 0, 1, 1, 1);
  fx->env.docker_context = "ci";
  resolves(fx, &h);
  assert_string_equal(h.url_base, "https://build.example:2376");
  assert_int_equal(h.tls_verify, 1);
  assert_non_null(strstr(h.ca_file, "/contexts/tls/"));
  ends_with(h.ca_file, "/docker/ca.pem");
  ends_with(h.cert_file, "/docker/cert.pem");
  ends_with(h.key_file, "/docker/key.pem");
  assert_string_equal(h.context, "ci");
  assert_int_equal(h.context_env, 1);
  d = tpuci__docker_host_describe(&h);
  assert_string_equal(d, "DOCKER_CONTEXT=ci at tcp://build.example:2376 with TLS");
  free(d);
  tpuci__docker_host_free(&h);
}

static void test_context_tls_variants(void **state) {
  fx_t *fx = *state;
  tpuci__docker_host_t h;
  /* No TLS files: plain HTTP on 2375. */
  context(fx, "plain", "\"tcp://h\"", 0, 0, 0, 0);
  fx->env.docker_context = "plain";
  resolves(fx, &h);
  assert_string_equal(h.url_base, "http://h:2375");
  assert_int_equal(h.tls, 0);
  tpuci__docker_host_free(&h);
  /* SkipTLSVerify alone: TLS, not verified. */
  context(fx, "skip", "\"tcp://h\"", 1, 0, 0, 0);
  fx->env.docker_context = "skip";
  resolves(fx, &h);
  assert_string_equal(h.url_base, "https://h:2376");
  assert_int_equal(h.tls_verify, 0);
  assert_null(h.cert_file);
  tpuci__docker_host_free(&h);
  /* Only a CA: the engine checked, no client certificate. */
  context(fx, "ca", "\"tcp://h:9\"", 0, 1, 0, 0);
  fx->env.docker_context = "ca";
  resolves(fx, &h);
  assert_int_equal(h.tls_verify, 1);
  assert_non_null(h.ca_file);
  assert_null(h.cert_file);
  tpuci__docker_host_free(&h);
  /* A certificate without its key. */
  context(fx, "half", "\"tcp://h:9\"", 0, 1, 1, 0);
  fx->env.docker_context = "half";
  fails(fx, "Docker context 'half'");
  fails(fx, "key.pem");
  /* A unix socket context. */
  context(fx, "sock", "\"unix:///run/other.sock\"", 0, 0, 0, 0);
  fx->env.docker_context = "sock";
  resolves(fx, &h);
  assert_string_equal(h.unix_path, "/run/other.sock");
  assert_int_equal(tpuci__docker_host_remote(&h), 0);
  tpuci__docker_host_free(&h);
  /* An ssh:// context: no TLS (ssh is the channel). */
  context(fx, "ssh", "\"ssh://me@h:2222\"", 0, 0, 0, 0);
  fx->env.docker_context = "ssh";
  resolves(fx, &h);
  assert_string_equal(h.ssh_host, "h");
  assert_string_equal(h.ssh_user, "me");
  assert_int_equal(h.ssh_port, 2222);
  assert_int_equal(h.tls, 0);
  assert_string_equal(h.context, "ssh");
  tpuci__docker_host_free(&h);
  context(fx, "npipe", "\"npipe:////./pipe/x\"", 0, 0, 0, 0);
  fx->env.docker_context = "npipe";
  fails(fx, "Docker context 'npipe': Host=npipe:////./pipe/x: unsupported scheme");
  /* No docker endpoint. */
  {
    char hex[65], *d, *p;
    tpuci__sha256_hex("k8s", 3, hex);
    d = tpuci__printf("%s/contexts/meta/%s", fx->cfg, hex);
    mkdirs(d);
    p = tpuci__printf("%s/meta.json", d);
    put(p, "{\"Name\":\"k8s\",\"Endpoints\":{}}");
    free(p);
    free(d);
  }
  fx->env.docker_context = "k8s";
  fails(fx, "has no Endpoints.docker");
}

static void test_precedence(void **state) {
  fx_t *fx = *state;
  tpuci__docker_host_t h;
  context(fx, "a", "\"tcp://a:1\"", 0, 0, 0, 0);
  context(fx, "b", "\"tcp://b:1\"", 0, 0, 0, 0);
  current(fx, "{\"currentContext\": \"a\"}");
  /* config.json's currentContext. */
  resolves(fx, &h);
  assert_string_equal(h.url_base, "http://a:1");
  assert_string_equal(h.context, "a");
  assert_int_equal(h.context_env, 0);
  {
    char *d = tpuci__docker_host_describe(&h);
    assert_string_equal(d, "context a (config.json's currentContext) at tcp://a:1");
    free(d);
  }
  tpuci__docker_host_free(&h);
  /* DOCKER_CONTEXT over currentContext. */
  fx->env.docker_context = "b";
  resolves(fx, &h);
  assert_string_equal(h.url_base, "http://b:1");
  tpuci__docker_host_free(&h);
  /* DOCKER_HOST over both, as in the docker CLI; the context is noted. */
  fx->env.docker_host = "tcp://c:1";
  resolves(fx, &h);
  assert_string_equal(h.url_base, "http://c:1");
  assert_null(h.context);
  assert_string_equal(h.context_ignored, "b");
  tpuci__docker_host_free(&h);
  /* An empty DOCKER_CONTEXT is unset. */
  fx->env.docker_host = NULL;
  fx->env.docker_context = "";
  resolves(fx, &h);
  assert_string_equal(h.url_base, "http://a:1");
  tpuci__docker_host_free(&h);
}

static void test_unknown_context(void **state) {
  fx_t *fx = *state;
  char hex[65];
  fx->env.docker_context = "nope";
  fails(fx, "unknown Docker context 'nope' (from DOCKER_CONTEXT)");
  fails(fx, "/cfg/contexts/meta");
  tpuci__sha256_hex("nope", 4, hex);
  fails(fx, hex);
  fx->env.docker_context = NULL;
  current(fx, "{\"currentContext\": \"gone\"}");
  fails(fx, "unknown Docker context 'gone' (from config.json's currentContext)");
  /* A broken config.json is named with where it breaks, never what is
   * there (it holds credentials). */
  current(fx, "{\"currentContext\": ");
  fails(fx, "/cfg/config.json: not valid JSON (line 1, column ");
  /* No config folder at all. */
  fx->env.config_dir = NULL;
  fx->env.home = NULL;
  fx->env.docker_context = "x";
  fails(fx, "neither DOCKER_CONFIG nor HOME");
}

/* config.json: a syntax error is told by line and column, never by the
 * text around it; a FIFO is named as such (and not waited on). */
static void test_config_errors(void **state) {
  fx_t *fx = *state;
  tpuci__docker_host_t h;
  tpuci__err_t err = {0, NULL};
  char *p = tpuci__printf("%s/config.json", fx->cfg);
  current(fx, "{\"auths\": {\"r.example\": {\"auth\": \"S3cr3t-p\n");
  assert_int_equal(tpuci__docker_host_resolve(&fx->env, &h, &err), TPUCI_EENGINE);
  if (strstr(err.msg, "/cfg/config.json: not valid JSON (line 1, column 42)") == NULL)
    fail_msg("no line and column in '%s'", err.msg);
  assert_null(strstr(err.msg, "S3cr3t"));
  assert_null(strstr(err.msg, "near"));
  tpuci__err_clear(&err);
  unlink(p);
  assert_int_equal(mkfifo(p, 0600), 0);
  assert_int_equal(tpuci__docker_host_resolve(&fx->env, &h, &err), TPUCI_EENGINE);
  if (strstr(err.msg, "/cfg/config.json: it is a FIFO, not a regular file") == NULL)
    fail_msg("'%s' does not name the FIFO", err.msg);
  tpuci__err_clear(&err);
  free(p);
}

/* A context whose endpoint names no Host is refused: it names no engine
 * (the docker CLI would quietly try its default socket). */
static void test_context_without_host(void **state) {
  fx_t *fx = *state;
  context(fx, "nohost", "\"\"", 0, 0, 0, 0);
  fx->env.docker_context = "nohost";
  fails(fx, "Docker context 'nohost': ");
  fails(fx, "/meta.json has no Endpoints.docker.Host, so it names no engine");
  fails(fx, "docker context update nohost --docker host=unix:///var/run/docker.sock");
  context(fx, "null", "null", 0, 0, 0, 0);
  fx->env.docker_context = "null";
  fails(fx, "has no Endpoints.docker.Host");
}

/* A client key with a passphrase is refused before any request: OpenSSL
 * would prompt for it on the terminal. Both PEM forms, in
 * DOCKER_CERT_PATH and in a context's TLS folder. */
static void test_encrypted_key(void **state) {
  static const char *const keys[] = {
      "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0w\n"
      "-----END ENCRYPTED PRIVATE KEY-----\n",
      "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
      "DEK-Info: AES-128-CBC,00112233445566778899AABBCCDDEEFF\n\nAAAA\n"
      "-----END RSA PRIVATE KEY-----\n"};
  fx_t *fx = *state;
  tpuci__docker_host_t h;
  char *key = tpuci__printf("%s/key.pem", fx->certs), *ctxkey, hex[65];
  size_t i;
  certs(fx, 1, 1, 1);
  fx->env.docker_host = "tcp://h:2376";
  fx->env.tls_verify = "1";
  fx->env.cert_path = fx->certs;
  for (i = 0; i < 2; i++) {
    put(key, keys[i]);
    fails(fx, "/certs/key.pem is encrypted with a passphrase, which tpuci does not ask for");
    fails(fx, "openssl pkey -in ");
  }
  /* A key without one passes. */
  put(key, "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n");
  resolves(fx, &h);
  tpuci__docker_host_free(&h);
  fx->env.docker_host = NULL;
  fx->env.tls_verify = NULL;
  fx->env.cert_path = NULL;
  context(fx, "enc", "\"tcp://h:2376\"", 0, 1, 1, 1);
  tpuci__sha256_hex("enc", 3, hex);
  ctxkey = tpuci__printf("%s/contexts/tls/%s/docker/key.pem", fx->cfg, hex);
  put(ctxkey, keys[0]);
  fx->env.docker_context = "enc";
  fails(fx, "/docker/key.pem is encrypted with a passphrase");
  free(ctxkey);
  free(key);
}

static void test_bad_host_in_env(void **state) {
  fx_t *fx = *state;
  fx->env.docker_host = "npipe:////./pipe/x";
  fails(fx, "DOCKER_HOST=npipe:////./pipe/x: unsupported scheme");
  /* ssh:// takes no TLS, whatever DOCKER_TLS_VERIFY says. */
  {
    tpuci__docker_host_t h;
    fx->env.docker_host = "ssh://me@h";
    fx->env.tls_verify = "1";
    resolves(fx, &h);
    assert_int_equal(h.tls, 0);
    assert_string_equal(h.ssh_host, "h");
    tpuci__docker_host_free(&h);
    fx->env.tls_verify = NULL;
  }
  fx->env.docker_host = "tcp://h:99999";
  fx->env.tls_verify = "1";
  fails(fx, "bad port");
}

static void test_copy(void **state) {
  fx_t *fx = *state;
  tpuci__docker_host_t h, c;
  certs(fx, 1, 1, 1);
  fx->env.docker_host = "tcp://h";
  fx->env.tls_verify = "1";
  fx->env.cert_path = fx->certs;
  fx->env.docker_context = "ignored";
  resolves(fx, &h);
  tpuci__docker_host_copy(&c, &h);
  tpuci__docker_host_free(&h);
  assert_string_equal(c.url_base, "https://h:2376");
  ends_with(c.key_file, "/key.pem");
  assert_string_equal(c.context_ignored, "ignored");
  tpuci__docker_host_free(&c);
}

static void test_remote_warnings(void **state) {
  tpuci__docker_host_t local, remote;
  tpuci__err_t err = {0, NULL};
  tpuci__instance_t inst[5];
  tpuci__mount_t m = {"/src", "/src", 0};
  tpuci__plan_t plan;
  tpuci__strv_t w = {0};
  (void) state;

  memset(inst, 0, sizeof(inst));
  memset(&plan, 0, sizeof(plan));
  inst[0].job = "src";   /* mounts: warned once for both instances */
  inst[1].job = "src";
  inst[0].mounts = inst[1].mounts = &m;
  inst[0].nmounts = inst[1].nmounts = 1;
  inst[2].job = "unit";  /* pytest: its results folder */
  inst[2].runs_pytest = 1;
  inst[3].job = "plain"; /* nothing of this machine */
  inst[4].job = "local"; /* another runtime */
  inst[4].nmounts = 1;
  inst[4].mounts = &m;
  inst[4].runtime = TPUCI__RUNTIME_LOCAL;
  for (int i = 0; i < 4; i++) {
    inst[i].selected = 1;
    inst[i].runtime = TPUCI__RUNTIME_DOCKER;
  }
  inst[4].selected = 1;
  plan.instances = inst;
  plan.ninstances = 5;

  assert_int_equal(tpuci__docker_host_parse("unix:///x.sock", &local, &err), 0);
  tpuci__remote_mount_warnings(&plan, TPUCI__RUNTIME_DOCKER, &local, &w);
  assert_int_equal(w.len, 0);
  assert_int_equal(tpuci__docker_host_parse("tcp://h:2375", &remote, &err), 0);
  tpuci__remote_mount_warnings(&plan, TPUCI__RUNTIME_DOCKER, &remote, &w);
  assert_int_equal(w.len, 2);
  assert_non_null(strstr(w.items[0], "job 'src'"));
  assert_non_null(strstr(w.items[0], "DOCKER_HOST=tcp://h:2375"));
  assert_non_null(strstr(w.items[0], "sources would be lost"));
  assert_non_null(strstr(w.items[1], "job 'unit'"));
  assert_non_null(strstr(w.items[1], "JUnit would be lost"));
  assert_null(strchr(w.items[0], '\n'));
  tpuci__strv_free(&w);
  /* Both on one job; unselected instances say nothing. */
  inst[2].mounts = &m;
  inst[2].nmounts = 1;
  inst[0].selected = inst[1].selected = 0;
  tpuci__remote_mount_warnings(&plan, TPUCI__RUNTIME_DOCKER, &remote, &w);
  assert_int_equal(w.len, 1);
  assert_non_null(strstr(w.items[0], "sources and JUnit would be lost"));
  tpuci__strv_free(&w);
  tpuci__docker_host_free(&local);
  tpuci__docker_host_free(&remote);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sha256), T(test_default), T(test_tls_verify),
      T(test_tls_missing), T(test_cert_path_alone), T(test_context),
      T(test_context_tls_variants), T(test_precedence),
      T(test_unknown_context), T(test_config_errors), T(test_context_without_host),
      T(test_encrypted_key), T(test_bad_host_in_env), T(test_copy),
      cmocka_unit_test(test_remote_warnings),
  };
#undef T
  return cmocka_run_group_tests_name("docker_endpoint", tests, NULL, NULL);
}
