/* Registry credentials from the Docker config (runtime/engine/registry.h)
 * and the pull progress sums (pull.h): the pure parts. base64 has its
 * own test (test_docker_base64.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/engine/pull.h"
#include "runtime/engine/registry.h"

static void expect_host(const char *ref, const char *host) {
  char *h = tpuci__registry_host(ref);
  assert_string_equal(h, host);
  free(h);
}

static void expect_key(const char *key, const char *host) {
  char *h = tpuci__registry_key_host(key);
  assert_string_equal(h, host);
  free(h);
}

static void test_hosts(void **state) {
  char *s;
  (void) state;
  expect_host("python:3.11", "docker.io");
  expect_host("library/python", "docker.io");
  expect_host("someuser/app:1", "docker.io");
  expect_host("docker.io/library/python:3.11", "docker.io");
  expect_host("index.docker.io/x/y", "docker.io");
  expect_host("registry-1.docker.io/x/y", "docker.io");
  expect_host("127.0.0.1:5000/busybox:1", "127.0.0.1:5000");
  expect_host("localhost/app", "localhost");
  expect_host("localhost:5000/app", "localhost:5000");
  expect_host("ghcr.io/org/app@sha256:abcd", "ghcr.io");
  expect_host("us-docker.pkg.dev/p/r/img:tag", "us-docker.pkg.dev");
  /* Upper case cannot be a repository name: it is a host. */
  expect_host("MyHost/app", "MyHost");
  expect_key("https://index.docker.io/v1/", "docker.io");
  expect_key("index.docker.io", "docker.io");
  expect_key("docker.io", "docker.io");
  expect_key("https://registry.example.com/v2/", "registry.example.com");
  expect_key("http://127.0.0.1:5000", "127.0.0.1:5000");
  expect_key("127.0.0.1:5000", "127.0.0.1:5000");
  s = tpuci__registry_server("docker.io");
  assert_string_equal(s, "https://index.docker.io/v1/");
  free(s);
  s = tpuci__registry_server("127.0.0.1:5000");
  assert_string_equal(s, "127.0.0.1:5000");
  free(s);
}

/* The JSON an X-Registry-Auth value holds. */
static json_t *header_json(const char *header) {
  char *text;
  size_t len;
  json_t *j;
  assert_null(strpbrk(header, "+/"));
  assert_int_equal(tpuci__base64_decode(header, &text, &len), 0);
  j = json_loads(text, 0, NULL);
  free(text);
  assert_non_null(j);
  return j;
}

static const char *jstr(json_t *j, const char *key) {
  return json_string_value(json_object_get(j, key));
}

static void pick(const char *config, const char *ref, tpuci__regauth_t *a) {
  tpuci__regconf_t c;
  tpuci__err_t err = {0, NULL};
  assert_int_equal(tpuci__regconf_parse(&c, "/cfg/config.json", config, &err), 0);
  assert_int_equal(tpuci__regauth_pick(&c, ref, a, &err), 0);
  tpuci__regconf_free(&c);
}

static void test_pick(void **state) {
  tpuci__regauth_t a;
  json_t *j;
  const char *cfg =
      "{\"auths\": {"
      "  \"https://index.docker.io/v1/\": {\"auth\": \"aHViOmh1YnB3\"},"
      "  \"127.0.0.1:5000\": {\"auth\": \"YWxpY2U6czNj\\/cmV0\"},"
      "  \"tok.example\": {\"auth\": \"dTo=\", \"identitytoken\": \"TOKEN\"},"
      "  \"plain.example\": {\"username\": \"p\", \"password\": \"q\"},"
      "  \"empty.example\": {}},"
      " \"credHelpers\": {\"gcr.io\": \"gcloud\", \"https://helped.example\": \"pass\"},"
      " \"credsStore\": \"desktop\"}";
  (void) state;

  /* Docker Hub by any of its names. */
  pick(cfg, "python:3.11", &a);
  assert_int_equal(a.source, TPUCI__CRED_AUTHS);
  j = header_json(a.header);
  assert_string_equal(jstr(j, "username"), "hub");
  assert_string_equal(jstr(j, "password"), "hubpw");
  assert_string_equal(jstr(j, "serveraddress"), "https://index.docker.io/v1/");
  json_decref(j);
  tpuci__regauth_free(&a);
  pick(cfg, "docker.io/library/python", &a);
  assert_int_equal(a.source, TPUCI__CRED_AUTHS);
  tpuci__regauth_free(&a);

  /* A host with a port; a password with a ':' in it is kept whole. */
  pick("{\"auths\": {\"127.0.0.1:5000\": {\"auth\": \"YWxpY2U6czM6Y3JldA==\"}}}",
       "127.0.0.1:5000/busybox:1", &a);
  j = header_json(a.header);
  assert_string_equal(jstr(j, "username"), "alice");
  assert_string_equal(jstr(j, "password"), "s3:cret");
  assert_string_equal(jstr(j, "serveraddress"), "127.0.0.1:5000");
  json_decref(j);
  tpuci__regauth_free(&a);

  /* An identity token. */
  pick(cfg, "tok.example/app", &a);
  j = header_json(a.header);
  assert_string_equal(jstr(j, "identitytoken"), "TOKEN");
  assert_string_equal(jstr(j, "username"), "u");
  assert_null(json_object_get(j, "password"));
  json_decref(j);
  tpuci__regauth_free(&a);

  /* username/password fields. */
  pick(cfg, "plain.example/app", &a);
  j = header_json(a.header);
  assert_string_equal(jstr(j, "username"), "p");
  assert_string_equal(jstr(j, "password"), "q");
  json_decref(j);
  tpuci__regauth_free(&a);

  /* credHelpers win, by host (a key with a scheme too). */
  pick(cfg, "gcr.io/proj/img", &a);
  assert_int_equal(a.source, TPUCI__CRED_HELPER);
  assert_string_equal(a.helper, "docker-credential-gcloud");
  assert_string_equal(a.server, "gcr.io");
  assert_null(a.header);
  tpuci__regauth_free(&a);
  pick(cfg, "helped.example/x", &a);
  assert_string_equal(a.helper, "docker-credential-pass");
  tpuci__regauth_free(&a);

  /* An empty auths entry (docker login with a store) and unknown hosts
   * go to credsStore. */
  pick(cfg, "empty.example/x", &a);
  assert_int_equal(a.source, TPUCI__CRED_STORE);
  assert_string_equal(a.helper, "docker-credential-desktop");
  tpuci__regauth_free(&a);
  pick(cfg, "other.example/x", &a);
  assert_int_equal(a.source, TPUCI__CRED_STORE);
  tpuci__regauth_free(&a);

  /* No store: nothing. */
  pick("{\"auths\": {}}", "other.example/x", &a);
  assert_int_equal(a.source, TPUCI__CRED_NONE);
  assert_null(a.header);
  assert_null(a.helper);
  assert_string_equal(a.host, "other.example");
  tpuci__regauth_free(&a);
}

static void test_pick_errors(void **state) {
  tpuci__regconf_t c;
  tpuci__regauth_t a;
  tpuci__err_t err = {0, NULL};
  (void) state;
  /* Not base64 of user:password: the message names the key, not the
   * value. */
  assert_int_equal(tpuci__regconf_parse(&c, "/cfg/config.json",
                                        "{\"auths\": {\"r.example\": {\"auth\": \"bm9jb2xvbg==\"}}}",
                                        &err),
                   0);
  assert_int_equal(tpuci__regauth_pick(&c, "r.example/x", &a, &err), TPUCI_EIMAGE);
  assert_non_null(strstr(err.msg, "/cfg/config.json"));
  assert_non_null(strstr(err.msg, "auths[\"r.example\"]"));
  assert_null(strstr(err.msg, "bm9jb2xvbg"));
  tpuci__err_clear(&err);
  tpuci__regconf_free(&c);
  /* Not JSON: where, never what. */
  assert_int_equal(tpuci__regconf_parse(&c, "/cfg/config.json", "{\"auths\": {\"x\": \"SECRET",
                                        &err),
                   TPUCI_EIMAGE);
  assert_null(strstr(err.msg, "SECRET"));
  assert_non_null(strstr(err.msg, "/cfg/config.json"));
  tpuci__err_clear(&err);
  tpuci__regconf_free(&c);
}

static void test_helper_answer(void **state) {
  tpuci__regauth_t a;
  tpuci__err_t err = {0, NULL};
  json_t *j;
  const char *ok = "{\"ServerURL\":\"gcr.io\",\"Username\":\"_json_key\",\"Secret\":\"KEY\"}";
  const char *tok = "{\"ServerURL\":\"x\",\"Username\":\"<token>\",\"Secret\":\"REFRESH\"}";
  (void) state;
  pick("{\"credsStore\": \"x\"}", "gcr.io/p/i", &a);
  assert_int_equal(tpuci__regauth_from_helper(&a, ok, strlen(ok), &err), 0);
  j = header_json(a.header);
  assert_string_equal(jstr(j, "username"), "_json_key");
  assert_string_equal(jstr(j, "password"), "KEY");
  assert_string_equal(jstr(j, "serveraddress"), "gcr.io");
  json_decref(j);
  /* "<token>": an identity token. */
  assert_int_equal(tpuci__regauth_from_helper(&a, tok, strlen(tok), &err), 0);
  j = header_json(a.header);
  assert_string_equal(jstr(j, "identitytoken"), "REFRESH");
  assert_null(json_object_get(j, "username"));
  json_decref(j);
  assert_int_equal(tpuci__regauth_from_helper(&a, "oops", 4, &err), TPUCI_EIMAGE);
  assert_non_null(strstr(err.msg, "docker-credential-x get"));
  tpuci__err_clear(&err);
  tpuci__regauth_free(&a);
}

static void test_progress(void **state) {
  tpuci__pull_state_t st;
  uint64_t cur, tot;
  int layers;
  const char *lines[] = {
      "{\"status\":\"Pulling from library/python\",\"id\":\"3.11\"}",
      "{\"status\":\"Already exists\",\"id\":\"l0\"}",
      "{\"status\":\"Pulling fs layer\",\"id\":\"l1\"}",
      "{\"status\":\"Waiting\",\"id\":\"l2\"}",
      "{\"status\":\"Downloading\",\"progressDetail\":{\"current\":100,\"total\":1000},\"id\":\"l1\"}",
      "{\"status\":\"Downloading\",\"progressDetail\":{\"current\":700,\"total\":1000},\"id\":\"l1\"}",
      "{\"status\":\"Downloading\",\"progressDetail\":{\"current\":5,\"total\":50},\"id\":\"l2\"}",
      "{\"status\":\"Digest: sha256:abc\"}"};
  size_t i;
  (void) state;
  memset(&st, 0, sizeof(st));
  for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
    json_t *j = json_loads(lines[i], 0, NULL);
    assert_non_null(j);
    tpuci__pull_state_line(&st, j);
    json_decref(j);
  }
  tpuci__pull_state_sum(&st, &cur, &tot, &layers);
  assert_int_equal(layers, 3);
  assert_int_equal(cur, 705);
  assert_int_equal(tot, 1050);
  {
    json_t *j = json_loads("{\"status\":\"Download complete\",\"id\":\"l1\"}", 0, NULL);
    assert_int_equal(tpuci__pull_state_line(&st, j), 1);
    /* Extracting counts the same bytes again: not summed. */
    json_decref(j);
    j = json_loads("{\"status\":\"Extracting\",\"progressDetail\":{\"current\":999,\"total\":1000},\"id\":\"l1\"}", 0, NULL);
    assert_int_equal(tpuci__pull_state_line(&st, j), 0);
    json_decref(j);
  }
  tpuci__pull_state_sum(&st, &cur, &tot, &layers);
  assert_int_equal(cur, 1005);
  tpuci__pull_state_free(&st);

  assert_true(tpuci__pull_denied(401, ""));
  assert_true(tpuci__pull_denied(500, "Head \"https://r/v2/x/manifests/1\": no basic auth credentials"));
  assert_true(tpuci__pull_denied(404, "pull access denied for x, repository does not exist or may require 'docker login'"));
  assert_true(tpuci__pull_denied(500, "unauthorized: authentication required"));
  assert_false(tpuci__pull_denied(404, "manifest for x:1 not found: manifest unknown"));
  assert_false(tpuci__pull_denied(500, NULL));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hosts),          cmocka_unit_test(test_pick),
      cmocka_unit_test(test_pick_errors),    cmocka_unit_test(test_helper_answer),
      cmocka_unit_test(test_progress),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
