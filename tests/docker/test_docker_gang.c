/* Gangs: the outcome of several hosts (first cause wins; OOM kills the
 * engine did not report, and the memory stats that tell them), per-host line
 * prefixes across chunk boundaries, the create bodies of a gang's hosts
 * (network, alias, hostname, environment, mounts, results folders), the
 * network's create body and the hosts' container names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "runtime/engine/container.h"
#include "runtime/engine/gang.h"
#include "runtime/engine/gate.h"
#include "runtime/engine/memstat.h"
#include "plan/plan.h"
#include "runtime/runtime.h"
#include "base/util.h"

/* ------------------------------------------------------------------ */
/* Outcome                                                             */

#define SIG(n) (1ull << (n))

static tpuci__gang_host_t host(const char *name, long status, int oom,
                               uint64_t signals, unsigned long order) {
  tpuci__gang_host_t h;
  memset(&h, 0, sizeof(h));
  h.name = name;
  h.exited = 1;
  h.status = status;
  h.oom = oom;
  h.signals = signals;
  h.stopped = signals != 0;
  h.order = order;
  return h;
}

static void test_verdict_all_pass(void **state) {
  tpuci__gang_host_t h[3];
  tpuci__gang_verdict_t v;
  (void) state;
  h[0] = host("worker-0", 0, 0, 0, 2);
  h[1] = host("worker-1", 0, 0, 0, 1);
  h[2] = host("worker-2", 0, 0, 0, 3);
  tpuci__gang_verdict(h, 3, 0, &v);
  assert_int_equal(v.exit_code, 0);
  assert_int_equal(v.term_signal, 0);
  assert_int_equal(v.oom, 0);
  assert_int_equal(v.host, -1);
  assert_null(v.cause);
  tpuci__gang_verdict_free(&v);
}

/* One host fails; tpuci stops the others, which exit 143 and 137: their
 * exits do not mask the cause, whatever their order in the array. */
static void test_verdict_first_cause_wins(void **state) {
  tpuci__gang_host_t h[4];
  tpuci__gang_verdict_t v;
  (void) state;
  h[0] = host("worker-0", 143, 0, SIG(SIGTERM), 2);
  h[1] = host("worker-1", 3, 0, 0, 1);
  h[2] = host("worker-2", 137, 0, SIG(SIGTERM) | SIG(SIGKILL), 4);
  h[3] = host("worker-3", 1, 0, SIG(SIGTERM), 3); /* caught TERM, exit 1 */
  tpuci__gang_verdict(h, 4, 0, &v);
  assert_int_equal(v.host, 1);
  assert_int_equal(v.exit_code, 3);
  assert_int_equal(v.term_signal, 0);
  assert_string_equal(v.cause, "worker-1: exit 3");
  tpuci__gang_verdict_free(&v);

  /* Two hosts fail on their own: the one whose wait answered first. */
  h[0] = host("worker-0", 2, 0, 0, 2);
  h[1] = host("worker-1", 0, 0, 0, 1);
  h[2] = host("worker-2", 5, 0, 0, 1 + 2);
  h[3] = host("worker-3", 7, 0, 0, 1 + 3);
  tpuci__gang_verdict(h, 4, 0, &v);
  assert_int_equal(v.host, 0);
  assert_string_equal(v.cause, "worker-0: exit 2");
  tpuci__gang_verdict_free(&v);
  h[3].order = 0 + 1; /* now worker-3 answered first */
  h[1].order = 5;
  tpuci__gang_verdict(h, 4, 0, &v);
  assert_int_equal(v.host, 3);
  assert_int_equal(v.exit_code, 7);
  assert_string_equal(v.cause, "worker-3: exit 7");
  tpuci__gang_verdict_free(&v);
}

static void test_verdict_oom(void **state) {
  tpuci__gang_host_t h[3];
  tpuci__gang_verdict_t v;
  (void) state;
  h[0] = host("worker-0", 143, 0, SIG(SIGTERM), 2);
  h[1] = host("worker-1", 143, 0, SIG(SIGTERM), 3);
  h[2] = host("worker-2", 137, 1, 0, 1);
  tpuci__gang_verdict(h, 3, 16u << 20, &v);
  assert_int_equal(v.host, 2);
  assert_int_equal(v.oom, 1);
  assert_int_equal(v.exit_code, 137);
  assert_string_equal(v.cause, "worker-2: killed by the kernel: out of memory "
                               "(memory limit 16 MiB)");
  tpuci__gang_verdict_free(&v);
  tpuci__gang_verdict(h, 3, 0, &v);
  assert_string_equal(v.cause, "worker-2: killed by the kernel: out of memory");
  tpuci__gang_verdict_free(&v);
}

/* A timeout or Ctrl-C: tpuci signalled every host. The first to exit
 * speaks, with the signal tpuci sent (the scheduler words the outcome). */
static void test_verdict_all_stopped(void **state) {
  tpuci__gang_host_t h[2];
  tpuci__gang_verdict_t v;
  (void) state;
  h[0] = host("worker-0", 143, 0, SIG(SIGTERM), 2);
  h[1] = host("worker-1", 137, 0, SIG(SIGTERM) | SIG(SIGKILL), 1);
  tpuci__gang_verdict(h, 2, 0, &v);
  assert_int_equal(v.host, 1);
  assert_int_equal(v.exit_code, -1);
  assert_int_equal(v.term_signal, SIGKILL);
  assert_non_null(strstr(v.cause, "worker-1: killed by signal 9"));
  tpuci__gang_verdict_free(&v);
  /* A host killed by a signal tpuci did not send keeps its exit status. */
  h[0] = host("worker-0", 137, 0, 0, 1);
  h[1] = host("worker-1", 143, 0, SIG(SIGTERM), 2);
  tpuci__gang_verdict(h, 2, 0, &v);
  assert_int_equal(v.host, 0);
  assert_int_equal(v.exit_code, 137);
  assert_int_equal(v.term_signal, 0);
  assert_string_equal(v.cause, "worker-0: exit 137");
  tpuci__gang_verdict_free(&v);
}

/* A lone container: no host name, the scheduler words the exit. */
static void test_verdict_lone(void **state) {
  tpuci__gang_host_t h;
  tpuci__gang_verdict_t v;
  (void) state;
  h = host(NULL, 3, 0, 0, 1);
  tpuci__gang_verdict(&h, 1, 0, &v);
  assert_int_equal(v.exit_code, 3);
  assert_int_equal(v.host, 0);
  assert_null(v.cause);
  tpuci__gang_verdict_free(&v);
  h = host(NULL, 143, 0, SIG(SIGTERM), 1);
  tpuci__gang_verdict(&h, 1, 0, &v);
  assert_int_equal(v.exit_code, -1);
  assert_int_equal(v.term_signal, SIGTERM);
  assert_null(v.cause);
  tpuci__gang_verdict_free(&v);
  h = host(NULL, 137, 1, 0, 1);
  tpuci__gang_verdict(&h, 1, 32u << 20, &v);
  assert_int_equal(v.oom, 1);
  assert_string_equal(v.cause, "killed by the kernel: out of memory (memory "
                               "limit 32 MiB)");
  tpuci__gang_verdict_free(&v);
  /* OOM-killed but exited 0 (a child was killed, the job coped). */
  h = host(NULL, 0, 0, 0, 1);
  tpuci__gang_verdict(&h, 1, 0, &v);
  assert_int_equal(v.exit_code, 0);
  assert_null(v.cause);
  tpuci__gang_verdict_free(&v);
}

/* An OOM kill the engine did not report (State.OOMKilled false, exit
 * 137, no signal from tpuci): with the stats' evidence an oom that says
 * so; without, an oom all the same (the limit and the SIGKILL say so:
 * retries.on = {"oom"} catches it) that says what it probably was. */
static void test_verdict_oom_unreported(void **state) {
  tpuci__gang_host_t h[2];
  tpuci__gang_verdict_t v;
  (void) state;
  h[0] = host(NULL, 137, 1, 0, 1);
  h[0].oom_unreported = TPUCI__OOM_STATS;
  tpuci__gang_verdict(h, 1, 16u << 20, &v);
  assert_int_equal(v.oom, 1);
  assert_string_equal(v.cause, "killed by the kernel: out of memory (memory "
                               "limit 16 MiB; the engine reported no OOM "
                               "kill, but its stats showed the limit reached)");
  tpuci__gang_verdict_free(&v);
  h[0] = host(NULL, 137, 0, 0, 1);
  h[0].oom_unreported = TPUCI__OOM_PROBABLY;
  tpuci__gang_verdict(h, 1, 16u << 20, &v);
  assert_int_equal(v.oom, 1);
  assert_int_equal(v.exit_code, 137);
  assert_string_equal(v.cause, "exit 137 (SIGKILL, not sent by tpuci, under "
                               "a memory limit of 16 MiB: probably out of "
                               "memory; the engine reported no OOM kill)");
  tpuci__gang_verdict_free(&v);
  /* A gang's host says which. */
  h[0] = host("worker-0", 143, 0, SIG(SIGTERM), 2);
  h[1] = host("worker-1", 137, 0, 0, 1);
  h[1].oom_unreported = TPUCI__OOM_PROBABLY;
  tpuci__gang_verdict(h, 2, 16u << 20, &v);
  assert_int_equal(v.host, 1);
  assert_int_equal(v.oom, 1);
  assert_non_null(strstr(v.cause, "worker-1: exit 137 (SIGKILL, not sent by "
                                  "tpuci, under a memory limit of 16 MiB"));
  tpuci__gang_verdict_free(&v);
  /* Without a memory limit nothing says it was memory: a failure. */
  h[0] = host(NULL, 137, 0, 0, 1);
  h[0].oom_unreported = TPUCI__OOM_PROBABLY;
  tpuci__gang_verdict(h, 1, 0, &v);
  assert_int_equal(v.oom, 0);
  assert_int_equal(v.exit_code, 137);
  tpuci__gang_verdict_free(&v);
}

/* The stats stream: whole lines are samples, split anywhere; the peak is
 * the high-water mark (v1 max_usage) or the usage (v2); a container that
 * does not run gives empty samples, which do not count. */
static void test_memstat(void **state) {
  tpuci__memstat_t m;
  const char *stream =
      "{\"memory_stats\":{}}\n"
      "{\"memory_stats\":{\"usage\":4501504,\"max_usage\":4501504,"
      "\"limit\":16777216}}\n"
      "{\"memory_stats\":{\"usage\":16596992,\"max_usage\":16777216,"
      "\"limit\":16777216}}\n"
      "not json\n"
      "{\"memory_stats\":{\"usage\":100}}\n";
  size_t i, n = strlen(stream);
  (void) state;
  tpuci__memstat_init(&m);
  for (i = 0; i < n; i += 7)
    tpuci__memstat_chunk(&m, stream + i, i + 7 < n ? 7 : n - i);
  assert_int_equal(m.samples, 3);
  assert_int_equal(m.peak, 16777216);
  assert_int_equal(m.limit, 16777216);
  assert_true(tpuci__memstat_reached(&m, 32u << 20)); /* the stats' limit */
  tpuci__memstat_free(&m);
  /* cgroup v2: usage only, within 1% of the limit. */
  tpuci__memstat_init(&m);
  tpuci__memstat_chunk(&m, "{\"memory_stats\":{\"usage\":16700000,"
                           "\"limit\":16777216}}\n", 53);
  assert_true(tpuci__memstat_reached(&m, 0));
  tpuci__memstat_free(&m);
  tpuci__memstat_init(&m);
  tpuci__memstat_chunk(&m, "{\"memory_stats\":{\"usage\":8000000}}\n", 35);
  assert_false(tpuci__memstat_reached(&m, 16u << 20));
  tpuci__memstat_free(&m);
  /* No sample: nothing reached. */
  tpuci__memstat_init(&m);
  assert_false(tpuci__memstat_reached(&m, 16u << 20));
  tpuci__memstat_free(&m);
}

/* ------------------------------------------------------------------ */
/* Lines                                                               */

typedef struct {
  tpuci__buf_t out;
  int calls;
} sink_t;

static void sink(void *data, const char *buf, size_t len) {
  sink_t *s = data;
  assert_true(len > 0);
  assert_int_equal(buf[len - 1], '\n'); /* only whole lines */
  tpuci__buf_add(&s->out, buf, len);
  s->calls++;
}

static void feed(tpuci__lines_t *l, sink_t *s, const char *text) {
  tpuci__lines_feed(l, text, strlen(text), sink, s);
}

static void test_lines_chunks(void **state) {
  tpuci__lines_t l;
  sink_t s;
  (void) state;
  memset(&s, 0, sizeof(s));
  tpuci__buf_init(&s.out);
  tpuci__buf_add(&s.out, "", 0);
  tpuci__lines_init(&l, "[worker-1] ");
  feed(&l, &s, "hel");
  assert_int_equal(s.calls, 0); /* held */
  feed(&l, &s, "lo\nwor");
  assert_string_equal(s.out.data, "[worker-1] hello\n");
  feed(&l, &s, "ld\n\nlast");
  assert_string_equal(s.out.data, "[worker-1] hello\n[worker-1] world\n[worker-1] \n");
  assert_int_equal(s.calls, 2); /* one call per feed */
  feed(&l, &s, "");
  assert_int_equal(s.calls, 2);
  tpuci__lines_flush(&l, sink, &s);
  assert_string_equal(s.out.data, "[worker-1] hello\n[worker-1] world\n[worker-1] \n"
                                  "[worker-1] last\n");
  /* Nothing held: a second flush says nothing. */
  tpuci__lines_flush(&l, sink, &s);
  assert_int_equal(s.calls, 3);

  /* Byte by byte, with a CRLF kept as it is. */
  s.out.len = 0;
  {
    const char *t = "a\r\nbc\n";
    size_t i;
    for (i = 0; t[i]; i++) tpuci__lines_feed(&l, t + i, 1, sink, &s);
  }
  assert_string_equal(s.out.data, "[worker-1] a\r\n[worker-1] bc\n");
  tpuci__lines_free(&l);
  tpuci__buf_free(&s.out);
}

static void test_lines_long(void **state) {
  tpuci__lines_t l;
  sink_t s;
  char *big = tpuci__malloc(TPUCI__LINES_MAX * 2 + 10);
  size_t plen = strlen("[w] ");
  (void) state;
  memset(big, 'x', TPUCI__LINES_MAX * 2 + 9);
  big[TPUCI__LINES_MAX * 2 + 9] = '\0';
  memset(&s, 0, sizeof(s));
  tpuci__buf_init(&s.out);
  tpuci__lines_init(&l, "[w] ");
  /* A line without a newline longer than the limit is cut into pieces of
   * TPUCI__LINES_MAX bytes, each a line of its own. */
  feed(&l, &s, big);
  assert_int_equal(s.out.len, 2 * (plen + TPUCI__LINES_MAX + 1));
  assert_int_equal(l.partial.len, 9);
  assert_memory_equal(s.out.data, "[w] xxx", 7);
  assert_int_equal(s.out.data[plen + TPUCI__LINES_MAX], '\n');
  tpuci__lines_flush(&l, sink, &s);
  assert_int_equal(s.out.len, 2 * (plen + TPUCI__LINES_MAX + 1) + plen + 10);
  tpuci__lines_free(&l);
  tpuci__buf_free(&s.out);
  free(big);
}

/* ------------------------------------------------------------------ */
/* Create bodies                                                       */

typedef struct {
  tpuci__plan_t plan;
  tpuci__instance_t *inst;
  tpuci__attempt_t a;
  char tmp[64];
  char results[96];
} fx_t;

static int fx_setup(void **state) {
  fx_t *f = tpuci__calloc(1, sizeof(*f));
  tpuci__instance_t *in;
  tpuci__plan_init(&f->plan);
  f->plan.images = tpuci__calloc(1, sizeof(*f->plan.images));
  f->plan.nimages = 1;
  f->plan.images[0].name = tpuci__strdup("bb");
  f->plan.images[0].ref = tpuci__strdup("tpuci-test/busybox:1");
  f->plan.topologies = tpuci__calloc(3, sizeof(*f->plan.topologies));
  f->plan.ntopologies = 3;
  f->plan.topologies[0].name = tpuci__strdup("v4-32");
  f->plan.topologies[0].hosts = 4;
  f->plan.topologies[0].chips_per_host = 4;
  f->plan.topologies[0].cores_per_chip = 2;
  f->plan.topologies[0].emulate = tpuci__strdup("none");
  f->plan.topologies[1].name = tpuci__strdup("v4-8");
  f->plan.topologies[1].hosts = 1;
  f->plan.topologies[1].chips_per_host = 4;
  f->plan.topologies[1].cores_per_chip = 2;
  f->plan.topologies[1].emulate = tpuci__strdup("pjrt");
  f->plan.topologies[2].name = tpuci__strdup("v4-61"); /* refused */
  f->plan.topologies[2].hosts = 1;
  f->plan.topologies[2].where = tpuci__strdup("spec.lua:3");
  in = tpuci__plan_add_instance(&f->plan);
  in->name = tpuci__strdup("gang[py=3]");
  in->job = tpuci__strdup("gang");
  in->where = tpuci__strdup("spec.lua:9");
  tpuci__kv_set(&in->matrix, "py", "3");
  tpuci__kv_set(&in->env, "MASTER_PORT", "1234");
  tpuci__kv_set(&in->env, "A", "1");
  tpuci__strv_push(&in->argv, "/bin/sh");
  tpuci__strv_push(&in->argv, "-c");
  tpuci__strv_push(&in->argv, "true");
  in->retry.attempts = 2;
  in->image = 0;
  in->topology = 0;
  in->runtime = TPUCI__RUNTIME_DOCKER;
  in->mounts = tpuci__calloc(1, sizeof(*in->mounts));
  in->nmounts = 1;
  in->mounts[0].source = tpuci__strdup("/host/src");
  in->mounts[0].target = tpuci__strdup("/src");
  in->mounts[0].read_only = 1;
  in->memory_bytes = 64u << 20;
  f->inst = in;
  snprintf(f->tmp, sizeof(f->tmp), "/tmp/tpuci-gang-test.XXXXXX");
  assert_non_null(mkdtemp(f->tmp));
  snprintf(f->results, sizeof(f->results), "%s/results", f->tmp);
  f->a.plan = &f->plan;
  f->a.inst = in;
  f->a.run_id = "r1";
  f->a.number = 2;
  f->a.argv = &in->argv;
  f->a.dir = f->tmp;
  *state = f;
  return 0;
}

static int fx_teardown(void **state) {
  fx_t *f = *state;
  char *cmd = tpuci__printf("rm -rf '%s'", f->tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", f->tmp);
  free(cmd);
  tpuci__plan_free(&f->plan);
  free(f);
  return 0;
}

/* The number of Env entries starting with `prefix`, and the value of the
 * last one. */
static size_t env_count(json_t *body, const char *prefix, const char **value) {
  json_t *env = json_object_get(body, "Env"), *e;
  size_t i, n = 0;
  json_array_foreach(env, i, e) {
    const char *s = json_string_value(e);
    if (strncmp(s, prefix, strlen(prefix)) == 0) {
      n++;
      if (value) *value = s + strlen(prefix);
    }
  }
  return n;
}

static const char *env_of(json_t *body, const char *key) {
  char *prefix = tpuci__printf("%s=", key);
  const char *v = NULL;
  size_t n = env_count(body, prefix, &v);
  free(prefix);
  if (n != 1) fail_msg("%s is set %zu times", key, n);
  return v;
}

static int is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_gang_bodies(void **state) {
  fx_t *f = *state;
  tpuci__slice_t slice;
  tpuci__kvlist_t labels = {0};
  tpuci__err_t err = {0, NULL};
  int i;

  assert_int_equal(tpuci__topology_slice(&f->plan.topologies[0], &slice, &err), 0);
  assert_int_equal(slice.hosts, 4);
  tpuci__ctr_labels(&labels, "r1", "gang", "gang[py=3]", 2, 0);
  f->a.results_dir = f->results;
  f->a.results_path = TPUCI__RESULTS_MOUNT;
  for (i = 0; i < 4; i++) {
    char name[16], num[8], *bind;
    json_t *b =
        tpuci__gang_host_body(&f->a, &slice, &(tpuci__gang_member_t){.host = i, .nhosts = 4},
                              "tpuci-r1-gang-2", &labels, &err);
    json_t *hc, *binds, *eps, *aliases;
    if (b == NULL) fail_msg("%s", err.msg);
    snprintf(name, sizeof(name), "worker-%d", i);
    snprintf(num, sizeof(num), "%d", i);
    assert_string_equal(json_string_value(json_object_get(b, "Hostname")), name);
    hc = json_object_get(b, "HostConfig");
    assert_string_equal(json_string_value(json_object_get(hc, "NetworkMode")),
                        "tpuci-r1-gang-2");
    eps = json_object_get(json_object_get(b, "NetworkingConfig"), "EndpointsConfig");
    assert_int_equal(json_object_size(eps), 1);
    aliases = json_object_get(json_object_get(eps, "tpuci-r1-gang-2"), "Aliases");
    assert_int_equal(json_array_size(aliases), 1);
    assert_string_equal(json_string_value(json_array_get(aliases, 0)), name);
    /* The host's own environment. */
    assert_string_equal(env_of(b, "TPU_WORKER_ID"), num);
    assert_string_equal(env_of(b, "TPUCI_HOST"), num);
    assert_string_equal(env_of(b, "RANK"), num);
    assert_string_equal(env_of(b, "CLOUD_TPU_TASK_ID"), num);
    assert_string_equal(env_of(b, "TPUCI_HOSTS"), "4");
    assert_string_equal(env_of(b, "WORLD_SIZE"), "4");
    assert_string_equal(env_of(b, "TPU_WORKER_HOSTNAMES"),
                        "worker-0,worker-1,worker-2,worker-3");
    assert_string_equal(env_of(b, "TPU_ACCELERATOR_TYPE"), "v4-32");
    assert_string_equal(env_of(b, "TPU_TOPOLOGY"), "2x2x4");
    assert_string_equal(env_of(b, "TPU_HOST_BOUNDS"), "1,1,4");
    assert_string_equal(env_of(b, "TPU_CHIPS_PER_HOST_BOUNDS"), "2,2,1");
    assert_string_equal(env_of(b, "MASTER_ADDR"), "worker-0");
    /* The job's env wins, once, over what the topology says. */
    assert_string_equal(env_of(b, "MASTER_PORT"), "1234");
    assert_string_equal(env_of(b, "A"), "1");
    /* And tpuci's own variables are all there. */
    assert_string_equal(env_of(b, "TPUCI_RUN_ID"), "r1");
    assert_string_equal(env_of(b, "TPUCI_INSTANCE"), "gang[py=3]");
    assert_string_equal(env_of(b, "TPUCI_ATTEMPT"), "2");
    assert_string_equal(env_of(b, "TPUCI_MATRIX_PY"), "3");
    assert_string_equal(env_of(b, "TPUCI_RESULTS"), "/tpuci/results");
    /* emulate = "none": no switches. */
    assert_int_equal(env_count(b, "PJRT_DEVICE=", NULL), 0);
    /* Mounts: the job's, then the host's own results folder. */
    binds = json_object_get(hc, "Mounts");
    assert_int_equal(json_array_size(binds), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(binds, 0), "Source")),
                        "/host/src");
    assert_string_equal(json_string_value(json_object_get(json_array_get(binds, 0), "Target")),
                        "/src");
    assert_true(json_is_true(json_object_get(json_array_get(binds, 0), "ReadOnly")));
    bind = tpuci__printf("%s/worker-%d", f->results, i);
    assert_string_equal(json_string_value(json_object_get(json_array_get(binds, 1), "Source")),
                        bind);
    assert_string_equal(json_string_value(json_object_get(json_array_get(binds, 1), "Target")),
                        "/tpuci/results");
    free(bind);
    bind = tpuci__printf("%s/worker-%d", f->results, i);
    assert_true(is_dir(bind));
    free(bind);
    assert_int_equal(json_integer_value(json_object_get(hc, "Memory")), 64 << 20);
    assert_string_equal(json_string_value(json_object_get(json_object_get(b, "Labels"),
                                                          "tpuci.run")), "r1");
    json_decref(b);
  }
  /* Behind a gate key, the command is the gang's wait step's, with its
   * end step (docker, swarm) or without (podman: an empty $E). */
  {
    char *key = tpuci__ctl_key(), *end = tpuci__gate_name(key, TPUCI__GATE_END);
    int e;
    for (e = 0; e <= 1; e++) {
      json_t *b = tpuci__gang_host_body(
          &f->a, &slice,
          &(tpuci__gang_member_t){.host = 1, .nhosts = 4, .gate_key = key, .gate_end = e}, "n",
          &labels, &err);
      const char *sh;
      if (b == NULL) fail_msg("%s", err.msg);
      sh = json_string_value(json_array_get(json_object_get(b, "Cmd"), 2));
      assert_non_null(sh);
      assert_int_equal(strstr(sh, end) != NULL, e);
      assert_int_equal(strstr(sh, " E='' ") != NULL, !e);
      json_decref(b);
    }
    free(end);
    free(key);
  }
  /* A host out of range is refused. */
  assert_null(tpuci__gang_host_body(&f->a, &slice, &(tpuci__gang_member_t){.host = 4, .nhosts = 4},
                                    "n", &labels, &err));
  assert_int_equal(err.code, TPUCI_EUSAGE);
  tpuci__err_clear(&err);
  tpuci__slice_free(&slice);
  tpuci__kv_free(&labels);
}

/* One container: no network of its own, no hostname; a single-host
 * topology's environment says localhost; the results folder itself. */
static void test_single_bodies(void **state) {
  fx_t *f = *state;
  tpuci__slice_t slice;
  tpuci__err_t err = {0, NULL};
  json_t *b, *hc;
  const char *bind;

  f->inst->topology = 1;
  f->inst->network = tpuci__strdup("none");
  f->a.results_dir = f->results;
  f->a.results_path = NULL; /* the mount point is the default */
  assert_int_equal(tpuci__topology_slice(&f->plan.topologies[1], &slice, &err), 0);
  b = tpuci__gang_host_body(&f->a, &slice, &(tpuci__gang_member_t){.host = 0, .nhosts = 1}, NULL,
                            NULL, &err);
  assert_non_null(b);
  assert_null(json_object_get(b, "Hostname"));
  assert_null(json_object_get(b, "NetworkingConfig"));
  hc = json_object_get(b, "HostConfig");
  assert_string_equal(json_string_value(json_object_get(hc, "NetworkMode")), "none");
  assert_string_equal(env_of(b, "TPU_WORKER_HOSTNAMES"), "localhost");
  assert_string_equal(env_of(b, "MASTER_ADDR"), "localhost");
  assert_string_equal(env_of(b, "PJRT_DEVICE"), "CPU");
  assert_string_equal(env_of(b, "CPU_NUM_DEVICES"), "4");
  assert_string_equal(env_of(b, "TPUCI_HOSTS"), "1");
  bind = f->results;
  assert_string_equal(json_string_value(json_object_get(
                          json_array_get(json_object_get(hc, "Mounts"), 1), "Source")),
                      bind);
  assert_string_equal(json_string_value(json_object_get(
                          json_array_get(json_object_get(hc, "Mounts"), 1), "Target")),
                      TPUCI__RESULTS_MOUNT);
  assert_true(is_dir(f->results));
  json_decref(b);
  tpuci__slice_free(&slice);

  /* No topology: only tpuci's and the job's variables. */
  b = tpuci__gang_host_body(&f->a, NULL, &(tpuci__gang_member_t){.host = 0, .nhosts = 1}, NULL,
                            NULL, &err);
  assert_non_null(b);
  assert_int_equal(env_count(b, "TPU_", NULL), 0);
  assert_int_equal(env_count(b, "TPUCI_HOST", NULL), 0);
  assert_string_equal(env_of(b, "MASTER_PORT"), "1234");
  json_decref(b);

  /* No results folder: only the job's mounts. */
  f->a.results_dir = NULL;
  b = tpuci__gang_host_body(&f->a, NULL, &(tpuci__gang_member_t){.host = 0, .nhosts = 1}, NULL,
                            NULL, &err);
  assert_int_equal(json_array_size(json_object_get(json_object_get(b, "HostConfig"), "Mounts")), 1);
  assert_int_equal(env_count(b, "TPUCI_RESULTS=", NULL), 0);
  json_decref(b);

  /* A results folder that cannot be made. */
  f->a.results_dir = "/proc/no/such/folder";
  assert_null(tpuci__gang_host_body(&f->a, NULL, &(tpuci__gang_member_t){.host = 0, .nhosts = 1},
                                    NULL, NULL, &err));
  assert_non_null(strstr(err.msg, "cannot create the results folder /proc/no/such/folder"));
  tpuci__err_clear(&err);
}

/* A host's body has the job's accelerator options, its device globs
 * expanded; a glob that matches nothing fails the body, before the
 * results folder is made. */
static void test_accelerator_bodies(void **state) {
  fx_t *f = *state;
  tpuci__ctr_opts_t *c = &f->inst->ctr;
  tpuci__err_t err = {0, NULL};
  json_t *b, *hc, *devs;

  c->shm_bytes = 1u << 30;
  c->ipc = tpuci__strdup("private");
  tpuci__strv_push(&c->cap_add, "IPC_LOCK");
  c->devices = tpuci__calloc(1, sizeof(*c->devices));
  c->ndevices = 1;
  c->devices[0].host = tpuci__strdup("/dev/nul?");
  c->devices[0].perms = tpuci__strdup("rwm");
  c->devices[0].glob = 1;
  f->a.results_dir = NULL;
  b = tpuci__gang_host_body(&f->a, NULL, &(tpuci__gang_member_t){.host = 0, .nhosts = 1}, NULL,
                            NULL, &err);
  assert_non_null(b);
  hc = json_object_get(b, "HostConfig");
  assert_int_equal(json_integer_value(json_object_get(hc, "ShmSize")), 1 << 30);
  assert_string_equal(json_string_value(json_object_get(hc, "IpcMode")), "private");
  assert_string_equal(json_string_value(json_array_get(json_object_get(hc, "CapAdd"), 0)),
                      "CAP_IPC_LOCK");
  devs = json_object_get(hc, "Devices");
  assert_int_equal(json_array_size(devs), 1);
  assert_string_equal(json_string_value(json_object_get(json_array_get(devs, 0), "PathOnHost")),
                      "/dev/null");
  json_decref(b);

  free(c->devices[0].host);
  c->devices[0].host = tpuci__strdup("/dev/tpuci-no-accel*");
  f->a.results_dir = f->results;
  rmdir(f->results);
  assert_null(tpuci__gang_host_body(&f->a, NULL, &(tpuci__gang_member_t){.host = 0, .nhosts = 1},
                                    NULL, NULL, &err));
  assert_non_null(strstr(err.msg, "job 'gang': devices: '/dev/tpuci-no-accel*' matches no device"));
  assert_false(is_dir(f->results));
  tpuci__err_clear(&err);
}

static void test_topology_slice_error(void **state) {
  fx_t *f = *state;
  tpuci__slice_t slice;
  tpuci__err_t err = {0, NULL};
  assert_int_equal(tpuci__topology_slice(&f->plan.topologies[2], &slice, &err), TPUCI_ESPEC);
  assert_non_null(strstr(err.msg, "spec.lua:3: topology 'v4-61': unknown TPU type 'v4-61'"));
  assert_null(strchr(err.msg, '\n'));
  tpuci__err_clear(&err);
}

static void test_network_body(void **state) {
  tpuci__kvlist_t labels = {0};
  json_t *b, *l;
  (void) state;
  tpuci__ctr_labels(&labels, "r1", "gang", "gang[py=3]", 2, 0);
  b = tpuci__net_create_body("tpuci-r1-gang_py_3-2", &labels, 1);
  assert_string_equal(json_string_value(json_object_get(b, "Name")), "tpuci-r1-gang_py_3-2");
  assert_true(json_is_true(json_object_get(b, "Internal")));
  assert_true(json_is_true(json_object_get(b, "CheckDuplicate")));
  assert_string_equal(json_string_value(json_object_get(b, "Driver")), "bridge");
  l = json_object_get(b, "Labels");
  assert_string_equal(json_string_value(json_object_get(l, "tpuci.run")), "r1");
  assert_string_equal(json_string_value(json_object_get(l, "tpuci.instance")), "gang[py=3]");
  assert_string_equal(json_string_value(json_object_get(l, "tpuci.attempt")), "2");
  assert_non_null(json_object_get(l, "tpuci.pid"));
  assert_non_null(json_object_get(l, "tpuci.host"));
  json_decref(b);
  tpuci__kv_free(&labels);
}

static void test_host_names(void **state) {
  char long_inst[400];
  char *a, *b, *base;
  (void) state;
  a = tpuci__ctr_host_name("r1", "gang", 1, 3);
  assert_string_equal(a, "tpuci-r1-gang-1-worker-3");
  free(a);
  memset(long_inst, 'x', sizeof(long_inst) - 1);
  long_inst[sizeof(long_inst) - 1] = '\0';
  a = tpuci__ctr_host_name("r1", long_inst, 12, 254);
  b = tpuci__ctr_host_name("r1", long_inst, 12, 255);
  base = tpuci__ctr_name("r1", long_inst, 12);
  assert_true(strlen(a) <= TPUCI__NAME_MAX);
  assert_true(strlen(b) <= TPUCI__NAME_MAX);
  assert_string_not_equal(a, b);
  assert_non_null(strstr(a, "-12-worker-254"));
  assert_int_equal(strcmp(a + strlen(a) - strlen("-12-worker-254"), "-12-worker-254"), 0);
  free(a);
  free(b);
  free(base);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_verdict_all_pass),
    cmocka_unit_test(test_verdict_first_cause_wins),
    cmocka_unit_test(test_verdict_oom),
    cmocka_unit_test(test_verdict_all_stopped),
    cmocka_unit_test(test_verdict_lone),
    cmocka_unit_test(test_verdict_oom_unreported),
    cmocka_unit_test(test_memstat),
    cmocka_unit_test(test_lines_chunks),
    cmocka_unit_test(test_lines_long),
    cmocka_unit_test_setup_teardown(test_gang_bodies, fx_setup, fx_teardown),
    cmocka_unit_test_setup_teardown(test_single_bodies, fx_setup, fx_teardown),
    cmocka_unit_test_setup_teardown(test_accelerator_bodies, fx_setup, fx_teardown),
    cmocka_unit_test_setup_teardown(test_topology_slice_error, fx_setup, fx_teardown),
    cmocka_unit_test(test_network_body),
    cmocka_unit_test(test_host_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
