/* A job kind of the test's own, bound beside the command kind as
 * core/api/run.c binds kind/kinds.h's rows, driving the scheduler with the
 * local runtime through every operation of kind.h: check, attach, a
 * group whose step runs first, a part that finishes without running,
 * ready, prepare of every role, poll, ended, release, a retry the kind
 * allows, a process before the attempts (SIDE_FIRST) and one after them
 * (SIDE_LAST) that settle waits for, and the final outcome the kind says.
 * Its instances hold a record of its own (plan.h's kind_config), which
 * the spec loader makes with the kind's loader (plan/kind_spec.h) and
 * the plan frees, copies and shows through the kind's operations: no
 * file of core/plan/ or core/spec/ knows it. What a third kind relies on
 * is what this test checks (docs/architecture.md, "Adding a job kind"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <lua.h>

#include "kind/kind.h"
#include "kind/kinds.h"
#include "kind/pytest/kind.h"
#include "plan/kind_spec.h"
#include "plan/plan.h"
#include "sched/scheduler.h"
#include "spec/spec.h"

/* The fake kind's record of an instance, and how often the plan freed
 * and copied one. */
typedef struct {
  char *label;
} fake_config_t;

static int fake_frees, fake_copies;

static void fake_free(void *config) {
  fake_config_t *f = config;
  if (f == NULL) return;
  fake_frees++;
  free(f->label);
  free(f);
}

static void *fake_copy(const void *config) {
  const fake_config_t *src = config;
  fake_config_t *dst = tpuci__calloc(1, sizeof(*dst));
  fake_copies++;
  dst->label = tpuci__strdup(src->label);
  return dst;
}

/* {"label": ..., "part": its shard}: under "fake" in the plan's JSON. */
static json_t *fake_json(const tpuci__instance_t *in) {
  const fake_config_t *f = in->kind_config;
  json_t *o = json_object();
  json_object_set_new(o, "label", f->label ? json_string(f->label) : json_null());
  json_object_set_new(o, "part", json_integer(in->shard));
  return o;
}

static const tpuci__kind_config_t fake_config = {
    .name = "fake",
    .free = fake_free,
    .copy = fake_copy,
    .json = fake_json,
};

static fake_config_t *fake_new(const char *label) {
  fake_config_t *f = tpuci__calloc(1, sizeof(*f));
  f->label = tpuci__strdup(label);
  return f;
}

/* Its loader: every job it has a record for is split in two, and an
 * instance's label is the record's `markers`, a template rendered with
 * the instance's matrix. The prelude knows one record, pytest's, so the
 * fake kind is handed that key: the loader calls whichever kind it is
 * given. */
static int fake_parts(lua_State *L, const tpuci__spec_reader_t *read, int rec, const char *job,
                      const char *where, const tpuci__topology_t *tp, int mt) {
  (void) L, (void) read, (void) rec, (void) job, (void) where, (void) tp, (void) mt;
  return 2;
}

static void fake_load(lua_State *L, const tpuci__spec_reader_t *read, int rec,
                      tpuci__instance_t *in, int parts) {
  fake_config_t *f = tpuci__calloc(1, sizeof(*f));
  const char *shard = tpuci__kv_get(&in->matrix, "shard");
  in->kind_config = f; /* the plan's before anything may raise */
  lua_getfield(L, rec, "markers");
  if (!lua_isnil(L, -1)) f->label = read->render(L, lua_gettop(L));
  lua_pop(L, 1);
  in->shards = parts;
  in->shard = shard ? atoi(shard) : 0;
}

static const tpuci__kind_spec_t fake_spec = {
    .key = "pytest",
    .config = &fake_config,
    .parts = fake_parts,
    .load = fake_load,
};

/* The fake kind's instances: "k-a" fails once then passes (a retry the
 * kind allows) and has a process before its attempts; "k-b" passes and
 * has a process after them, whose exit 3 the kind takes as
 * order-dependent; "k-c" is a part the kind finishes without running.
 * The three are one group, whose step runs before any of them. */
enum { A = 0, B, C, PLAIN, N };

struct tpuci__kind_run_s {
  const tpuci__plan_t *plan;
  const tpuci__kind_host_t *host;
  const char *dir;
  int checks, attaches, group_begins, members, steps_done, parts, retries, polls;
  int ready[N], settles[N];
  int prepared, released, seq;
  int side_first_seq, attempt1_seq[N];
  int side_last_queued, side_last_ended, side_last_exit;
  int ended_roles[4];
};

/* Its instances are those that hold its record. */
static int claims(const tpuci__instance_t *inst) { return inst->kind == &fake_config; }

static int check(const tpuci__plan_t *plan, const tpuci__instance_t *inst, int hosts,
                 tpuci__err_t *err) {
  (void) plan;
  (void) err;
  assert_int_equal(hosts, 1);
  assert_true(claims(inst));
  return 0;
}

/* check() has no state of its own (it runs before any is made): counted
 * through the run the test made. */
static tpuci__kind_run_t *the_run;

static int check_counted(const tpuci__plan_t *plan, const tpuci__instance_t *inst, int hosts,
                         tpuci__err_t *err) {
  the_run->checks++;
  return check(plan, inst, hosts, err);
}

static void attach(tpuci__kind_run_t *kr, const tpuci__kind_host_t *host) {
  kr->attaches++;
  kr->host = host;
}

static char *group(tpuci__kind_run_t *kr, size_t i) {
  (void) kr;
  assert_true(i < PLAIN);
  return tpuci__strdup("g");
}

static int group_begin(tpuci__kind_run_t *kr, int g, const char *name, const size_t *members,
                       size_t n) {
  assert_int_equal(g, 0);
  assert_string_equal(name, "g");
  assert_int_equal(n, 3);
  assert_int_equal(members[0], A);
  assert_int_equal(members[2], C);
  kr->group_begins++;
  kr->members = (int) n;
  return 0; /* its step runs first */
}

static int step_done(tpuci__kind_run_t *kr, int g, const tpuci__kind_proc_t *p,
                     const tpuci__proc_end_t *end, tpuci_outcome_t *outcome, char **cause) {
  (void) g;
  (void) outcome;
  (void) cause;
  assert_int_equal(p->role, TPUCI__PROC_STEP);
  assert_int_equal(end->outcome, TPUCI_OUTCOME_PASSED);
  kr->steps_done++;
  return 0;
}

static int part(tpuci__kind_run_t *kr, size_t index, tpuci__part_skip_t *out) {
  kr->parts++;
  assert_int_equal(kr->steps_done, 1); /* only once the group is ready */
  if (index != C) return 0;
  out->outcome = TPUCI_OUTCOME_NOT_APPLICABLE;
  out->cause = tpuci__strdup("nothing of it to run");
  return 1;
}

static void ready(tpuci__kind_run_t *kr, size_t index) {
  kr->ready[index]++;
  if (index == A) kr->host->side(kr->host->sched, A, TPUCI__PROC_SIDE_FIRST);
}

static void sh(tpuci__kind_proc_t *p, const char *script) {
  tpuci__strv_push(&p->argv, "/bin/sh");
  tpuci__strv_push(&p->argv, "-c");
  tpuci__strv_push(&p->argv, script);
}

static int prepare(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p, char **cause) {
  char *script;
  (void) cause;
  kr->prepared++;
  kr->seq++;
  switch (p->role) {
    case TPUCI__PROC_STEP:
      script = tpuci__printf("echo step; touch '%s/stepped'", kr->dir);
      sh(p, script);
      free(script);
      p->log_name = tpuci__strdup("step.log");
      break;
    case TPUCI__PROC_SIDE_FIRST:
      assert_int_equal(p->index, A);
      kr->side_first_seq = kr->seq;
      sh(p, "echo first");
      p->log_name = tpuci__strdup("first.log");
      break;
    case TPUCI__PROC_SIDE_LAST:
      assert_int_equal(p->index, B);
      sh(p, "exit 3");
      p->log_name = tpuci__strdup("last.log");
      break;
    case TPUCI__PROC_ATTEMPT:
      if (p->number == 1) kr->attempt1_seq[p->index] = kr->seq;
      /* k-a's first attempt fails; the rest pass (k-b after a while, so
       * that it is polled while it runs). */
      sh(p, p->index == A && p->number == 1 ? "exit 1" : p->index == B ? "sleep 1.2" : "true");
      break;
  }
  p->data = tpuci__strdup("kind's own");
  return 0;
}

static const char *poll_fn(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p, uint64_t now_ms,
                           uint64_t *since_ms) {
  (void) now_ms;
  assert_string_equal(p->data, "kind's own");
  kr->polls++;
  *since_ms = p->start_ms;
  return "in the test";
}

static tpuci_outcome_t ended(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p,
                             const tpuci__proc_end_t *end, char **cause) {
  (void) cause;
  assert_true(p->role != TPUCI__PROC_STEP); /* a step ends in step_done */
  kr->ended_roles[p->role]++;
  if (p->role == TPUCI__PROC_SIDE_LAST) {
    kr->side_last_ended = 1;
    kr->side_last_exit = end->exit ? end->exit->exit_code : -1;
  }
  return end->outcome;
}

static void release(tpuci__kind_run_t *kr, tpuci__kind_proc_t *p) {
  kr->released++;
  free(p->data);
  p->data = NULL;
  tpuci__strv_free(&p->argv);
  free(p->log_name);
  p->log_name = NULL;
}

static int retry(tpuci__kind_run_t *kr, size_t index) {
  assert_int_equal(index, A);
  kr->retries++;
  return 0;
}

/* k-b waits for a process after its attempts, queued the first time. */
static int settle(tpuci__kind_run_t *kr, size_t index, int dropped) {
  assert_false(dropped);
  kr->settles[index]++;
  if (index != B) return 0;
  if (!kr->side_last_queued) {
    kr->side_last_queued = 1;
    kr->host->side(kr->host->sched, B, TPUCI__PROC_SIDE_LAST);
    return 1;
  }
  return !kr->side_last_ended;
}

static tpuci_outcome_t outcome(tpuci__kind_run_t *kr, size_t index, tpuci_outcome_t o) {
  if (index == B && kr->side_last_exit == 3) return TPUCI_OUTCOME_ORDER_DEPENDENT;
  return o;
}

static const tpuci__kind_t fake_kind = {
    .name = "fake",
    .claims = claims,
    .check = check_counted,
    .attach = attach,
    .group = group,
    .group_begin = group_begin,
    .step_done = step_done,
    .part = part,
    .ready = ready,
    .prepare = prepare,
    .poll = poll_fn,
    .ended = ended,
    .release = release,
    .retry = retry,
    .settle = settle,
    .outcome = outcome,
};

static tpuci__instance_t *add(tpuci__plan_t *plan, const char *name) {
  tpuci__instance_t *inst = tpuci__plan_add_instance(plan);
  inst->name = tpuci__strdup(name);
  inst->job = tpuci__strdup(name);
  inst->where = tpuci__strdup("test.lua:1");
  inst->run = tpuci__strdup("true");
  tpuci__strv_push(&inst->argv, "/bin/sh");
  tpuci__strv_push(&inst->argv, "-c");
  tpuci__strv_push(&inst->argv, "true");
  inst->grace_ms = 200;
  inst->retry.attempts = 2;
  inst->retry.on = 1u << TPUCI_OUTCOME_FAILED;
  inst->retry.backoff_ms = 10;
  inst->retry.factor = 1;
  inst->selected = 1;
  if (strncmp(name, "k-", 2) == 0) {
    inst->kind = &fake_config;
    inst->kind_config = fake_new(name);
  }
  return inst;
}

static int finished;

static void on_event(void *host, const tpuci_event_t *ev) {
  (void) host;
  if (ev->type == TPUCI_EVENT_RUN_FINISHED) finished = 1;
}

static void test_fake_kind_every_operation(void **state) {
  tpuci__plan_t plan;
  tpuci__instance_result_t results[N];
  struct tpuci__kind_run_s kr;
  tpuci__kind_binding_t kinds[2];
  tpuci__sched_opts_t opts;
  tpuci__sched_t *s = NULL;
  tpuci__err_t err = {0, NULL};
  uv_loop_t loop;
  char dir[] = "/tmp/tpuci-kind-XXXXXX", *path, *cmd;
  struct stat st;
  size_t i;
  (void) state;

  assert_non_null(mkdtemp(dir));
  tpuci__plan_init(&plan);
  plan.spec_dir = tpuci__strdup(dir);
  plan.spec_path = tpuci__strdup("test.lua");
  add(&plan, "k-a");
  add(&plan, "k-b");
  add(&plan, "k-c");
  add(&plan, "plain");
  memset(results, 0, sizeof(results));
  memset(&kr, 0, sizeof(kr));
  kr.plan = &plan;
  kr.dir = dir;
  the_run = &kr;
  kinds[0].ops = &fake_kind;
  kinds[0].run = &kr;
  kinds[1].ops = &tpuci__kind_command;
  kinds[1].run = NULL;

  memset(&opts, 0, sizeof(opts));
  opts.jobs = 2;
  opts.run_id = "test-run";
  opts.run_dir = dir;
  opts.on_event = on_event;
  opts.kinds = kinds;
  opts.nkinds = 2;
  assert_int_equal(uv_loop_init(&loop), 0);
  assert_int_equal(tpuci__sched_start(&s, &loop, &plan, results, &opts, &err), 0);
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&loop), 0);
  assert_true(finished);

  /* Before anything ran: checked (each instance of the kind), attached. */
  assert_int_equal(kr.checks, 3);
  assert_int_equal(kr.attaches, 1);
  /* The group's step ran once, before every part. */
  assert_int_equal(kr.group_begins, 1);
  assert_int_equal(kr.members, 3);
  assert_int_equal(kr.steps_done, 1);
  path = tpuci__printf("%s/stepped", dir);
  assert_int_equal(stat(path, &st), 0);
  free(path);
  assert_true(kr.parts >= 3);
  for (i = A; i <= C; i++) assert_int_equal(kr.ready[i], 1);
  /* k-a: the process before its attempts ran before its first attempt;
   * the failed attempt was retried as the kind allowed. */
  assert_true(kr.side_first_seq > 0);
  assert_true(kr.side_first_seq < kr.attempt1_seq[A]);
  assert_int_equal(kr.retries, 1);
  assert_int_equal(results[A].nattempts, 2);
  assert_int_equal(results[A].attempts[0].outcome, TPUCI_OUTCOME_FAILED);
  assert_int_equal(results[A].attempts[1].outcome, TPUCI_OUTCOME_PASSED);
  assert_int_equal(results[A].outcome, TPUCI_OUTCOME_FLAKY);
  /* k-b: settle waited for the process after its attempts, whose exit
   * the kind's outcome() took. */
  assert_true(kr.side_last_ended);
  assert_int_equal(kr.side_last_exit, 3);
  assert_true(kr.settles[B] >= 2);
  assert_int_equal(results[B].nattempts, 1);
  assert_int_equal(results[B].outcome, TPUCI_OUTCOME_ORDER_DEPENDENT);
  /* k-c: finished without running. */
  assert_int_equal(results[C].outcome, TPUCI_OUTCOME_NOT_APPLICABLE);
  assert_string_equal(results[C].attempts[0].cause, "nothing of it to run");
  /* plain: the command kind's. */
  assert_int_equal(results[PLAIN].outcome, TPUCI_OUTCOME_PASSED);
  /* Every process the kind prepared it released; each was polled (at
   * least as it ended), and ended() heard every one but the step. */
  assert_int_equal(kr.prepared, 1 + 1 + 2 + 1 + 1); /* step, first, A x2, B, last */
  assert_int_equal(kr.released, kr.prepared);
  assert_true(kr.polls >= kr.prepared - 1);
  assert_int_equal(kr.ended_roles[TPUCI__PROC_ATTEMPT], 3);
  assert_int_equal(kr.ended_roles[TPUCI__PROC_SIDE_FIRST], 1);
  assert_int_equal(kr.ended_roles[TPUCI__PROC_SIDE_LAST], 1);

  tpuci__sched_free(s);
  for (i = 0; i < N; i++) tpuci__instance_result_free(&results[i]);
  fake_frees = 0;
  tpuci__plan_free(&plan);
  assert_int_equal(fake_frees, 3); /* the plan freed each k-'s record */
  cmd = tpuci__printf("rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
  free(cmd);
}

/* A spec loaded with the fake kind's loader: the jobs that have its
 * record are its (split in two, their records rendered with their
 * matrix), the others the command kind's; the plan's JSON shows the
 * record under the kind's name, and a copy and the plan's end go through
 * its operations. */
static void test_fake_kind_config(void **state) {
  static const char src[] = "job 'f' { pytest = { markers = 'm-${matrix.x}' },\n"
                            "          matrix = { x = { 'a', 'b' } } }\n"
                            "job 'plain' { run = 'true' }\n";
  const tpuci__kind_spec_t *kinds[] = {&fake_spec, NULL};
  tpuci__spec_limits_t limits = {0, 0, 0, kinds};
  tpuci__err_t err = {0, NULL};
  tpuci__instance_t copy;
  tpuci__plan_t plan;
  json_t *o;
  (void) state;

  tpuci__plan_init(&plan);
  assert_int_equal(tpuci__spec_load(&plan, src, strlen(src), "spec.lua", "/tmp", &limits, &err), 0);
  assert_int_equal(plan.ninstances, 5);
  assert_string_equal(plan.instances[1].name, "f[x=a,shard=2/2]");
  assert_ptr_equal(plan.instances[1].kind, &fake_config);
  assert_true(claims(&plan.instances[1]));
  assert_string_equal(((fake_config_t *) plan.instances[1].kind_config)->label, "m-a");
  assert_int_equal(plan.instances[1].shards, 2);
  assert_int_equal(plan.instances[1].shard, 2);
  assert_string_equal(((fake_config_t *) plan.instances[2].kind_config)->label, "m-b");
  assert_null(plan.instances[4].kind);
  assert_null(plan.instances[4].kind_config);
  assert_false(claims(&plan.instances[4]));

  o = tpuci__plan_instance_json(&plan, &plan.instances[2]);
  assert_string_equal(json_string_value(json_object_get(json_object_get(o, "fake"), "label")),
                      "m-b");
  assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "fake"), "part")), 1);
  assert_null(json_object_get(o, "pytest"));
  assert_null(json_object_get(json_object_get(o, "retry"), "rerun"));
  json_decref(o);

  fake_copies = fake_frees = 0;
  tpuci__instance_copy(&copy, &plan.instances[1]);
  assert_int_equal(fake_copies, 1);
  assert_ptr_not_equal(copy.kind_config, plan.instances[1].kind_config);
  assert_string_equal(((fake_config_t *) copy.kind_config)->label, "m-a");
  tpuci__instance_free(&copy);
  assert_int_equal(fake_frees, 1);
  tpuci__plan_free(&plan);
  assert_int_equal(fake_frees, 1 + 4);
  tpuci__err_clear(&err);
}

/* The table core/api/ makes every kind from: named rows, each with its
 * operations, constructor and destructor, the command kind last (it
 * claims every instance, so a row after it would never be taken), and
 * each other kind made a job by a spec key of its own, whose record its
 * loader reads into what its instances hold; the spec loader is handed
 * the loaders in the table's order. */
static void test_kinds_table(void **state) {
  const tpuci__kind_spec_t *specs[TPUCI__NKINDS + 1];
  tpuci__instance_t inst;
  size_t k, j;
  (void) state;
  tpuci__kind_specs(specs);
  memset(&inst, 0, sizeof(inst));
  inst.name = "anything";
  for (k = 0; k < TPUCI__NKINDS; k++) {
    const tpuci__kind_entry_t *e = &tpuci__kinds[k];
    assert_non_null(e->ops);
    assert_non_null(e->ops->name);
    assert_non_null(e->ops->claims);
    assert_non_null(e->run_new);
    assert_non_null(e->run_free);
    assert_ptr_equal(tpuci__kind_entry(e->ops), e);
    for (j = 0; j < k; j++) assert_string_not_equal(tpuci__kinds[j].ops->name, e->ops->name);
    if (k + 1 < TPUCI__NKINDS) {
      assert_non_null(e->spec);
      assert_non_null(e->spec->key);
      assert_non_null(e->spec->load);
      /* What its instances hold, named as the kind. */
      assert_non_null(e->spec->config);
      assert_string_equal(e->spec->config->name, e->ops->name);
      assert_ptr_equal(specs[k], e->spec);
    }
  }
  assert_ptr_equal(tpuci__kinds[TPUCI__NKINDS - 1].ops, &tpuci__kind_command);
  assert_null(tpuci__kinds[TPUCI__NKINDS - 1].spec);
  assert_null(specs[TPUCI__NKINDS - 1]);
  assert_true(tpuci__kind_command.claims(&inst));
  assert_null(tpuci__kind_entry(&fake_kind));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fake_kind_every_operation),
      cmocka_unit_test(test_fake_kind_config),
      cmocka_unit_test(test_kinds_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
