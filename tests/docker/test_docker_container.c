/* Container create bodies, names and labels. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "runtime/engine/container.h"

static const char *str(json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  if (s == NULL) fail_msg("no string %s", key);
  return s;
}

static void test_full_body(void **state) {
  tpuci__strv_t argv = {0}, env = {0};
  tpuci__kvlist_t labels = {0};
  tpuci__mount_t mounts[2] = {{"/host/src", "/src", 0}, {"/host/data", "/data", 1}};
  tpuci__ctr_spec_t s;
  json_t *b, *hc, *a;
  (void) state;

  tpuci__strv_push(&argv, "/bin/sh");
  tpuci__strv_push(&argv, "-c");
  tpuci__strv_push(&argv, "echo \"$A\"");
  tpuci__strv_push(&env, "TPUCI=1");
  tpuci__strv_push(&env, "A=x=y");
  tpuci__ctr_labels(&labels, "r1", "unit", "unit[py=3.11]", 2, 1);
  memset(&s, 0, sizeof(s));
  s.image = "tpuci-test/busybox:1";
  s.argv = &argv;
  s.env = &env;
  s.workdir = "/src";
  s.mounts = mounts;
  s.nmounts = 2;
  s.cpus = 1.5;
  s.memory_bytes = 16u << 20;
  s.network = "none";
  s.labels = &labels;
  b = tpuci__ctr_create_body(&s);

  assert_string_equal(str(b, "Image"), "tpuci-test/busybox:1");
  a = json_object_get(b, "Cmd");
  assert_int_equal(json_array_size(a), 3);
  assert_string_equal(json_string_value(json_array_get(a, 2)), "echo \"$A\"");
  a = json_object_get(b, "Env");
  assert_int_equal(json_array_size(a), 2);
  assert_string_equal(json_string_value(json_array_get(a, 1)), "A=x=y");
  assert_string_equal(str(b, "WorkingDir"), "/src");
  assert_true(json_is_false(json_object_get(b, "Tty")));
  assert_true(json_is_false(json_object_get(b, "OpenStdin")));

  a = json_object_get(b, "Labels");
  assert_string_equal(str(a, "tpuci.run"), "r1");
  assert_string_equal(str(a, "tpuci.job"), "unit");
  assert_string_equal(str(a, "tpuci.instance"), "unit[py=3.11]");
  assert_string_equal(str(a, "tpuci.attempt"), "2");
  assert_int_equal(atol(str(a, "tpuci.pid")), (long) getpid());
  assert_string_equal(str(a, "tpuci.host"), tpuci__docker_hostname());
  assert_string_equal(str(a, "tpuci.keep"), "1");

  hc = json_object_get(b, "HostConfig");
  assert_true(json_is_true(json_object_get(hc, "Init")));
  assert_null(json_object_get(hc, "Binds"));
  a = json_object_get(hc, "Mounts");
  assert_int_equal(json_array_size(a), 2);
  assert_string_equal(str(json_array_get(a, 0), "Type"), "bind");
  assert_string_equal(str(json_array_get(a, 0), "Source"), "/host/src");
  assert_string_equal(str(json_array_get(a, 0), "Target"), "/src");
  assert_true(json_is_false(json_object_get(json_array_get(a, 0), "ReadOnly")));
  assert_string_equal(str(json_array_get(a, 1), "Source"), "/host/data");
  assert_string_equal(str(json_array_get(a, 1), "Target"), "/data");
  assert_true(json_is_true(json_object_get(json_array_get(a, 1), "ReadOnly")));
  assert_int_equal(json_integer_value(json_object_get(hc, "NanoCpus")), 1500000000);
  assert_int_equal(json_integer_value(json_object_get(hc, "Memory")), 16 << 20);
  assert_int_equal(json_integer_value(json_object_get(hc, "MemorySwap")), 16 << 20);
  assert_string_equal(str(hc, "NetworkMode"), "none");

  json_decref(b);
  tpuci__strv_free(&argv);
  tpuci__strv_free(&env);
  tpuci__kv_free(&labels);
}

/* Unset limits and options are left out, so the engine's defaults hold. */
static void test_minimal_body(void **state) {
  tpuci__ctr_spec_t s;
  tpuci__kvlist_t labels = {0};
  json_t *b, *hc;
  (void) state;
  tpuci__ctr_labels(&labels, "r", "j", "j", 1, 0);
  memset(&s, 0, sizeof(s));
  s.image = "img";
  s.labels = &labels;
  b = tpuci__ctr_create_body(&s);
  assert_null(json_object_get(b, "Cmd"));
  assert_null(json_object_get(b, "WorkingDir"));
  assert_int_equal(json_array_size(json_object_get(b, "Env")), 0);
  assert_null(json_object_get(json_object_get(b, "Labels"), "tpuci.keep"));
  hc = json_object_get(b, "HostConfig");
  assert_true(json_is_true(json_object_get(hc, "Init")));
  assert_null(json_object_get(hc, "Mounts"));
  assert_null(json_object_get(hc, "NanoCpus"));
  assert_null(json_object_get(hc, "Memory"));
  assert_null(json_object_get(hc, "MemorySwap"));
  assert_null(json_object_get(hc, "NetworkMode"));
  json_decref(b);
  tpuci__kv_free(&labels);
}

static int valid_name(const char *n) {
  const char *p;
  if (!((n[0] >= 'a' && n[0] <= 'z') || (n[0] >= 'A' && n[0] <= 'Z') ||
        (n[0] >= '0' && n[0] <= '9')))
    return 0;
  for (p = n; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
          (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' || *p == '-'))
      return 0;
  return 1;
}

/* The accelerator options as HostConfig fields: what `docker run
 * --shm-size --ipc --privileged --device --cap-add --cap-drop --ulimit
 * --gpus --sysctl` sends. */
static void test_accelerator_body(void **state) {
  tpuci__ctr_opts_t c;
  tpuci__ulimit_t ulimits[2] = {{"memlock", -1, -1}, {"nofile", 4096, 8192}};
  tpuci__device_t devices[2] = {{"/dev/null", "/dev/accel0", "rw", 0},
                                {"/dev/accel1", NULL, NULL, 0}};
  tpuci__gpus_t gpus;
  tpuci__ctr_spec_t s;
  json_t *b, *hc, *a, *o;
  (void) state;

  memset(&c, 0, sizeof(c));
  memset(&gpus, 0, sizeof(gpus));
  c.shm_bytes = 16ull << 30;
  c.ipc = "shareable";
  c.privileged = 1;
  tpuci__strv_push(&c.cap_add, "SYS_ADMIN");
  tpuci__strv_push(&c.cap_add, "ALL");
  tpuci__strv_push(&c.cap_drop, "NET_RAW");
  c.ulimits = ulimits;
  c.nulimits = 2;
  gpus.count = -1;
  tpuci__strv_push(&gpus.caps, "gpu");
  tpuci__strv_push(&gpus.caps, "utility");
  c.gpus = &gpus;
  tpuci__kv_set(&c.sysctls, "net.core.somaxconn", "1024");
  memset(&s, 0, sizeof(s));
  s.image = "x";
  s.ctr = &c;
  s.devices = devices;
  s.ndevices = 2;
  b = tpuci__ctr_create_body(&s);
  hc = json_object_get(b, "HostConfig");
  assert_true(json_integer_value(json_object_get(hc, "ShmSize")) == 16ll << 30);
  assert_string_equal(str(hc, "IpcMode"), "shareable");
  assert_true(json_is_true(json_object_get(hc, "Privileged")));
  a = json_object_get(hc, "Devices");
  assert_int_equal(json_array_size(a), 2);
  assert_string_equal(str(json_array_get(a, 0), "PathOnHost"), "/dev/null");
  assert_string_equal(str(json_array_get(a, 0), "PathInContainer"), "/dev/accel0");
  assert_string_equal(str(json_array_get(a, 0), "CgroupPermissions"), "rw");
  assert_string_equal(str(json_array_get(a, 1), "PathInContainer"), "/dev/accel1");
  assert_string_equal(str(json_array_get(a, 1), "CgroupPermissions"), "rwm");
  a = json_object_get(hc, "CapAdd");
  assert_string_equal(json_string_value(json_array_get(a, 0)), "CAP_SYS_ADMIN");
  assert_string_equal(json_string_value(json_array_get(a, 1)), "ALL");
  assert_string_equal(json_string_value(json_array_get(json_object_get(hc, "CapDrop"), 0)),
                      "CAP_NET_RAW");
  a = json_object_get(hc, "Ulimits");
  assert_int_equal(json_array_size(a), 2);
  assert_string_equal(str(json_array_get(a, 0), "Name"), "memlock");
  assert_int_equal(json_integer_value(json_object_get(json_array_get(a, 0), "Soft")), -1);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(a, 0), "Hard")), -1);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(a, 1), "Soft")), 4096);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(a, 1), "Hard")), 8192);
  assert_string_equal(str(json_object_get(hc, "Sysctls"), "net.core.somaxconn"), "1024");
  /* gpus = "all": Docker's --gpus all, Count -1 and one capability set. */
  a = json_object_get(hc, "DeviceRequests");
  assert_int_equal(json_array_size(a), 1);
  o = json_array_get(a, 0);
  assert_null(json_object_get(o, "Driver"));
  assert_int_equal(json_integer_value(json_object_get(o, "Count")), -1);
  assert_null(json_object_get(o, "DeviceIDs"));
  a = json_object_get(o, "Capabilities");
  assert_int_equal(json_array_size(a), 1);
  assert_int_equal(json_array_size(json_array_get(a, 0)), 2);
  assert_string_equal(json_string_value(json_array_get(json_array_get(a, 0), 1)), "utility");
  assert_true(json_is_object(json_object_get(o, "Options")));
  json_decref(b);

  /* Ids and a driver: Count 0, DeviceIDs. */
  gpus.count = 0;
  tpuci__strv_push(&gpus.ids, "0");
  tpuci__strv_push(&gpus.ids, "GPU-3c0e");
  gpus.driver = "nvidia";
  b = tpuci__ctr_create_body(&s);
  o = json_array_get(json_object_get(json_object_get(b, "HostConfig"), "DeviceRequests"), 0);
  assert_string_equal(str(o, "Driver"), "nvidia");
  assert_int_equal(json_integer_value(json_object_get(o, "Count")), 0);
  assert_int_equal(json_array_size(json_object_get(o, "DeviceIDs")), 2);
  assert_string_equal(json_string_value(json_array_get(json_object_get(o, "DeviceIDs"), 1)),
                      "GPU-3c0e");
  json_decref(b);

  /* Nothing of it without options. */
  s.ctr = NULL;
  s.ndevices = 0;
  b = tpuci__ctr_create_body(&s);
  hc = json_object_get(b, "HostConfig");
  assert_null(json_object_get(hc, "ShmSize"));
  assert_null(json_object_get(hc, "Privileged"));
  assert_null(json_object_get(hc, "Devices"));
  assert_null(json_object_get(hc, "DeviceRequests"));
  assert_null(json_object_get(hc, "Ulimits"));
  json_decref(b);
  tpuci__strv_free(&c.cap_add);
  tpuci__strv_free(&c.cap_drop);
  tpuci__strv_free(&gpus.caps);
  tpuci__strv_free(&gpus.ids);
  tpuci__kv_free(&c.sysctls);
}

/* Globs are expanded on this machine, each match at its own path; a
 * glob that matches nothing names the job and the pattern. */
static void test_devices_expand(void **state) {
  tpuci__device_t given[4] = {{"/dev/null", "/dev/accel0", "rwm", 0},
                              {"/dev/[nz][ue][lr][lo]", NULL, "rw", 1},
                              {"/dev/zero", NULL, "r", 0},
                              {"/dev/tpuci-none-*", NULL, "rwm", 1}};
  tpuci__ctr_opts_t c;
  tpuci__device_t *out;
  tpuci__err_t err = {0, NULL};
  size_t n;
  (void) state;

  memset(&c, 0, sizeof(c));
  c.devices = given;
  c.ndevices = 3;
  assert_int_equal(tpuci__ctr_devices(&c, "spec.lua:3", "tpu", &out, &n, &err), 0);
  /* /dev/null and /dev/zero from the glob; the later /dev/zero entry is
   * already given. */
  assert_int_equal(n, 3);
  assert_string_equal(out[0].host, "/dev/null");
  assert_string_equal(out[0].target, "/dev/accel0");
  assert_string_equal(out[1].host, "/dev/null");
  assert_string_equal(out[1].target, "/dev/null");
  assert_string_equal(out[1].perms, "rw");
  assert_string_equal(out[2].host, "/dev/zero");
  assert_string_equal(out[2].target, "/dev/zero");
  assert_false(out[2].glob);
  tpuci__ctr_devices_free(out, n);

  c.ndevices = 4;
  assert_int_equal(tpuci__ctr_devices(&c, "spec.lua:3", "tpu", &out, &n, &err), TPUCI_EUSAGE);
  assert_null(out);
  assert_int_equal(n, 0);
  assert_non_null(strstr(err.msg, "spec.lua:3: job 'tpu': devices: '/dev/tpuci-none-*' "
                                  "matches no device on this machine"));
  tpuci__err_clear(&err);

  assert_int_equal(tpuci__ctr_devices(NULL, NULL, "x", &out, &n, &err), 0);
  assert_int_equal(n, 0);
}

static void test_sanitize(void **state) {
  char *s;
  (void) state;
  s = tpuci__docker_sanitize("a b/c:d[e=f,g]-h_i.j");
  assert_string_equal(s, "a_b_c_d_e_f_g_-h_i.j");
  free(s);
  s = tpuci__docker_sanitize("caf\xc3\xa9");
  assert_string_equal(s, "caf__");
  free(s);
}

static void test_names(void **state) {
  char *a, *b, *c, *d;
  char longname[400];
  (void) state;

  /* A clean name is kept as it is. */
  a = tpuci__ctr_name("20261202-1", "lint", 1);
  assert_string_equal(a, "tpuci-20261202-1-lint-1");
  free(a);

  /* Sanitised names get a hash, so that distinct instances differ. */
  a = tpuci__ctr_name("r", "unit[py=3.11]", 2);
  b = tpuci__ctr_name("r", "unit(py=3.11)", 2);
  assert_true(valid_name(a));
  assert_true(valid_name(b));
  assert_string_not_equal(a, b);
  assert_int_equal(strncmp(a, "tpuci-r-unit_py_3.11-", 21), 0);
  assert_string_equal(a + strlen(a) - 2, "-2");
  free(a);
  free(b);

  /* Long names are capped, still distinct and valid. */
  memset(longname, 'x', sizeof(longname) - 2);
  longname[sizeof(longname) - 2] = '1';
  longname[sizeof(longname) - 1] = '\0';
  c = tpuci__ctr_name("run", longname, 3);
  longname[sizeof(longname) - 2] = '2';
  d = tpuci__ctr_name("run", longname, 3);
  assert_true(strlen(c) <= TPUCI__NAME_MAX);
  assert_true(strlen(d) <= TPUCI__NAME_MAX);
  assert_true(valid_name(c));
  assert_string_not_equal(c, d);
  assert_string_equal(c + strlen(c) - 2, "-3");
  free(c);
  free(d);

  /* Odd run ids are sanitised and capped too. */
  memset(longname, 'r', 200);
  longname[200] = '\0';
  c = tpuci__ctr_name(longname, "a b", 10);
  assert_true(strlen(c) <= TPUCI__NAME_MAX);
  assert_true(valid_name(c));
  free(c);
}

static void test_mount(void **state) {
  tpuci__mount_t m = {"/a b:c", "/c", 1};
  json_t *j;
  (void) state;
  j = tpuci__ctr_mount(&m);
  assert_string_equal(str(j, "Type"), "bind");
  assert_string_equal(str(j, "Source"), "/a b:c");
  assert_string_equal(str(j, "Target"), "/c");
  assert_true(json_is_true(json_object_get(j, "ReadOnly")));
  json_decref(j);
}

/* A container made from a body carries all its labels; one of another
 * run, attempt or process does not. */
static void test_is_ours(void **state) {
  json_t *body = json_pack("{s:{s:s, s:s}}", "Labels", "tpuci.run", "r", "tpuci.pid", "7");
  json_t *same = json_pack("{s:{s:{s:s, s:s, s:s}}}", "Config", "Labels", "tpuci.run", "r",
                           "tpuci.pid", "7", "other", "x");
  json_t *other = json_pack("{s:{s:{s:s, s:s}}}", "Config", "Labels", "tpuci.run", "r",
                            "tpuci.pid", "8");
  json_t *bare = json_pack("{s:{}}", "Config");
  json_t *empty = json_pack("{s:{}}", "Labels");
  (void) state;
  assert_true(tpuci__ctr_is_ours(same, body));
  assert_false(tpuci__ctr_is_ours(other, body));
  assert_false(tpuci__ctr_is_ours(bare, body));
  assert_false(tpuci__ctr_is_ours(NULL, body));
  assert_false(tpuci__ctr_is_ours(same, empty));
  json_decref(body);
  json_decref(same);
  json_decref(other);
  json_decref(bare);
  json_decref(empty);
}

static void test_alive(void **state) {
  json_t *l;
  char pid[32];
  char *start = tpuci__docker_pidstart((long) getpid());
  (void) state;
  snprintf(pid, sizeof(pid), "%ld", (long) getpid());

  l = json_pack("{s:s, s:s}", "tpuci.host", tpuci__docker_hostname(), "tpuci.pid", pid);
  assert_int_equal(tpuci__docker_run_alive(l), 1);
  if (start != NULL) {
    json_object_set_new(l, "tpuci.pidstart", json_string(start));
    assert_int_equal(tpuci__docker_run_alive(l), 1);
    /* The same pid, started at another time: a recycled pid. */
    json_object_set_new(l, "tpuci.pidstart", json_string("1"));
    assert_int_equal(tpuci__docker_run_alive(l), 0);
  }
  json_decref(l);

  /* No such process. */
  l = json_pack("{s:s, s:s}", "tpuci.host", tpuci__docker_hostname(), "tpuci.pid", "999999999");
  assert_int_equal(tpuci__docker_run_alive(l), 0);
  json_decref(l);
  /* Another host: unknown. */
  l = json_pack("{s:s, s:s}", "tpuci.host", "elsewhere.invalid", "tpuci.pid", pid);
  assert_int_equal(tpuci__docker_run_alive(l), -1);
  json_decref(l);
  /* Missing labels: dead. */
  l = json_object();
  assert_int_equal(tpuci__docker_run_alive(l), 0);
  json_decref(l);
  free(start);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_full_body), cmocka_unit_test(test_minimal_body),
      cmocka_unit_test(test_accelerator_body), cmocka_unit_test(test_devices_expand),
      cmocka_unit_test(test_sanitize),  cmocka_unit_test(test_names),
      cmocka_unit_test(test_mount), cmocka_unit_test(test_is_ours),      cmocka_unit_test(test_alive),
  };
  return cmocka_run_group_tests_name("docker_container", tests, NULL, NULL);
}
