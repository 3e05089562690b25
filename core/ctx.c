/* The public API: a context that loads a spec, runs it and keeps the
 * results. */
#include <fnmatch.h>
#include <stddef.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "docker.h"
#include "plan.h"
#include "export_github.h"
#include "k8s/k8s.h"
#include "report.h"
#include "report_html.h"
#include "rundir.h"
#include "scheduler.h"
#include "spec.h"
#include "topology.h"
#include "junit.h"
#include "timings.h"
#include "shard.h"
#include "pytest_run.h"
#include "tpuci.h"
#include "util.h"

#define TPUCI__LOAD_TIMEOUT_MS 5000
#define TPUCI__LOAD_MEMORY (256u * 1024 * 1024)

struct tpuci_ctx_s {
  tpuci_ctx_options_t opts;
  tpuci__err_t err;
  tpuci__plan_t plan;
  int loaded;

  /* The current or last run. */
  tpuci_run_options_t ropts;
  tpuci__instance_result_t *results;
  size_t nresults;
  tpuci__rundir_t rd;
  tpuci__sched_t *sched;
  uv_loop_t *own_loop;
  int running;
  int ran;
  uint64_t start_ms;
  uint64_t start_hr;
  uint64_t duration_ms;
  int exit_code;
  int run_error;
  json_t *report;         /* of the last run */
  int jobs;
  tpuci__timings_t timings; /* recorded test durations (state_dir) */
  tpuci__strv_t **preselect; /* rerun --failed: failed tests per instance */
  char *timings_path;
};

static int tpuci__fail(tpuci_ctx_t *ctx, tpuci__err_t *e) {
  int code = e->code;
  tpuci__err_clear(&ctx->err);
  ctx->err = *e;
  e->msg = NULL;
  return code;
}

int tpuci_ctx_new(tpuci_ctx_t **out, const tpuci_ctx_options_t *opts) {
  tpuci_ctx_t *ctx;
  if (out == NULL) return TPUCI_EUSAGE;
  ctx = tpuci__calloc(1, sizeof(*ctx));
  if (opts != NULL) {
    size_t n = opts->size < sizeof(ctx->opts) ? opts->size : sizeof(ctx->opts);
    memcpy(&ctx->opts, opts, n);
  }
  ctx->opts.size = sizeof(ctx->opts);
  if (ctx->opts.load_timeout_ms == 0) ctx->opts.load_timeout_ms = TPUCI__LOAD_TIMEOUT_MS;
  if (ctx->opts.load_memory_bytes == 0) ctx->opts.load_memory_bytes = TPUCI__LOAD_MEMORY;
  tpuci__plan_init(&ctx->plan);
  tpuci__timings_init(&ctx->timings);
  ctx->rd.jsonl_fd = -1;
  *out = ctx;
  return 0;
}

static void tpuci__results_free(tpuci_ctx_t *ctx) {
  size_t i;
  for (i = 0; i < ctx->nresults; i++) tpuci__instance_result_free(&ctx->results[i]);
  free(ctx->results);
  ctx->results = NULL;
  ctx->nresults = 0;
  tpuci__sched_free(ctx->sched);
  ctx->sched = NULL;
  tpuci__rundir_close(&ctx->rd);
  if (ctx->report) json_decref(ctx->report);
  ctx->report = NULL;
  ctx->ran = 0;
  tpuci__timings_free(&ctx->timings);
  tpuci__timings_init(&ctx->timings);
  free(ctx->timings_path);
  ctx->timings_path = NULL;
}

static void tpuci__preselect_free(tpuci_ctx_t *ctx) {
  size_t i;
  for (i = 0; ctx->preselect && i < ctx->plan.ninstances; i++) {
    if (ctx->preselect[i] == NULL) continue;
    tpuci__strv_free(ctx->preselect[i]);
    free(ctx->preselect[i]);
  }
  free(ctx->preselect);
  ctx->preselect = NULL;
}

void tpuci_ctx_free(tpuci_ctx_t *ctx) {
  if (ctx == NULL) return;
  tpuci__preselect_free(ctx);
  tpuci__results_free(ctx);
  tpuci__timings_free(&ctx->timings);
  tpuci__plan_free(&ctx->plan);
  tpuci__err_clear(&ctx->err);
  free(ctx);
}

const char *tpuci_last_error(const tpuci_ctx_t *ctx) {
  return ctx && ctx->err.msg ? ctx->err.msg : "";
}

void tpuci_free(void *p) { free(p); }

/* ------------------------------------------------------------------ */
/* Loading                                                             */

static int tpuci__load(tpuci_ctx_t *ctx, const char *chunk, size_t len,
                       const char *name, const char *dir) {
  tpuci__spec_limits_t limits;
  tpuci__err_t e = {0, NULL};
  int r;

  if (ctx->running) {
    tpuci__err_set(&e, TPUCI_ESTATE, "cannot load a spec while running");
    return tpuci__fail(ctx, &e);
  }
  tpuci__results_free(ctx);
  tpuci__preselect_free(ctx);
  tpuci__plan_free(&ctx->plan);
  tpuci__plan_init(&ctx->plan);
  ctx->loaded = 0;
  ctx->plan.spec_path = tpuci__strdup(name);
  ctx->plan.spec_dir = tpuci__strdup(dir);
  limits.timeout_ms = ctx->opts.load_timeout_ms;
  limits.memory_bytes = ctx->opts.load_memory_bytes;
  r = tpuci__spec_load(&ctx->plan, chunk, len, name, dir, &limits, &e);
  if (r == 0 && ctx->plan.ninstances == 0)
    r = tpuci__err_set(&e, TPUCI_ESPEC, "%s: the spec declares no jobs", name);
  if (r != 0) {
    if (e.msg == NULL) tpuci__err_set(&e, r, "%s: %s", name, tpuci_strerror(r));
    tpuci__plan_free(&ctx->plan);
    tpuci__plan_init(&ctx->plan);
    return tpuci__fail(ctx, &e);
  }
  ctx->loaded = 1;
  tpuci__err_clear(&ctx->err);
  return 0;
}

int tpuci_load_file(tpuci_ctx_t *ctx, const char *path) {
  char *chunk, *copy, resolved[PATH_MAX];
  tpuci__err_t e = {0, NULL};
  size_t len;
  int r;

  if (ctx == NULL || path == NULL) return TPUCI_EUSAGE;
  r = tpuci__read_file_max(path, TPUCI__SPEC_MAX_BYTES, &chunk, &len);
  if (r == UV_EFBIG) {
    tpuci__err_set(&e, TPUCI_ELIMIT, "%s: the spec is larger than %zu MiB "
                   "(the most a spec may have)", path,
                   TPUCI__SPEC_MAX_BYTES / (1024 * 1024));
    return tpuci__fail(ctx, &e);
  }
  if (r == UV_EISDIR || r == UV_EFTYPE) {
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
      tpuci__err_set(&e, r, "%s: cannot read spec: it is %s, not a regular file",
                     path, tpuci__file_kind(st.st_mode));
    else
      tpuci__err_set(&e, r, "%s: cannot read spec: not a regular file", path);
    return tpuci__fail(ctx, &e);
  }
  if (r != 0) {
    tpuci__err_set(&e, r, "%s: cannot read spec: %s", path, uv_strerror(r));
    return tpuci__fail(ctx, &e);
  }
  copy = tpuci__strdup(path);
  if (realpath(dirname(copy), resolved) == NULL) {
    r = TPUCI__ERRNO;
    free(copy);
    free(chunk);
    tpuci__err_set(&e, r, "%s: cannot resolve its folder: %s", path, uv_strerror(r));
    return tpuci__fail(ctx, &e);
  }
  free(copy);
  r = tpuci__load(ctx, chunk, len, path, resolved);
  free(chunk);
  return r;
}

int tpuci_load_string(tpuci_ctx_t *ctx, const char *chunk, size_t len,
                      const char *name) {
  char cwd[PATH_MAX];
  tpuci__err_t e = {0, NULL};
  if (ctx == NULL || chunk == NULL) return TPUCI_EUSAGE;
  if (getcwd(cwd, sizeof(cwd)) == NULL) {
    tpuci__err_set(&e, TPUCI__ERRNO, "cannot get the current folder");
    return tpuci__fail(ctx, &e);
  }
  return tpuci__load(ctx, chunk, len, name ? name : "spec", cwd);
}

size_t tpuci_warning_count(const tpuci_ctx_t *ctx) {
  return ctx->plan.warnings.len;
}

const char *tpuci_warning(const tpuci_ctx_t *ctx, size_t i) {
  return i < ctx->plan.warnings.len ? ctx->plan.warnings.items[i] : NULL;
}

/* ------------------------------------------------------------------ */
/* The plan                                                            */

int tpuci_plan_select(tpuci_ctx_t *ctx, const char *const *globs, size_t n) {
  tpuci__err_t e = {0, NULL};
  size_t i, k;
  int count = 0;

  if (!ctx->loaded) {
    tpuci__err_set(&e, TPUCI_ESTATE, "no spec loaded");
    return tpuci__fail(ctx, &e);
  }
  tpuci__preselect_free(ctx);
  for (i = 0; i < ctx->plan.ninstances; i++) {
    tpuci__instance_t *inst = &ctx->plan.instances[i];
    inst->selected = n == 0;
    for (k = 0; k < n && !inst->selected; k++)
      inst->selected = fnmatch(globs[k], inst->name, 0) == 0 ||
                       fnmatch(globs[k], inst->job, 0) == 0;
    count += inst->selected;
  }
  if (count == 0) {
    tpuci__buf_t b;
    tpuci__buf_init(&b);
    for (k = 0; k < n; k++) tpuci__buf_addf(&b, "%s'%s'", k ? ", " : "", globs[k]);
    tpuci__err_set(&e, TPUCI_ENOMATCH, "%s: no job instance matches %s",
                   ctx->plan.spec_path, b.data ? b.data : "''");
    tpuci__buf_free(&b);
    return tpuci__fail(ctx, &e);
  }
  return count;
}

size_t tpuci_instance_count(const tpuci_ctx_t *ctx) {
  return ctx->plan.ninstances;
}

#define TPUCI__HAS(ctx, i) ((i) < (ctx)->plan.ninstances)

const char *tpuci_instance_name(const tpuci_ctx_t *ctx, size_t i) {
  return TPUCI__HAS(ctx, i) ? ctx->plan.instances[i].name : NULL;
}

const char *tpuci_instance_job(const tpuci_ctx_t *ctx, size_t i) {
  return TPUCI__HAS(ctx, i) ? ctx->plan.instances[i].job : NULL;
}

const char *tpuci_instance_where(const tpuci_ctx_t *ctx, size_t i) {
  return TPUCI__HAS(ctx, i) ? ctx->plan.instances[i].where : NULL;
}

int tpuci_instance_selected(const tpuci_ctx_t *ctx, size_t i) {
  return TPUCI__HAS(ctx, i) ? ctx->plan.instances[i].selected : 0;
}

static int tpuci__read_summary(const char *state_dir, const char *run_id,
                               json_t **out, tpuci__err_t *err);

/* Predicted shards: what the next run would assign, if the suite is the
 * one the latest run saw. For each selected shard instance, the tests of
 * its whole group in .tpuci/runs/latest/summary.json are split again with
 * .tpuci/timings.json. Returns a JSON object: instance name ->
 * {"tests": N, "predicted_s": S}; empty when nothing is known. */
static json_t *tpuci__plan_predictions(const tpuci_ctx_t *ctx) {
  json_t *out = json_object(), *summary = NULL, *ji;
  tpuci__timings_t timings;
  tpuci__err_t e = {0, NULL};
  size_t i, k;

  tpuci__timings_init(&timings);
  if (tpuci__read_summary(".tpuci", "latest", &summary, &e) != 0 ||
      tpuci__timings_load(&timings, ".tpuci/timings.json", &e) != 0) {
    tpuci__err_clear(&e);
    if (summary) json_decref(summary);
    tpuci__timings_free(&timings);
    return out;
  }
  for (i = 0; i < ctx->plan.ninstances; i++) {
    const tpuci__instance_t *inst = &ctx->plan.instances[i];
    tpuci__strv_t ids = {0};
    tpuci__shard_plan_t sp;
    char *group;
    if (!inst->selected || !inst->pytest || inst->pytest->shards <= 1) continue;
    group = tpuci__pytest_group_name(inst);
    json_array_foreach(json_object_get(summary, "instances"), k, ji) {
      const char *name = json_string_value(json_object_get(ji, "name"));
      tpuci__instance_t probe;
      tpuci__pytest_t py;
      json_t *jt;
      size_t t;
      char *g2;
      if (name == NULL) continue;
      memset(&probe, 0, sizeof(probe));
      memset(&py, 0, sizeof(py));
      probe.name = (char *) name;
      probe.pytest = &py;
      g2 = tpuci__pytest_group_name(&probe);
      if (strcmp(g2, group) == 0)
        json_array_foreach(json_object_get(ji, "tests"), t, jt) {
          const char *id = json_string_value(json_object_get(jt, "id"));
          if (id) tpuci__strv_push(&ids, id);
        }
      free(g2);
    }
    free(group);
    if (ids.len > 0 &&
        tpuci__shard_plan((const char *const *) ids.items, ids.len, &timings,
                          (size_t) inst->pytest->shards, &sp, &e) == 0) {
      const tpuci__shard_t *sh = &sp.shards[inst->pytest->shard - 1];
      json_t *o = json_object();
      json_object_set_new(o, "tests", json_integer((json_int_t) sh->ids.len));
      json_object_set_new(o, "predicted_s", json_real(sh->predicted_s));
      json_object_set_new(out, inst->name, o);
      tpuci__shard_plan_free(&sp);
    }
    tpuci__err_clear(&e);
    tpuci__strv_free(&ids);
  }
  json_decref(summary);
  tpuci__timings_free(&timings);
  return out;
}

int tpuci_plan_json(const tpuci_ctx_t *ctx, char **out, size_t *len) {
  json_t *pred, *root, *ji;
  const char *name;
  json_t *p;
  size_t i;

  if (!ctx->loaded) return TPUCI_ESTATE;
  *out = tpuci__plan_to_json(&ctx->plan);
  pred = tpuci__plan_predictions(ctx);
  if (json_object_size(pred) > 0 && (root = json_loads(*out, JSON_PRESERVE_ORDER, NULL))) {
    json_array_foreach(json_object_get(root, "instances"), i, ji) {
      name = json_string_value(json_object_get(ji, "name"));
      p = name ? json_object_get(pred, name) : NULL;
      if (p && json_is_object(json_object_get(ji, "pytest")))
        json_object_update(json_object_get(ji, "pytest"), p);
    }
    free(*out);
    *out = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    {
      char *nl = tpuci__printf("%s\n", *out);
      free(*out);
      *out = nl;
    }
  }
  json_decref(pred);
  if (len) *len = strlen(*out);
  return 0;
}

int tpuci_plan_text(const tpuci_ctx_t *ctx, char **out, size_t *len) {
  json_t *pred, *o;
  const char *name;
  tpuci__buf_t b;
  size_t i;
  int any = 0;

  if (!ctx->loaded) return TPUCI_ESTATE;
  tpuci__buf_init(&b);
  *out = tpuci__plan_to_text(&ctx->plan);
  tpuci__buf_adds(&b, *out);
  free(*out);
  pred = tpuci__plan_predictions(ctx);
  for (i = 0; i < ctx->plan.ninstances; i++) {
    const tpuci__instance_t *inst = &ctx->plan.instances[i];
    if (!inst->selected || !inst->pytest || inst->pytest->shards <= 1) continue;
    if (!any) {
      tpuci__buf_adds(&b, "\nshards (tests are collected in the job's image when the run "
                          "starts, then split by recorded durations):\n");
      any = 1;
    }
    name = inst->name;
    o = json_object_get(pred, name);
    if (o)
      tpuci__buf_addf(&b, "  %s: %lld tests, predicted %.1fs (from the latest run's tests)\n",
                      name, (long long) json_integer_value(json_object_get(o, "tests")),
                      json_real_value(json_object_get(o, "predicted_s")));
    else
      tpuci__buf_addf(&b, "  %s: shard %d of %d, no recorded run to predict from\n", name,
                      inst->pytest->shard, inst->pytest->shards);
  }
  json_decref(pred);
  *out = tpuci__buf_steal(&b);
  if (len) *len = strlen(*out);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Running                                                             */

void tpuci_run_options_init(tpuci_run_options_t *opts) {
  memset(opts, 0, sizeof(*opts));
  opts->version = TPUCI_RUN_OPTIONS_VERSION;
}

static int tpuci__compute_exit(const tpuci_ctx_t *ctx) {
  size_t i;
  int failed = 0;
  if (ctx->run_error) return 3;
  if (tpuci__sched_interrupted(ctx->sched)) return 130;
  for (i = 0; i < ctx->plan.ninstances; i++) {
    tpuci_outcome_t o = ctx->results[i].outcome;
    if (!ctx->plan.instances[i].selected) continue;
    if (o == TPUCI_OUTCOME_PASSED) continue;
    if (o == TPUCI_OUTCOME_FLAKY && !ctx->ropts.strict_flaky) continue;
    failed = 1;
  }
  return failed;
}

/* Tells the host something went wrong after the fact (a report that
 * could not be written): the run's result stands. */
static void tpuci__late_message(tpuci_ctx_t *ctx, const char *msg) {
  tpuci_event_t ev;
  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_MESSAGE;
  ev.message = msg;
  if (ctx->ropts.on_event) ctx->ropts.on_event(ctx, &ev, ctx->ropts.userdata);
}

/* pytest instances: one merged JUnit file (run folder, and --junit), and
 * the durations of this run's tests recorded for the next one's shards. */
static void tpuci__write_junit(tpuci_ctx_t *ctx) {
  const tpuci__history_t **hs;
  tpuci__err_t e = {0, NULL};
  size_t i, n = 0;
  char *path;

  hs = tpuci__malloc((ctx->nresults + 1) * sizeof(*hs));
  for (i = 0; i < ctx->nresults; i++)
    if (ctx->plan.instances[i].selected && ctx->results[i].history)
      hs[n++] = ctx->results[i].history;
  if (n == 0) {
    free(hs);
    return;
  }
  path = tpuci__printf("%s/junit.xml", ctx->rd.dir);
  if (tpuci__junit_write_merged_file(path, hs, n, &e) != 0) {
    tpuci__late_message(ctx, e.msg);
    tpuci__err_clear(&e);
  }
  free(path);
  if (ctx->ropts.junit &&
      tpuci__junit_write_merged_file(ctx->ropts.junit, hs, n, &e) != 0) {
    tpuci__late_message(ctx, e.msg);
    tpuci__err_clear(&e);
  }
  for (i = 0; i < n; i++) tpuci__timings_update_history(&ctx->timings, hs[i]);
  if (ctx->timings_path &&
      tpuci__timings_save(&ctx->timings, ctx->timings_path, &e) != 0) {
    tpuci__late_message(ctx, e.msg);
    tpuci__err_clear(&e);
  }
  free(hs);
}

static void tpuci__write_reports(tpuci_ctx_t *ctx, const char *error) {
  static const struct {
    size_t offset;
    const char *format;
  } extra[] = {{offsetof(tpuci_run_options_t, report_json), "json"},
               {offsetof(tpuci_run_options_t, report_yaml), "yaml"},
               {offsetof(tpuci_run_options_t, report_html), "html"}};
  tpuci__run_info_t info;
  tpuci__err_t e = {0, NULL};
  size_t k;

  memset(&info, 0, sizeof(info));
  info.run_id = ctx->rd.id;
  info.run_dir = ctx->rd.dir;
  info.start_ms = ctx->start_ms;
  info.duration_ms = ctx->duration_ms;
  info.exit_code = ctx->exit_code;
  info.jobs = ctx->jobs;
  info.error = error;
  ctx->report = tpuci__report_build(&ctx->plan, ctx->results, &info);
  if (tpuci__rundir_summary(&ctx->rd, ctx->report, &e) != 0) {
    tpuci__late_message(ctx, e.msg);
    tpuci__err_clear(&e);
  }
  tpuci__write_junit(ctx);
  /* The HTML report always goes into the run folder too. */
  {
    char *html = tpuci__printf("%s/report.html", ctx->rd.dir);
    if (tpuci__report_write(ctx->report, "html", html, &e) != 0) {
      tpuci__late_message(ctx, e.msg);
      tpuci__err_clear(&e);
    }
    free(html);
  }
  for (k = 0; k < sizeof(extra) / sizeof(extra[0]); k++) {
    const char *path = *(const char *const *) ((const char *) &ctx->ropts + extra[k].offset);
    if (path == NULL) continue;
    if (tpuci__report_write(ctx->report, extra[k].format, path, &e) != 0) {
      tpuci__late_message(ctx, e.msg);
      tpuci__err_clear(&e);
    }
  }
}

static void tpuci__on_sched_event(void *host, const tpuci_event_t *ev) {
  tpuci_ctx_t *ctx = host;

  if (ev->type == TPUCI_EVENT_ATTEMPT_FINISHED) {
    const tpuci__instance_result_t *r = &ctx->results[ev->instance];
    tpuci__rundir_append(&ctx->rd, &ctx->plan.instances[ev->instance],
                         ev->attempt, &r->attempts[r->nattempts - 1]);
  }
  if (ev->type == TPUCI_EVENT_RUN_FINISHED) {
    tpuci__err_t e = {0, NULL};
    const char *error = tpuci__sched_error(ctx->sched);
    ctx->running = 0;
    ctx->duration_ms = (uv_hrtime() - ctx->start_hr) / 1000000u;
    if (error) {
      ctx->run_error = tpuci__sched_error_code(ctx->sched);
      if (ctx->run_error == 0) ctx->run_error = TPUCI_EENGINE;
      tpuci__err_set(&e, ctx->run_error, "%s", error);
      tpuci__fail(ctx, &e);
    }
    ctx->exit_code = tpuci__compute_exit(ctx);
    tpuci__write_reports(ctx, error);
  }
  if (ctx->ropts.on_event) ctx->ropts.on_event(ctx, ev, ctx->ropts.userdata);
}

int tpuci_run(tpuci_ctx_t *ctx, const tpuci_run_options_t *opts) {
  tpuci__sched_opts_t so;
  tpuci__err_t e = {0, NULL};
  tpuci_event_t ev;
  uv_loop_t *loop;
  size_t i, nsel = 0;
  int r;

  if (ctx == NULL || opts == NULL || opts->version != TPUCI_RUN_OPTIONS_VERSION)
    return TPUCI_EUSAGE;
  if (ctx->running) {
    tpuci__err_set(&e, TPUCI_ESTATE, "a run is already in progress");
    return tpuci__fail(ctx, &e);
  }
  if (!ctx->loaded) {
    tpuci__err_set(&e, TPUCI_ESTATE, "no spec loaded");
    return tpuci__fail(ctx, &e);
  }
  tpuci__results_free(ctx);
  ctx->ropts = *opts;
  ctx->run_error = 0;
  ctx->exit_code = 0;
  for (i = 0; i < ctx->plan.ninstances; i++) nsel += ctx->plan.instances[i].selected != 0;
  if (nsel == 0) {
    tpuci__err_set(&e, TPUCI_ENOMATCH, "%s: no job instance selected",
                   ctx->plan.spec_path);
    return tpuci__fail(ctx, &e);
  }

  ctx->jobs = opts->jobs > 0 ? opts->jobs : (int) uv_available_parallelism();
  r = tpuci__sched_check(&ctx->plan, ctx->jobs, &e);
  if (r != 0) return tpuci__fail(ctx, &e);
  r = tpuci__rundir_create(&ctx->rd, opts->state_dir ? opts->state_dir : ".tpuci", &e);
  if (r != 0) return tpuci__fail(ctx, &e);
  ctx->timings_path = tpuci__printf("%s/timings.json", opts->state_dir ? opts->state_dir
                                                                     : ".tpuci");
  if (tpuci__timings_load(&ctx->timings, ctx->timings_path, &e) != 0) {
    /* Shards fall back to counts; the next run rewrites the file. */
    char *msg = tpuci__printf("warning: %s; test durations start afresh", e.msg);
    tpuci__err_clear(&e);
    tpuci__timings_free(&ctx->timings);
    tpuci__timings_init(&ctx->timings);
    memset(&ev, 0, sizeof(ev));
    ev.type = TPUCI_EVENT_MESSAGE;
    ev.message = msg;
    if (opts->on_event) opts->on_event(ctx, &ev, opts->userdata);
    free(msg);
  }
  ctx->nresults = ctx->plan.ninstances;
  ctx->results = tpuci__calloc(ctx->nresults ? ctx->nresults : 1, sizeof(*ctx->results));

  if (opts->loop != NULL) {
    loop = opts->loop;
  } else {
    ctx->own_loop = tpuci__malloc(sizeof(*ctx->own_loop));
    r = uv_loop_init(ctx->own_loop);
    if (r != 0) {
      free(ctx->own_loop);
      ctx->own_loop = NULL;
      tpuci__err_set(&e, r, "cannot create an event loop: %s", uv_strerror(r));
      return tpuci__fail(ctx, &e);
    }
    loop = ctx->own_loop;
  }

  memset(&so, 0, sizeof(so));
  so.jobs = ctx->jobs;
  so.fail_fast = opts->fail_fast;
  so.strict_flaky = opts->strict_flaky;
  so.keep_failed = opts->keep_failed;
  so.deadline_ms = opts->deadline_ms;
  so.grace_ms = opts->grace_ms;
  so.handle_signals = opts->handle_signals;
  so.tick_ms = opts->tick_ms;
  so.run_id = ctx->rd.id;
  so.timings = &ctx->timings;
  so.preselect = ctx->preselect;
  so.run_dir = ctx->rd.dir;
  so.on_event = tpuci__on_sched_event;
  so.host = ctx;

  ctx->start_ms = tpuci__now_ms();
  ctx->start_hr = uv_hrtime();
  ctx->running = 1;
  ctx->ran = 1;
  memset(&ev, 0, sizeof(ev));
  ev.type = TPUCI_EVENT_RUN_STARTED;
  ev.message = ctx->rd.dir;
  if (opts->on_event) opts->on_event(ctx, &ev, opts->userdata);

  r = tpuci__sched_start(&ctx->sched, loop, &ctx->plan, ctx->results, &so, &e);
  if (r != 0) {
    ctx->running = 0;
    if (ctx->own_loop) {
      uv_loop_close(ctx->own_loop);
      free(ctx->own_loop);
      ctx->own_loop = NULL;
    }
    return tpuci__fail(ctx, &e);
  }
  if (ctx->own_loop == NULL) return 0;

  uv_run(ctx->own_loop, UV_RUN_DEFAULT);
  r = uv_loop_close(ctx->own_loop);
  free(ctx->own_loop);
  ctx->own_loop = NULL;
  if (r != 0) {
    tpuci__err_set(&e, TPUCI_ESTATE, "internal error: handles left open on the loop");
    return tpuci__fail(ctx, &e);
  }
  return ctx->run_error;
}

int tpuci_cancel(tpuci_ctx_t *ctx, int force) {
  if (ctx == NULL) return TPUCI_EUSAGE;
  if (!ctx->running || ctx->sched == NULL) return TPUCI_ESTATE;
  tpuci__sched_cancel(ctx->sched, force);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Results                                                             */

int tpuci_run_exit_code(const tpuci_ctx_t *ctx) { return ctx->exit_code; }

const char *tpuci_run_id(const tpuci_ctx_t *ctx) { return ctx->rd.id; }

const char *tpuci_run_dir(const tpuci_ctx_t *ctx) { return ctx->rd.dir; }

uint64_t tpuci_run_duration_ms(const tpuci_ctx_t *ctx) { return ctx->duration_ms; }

size_t tpuci_outcome_count(const tpuci_ctx_t *ctx, tpuci_outcome_t outcome) {
  size_t i, n = 0;
  for (i = 0; i < ctx->nresults; i++)
    if (ctx->plan.instances[i].selected && ctx->results[i].outcome == outcome) n++;
  return n;
}

tpuci_outcome_t tpuci_instance_outcome(const tpuci_ctx_t *ctx, size_t i) {
  return i < ctx->nresults ? ctx->results[i].outcome : TPUCI_OUTCOME_NONE;
}

size_t tpuci_attempt_count(const tpuci_ctx_t *ctx, size_t i) {
  return i < ctx->nresults ? ctx->results[i].nattempts : 0;
}

int tpuci_attempt_info(const tpuci_ctx_t *ctx, size_t i, size_t k,
                       tpuci_attempt_info_t *out) {
  const tpuci__attempt_result_t *a;
  if (i >= ctx->nresults || k >= ctx->results[i].nattempts) return TPUCI_EUSAGE;
  a = &ctx->results[i].attempts[k];
  out->outcome = a->outcome;
  out->exit_code = a->exit_code;
  out->term_signal = a->term_signal;
  out->start_ms = a->start_ms;
  out->duration_ms = a->duration_ms;
  out->cause = a->cause;
  out->log_path = a->log_path;
  return 0;
}

int tpuci_report(const tpuci_ctx_t *ctx, const char *format, char **out) {
  if (ctx == NULL || format == NULL || out == NULL) return TPUCI_EUSAGE;
  if (ctx->report == NULL) return TPUCI_ESTATE;
  if (strcmp(format, "json") == 0) {
    *out = tpuci__report_json_text(ctx->report);
    return *out ? 0 : TPUCI_ENOMEM;
  }
  if (strcmp(format, "yaml") == 0)
    return tpuci__report_yaml_text(ctx->report, out, NULL);
  if (strcmp(format, "html") == 0) {
    tpuci__buf_t b;
    int r;
    tpuci__buf_init(&b);
    r = tpuci__report_html(ctx->report, &b, NULL);
    if (r != 0) {
      tpuci__buf_free(&b);
      return r;
    }
    *out = tpuci__buf_steal(&b);
    return 0;
  }
  return TPUCI_EUSAGE;
}

int tpuci_export(tpuci_ctx_t *ctx, const char *format,
                 const tpuci_export_options_t *opts, char **out) {
  tpuci__export_opts_t eo;
  tpuci__err_t e = {0, NULL};
  tpuci__buf_t b;
  int r;

  if (ctx == NULL || format == NULL || out == NULL) return TPUCI_EUSAGE;
  if (!ctx->loaded) {
    tpuci__err_set(&e, TPUCI_ESTATE, "no spec loaded");
    return tpuci__fail(ctx, &e);
  }
  if (strcmp(format, "kubernetes") == 0) {
    tpuci__k8s_opts_t ko;
    tpuci__k8s_opts_init(&ko);
    if (opts != NULL && opts->version >= 2) {
      ko.emulated = opts->emulated;
      ko.no_mounts = opts->no_mounts;
      ko.run = opts->run;
      ko.results_claim = opts->results_claim;
    }
    tpuci__buf_init(&b);
    r = tpuci__export_kubernetes(&ctx->plan, &ko, &b, &e);
    if (r != 0) {
      tpuci__buf_free(&b);
      return tpuci__fail(ctx, &e);
    }
    *out = tpuci__buf_steal(&b);
    return 0;
  }
  if (strcmp(format, "github") != 0) {
    tpuci__err_set(&e, TPUCI_EUSAGE, "unknown export format '%s' (known: github, kubernetes)",
                   format);
    return tpuci__fail(ctx, &e);
  }
  tpuci__export_opts_init(&eo);
  if (opts != NULL) {
    eo.spec = opts->spec;
    eo.source_url = opts->source_url;
    eo.source_ref = opts->source_ref;
    eo.name = opts->name;
    eo.per_job = opts->per_job;
  }
  tpuci__buf_init(&b);
  r = tpuci__export_github(&ctx->plan, &eo, &b, &e);
  if (r != 0) {
    tpuci__buf_free(&b);
    return tpuci__fail(ctx, &e);
  }
  *out = tpuci__buf_steal(&b);
  return 0;
}

/* ------------------------------------------------------------------ */
/* The TPU catalogue                                                   */

int tpuci_topologies(tpuci_ctx_t *ctx, const char *type, const char *emulate,
                     char **out) {
  tpuci__err_t e = {0, NULL};
  if (ctx == NULL || out == NULL) return TPUCI_EUSAGE;
  if (type == NULL) {
    *out = tpuci__tpu_catalogue_text();
    return 0;
  }
  *out = tpuci__tpu_describe(type, emulate ? emulate : "pjrt", &e);
  if (*out == NULL) {
    if (e.msg == NULL) tpuci__err_set(&e, TPUCI_EUSAGE, "unknown TPU type '%s'", type);
    if (e.code == 0) e.code = TPUCI_EUSAGE;
    return tpuci__fail(ctx, &e);
  }
  return 0;
}

size_t tpuci_test_count(const tpuci_ctx_t *ctx, size_t i) {
  if (ctx == NULL || i >= ctx->nresults || ctx->results[i].history == NULL) return 0;
  return ctx->results[i].history->len;
}

int tpuci_test_info(const tpuci_ctx_t *ctx, size_t i, size_t k,
                    tpuci_test_info_t *out) {
  const tpuci__test_hist_t *t;
  const tpuci__test_t *fin;
  size_t r;
  if (out == NULL || k >= tpuci_test_count(ctx, i)) return TPUCI_EUSAGE;
  t = &ctx->results[i].history->tests[k];
  fin = tpuci__history_final(t);
  memset(out, 0, sizeof(*out));
  out->id = t->id;
  out->runs = (int) t->len;
  if (fin == NULL) return 0;
  out->outcome = tpuci__test_outcome_name(fin->outcome);
  out->failing = tpuci__test_outcome_failing(fin->outcome);
  out->flaky = tpuci__history_flaky(t);
  out->duration_s = fin->time_s;
  out->file = fin->file;
  out->line = fin->line >= 0 ? fin->line + 1 : 0;
  for (r = t->len; r > 0; r--) {
    const tpuci__test_t *run = &t->runs[r - 1].result;
    if (tpuci__test_outcome_failing(run->outcome)) {
      out->message = run->message;
      break;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Engine maintenance                                                  */

int tpuci_engine_gc(tpuci_ctx_t *ctx, int dry_run, char **report) {
  tpuci__buf_t b;
  tpuci__err_t e = {0, NULL};
  int r;
  tpuci__buf_init(&b);
  r = tpuci__docker_gc(dry_run, &b, &e);
  *report = tpuci__buf_steal(&b);
  if (r < 0) return tpuci__fail(ctx, &e);
  return r;
}

int tpuci_engine_doctor(tpuci_ctx_t *ctx, char **report) {
  tpuci__buf_t b;
  tpuci__err_t e = {0, NULL};
  int r;
  tpuci__buf_init(&b);
  r = tpuci__docker_doctor(ctx->loaded ? &ctx->plan : NULL, &b, &e);
  *report = tpuci__buf_steal(&b);
  if (r < 0) return tpuci__fail(ctx, &e);
  return r;
}

/* ------------------------------------------------------------------ */
/* Past runs                                                           */

/* "state_dir/runs/<id>/summary.json", as messages name it. */
static char *tpuci__summary_path(const char *state_dir, const char *run_id) {
  if (run_id == NULL || *run_id == '\0') run_id = "latest";
  return tpuci__printf("%s/runs/%s/summary.json", state_dir ? state_dir : ".tpuci",
                       run_id);
}

/* Reads state_dir/runs/<id>/summary.json. */
static int tpuci__read_summary(const char *state_dir, const char *run_id,
                               json_t **out, tpuci__err_t *err) {
  char *path, *text;
  json_error_t je;
  size_t len;
  int r;

  if (run_id == NULL || *run_id == '\0') run_id = "latest";
  if (strchr(run_id, '/') != NULL)
    return tpuci__err_set(err, TPUCI_EUSAGE, "'%s' is not a run id", run_id);
  path = tpuci__summary_path(state_dir, run_id);
  r = tpuci__read_file(path, &text, &len);
  if (r != 0) {
    tpuci__err_set(err, r, "%s: %s%s", path, uv_strerror(r),
                   r == UV_ENOENT ? " (no such run; `ls .tpuci/runs` lists them)" : "");
    free(path);
    return r;
  }
  *out = json_loadb(text, len, 0, &je);
  free(text);
  if (*out == NULL || !json_is_array(json_object_get(*out, "instances"))) {
    r = tpuci__err_set(err, TPUCI_EIO, "%s:%d: not a tpuci summary: %s", path,
                       je.line, *out ? "no instances" : je.text);
    if (*out) json_decref(*out);
    *out = NULL;
    free(path);
    return r;
  }
  free(path);
  return 0;
}

static const char *tpuci__jstr(json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

static int tpuci__jint(json_t *o, const char *key, int dflt) {
  json_t *v = json_object_get(o, key);
  return json_is_integer(v) ? (int) json_integer_value(v) : dflt;
}

int tpuci_load_run(tpuci_ctx_t *ctx, const char *state_dir,
                   const char *run_id) {
  tpuci__err_t e = {0, NULL};
  json_t *root, *insts, *ji, *ja;
  size_t i, k;
  int r;

  if (ctx == NULL) return TPUCI_EUSAGE;
  if (ctx->running) {
    tpuci__err_set(&e, TPUCI_ESTATE, "cannot load a run while running");
    return tpuci__fail(ctx, &e);
  }
  r = tpuci__read_summary(state_dir, run_id, &root, &e);
  if (r != 0) return tpuci__fail(ctx, &e);
  tpuci__results_free(ctx);
  tpuci__preselect_free(ctx);
  tpuci__plan_free(&ctx->plan);
  tpuci__plan_init(&ctx->plan);
  ctx->loaded = 0; /* a record, not a runnable spec */
  ctx->plan.spec_path = tpuci__strdup(tpuci__jstr(root, "spec"));
  insts = json_object_get(root, "instances");
  ctx->nresults = json_array_size(insts);
  ctx->results = tpuci__calloc(ctx->nresults ? ctx->nresults : 1, sizeof(*ctx->results));
  json_array_foreach(insts, i, ji) {
    tpuci__instance_t *inst = tpuci__plan_add_instance(&ctx->plan);
    tpuci__instance_result_t *res = &ctx->results[i];
    int o = tpuci__outcome_parse(tpuci__jstr(ji, "outcome"));
    inst->name = tpuci__strdup(tpuci__jstr(ji, "name"));
    inst->job = tpuci__strdup(tpuci__jstr(ji, "job"));
    inst->where = tpuci__strdup(tpuci__jstr(ji, "where"));
    inst->selected = 1;
    res->outcome = o < 0 ? TPUCI_OUTCOME_NONE : (tpuci_outcome_t) o;
    ja = json_object_get(ji, "attempts");
    for (k = 0; k < json_array_size(ja); k++) {
      json_t *jt = json_array_get(ja, k);
      tpuci__attempt_result_t *a;
      int ao = tpuci__outcome_parse(tpuci__jstr(jt, "outcome"));
      res->attempts = tpuci__realloc(res->attempts, (res->nattempts + 1) * sizeof(*a));
      a = &res->attempts[res->nattempts++];
      memset(a, 0, sizeof(*a));
      a->outcome = ao < 0 ? TPUCI_OUTCOME_NONE : (tpuci_outcome_t) ao;
      a->exit_code = tpuci__jint(jt, "exit_code", -1);
      a->term_signal = tpuci__jint(jt, "signal", 0);
      a->start_ms = (uint64_t) json_integer_value(json_object_get(jt, "start_ms"));
      a->duration_ms = (uint64_t) json_integer_value(json_object_get(jt, "duration_ms"));
      a->cause = tpuci__strdup(tpuci__jstr(jt, "cause"));
      a->log_path = tpuci__strdup(tpuci__jstr(jt, "log"));
    }
  }
  ctx->rd.id = tpuci__strdup(tpuci__jstr(root, "run_id"));
  ctx->rd.dir = tpuci__strdup(tpuci__jstr(root, "run_dir"));
  ctx->exit_code = tpuci__jint(root, "exit_code", 1);
  ctx->duration_ms = (uint64_t) json_integer_value(json_object_get(root, "duration_ms"));
  ctx->jobs = tpuci__jint(root, "jobs", 1);
  ctx->report = root;
  ctx->ran = 1;
  tpuci__err_clear(&ctx->err);
  return 0;
}

static int tpuci__cmp_inst_name(const void *a, const void *b) {
  const tpuci__instance_t *x = *(const tpuci__instance_t *const *) a;
  const tpuci__instance_t *y = *(const tpuci__instance_t *const *) b;
  return strcmp(x->name, y->name);
}

/* The number of instances a summary's "counts" say did not pass: every
 * count but passed, flaky and total; -1 without counts. */
static long tpuci__summary_unpassed_count(json_t *root) {
  json_t *counts = json_object_get(root, "counts"), *v;
  const char *key;
  long n = 0;

  if (!json_is_object(counts)) return -1;
  json_object_foreach(counts, key, v) {
    if (strcmp(key, "passed") == 0 || strcmp(key, "flaky") == 0 ||
        strcmp(key, "total") == 0)
      continue;
    if (json_is_integer(v) && json_integer_value(v) > 0)
      n += (long) json_integer_value(v);
  }
  return n;
}

/* Picks the instances of the plan that did not pass in the summary `root`
 * (read from `path`). A summary that does not say exactly which instances
 * to run again is an error, never "everything passed": a record without a
 * name, a name the spec does not have, counts or an exit code that speak
 * of failures no record names. Returns the number selected or an error in
 * e; the selection is only changed on success. */
static int tpuci__select_unpassed(tpuci_ctx_t *ctx, json_t *root, const char *path,
                                  tpuci__err_t *e) {
  tpuci__instance_t **byname, key, *keyp = &key;
  unsigned char *pick;
  json_t *ji;
  size_t i, k;
  long counted;
  int exit_code, unpassed = 0, flaky = 0, r = 0;

  /* Names are unique in a plan: look them up in a sorted index. */
  byname = tpuci__malloc((ctx->plan.ninstances + 1) * sizeof(*byname));
  pick = tpuci__calloc(ctx->plan.ninstances + 1, 1);
  for (i = 0; i < ctx->plan.ninstances; i++) byname[i] = &ctx->plan.instances[i];
  qsort(byname, ctx->plan.ninstances, sizeof(*byname), tpuci__cmp_inst_name);
  json_array_foreach(json_object_get(root, "instances"), k, ji) {
    const char *o = tpuci__jstr(ji, "outcome"), *name;
    tpuci__instance_t **hit;
    if (strcmp(o, "passed") == 0) continue;
    if (strcmp(o, "flaky") == 0) {
      flaky++;
      continue;
    }
    unpassed++;
    name = json_string_value(json_object_get(ji, "name"));
    if (name == NULL || *name == '\0') {
      r = tpuci__err_set(e, TPUCI_EIO, "%s: instance record %zu (%s) has no "
                         "name, so what to run again is unknown (a damaged "
                         "summary; run the spec with `tpuci run`)", path, k + 1,
                         *o ? o : "no outcome");
      goto done;
    }
    key.name = (char *) name;
    hit = bsearch(&keyp, byname, ctx->plan.ninstances, sizeof(*byname),
                  tpuci__cmp_inst_name);
    if (hit == NULL) {
      r = tpuci__err_set(e, TPUCI_ENOMATCH, "%s: instance '%s' did not pass "
                         "(%s), but %s has no instance of that name (renamed?); "
                         "run the spec with `tpuci run`", path, name,
                         *o ? o : "no outcome", ctx->plan.spec_path);
      goto done;
    }
    pick[*hit - ctx->plan.instances] = 1;
  }
  counted = tpuci__summary_unpassed_count(root);
  if (counted > unpassed) {
    r = tpuci__err_set(e, TPUCI_EIO, "%s: its counts say %ld instance%s did not "
                       "pass, but %d instance record%s say%s which (a damaged "
                       "summary; run the spec with `tpuci run`)", path, counted,
                       counted == 1 ? "" : "s", unpassed, unpassed == 1 ? "" : "s",
                       unpassed == 1 ? "s" : "");
    goto done;
  }
  exit_code = tpuci__jint(root, "exit_code", 0);
  if (unpassed == 0 && exit_code != 0 && exit_code != 130) {
    if (flaky > 0)
      r = tpuci__err_set(e, TPUCI_EIO, "%s: the run failed (exit %d) with no "
                         "instance that did not pass: its %d flaky instance%s "
                         "failed it under --strict-flaky; run %s with `tpuci "
                         "run --only`", path, exit_code, flaky,
                         flaky == 1 ? "" : "s", flaky == 1 ? "it" : "them");
    else
      r = tpuci__err_set(e, TPUCI_EIO, "%s: the run failed (exit %d) but no "
                         "instance record says which did not pass (a damaged "
                         "summary; run the spec with `tpuci run`)", path,
                         exit_code);
    goto done;
  }

  /* The selection, and for pytest only the tests that did not pass, when
   * they are known and the shard assignment does not matter (not
   * sharded). */
  tpuci__preselect_free(ctx);
  for (i = 0; i < ctx->plan.ninstances; i++) {
    ctx->plan.instances[i].selected = pick[i];
    r += pick[i];
  }
  json_array_foreach(json_object_get(root, "instances"), k, ji) {
    const char *o = tpuci__jstr(ji, "outcome");
    tpuci__instance_t **hit;
    size_t t, at;
    json_t *jt;
    if (strcmp(o, "failed") != 0) continue;
    key.name = (char *) tpuci__jstr(ji, "name");
    hit = bsearch(&keyp, byname, ctx->plan.ninstances, sizeof(*byname),
                  tpuci__cmp_inst_name);
    if (hit == NULL || !(*hit)->pytest || (*hit)->pytest->shards > 1) continue;
    at = (size_t) (*hit - ctx->plan.instances);
    if (ctx->preselect && ctx->preselect[at]) continue; /* A repeated record. */
    json_array_foreach(json_object_get(ji, "tests"), t, jt) {
      const char *to = tpuci__jstr(jt, "outcome");
      if (strcmp(to, "failed") != 0 && strcmp(to, "error") != 0) continue;
      if (ctx->preselect == NULL)
        ctx->preselect = tpuci__calloc(ctx->plan.ninstances + 1, sizeof(*ctx->preselect));
      if (ctx->preselect[at] == NULL)
        ctx->preselect[at] = tpuci__calloc(1, sizeof(*ctx->preselect[at]));
      tpuci__strv_push(ctx->preselect[at], tpuci__jstr(jt, "id"));
    }
  }

done:
  free(pick);
  free(byname);
  return r;
}

int tpuci_plan_select_unpassed(tpuci_ctx_t *ctx, const char *state_dir,
                               const char *run_id) {
  tpuci__err_t e = {0, NULL};
  json_t *root;
  char *path;
  int r;

  if (ctx == NULL) return TPUCI_EUSAGE;
  if (!ctx->loaded) {
    tpuci__err_set(&e, TPUCI_ESTATE, "no spec loaded");
    return tpuci__fail(ctx, &e);
  }
  r = tpuci__read_summary(state_dir, run_id, &root, &e);
  if (r != 0) return tpuci__fail(ctx, &e);
  path = tpuci__summary_path(state_dir, run_id);
  r = tpuci__select_unpassed(ctx, root, path, &e);
  free(path);
  json_decref(root);
  if (r < 0) return tpuci__fail(ctx, &e);
  return r;
}

int tpuci_run_spec_path(const char *state_dir, const char *run_id,
                        char **out) {
  tpuci__err_t e = {0, NULL};
  json_t *root;
  int r = tpuci__read_summary(state_dir, run_id, &root, &e);
  tpuci__err_clear(&e);
  if (r != 0) return r;
  *out = tpuci__strdup(tpuci__jstr(root, "spec"));
  json_decref(root);
  return **out ? 0 : TPUCI_ENOMATCH;
}
