/* DOCKER_HOST parsing and API version negotiation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/engine/engine.h"
#include "runtime/engine/host.h"

static void ok(const char *value, const char *unix_path, const char *url,
               const char *display, int from_env) {
  tpuci__docker_host_t h;
  tpuci__err_t err = {0};
  assert_int_equal(tpuci__docker_host_parse(value, &h, &err), 0);
  if (unix_path) assert_string_equal(h.unix_path, unix_path);
  else assert_null(h.unix_path);
  assert_string_equal(h.url_base, url);
  assert_string_equal(h.display, display);
  assert_int_equal(h.from_env, from_env);
  tpuci__docker_host_free(&h);
}

static void bad(const char *value, const char *needle) {
  tpuci__docker_host_t h;
  tpuci__err_t err = {0};
  assert_int_equal(tpuci__docker_host_parse(value, &h, &err), TPUCI_EUSAGE);
  assert_non_null(err.msg);
  if (strstr(err.msg, needle) == NULL) fail_msg("'%s' lacks '%s'", err.msg, needle);
  assert_non_null(strstr(err.msg, value));
  tpuci__err_clear(&err);
}

static void test_default(void **state) {
  tpuci__docker_host_t h;
  tpuci__err_t err = {0};
  char *d;
  (void) state;
  ok(NULL, "/var/run/docker.sock", "http://localhost", "unix:///var/run/docker.sock", 0);
  ok("", "/var/run/docker.sock", "http://localhost", "unix:///var/run/docker.sock", 0);
  tpuci__docker_host_parse(NULL, &h, &err);
  d = tpuci__docker_host_describe(&h);
  assert_string_equal(d, "DOCKER_HOST unset, tried unix:///var/run/docker.sock");
  free(d);
  tpuci__docker_host_free(&h);
}

static void test_unix(void **state) {
  tpuci__docker_host_t h;
  tpuci__err_t err = {0};
  char *d;
  (void) state;
  ok("unix:///tmp/x/docker.sock", "/tmp/x/docker.sock", "http://localhost", "unix:///tmp/x/docker.sock", 1);
  ok("unix://rel.sock", "rel.sock", "http://localhost", "unix://rel.sock", 1);
  tpuci__docker_host_parse("unix:///nonexistent", &h, &err);
  d = tpuci__docker_host_describe(&h);
  assert_string_equal(d, "DOCKER_HOST=unix:///nonexistent");
  free(d);
  tpuci__docker_host_free(&h);
}

static void test_tcp(void **state) {
  (void) state;
  ok("tcp://127.0.0.1:2375", NULL, "http://127.0.0.1:2375", "tcp://127.0.0.1:2375", 1);
  ok("tcp://engine.local", NULL, "http://engine.local:2375", "tcp://engine.local:2375", 1);
  ok("tcp://localhost:12345/", NULL, "http://localhost:12345", "tcp://localhost:12345", 1);
  ok("http://h:1", NULL, "http://h:1", "tcp://h:1", 1);
  ok("tcp://[::1]:2375", NULL, "http://[::1]:2375", "tcp://[::1]:2375", 1);
}

/* ssh://[user@]host[:port]: the engine of another machine over ssh. */
static void ssh_ok(const char *value, const char *user, const char *host, int port,
                   const char *display) {
  tpuci__docker_host_t h;
  tpuci__err_t err = {0};
  char *d;
  assert_int_equal(tpuci__docker_host_parse(value, &h, &err), 0);
  assert_null(h.unix_path);
  assert_int_equal(h.tls, 0);
  if (user) assert_string_equal(h.ssh_user, user);
  else assert_null(h.ssh_user);
  assert_string_equal(h.ssh_host, host);
  assert_int_equal(h.ssh_port, port);
  assert_null(h.ssh_config);
  assert_string_equal(h.display, display);
  assert_int_equal(tpuci__docker_host_remote(&h), 1);
  assert_string_equal(tpuci__docker_host_via(&h), "over ssh");
  d = tpuci__docker_host_describe(&h);
  assert_non_null(strstr(d, display));
  free(d);
  tpuci__docker_host_free(&h);
}

static void test_ssh(void **state) {
  tpuci__docker_host_t h, c;
  (void) state;
  ssh_ok("ssh://me@host", "me", "host", 0, "ssh://me@host");
  ssh_ok("ssh://10.0.0.2", NULL, "10.0.0.2", 0, "ssh://10.0.0.2");
  ssh_ok("ssh://root@10.0.0.2:2222/", "root", "10.0.0.2", 2222, "ssh://root@10.0.0.2:2222");
  ssh_ok("ssh://ci_user.x@[fd00::2]:22", "ci_user.x", "fd00::2", 22,
         "ssh://ci_user.x@[fd00::2]:22");
  /* A worker of a `hosts` declaration, with its ssh config. */
  memset(&h, 0, sizeof(h));
  tpuci__docker_host_ssh(&h, "me", "10.0.0.3", 0, "/ci/ssh_config");
  assert_string_equal(h.display, "ssh://me@10.0.0.3");
  tpuci__docker_host_copy(&c, &h);
  assert_string_equal(c.ssh_config, "/ci/ssh_config");
  assert_string_equal(c.ssh_user, "me");
  tpuci__docker_host_free(&h);
  tpuci__docker_host_free(&c);
}

static void test_bad(void **state) {
  (void) state;
  bad("ssh://me@host/path", "path after the host");
  bad("ssh://me@host?x=1", "path after the host");
  bad("ssh://-oProxyCommand=x", "bad host");
  bad("ssh://@host", "bad user");
  bad("ssh://m e@host", "bad user");
  bad("ssh://-me@host", "bad user");
  bad("ssh://host:0", "bad port");
  bad("ssh://host:22x", "bad port");
  bad("ssh://", "bad host");
  bad("npipe:////./pipe/docker_engine", "unsupported scheme");
  bad("fd://", "unsupported scheme");
  bad("/var/run/docker.sock", "unsupported scheme");
  bad("unix://", "no socket path");
  bad("tcp://h:0", "bad port");
  bad("tcp://h:99999", "bad port");
  bad("tcp://h:12x", "bad port");
  bad("tcp://h:1/base", "path");
  bad("tcp://", "bad host");
  bad("tcp://a b:1", "bad host");
}

static void test_api_pick(void **state) {
  int a = 0, b = 0;
  tpuci__err_t err = {0};
  (void) state;
  assert_int_equal(tpuci__docker_api_pick("1.41", &a, &b, &err), 0);
  assert_int_equal(a, 1);
  assert_int_equal(b, 41);
  assert_int_equal(tpuci__docker_api_pick("1.42", &a, &b, &err), 0);
  assert_int_equal(b, 42);
  assert_int_equal(tpuci__docker_api_pick("1.47", &a, &b, &err), 0);
  assert_int_equal(b, 43);
  assert_int_equal(tpuci__docker_api_pick("2.0", &a, &b, &err), 0);
  assert_int_equal(a, 1);
  assert_int_equal(b, 43);
  assert_int_equal(tpuci__docker_api_pick("1.40", &a, &b, &err), TPUCI_EENGINE);
  assert_non_null(strstr(err.msg, "1.40"));
  assert_non_null(strstr(err.msg, "1.41"));
  tpuci__err_clear(&err);
  assert_int_equal(tpuci__docker_api_pick("junk", &a, &b, &err), TPUCI_EENGINE);
  tpuci__err_clear(&err);
  assert_int_equal(tpuci__docker_api_pick(NULL, &a, &b, &err), TPUCI_EENGINE);
  tpuci__err_clear(&err);
}

static void test_escape(void **state) {
  char *s;
  (void) state;
  s = tpuci__http_escape("gcr.io/tpu-pytorch/xla:r1.5", 1);
  assert_string_equal(s, "gcr.io/tpu-pytorch/xla:r1.5");
  free(s);
  s = tpuci__http_escape("gcr.io/a:b c", 0);
  assert_string_equal(s, "gcr.io%2Fa%3Ab%20c");
  free(s);
  s = tpuci__http_escape("{\"label\":[\"tpuci.run\"]}", 0);
  assert_string_equal(s, "%7B%22label%22%3A%5B%22tpuci.run%22%5D%7D");
  free(s);
  /* A digest ref keeps its '@' and ':' in a path; the rest is escaped
   * piece by piece. */
  s = tpuci__http_escape("a/b c@sha256:0f~/", 1);
  assert_string_equal(s, "a/b%20c@sha256:0f~/");
  free(s);
  s = tpuci__http_escape("", 1);
  assert_string_equal(s, "");
  free(s);
  s = tpuci__http_escape("\xc3\xa9+%", 0);
  assert_string_equal(s, "%C3%A9%2B%25");
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_default),  cmocka_unit_test(test_unix),
      cmocka_unit_test(test_tcp),
      cmocka_unit_test(test_ssh),
      cmocka_unit_test(test_bad),
      cmocka_unit_test(test_api_pick), cmocka_unit_test(test_escape),
  };
  return cmocka_run_group_tests_name("docker_host", tests, NULL, NULL);
}
