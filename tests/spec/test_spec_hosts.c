/* `hosts` declarations and `hosts = ...` in a job (runtime "ssh"): the
 * list and gcloud forms, paths made absolute with the spec's folder, the
 * count against the topology, the runtime rules, and the plan's JSON and
 * text. tests/spec/bad/ has the one-file errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "plan/plan.h"
#include "spec/spec.h"
#include "spec_fixture.h"

static char dir[64];

static int load(const char *src) { return load_with(src, dir, 0, 0); }

static void loads(const char *src) {
  int r = load(src);
  if (r != 0) fail_msg("load failed (%d): %s", r, err.msg ? err.msg : "");
}

/* Loading src fails with a spec error starting "spec.lua:LINE: " and
 * holding want. */
static void refused(const char *src, int line, const char *want) {
  char pre[32];
  int r = load(src);
  if (r != TPUCI_ESPEC || err.msg == NULL || strstr(err.msg, want) == NULL)
    fail_msg("expected a spec error with '%s', got %d: %s", want, r,
             err.msg ? err.msg : "(none)");
  snprintf(pre, sizeof(pre), "spec.lua:%d: ", line);
  if (strncmp(err.msg, pre, strlen(pre)) != 0)
    fail_msg("expected '%s' first: %s", pre, err.msg);
  assert_null(strchr(err.msg, '\n'));
  assert_int_equal(plan.ninstances, 0);
}

static void write_file(const char *name, const char *text) { write_file_in(dir, name, text); }

static int group_setup(void **state) {
  (void) state;
  snprintf(dir, sizeof(dir), "/tmp/tpuci-hosts-XXXXXX");
  return mkdtemp(dir) == NULL ? -1 : 0;
}

static int group_teardown(void **state) {
  char *cmd = tpuci__printf("rm -rf '%s'", dir);
  int r;
  (void) state;
  r = system(cmd);
  free(cmd);
  return r == 0 ? 0 : -1;
}

static void test_list(void **state) {
  const tpuci__instance_t *in;
  const tpuci__hostset_t *hs;
  char *cfg, *t;
  (void) state;
  loads("hosts \"slice\" { \"root@10.0.0.2\", \"10.0.0.3:2222\", \"me@[fe80::1]:22\",\n"
        "  \"h-4.example\", ssh_config = \"ci/ssh_config\" }\n"
        "topology \"four\" { hosts = 4, chips_per_host = 4 }\n"
        "job \"x\" { topology = \"four\", hosts = \"slice\",\n"
        "  run = \"true\" }\n");
  assert_int_equal(plan.nhostsets, 1);
  hs = &plan.hostsets[0];
  assert_string_equal(hs->name, "slice");
  assert_string_equal(hs->where, "spec.lua:1");
  cfg = tpuci__printf("%s/ci/ssh_config", dir);
  assert_string_equal(hs->ssh_config, cfg);
  free(cfg);
  assert_null(hs->gcloud);
  assert_int_equal(hs->nhosts, 4);
  assert_string_equal(hs->hosts[0].user, "root");
  assert_string_equal(hs->hosts[0].host, "10.0.0.2");
  assert_int_equal(hs->hosts[0].port, 0);
  assert_null(hs->hosts[1].user);
  assert_string_equal(hs->hosts[1].host, "10.0.0.3");
  assert_int_equal(hs->hosts[1].port, 2222);
  assert_string_equal(hs->hosts[2].host, "fe80::1");
  assert_int_equal(hs->hosts[2].port, 22);
  t = tpuci__ssh_host_text(&hs->hosts[2]);
  assert_string_equal(t, "me@[fe80::1]:22");
  free(t);
  assert_string_equal(hs->hosts[3].host, "h-4.example");
  in = &plan.instances[0];
  assert_int_equal(in->runtime, TPUCI__RUNTIME_SSH);
  assert_int_equal(in->hostset, 0);
  assert_int_equal(tpuci__plan_hosts(&plan, in), 4);
}

static void test_gcloud(void **state) {
  const tpuci__hostset_t *hs;
  char *path;
  (void) state;
  write_file("tpu.json",
             "{\"name\": \"projects/p/locations/z/nodes/t\", \"acceleratorType\": \"v4-16\",\n"
             " \"networkEndpoints\": [{\"ipAddress\": \"10.130.0.7\", \"port\": 8470,\n"
             "   \"accessConfig\": {\"externalIp\": \"34.1.2.3\"}},\n"
             "  {\"ipAddress\": \"10.130.0.5\", \"port\": 8470}]}\n");
  loads("hosts \"t\" { gcloud = \"tpu.json\", user = \"me\" }\n"
        "job \"x\" { topology = \"v4-16\", hosts = \"t\", run = \"true\" }\n");
  hs = &plan.hostsets[0];
  path = tpuci__printf("%s/tpu.json", dir);
  assert_string_equal(hs->gcloud, path);
  free(path);
  assert_int_equal(hs->nhosts, 2);
  /* In the file's order, internal addresses. */
  assert_string_equal(hs->hosts[0].host, "10.130.0.7");
  assert_string_equal(hs->hosts[1].host, "10.130.0.5");
  assert_string_equal(hs->hosts[0].user, "me");
  assert_int_equal(hs->hosts[0].port, 0);

  loads("hosts \"t\" { gcloud = \"tpu.json\" }\n"
        "job \"x\" { topology = \"v4-16\", hosts = \"t\", run = \"true\" }\n");
  assert_null(plan.hostsets[0].hosts[0].user);
}

/* An instances list (TPU7x and later): the slice's instances by name and
 * label, in agent-worker-number order; without it on every one, by
 * name. */
static const char instances[] =
    "[{\"name\": \"iron-b\", \"status\": \"RUNNING\", \"labels\": {\"slice\": \"s1\"},\n"
    "  \"networkInterfaces\": [{\"networkIP\": \"10.0.0.12\"}],\n"
    "  \"metadata\": {\"items\": [{\"key\": \"agent-worker-number\", \"value\": \"0\"}]}},\n"
    " {\"name\": \"iron-a\", \"status\": \"RUNNING\", \"labels\": {\"slice\": \"s1\"},\n"
    "  \"networkInterfaces\": [{\"networkIP\": \"10.0.0.11\"}],\n"
    "  \"metadata\": {\"items\": [{\"key\": \"agent-worker-number\", \"value\": \"1\"}]}},\n"
    " {\"name\": \"iron-c\", \"status\": \"RUNNING\", \"labels\": {\"slice\": \"s2\"},\n"
    "  \"networkInterfaces\": [{\"networkIP\": \"10.0.0.13\"}]},\n"
    " {\"name\": \"other\", \"status\": \"RUNNING\", \"labels\": {\"slice\": \"s1\"},\n"
    "  \"networkInterfaces\": [{\"networkIP\": \"10.0.0.14\"}]}]\n";

static void test_instances(void **state) {
  const tpuci__hostset_t *hs;
  char *why = NULL;
  (void) state;
  write_file("list.json", instances);
  loads("hosts \"t\" { gcloud = \"list.json\", instances = \"iron-*\", label = \"slice=s1\" }\n"
        "topology \"two\" { hosts = 2, chips_per_host = 4 }\n"
        "job \"x\" { topology = \"two\", hosts = \"t\", run = \"true\" }\n");
  hs = &plan.hostsets[0];
  assert_int_equal(hs->nhosts, 2);
  /* agent-worker-number, not the file's or the names' order. */
  assert_string_equal(hs->hosts[0].host, "10.0.0.12");
  assert_string_equal(hs->hosts[1].host, "10.0.0.11");
  assert_string_equal(hs->match, "iron-*");
  assert_string_equal(hs->label, "slice=s1");

  /* A fresh list: every worker RUNNING, then one PREEMPTED, then one
   * gone; what is neither a list nor a description cannot tell. */
  assert_int_equal(tpuci__gcloud_check(hs, NULL, instances, strlen(instances), &why), 0);
  assert_null(why);
  {
    char *pre = tpuci__strdup(instances), *at = strstr(pre, "RUNNING");
    memcpy(at, "STOPPED", 7);
    assert_int_equal(tpuci__gcloud_check(hs, NULL, pre, strlen(pre), &why), 1);
    assert_string_equal(why, "worker-0 (10.0.0.12, instance 'iron-b') is STOPPED");
    free(why);
    free(pre);
  }
  assert_int_equal(tpuci__gcloud_check(hs, NULL, "[]", 2, &why), 1);
  assert_string_equal(why, "worker-0 (10.0.0.12) is gone from the instances");
  free(why);
  assert_int_equal(tpuci__gcloud_check(hs, NULL, "3", 1, &why), -1);
  free(why);
  assert_int_equal(tpuci__gcloud_check(hs, NULL, "", 0, &why), -1);
  free(why);
  assert_int_equal(tpuci__gcloud_check(hs, NULL, "{\"state\": \"PREEMPTED\"}", 22, &why), 1);
  assert_string_equal(why, "the TPU is PREEMPTED");
  free(why);

  /* Without numbers on every one: by name. */
  loads("hosts \"t\" { gcloud = \"list.json\", label = \"slice=s1\" }\n"
        "topology \"three\" { hosts = 3, chips_per_host = 4 }\n"
        "job \"x\" { topology = \"three\", hosts = \"t\", run = \"true\" }\n");
  hs = &plan.hostsets[0];
  assert_int_equal(hs->nhosts, 3);
  assert_string_equal(hs->hosts[0].host, "10.0.0.11");
  assert_string_equal(hs->hosts[1].host, "10.0.0.12");
  assert_string_equal(hs->hosts[2].host, "10.0.0.14");

  refused("hosts \"t\" { gcloud = \"list.json\", instances = \"none-*\" }\n"
          "job \"x\" { hosts = \"t\", run = \"true\" }\n",
          1, "no instance named none-*");
  write_file("tpu.json", "{\"networkEndpoints\": [{\"ipAddress\": \"10.0.0.2\"}]}");
  refused("hosts \"t\" { gcloud = \"tpu.json\", label = \"a=b\" }\n"
          "job \"x\" { hosts = \"t\", run = \"true\" }\n",
          1, "a TPU's description, not an instances list");
  refused("hosts \"t\" { gcloud = \"list.json\", label = \"a b\" }\n", 1,
          "label: expected 'key=value'");
}

/* Capacity only on evidence (issue 42.7): workers written by hand by a
 * name or an external address the describe output does not use as the
 * spec does are unknown, never gone; one the document names is judged. */
static void test_capacity_evidence(void **state) {
  const tpuci__hostset_t *hs;
  char *why = NULL, *pre, *at;
  static const char tpu[] =
      "{\"state\": \"READY\", \"networkEndpoints\": [{\"ipAddress\": \"10.130.0.7\",\n"
      "  \"accessConfig\": {\"externalIp\": \"34.1.2.3\"}}, {\"ipAddress\": \"10.130.0.5\"}]}";
  static const char one[] = "{\"state\": \"READY\", \"networkEndpoints\": [{\"ipAddress\": "
                            "\"10.130.0.7\", \"accessConfig\": {\"externalIp\": \"34.1.2.3\"}}]}";
  (void) state;
  /* By instance name, against a list. */
  loads("hosts \"h\" { \"iron-b\", \"iron-a\", describe = \"true\" }\n"
        "topology \"two\" { hosts = 2, chips_per_host = 4 }\n"
        "job \"x\" { topology = \"two\", hosts = \"h\", run = \"true\" }\n");
  hs = &plan.hostsets[0];
  assert_int_equal(tpuci__gcloud_check(hs, NULL, instances, strlen(instances), &why), 0);
  assert_null(why);
  pre = tpuci__strdup(instances);
  at = strstr(pre, "RUNNING");
  memcpy(at, "STOPPED", 7);
  assert_int_equal(tpuci__gcloud_check(hs, NULL, pre, strlen(pre), &why), 1);
  assert_string_equal(why, "worker-0 (iron-b, instance 'iron-b') is STOPPED");
  free(why);
  free(pre);
  /* An empty list names none of them: no evidence. */
  assert_int_equal(tpuci__gcloud_check(hs, NULL, "[]", 2, &why), -1);
  assert_string_equal(why, "none of the workers is in the instances by name, by internal or "
                           "external address, or by the host its ssh_config gives (worker-0 is "
                           "iron-b)");
  free(why);
  /* An external address and an internal one, against a description. */
  loads("hosts \"h\" { \"34.1.2.3\", \"10.130.0.5\", describe = \"true\" }\n"
        "topology \"two\" { hosts = 2, chips_per_host = 4 }\n"
        "job \"x\" { topology = \"two\", hosts = \"h\", run = \"true\" }\n");
  hs = &plan.hostsets[0];
  assert_int_equal(tpuci__gcloud_check(hs, NULL, tpu, strlen(tpu), &why), 0);
  assert_null(why);
  /* worker-0 still named, worker-1 gone: evidence. */
  assert_int_equal(tpuci__gcloud_check(hs, NULL, one, strlen(one), &why), 1);
  assert_string_equal(why, "worker-1 (10.130.0.5) is gone from the TPU's networkEndpoints");
  free(why);
  /* ssh_config names the description cannot show: unknown. */
  loads("hosts \"h\" { \"tpu-w0\", \"tpu-w1\", describe = \"true\" }\n"
        "topology \"two\" { hosts = 2, chips_per_host = 4 }\n"
        "job \"x\" { topology = \"two\", hosts = \"h\", run = \"true\" }\n");
  hs = &plan.hostsets[0];
  assert_int_equal(tpuci__gcloud_check(hs, NULL, tpu, strlen(tpu), &why), -1);
  assert_string_equal(why, "none of the workers is in the TPU's networkEndpoints by name, by "
                           "internal or external address, or by the host its ssh_config gives "
                           "(worker-0 is tpu-w0)");
  free(why);
  /* The hosts ssh_config gives them (ssh -G): found, and judged. */
  {
    const char *const aliases[] = {"34.1.2.3", "10.130.0.5"};
    assert_int_equal(tpuci__gcloud_check(hs, aliases, tpu, strlen(tpu), &why), 0);
    assert_null(why);
    assert_int_equal(tpuci__gcloud_check(hs, aliases, one, strlen(one), &why), 1);
    assert_string_equal(why, "worker-1 (tpu-w1) is gone from the TPU's networkEndpoints");
    free(why);
  }
}

static void test_gcloud_errors(void **state) {
  (void) state;
  refused("hosts \"t\" { gcloud = \"missing.json\" }\n"
          "job \"x\" { topology = \"v4-16\", hosts = \"t\", run = \"true\" }\n",
          1, "hosts 't': gcloud: cannot read '");
  write_file("bad.json", "{\"networkEndpoints\": [");
  refused("hosts \"t\" { gcloud = \"bad.json\" }\n", 1, "is not JSON: line 1");
  write_file("none.json", "{\"name\": \"t\"}");
  refused("\nhosts \"t\" { gcloud = \"none.json\" }\n", 2,
          "has no networkEndpoints (write it with `gcloud compute tpus tpu-vm describe");
  write_file("noip.json", "{\"networkEndpoints\": [{\"ipAddress\": \"10.0.0.1\"}, {}]}");
  refused("hosts \"t\" { gcloud = \"noip.json\" }\n", 1,
          "networkEndpoints[2]: no ipAddress");
  write_file("evil.json", "{\"networkEndpoints\": [{\"ipAddress\": \"-oProxyCommand=x y\"}]}");
  refused("hosts \"t\" { gcloud = \"evil.json\" }\n", 1,
          "networkEndpoints[1].ipAddress: not an address");
}

/* A host or user that starts with '-' would be an option to ssh
 * (`-Fevil.conf` runs that config's ProxyCommand here): refused in every
 * source, the list and the gcloud file. */
static void test_leading_dash(void **state) {
  (void) state;
  refused("hosts \"s\" { \"-Fevil.conf\" }\n", 1, "a host cannot start with '-'");
  refused("hosts \"s\" { \"root@-oProxyCommand=x\" }\n", 1, "a host cannot start with '-'");
  refused("hosts \"s\" { \"-oProxyCommand=x@h\" }\n", 1, "not starting with '-'");
  refused("hosts \"s\" { \"-V:22\" }\n", 1, "a host cannot start with '-'");
  refused("hosts \"s\" { gcloud = \"tpu.json\", user = \"-lx\" }\n", 1,
          "not starting with '-'");
  write_file("dash.json", "{\"networkEndpoints\": [{\"ipAddress\": \"10.0.0.1\"},\n"
                          " {\"ipAddress\": \"-Fevil.conf\"}]}");
  refused("hosts \"t\" { gcloud = \"dash.json\" }\n", 1,
          "networkEndpoints[2].ipAddress: not an address (it starts with '-')");
  write_file("dash2.json", "{\"networkEndpoints\": [{\"ipAddress\": \"-Jjump\"}]}");
  refused("hosts \"t\" { gcloud = \"dash2.json\" }\n", 1, "(it starts with '-')");
  /* Still fine: a '-' inside a name. */
  loads("hosts \"s\" { \"a-b@h-1.example\" }\njob \"x\" { hosts = \"s\", run = \"true\" }\n");
}

/* The gcloud file is a regular file of at most 4 MiB: a FIFO is refused
 * at once (the alarm fails the test where the load would wait for a
 * writer), a bigger file without being read whole. */
static void test_gcloud_file_kind(void **state) {
  char *fifo = tpuci__printf("%s/fifo.json", dir), *big = tpuci__printf("%s/big.json", dir);
  FILE *f;
  size_t i;
  (void) state;
  unlink(fifo);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  alarm(30);
  refused("hosts \"t\" { gcloud = \"fifo.json\" }\n", 1,
          "gcloud: cannot read '");
  alarm(0);
  assert_non_null(strstr(err.msg, "it is a FIFO, not a regular file"));
  f = fopen(big, "w");
  assert_non_null(f);
  fputs("{\"networkEndpoints\": [{\"ipAddress\": \"10.0.0.1\"}], \"pad\": \"", f);
  for (i = 0; i < (5u << 20) / 64; i++)
    fputs("0123456789012345678901234567890123456789012345678901234567890123", f);
  fputs("\"}", f);
  fclose(f);
  refused("hosts \"t\" { gcloud = \"big.json\" }\n", 1, "is over 4 MiB: not a describe output");
  unlink(fifo);
  unlink(big);
  free(fifo);
  free(big);
}

static void test_count(void **state) {
  (void) state;
  refused("hosts \"slice\" { \"a\", \"b\" }\n"
          "job \"x\" {\n  topology = \"v4-32\", hosts = \"slice\", run = \"true\" }\n",
          2, "job 'x': hosts 'slice' (spec.lua:1) has 2 hosts, but topology "
             "'v4-32' has 4");
  refused("hosts \"slice\" { \"a\", \"b\" }\n"
          "job \"x\" { hosts = \"slice\", run = \"true\" }\n",
          2, "has 2 hosts, but the job has 1 (no topology");
  /* One host and no topology is fine. */
  loads("hosts \"one\" { \"a\" }\njob \"x\" { hosts = \"one\", run = \"true\" }\n");
  assert_int_equal(plan.instances[0].runtime, TPUCI__RUNTIME_SSH);
  assert_int_equal(tpuci__plan_hosts(&plan, &plan.instances[0]), 1);
}

static void test_runtime_rules(void **state) {
  (void) state;
  /* runtime = "ssh" may be written; it is implied. */
  loads("hosts \"one\" { \"a\" }\n"
        "job \"x\" { runtime = \"ssh\", hosts = \"one\", run = \"true\" }\n");
  assert_int_equal(plan.instances[0].runtime, TPUCI__RUNTIME_SSH);
  refused("hosts \"one\" { \"a\" }\n"
          "job \"x\" { runtime = \"docker\", image = \"bb:1\", hosts = \"one\", run = \"true\" }\n",
          2, "hosts: runs over SSH: it needs runtime 'ssh'");
  refused("job \"x\" { runtime = \"ssh\", run = \"true\" }\n", 1,
          "runtime: 'ssh' needs the hosts to run on");
  refused("hosts \"slice\" { \"a\" }\njob \"x\" { hosts = \"slcie\", run = \"true\" }\n",
          2, "hosts 'slcie' is not declared (did you mean 'slice'?)");
  /* An image: a container on each worker, with the container options
   * (docs/ssh.md); only `network` is the worker's own. */
  loads("hosts \"one\" { \"a\" }\n"
        "job \"x\" { hosts = \"one\", image = \"bb:1\", shm_size = \"1g\", "
        "privileged = true, run = \"true\" }\n");
  assert_int_equal(plan.instances[0].runtime, TPUCI__RUNTIME_SSH);
  assert_int_equal(plan.instances[0].image, 0);
  assert_true(plan.instances[0].ctr.shm_bytes == 1024ull * 1024 * 1024);
  assert_int_equal(plan.instances[0].ctr.privileged, 1);
  assert_int_equal(plan.warnings.len, 0);
  loads("hosts \"one\" { \"a\" }\n"
        "job \"x\" { hosts = \"one\", image = \"bb:1\", network = \"none\", run = \"true\" }\n");
  assert_int_equal(plan.warnings.len, 1);
  assert_non_null(strstr(plan.warnings.items[0], "network: ignored by runtime 'ssh'"));
  assert_null(plan.instances[0].network);
  /* Without an image, container options do not apply on a worker. */
  loads("hosts \"one\" { \"a\" }\n"
        "job \"x\" { hosts = \"one\", shm_size = \"1g\", run = \"true\" }\n");
  assert_int_equal(plan.instances[0].image, -1);
  assert_int_equal(plan.warnings.len, 1);
  assert_non_null(strstr(plan.warnings.items[0], "ignored by runtime 'ssh' without an image"));
  /* Jobs without hosts keep their defaults. */
  loads("hosts \"one\" { \"a\" }\njob \"x\" { run = \"true\" }\n");
  assert_int_equal(plan.instances[0].runtime, TPUCI__RUNTIME_LOCAL);
  assert_int_equal(plan.instances[0].hostset, -1);
}

static void test_alias_and_matrix(void **state) {
  size_t i;
  (void) state;
  loads("hosts { name = \"s\", \"a\", \"b\" }\n"
        "topology \"two\" { hosts = 2, chips_per_host = 4 }\n"
        "job \"x\" { topology = \"two\", hosts = \"s\",\n"
        "  matrix = { n = { 1, 2 } }, run = \"echo ${matrix.n}\" }\n");
  assert_int_equal(plan.ninstances, 2);
  for (i = 0; i < 2; i++) assert_int_equal(plan.instances[i].hostset, 0);
}

static void test_json_and_text(void **state) {
  char *js, *text;
  json_t *root, *ssh, *w;
  json_error_t je;
  (void) state;
  loads("hosts \"slice\" { \"root@10.0.0.2\", \"10.0.0.3:2222\", ssh_config = \"/etc/c\" }\n"
        "topology \"two\" { hosts = 2, chips_per_host = 4 }\n"
        "job \"x\" { topology = \"two\", hosts = \"slice\",\n"
        "  run = \"true\" }\n"
        "job \"y\" { run = \"true\" }\n");
  js = tpuci__plan_to_json(&plan);
  root = json_loads(js, 0, &je);
  assert_non_null(root);
  ssh = json_object_get(json_array_get(json_object_get(root, "instances"), 0), "ssh");
  assert_true(json_is_object(ssh));
  assert_string_equal(json_string_value(json_object_get(ssh, "name")), "slice");
  assert_string_equal(json_string_value(json_object_get(ssh, "ssh_config")), "/etc/c");
  w = json_array_get(json_object_get(ssh, "workers"), 1);
  assert_string_equal(json_string_value(json_object_get(w, "target")), "10.0.0.3:2222");
  assert_true(json_is_null(json_object_get(w, "user")));
  assert_int_equal(json_integer_value(json_object_get(w, "port")), 2222);
  assert_string_equal(json_string_value(json_object_get(
                          json_array_get(json_object_get(root, "instances"), 0), "runtime")),
                      "ssh");
  assert_true(json_is_null(json_object_get(
      json_array_get(json_object_get(root, "instances"), 1), "ssh")));
  json_decref(root);
  free(js);
  text = tpuci__plan_to_text(&plan);
  assert_non_null(strstr(text, "  runtime:  ssh\n"));
  assert_non_null(strstr(text, "  ssh:      hosts 'slice' (spec.lua:1)\n"));
  assert_non_null(strstr(text, "  ssh -F:   /etc/c\n"));
  assert_non_null(strstr(text, "  worker:   worker-1 on 10.0.0.3:2222\n"));
  assert_non_null(strstr(text, "one process each on its worker over SSH"));
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_list, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gcloud, setup, teardown),
      cmocka_unit_test_setup_teardown(test_instances, setup, teardown),
      cmocka_unit_test_setup_teardown(test_capacity_evidence, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gcloud_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_leading_dash, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gcloud_file_kind, setup, teardown),
      cmocka_unit_test_setup_teardown(test_count, setup, teardown),
      cmocka_unit_test_setup_teardown(test_runtime_rules, setup, teardown),
      cmocka_unit_test_setup_teardown(test_alias_and_matrix, setup, teardown),
      cmocka_unit_test_setup_teardown(test_json_and_text, setup, teardown),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
