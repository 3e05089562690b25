/* Podman's compatible service: telling it apart, the limits tpuci asks
 * for, hints for its errors, the OOM cause (runtime/engine/podman.h),
 * and the probe against this test's own socket. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "runtime/engine/podman.h"

/* GET /version answers, trimmed: podman 4.3.1 on Debian 12 and Docker
 * 20.10.24 (Debian's docker.io). */
static const char *podman_version =
    "{\"Platform\":{\"Name\":\"linux/amd64/debian-12\"},"
    "\"Components\":[{\"Name\":\"Podman Engine\",\"Version\":\"4.3.1\","
    "\"Details\":{\"APIVersion\":\"4.3.1\",\"MinAPIVersion\":\"4.0.0\"}},"
    "{\"Name\":\"Conmon\",\"Version\":\"conmon version 2.1.6\"},"
    "{\"Name\":\"OCI Runtime (runc)\",\"Version\":\"runc version 1.1.5\"}],"
    "\"Version\":\"4.3.1\",\"ApiVersion\":\"1.41\",\"MinAPIVersion\":\"1.24\"}";
static const char *docker_version =
    "{\"Platform\":{\"Name\":\"\"},\"Components\":[{\"Name\":\"Engine\","
    "\"Version\":\"20.10.24+dfsg1\"},{\"Name\":\"containerd\",\"Version\":"
    "\"1.6.20~ds1\"},{\"Name\":\"runc\",\"Version\":\"1.1.5+ds1\"}],"
    "\"Version\":\"20.10.24+dfsg1\",\"ApiVersion\":\"1.41\"}";

static void test_detect(void **state) {
  json_t *v;
  int major, minor;
  (void) state;
  v = json_loads(podman_version, 0, NULL);
  assert_int_equal(tpuci__podman_detect(v, &major, &minor), 1);
  assert_int_equal(major, 4);
  assert_int_equal(minor, 3);
  json_decref(v);
  v = json_loads(docker_version, 0, NULL);
  assert_int_equal(tpuci__podman_detect(v, &major, &minor), 0);
  json_decref(v);
  /* A podman component without a version: the top-level one. */
  v = json_pack("{s:[{s:s}], s:s}", "Components", "Name", "Podman Engine",
                "Version", "5.2.0");
  assert_int_equal(tpuci__podman_detect(v, &major, &minor), 1);
  assert_int_equal(major, 5);
  assert_int_equal(minor, 2);
  json_decref(v);
  /* No Components at all (old engines). */
  v = json_pack("{s:s}", "Version", "19.03");
  assert_int_equal(tpuci__podman_detect(v, &major, &minor), 0);
  json_decref(v);
}

static const char *limits_text =
    "Limit                     Soft Limit           Hard Limit           Units     \n"
    "Max cpu time              unlimited            unlimited            seconds   \n"
    "Max processes             32768                32768                processes \n"
    "Max open files            1024                 20000                files     \n"
    "Max locked memory         8388608              8388608              bytes     \n"
    "Max pending signals       96362                96362                signals   \n";

static void test_proc_limits(void **state) {
  unsigned long long nofile = 0, nproc = 0;
  (void) state;
  assert_int_equal(tpuci__proc_hard_limits(limits_text, &nofile, &nproc), 0);
  assert_true(nofile == 20000);
  assert_true(nproc == 32768);
  assert_int_equal(tpuci__proc_hard_limits(
                       "Max open files            1024                 unlimited            files\n"
                       "Max processes             5                    7                    processes\n",
                       &nofile, &nproc),
                   0);
  assert_true(nofile == ULLONG_MAX);
  assert_true(nproc == 7);
  assert_int_equal(tpuci__proc_hard_limits("Max open files 1 2 files\n", &nofile, &nproc), -1);
  assert_int_equal(tpuci__proc_hard_limits("", &nofile, &nproc), -1);
  assert_int_equal(tpuci__proc_hard_limits("Max open files x y\nMax processes 1 2\n",
                                           &nofile, &nproc), -1);
}

static void test_proc_cap(void **state) {
  (void) state;
  /* This machine: every capability but CAP_SYS_RESOURCE (24). */
  const char *status = "Name:\tpodman\nCapInh:\t0000000000000000\n"
                       "CapPrm:\t000001fffeffffff\nCapEff:\t000001fffeffffff\n";
  assert_int_equal(tpuci__proc_has_cap(status, 24), 0);
  assert_int_equal(tpuci__proc_has_cap(status, 21), 1);
  assert_int_equal(tpuci__proc_has_cap("CapEff:\t000001ffffffffff\n", 24), 1);
  assert_int_equal(tpuci__proc_has_cap("Name:\tx\n", 24), -1);
  assert_int_equal(tpuci__proc_has_cap("CapEff:\tzz\n", 24), -1);
}

static void test_decide(void **state) {
  tpuci__podman_limits_t l;
  (void) state;
  memset(&l, 0, sizeof(l));
  l.known = 1;
  l.uid = 0;
  l.nofile = 20000;
  l.nproc = 32768;
  tpuci__podman_limits_decide(&l);
  assert_true(l.needed);
  /* With CAP_SYS_RESOURCE podman raises them itself. */
  l.sys_resource = 1;
  tpuci__podman_limits_decide(&l);
  assert_false(l.needed);
  /* Rootless podman clamps to its own limits. */
  l.sys_resource = 0;
  l.uid = 1000;
  tpuci__podman_limits_decide(&l);
  assert_false(l.needed);
  /* Limits at podman's default: nothing to lower. */
  l.uid = 0;
  l.nofile = ULLONG_MAX;
  l.nproc = TPUCI__PODMAN_RLIMIT_DEFAULT;
  tpuci__podman_limits_decide(&l);
  assert_false(l.needed);
  /* One of them under it is enough. */
  l.nproc = 4096;
  tpuci__podman_limits_decide(&l);
  assert_true(l.needed);
  /* Unknown: nothing. */
  l.known = 0;
  tpuci__podman_limits_decide(&l);
  assert_false(l.needed);
}

static void test_body_limits(void **state) {
  tpuci__podman_limits_t l;
  json_t *body, *u;
  (void) state;
  memset(&l, 0, sizeof(l));
  body = json_pack("{s:s, s:{s:b}}", "Image", "x", "HostConfig", "Init", 1);
  tpuci__podman_body_limits(body, &l);
  assert_null(json_object_get(json_object_get(body, "HostConfig"), "Ulimits"));
  l.known = l.needed = 1;
  l.nofile = ULLONG_MAX; /* capped at podman's default */
  l.nproc = 32768;
  tpuci__podman_body_limits(body, &l);
  u = json_object_get(json_object_get(body, "HostConfig"), "Ulimits");
  assert_int_equal(json_array_size(u), 2);
  assert_string_equal(json_string_value(json_object_get(json_array_get(u, 0), "Name")), "nofile");
  assert_true(json_integer_value(json_object_get(json_array_get(u, 0), "Soft")) == 1048576);
  assert_true(json_integer_value(json_object_get(json_array_get(u, 0), "Hard")) == 1048576);
  assert_string_equal(json_string_value(json_object_get(json_array_get(u, 1), "Name")), "nproc");
  assert_true(json_integer_value(json_object_get(json_array_get(u, 1), "Soft")) == 32768);
  assert_true(json_integer_value(json_object_get(json_array_get(u, 1), "Hard")) == 32768);
  json_decref(body);

  /* The job's own ulimits stay; only what they leave out is added. */
  body = json_pack("{s:s, s:{s:[{s:s, s:i, s:i}, {s:s, s:i, s:i}]}}", "Image", "x",
                   "HostConfig", "Ulimits", "Name", "nofile", "Soft", 100, "Hard", 200,
                   "Name", "memlock", "Soft", -1, "Hard", -1);
  tpuci__podman_body_limits(body, &l);
  u = json_object_get(json_object_get(body, "HostConfig"), "Ulimits");
  assert_int_equal(json_array_size(u), 3);
  assert_string_equal(json_string_value(json_object_get(json_array_get(u, 0), "Name")), "nofile");
  assert_true(json_integer_value(json_object_get(json_array_get(u, 0), "Soft")) == 100);
  assert_string_equal(json_string_value(json_object_get(json_array_get(u, 1), "Name")), "memlock");
  assert_string_equal(json_string_value(json_object_get(json_array_get(u, 2), "Name")), "nproc");
  assert_true(json_integer_value(json_object_get(json_array_get(u, 2), "Soft")) == 32768);
  json_decref(body);
}

static void test_texts(void **state) {
  tpuci__podman_limits_t l;
  char *s;
  (void) state;
  memset(&l, 0, sizeof(l));
  s = tpuci__podman_limits_text(&l);
  assert_non_null(strstr(s, "default_ulimits"));
  free(s);
  l.known = l.needed = 1;
  l.pid = 42;
  l.nofile = 20000;
  l.nproc = 32768;
  s = tpuci__podman_limits_text(&l);
  assert_non_null(strstr(s, "pid 42"));
  assert_non_null(strstr(s, "20000 open files and 32768 processes"));
  free(s);

  assert_non_null(strstr(tpuci__podman_hint(
                             "container create: container-init binary not found on "
                             "the host: stat /usr/libexec/podman/catatonit: no such "
                             "file or directory"),
                         "init_path = \"/usr/bin/catatonit\""));
  assert_non_null(strstr(tpuci__podman_hint(
                             "runc: runc create failed: unable to start container "
                             "process: error during container init: error setting "
                             "rlimits for ready process: error setting rlimit type "
                             "7: operation not permitted: OCI permission denied"),
                         "default_ulimits"));
  assert_null(tpuci__podman_hint("no such image"));
  assert_null(tpuci__podman_hint(NULL));

  assert_true(tpuci__podman_not_running(
      500, "can only kill running containers. 1234 is in state exited: "
           "container state improper"));
  assert_false(tpuci__podman_not_running(500, "something else"));
  assert_false(tpuci__podman_not_running(404, "can only kill running containers"));

  s = tpuci__podman_oom_cause(NULL, 16u << 20, "4.3.1");
  assert_string_equal(s, "exit 137 (SIGKILL under a memory limit of 16 MiB: "
                         "probably out of memory, but podman 4.3.1 does not "
                         "report OOM kills)");
  free(s);
  s = tpuci__podman_oom_cause("worker-1: exit 137", 64u << 20, "4.9.0");
  assert_string_equal(s, "worker-1: exit 137 (SIGKILL under a memory limit of "
                         "64 MiB: probably out of memory, but podman 4.9.0 "
                         "does not report OOM kills)");
  free(s);
}

/* The probe against a socket of this process's own: the peer is this
 * process, with its own limits. */
static void test_probe(void **state) {
  char dir[] = "/tmp/tpuci-podman-probe.XXXXXX";
  char path[128];
  struct sockaddr_un sa;
  struct rlimit nofile, nproc;
  tpuci__podman_limits_t l;
  int fd;
  (void) state;

  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof(path), "%s/s.sock", dir);
  tpuci__podman_probe(path, &l);
  assert_false(l.known); /* no socket */
  tpuci__podman_probe(NULL, &l);
  assert_false(l.known);

  fd = socket(AF_UNIX, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  memset(&sa, 0, sizeof(sa));
  sa.sun_family = AF_UNIX;
  memcpy(sa.sun_path, path, strlen(path) + 1);
  assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
  assert_int_equal(listen(fd, 4), 0);
  tpuci__podman_probe(path, &l);
  assert_true(l.known);
  assert_int_equal(l.pid, (long) getpid());
  assert_int_equal(l.uid, (long) getuid());
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &nofile), 0);
  assert_int_equal(getrlimit(RLIMIT_NPROC, &nproc), 0);
  assert_true(l.nofile == (nofile.rlim_max == RLIM_INFINITY ? ULLONG_MAX
                                                            : (unsigned long long) nofile.rlim_max));
  assert_true(l.nproc == (nproc.rlim_max == RLIM_INFINITY ? ULLONG_MAX
                                                          : (unsigned long long) nproc.rlim_max));
  close(fd);
  unlink(path);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_detect),     cmocka_unit_test(test_proc_limits),
      cmocka_unit_test(test_proc_cap),   cmocka_unit_test(test_decide),
      cmocka_unit_test(test_body_limits), cmocka_unit_test(test_texts),
      cmocka_unit_test(test_probe),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
