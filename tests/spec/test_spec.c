/* The spec loader: specs given as strings, checked field by field in the
 * plan they expand to; the sandbox; the time and memory limits. */
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
#include "plan/host_env.h"
#include "kind/devices.h"
#include "kind/pytest/config.h"
#include "sched/scheduler.h"
#include "spec/spec.h"
#include "spec_fixture.h"

#define SPEC_DIR "/srv/proj"
#define DEFAULT_ON                                                                            \
  ((1u << TPUCI_OUTCOME_FAILED) | (1u << TPUCI_OUTCOME_TIMEOUT) | (1u << TPUCI_OUTCOME_OOM) | \
   (1u << TPUCI_OUTCOME_INFRA))

static int load(const char *src) { return load_with(src, SPEC_DIR, 0, 0); }

/* Loads src and fails the test with the message if it is refused. */
static void load_ok(const char *src) {
  int r = load(src);
  if (r != 0) fail_msg("load failed (%d): %s", r, err.msg ? err.msg : "");
}

/* Loads src, expecting `code` and a message containing `want`. */
static void load_fails(const char *src, int code, const char *want) {
  int r = load(src);
  if (r != code || err.msg == NULL || strstr(err.msg, want) == NULL)
    fail_msg("expected %d with '%s', got %d: %s", code, want, r,
             err.msg ? err.msg : "(no message)");
  assert_int_equal(plan.ninstances, 0);
}

static const tpuci__instance_t *inst(const char *name) {
  size_t i;
  for (i = 0; i < plan.ninstances; i++)
    if (strcmp(plan.instances[i].name, name) == 0) return &plan.instances[i];
  fail_msg("no instance '%s'", name);
  return NULL;
}

static void assert_argv(const tpuci__instance_t *in, const char *const *want, size_t n) {
  size_t i;
  assert_int_equal(in->argv.len, n);
  for (i = 0; i < n; i++) assert_string_equal(in->argv.items[i], want[i]);
  assert_null(in->argv.items[n]);
}

static void assert_env(const tpuci__instance_t *in, size_t i, const char *k, const char *v) {
  assert_true(i < in->env.len);
  assert_string_equal(in->env.items[i].key, k);
  assert_string_equal(in->env.items[i].value, v);
}

static int has_warning(const char *want) {
  size_t i;
  for (i = 0; i < plan.warnings.len; i++)
    if (strstr(plan.warnings.items[i], want)) return 1;
  return 0;
}

/* ------------------------------------------------------------------ */

static void test_defaults(void **state) {
  static const char *argv[] = {"/bin/sh", "-c", "pytest -q tests/"};
  const tpuci__instance_t *in;
  (void) state;

  load_ok("job \"unit\" { run = \"pytest -q tests/\" }\n");
  assert_int_equal(plan.ninstances, 1);
  assert_string_equal(plan.spec_path, "spec.lua");
  assert_string_equal(plan.spec_dir, SPEC_DIR);
  in = inst("unit");
  assert_string_equal(in->job, "unit");
  assert_string_equal(in->where, "spec.lua:1");
  assert_int_equal(in->matrix.len, 0);
  assert_int_equal(in->runtime, TPUCI__RUNTIME_LOCAL);
  assert_argv(in, argv, 3);
  assert_string_equal(in->run, "pytest -q tests/");
  assert_int_equal(in->env.len, 0);
  assert_null(in->workdir);
  assert_int_equal(in->timeout_ms, 0);
  assert_int_equal(in->start_timeout_ms, 180000);
  assert_int_equal(in->grace_ms, 5000);
  assert_int_equal(in->retry.attempts, 1);
  assert_int_equal(in->retry.on, DEFAULT_ON);
  assert_int_equal(in->retry.backoff_ms, 1000);
  assert_true(in->retry.factor == 2.0);
  assert_int_equal(in->retry.max_backoff_ms, 60000);
  assert_int_equal(in->image, -1);
  assert_int_equal(in->topology, -1);
  assert_int_equal(in->nmounts, 0);
  assert_true(in->cpus == 0.0);
  assert_int_equal(in->memory_bytes, 0);
  assert_null(in->network);
  assert_int_equal(in->selected, 1);
  assert_int_equal(plan.nimages, 0);
  assert_int_equal(plan.warnings.len, 0);
}

static void test_cmd_env_durations(void **state) {
  static const char *argv[] = {"python3", "-m", "pytest", "3", "true"};
  const tpuci__instance_t *in;
  (void) state;

  load_ok("job \"x\" {\n"
          "  cmd = { \"python3\", \"-m\", \"pytest\", 3, true },\n"
          "  env = { B = \"2\", A = 1, C = true, D = 2.5, E = 3.0, F = \"\" },\n"
          "  timeout = 90, grace = \"1.5s\",\n"
          "}\n"
          "job \"h\" { run = \"x\", timeout = \"1h30m\", grace = 0.25, start_timeout = \"10m\" }\n"
          "job \"m\" { run = \"x\", timeout = \"500ms\", start_timeout = 0 }\n");
  in = inst("x");
  assert_argv(in, argv, 5);
  assert_null(in->run);
  assert_int_equal(in->env.len, 6);
  assert_env(in, 0, "A", "1");
  assert_env(in, 1, "B", "2");
  assert_env(in, 2, "C", "true");
  assert_env(in, 3, "D", "2.5");
  assert_env(in, 4, "E", "3");
  assert_env(in, 5, "F", "");
  assert_int_equal(in->timeout_ms, 90000);
  assert_int_equal(in->grace_ms, 1500);
  assert_int_equal(inst("h")->timeout_ms, 5400000);
  assert_int_equal(inst("h")->grace_ms, 250);
  assert_int_equal(inst("m")->timeout_ms, 500);
  assert_int_equal(inst("h")->start_timeout_ms, 600000);
  assert_int_equal(inst("m")->start_timeout_ms, 0);
  /* Declaration order is plan order. */
  assert_string_equal(plan.instances[0].name, "x");
  assert_string_equal(plan.instances[1].name, "h");
  assert_string_equal(plan.instances[2].name, "m");
}

static void test_retries(void **state) {
  const tpuci__instance_t *a, *b, *c;
  (void) state;

  load_ok("job \"a\" { run = \"x\", retries = 2 }\n"
          "job \"b\" { run = \"x\", retries = { attempts = 3, on = { \"timeout\", "
          "\"infra\" }, backoff = \"2s\", factor = 3, max_backoff = \"1m\" } }\n"
          "job \"c\" { run = \"x\", retries = { attempts = 4, on = {} } }\n"
          "job \"d\" { run = \"x\", retries = 0 }\n");
  a = inst("a");
  assert_int_equal(a->retry.attempts, 3);
  assert_int_equal(a->retry.on, DEFAULT_ON);
  assert_int_equal(a->retry.backoff_ms, 1000);
  b = inst("b");
  assert_int_equal(b->retry.attempts, 3);
  assert_int_equal(b->retry.on, (1u << TPUCI_OUTCOME_TIMEOUT) | (1u << TPUCI_OUTCOME_INFRA));
  assert_int_equal(b->retry.backoff_ms, 2000);
  assert_true(b->retry.factor == 3.0);
  assert_int_equal(b->retry.max_backoff_ms, 60000);
  assert_false(tpuci__retry_wants(&b->retry, TPUCI_OUTCOME_FAILED));
  assert_true(tpuci__retry_wants(&b->retry, TPUCI_OUTCOME_TIMEOUT));
  assert_int_equal(tpuci__retry_delay(&b->retry, 3), 6000);
  c = inst("c");
  assert_int_equal(c->retry.attempts, 4);
  assert_int_equal(c->retry.on, 0);
  assert_int_equal(inst("d")->retry.attempts, 1);
}

static void test_matrix_order_and_interpolation(void **state) {
  static const char *names[] = {"unit[python=3.10,torch=2.1]", "unit[python=3.10,torch=2.2]",
                                "unit[python=3.11,torch=2.1]", "unit[python=3.11,torch=2.2]"};
  const tpuci__instance_t *in;
  size_t i;
  (void) state;

  /* Keys are sorted (python before torch) whatever the source order; the
   * last key varies fastest; each list keeps its order. */
  load_ok("job \"unit\" {\n"
          "  run = \"pytest --py=${matrix.python} --torch=${matrix.torch} $${HOME} $$ ${HOME} $1 "
          "$${matrix.torch}\",\n"
          "  cmd = nil,\n"
          "  env = { PY = \"py${matrix.python}\", K = \"${matrix.torch}${matrix.torch}\" },\n"
          "  workdir = \"/w/${matrix.python}\",\n"
          "  runtime = \"local\",\n"
          "  matrix = { torch = { \"2.1\", \"2.2\" }, python = { \"3.10\", \"3.11\" } },\n"
          "}\n");
  assert_int_equal(plan.ninstances, 4);
  for (i = 0; i < 4; i++) assert_string_equal(plan.instances[i].name, names[i]);
  in = inst("unit[python=3.11,torch=2.1]");
  assert_int_equal(in->matrix.len, 2);
  assert_string_equal(in->matrix.items[0].key, "python");
  assert_string_equal(in->matrix.items[0].value, "3.11");
  assert_string_equal(in->matrix.items[1].key, "torch");
  assert_string_equal(in->matrix.items[1].value, "2.1");
  /* Only "$${matrix" is an escape: "$$" (the shell's pid) is kept. */
  assert_string_equal(in->run,
                      "pytest --py=3.11 --torch=2.1 $${HOME} $$ ${HOME} $1 ${matrix.torch}");
  assert_string_equal(in->argv.items[2], in->run);
  assert_env(in, 0, "K", "2.12.1");
  assert_env(in, 1, "PY", "py3.11");
  assert_string_equal(in->workdir, "/w/3.11");
  assert_string_equal(in->where, "spec.lua:1");
  assert_string_equal(in->job, "unit");
}

static void test_matrix_include_exclude(void **state) {
  static const char *names[] = {"t[a=1,b=x]", "t[a=1,b=y]", "t[a=3,b=x]", "t[a=9,b=z]",
                                "t[a=2,b=x]"};
  size_t i;
  (void) state;

  load_ok("job \"t\" {\n"
          "  run = \"echo ${matrix.a}${matrix.b}\",\n"
          "  matrix = {\n"
          "    a = { 1, 2, 3 }, b = { \"x\", \"y\" },\n"
          "    exclude = { { a = 2 }, { a = 3, b = \"y\" } },\n"
          "    include = { { a = 9, b = \"z\" }, { a = 1, b = \"x\" }, { a = 2, b = \"x\" } },\n"
          "  },\n"
          "}\n");
  assert_int_equal(plan.ninstances, 5);
  for (i = 0; i < 5; i++) assert_string_equal(plan.instances[i].name, names[i]);
  assert_string_equal(inst("t[a=9,b=z]")->run, "echo 9z");
  /* { a = 1, b = "x" } is in the product already: skipped, with a warning. */
  assert_int_equal(plan.warnings.len, 1);
  assert_true(has_warning("spec.lua:1: job 't': matrix.include[2]: combination "
                          "is already in the matrix"));

  /* A matrix of includes only. */
  load_ok("job \"i\" { run = \"${matrix.os}\", matrix = { include = {\n"
          "  { os = \"debian\", v = 12 }, { os = \"ubuntu\", v = 24 } } } }\n");
  assert_int_equal(plan.ninstances, 2);
  assert_string_equal(plan.instances[0].name, "i[os=debian,v=12]");
  assert_string_equal(plan.instances[1].name, "i[os=ubuntu,v=24]");
  assert_string_equal(plan.instances[1].run, "ubuntu");
}

static void test_matrix_values(void **state) {
  (void) state;
  load_ok("job \"v\" {\n"
          "  run = \"${matrix.n}/${matrix.f}/${matrix.b}\",\n"
          "  matrix = { n = { 1, 2.0, -3 }, f = { 1.5 }, b = { true, false } },\n"
          "}\n");
  assert_int_equal(plan.ninstances, 6);
  assert_string_equal(plan.instances[0].name, "v[b=true,f=1.5,n=1]");
  assert_string_equal(plan.instances[1].name, "v[b=true,f=1.5,n=2]");
  assert_string_equal(plan.instances[2].name, "v[b=true,f=1.5,n=-3]");
  assert_string_equal(plan.instances[3].name, "v[b=false,f=1.5,n=1]");
  assert_string_equal(plan.instances[5].run, "-3/1.5/false");
  /* 1.5 is a float: a hint that "3.10" as a number would lose its zero. */
  assert_int_equal(plan.warnings.len, 1);
  assert_true(has_warning("matrix.f[1]: the number 1.5"));
}

static void test_function_fields(void **state) {
  static const char *argv[] = {"python3.10", "-c", "f[py=3.10]", "f"};
  const tpuci__instance_t *in;
  (void) state;

  load_ok("local calls = 0\n"
          "job \"f\" {\n"
          "  matrix = { py = { \"3.10\", \"3.11\" } },\n"
          "  cmd = function(inst) return { \"python\" .. inst.matrix.py, \"-c\", inst.name, "
          "inst.job } end,\n"
          "  env = function(inst) return { PY = inst.matrix.py, LITERAL = \"$${x}\", N = 1 } end,\n"
          "  workdir = function(inst) return \"w/\" .. inst.matrix.py end,\n"
          "}\n"
          "job \"g\" {\n"
          "  matrix = { n = { 1, 2, 3 } },\n"
          "  run = function(inst) calls = calls + 1; return \"echo \" .. calls .. \" $$\" end,\n"
          "}\n");
  assert_int_equal(plan.ninstances, 5);
  in = inst("f[py=3.10]");
  assert_argv(in, argv, 4);
  assert_null(in->run);
  /* Function results are literal: no "$$" unescaping. */
  assert_int_equal(in->env.len, 3);
  assert_env(in, 0, "LITERAL", "$${x}");
  assert_env(in, 1, "N", "1");
  assert_env(in, 2, "PY", "3.10");
  assert_string_equal(in->workdir, SPEC_DIR "/w/3.10");
  assert_string_equal(inst("f[py=3.11]")->workdir, SPEC_DIR "/w/3.11");
  /* A function cannot declare more: the declarations are complete. */
  load_fails("job \"f\" { run = function() job \"late\" { run = \"x\" } return \"x\" end }",
             TPUCI_ESPEC,
             "spec.lua:1: job: declarations are only allowed while "
             "the spec runs");
  load_ok("local calls = 0\n"
          "job \"f\" {\n"
          "  matrix = { py = { \"3.10\", \"3.11\" } },\n"
          "  cmd = function(inst) return { \"python\" .. inst.matrix.py, \"-c\", inst.name, "
          "inst.job } end,\n"
          "  env = function(inst) return { PY = inst.matrix.py, LITERAL = \"$${x}\", N = 1 } end,\n"
          "  workdir = function(inst) return \"w/\" .. inst.matrix.py end,\n"
          "}\n"
          "job \"g\" {\n"
          "  matrix = { n = { 1, 2, 3 } },\n"
          "  run = function(inst) calls = calls + 1; return \"echo \" .. calls .. \" $$\" end,\n"
          "}\n");
  /* Called once per instance, in plan order. */
  assert_string_equal(inst("g[n=1]")->run, "echo 1 $$");
  assert_string_equal(inst("g[n=3]")->run, "echo 3 $$");
  assert_string_equal(inst("g[n=3]")->argv.items[2], "echo 3 $$");
}

static void test_images(void **state) {
  (void) state;
  /* Jobs may name images declared after them. */
  load_ok("job \"a\" { image = \"py\", run = \"x\" }\n"
          "job \"b\" { image = \"tpuci-test/python:1\", run = \"x\" }\n"
          "job \"c\" { image = \"busybox:1\", run = \"x\" }\n"
          "job \"d\" { image = \"busybox:1\", run = \"x\", runtime = \"docker\" }\n"
          "job \"e\" { image = \"py\", runtime = \"local\", run = \"x\" }\n"
          "image \"py\" { ref = \"tpuci-test/python:1\", pull = \"never\" }\n"
          "image \"other\" { ref = \"x/y:2\", pull = \"always\" }\n"
          "image \"dflt\" { ref = \"z:3\" }\n");
  assert_int_equal(plan.nimages, 4);
  assert_string_equal(plan.images[0].name, "py");
  assert_string_equal(plan.images[0].ref, "tpuci-test/python:1");
  assert_int_equal(plan.images[0].pull, TPUCI__PULL_NEVER);
  assert_string_equal(plan.images[0].where, "spec.lua:6");
  assert_int_equal(plan.images[1].pull, TPUCI__PULL_ALWAYS);
  assert_int_equal(plan.images[2].pull, TPUCI__PULL_MISSING);
  /* A literal ref makes one implicit image, shared by the jobs using it. */
  assert_string_equal(plan.images[3].name, "busybox:1");
  assert_string_equal(plan.images[3].ref, "busybox:1");
  assert_int_equal(plan.images[3].pull, TPUCI__PULL_MISSING);
  assert_string_equal(plan.images[3].where, "spec.lua:3");
  assert_int_equal(inst("a")->image, 0);
  assert_int_equal(inst("a")->runtime, TPUCI__RUNTIME_DOCKER);
  /* A literal ref equal to a declared image's ref uses that image. */
  assert_int_equal(inst("b")->image, 0);
  assert_int_equal(inst("c")->image, 3);
  assert_int_equal(inst("d")->image, 3);
  /* The local runtime ignores images, and says so. */
  assert_int_equal(inst("e")->runtime, TPUCI__RUNTIME_LOCAL);
  assert_int_equal(inst("e")->image, -1);
  assert_true(has_warning("spec.lua:5: job 'e': image: ignored by runtime 'local'"));
}

static void test_mounts_and_workdir(void **state) {
  const tpuci__instance_t *m;
  (void) state;

  load_ok("image \"py\" { ref = \"p:1\" }\n"
          "job \"m\" {\n"
          "  image = \"py\", run = \"x\",\n"
          "  mounts = { [\".\"] = \"/src\", [\"../data/./x/\"] = { target = \"/data\", readonly = "
          "true },\n"
          "             [\"/abs//path/..\"] = \"/abs\" },\n"
          "  workdir = \"rel/dir\",\n"
          "  cpus = 1.5, memory = \"512m\", network = \"none\",\n"
          "}\n"
          "job \"l\" { run = \"x\", workdir = \"sub/../other\" }\n"
          "job \"k\" { run = \"x\", workdir = \"/abs/wd\" }\n");
  m = inst("m");
  assert_int_equal(m->nmounts, 3);
  assert_string_equal(m->mounts[0].source, SPEC_DIR);
  assert_string_equal(m->mounts[0].target, "/src");
  assert_int_equal(m->mounts[0].read_only, 0);
  assert_string_equal(m->mounts[1].source, "/srv/data/x");
  assert_string_equal(m->mounts[1].target, "/data");
  assert_int_equal(m->mounts[1].read_only, 1);
  assert_string_equal(m->mounts[2].source, "/abs");
  /* docker: the workdir is a container path, kept as written. */
  assert_string_equal(m->workdir, "rel/dir");
  assert_true(m->cpus == 1.5);
  assert_int_equal(m->memory_bytes, 512u * 1024 * 1024);
  assert_string_equal(m->network, "none");
  /* local: relative to the spec's folder. */
  assert_string_equal(inst("l")->workdir, SPEC_DIR "/other");
  assert_string_equal(inst("k")->workdir, "/abs/wd");
}

static void test_topologies_and_aliases(void **state) {
  const tpuci__topology_t *t;
  (void) state;

  load_ok("job \"t\" { run = \"x\", topology = \"mine\" }\n"
          "topology \"mine\" { hosts = 2, chips_per_host = 4, cores_per_chip = 2,\n"
          "                  emulate = \"jax\", base = \"v4-16\" }\n"
          "topology { name = \"plain\" }\n"
          "job { name = \"alias\", cmd = { \"true\" } }\n"
          "image { name = \"img\", ref = \"r:1\" }\n");
  assert_int_equal(plan.ntopologies, 2);
  t = &plan.topologies[0];
  assert_string_equal(t->name, "mine");
  assert_string_equal(t->base, "v4-16");
  assert_int_equal(t->hosts, 2);
  assert_int_equal(t->chips_per_host, 4);
  assert_int_equal(t->cores_per_chip, 2);
  assert_string_equal(t->emulate, "jax");
  assert_string_equal(t->where, "spec.lua:2");
  t = &plan.topologies[1];
  assert_string_equal(t->name, "plain");
  assert_null(t->base);
  assert_int_equal(t->hosts, 1);
  assert_int_equal(t->chips_per_host, 1);
  assert_int_equal(t->cores_per_chip, 1);
  assert_string_equal(t->emulate, "pjrt");
  assert_int_equal(inst("t")->topology, 0);
  assert_string_equal(inst("alias")->where, "spec.lua:5");
  assert_int_equal(plan.nimages, 1);
  assert_string_equal(plan.images[0].name, "img");
}

static void test_topology_catalogue(void **state) {
  (void) state;
  /* A catalogue type gets its numbers from the catalogue... */
  load_ok("topology \"v4-16\" { emulate = \"jax\" }\n"
          "topology \"v5litepod-8\" { hosts = 1 }\n"
          "topology \"v6e-8\" { layout = \"2x4\", emulate = \"none\" }\n"
          "topology \"bigger\" { base = \"v4-8\", hosts = 4 }\n");
  assert_int_equal(plan.ntopologies, 4);
  assert_int_equal(plan.topologies[0].hosts, 2);
  assert_int_equal(plan.topologies[0].chips_per_host, 4);
  assert_int_equal(plan.topologies[0].cores_per_chip, 2);
  assert_string_equal(plan.topologies[0].emulate, "jax");
  /* ... and hosts or layout pick one of its layouts. */
  assert_int_equal(plan.topologies[1].hosts, 1);
  assert_int_equal(plan.topologies[1].chips_per_host, 8);
  assert_int_equal(plan.topologies[2].hosts, 2);
  assert_int_equal(plan.topologies[2].chips_per_host, 4);
  /* A base gives the numbers not overridden. */
  assert_string_equal(plan.topologies[3].base, "v4-8");
  assert_int_equal(plan.topologies[3].hosts, 4);
  assert_int_equal(plan.topologies[3].chips_per_host, 4);
  assert_int_equal(plan.topologies[3].cores_per_chip, 2);
  assert_string_equal(plan.topologies[3].emulate, "pjrt");
  /* PJRT cannot span hosts: the slice's warning, located. */
  assert_true(has_warning("spec.lua:4: topology 'bigger': emulate = \"pjrt\" with 4 hosts"));

  load_fails("\ntopology \"v4-16\" { chips_per_host = 8 }", TPUCI_ESPEC,
             "spec.lua:2: topology 'v4-16': v4-16 has 4 chips per host, not 8");
  load_fails("topology \"x\" { base = \"v9-8\" }", TPUCI_ESPEC,
             "spec.lua:1: topology 'x': base: unknown TPU type 'v9-8'");
  load_fails("topology \"v6e-8\" { layout = \"4x2\" }", TPUCI_ESPEC,
             "spec.lua:1: topology 'v6e-8': v6e-8 has no layout '4x2'");

  /* A job may name a catalogue type without declaring it: a topology of
   * that type with the defaults, shared by every job naming it, like a
   * literal image ref. A declaration of the name customises it. */
  load_ok("job \"a\" { run = \"x\", topology = \"v4-8\" }\n"
          "job \"b\" { run = \"x\", topology = \"v5litepod-8\" }\n"
          "job \"c\" { run = \"x\", topology = \"v4-8\" }\n"
          "topology \"v6e-8\" { layout = \"2x4\", emulate = \"jax\" }\n"
          "job \"d\" { run = \"x\", topology = \"v6e-8\" }\n");
  assert_int_equal(plan.ntopologies, 3);
  assert_string_equal(plan.topologies[0].name, "v6e-8");
  assert_string_equal(plan.topologies[0].emulate, "jax");
  assert_int_equal(plan.topologies[0].hosts, 2);
  assert_string_equal(plan.topologies[1].name, "v4-8");
  assert_string_equal(plan.topologies[1].where, "spec.lua:1");
  assert_null(plan.topologies[1].base);
  assert_int_equal(plan.topologies[1].hosts, 1);
  assert_int_equal(plan.topologies[1].chips_per_host, 4);
  assert_int_equal(plan.topologies[1].cores_per_chip, 2);
  assert_string_equal(plan.topologies[1].emulate, "pjrt");
  assert_string_equal(plan.topologies[2].name, "v5litepod-8");
  assert_int_equal(plan.topologies[2].hosts, 2);
  assert_int_equal(inst("a")->topology, 1);
  assert_int_equal(inst("c")->topology, 1);
  assert_int_equal(inst("b")->topology, 2);
  assert_int_equal(inst("d")->topology, 0);
  /* The catalogue's warnings come with the job's line. */
  assert_true(has_warning("spec.lua:2: topology 'v5litepod-8': emulate = \"pjrt\" with 2 hosts"));
  /* A name that is neither declared nor a type fails, with a suggestion
   * from the declarations or the catalogue. */
  load_fails("job \"a\" { run = \"x\", topology = \"v4-61\" }", TPUCI_ESPEC,
             "spec.lua:1: job 'a': topology 'v4-61' is neither declared nor a TPU "
             "type (did you mean 'v4-64'?)");
  load_fails("job \"a\" { run = \"x\", topology = \"v5e-8\" }", TPUCI_ESPEC,
             "(did you mean 'v5litepod-8'?)");
  load_fails("topology \"mine\" { hosts = 2 }\n"
             "job \"a\" { run = \"x\", topology = \"mime\" }",
             TPUCI_ESPEC,
             "spec.lua:2: job 'a': topology 'mime' is neither declared nor a TPU "
             "type (did you mean 'mine'?)");
  load_fails("job \"a\" { run = \"x\", topology = \"gpu\" }", TPUCI_ESPEC,
             "topology 'gpu' is neither declared nor a TPU type (declare it with "
             "topology \"gpu\" { ... }, or name a type that `tpuci topologies` lists)");
}

static void test_where(void **state) {
  (void) state;
  load_ok("-- A comment.\n"
          "job \"a\" {\n"
          "  run = \"x\",\n"
          "}\n"
          "local function mk(n)\n"
          "  job(n) { run = \"y\" }\n"
          "end\n"
          "mk(\"b\")\n"
          "pcall(job(\"c\"), { run = \"z\" })\n");
  assert_string_equal(inst("a")->where, "spec.lua:2");
  assert_string_equal(inst("b")->where, "spec.lua:6");
  assert_string_equal(inst("c")->where, "spec.lua:9");
}

static void test_sandbox(void **state) {
  (void) state;
  load_fails("os.execute('true')", TPUCI_ESPEC,
             "spec.lua:1: attempt to index a nil value (global 'os')");
  load_fails("local f = io.open('/etc/passwd')", TPUCI_ESPEC, "(global 'io')");
  load_fails("debug.sethook()", TPUCI_ESPEC, "(global 'debug')");
  load_fails("require('x')", TPUCI_ESPEC, "(global 'require')");
  load_fails("dofile('/etc/passwd')", TPUCI_ESPEC, "(global 'dofile')");
  load_fails("loadfile('/etc/passwd')", TPUCI_ESPEC, "(global 'loadfile')");
  load_fails("package.loadlib('x', 'y')", TPUCI_ESPEC, "(global 'package')");
  /* load() only takes text, even when asked for binary. */
  load_fails("assert(load(string.dump(function() end), 'b', 'b'))", TPUCI_ESPEC,
             "attempt to load a binary chunk");
  load_fails("\x1bLua", TPUCI_ESPEC, "spec.lua: attempt to load a binary chunk");
  /* What a spec may use. */
  load_ok("assert(load('return 1 + 1')() == 2)\n"
          "assert(string.format and table.concat and math.floor and utf8.char\n"
          "       and coroutine.wrap and pcall and setmetatable)\n"
          "assert(os == nil and io == nil and debug == nil and package == nil)\n"
          "assert(tpuci.spec_dir == '" SPEC_DIR "')\n"
          "job \"x\" { run = \"x\" }\n");
}

static void test_tpuci_env_and_read_file(void **state) {
  char dir[] = "/tmp/tpuci-spec-XXXXXX", path[256], *src;
  FILE *f;
  (void) state;

  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof(path), "%s/a.txt", dir);
  f = fopen(path, "w");
  assert_non_null(f);
  fputs("hello\n", f);
  fclose(f);
  snprintf(path, sizeof(path), "%s/sub", dir);
  assert_int_equal(mkdir(path, 0755), 0);
  snprintf(path, sizeof(path), "%s/sub/b.txt", dir);
  f = fopen(path, "w");
  assert_non_null(f);
  fclose(f);
  snprintf(path, sizeof(path), "%s/link", dir);
  assert_int_equal(symlink("/etc/passwd", path), 0);
  setenv("TPUCI_TEST_VAR", "v1", 1);
  unsetenv("TPUCI_TEST_NOPE");

  src = tpuci__printf(
      "assert(tpuci.read_file('a.txt') == 'hello\\n')\n"
      "assert(tpuci.read_file('./sub//b.txt') == '')\n"
      "assert(tpuci.env('TPUCI_TEST_NOPE') == nil)\n"
      "job \"e\" { run = tpuci.read_file('a.txt'), env = {\n"
      "  V = tpuci.env('TPUCI_TEST_VAR'), D = tpuci.env('TPUCI_TEST_NOPE', 'dflt') } }\n");
  assert_int_equal(load_with(src, dir, 0, 0), 0);
  free(src);
  assert_string_equal(plan.instances[0].run, "hello\n");
  assert_env(&plan.instances[0], 0, "D", "dflt");
  assert_env(&plan.instances[0], 1, "V", "v1");

  assert_int_equal(load_with("tpuci.read_file('link')", dir, 0, 0), TPUCI_ESPEC);
  assert_non_null(strstr(err.msg, "spec.lua:1: tpuci.read_file: 'link' leaves "
                                  "the spec's folder (through a symbolic link)"));
  assert_int_equal(load_with("tpuci.read_file('sub/../../x')", dir, 0, 0), TPUCI_ESPEC);
  assert_non_null(strstr(err.msg, "leaves the spec's folder"));
  assert_int_equal(load_with("tpuci.read_file('/etc/passwd')", dir, 0, 0), TPUCI_ESPEC);
  assert_non_null(strstr(err.msg, "is absolute"));
  assert_int_equal(load_with("tpuci.read_file('missing')", dir, 0, 0), TPUCI_ESPEC);
  assert_non_null(strstr(err.msg, "cannot read 'missing'"));
  assert_int_equal(load_with("tpuci.read_file('sub')", dir, 0, 0), TPUCI_ESPEC);
  assert_non_null(strstr(err.msg, "tpuci.read_file: 'sub' is a folder, not a "
                                  "regular file"));
  /* A FIFO is refused without waiting for a writer. */
  snprintf(path, sizeof(path), "%s/fifo", dir);
  assert_int_equal(mkfifo(path, 0600), 0);
  assert_int_equal(load_with("tpuci.yaml('fifo')", dir, 0, 0), TPUCI_ESPEC);
  assert_non_null(strstr(err.msg, "tpuci.yaml: 'fifo' is a FIFO, not a regular file"));

  snprintf(path, sizeof(path), "rm -rf '%s'", dir);
  assert_int_equal(system(path), 0);
}

static void assert_times_out(const char *src, const char *want) {
  uint64_t t0 = tpuci__now_ms(), dt;
  int r = load_with(src, SPEC_DIR, 300, 0);
  dt = tpuci__now_ms() - t0;
  if (r != TPUCI_ELIMIT || strstr(err.msg, want) == NULL)
    fail_msg("expected TPUCI_ELIMIT with '%s', got %d: %s", want, r, err.msg ? err.msg : "");
  assert_true(dt >= 290); /* Two clocks, each rounded to 1 ms. */
  /* Only a hang fails this (no speed check: machines are shared). */
  assert_true(dt < 30000);
  assert_int_equal(plan.ninstances, 0);
}

static void test_timeout(void **state) {
  (void) state;
  assert_times_out("local n = 0\nwhile true do n = n + 1 end\n",
                   "spec.lua:2: spec took longer than 300ms to load (endless loop?)");
  /* A pcall in the spec cannot swallow the timeout... */
  assert_times_out("while true do\n"
                   "  pcall(function() while true do end end)\n"
                   "end\n",
                   "spec took longer than 300ms");
  /* ... not even once, to carry on afterwards. */
  assert_times_out("local ok, e = pcall(function() while true do end end)\n"
                   "job \"after\" { run = \"x\" }\n",
                   "spec.lua:1: spec took longer than 300ms");
  assert_times_out("local co = coroutine.create(function() while true do end end)\n"
                   "local ok = coroutine.resume(co)\n"
                   "job \"after\" { run = \"x\" }\n",
                   "spec.lua:1: spec took longer than 300ms");
  assert_times_out("local ok = xpcall(function() while true do end end,\n"
                   "                  function(e) while true do end end)\n",
                   "spec took longer than 300ms");
  /* Function fields run under the same deadline. */
  assert_times_out("job \"f\" {\n"
                   "  run = function() while true do end end,\n"
                   "}\n",
                   "spec.lua:2: spec took longer than 300ms");
  /* Lua runs finalizers with hooks off: a spec may not have any. */
  load_fails("setmetatable({}, { __gc = function() while true do end end })\n", TPUCI_ESPEC,
             "spec.lua:1: setmetatable: __gc metamethods are not "
             "allowed in a spec");
  load_ok("local t = setmetatable({}, { __index = function() return 1 end })\n"
          "assert(t.x == 1)\n");
  /* xpcall() handlers work until the deadline. */
  load_ok("local ok, e = xpcall(error, function(m) return 'handled ' .. m end, 'x')\n"
          "assert(not ok and e == 'handled x', e)\n");
}

/* timeout = 0 is no timeout (the default, said explicitly), and the plan
 * says "none"; a positive timeout under 1 ms would round to 0, so it is
 * refused rather than silently meaning no timeout. */
static void test_timeout_zero(void **state) {
  static const char *const zero[] = {"0", "0.0", "\"0s\"", "\"0ms\"", "\"0h0m\"", NULL};
  static const char *const tiny[] = {"0.0004", "\"0.4ms\"", "\"0.0001s\"", NULL};
  size_t i;
  char src[128], *text;
  (void) state;

  for (i = 0; zero[i]; i++) {
    snprintf(src, sizeof(src), "job \"j\" { run = \"x\", timeout = %s }", zero[i]);
    load_ok(src);
    assert_int_equal(plan.instances[0].timeout_ms, 0);
    text = tpuci__plan_to_text(&plan);
    assert_non_null(strstr(text, "  timeout:  none\n"));
    free(text);
  }
  for (i = 0; tiny[i]; i++) {
    snprintf(src, sizeof(src), "job \"j\" { run = \"x\", timeout = %s }", tiny[i]);
    load_fails(src, TPUCI_ESPEC, "spec.lua:1: job 'j': timeout: less than 1ms, got ");
    assert_non_null(strstr(err.msg, "(write 0 for none)"));
  }
  load_ok("job \"j\" { run = \"x\", timeout = \"0.5ms\" }");
  assert_int_equal(plan.instances[0].timeout_ms, 1);
}

static void test_memory(void **state) {
  int r;
  (void) state;
  r = load_with("local t = {}\nfor i = 1, 1e9 do t[i] = i end\n", SPEC_DIR, 5000,
                16u * 1024 * 1024);
  assert_int_equal(r, TPUCI_ELIMIT);
  assert_string_equal(err.msg, "spec.lua: spec used more than 16 MiB while loading");
  r = load_with("local s = string.rep('x', 1 << 30)\n", SPEC_DIR, 5000, 16u * 1024 * 1024);
  assert_int_equal(r, TPUCI_ELIMIT);
  r = load_with("local s = string.rep('x', 1 << 30)\n", SPEC_DIR, 0, 0);
  assert_int_equal(r, TPUCI_ELIMIT);
  assert_string_equal(err.msg, "spec.lua: spec used more than 256 MiB while loading");
  /* A spec that catches a failed allocation and goes on is fine. */
  r = load_with("assert(not pcall(string.rep, 'x', 1 << 30))\n"
                "job \"x\" { run = \"x\" }\n",
                SPEC_DIR, 5000, 16u * 1024 * 1024);
  assert_int_equal(r, 0);
  assert_int_equal(plan.ninstances, 1);
  /* The plan's own copies count too: 50000 instances of a 1 KiB command
   * are more than 16 MiB, though the Lua state holds the string once. */
  r = load_with("local v = {} for i = 1, 50000 do v[i] = i end\n"
                "job \"x\" { run = string.rep('x', 1024), matrix = { n = v } }\n",
                SPEC_DIR, 5000, 16u * 1024 * 1024);
  assert_int_equal(r, TPUCI_ELIMIT);
  assert_string_equal(err.msg, "spec.lua: spec used more than 16 MiB while loading");
  assert_int_equal(plan.ninstances, 0);
  /* Too small a cap to even create the state. */
  r = load_with("job \"x\" { run = \"x\" }", SPEC_DIR, 0, 64);
  assert_int_equal(r, TPUCI_ELIMIT);
}

static void test_warnings(void **state) {
  (void) state;
  load_ok("warn('a', 'b')\n"
          "warn('@on')\n"
          "print('p', 1, nil)\n"
          "job \"x\" { run = \"x\", network = \"none\", cpus = 1 }\n");
  assert_int_equal(plan.warnings.len, 3);
  assert_string_equal(plan.warnings.items[0], "spec.lua:1: ab");
  assert_string_equal(plan.warnings.items[1], "spec.lua:3: p 1 nil");
  assert_string_equal(plan.warnings.items[2],
                      "spec.lua:4: job 'x': cpus, network: ignored by runtime 'local'");
  /* Warnings survive a failed load; instances do not. */
  assert_int_equal(load("warn('before')\njob \"x\" {}\n"), TPUCI_ESPEC);
  assert_int_equal(plan.ninstances, 0);
  assert_int_equal(plan.warnings.len, 1);
  /* A spec warning in a loop is capped. */
  load_ok("for i = 1, 5000 do warn('w') end");
  assert_int_equal(plan.warnings.len, 1001);
  assert_non_null(strstr(plan.warnings.items[1000], "the rest were dropped"));
  load_ok("warn(string.rep('x', 100000))");
  assert_int_equal(plan.warnings.len, 1);
  assert_true(strlen(plan.warnings.items[0]) < 2100);
}

static void test_error_messages(void **state) {
  (void) state;
  load_fails("error({})", TPUCI_ESPEC, "spec.lua:1: error object is a table value");
  load_fails("\n\nerror('first\\nsecond')", TPUCI_ESPEC, "spec.lua:3: first second");
  load_fails("error('plain', 0)", TPUCI_ESPEC, "spec.lua:1: plain");
  load_fails("error(setmetatable({}, { __tostring = function() return 'obj' end }))", TPUCI_ESPEC,
             "spec.lua:1: obj");
  load_fails("local x = 1 +", TPUCI_ESPEC, "spec.lua:1: unexpected symbol near <eof>");
  load_fails("job \"x\" { run = \"x\", timeout = \"1h30\" }", TPUCI_ESPEC,
             "spec.lua:1: job 'x': timeout: bad duration '1h30'");
  load_fails("job \"x\" { run = \"x\", start_timeout = \"3 minutes\" }", TPUCI_ESPEC,
             "spec.lua:1: job 'x': start_timeout: bad duration '3 minutes'");
  load_fails("image \"i\" { ref = \"a:b\", puul = \"never\" }", TPUCI_ESPEC,
             "spec.lua:1: image 'i': puul: unknown key, did you mean 'pull'?");
  load_fails("job \"x\" { run = \"x\", runtime = \"podman\" }", TPUCI_ESPEC,
             "runtime: unknown runtime 'podman' (use 'local', 'docker', 'swarm' or 'ssh')");
  load_fails("job \"x\" { run = \"x\", imgae = \"py\" }", TPUCI_ESPEC,
             "imgae: unknown key, did you mean 'image'?");
  load_fails("job \"x\" { run = \"x\" }\njob \"y\" { run = \"x\", image = \"nope\" }", TPUCI_ESPEC,
             "spec.lua:2: job 'y': image 'nope' is not declared (declare it");
  /* A long chunk name is given whole (Lua cuts it at LUA_IDSIZE), without
   * a double prefix. */
  {
    const char *name = "a/very/long/path/to/some/project/with/its/specs/ci/spec-file.lua";
    const tpuci__kind_spec_t *kinds[TPUCI__NKINDS + 1];
    tpuci__spec_limits_t limits = spec_limits(0, 0, kinds);
    int r;
    tpuci__plan_free(&plan);
    tpuci__plan_init(&plan);
    tpuci__err_clear(&err);
    r = tpuci__spec_load(&plan, "error('x')", 10, name, SPEC_DIR, &limits, &err);
    assert_int_equal(r, TPUCI_ESPEC);
    assert_int_equal(strncmp(err.msg, name, strlen(name)), 0);
    assert_string_equal(err.msg + strlen(name), ":1: x");
    /* Declarations name it whole too. */
    tpuci__plan_free(&plan);
    tpuci__plan_init(&plan);
    tpuci__err_clear(&err);
    r = tpuci__spec_load(&plan, "job 'x' { rnu = 'y' }", 21, name, SPEC_DIR, &limits, &err);
    assert_int_equal(r, TPUCI_ESPEC);
    assert_int_equal(strncmp(err.msg, name, strlen(name)), 0);
    assert_non_null(strstr(err.msg, ".lua:1: job 'x': rnu: unknown key"));
  }
}

static void test_json_and_text(void **state) {
  json_t *root, *insts, *o;
  json_error_t jerr;
  const char *key;
  char *s;
  size_t i;
  static const char *root_keys[] = {"spec", "images", "topologies", "instances", "warnings"};
  static const char *inst_keys[] = {"name",
                                    "job",
                                    "where",
                                    "matrix",
                                    "runtime",
                                    "argv",
                                    "run",
                                    "env",
                                    "workdir",
                                    "timeout_ms",
                                    "idle_timeout_ms",
                                    "start_timeout_ms",
                                    "grace_ms",
                                    "retry",
                                    "image",
                                    "topology",
                                    "mounts",
                                    "cpus",
                                    "memory_bytes",
                                    "network",
                                    "container",
                                    "ssh",
                                    "hosts"};
  void *iter;
  (void) state;

  load_ok("image \"py\" { ref = \"tpuci-test/python:1\" }\n"
          "topology \"pod\" { hosts = 1, chips_per_host = 4 }\n"
          "job \"unit\" { image = \"py\", topology = \"pod\", run = \"pytest\",\n"
          "  matrix = { python = { \"3.10\", \"3.11\" } }, env = { A = \"1\" },\n"
          "  timeout = \"20m\", retries = 2, mounts = { [\".\"] = \"/src\" } }\n"
          "job \"lint\" { cmd = { \"ruff\", \"check\", \"a b\" } }\n"
          "warn('w')\n");
  assert_int_equal(plan.ninstances, 3);
  plan.instances[1].selected = 0;

  s = tpuci__plan_to_json(&plan);
  root = json_loads(s, 0, &jerr);
  if (root == NULL) fail_msg("bad JSON: %s\n%s", jerr.text, s);
  for (i = 0, iter = json_object_iter(root); iter; i++, iter = json_object_iter_next(root, iter))
    assert_string_equal(json_object_iter_key(iter), root_keys[i]);
  assert_int_equal(i, 5);
  assert_string_equal(json_string_value(json_object_get(root, "spec")), "spec.lua");
  assert_int_equal(json_array_size(json_object_get(root, "images")), 1);
  assert_int_equal(json_array_size(json_object_get(root, "topologies")), 1);
  assert_int_equal(json_array_size(json_object_get(root, "warnings")), 1);
  insts = json_object_get(root, "instances");
  /* Only selected instances. */
  assert_int_equal(json_array_size(insts), 2);
  o = json_array_get(insts, 0);
  for (i = 0, iter = json_object_iter(o); iter; i++, iter = json_object_iter_next(o, iter))
    assert_string_equal(json_object_iter_key(iter), inst_keys[i]);
  assert_int_equal(i, sizeof(inst_keys) / sizeof(inst_keys[0]));
  assert_string_equal(json_string_value(json_object_get(o, "name")), "unit[python=3.10]");
  assert_string_equal(json_string_value(json_object_get(o, "runtime")), "docker");
  assert_string_equal(json_string_value(json_object_get(o, "image")), "tpuci-test/python:1");
  assert_string_equal(json_string_value(json_object_get(o, "topology")), "pod");
  assert_int_equal(json_array_size(json_object_get(o, "hosts")), 1);
  assert_string_equal(
      json_string_value(json_object_get(json_array_get(json_object_get(o, "hosts"), 0), "name")),
      "localhost");
  assert_string_equal(json_string_value(json_object_get(
                          json_object_get(json_array_get(json_object_get(o, "hosts"), 0), "env"),
                          "CPU_NUM_DEVICES")),
                      "4");
  assert_string_equal(json_string_value(json_object_get(json_object_get(o, "matrix"), "python")),
                      "3.10");
  assert_string_equal(json_string_value(json_object_get(json_object_get(o, "env"), "A")), "1");
  assert_int_equal(json_integer_value(json_object_get(o, "timeout_ms")), 1200000);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "retry"), "attempts")), 3);
  assert_int_equal(json_array_size(json_object_get(json_object_get(o, "retry"), "on")), 4);
  assert_string_equal(
      json_string_value(json_object_get(json_array_get(json_object_get(o, "mounts"), 0), "source")),
      SPEC_DIR);
  assert_true(json_is_null(json_object_get(o, "workdir")));
  o = json_array_get(insts, 1);
  assert_string_equal(json_string_value(json_object_get(o, "name")), "lint");
  assert_true(json_is_null(json_object_get(o, "image")));
  assert_true(json_is_null(json_object_get(o, "run")));
  assert_int_equal(json_array_size(json_object_get(o, "argv")), 3);
  key = json_string_value(json_array_get(json_object_get(o, "argv"), 2));
  assert_string_equal(key, "a b");
  json_decref(root);
  free(s);

  s = tpuci__plan_to_text(&plan);
  assert_non_null(strstr(s, "unit[python=3.10]  (spec.lua:3)\n"));
  assert_null(strstr(s, "unit[python=3.11]"));
  assert_non_null(strstr(s, "  image:    tpuci-test/python:1\n"));
  assert_non_null(strstr(s, "  command:  pytest\n"));
  assert_non_null(strstr(s, "  env:      A=1\n"));
  assert_non_null(strstr(s, "  timeout:  20m00s\n"));
  assert_non_null(strstr(s, "  retries:  3 attempts on failed,timeout,oom,infra"));
  assert_non_null(strstr(s, "  command:  ruff check 'a b'\n"));
  assert_non_null(strstr(s, "  timeout:  none\n"));
  assert_non_null(strstr(s, "  topology: pod (1 host x 4 chips, pjrt)\n"));
  /* A topology's host and its environment. */
  assert_non_null(strstr(s, "  env of the host (one container; the job's env wins over these):\n"
                            "    TPU_WORKER_ID=0\n    TPU_WORKER_HOSTNAMES=localhost\n"));
  free(s);
}

static void test_big_matrix(void **state) {
  uint64_t t0, dt;
  (void) state;
  t0 = tpuci__now_ms();
  load_ok("local function vals(p) local t = {} for i = 1, 10 do t[i] = p .. i end return t end\n"
          "image \"py\" { ref = \"tpuci-test/python:1\" }\n"
          "job \"big\" {\n"
          "  image = \"py\",\n"
          "  matrix = { a = vals('a'), b = vals('b'), c = vals('c'), d = vals('d') },\n"
          "  run = \"pytest -k ${matrix.a} ${matrix.b}/${matrix.c}/${matrix.d}\",\n"
          "  env = { A = \"${matrix.a}\", B = \"x\" },\n"
          "  mounts = { [\".\"] = \"/src\" }, timeout = \"20m\", retries = 2,\n"
          "}\n");
  dt = tpuci__now_ms() - t0;
  print_message("10000 instances in %llu ms\n", (unsigned long long) dt);
  assert_int_equal(plan.ninstances, 10000);
  assert_string_equal(plan.instances[0].name, "big[a=a1,b=b1,c=c1,d=d1]");
  assert_string_equal(plan.instances[9999].name, "big[a=a10,b=b10,c=c10,d=d10]");
  assert_string_equal(plan.instances[9999].run, "pytest -k a10 b10/c10/d10");
  /* How fast is bench/local/run.sh's business, not a test's. */
}

static void test_instance_cap(void **state) {
  (void) state;
  /* Each job is under the per-job cap; together they pass the plan's. */
  load_fails("local a, b = {}, {}\n"
             "for i = 1, 300 do a[i] = i end\n"
             "for i = 1, 200 do b[i] = i end\n"
             "job \"one\" { run = \"x\", matrix = { a = a, b = b } }\n"
             "job \"two\" { run = \"x\", matrix = { a = a, b = b } }\n",
             TPUCI_ESPEC, "spec.lua:5: job 'two': the plan has more than 100000 instances");
}

/* Loads len bytes of src (NUL bytes included) named `name`. */
static int load_bytes(const char *src, size_t len, const char *name, const char *dir) {
  tpuci__plan_free(&plan);
  tpuci__plan_init(&plan);
  tpuci__err_clear(&err);
  return tpuci__spec_load(&plan, src, len, name, dir, NULL, &err);
}

/* Every string of the plan is valid UTF-8 without a NUL byte: a spec that
 * would give another is refused at its line, with the key path. */
static void test_text(void **state) {
  static const struct {
    const char *src, *want;
  } bad[] = {
      {"job \"j\" { run = \"exit 1\", matrix = { v = { \"caf\xe9\" } } }",
       "spec.lua:1: job 'j': matrix.v[1]: not valid UTF-8 (byte 0xE9 at position 4)"},
      {"\njob \"j\" { run = \"x\", matrix = { include = { { v = \"\xff\" } } } }",
       "spec.lua:2: job 'j': matrix.include[1].v: not valid UTF-8"},
      {"job \"j\" { run = \"x\", env = { A = \"\xc3\" } }",
       "spec.lua:1: job 'j': env.A: not valid UTF-8 (byte 0xC3 at position 1)"},
      {"job \"j\" { run = \"echo \xed\xa0\x80\" }", /* a surrogate */
       "spec.lua:1: job 'j': run: not valid UTF-8 (byte 0xED at position 6)"},
      {"job \"j\" { run = \"echo \xc0\xaf\" }", /* an overlong '/' */
       "spec.lua:1: job 'j': run: not valid UTF-8"},
      {"job \"j\" { cmd = { \"echo\", \"\xe9t\xe9\" } }",
       "spec.lua:1: job 'j': cmd[2]: not valid UTF-8"},
      {"job \"j\" { run = \"x\", workdir = \"/w\xe9\" }",
       "spec.lua:1: job 'j': workdir: not valid UTF-8"},
      {"image \"py\" { ref = \"py:\xe9\" }\njob \"j\" { image = \"py\", run = \"x\" }",
       "spec.lua:1: image 'py': ref: not valid UTF-8"},
      {"job \"j\" { image = \"py:\xe9\", run = \"x\" }",
       "spec.lua:1: job 'j': image: not valid UTF-8"},
      {"job \"j\" { image = \"py:1\", run = \"x\", mounts = { [\".\"] = \"/s\xe9\" } }",
       "spec.lua:1: job 'j': mounts[\".\"]: not valid UTF-8"},
      {"job \"j\" { image = \"py:1\", run = \"x\",\n"
       "  mounts = { [\".\"] = { target = \"/s\xe9\" } } }",
       "spec.lua:1: job 'j': mounts[\".\"].target: not valid UTF-8"},
      {"job \"j\" { image = \"py:1\", run = \"x\", mounts = { [\"d\xe9\"] = \"/d\" } }",
       "spec.lua:1: job 'j': mounts[\"d?\"]: not valid UTF-8"},
      {"job \"j\" { image = \"py:1\", run = \"x\", network = \"n\xe9\" }",
       "spec.lua:1: job 'j': network: not valid UTF-8"},
      {"job \"j\" { pytest = { markers = \"\xe9\" } }",
       "spec.lua:1: job 'j': pytest.markers: not valid UTF-8"},
      {"job \"j\" { pytest = { k = \"\xe9\" } }", "spec.lua:1: job 'j': pytest.k: not valid UTF-8"},
      {"job \"j\" { pytest = { args = { \"t/\xe9\" } } }",
       "spec.lua:1: job 'j': pytest.args[1]: not valid UTF-8"},
      {"job \"j\" { pytest = { options = { \"-x\", \"\xe9\" } } }",
       "spec.lua:1: job 'j': pytest.options[2]: not valid UTF-8"},
      {"job \"j\" { pytest = { python = \"py\xe9\" } }",
       "spec.lua:1: job 'j': pytest.python: not valid UTF-8"},
      {"topology \"t\" { base = \"v4\xe9\" }", "spec.lua:1: topology 't': base: not valid UTF-8"},
      {"job \"caf\xe9\" { run = \"x\" }", "spec.lua:1: job 'caf?': the name is not valid UTF-8"},
      {"job \"j\" { run = function() return \"\xe9\" end }",
       "spec.lua:1: job 'j', instance 'j': run: not valid UTF-8"},
      {"job \"j\" { cmd = function() return { \"a\", \"\xe9\" } end }",
       "spec.lua:1: job 'j', instance 'j': cmd[2]: not valid UTF-8"},
      {"job \"j\" { run = \"x\", env = function() return { A = \"\xe9\" } end }",
       "spec.lua:1: job 'j', instance 'j': env.A: not valid UTF-8"},
      {"job \"j\" { run = \"x\", workdir = function() return \"/\xe9\" end }",
       "spec.lua:1: job 'j', instance 'j': workdir: not valid UTF-8"},
      /* NUL bytes: commands, environment and paths are C strings. */
      {"job \"j\" { run = \"x\", env = { A = \"a\\0b\" } }",
       "spec.lua:1: job 'j': env.A: contains a NUL byte (at position 2)"},
      {"\n\njob \"j\" { run = \"echo a\\0rm -rf /\" }",
       "spec.lua:3: job 'j': run: contains a NUL byte (at position 7)"},
      {"job \"j\" { cmd = { \"echo\", \"a\\0b\" } }",
       "spec.lua:1: job 'j': cmd[2]: contains a NUL byte"},
      {"job \"j\" { cmd = function() return { \"a\\0\" } end }",
       "spec.lua:1: job 'j', instance 'j': cmd[1]: contains a NUL byte"},
      {"job \"j\" { run = \"x\", workdir = \"/a\\0b\" }",
       "spec.lua:1: job 'j': workdir: contains a NUL byte"},
      {"job \"j\" { run = \"x\", matrix = { v = { \"a\\0\" } } }",
       "spec.lua:1: job 'j': matrix.v[1]: contains a NUL byte"},
  };
  size_t i;
  (void) state;

  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    int r = load(bad[i].src);
    if (r != TPUCI_ESPEC || err.msg == NULL || strstr(err.msg, bad[i].want) == NULL)
      fail_msg("case %zu: want '%s', got %d: %s", i, bad[i].want, r,
               err.msg ? err.msg : "(no message)");
    assert_int_equal(plan.ninstances, 0);
  }

  /* Valid UTF-8 of every length is kept as it is. */
  load_ok("job \"j\" { run = \"echo caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80\",\n"
          "  matrix = { v = { \"\xc3\xa9t\xc3\xa9\" } }, env = { A = \"\xe2\x82\xac\" } }");
  assert_string_equal(plan.instances[0].name, "j[v=\xc3\xa9t\xc3\xa9]");
  assert_string_equal(plan.instances[0].run, "echo caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80");
  /* A warning is a message: bad bytes become '?' rather than failing. */
  load_ok("warn('caf\\xe9')\njob \"j\" { run = \"x\" }");
  assert_true(has_warning("spec.lua:1: caf?"));

  /* Paths made with the spec's folder: it has to be valid UTF-8 then. */
  assert_int_equal(load_with("job \"j\" { image = \"py:1\", run = \"x\",\n"
                             "  mounts = { [\".\"] = \"/src\" } }",
                             "/srv/caf\xe9", 0, 0),
                   TPUCI_ESPEC);
  assert_non_null(strstr(err.msg, "spec.lua:1: job 'j': mounts: the spec's "
                                  "folder is not valid UTF-8"));
  assert_int_equal(load_with("job \"j\" { run = \"x\", workdir = \"sub\" }", "/srv/caf\xe9", 0, 0),
                   TPUCI_ESPEC);
  assert_non_null(strstr(err.msg, "spec.lua:1: job 'j': workdir: the spec's "
                                  "folder is not valid UTF-8"));
  assert_int_equal(load_with("job \"j\" { run = \"x\", workdir = \"/abs\",\n"
                             "  image = \"py:1\", mounts = { [\"/data\"] = \"/d\" } }",
                             "/srv/caf\xe9", 0, 0),
                   0);
  /* The file name is in every instance's "where". */
  assert_int_equal(load_bytes("job \"j\" { run = \"x\" }", 21, "caf\xe9.lua", SPEC_DIR),
                   TPUCI_ESPEC);
  assert_non_null(strstr(err.msg, "caf\xe9.lua: the spec's file name is not valid UTF-8"));
}

/* A UTF-8 byte order mark and a first line starting with '#' are skipped,
 * as lua does; line numbers stay those of the file. */
static void test_bom_and_shebang(void **state) {
  (void) state;
  load_ok("\xef\xbb\xbfjob \"a\" { run = \"x\" }\n");
  assert_string_equal(inst("a")->where, "spec.lua:1");
  load_ok("#!/usr/bin/env tpuci\njob \"a\" { run = \"x\" }\n");
  assert_string_equal(inst("a")->where, "spec.lua:2");
  load_ok("\xef\xbb\xbf#!/usr/bin/env tpuci\n\njob \"a\" { run = \"x\" }");
  assert_string_equal(inst("a")->where, "spec.lua:3");
  load_ok("# a comment line, as lua allows\r\njob \"a\" { run = \"x\" }\n");
  assert_string_equal(inst("a")->where, "spec.lua:2");
  load_fails("#!/usr/bin/env tpuci\njob \"a\" { run = \"x\" }\njob \"b\" { run = = }\n",
             TPUCI_ESPEC, "spec.lua:3: unexpected symbol near '='");
  load_fails("\xef\xbb\xbf\njob \"a\" { rnu = \"x\" }", TPUCI_ESPEC,
             "spec.lua:2: job 'a': rnu: unknown key");
  load_fails("#!/usr/bin/env tpuci\n\n\nerror('boom')", TPUCI_ESPEC, "spec.lua:4: boom");
  /* Only the first line, and only one mark. */
  load_fails("job \"a\" { run = \"x\" }\n#!/bin/sh\n", TPUCI_ESPEC,
             "spec.lua:2: unexpected symbol near '#'");
  load_fails("\xef\xbb\xbf\xef\xbb\xbfjob \"a\" { run = \"x\" }", TPUCI_ESPEC, "spec.lua:1:");
  /* Only a shebang (and a mark): nothing declared, which the loader
   * allows; the public API refuses a spec without jobs. */
  load_ok("\xef\xbb\xbf#!/usr/bin/env tpuci");
  assert_int_equal(plan.ninstances, 0);
}

/* A spec is at most TPUCI__SPEC_MAX_BYTES long. */
static void test_size_limit(void **state) {
  size_t n = TPUCI__SPEC_MAX_BYTES;
  char *src = malloc(n + 1);
  const char *job = "\njob \"a\" { run = \"x\" }";
  (void) state;

  assert_non_null(src);
  memset(src, ' ', n + 1);
  memcpy(src, "--", 2);
  memcpy(src + n - strlen(job), job, strlen(job));
  assert_int_equal(load_bytes(src, n, "spec.lua", SPEC_DIR), 0);
  assert_int_equal(plan.ninstances, 1);
  assert_int_equal(load_bytes(src, n + 1, "spec.lua", SPEC_DIR), TPUCI_ELIMIT);
  assert_string_equal(err.msg, "spec.lua: the spec is larger than 4 MiB (the most "
                               "a spec may have)");
  assert_int_equal(plan.ninstances, 0);
  free(src);
}

static void test_pytest(void **state) {
  const tpuci__instance_t *in;
  (void) state;
  load_ok("job \"tpu\" {\n"
          "  pytest = { markers = \"tpu and ${matrix.py}\", k = \"not slow\",\n"
          "             args = { \"tests/\", \"more/\" }, options = { \"-x\" }, shards = 3 },\n"
          "  matrix = { py = { \"a\", \"b\" } },\n"
          "  env = { TEST_SHARD_INDEX = \"mine\" },\n"
          "}\n"
          "job \"all\" { pytest = { allow_empty = true, python = \"python3.11\",\n"
          "                          failed_first = \"always\" } }\n");
  assert_int_equal(plan.ninstances, 7);
  /* Shards are a matrix key, sorted with the others. */
  in = inst("tpu[py=b,shard=2/3]");
  assert_non_null(tpuci__pytest_of(in));
  assert_true(in->runs_pytest);
  assert_int_equal(in->shards, 3);
  assert_int_equal(in->shard, 2);
  assert_string_equal(tpuci__pytest_of(in)->markers, "tpu and b");
  assert_string_equal(tpuci__pytest_of(in)->k, "not slow");
  assert_int_equal(tpuci__pytest_of(in)->nargs, 2);
  assert_false(tpuci__pytest_of(in)->allow_empty);
  assert_true(tpuci__pytest_of(in)->failed_first);
  assert_false(tpuci__pytest_of(in)->failed_first_steady);
  assert_int_equal(in->argv.len, 12);
  assert_string_equal(in->argv.items[0], "python3");
  assert_string_equal(in->argv.items[4], "no:cacheprovider");
  assert_string_equal(in->argv.items[6], "tpu and b");
  assert_string_equal(in->argv.items[9], "-x");
  assert_string_equal(in->argv.items[10], "tests/");
  assert_string_equal(in->argv.items[11], "more/");
  assert_null(in->argv.items[12]);
  assert_string_equal(tpuci__kv_get(&in->env, "TEST_SHARD_INDEX"), "mine"); /* the job's wins */
  assert_string_equal(tpuci__kv_get(&in->env, "TEST_TOTAL_SHARDS"), "3");
  assert_string_equal(tpuci__kv_get(&in->env, "PYTHONDONTWRITEBYTECODE"), "1");
  in = inst("tpu[py=a,shard=1/3]");
  assert_string_equal(tpuci__kv_get(&in->env, "TEST_TOTAL_SHARDS"), "3");
  in = inst("all");
  assert_null(tpuci__kv_get(&in->env, "TEST_TOTAL_SHARDS"));
  assert_int_equal(in->shards, 1);
  assert_int_equal(in->shard, 0);
  assert_true(tpuci__pytest_of(in)->allow_empty);
  assert_true(tpuci__pytest_of(in)->failed_first);
  assert_true(tpuci__pytest_of(in)->failed_first_steady);
  assert_null(tpuci__pytest_of(in)->markers);
  assert_int_equal(tpuci__pytest_of(in)->nargs, 0);
  assert_string_equal(in->argv.items[0], "python3.11");
  assert_int_equal(in->argv.len, 5);

  load_fails("job \"x\" { pytest = { markers = \"tpu\" }, run = \"true\" }", TPUCI_ESPEC,
             "spec.lua:1: job 'x': 'pytest' and 'run' are exclusive");
  load_fails("job \"x\" { pytest = { makers = \"tpu\" } }", TPUCI_ESPEC,
             "spec.lua:1: job 'x': pytest.makers: unknown key, did you mean 'markers'?");
  load_fails("job \"x\" { pytest = { shards = 0 } }", TPUCI_ESPEC, "pytest.shards");
  load_fails("job \"x\" { pytest = { failed_first = \"sometimes\" } }", TPUCI_ESPEC,
             "pytest.failed_first: expected true, false or \"always\", got string");
  load_fails("job \"x\" { pytest = { shards = 2 }, matrix = { shard = { 1 } } }", TPUCI_ESPEC,
             "matrix.shard: the key 'shard' is taken by pytest.shards");
  load_fails("job \"x\" { pytest = { options = { \"--junitxml=a.xml\" } } }", TPUCI_ESPEC,
             "pytest.options[1]: tpuci writes the JUnit file itself");
  load_fails("job \"x\" { pytest = \"tpu\" }", TPUCI_ESPEC, "pytest: expected a table");
}

/* expect_devices: a pytest job checks by default ("auto"), a command job
 * when it asks (kind/devices.h runs the check before its command); both
 * need a topology. */
static void test_expect_devices(void **state) {
  tpuci__strv_t argv = {0};
  char *arg;
  (void) state;
  load_ok("topology \"j\" { base = \"v4-8\", emulate = \"jax\" }\n"
          "topology \"p\" { base = \"v4-8\", emulate = \"pjrt\" }\n"
          "job \"c\" { run = \"x\", topology = \"j\", expect_devices = \"jax\" }\n"
          "job \"x\" { cmd = { \"/venv/bin/python3.11\", \"t.py\" }, topology = \"p\",\n"
          "  expect_devices = \"torch_xla\" }\n"
          "job \"plain\" { run = \"x\", topology = \"j\" }\n"
          "job \"off\" { run = \"x\", topology = \"j\", expect_devices = false }\n"
          "job \"t\" { topology = \"j\", pytest = {} }\n");
  assert_string_equal(inst("c")->expect_devices, "jax");
  assert_string_equal(inst("x")->expect_devices, "torch_xla");
  assert_null(inst("plain")->expect_devices);
  assert_null(inst("off")->expect_devices);
  assert_string_equal(inst("t")->expect_devices, "auto");
  arg = tpuci__devices_arg(&plan, inst("c"));
  assert_string_equal(arg, "jax cpu 4 4");
  free(arg);
  assert_null(tpuci__devices_arg(&plan, inst("plain")));

  /* The check runs in the command's own interpreter when it is one, else
   * python3; the command follows DEVICES and RESULTS. */
  tpuci__devices_command_argv(inst("c"), "jax cpu 4 4", "/r", &argv);
  assert_int_equal(argv.len, 8);
  assert_string_equal(argv.items[0], "python3");
  assert_string_equal(argv.items[1], "-c");
  assert_non_null(strstr(argv.items[2], "import tpuci_devices"));
  assert_string_equal(argv.items[3], "jax cpu 4 4");
  assert_string_equal(argv.items[4], "/r");
  assert_string_equal(argv.items[5], "/bin/sh");
  assert_string_equal(argv.items[7], "x");
  assert_null(argv.items[8]);
  tpuci__strv_free(&argv);
  tpuci__devices_command_argv(inst("x"), "torch_xla cpu 4 4", "/r", &argv);
  assert_string_equal(argv.items[0], "/venv/bin/python3.11");
  assert_string_equal(argv.items[5], "/venv/bin/python3.11");
  tpuci__strv_free(&argv);

  load_fails("job \"c\" { run = \"x\", expect_devices = \"jax\" }", TPUCI_ESPEC,
             "spec.lua:1: job 'c': expect_devices: needs a topology");
  load_fails("job \"c\" { run = \"x\", topology = \"v4-8\", expect_devices = \"auto!\" }",
             TPUCI_ESPEC, "spec.lua:1: job 'c': expect_devices: unknown framework 'auto!'");
}

/* pytest.per_chip: one instance per chip of the one host, each its own
 * chip's process (TPU_VISIBLE_CHIPS, ports, bounds) and, emulated, one
 * chip's share of the CPU devices; a matrix multiplies. */
static void test_pytest_per_chip(void **state) {
  char want[64], seen[8] = {0};
  size_t i;
  (void) state;
  load_ok("topology \"v5e8\" { base = \"v5litepod-8\", layout = \"1x8\", emulate = \"jax\" }\n"
          "job \"t\" { topology = \"v5e8\", pytest = { args = { \"tests/\" }, per_chip = true },\n"
          "  matrix = { py = { \"a\", \"b\" } } }\n");
  assert_int_equal(plan.ninstances, 16);
  for (i = 0; i < plan.ninstances; i++) {
    const tpuci__instance_t *in = &plan.instances[i];
    tpuci__kvlist_t env = {NULL, 0, 0};
    tpuci__slice_t s;
    const char *chip;
    int c;
    assert_int_equal(in->per_chip, 1);
    assert_int_equal(in->shards, 8);
    snprintf(want, sizeof(want), "t[py=%s,shard=%d/8]", i < 8 ? "a" : "b", (int) (i % 8) + 1);
    assert_string_equal(in->name, want);
    assert_int_equal(tpuci__topology_slice(&plan.topologies[in->topology], &s, &err), 0);
    assert_int_equal(tpuci__topology_host_env(in, &s, 0, NULL, &env, &err), 0);
    chip = tpuci__kv_get(&env, "TPU_VISIBLE_CHIPS");
    assert_non_null(chip);
    c = atoi(chip);
    assert_int_equal(c, in->shard - 1);
    if (i < 8) {
      assert_int_equal(seen[c], 0);
      seen[c] = 1;
    }
    assert_string_equal(tpuci__kv_get(&env, "CLOUD_TPU_TASK_ID"), chip);
    assert_string_equal(tpuci__kv_get(&env, "TPU_CHIPS_PER_PROCESS_BOUNDS"), "1,1,1");
    assert_string_equal(tpuci__kv_get(&env, "TPU_PROCESS_BOUNDS"), "4,2,1");
    snprintf(want, sizeof(want), "%d", 8476 + c);
    assert_string_equal(tpuci__kv_get(&env, "TPU_PROCESS_PORT"), want);
    assert_non_null(strstr(tpuci__kv_get(&env, "TPU_PROCESS_ADDRESSES"), "localhost:8483"));
    assert_string_equal(tpuci__kv_get(&env, "ALLOW_MULTIPLE_LIBTPU_LOAD"), "1");
    assert_string_equal(tpuci__kv_get(&env, "JAX_NUM_CPU_DEVICES"), "1");
    assert_string_equal(tpuci__kv_get(&env, "XLA_FLAGS"),
                        "--xla_force_host_platform_device_count=1");
    tpuci__kv_free(&env);
    tpuci__slice_free(&s);
  }
  /* v2-8 under PJRT: 4 chips of 2 cores, 2 CPU devices each. */
  load_ok("topology \"v2-8\" { emulate = \"pjrt\" }\n"
          "job \"t\" { topology = \"v2-8\", pytest = { per_chip = true } }\n");
  assert_int_equal(plan.ninstances, 4);
  {
    tpuci__kvlist_t env = {NULL, 0, 0};
    tpuci__slice_t s;
    assert_int_equal(tpuci__topology_slice(&plan.topologies[0], &s, &err), 0);
    assert_int_equal(tpuci__topology_host_env(&plan.instances[3], &s, 0, NULL, &env, &err), 0);
    assert_string_equal(tpuci__kv_get(&env, "CPU_NUM_DEVICES"), "2");
    assert_string_equal(tpuci__kv_get(&env, "TPU_VISIBLE_CHIPS"), "3");
    assert_string_equal(tpuci__kv_get(&env, "TPU_PROCESS_BOUNDS"), "2,2,1");
    tpuci__kv_free(&env);
    tpuci__slice_free(&s);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
      cmocka_unit_test_setup_teardown(test_timeout_zero, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cmd_env_durations, setup, teardown),
      cmocka_unit_test_setup_teardown(test_retries, setup, teardown),
      cmocka_unit_test_setup_teardown(test_matrix_order_and_interpolation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_matrix_include_exclude, setup, teardown),
      cmocka_unit_test_setup_teardown(test_matrix_values, setup, teardown),
      cmocka_unit_test_setup_teardown(test_function_fields, setup, teardown),
      cmocka_unit_test_setup_teardown(test_images, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mounts_and_workdir, setup, teardown),
      cmocka_unit_test_setup_teardown(test_topologies_and_aliases, setup, teardown),
      cmocka_unit_test_setup_teardown(test_topology_catalogue, setup, teardown),
      cmocka_unit_test_setup_teardown(test_where, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sandbox, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tpuci_env_and_read_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory, setup, teardown),
      cmocka_unit_test_setup_teardown(test_warnings, setup, teardown),
      cmocka_unit_test_setup_teardown(test_error_messages, setup, teardown),
      cmocka_unit_test_setup_teardown(test_json_and_text, setup, teardown),
      cmocka_unit_test_setup_teardown(test_big_matrix, setup, teardown),
      cmocka_unit_test_setup_teardown(test_instance_cap, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pytest, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pytest_per_chip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_expect_devices, setup, teardown),
      cmocka_unit_test_setup_teardown(test_text, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bom_and_shebang, setup, teardown),
      cmocka_unit_test_setup_teardown(test_size_limit, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
