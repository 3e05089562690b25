/* An example of embedding tpuci in a C program that owns its libuv loop.
 *
 * It loads a spec from a string, runs it twice at once on the program's
 * own loop next to a timer of its own (two runs of one context, each with
 * its own selection), counts each run's events, and checks both runs'
 * results through the accessors once both are over. Built against the
 * shared library and run by the tests; docs/embedding.md walks through
 * it.
 *
 *   cc embed_example.c $(pkg-config --cflags --libs tpuci libuv)
 */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <tpuci.h>

static const char spec[] =
    "job 'hello' { run = 'echo hello from ${matrix.who}', matrix = { who = { 'a', 'b' } } }\n"
    "job 'fails' { run = 'exit 7' }\n"
    "job 'long'  { run = 'sleep 60' }\n";

typedef struct {
  int started, finished, output_bytes, run_finished, ticks;
  int events, first, after_finished; /* RUN_STARTED first, RUN_FINISHED last */
  size_t event_size;        /* the events' size field */
  uv_timer_t tick;
} app_t;

static void on_event(tpuci_run_t *run, const tpuci_event_t *ev, void *ud) {
  app_t *app = ud;
  app->event_size = ev->size;
  if (app->events++ == 0) app->first = ev->type;
  if (app->run_finished) app->after_finished++;
  switch (ev->type) {
    case TPUCI_EVENT_ATTEMPT_STARTED: app->started++; break;
    case TPUCI_EVENT_OUTPUT: app->output_bytes += (int) ev->len; break;
    case TPUCI_EVENT_ATTEMPT_FINISHED:
      app->finished++;
      printf("finished %s: %s (%s)\n", ev->name, tpuci_outcome_name(ev->outcome), ev->cause);
      /* When the quick jobs are done, cancel the long one from inside a
       * callback: that is allowed. */
      if (app->finished == 3) tpuci_cancel(run, 0);
      break;
    case TPUCI_EVENT_RUN_FINISHED:
      app->run_finished = 1;
      if (app->tick.data) uv_close((uv_handle_t *) &app->tick, NULL);
      break;
    default: break;
  }
}

static void tick_cb(uv_timer_t *t) {
  app_t *app = t->data;
  app->ticks++; /* the host's own work keeps going during the run */
}

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                       \
    }                                                                 \
  } while (0)

/* A run that starts and cannot do its work (an engine that is not
 * there): tpuci_run_start() returns 0, the run goes from RUN_STARTED to
 * RUN_FINISHED, and the failure is its result. */
static int engine_missing(const char *state) {
  static const char docker_spec[] = "job 'c' { image = 'busybox:1', run = 'true' }\n";
  tpuci_ctx_t *ctx;
  tpuci_run_t *run;
  tpuci_run_options_t opts;
  app_t app;

  memset(&app, 0, sizeof(app));
  CHECK(setenv("DOCKER_HOST", "unix:///nonexistent/tpuci-embed/docker.sock", 1) == 0);
  CHECK(tpuci_ctx_new(&ctx, NULL) == 0);
  CHECK(tpuci_load_string(ctx, docker_spec, strlen(docker_spec), "docker.lua") == 0);
  tpuci_run_options_init(&opts);
  opts.state_dir = state;
  opts.on_event = on_event;
  opts.userdata = &app;
  CHECK(tpuci_run_start(ctx, &opts, &run) == 0);
  CHECK(app.first == TPUCI_EVENT_RUN_STARTED && app.run_finished && app.after_finished == 0);
  CHECK(tpuci_run_error(run) != 0);
  CHECK(strstr(tpuci_run_error_message(run), "nonexistent") != NULL);
  CHECK(tpuci_run_exit_code(run) == 3);
  CHECK(strcmp(tpuci_run_verdict(run), "not-run") == 0);
  printf("engine missing: %s\n", tpuci_run_error_message(run));
  tpuci_run_free(run);
  tpuci_ctx_free(ctx);
  CHECK(unsetenv("DOCKER_HOST") == 0);
  return 0;
}

int main(void) {
  static const char *const hello[] = {"hello*"};
  tpuci_ctx_t *ctx;
  tpuci_run_t *run, *run2, *none = (tpuci_run_t *) &none;
  tpuci_run_options_t opts, opts2;
  tpuci_attempt_info_t info = TPUCI_ATTEMPT_INFO_INIT;
  uv_loop_t loop;
  app_t app, app2;
  size_t i;
  char state[] = "/tmp/tpuci-embed-XXXXXX";

  memset(&app, 0, sizeof(app));
  memset(&app2, 0, sizeof(app2));
  CHECK(mkdtemp(state) != NULL);
  CHECK(uv_loop_init(&loop) == 0);
  {
    /* Options: a struct smaller than this SONAME's is refused; a larger
     * one (a newer header) is read as far as this library knows it. */
    union {
      tpuci_ctx_options_t o;
      unsigned char bytes[sizeof(tpuci_ctx_options_t) + 16];
    } big;
    tpuci_ctx_options_t small;
    tpuci_ctx_options_init(&small);
    small.size = offsetof(tpuci_ctx_options_t, load_memory_bytes);
    CHECK(tpuci_ctx_new(&ctx, &small) == TPUCI_EUSAGE);
    memset(&big, 0xAB, sizeof(big));
    tpuci_ctx_options_init(&big.o);
    big.o.size = sizeof(big);
    CHECK(tpuci_ctx_new(&ctx, &big.o) == 0);
    tpuci_ctx_free(ctx);
  }
  CHECK(tpuci_ctx_new(&ctx, NULL) == 0);

  /* A broken spec gives an error with its line, and nothing loaded. */
  CHECK(tpuci_load_string(ctx, "job 'x' { rnu = 'true' }", 24, "broken.lua") == TPUCI_ESPEC);
  CHECK(strstr(tpuci_last_error(ctx), "broken.lua:1:") != NULL);
  /* Nothing loaded: it fails before its first event. */
  tpuci_run_options_init(&opts);
  opts.on_event = on_event;
  opts.userdata = &app;
  CHECK(tpuci_run_start(ctx, &opts, &none) == TPUCI_ESTATE);
  CHECK(app.events == 0 && none == NULL);

  CHECK(tpuci_load_string(ctx, spec, strlen(spec), "embedded.lua") == 0);
  CHECK(tpuci_instance_count(ctx) == 4);
  CHECK(strcmp(tpuci_instance_name(ctx, 0), "hello[who=a]") == 0);

  uv_timer_init(&loop, &app.tick);
  app.tick.data = &app;
  uv_timer_start(&app.tick, tick_cb, 0, 5); /* first tick on the first loop pass */

  tpuci_run_options_init(&opts);
  opts.loop = &loop;
  opts.jobs = 4;
  opts.state_dir = state;
  opts.on_event = on_event;
  opts.userdata = &app;
  CHECK(tpuci_run_start(ctx, &opts, &run) == 0);
  /* Running on the caller's loop: tpuci_run_start returned at once. */
  CHECK(!app.run_finished);
  /* A second run of the same context on the same loop, at the same time,
   * with a selection of its own: the first run's stays as it was. */
  CHECK(tpuci_plan_select(ctx, hello, 1) == 2);
  opts2 = opts;
  opts2.jobs = 2;
  opts2.userdata = &app2;
  CHECK(tpuci_run_start(ctx, &opts2, &run2) == 0);
  CHECK(run2 != run && tpuci_run_ctx(run2) == ctx);
  /* The context's plan is the runs': no other spec while they live. */
  CHECK(tpuci_load_string(ctx, spec, strlen(spec), "again.lua") == TPUCI_ESTATE);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(app.run_finished && app2.run_finished);
  CHECK(uv_loop_close(&loop) == 0); /* tpuci closed all its handles */

  /* The second run: the two hello instances only, both passed. */
  CHECK(app2.started == 2 && app2.finished == 2);
  CHECK(tpuci_run_instance_count(run2) == 4);
  CHECK(tpuci_run_instance_selected(run2, 0) && !tpuci_run_instance_selected(run2, 2));
  CHECK(tpuci_outcome_count(run2, TPUCI_OUTCOME_PASSED) == 2);
  CHECK(tpuci_instance_outcome(run2, 2) == TPUCI_OUTCOME_NONE);
  CHECK(tpuci_run_exit_code(run2) == 0);
  CHECK(strcmp(tpuci_run_id(run2), tpuci_run_id(run)) != 0);

  CHECK(app.started == 4 && app.finished == 4);
  CHECK(app.output_bytes == (int) (2 * strlen("hello from a\n")));
  CHECK(app.ticks > 0);
  CHECK(tpuci_instance_outcome(run, 0) == TPUCI_OUTCOME_PASSED);
  CHECK(tpuci_instance_outcome(run, 2) == TPUCI_OUTCOME_FAILED);
  CHECK(tpuci_instance_outcome(run, 3) == TPUCI_OUTCOME_CANCELLED);
  CHECK(tpuci_attempt_info(run, 2, 0, &info) == 0);
  CHECK(info.exit_code == 7 && strcmp(info.cause, "exit 7") == 0);
  CHECK(info.size == sizeof(info));
  {
    /* Sizes: what the caller's struct holds, checked both ways. */
    union {
      tpuci_attempt_info_t info;
      unsigned char bytes[sizeof(tpuci_attempt_info_t) + 16];
    } old;
    size_t end = offsetof(tpuci_attempt_info_t, exit_code) + sizeof(int), b;
    memset(&old, 0xAB, sizeof(old));
    old.info.size = end;
    /* Shorter than the first version's fields: refused, untouched. */
    CHECK(tpuci_attempt_info(run, 2, 0, &old.info) == TPUCI_EUSAGE);
    for (b = sizeof(size_t); b < sizeof(old); b++) CHECK(old.bytes[b] == 0xAB);
    /* A larger caller struct (built against a newer header than this
     * library): the library fills what it knows and leaves the rest. */
    old.info.size = sizeof(old);
    CHECK(tpuci_attempt_info(run, 2, 0, &old.info) == 0);
    CHECK(old.info.exit_code == 7 && old.info.size == sizeof(old));
    for (b = sizeof(tpuci_attempt_info_t); b < sizeof(old); b++)
      CHECK(old.bytes[b] == 0xAB);
  }
  CHECK(app.event_size == sizeof(tpuci_event_t));
  CHECK(app.first == TPUCI_EVENT_RUN_STARTED && app.after_finished == 0);
  /* Run options smaller than this SONAME's: refused, before any event. */
  opts.size = offsetof(tpuci_run_options_t, no_select);
  app.events = 0;
  CHECK(tpuci_run_start(ctx, &opts, &none) == TPUCI_EUSAGE);
  CHECK(app.events == 0);
  /* The first run: all four, its own selection kept. */
  CHECK(tpuci_run_instance_selected(run, 2) && tpuci_run_instance_selected(run, 3));
  CHECK(tpuci_outcome_count(run, TPUCI_OUTCOME_PASSED) == 2);
  CHECK(tpuci_run_exit_code(run) == 130); /* cancelled */
  CHECK(strncmp(tpuci_run_dir(run), state, strlen(state)) == 0);
  for (i = 0; i < tpuci_run_instance_count(run); i++)
    printf("%s: %s / %s\n", tpuci_run_instance_name(run, i),
           tpuci_outcome_name(tpuci_instance_outcome(run, i)),
           tpuci_outcome_name(tpuci_instance_outcome(run2, i)));
  tpuci_run_free(run2);
  {
    /* A past run read back is a run too, beside the one still held. */
    tpuci_run_t *past;
    CHECK(tpuci_load_run(ctx, state, tpuci_run_id(run), &past) == 0);
    CHECK(tpuci_run_exit_code(past) == 130);
    CHECK(tpuci_instance_outcome(past, 2) == TPUCI_OUTCOME_FAILED);
    tpuci_run_free(past);
  }
  tpuci_run_free(run);
  /* With no run left, the context loads again. */
  CHECK(tpuci_load_string(ctx, spec, strlen(spec), "again.lua") == 0);
  tpuci_ctx_free(ctx);
  CHECK(engine_missing(state) == 0);
  {
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", state);
    CHECK(system(cmd) == 0);
  }
  printf("embed example: ok\n");
  return 0;
}
