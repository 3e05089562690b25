/* The container options for accelerators (shm_size, ipc, privileged,
 * devices, cap_add, cap_drop, ulimits, gpus, sysctls): what each form
 * gives in the plan, its JSON and text, what the runtimes refuse, and the
 * errors that are not one bad spec file each (tests/spec/bad/ has
 * those). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "plan/plan.h"
#include "spec/spec.h"
#include "spec_fixture.h"

static int load(const char *src) { return load_with(src, "/srv/proj", 0, 0); }

/* The options of the only job `job "x" { image = ..., run = ..., <body> }`. */
static const tpuci__ctr_opts_t *opts(const char *body) {
  char *src = tpuci__printf("job \"x\" { image = \"bb:1\", run = \"true\", %s }", body);
  int r = load(src);
  free(src);
  if (r != 0) fail_msg("load failed (%d): %s", r, err.msg ? err.msg : "");
  assert_int_equal(plan.ninstances, 1);
  return &plan.instances[0].ctr;
}

/* Loading `job "x" { image, run, <body> }` fails with `want` in the
 * message. */
static void refused(const char *body, const char *want) {
  char *src = tpuci__printf("job \"x\" { image = \"bb:1\", run = \"true\", %s }", body);
  int r = load(src);
  free(src);
  if (r != TPUCI_ESPEC || err.msg == NULL || strstr(err.msg, want) == NULL)
    fail_msg("%s: expected a spec error with '%s', got %d: %s", body, want, r,
             err.msg ? err.msg : "(none)");
  assert_int_equal(strncmp(err.msg, "spec.lua:1: job 'x': ", 21), 0);
  assert_int_equal(plan.ninstances, 0);
}

static void test_none(void **state) {
  const tpuci__ctr_opts_t *c;
  json_t *j;
  (void) state;
  c = opts("cpus = 1");
  assert_false(tpuci__ctr_opts_any(c));
  j = tpuci__ctr_opts_json(c);
  assert_int_equal(json_object_size(j), 0);
  json_decref(j);
}

static void test_scalars(void **state) {
  const tpuci__ctr_opts_t *c;
  (void) state;
  c = opts("shm_size = \"16g\", privileged = true");
  assert_true(tpuci__ctr_opts_any(c));
  assert_true(c->shm_bytes == 16ull << 30);
  assert_true(c->privileged);
  c = opts("ipc = \"host\"");
  assert_string_equal(c->ipc, "host");
  c = opts("shm_size = 1048576, ipc = \"private\", privileged = false");
  assert_true(c->shm_bytes == 1048576);
  assert_string_equal(c->ipc, "private");
  assert_false(c->privileged);
  c = opts("ipc = \"shareable\"");
  assert_string_equal(c->ipc, "shareable");
  refused("ipc = \"hots\"", "ipc: unknown IPC mode 'hots', did you mean 'host'?");
  refused("ipc = \"container:x\"", "(use 'host', 'private' or 'shareable')");
  refused("privileged = 1", "privileged: expected true or false");
  refused("shm_size = \"16q\"", "shm_size: bad size '16q'");
  refused("shm_size = 0", "shm_size: must be more than 0");
}

static void test_devices(void **state) {
  const tpuci__ctr_opts_t *c;
  (void) state;
  c = opts("devices = { \"/dev/accel0\", \"/dev/null:/dev/accel1:rwm\", "
           "\"/dev/vfio/*\", \"/dev/zero:r\", \"/dev/full:/dev/f\" }");
  assert_int_equal(c->ndevices, 5);
  assert_string_equal(c->devices[0].host, "/dev/accel0");
  assert_null(c->devices[0].target);
  assert_string_equal(c->devices[0].perms, "rwm");
  assert_false(c->devices[0].glob);
  assert_string_equal(c->devices[1].host, "/dev/null");
  assert_string_equal(c->devices[1].target, "/dev/accel1");
  assert_string_equal(c->devices[2].host, "/dev/vfio/*");
  assert_true(c->devices[2].glob);
  assert_null(c->devices[2].target);
  assert_string_equal(c->devices[3].perms, "r");
  assert_null(c->devices[3].target);
  assert_string_equal(c->devices[4].target, "/dev/f");
  assert_string_equal(c->devices[4].perms, "rwm");
  c = opts("devices = { \"/dev/accel[0-3]:rw\" }");
  assert_true(c->devices[0].glob);
  assert_string_equal(c->devices[0].perms, "rw");

  refused("devices = \"/dev/accel0\"", "devices: expected a list like { \"/dev/accel0\" }");
  refused("devices = { \"dev/accel0\" }", "devices[1]: the host path must be absolute");
  refused("devices = { \"/dev/null:accel\" }",
          "devices[1]: permissions are letters of 'rwm', each at most once, got 'accel'");
  refused("devices = { \"/dev/null:/dev/a:rwx\" }", "got 'rwx'");
  refused("devices = { \"/dev/null:/dev/a:rr\" }", "got 'rr'");
  refused("devices = { \"/dev/null:x:rw\" }", "the container path must be absolute");
  refused("devices = { \"/a:/b:rw:x\" }", "expected HOST[:CONTAINER][:PERMISSIONS]");
  refused("devices = { \"/dev/accel*:/dev/x\" }", "a glob takes no container path");
  refused("devices = { \"/dev/a:/dev/x*\" }", "the container path must not hold");
  refused("devices = { \"/dev/a\", \"/dev/b:/dev/a\" }",
          "devices[2]: '/dev/a' is already given by devices[1]");
  refused("devices = { \"\" }", "devices[1]: must not be empty");
  refused("devices = { host = \"/dev/a\" }", "devices.host: unexpected key");
}

static void test_caps(void **state) {
  const tpuci__ctr_opts_t *c;
  char *name;
  (void) state;
  c = opts("cap_add = { \"sys_admin\", \"CAP_NET_ADMIN\", \"IPC_LOCK\" }, "
           "cap_drop = { \"ALL\" }");
  assert_int_equal(c->cap_add.len, 3);
  /* Sorted, upper-case, without CAP_. */
  assert_string_equal(c->cap_add.items[0], "IPC_LOCK");
  assert_string_equal(c->cap_add.items[1], "NET_ADMIN");
  assert_string_equal(c->cap_add.items[2], "SYS_ADMIN");
  assert_string_equal(c->cap_drop.items[0], "ALL");
  name = tpuci__cap_engine_name("SYS_ADMIN");
  assert_string_equal(name, "CAP_SYS_ADMIN");
  free(name);
  name = tpuci__cap_engine_name("ALL");
  assert_string_equal(name, "ALL");
  free(name);
  refused("cap_add = { \"SYS_ADMN\" }",
          "cap_add[1]: unknown capability 'SYS_ADMN', did you mean 'SYS_ADMIN'?");
  refused("cap_add = { \"TIME_TRAVEL\" }",
          "cap_add[1]: unknown capability 'TIME_TRAVEL' (capabilities(7)");
  refused("cap_add = { \"NET_RAW\", \"cap_net_raw\" }", "cap_add[2]: 'NET_RAW' is given twice");
  refused("cap_add = { \"NET_RAW\" }, cap_drop = { \"NET_RAW\" }",
          "cap_drop: 'NET_RAW' is in cap_add too");
  refused("cap_drop = \"ALL\"", "cap_drop: expected a list like { \"SYS_ADMIN\" }");
}

static void test_ulimits(void **state) {
  const tpuci__ctr_opts_t *c;
  (void) state;
  c = opts("ulimits = { memlock = -1, nofile = { soft = 4096, hard = 8192 }, core = 0 }");
  assert_int_equal(c->nulimits, 3);
  assert_string_equal(c->ulimits[0].name, "core");
  assert_true(c->ulimits[0].soft == 0 && c->ulimits[0].hard == 0);
  assert_string_equal(c->ulimits[1].name, "memlock");
  assert_true(c->ulimits[1].soft == -1 && c->ulimits[1].hard == -1);
  assert_string_equal(c->ulimits[2].name, "nofile");
  assert_true(c->ulimits[2].soft == 4096 && c->ulimits[2].hard == 8192);
  c = opts("ulimits = { stack = { soft = 8192, hard = -1 } }");
  assert_true(c->ulimits[0].soft == 8192 && c->ulimits[0].hard == -1);

  refused("ulimits = { nofiles = 10 }", "ulimits.nofiles: unknown limit 'nofiles', did you mean 'nofile'?");
  refused("ulimits = { nofile = { soft = 10 } }", "ulimits.nofile.hard: missing");
  refused("ulimits = { nofile = { soft = 10, hard = 5 } }",
          "ulimits.nofile: the soft limit (10) is above the hard limit (5)");
  refused("ulimits = { nofile = { soft = -1, hard = 5 } }",
          "the soft limit (unlimited) is above the hard limit (5)");
  refused("ulimits = { nofile = { soft = 1, hard = 2, max = 3 } }",
          "ulimits.nofile.max: unknown key");
  refused("ulimits = { nofile = -2 }", "ulimits.nofile: must be between -1 and");
  refused("ulimits = { nofile = 1.5 }", "ulimits.nofile: expected a whole number");
  refused("ulimits = { nofile = \"4096\" }",
          "ulimits.nofile: expected a number (-1: unlimited) or { soft = ..., hard = ... }");
  refused("ulimits = { 4096 }", "ulimits[1]: keys are limit names");
}

static void test_gpus(void **state) {
  const tpuci__ctr_opts_t *c;
  (void) state;
  c = opts("gpus = \"all\"");
  assert_int_equal(c->gpus->count, -1);
  assert_int_equal(c->gpus->ids.len, 0);
  assert_null(c->gpus->driver);
  assert_int_equal(c->gpus->caps.len, 1);
  assert_string_equal(c->gpus->caps.items[0], "gpu");
  c = opts("gpus = 2");
  assert_int_equal(c->gpus->count, 2);
  c = opts("gpus = { \"0\", 1, \"GPU-3c0e\" }");
  assert_int_equal(c->gpus->count, 0);
  assert_int_equal(c->gpus->ids.len, 3);
  assert_string_equal(c->gpus->ids.items[1], "1");
  assert_string_equal(c->gpus->ids.items[2], "GPU-3c0e");
  c = opts("gpus = { driver = \"nvidia\", capabilities = { \"gpu\", \"utility\" } }");
  assert_int_equal(c->gpus->count, -1);
  assert_string_equal(c->gpus->driver, "nvidia");
  assert_int_equal(c->gpus->caps.len, 2);
  assert_string_equal(c->gpus->caps.items[1], "utility");
  c = opts("gpus = { count = 1 }");
  assert_int_equal(c->gpus->count, 1);
  c = opts("gpus = { count = \"all\" }");
  assert_int_equal(c->gpus->count, -1);
  c = opts("gpus = { device_ids = { \"2\" } }");
  assert_int_equal(c->gpus->count, 0);
  assert_string_equal(c->gpus->ids.items[0], "2");

  refused("gpus = 0", "gpus: must be between 1 and 1024 (or \"all\"), got 0");
  refused("gpus = \"al\"", "gpus: expected \"all\", a number of GPUs, a list of device ids");
  refused("gpus = {}", "gpus: empty");
  refused("gpus = { count = 1, device_ids = { \"0\" } }",
          "gpus: 'count' and 'device_ids' are exclusive");
  refused("gpus = { cout = 1 }", "gpus.cout: unknown key, did you mean 'count'?");
  refused("gpus = { \"0,1\" }", "gpus[1]: must not hold commas or spaces");
  refused("gpus = { capabilities = {} }", "gpus.capabilities: must not be empty");
  refused("gpus = { driver = \"a b\" }", "gpus.driver: must not contain spaces");
  refused("gpus = true", "gpus: expected \"all\"");
}

static void test_sysctls(void **state) {
  const tpuci__ctr_opts_t *c;
  (void) state;
  c = opts("sysctls = { [\"net.core.somaxconn\"] = 1024, [\"kernel.shmmax\"] = \"68719476736\", "
           "[\"fs.mqueue.msg_max\"] = \"64\" }");
  assert_int_equal(c->sysctls.len, 3);
  assert_string_equal(c->sysctls.items[0].key, "fs.mqueue.msg_max");
  assert_string_equal(c->sysctls.items[1].key, "kernel.shmmax");
  assert_string_equal(c->sysctls.items[2].key, "net.core.somaxconn");
  assert_string_equal(c->sysctls.items[2].value, "1024");
  refused("sysctls = { [\"vm.swappiness\"] = 10 }",
          "sysctls[\"vm.swappiness\"]: a container may set only the sysctls of its own namespaces");
  refused("sysctls = { [\"somaxconn\"] = 1 }", "not a sysctl name");
  refused("sysctls = { [\"net.core.somaxconn\"] = \"\" }", "must not be empty");
  refused("sysctls = { [\"net.core.somaxconn\"] = {} }", "expected a string, number or boolean");
  refused("sysctls = { \"net.core.somaxconn=1\" }", "sysctls[1]: keys are sysctl names");
}

/* Options that contradict each other or the job's network or mounts. */
static void test_conflicts(void **state) {
  (void) state;
  refused("ipc = \"host\", shm_size = \"1g\"", "shm_size: has no effect with ipc = \"host\"");
  refused("shm_size = \"1g\", mounts = { [\"/tmp/shm\"] = \"/dev/shm\" }",
          "shm_size: /dev/shm is also mounted by mounts[\"/tmp/shm\"]; give one of them");
  refused("network = \"host\", sysctls = { [\"net.core.somaxconn\"] = 1 }",
          "sysctls[\"net.core.somaxconn\"]: a container on the host's network");
  refused("ipc = \"host\", sysctls = { [\"kernel.shmmax\"] = 1 }",
          "a container in the host's IPC namespace (ipc = \"host\") cannot set its sysctls");
  /* net.* sysctls are the network namespace's, not the IPC one's. */
  assert_int_equal(opts("ipc = \"host\", sysctls = { [\"net.core.somaxconn\"] = 1 }")->sysctls.len,
                   1);
}

/* What a swarm service cannot have is a spec error naming the key and
 * the runtime; what it can have loads. */
static void test_swarm(void **state) {
  const tpuci__ctr_opts_t *c;
  char *why;
  (void) state;
  refused("runtime = \"swarm\", privileged = true",
          "privileged: not available with runtime 'swarm': a Swarm service cannot be "
          "privileged (its ContainerSpec has no Privileged; cap_add works)");
  refused("runtime = \"swarm\", devices = { \"/dev/null\" }",
          "devices: not available with runtime 'swarm'");
  refused("runtime = \"swarm\", gpus = 1", "gpus: not available with runtime 'swarm'");
  refused("runtime = \"swarm\", ipc = \"private\"", "ipc: not available with runtime 'swarm'");
  c = opts("runtime = \"swarm\", shm_size = \"1g\", cap_add = { \"NET_ADMIN\" }, "
           "ulimits = { nofile = 10 }, sysctls = { [\"net.core.somaxconn\"] = 1 }");
  assert_null(tpuci__ctr_opts_refusal(c, TPUCI__RUNTIME_SWARM));
  /* A docker job with privileged loads; --engine swarm is refused later
   * with the same words (the swarm runtime's check). */
  c = opts("privileged = true");
  assert_null(tpuci__ctr_opts_refusal(c, TPUCI__RUNTIME_DOCKER));
  why = tpuci__ctr_opts_refusal(c, TPUCI__RUNTIME_SWARM);
  assert_non_null(why);
  assert_non_null(strstr(why, "privileged: not available with runtime 'swarm'"));
  free(why);
}

/* A local job ignores them, with a warning naming them, and keeps none. */
static void test_local(void **state) {
  (void) state;
  assert_int_equal(load("job \"x\" { run = \"true\", shm_size = \"1g\", gpus = 1, cpus = 2 }"), 0);
  assert_false(tpuci__ctr_opts_any(&plan.instances[0].ctr));
  assert_int_equal(plan.warnings.len, 1);
  assert_non_null(strstr(plan.warnings.items[0],
                         "job 'x': cpus, shm_size, gpus: ignored by runtime 'local'"));
}

static void test_json_and_text(void **state) {
  json_t *j, *d;
  char *s;
  tpuci__buf_t b;
  (void) state;
  opts("shm_size = \"16g\", ipc = \"shareable\", privileged = true, "
       "devices = { \"/dev/null:/dev/accel1:rw\", \"/dev/accel*\" }, "
       "cap_add = { \"SYS_ADMIN\" }, cap_drop = { \"NET_RAW\" }, "
       "ulimits = { memlock = -1, nofile = { soft = 4096, hard = 8192 } }, "
       "gpus = { count = 2, driver = \"nvidia\" }, "
       "sysctls = { [\"net.ipv4.tcp_rmem\"] = \"4096 87380 6291456\" }");
  j = tpuci__ctr_opts_json(&plan.instances[0].ctr);
  assert_true(json_integer_value(json_object_get(j, "shm_size")) == 16ll << 30);
  assert_string_equal(json_string_value(json_object_get(j, "ipc")), "shareable");
  assert_true(json_is_true(json_object_get(j, "privileged")));
  d = json_array_get(json_object_get(j, "devices"), 0);
  assert_string_equal(json_string_value(json_object_get(d, "host")), "/dev/null");
  assert_string_equal(json_string_value(json_object_get(d, "container")), "/dev/accel1");
  assert_string_equal(json_string_value(json_object_get(d, "permissions")), "rw");
  assert_true(json_is_false(json_object_get(d, "glob")));
  d = json_array_get(json_object_get(j, "devices"), 1);
  assert_true(json_is_null(json_object_get(d, "container")));
  assert_true(json_is_true(json_object_get(d, "glob")));
  assert_string_equal(json_string_value(json_array_get(json_object_get(j, "cap_add"), 0)),
                      "SYS_ADMIN");
  assert_string_equal(json_string_value(json_array_get(json_object_get(j, "cap_drop"), 0)),
                      "NET_RAW");
  d = json_object_get(json_object_get(j, "ulimits"), "memlock");
  assert_int_equal(json_integer_value(json_object_get(d, "soft")), -1);
  d = json_object_get(json_object_get(j, "ulimits"), "nofile");
  assert_int_equal(json_integer_value(json_object_get(d, "hard")), 8192);
  d = json_object_get(j, "gpus");
  assert_int_equal(json_integer_value(json_object_get(d, "count")), 2);
  assert_null(json_object_get(d, "device_ids"));
  assert_string_equal(json_string_value(json_object_get(d, "driver")), "nvidia");
  assert_string_equal(json_string_value(json_array_get(json_object_get(d, "capabilities"), 0)),
                      "gpu");
  assert_string_equal(
      json_string_value(json_object_get(json_object_get(j, "sysctls"), "net.ipv4.tcp_rmem")),
      "4096 87380 6291456");
  json_decref(j);

  /* In the plan's JSON, after "network". */
  s = tpuci__plan_to_json(&plan);
  assert_non_null(strstr(s, "\"network\": null,\n      \"container\": {\n"));
  free(s);

  tpuci__buf_init(&b);
  tpuci__ctr_opts_text(&plan.instances[0].ctr, &b);
  assert_string_equal(b.data,
                      "  shm_size: 16 GiB at /dev/shm\n"
                      "  ipc:      shareable\n"
                      "  privileged (every device and capability)\n"
                      "  device:   /dev/null -> /dev/accel1 (rw)\n"
                      "  device:   /dev/accel* (rwm; a glob, expanded when an attempt starts)\n"
                      "  cap_add:  SYS_ADMIN\n"
                      "  cap_drop: NET_RAW\n"
                      "  ulimits:  memlock=unlimited nofile=4096:8192\n"
                      "  gpus:     2, driver nvidia, capabilities gpu\n"
                      "  sysctls:  net.ipv4.tcp_rmem='4096 87380 6291456'\n");
  tpuci__buf_free(&b);
  s = tpuci__plan_to_text(&plan);
  assert_non_null(strstr(s, "  command:  true\n  shm_size: 16 GiB at /dev/shm\n"));
  free(s);
}

/* Every instance of a matrix job gets its own copy. */
static void test_matrix_copies(void **state) {
  (void) state;
  assert_int_equal(load("job \"x\" { image = \"bb:1\", run = \"true\", "
                        "matrix = { n = { 1, 2 } }, devices = { \"/dev/a\" }, "
                        "sysctls = { [\"net.core.somaxconn\"] = 1 } }"),
                   0);
  assert_int_equal(plan.ninstances, 2);
  assert_ptr_not_equal(plan.instances[0].ctr.devices, plan.instances[1].ctr.devices);
  assert_string_equal(plan.instances[1].ctr.devices[0].host, "/dev/a");
  assert_string_equal(plan.instances[1].ctr.sysctls.items[0].value, "1");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_none, setup, teardown),
    cmocka_unit_test_setup_teardown(test_scalars, setup, teardown),
    cmocka_unit_test_setup_teardown(test_devices, setup, teardown),
    cmocka_unit_test_setup_teardown(test_caps, setup, teardown),
    cmocka_unit_test_setup_teardown(test_ulimits, setup, teardown),
    cmocka_unit_test_setup_teardown(test_gpus, setup, teardown),
    cmocka_unit_test_setup_teardown(test_sysctls, setup, teardown),
    cmocka_unit_test_setup_teardown(test_conflicts, setup, teardown),
    cmocka_unit_test_setup_teardown(test_swarm, setup, teardown),
    cmocka_unit_test_setup_teardown(test_local, setup, teardown),
    cmocka_unit_test_setup_teardown(test_json_and_text, setup, teardown),
    cmocka_unit_test_setup_teardown(test_matrix_copies, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
