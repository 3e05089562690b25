/* Loading a spec into the plan, selecting instances, the plan as text
 * and JSON. */
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/wildmatch.h"
#include "api/ctx.h"
#include "kind/kinds.h"
#include "kind/pytest/pytest_run.h"
#include "spec/spec.h"

/* ------------------------------------------------------------------ */
/* Loading                                                             */

static int tpuci__load(tpuci_ctx_t *ctx, const char *chunk, size_t len, const char *name,
                       const char *dir) {
  const tpuci__kind_spec_t *kinds[TPUCI__NKINDS + 1];
  tpuci__spec_limits_t limits;
  tpuci__err_t e = {0, NULL};
  int r;

  /* A run of the context shares its plan until it is freed. */
  if (ctx->runs != NULL) {
    tpuci__err_set(&e, TPUCI_ESTATE,
                   "cannot load a spec while a run of the context lives: "
                   "free it first (tpuci_run_free)");
    return tpuci__fail(ctx, &e);
  }
  tpuci__preselect_free(ctx);
  ctx->repeat = 0;
  tpuci__plan_free(&ctx->plan);
  tpuci__plan_init(&ctx->plan);
  ctx->loaded = 0;
  ctx->plan.spec_path = tpuci__strdup(name);
  ctx->plan.spec_dir = tpuci__strdup(dir);
  limits.timeout_ms = ctx->opts.load_timeout_ms;
  limits.memory_bytes = ctx->opts.load_memory_bytes;
  limits.real = ctx->real;
  /* Every kind's record a job may have, as the table lists them. */
  tpuci__kind_specs(kinds);
  limits.kinds = kinds;
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
    tpuci__err_set(&e, TPUCI_ELIMIT,
                   "%s: the spec is larger than %zu MiB "
                   "(the most a spec may have)",
                   path, TPUCI__SPEC_MAX_BYTES / (1024 * 1024));
    return tpuci__fail(ctx, &e);
  }
  if (r != 0) {
    char *why = tpuci__read_why(path, r);
    tpuci__err_set(&e, r, "%s: cannot read spec: %s", path, why);
    free(why);
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

int tpuci_load_string(tpuci_ctx_t *ctx, const char *chunk, size_t len, const char *name) {
  char cwd[PATH_MAX];
  tpuci__err_t e = {0, NULL};
  if (ctx == NULL || chunk == NULL) return TPUCI_EUSAGE;
  if (getcwd(cwd, sizeof(cwd)) == NULL) {
    tpuci__err_set(&e, TPUCI__ERRNO, "cannot get the current folder");
    return tpuci__fail(ctx, &e);
  }
  return tpuci__load(ctx, chunk, len, name ? name : "spec", cwd);
}

size_t tpuci_warning_count(const tpuci_ctx_t *ctx) { return ctx->plan.warnings.len; }

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
      inst->selected =
          tpuci__wildmatch(globs[k], inst->name, 0) || tpuci__wildmatch(globs[k], inst->job, 0);
    count += inst->selected;
  }
  if (count == 0) {
    tpuci__buf_t b;
    tpuci__buf_init(&b);
    for (k = 0; k < n; k++) tpuci__buf_addf(&b, "%s'%s'", k ? ", " : "", globs[k]);
    tpuci__err_set(&e, TPUCI_ENOMATCH, "%s: no job instance matches %s", ctx->plan.spec_path,
                   b.data ? b.data : "''");
    tpuci__buf_free(&b);
    return tpuci__fail(ctx, &e);
  }
  return count;
}

int tpuci_set_real(tpuci_ctx_t *ctx, int real) {
  if (ctx == NULL || (real != 0 && real != 1)) return TPUCI_EUSAGE;
  ctx->real = real;
  return 0;
}

int tpuci_plan_engine(tpuci_ctx_t *ctx, const char *engine) {
  tpuci__err_t e = {0, NULL};
  int kind = tpuci__runtime_kind_parse(engine);
  size_t i;
  int count = 0;

  if (!ctx->loaded) {
    tpuci__err_set(&e, TPUCI_ESTATE, "no spec loaded");
    return tpuci__fail(ctx, &e);
  }
  if (kind < 0 || !tpuci__runtime_props((tpuci__runtime_kind_t) kind)->engine) {
    tpuci__err_set(&e, TPUCI_EUSAGE, "unknown engine '%s': docker or swarm", engine ? engine : "");
    return tpuci__fail(ctx, &e);
  }
  for (i = 0; i < ctx->plan.ninstances; i++) {
    tpuci__instance_t *inst = &ctx->plan.instances[i];
    if (!tpuci__runtime_props(inst->runtime)->engine) continue;
    inst->runtime = (tpuci__runtime_kind_t) kind;
    count++;
  }
  return count;
}

size_t tpuci_instance_count(const tpuci_ctx_t *ctx) { return ctx->plan.ninstances; }

const char *tpuci_instance_name(const tpuci_ctx_t *ctx, size_t i) {
  const tpuci__instance_t *in = tpuci__plan_instance(&ctx->plan, i);
  return in ? in->name : NULL;
}

const char *tpuci_instance_job(const tpuci_ctx_t *ctx, size_t i) {
  const tpuci__instance_t *in = tpuci__plan_instance(&ctx->plan, i);
  return in ? in->job : NULL;
}

const char *tpuci_instance_where(const tpuci_ctx_t *ctx, size_t i) {
  const tpuci__instance_t *in = tpuci__plan_instance(&ctx->plan, i);
  return in ? in->where : NULL;
}

int tpuci_instance_selected(const tpuci_ctx_t *ctx, size_t i) {
  const tpuci__instance_t *in = tpuci__plan_instance(&ctx->plan, i);
  return in ? in->selected : 0;
}

/* Predicted shards: what the next run would assign, if the suite is the
 * one the latest run saw. For each selected shard instance, the tests of
 * its whole group (in .tpuci/collections.json when its key matches, as
 * the run splits them, else in .tpuci/runs/latest/summary.json) are
 * split again with .tpuci/timings.json. Returns a JSON object: instance
 * name -> {"tests": N, "predicted_s": S}; empty when nothing is known. */
static json_t *tpuci__plan_predictions(const tpuci_ctx_t *ctx) {
  json_t *out = json_object(), *summary = NULL, *ji;
  tpuci__timings_t timings;
  tpuci__collections_t records;
  tpuci__err_t e = {0, NULL};
  size_t i, k;

  tpuci__timings_init(&timings);
  tpuci__collections_init(&records);
  if (tpuci__collections_load(&records, ".tpuci/collections.json", &e) != 0)
    tpuci__err_clear(&e); /* the run says so; here the summary's tests serve */
  if ((tpuci__read_summary(".tpuci", "latest", &summary, &e) != 0 && records.len == 0) ||
      tpuci__timings_load(&timings, ".tpuci/timings.json", &e) != 0) {
    tpuci__err_clear(&e);
    if (summary) json_decref(summary);
    tpuci__timings_free(&timings);
    tpuci__collections_free(&records);
    return out;
  }
  tpuci__err_clear(&e);
  for (i = 0; i < ctx->plan.ninstances; i++) {
    const tpuci__instance_t *inst = &ctx->plan.instances[i];
    const tpuci__collection_t *rec;
    tpuci__strv_t ids = {0};
    tpuci__shard_plan_t sp;
    tpuci__shard_ask_t ask;
    char *group, *key;
    if (!inst->selected || inst->shards <= 1) continue;
    memset(&ask, 0, sizeof(ask));
    group = tpuci__pytest_group_name(inst);
    key = tpuci__collection_key(&ctx->plan, inst);
    rec = tpuci__collection_get(&records, group, key);
    free(key);
    if (rec != NULL) tpuci__strv_copy(&ids, &rec->ids);
    json_array_foreach(rec == NULL ? json_object_get(summary, "instances") : NULL, k, ji) {
      const char *name = json_string_value(json_object_get(ji, "name"));
      tpuci__instance_t probe;
      json_t *jt;
      size_t t;
      char *g2;
      if (name == NULL) continue;
      memset(&probe, 0, sizeof(probe));
      probe.name = (char *) name;
      g2 = tpuci__pytest_group_name(&probe);
      if (strcmp(g2, group) == 0) json_array_foreach(json_object_get(ji, "tests"), t, jt) {
          const char *id = json_string_value(json_object_get(jt, "id"));
          if (id) tpuci__strv_push(&ids, id);
        }
      free(g2);
    }
    free(group);
    /* A job that records splits by its traced durations (timings.h). */
    ask.ids = (const char *const *) ids.items;
    ask.n = ids.len;
    ask.timings = &timings;
    ask.shards = (size_t) inst->shards;
    ask.by = tpuci__pytest_of(inst)->shard_by;
    ask.traced = tpuci__pytest_of(inst)->select_affected;
    if (ids.len > 0 &&
        tpuci__shard_plan_ask_retry(&ask, tpuci__shard_retry_s(inst, rec ? rec->overhead_s : -1),
                                    &sp, &e) == 0) {
      const tpuci__shard_t *sh = &sp.shards[inst->shard - 1];
      json_t *o = json_object();
      json_object_set_new(o, "tests", json_integer((json_int_t) sh->ids.len));
      json_object_set_new(o, "predicted_s", json_real(sh->predicted_s));
      json_object_set_new(out, inst->name, o);
      tpuci__shard_plan_free(&sp);
    }
    tpuci__err_clear(&e);
    tpuci__strv_free(&ids);
  }
  if (summary) json_decref(summary);
  tpuci__timings_free(&timings);
  tpuci__collections_free(&records);
  return out;
}

/* Adds a shard's predicted tests and time to its instance's "pytest". */
static void tpuci__add_prediction(void *ud, const tpuci__instance_t *inst, json_t *o) {
  json_t *p = json_object_get((json_t *) ud, inst->name);
  if (p && json_is_object(json_object_get(o, "pytest")))
    json_object_update(json_object_get(o, "pytest"), p);
}

int tpuci_plan_json(const tpuci_ctx_t *ctx, char **out, size_t *len) {
  json_t *pred;

  if (!ctx->loaded) return TPUCI_ESTATE;
  pred = tpuci__plan_predictions(ctx);
  *out = tpuci__plan_to_json_x(&ctx->plan,
                               json_object_size(pred) > 0 ? tpuci__add_prediction : NULL, pred);
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
    if (!inst->selected || inst->shards <= 1) continue;
    if (!any) {
      tpuci__buf_adds(&b, "\nshards (split by recorded durations: the last run's collection, "
                          "or one in the job's image when the run starts):\n");
      any = 1;
    }
    name = inst->name;
    o = json_object_get(pred, name);
    if (o)
      tpuci__buf_addf(&b, "  %s: %lld tests, predicted %.1fs (from the latest run's tests)\n", name,
                      (long long) json_integer_value(json_object_get(o, "tests")),
                      json_real_value(json_object_get(o, "predicted_s")));
    else
      tpuci__buf_addf(&b, "  %s: shard %d of %d, no recorded run to predict from\n", name,
                      inst->shard, inst->shards);
  }
  json_decref(pred);
  *out = tpuci__buf_steal(&b);
  if (len) *len = strlen(*out);
  return 0;
}
