/* The swarm driver's pure parts: service bodies, names, what a task's
 * status means, how many tasks the nodes can hold, the swarm state
 * check. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/swarm/swarm.h"

static json_t *path(json_t *o, const char *a, const char *b, const char *c) {
  o = json_object_get(o, a);
  if (b) o = json_object_get(o, b);
  if (c) o = json_object_get(o, c);
  return o;
}

static void test_body(void **state) {
  tpuci__strv_t argv = {0}, env = {0};
  tpuci__kvlist_t labels = {0};
  tpuci__mount_t m = {"/host/src", "/src", 1};
  tpuci__svc_spec_t s;
  json_t *b, *cs, *tt;
  (void) state;

  tpuci__strv_push(&argv, "/bin/sh");
  tpuci__strv_push(&argv, "-c");
  tpuci__strv_push(&argv, "echo hi");
  tpuci__strv_push(&env, "TPU_WORKER_ID=1");
  tpuci__kv_set(&labels, "tpuci.run", "r1");
  memset(&s, 0, sizeof(s));
  s.name = "tpuci-r1-x-1-w1";
  s.image = "sha256:abc";
  s.argv = &argv;
  s.env = &env;
  s.workdir = "/src";
  s.mounts = &m;
  s.nmounts = 1;
  s.cpus = 1.5;
  s.memory_bytes = 16u << 20;
  s.labels = &labels;
  s.hostname = "worker-1";
  s.network = "netid";
  s.alias = "worker-1";
  s.grace_ms = 2000;
  s.results_tmpfs = "/tpuci/results";
  b = tpuci__svc_create_body(&s);
  tt = json_object_get(b, "TaskTemplate");
  cs = json_object_get(tt, "ContainerSpec");
  assert_string_equal(json_string_value(json_object_get(b, "Name")), "tpuci-r1-x-1-w1");
  assert_string_equal(json_string_value(path(b, "Labels", "tpuci.run", NULL)), "r1");
  assert_string_equal(json_string_value(path(cs, "Labels", "tpuci.run", NULL)), "r1");
  assert_string_equal(json_string_value(json_object_get(cs, "Image")), "sha256:abc");
  /* The job's command is the container's Cmd: Args, not Command. */
  assert_null(json_object_get(cs, "Command"));
  assert_int_equal(json_array_size(json_object_get(cs, "Args")), 3);
  assert_string_equal(json_string_value(json_array_get(json_object_get(cs, "Env"), 0)), "TPU_WORKER_ID=1");
  assert_string_equal(json_string_value(json_object_get(cs, "Dir")), "/src");
  assert_string_equal(json_string_value(json_object_get(cs, "Hostname")), "worker-1");
  assert_true(json_is_true(json_object_get(cs, "Init")));
  assert_int_equal(json_integer_value(json_object_get(cs, "StopGracePeriod")), 2000000000);
  assert_string_equal(json_string_value(path(json_array_get(json_object_get(cs, "Mounts"), 0), "Type", NULL, NULL)), "bind");
  assert_true(json_is_true(path(json_array_get(json_object_get(cs, "Mounts"), 0), "ReadOnly", NULL, NULL)));
  /* The results folder: a tmpfs, on whichever node (no placement). */
  assert_string_equal(json_string_value(path(json_array_get(json_object_get(cs, "Mounts"), 1), "Type", NULL, NULL)), "tmpfs");
  assert_string_equal(json_string_value(path(json_array_get(json_object_get(cs, "Mounts"), 1), "Target", NULL, NULL)), "/tpuci/results");
  assert_null(json_object_get(tt, "Placement"));
  /* Limits and reservations alike. */
  assert_int_equal(json_integer_value(path(tt, "Resources", "Limits", "NanoCPUs")), 1500000000);
  assert_int_equal(json_integer_value(path(tt, "Resources", "Reservations", "NanoCPUs")), 1500000000);
  assert_int_equal(json_integer_value(path(tt, "Resources", "Limits", "MemoryBytes")), 16 << 20);
  assert_int_equal(json_integer_value(path(tt, "Resources", "Reservations", "MemoryBytes")), 16 << 20);
  assert_string_equal(json_string_value(path(tt, "RestartPolicy", "Condition", NULL)), "none");
  assert_string_equal(json_string_value(path(json_array_get(json_object_get(tt, "Networks"), 0), "Target", NULL, NULL)), "netid");
  assert_string_equal(json_string_value(json_array_get(path(json_array_get(json_object_get(tt, "Networks"), 0), "Aliases", NULL, NULL), 0)), "worker-1");
  assert_int_equal(json_integer_value(path(b, "Mode", "Replicated", "Replicas")), 1);
  assert_string_equal(json_string_value(path(b, "EndpointSpec", "Mode", NULL)), "dnsrr");
  json_decref(b);

  /* No limits, no network, no mounts. */
  memset(&s, 0, sizeof(s));
  s.name = "n";
  s.image = "i";
  b = tpuci__svc_create_body(&s);
  tt = json_object_get(b, "TaskTemplate");
  assert_null(path(tt, "Resources", "Limits", NULL));
  assert_null(json_object_get(tt, "Networks"));
  assert_null(path(tt, "ContainerSpec", "Mounts", NULL));
  assert_null(path(tt, "ContainerSpec", "Args", NULL));
  json_decref(b);

  b = tpuci__sw_net_body("net", &labels);
  assert_string_equal(json_string_value(json_object_get(b, "Driver")), "overlay");
  assert_true(json_is_true(json_object_get(b, "Attachable")));
  assert_true(json_is_true(json_object_get(b, "Internal")));
  assert_string_equal(json_string_value(path(b, "Labels", "tpuci.run", NULL)), "r1");
  json_decref(b);
  tpuci__strv_free(&argv);
  tpuci__strv_free(&env);
  tpuci__kv_free(&labels);
}

/* What a ContainerSpec takes of the accelerator options: Sysctls,
 * Ulimits, CapabilityAdd/Drop, and shm_size as a tmpfs at /dev/shm. */
static void test_body_accelerators(void **state) {
  tpuci__mount_t m = {"/host/src", "/src", 0};
  tpuci__ulimit_t ulimits[1] = {{"nofile", 4096, 8192}};
  tpuci__ctr_opts_t c;
  tpuci__svc_spec_t s;
  json_t *b, *cs, *mounts, *tmpfs;
  (void) state;

  memset(&c, 0, sizeof(c));
  c.shm_bytes = 1u << 30;
  tpuci__strv_push(&c.cap_add, "SYS_ADMIN");
  tpuci__strv_push(&c.cap_drop, "NET_RAW");
  c.ulimits = ulimits;
  c.nulimits = 1;
  tpuci__kv_set(&c.sysctls, "net.core.somaxconn", "1024");
  memset(&s, 0, sizeof(s));
  s.name = "n";
  s.image = "i";
  s.mounts = &m;
  s.nmounts = 1;
  s.ctr = &c;
  b = tpuci__svc_create_body(&s);
  cs = path(b, "TaskTemplate", "ContainerSpec", NULL);
  mounts = json_object_get(cs, "Mounts");
  assert_int_equal(json_array_size(mounts), 2);
  assert_string_equal(json_string_value(path(json_array_get(mounts, 0), "Type", NULL, NULL)), "bind");
  tmpfs = json_array_get(mounts, 1);
  assert_string_equal(json_string_value(json_object_get(tmpfs, "Type")), "tmpfs");
  assert_string_equal(json_string_value(json_object_get(tmpfs, "Target")), "/dev/shm");
  assert_int_equal(json_integer_value(path(tmpfs, "TmpfsOptions", "SizeBytes", NULL)), 1 << 30);
  assert_string_equal(json_string_value(json_array_get(json_object_get(cs, "CapabilityAdd"), 0)),
                      "CAP_SYS_ADMIN");
  assert_string_equal(json_string_value(json_array_get(json_object_get(cs, "CapabilityDrop"), 0)),
                      "CAP_NET_RAW");
  assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(cs, "Ulimits"), 0), "Name")),
                      "nofile");
  assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(cs, "Ulimits"), 0), "Hard")),
                   8192);
  assert_string_equal(json_string_value(path(cs, "Sysctls", "net.core.somaxconn", NULL)), "1024");
  /* A ContainerSpec has none of these. */
  assert_null(json_object_get(cs, "Privileged"));
  assert_null(json_object_get(cs, "Devices"));
  assert_null(json_object_get(cs, "ShmSize"));
  json_decref(b);

  /* shm_size alone: the tmpfs is the only mount. */
  s.nmounts = 0;
  tpuci__strv_free(&c.cap_add);
  tpuci__strv_free(&c.cap_drop);
  c.nulimits = 0;
  tpuci__kv_free(&c.sysctls);
  b = tpuci__svc_create_body(&s);
  cs = path(b, "TaskTemplate", "ContainerSpec", NULL);
  assert_int_equal(json_array_size(json_object_get(cs, "Mounts")), 1);
  assert_null(json_object_get(cs, "CapabilityAdd"));
  assert_null(json_object_get(cs, "Ulimits"));
  assert_null(json_object_get(cs, "Sysctls"));
  json_decref(b);
}

static int dns_label(const char *s) {
  size_t i, n = strlen(s);
  if (n == 0 || n > TPUCI__SW_NAME_MAX || s[0] == '-' || s[n - 1] == '-') return 0;
  for (i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
      return 0;
  return 1;
}

static void test_names(void **state) {
  char *a, *b, *c;
  (void) state;
  a = tpuci__sw_name("20261203-1200-ab", "unit", 1, -1);
  assert_string_equal(a, "tpuci-20261203-1200-ab-unit-1");
  free(a);
  a = tpuci__sw_name("20261203-1200-ab", "gang", 2, 3);
  assert_string_equal(a, "tpuci-20261203-1200-ab-gang-2-w3");
  free(a);
  /* Changed or cut instance names get a hash; distinct stay distinct. */
  a = tpuci__sw_name("r", "unit[python=3.11]", 1, -1);
  b = tpuci__sw_name("r", "unit[python=3.12]", 1, -1);
  assert_true(dns_label(a));
  assert_true(dns_label(b));
  assert_string_not_equal(a, b);
  free(a);
  free(b);
  c = tpuci__sw_name("20261203-120000-abcd", "a-very-long-instance-name[matrix=one,other=two,third=three]", 12, 15);
  assert_true(dns_label(c));
  assert_non_null(strstr(c, "-12-w15"));
  free(c);
  c = tpuci__sw_name("r", "[]", 1, -1);
  assert_true(dns_label(c));
  free(c);
}

static json_t *task(const char *state, const char *err, int has_ctr, int code) {
  json_t *t = json_pack("{s:s, s:s, s:s, s:{s:s}}", "ID", "t1", "ServiceID", "s1",
                        "NodeID", "n1", "Status", "State", state);
  json_t *st = json_object_get(t, "Status");
  if (err) json_object_set_new(st, "Err", json_string(err));
  if (has_ctr)
    json_object_set_new(st, "ContainerStatus",
                        json_pack("{s:s, s:i}", "ContainerID", "c1", "ExitCode", code));
  return t;
}

static void test_task_end(void **state) {
  tpuci__task_t t;
  char *why;
  json_t *j;
  (void) state;
  assert_int_equal(tpuci__task_state_parse("running"), TPUCI__TS_RUNNING);
  assert_int_equal(tpuci__task_state_parse("bogus"), TPUCI__TS_UNKNOWN);
  assert_false(tpuci__task_state_terminal(TPUCI__TS_RUNNING));
  assert_true(tpuci__task_state_terminal(TPUCI__TS_REJECTED));

  j = task("complete", NULL, 1, 0);
  tpuci__task_read(j, &t);
  assert_string_equal(t.container_id, "c1");
  assert_int_equal(tpuci__task_end(&t, &why), TPUCI__TASK_EXIT);
  assert_int_equal(t.exit_code, 0);
  assert_null(why);
  json_decref(j);

  j = task("failed", "task: non-zero exit (3)", 1, 3);
  tpuci__task_read(j, &t);
  assert_int_equal(tpuci__task_end(&t, &why), TPUCI__TASK_EXIT);
  assert_int_equal(t.exit_code, 3);
  json_decref(j);

  /* No container: the engine could not start it. */
  j = task("failed", "starting container failed: no such file", 0, 0);
  tpuci__task_read(j, &t);
  assert_int_equal(tpuci__task_end(&t, &why), TPUCI__TASK_INFRA);
  assert_non_null(strstr(why, "starting container failed"));
  free(why);
  json_decref(j);

  j = task("rejected", "No such image: sha256:1111", 0, 0);
  tpuci__task_read(j, &t);
  assert_int_equal(tpuci__task_end(&t, &why), TPUCI__TASK_INFRA);
  assert_non_null(strstr(why, "rejected by its node: No such image"));
  free(why);
  json_decref(j);

  j = task("orphaned", NULL, 1, 0);
  tpuci__task_read(j, &t);
  assert_int_equal(tpuci__task_end(&t, &why), TPUCI__TASK_INFRA);
  free(why);
  json_decref(j);
}

static json_t *node(const char *id, const char *state, int64_t cpu, int64_t mem) {
  return json_pack("{s:s, s:{s:s, s:s}, s:{s:s}, s:{s:s, s:{s:I, s:I}}}", "ID", id,
                   "Spec", "Availability", "active", "Role", "worker",
                   "Status", "State", state, "Description", "Hostname", id,
                   "Resources", "NanoCPUs", (json_int_t) cpu, "MemoryBytes",
                   (json_int_t) mem);
}

static void test_fit(void **state) {
  tpuci__sw_node_t ns[3];
  json_t *a = node("n1", "ready", 2000000000, 4LL << 30);
  json_t *b = node("n2", "ready", 4000000000, 1LL << 30);
  json_t *c = node("n3", "down", 64000000000, 64LL << 30);
  (void) state;
  tpuci__sw_node_read(a, &ns[0]);
  tpuci__sw_node_read(b, &ns[1]);
  tpuci__sw_node_read(c, &ns[2]);
  assert_true(ns[0].ready);
  assert_false(ns[2].ready);
  /* 1 CPU: 2 on n1, 4 on n2; the down node counts for nothing. */
  assert_int_equal(tpuci__sw_fit(ns, 3, 1.0, 0), 6);
  /* 1 CPU and 1 GiB: 2 on n1, 1 on n2. */
  assert_int_equal(tpuci__sw_fit(ns, 3, 1.0, 1u << 30), 3);
  assert_int_equal(tpuci__sw_fit(ns, 3, 8.0, 0), 0);
  assert_true(tpuci__sw_fit(ns, 3, 0, 0) >= 1000000);
  json_decref(a);
  json_decref(b);
  json_decref(c);
}

static void test_info(void **state) {
  tpuci__err_t e = {0, NULL};
  json_t *i;
  (void) state;
  i = json_pack("{s:{s:s}}", "Swarm", "LocalNodeState", "inactive");
  assert_int_equal(tpuci__sw_info_check(i, "unix:///s", &e), TPUCI_EENGINE);
  assert_non_null(strstr(e.msg, "not part of a swarm"));
  assert_non_null(strstr(e.msg, "docker swarm init"));
  tpuci__err_clear(&e);
  json_decref(i);
  i = json_pack("{s:{s:s, s:b}}", "Swarm", "LocalNodeState", "active", "ControlAvailable", 0);
  assert_int_equal(tpuci__sw_info_check(i, "unix:///s", &e), TPUCI_EENGINE);
  assert_non_null(strstr(e.msg, "not a manager"));
  tpuci__err_clear(&e);
  json_decref(i);
  i = json_pack("{s:{s:s, s:b}}", "Swarm", "LocalNodeState", "active", "ControlAvailable", 1);
  assert_int_equal(tpuci__sw_info_check(i, "unix:///s", &e), 0);
  json_decref(i);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_body), cmocka_unit_test(test_body_accelerators), cmocka_unit_test(test_names),
      cmocka_unit_test(test_task_end), cmocka_unit_test(test_fit),
      cmocka_unit_test(test_info),
  };
  return cmocka_run_group_tests_name("swarm_service", tests, NULL, NULL);
}
