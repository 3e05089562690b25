/* The scheduler with the local runtime, on a real loop and real
 * processes: slots, timeouts with process trees, retries, flaky,
 * fail-fast, cancel, deadline, orphans. Plans are built in C here; the
 * spec loader has tests of its own. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "plan/plan.h"
#include "kind/pytest/kind.h"
#include "sched/scheduler.h"

typedef struct {
  tpuci__plan_t plan;
  tpuci__instance_result_t *results;
  tpuci__sched_opts_t opts;
  uv_loop_t loop;
  tpuci__sched_t *s;
  char dir[256];
  int running, max_running, finished, started, retries, messages;
  int bad_moves; /* messages of a move the run's table lacks */
  uv_timer_t cancel_timer;
  int cancel_after_ms;
  int cancel_twice; /* then again, forced (a second signal) */
} fixture_t;

static void on_event(void *host, const tpuci_event_t *ev) {
  fixture_t *f = host;
  switch (ev->type) {
    case TPUCI_EVENT_ATTEMPT_STARTED:
      f->started++;
      if (++f->running > f->max_running) f->max_running = f->running;
      break;
    case TPUCI_EVENT_ATTEMPT_FINISHED: f->running--; break;
    case TPUCI_EVENT_RETRY_SCHEDULED: f->retries++; break;
    case TPUCI_EVENT_MESSAGE:
      f->messages++;
      if (ev->message != NULL && strstr(ev->message, "internal error") != NULL) f->bad_moves++;
      break;
    case TPUCI_EVENT_RUN_FINISHED: f->finished = 1; break;
    default: break;
  }
}

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof(*f));
  snprintf(f->dir, sizeof(f->dir), "/tmp/tpuci-sched-XXXXXX");
  assert_non_null(mkdtemp(f->dir));
  tpuci__plan_init(&f->plan);
  f->plan.spec_dir = tpuci__strdup(f->dir);
  f->plan.spec_path = tpuci__strdup("test.lua");
  assert_int_equal(uv_loop_init(&f->loop), 0);
  f->opts.jobs = 2;
  f->opts.run_id = "test-run";
  f->opts.run_dir = f->dir;
  f->opts.on_event = on_event;
  f->opts.host = f;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  size_t i;
  char *cmd;
  /* Every handle is closed: the loop closes cleanly. */
  assert_int_equal(uv_loop_close(&f->loop), 0);
  for (i = 0; i < f->plan.ninstances && f->results; i++)
    tpuci__instance_result_free(&f->results[i]);
  free(f->results);
  tpuci__sched_free(f->s);
  tpuci__plan_free(&f->plan);
  cmd = tpuci__printf("rm -rf '%s'", f->dir);
  assert_int_equal(system(cmd), 0);
  free(cmd);
  free(f);
  return 0;
}

/* Adds an instance running `sh -c script`. */
static tpuci__instance_t *add(fixture_t *f, const char *name, const char *script) {
  tpuci__instance_t *inst = tpuci__plan_add_instance(&f->plan);
  inst->name = tpuci__strdup(name);
  inst->job = tpuci__strdup(name);
  inst->where = tpuci__strdup("test.lua:1");
  inst->run = tpuci__strdup(script);
  tpuci__strv_push(&inst->argv, "/bin/sh");
  tpuci__strv_push(&inst->argv, "-c");
  tpuci__strv_push(&inst->argv, script);
  inst->grace_ms = 200;
  inst->retry.attempts = 1;
  inst->retry.on = (1u << TPUCI_OUTCOME_FAILED) | (1u << TPUCI_OUTCOME_TIMEOUT);
  inst->retry.backoff_ms = 10;
  inst->retry.factor = 2;
  inst->retry.max_backoff_ms = 1000;
  inst->selected = 1;
  return inst;
}

static void cancel_cb(uv_timer_t *t) {
  fixture_t *f = t->data;
  tpuci__sched_cancel(f->s, 0);
  if (f->cancel_twice) tpuci__sched_cancel(f->s, 1);
  uv_close((uv_handle_t *) t, NULL);
}

static void run(fixture_t *f) {
  tpuci__err_t err = {0, NULL};
  f->results = calloc(f->plan.ninstances, sizeof(*f->results));
  assert_int_equal(tpuci__sched_start(&f->s, &f->loop, &f->plan, f->results,
                                      &f->opts, &err), 0);
  if (f->cancel_after_ms) {
    uv_timer_init(&f->loop, &f->cancel_timer);
    f->cancel_timer.data = f;
    uv_timer_start(&f->cancel_timer, cancel_cb, (uint64_t) f->cancel_after_ms, 0);
  }
  uv_run(&f->loop, UV_RUN_DEFAULT);
  {
    size_t i, k;
    for (i = 0; i < f->plan.ninstances; i++)
      for (k = 0; k < f->results[i].nattempts; k++)
        print_message("  %s #%zu: %s (%s)\n", f->plan.instances[i].name, k + 1,
                      tpuci_outcome_name(f->results[i].attempts[k].outcome),
                      f->results[i].attempts[k].cause);
  }
  assert_true(f->finished);
  assert_int_equal(f->running, 0);
  /* The run's state moved only as its table says (a debug build asserts
   * on the spot; a release build tells it). */
  assert_int_equal(f->bad_moves, 0);
}

/* Whether `pid` is running: it exists and is not a zombie (an orphan's
 * zombie waits for whatever reaps orphans here, which may be nobody). */
static int alive(int pid) {
  char path[64], buf[512], *p;
  FILE *f;
  size_t n;
  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  if ((f = fopen(path, "r")) == NULL) return 0;
  n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  p = strrchr(buf, ')');
  return p != NULL && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* The process whose pid is in `file` is gone. */
static void assert_dead(const char *dir, const char *file) {
  char *path = tpuci__printf("%s/%s", dir, file), *text = NULL;
  int pid, i;
  assert_int_equal(tpuci__read_file(path, &text, NULL), 0);
  pid = atoi(text);
  assert_true(pid > 1);
  /* The group was SIGKILLed; a loaded machine may take a while. */
  for (i = 0; i < 3000 && alive(pid); i++) usleep(10000);
  assert_false(alive(pid));
  free(text);
  free(path);
}

static void test_pass_and_fail(void **state) {
  fixture_t *f = *state;
  add(f, "ok", "echo hello");
  add(f, "bad", "echo oops >&2; exit 3");
  add(f, "notfound", "exit 0");
  tpuci__strv_free(&f->plan.instances[2].argv);
  tpuci__strv_push(&f->plan.instances[2].argv, "/nonexistent/tool");
  run(f);
  assert_int_equal(f->results[0].outcome, TPUCI_OUTCOME_PASSED);
  assert_int_equal(f->results[0].attempts[0].exit_code, 0);
  assert_int_equal(f->results[1].outcome, TPUCI_OUTCOME_FAILED);
  assert_int_equal(f->results[1].attempts[0].exit_code, 3);
  assert_string_equal(f->results[1].attempts[0].cause, "exit 3");
  assert_int_equal(f->results[2].outcome, TPUCI_OUTCOME_FAILED);
  assert_int_equal(f->results[2].attempts[0].exit_code, 127);
  {
    char *log = NULL;
    assert_int_equal(tpuci__read_file(f->results[1].attempts[0].log_path, &log, NULL), 0);
    assert_string_equal(log, "oops\n");
    free(log);
  }
}

static void test_slots(void **state) {
  fixture_t *f = *state;
  int i;
  char name[16];
  for (i = 0; i < 6; i++) {
    snprintf(name, sizeof(name), "s%d", i);
    add(f, name, "sleep 0.2");
  }
  f->opts.jobs = 2;
  run(f);
  assert_int_equal(f->started, 6);
  assert_int_equal(f->max_running, 2);
  for (i = 0; i < 6; i++) assert_int_equal(f->results[i].outcome, TPUCI_OUTCOME_PASSED);
}

static void test_timeout_kills_tree(void **state) {
  fixture_t *f = *state;
  tpuci__instance_t *inst = add(f, "tree",
      "sleep 100 & echo $! > child.pid; sh -c 'sleep 100 & echo $! > grandchild.pid; wait' & wait");
  /* Long enough for the shells to start and write both pids under load. */
  inst->timeout_ms = 2500;
  inst->workdir = tpuci__strdup(f->dir);
  run(f);
  assert_int_equal(f->results[0].outcome, TPUCI_OUTCOME_TIMEOUT);
  assert_non_null(strstr(f->results[0].attempts[0].cause, "timed out after 2.5s"));
  assert_dead(f->dir, "child.pid");
  assert_dead(f->dir, "grandchild.pid");
}

static void test_timeout_ignores_term(void **state) {
  fixture_t *f = *state;
  tpuci__instance_t *inst = add(f, "stubborn", "trap '' TERM; while :; do sleep 0.05; done");
  inst->timeout_ms = 2000; /* the trap is set by then, even under load */
  inst->grace_ms = 200;
  run(f);
  assert_int_equal(f->results[0].outcome, TPUCI_OUTCOME_TIMEOUT);
  assert_int_equal(f->results[0].attempts[0].term_signal, SIGKILL);
  assert_non_null(strstr(f->results[0].attempts[0].cause, "SIGKILL"));
}

static void test_retry_turns_flaky(void **state) {
  fixture_t *f = *state;
  tpuci__instance_t *inst = add(f, "flaky",
      "if [ -e marker ]; then exit 0; else touch marker; exit 1; fi");
  inst->workdir = tpuci__strdup(f->dir);
  inst->retry.attempts = 3;
  run(f);
  assert_int_equal(f->results[0].outcome, TPUCI_OUTCOME_FLAKY);
  assert_int_equal(f->results[0].nattempts, 2);
  assert_int_equal(f->results[0].attempts[0].outcome, TPUCI_OUTCOME_FAILED);
  assert_int_equal(f->results[0].attempts[1].outcome, TPUCI_OUTCOME_PASSED);
  assert_int_equal(f->retries, 1);
}

static void test_retry_only_on(void **state) {
  fixture_t *f = *state;
  tpuci__instance_t *inst = add(f, "noretry", "exit 1");
  inst->retry.attempts = 3;
  inst->retry.on = 1u << TPUCI_OUTCOME_TIMEOUT; /* failures are final */
  run(f);
  assert_int_equal(f->results[0].outcome, TPUCI_OUTCOME_FAILED);
  assert_int_equal(f->results[0].nattempts, 1);
}

static void test_retries_exhausted(void **state) {
  fixture_t *f = *state;
  tpuci__instance_t *inst = add(f, "always", "exit 2");
  inst->retry.attempts = 3;
  run(f);
  assert_int_equal(f->results[0].outcome, TPUCI_OUTCOME_FAILED);
  assert_int_equal(f->results[0].nattempts, 3);
  assert_int_equal(f->retries, 2);
}

static void test_fail_fast(void **state) {
  fixture_t *f = *state;
  add(f, "fails", "exit 1");
  add(f, "slow", "sleep 30");
  add(f, "queued", "true");
  f->opts.jobs = 2;
  f->opts.fail_fast = 1;
  run(f);
  assert_int_equal(f->results[0].outcome, TPUCI_OUTCOME_FAILED);
  assert_int_equal(f->results[1].outcome, TPUCI_OUTCOME_CANCELLED);
  assert_true(f->results[1].attempts[0].duration_ms < 10000);
  assert_int_equal(f->results[2].outcome, TPUCI_OUTCOME_CANCELLED);
  assert_int_equal(f->results[2].nattempts, 0);
  assert_false(tpuci__sched_interrupted(f->s));
}

static void test_cancel(void **state) {
  fixture_t *f = *state;
  add(f, "long", "sleep 100 & echo $! > bg.pid; wait");
  f->plan.instances[0].workdir = tpuci__strdup(f->dir);
  add(f, "waiting", "true");
  f->opts.jobs = 1;
  f->cancel_after_ms = 2000; /* bg.pid written by then, even under load */
  run(f);
  assert_int_equal(f->results[0].outcome, TPUCI_OUTCOME_CANCELLED);
  assert_int_equal(f->results[1].outcome, TPUCI_OUTCOME_CANCELLED);
  assert_true(tpuci__sched_interrupted(f->s));
  assert_dead(f->dir, "bg.pid");
  /* Once the run is over, a cancel has nothing left to stop. */
  tpuci__sched_cancel(f->s, 1);
  assert_int_equal(f->bad_moves, 0);
}

/* Stopped by fail-fast while an attempt ignores SIGTERM for its grace,
 * then cancelled twice while it stops (the second forced, as a second
 * signal is): the run stops once, the forced stop kills at once, and the
 * run ends once. */
static void test_stop_again(void **state) {
  fixture_t *f = *state;
  add(f, "fails", "sleep 0.2; exit 1");
  add(f, "deaf", "trap '' TERM; sleep 30")->grace_ms = 20000;
  add(f, "queued", "true");
  f->opts.jobs = 2;
  f->opts.fail_fast = 1;
  f->cancel_after_ms = 1500;
  f->cancel_twice = 1;
  run(f);
  assert_int_equal(f->results[0].outcome, TPUCI_OUTCOME_FAILED);
  assert_int_equal(f->results[1].outcome, TPUCI_OUTCOME_CANCELLED);
  assert_true(f->results[1].attempts[0].duration_ms < 15000);
  assert_int_equal(f->results[2].outcome, TPUCI_OUTCOME_CANCELLED);
  /* The first reason stays. */
  assert_false(tpuci__sched_interrupted(f->s));
}

static void test_deadline(void **state) {
  fixture_t *f = *state;
  add(f, "long", "sleep 30");
  f->opts.deadline_ms = 200;
  run(f);
  assert_int_equal(f->results[0].outcome, TPUCI_OUTCOME_CANCELLED);
  assert_non_null(strstr(f->results[0].attempts[0].cause, "deadline"));
  assert_false(tpuci__sched_interrupted(f->s));
}

static void test_orphan_killed(void **state) {
  fixture_t *f = *state;
  /* The job exits at once, leaving a background child holding stdout. */
  tpuci__instance_t *inst = add(f, "orphan", "sleep 100 & echo $! > orphan.pid; exit 0");
  inst->workdir = tpuci__strdup(f->dir);
  run(f);
  assert_int_equal(f->results[0].outcome, TPUCI_OUTCOME_PASSED);
  assert_dead(f->dir, "orphan.pid");
}

static void test_env(void **state) {
  fixture_t *f = *state;
  tpuci__instance_t *inst = add(f, "env[py=3.11]",
      "test \"$GREETING\" = hi && test \"$TPUCI_MATRIX_PY\" = 3.11 && "
      "test \"$TPUCI_ATTEMPT\" = 1 && test \"$TPUCI_INSTANCE\" = 'env[py=3.11]' && "
      "test \"$(pwd)\" = \"$WANT\"");
  tpuci__kv_set(&inst->env, "GREETING", "hi");
  tpuci__kv_set(&inst->matrix, "py", "3.11");
  tpuci__kv_set(&inst->env, "WANT", f->dir);
  run(f);
  assert_int_equal(f->results[0].outcome, TPUCI_OUTCOME_PASSED);
}

/* Slots the file descriptors allow: 3 per local attempt, 5 per container
 * host, 64 kept for the rest. */
static void test_fd_cap(void **state) {
  fixture_t *f = *state;
  tpuci__instance_t *c;
  add(f, "a", "true");
  c = add(f, "c", "true");
  c->selected = 0;
  c->runtime = TPUCI__RUNTIME_DOCKER;
  assert_int_equal(tpuci__sched_fd_cap(&f->plan, 1024), 320);
  assert_int_equal(tpuci__sched_fd_cap(&f->plan, 65), 1);
  assert_int_equal(tpuci__sched_fd_cap(&f->plan, 10), 1);
  assert_int_equal(tpuci__sched_fd_cap(&f->plan, UINT64_MAX), 1000000);
  c->selected = 1; /* a container in the run: 5 each */
  assert_int_equal(tpuci__sched_fd_cap(&f->plan, 1024), 192);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_pass_and_fail, setup, teardown),
      cmocka_unit_test_setup_teardown(test_slots, setup, teardown),
      cmocka_unit_test_setup_teardown(test_timeout_kills_tree, setup, teardown),
      cmocka_unit_test_setup_teardown(test_timeout_ignores_term, setup, teardown),
      cmocka_unit_test_setup_teardown(test_retry_turns_flaky, setup, teardown),
      cmocka_unit_test_setup_teardown(test_retry_only_on, setup, teardown),
      cmocka_unit_test_setup_teardown(test_retries_exhausted, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fail_fast, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stop_again, setup, teardown),
      cmocka_unit_test_setup_teardown(test_deadline, setup, teardown),
      cmocka_unit_test_setup_teardown(test_orphan_killed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_env, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fd_cap, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
