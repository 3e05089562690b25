/* Past runs: a summary.json read back, and what `rerun --failed` runs
 * again. */
#include <stdlib.h>
#include <string.h>

#include "api/ctx.h"
#include "kind/pytest/config.h"
#include "kind/pytest/flaky.h"
#include "kind/pytest/select_stats.h"
#include "report/report.h"

/* ------------------------------------------------------------------ */
/* Past runs                                                           */

/* "state_dir/runs/<id>/summary.json", as messages name it. */
static char *tpuci__summary_path(const char *state_dir, const char *run_id) {
  if (run_id == NULL || *run_id == '\0') run_id = "latest";
  return tpuci__printf("%s/runs/%s/summary.json", state_dir ? state_dir : ".tpuci", run_id);
}

int tpuci__read_summary_file(const char *path, const char *hint, json_t **out, tpuci__err_t *err) {
  char *text;
  json_error_t je;
  size_t len;
  int r;

  *out = NULL;
  r = tpuci__read_file(path, &text, &len);
  if (r != 0)
    return tpuci__err_set(err, r, "%s: %s%s", path, uv_strerror(r),
                          r == UV_ENOENT && hint ? hint : "");
  *out = json_loadb(text, len, 0, &je);
  free(text);
  if (*out == NULL || !json_is_array(json_object_get(*out, "instances"))) {
    r = tpuci__err_set(err, TPUCI_EIO, "%s:%d: not a tpuci summary: %s", path, je.line,
                       *out ? "no instances" : je.text);
    if (*out) json_decref(*out);
    *out = NULL;
    return r;
  }
  return 0;
}

/* Reads state_dir/runs/<id>/summary.json. */
int tpuci__read_summary(const char *state_dir, const char *run_id, json_t **out,
                        tpuci__err_t *err) {
  char *path;
  int r;

  if (run_id == NULL || *run_id == '\0') run_id = "latest";
  if (strchr(run_id, '/') != NULL)
    return tpuci__err_set(err, TPUCI_EUSAGE, "'%s' is not a run id", run_id);
  path = tpuci__summary_path(state_dir, run_id);
  r = tpuci__read_summary_file(path, " (no such run; `ls .tpuci/runs` lists them)", out, err);
  free(path);
  return r;
}

static const char *tpuci__jstr(json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

static int tpuci__jint(json_t *o, const char *key, int dflt) {
  json_t *v = json_object_get(o, key);
  return json_is_integer(v) ? (int) json_integer_value(v) : dflt;
}

int tpuci_load_run(tpuci_ctx_t *ctx, const char *state_dir, const char *run_id, tpuci_run_t **out) {
  tpuci__err_t e = {0, NULL};
  tpuci__run_t *run;
  json_t *root;
  int r;

  if (out != NULL) *out = NULL;
  if (ctx == NULL || out == NULL) return TPUCI_EUSAGE;
  r = tpuci__read_summary(state_dir, run_id, &root, &e);
  if (r != 0) return tpuci__fail(ctx, &e);
  run = tpuci__run_new(ctx);
  tpuci__load_record(run, root);
  /* The run's own folder, not `latest`, which the next run moves. */
  run->summary_path = tpuci__printf("%s/runs/%s/summary.json", state_dir ? state_dir : ".tpuci",
                                    run_id && *run_id           ? run_id
                                    : run->rd.id && *run->rd.id ? run->rd.id
                                                                : "latest");
  *out = run;
  return 0;
}

void tpuci__load_record(tpuci__run_t *run, json_t *root) {
  json_t *insts, *ji, *ja;
  size_t i, k;

  run->plan.spec_path = tpuci__strdup(tpuci__jstr(root, "spec"));
  insts = json_object_get(root, "instances");
  run->nresults = json_array_size(insts);
  run->results = tpuci__calloc(run->nresults ? run->nresults : 1, sizeof(*run->results));
  json_array_foreach(insts, i, ji) {
    tpuci__instance_t *inst = tpuci__plan_add_instance(&run->plan);
    tpuci__instance_result_t *res = &run->results[i];
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
  run->rd.id = tpuci__strdup(tpuci__jstr(root, "run_id"));
  run->rd.dir = tpuci__strdup(tpuci__jstr(root, "run_dir"));
  run->exit_code = tpuci__jint(root, "exit_code", 1);
  run->verdict = tpuci__report_verdict_code(tpuci__jstr(root, "verdict"));
  if (run->verdict < 0) run->verdict = run->exit_code;
  json_array_foreach(json_object_get(root, "write_errors"), k, ja) {
    tpuci__strv_push(&run->write_paths, tpuci__jstr(ja, "path"));
    tpuci__strv_push(&run->write_errors, tpuci__jstr(ja, "error"));
  }
  run->duration_ms = (uint64_t) json_integer_value(json_object_get(root, "duration_ms"));
  run->jobs = tpuci__jint(root, "jobs", 1);
  run->report = root;
  run->ran = 1;
  tpuci__err_clear(&run->ctx->err);
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
        strcmp(key, "order-dependent") == 0 || strcmp(key, "cached") == 0 ||
        strcmp(key, "total") == 0)
      continue;
    if (json_is_integer(v) && json_integer_value(v) > 0) n += (long) json_integer_value(v);
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
    /* A cached pass is a pass (docs/cache.md). */
    if (strcmp(o, "passed") == 0 || strcmp(o, "cached") == 0) continue;
    if (strcmp(o, "flaky") == 0 || strcmp(o, "order-dependent") == 0) {
      flaky++;
      continue;
    }
    unpassed++;
    name = json_string_value(json_object_get(ji, "name"));
    if (name == NULL || *name == '\0') {
      r = tpuci__err_set(e, TPUCI_EIO,
                         "%s: instance record %zu (%s) has no "
                         "name, so what to run again is unknown (a damaged "
                         "summary; run the spec with `tpuci run`)",
                         path, k + 1, *o ? o : "no outcome");
      goto done;
    }
    key.name = (char *) name;
    hit = bsearch(&keyp, byname, ctx->plan.ninstances, sizeof(*byname), tpuci__cmp_inst_name);
    if (hit == NULL) {
      r = tpuci__err_set(e, TPUCI_ENOMATCH,
                         "%s: instance '%s' did not pass "
                         "(%s), but %s has no instance of that name (renamed?); "
                         "run the spec with `tpuci run`",
                         path, name, *o ? o : "no outcome", ctx->plan.spec_path);
      goto done;
    }
    pick[*hit - ctx->plan.instances] = 1;
  }
  counted = tpuci__summary_unpassed_count(root);
  if (counted > unpassed) {
    r = tpuci__err_set(e, TPUCI_EIO,
                       "%s: its counts say %ld instance%s did not "
                       "pass, but %d instance record%s say%s which (a damaged "
                       "summary; run the spec with `tpuci run`)",
                       path, counted, counted == 1 ? "" : "s", unpassed, unpassed == 1 ? "" : "s",
                       unpassed == 1 ? "s" : "");
    goto done;
  }
  exit_code = tpuci__jint(root, "exit_code", 0);
  if (unpassed == 0 && exit_code != 0 && exit_code != 130) {
    if (flaky > 0)
      r = tpuci__err_set(e, TPUCI_EIO,
                         "%s: the run failed (exit %d) with no "
                         "instance that did not pass: its %d flaky instance%s "
                         "failed it under --strict-flaky; run %s with `tpuci "
                         "run --only`",
                         path, exit_code, flaky, flaky == 1 ? "" : "s", flaky == 1 ? "it" : "them");
    else
      r = tpuci__err_set(e, TPUCI_EIO,
                         "%s: the run failed (exit %d) but no "
                         "instance record says which did not pass (a damaged "
                         "summary; run the spec with `tpuci run`)",
                         path, exit_code);
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
    hit = bsearch(&keyp, byname, ctx->plan.ninstances, sizeof(*byname), tpuci__cmp_inst_name);
    if (hit == NULL || !tpuci__pytest_of(*hit) || (*hit)->shards > 1) continue;
    at = (size_t) (*hit - ctx->plan.instances);
    if (ctx->preselect && ctx->preselect[at]) continue; /* A repeated record. */
    json_array_foreach(json_object_get(ji, "tests"), t, jt) {
      const char *to = tpuci__jstr(jt, "outcome");
      if (strcmp(to, "failed") != 0 && strcmp(to, "error") != 0 &&
          strcmp(to, TPUCI__TEST_NOT_RUN) != 0)
        continue;
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

int tpuci_plan_select_unpassed(tpuci_ctx_t *ctx, const char *state_dir, const char *run_id) {
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

int tpuci_flaky_report(tpuci_ctx_t *ctx, const char *state_dir, int runs, int json, char **out) {
  tpuci__err_t e = {0, NULL};
  char *path;
  int r;
  if (ctx == NULL || out == NULL || runs < 0) return TPUCI_EUSAGE;
  *out = NULL;
  path = tpuci__printf("%s/%s", state_dir ? state_dir : ".tpuci", TPUCI__FLAKY_FILE);
  r = tpuci__flaky_report(path, runs, json, out, &e);
  free(path);
  if (r != 0 && e.msg == NULL)
    tpuci__err_set(&e, r, "cannot read the history: %s", tpuci_strerror(r));
  return r != 0 ? tpuci__fail(ctx, &e) : 0;
}

int tpuci_select_stats(tpuci_ctx_t *ctx, const char *state_dir, int json, char **out) {
  tpuci__err_t e = {0, NULL};
  int r;
  if (ctx == NULL || out == NULL) return TPUCI_EUSAGE;
  r = tpuci__select_stats_report(state_dir ? state_dir : ".tpuci", json, out, &e);
  return r != 0 ? tpuci__fail(ctx, &e) : 0;
}

int tpuci_run_spec_path(tpuci_ctx_t *ctx, const char *state_dir, const char *run_id, char **out) {
  tpuci__err_t e = {0, NULL};
  json_t *root;
  int r;
  if (ctx == NULL || out == NULL) return TPUCI_EUSAGE;
  *out = NULL;
  r = tpuci__read_summary(state_dir, run_id, &root, &e);
  if (r != 0) return tpuci__fail(ctx, &e);
  *out = tpuci__strdup(tpuci__jstr(root, "spec"));
  json_decref(root);
  if (**out) return 0;
  free(*out);
  *out = NULL;
  tpuci__err_set(&e, TPUCI_ENOMATCH, "the run's summary names no spec");
  return tpuci__fail(ctx, &e);
}
