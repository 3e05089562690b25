/* The flake probe (docs/cli.md, `tpuci run --repeat N --test ID`): the
 * chosen node ids of the selected pytest instances, each selected
 * instance made N instances of the plan (so the scheduler runs them side
 * by side, as slots allow), and each test's failure rate over them with a
 * 95% Wilson score interval. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/ctx.h"
#include "kind/pytest/pytest_run.h"

#define TPUCI__REPEAT_MAX 1000

int tpuci_plan_tests(tpuci_ctx_t *ctx, const char *const *ids, size_t n) {
  tpuci__err_t e = {0, NULL};
  size_t i, k;
  int count = 0;
  if (ctx == NULL || (n > 0 && ids == NULL)) return TPUCI_EUSAGE;
  if (!ctx->loaded) {
    tpuci__err_set(&e, TPUCI_ESTATE, "no spec loaded");
    return tpuci__fail(ctx, &e);
  }
  for (k = 0; k < n; k++)
    if (ids[k] == NULL || *ids[k] == '\0') {
      tpuci__err_set(&e, TPUCI_EUSAGE, "--test needs a pytest node id");
      return tpuci__fail(ctx, &e);
    }
  if (n == 0) return 0;
  tpuci__preselect_free(ctx);
  ctx->preselect = tpuci__calloc(ctx->plan.ninstances + 1, sizeof(*ctx->preselect));
  for (i = 0; i < ctx->plan.ninstances; i++) {
    tpuci__instance_t *inst = &ctx->plan.instances[i];
    if (!inst->selected || tpuci__pytest_of(inst) == NULL) continue;
    /* The chosen tests run once per instance, not once per shard. */
    if (inst->shards > 1 && inst->shard > 1) {
      inst->selected = 0;
      continue;
    }
    ctx->preselect[i] = tpuci__calloc(1, sizeof(*ctx->preselect[i]));
    for (k = 0; k < n; k++) tpuci__strv_push(ctx->preselect[i], ids[k]);
    count++;
  }
  if (count == 0) {
    tpuci__preselect_free(ctx);
    tpuci__err_set(&e, TPUCI_ENOMATCH, "%s: --test: no pytest job instance is selected",
                   ctx->plan.spec_path);
    return tpuci__fail(ctx, &e);
  }
  ctx->preselect_tests = 1;
  return count;
}

/* A list without the entries named `drop` (NULL-terminated). */
static void tpuci__kv_without(tpuci__kvlist_t *l, const char *const *drop) {
  tpuci__kvlist_t keep = {0};
  size_t i, k;
  for (i = 0; i < l->len; i++) {
    for (k = 0; drop[k] && strcmp(drop[k], l->items[i].key) != 0; k++) continue;
    if (drop[k] == NULL) tpuci__kv_set(&keep, l->items[i].key, l->items[i].value);
  }
  tpuci__kv_free(l);
  *l = keep;
}

/* Repetition k (0-based) of n of instance `src`: unsharded, one attempt,
 * named "NAME[...,rep=K/N]" (K 1-based), with TPUCI_REPEAT_INDEX=k and
 * TPUCI_REPEAT_COUNT=n in its environment. */
static void tpuci__repetition(tpuci__instance_t *dst, const tpuci__instance_t *src, size_t at,
                              int k, int n) {
  static const char *const shard_matrix[] = {"shard", NULL};
  static const char *const shard_env[] = {"TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX", NULL};
  char num[64], *base;
  size_t len;
  tpuci__instance_copy(dst, src);
  free(dst->name);
  base = src->shards > 1 ? tpuci__pytest_group_name(src) : tpuci__strdup(src->name);
  len = strlen(base);
  snprintf(num, sizeof(num), "%d/%d", k + 1, n);
  if (len > 0 && base[len - 1] == ']')
    dst->name = tpuci__printf("%.*s,rep=%s]", (int) (len - 1), base, num);
  else dst->name = tpuci__printf("%s[rep=%s]", base, num);
  free(base);
  if (dst->shards > 1) {
    dst->shards = 1;
    dst->shard = 0;
    tpuci__kv_without(&dst->matrix, shard_matrix);
    tpuci__kv_without(&dst->env, shard_env);
  }
  tpuci__kv_set(&dst->matrix, "rep", num);
  snprintf(num, sizeof(num), "%d", k);
  tpuci__kv_set(&dst->env, "TPUCI_REPEAT_INDEX", num);
  snprintf(num, sizeof(num), "%d", n);
  tpuci__kv_set(&dst->env, "TPUCI_REPEAT_COUNT", num);
  /* A probe counts every repetition's result: no retry hides one. */
  dst->retry.attempts = 1;
  dst->repeat = k + 1;
  dst->repeat_of = at;
  dst->selected = 1;
}

int tpuci_plan_repeat(tpuci_ctx_t *ctx, int n) {
  tpuci__err_t e = {0, NULL};
  size_t i, m, nsel = 0;
  int k;
  if (ctx == NULL) return TPUCI_EUSAGE;
  if (!ctx->loaded) {
    tpuci__err_set(&e, TPUCI_ESTATE, "no spec loaded");
    return tpuci__fail(ctx, &e);
  }
  if (n < 1 || n > TPUCI__REPEAT_MAX) {
    tpuci__err_set(&e, TPUCI_EUSAGE, "--repeat needs a number from 1 to %d", TPUCI__REPEAT_MAX);
    return tpuci__fail(ctx, &e);
  }
  m = ctx->plan.ninstances;
  for (i = 0; i < m; i++) {
    const tpuci__instance_t *inst = &ctx->plan.instances[i];
    if (!inst->selected || inst->repeat) continue;
    /* A sharded job repeats as a whole, once per repetition. */
    if (inst->shards > 1 && inst->shard > 1) continue;
    nsel++;
  }
  if (nsel * (size_t) n > 10000) {
    tpuci__err_set(&e, TPUCI_EUSAGE, "--repeat %d of %zu instances makes %zu, at most 10000", n,
                   nsel, nsel * (size_t) n);
    return tpuci__fail(ctx, &e);
  }
  if (ctx->preselect)
    ctx->preselect =
        tpuci__realloc(ctx->preselect, (m + nsel * (size_t) n + 1) * sizeof(*ctx->preselect));
  for (i = 0; i < m; i++) {
    tpuci__instance_t *inst = &ctx->plan.instances[i];
    int sharded_rest = inst->shards > 1 && inst->shard > 1;
    if (!inst->selected || inst->repeat) continue;
    inst->selected = 0;
    if (sharded_rest) continue;
    for (k = 0; k < n; k++) {
      size_t at = ctx->plan.ninstances;
      tpuci__instance_t *dst = tpuci__plan_add_instance(&ctx->plan);
      /* add_instance may move the array: the source is read again. */
      tpuci__repetition(dst, &ctx->plan.instances[i], i, k, n);
      if (ctx->preselect) {
        ctx->preselect[at] = NULL;
        if (ctx->preselect[i]) {
          ctx->preselect[at] = tpuci__calloc(1, sizeof(*ctx->preselect[at]));
          tpuci__strv_copy(ctx->preselect[at], ctx->preselect[i]);
        }
      }
    }
  }
  if (ctx->preselect) ctx->preselect[ctx->plan.ninstances] = NULL;
  ctx->repeat = n;
  return (int) (nsel * (size_t) n);
}

/* ------------------------------------------------------------------ */
/* Failure rates                                                       */

void tpuci__wilson(size_t fails, size_t runs, double *low, double *high) {
  const double z = 1.959963984540054; /* the 97.5th percentile of N(0, 1) */
  double p, nn, denom, centre, half;
  if (runs == 0) {
    *low = 0;
    *high = 1;
    return;
  }
  nn = (double) runs;
  p = (double) fails / nn;
  denom = 1 + z * z / nn;
  centre = (p + z * z / (2 * nn)) / denom;
  half = z * sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / denom;
  *low = centre - half < 0 ? 0 : centre - half;
  *high = centre + half > 1 ? 1 : centre + half;
}

typedef struct {
  size_t of;      /* the instance repeated */
  const char *id; /* the test, or NULL: the instance itself */
  size_t runs, fails;
} tpuci__rate_t;

/* Every (instance repeated, test) with its repetitions that ran it and
 * those that failed it; for an instance without tests, its repetitions.
 * A new array of *n. */
static tpuci__rate_t *tpuci__rates(const tpuci__run_t *run, size_t *n) {
  tpuci__rate_t *r = NULL;
  size_t cap = 0, i, k, j;
  *n = 0;
  for (i = 0; i < run->nresults; i++) {
    const tpuci__instance_t *inst = &run->plan.instances[i];
    const tpuci__instance_result_t *res = &run->results[i];
    size_t ntests = tpuci__res_history(res) ? tpuci__res_history(res)->len : 0;
    if (!inst->selected || inst->repeat == 0 || res->outcome == TPUCI_OUTCOME_NONE) continue;
    for (k = 0; k < (ntests ? ntests : 1); k++) {
      const char *id = ntests ? tpuci__res_history(res)->tests[k].id : NULL;
      const tpuci__test_t *fin =
          ntests ? tpuci__history_final(&tpuci__res_history(res)->tests[k]) : NULL;
      int failing;
      if (ntests) {
        if (fin != NULL && (fin->outcome == TPUCI_TEST_SKIPPED || fin->outcome == TPUCI_TEST_XFAIL))
          continue;
        failing = fin == NULL || tpuci__test_outcome_failing(fin->outcome);
      } else {
        if (res->outcome == TPUCI_OUTCOME_CANCELLED) continue;
        failing = res->outcome != TPUCI_OUTCOME_PASSED;
      }
      for (j = 0; j < *n; j++)
        if (r[j].of == inst->repeat_of &&
            (id ? r[j].id && strcmp(r[j].id, id) == 0 : r[j].id == NULL))
          break;
      if (j == *n) {
        if (*n == cap) {
          cap = cap ? 2 * cap : 16;
          r = tpuci__realloc(r, cap * sizeof(*r));
        }
        r[j].of = inst->repeat_of;
        r[j].id = id;
        r[j].runs = r[j].fails = 0;
        (*n)++;
      }
      r[j].runs++;
      r[j].fails += (size_t) failing;
    }
  }
  return r;
}

/* The name of the instance that was repeated: its repetitions' without
 * ",rep=K/N". */
static char *tpuci__repeated_name(const tpuci__run_t *run, size_t of) {
  size_t i;
  for (i = 0; i < run->plan.ninstances; i++) {
    const tpuci__instance_t *inst = &run->plan.instances[i];
    const char *p;
    if (inst->repeat == 0 || inst->repeat_of != of) continue;
    p = strstr(inst->name, "rep=");
    if (p == NULL) break;
    if (p[-1] == ',') return tpuci__printf("%.*s]", (int) (p - 1 - inst->name), inst->name);
    return tpuci__printf("%.*s", (int) (p - 1 - inst->name), inst->name);
  }
  return tpuci__strdup(run->plan.instances[of].name);
}

void tpuci__probe_report(tpuci__run_t *run) {
  tpuci__rate_t *r;
  json_t *o, *a;
  size_t n, k;
  if (run->repeat == 0 || run->report == NULL) return;
  r = tpuci__rates(run, &n);
  o = json_object();
  a = json_array();
  json_object_set_new(o, "count", json_integer(run->repeat));
  for (k = 0; k < n; k++) {
    json_t *t = json_object();
    double low, high;
    char *name = tpuci__repeated_name(run, r[k].of);
    tpuci__wilson(r[k].fails, r[k].runs, &low, &high);
    json_object_set_new(t, "instance", json_string(name));
    json_object_set_new(t, "id", r[k].id ? json_string(r[k].id) : json_null());
    json_object_set_new(t, "runs", json_integer((json_int_t) r[k].runs));
    json_object_set_new(t, "failures", json_integer((json_int_t) r[k].fails));
    json_object_set_new(t, "rate",
                        json_real(r[k].runs ? (double) r[k].fails / (double) r[k].runs : 0));
    json_object_set_new(t, "low", json_real(low));
    json_object_set_new(t, "high", json_real(high));
    json_array_append_new(a, t);
    free(name);
  }
  json_object_set_new(o, "tests", a);
  json_object_set_new(run->report, "repeat", o);
  free(r);
}

int tpuci_repeat_report(const tpuci_run_t *run, char **out) {
  const json_t *rep, *t;
  tpuci__buf_t b;
  size_t k, width = 4;
  int n;
  if (run == NULL || out == NULL) return TPUCI_EUSAGE;
  *out = NULL;
  rep = run->report ? json_object_get(run->report, "repeat") : NULL;
  if (!json_is_object(rep)) return TPUCI_ESTATE;
  json_array_foreach(json_object_get(rep, "tests"), k, t) {
    const char *id = json_string_value(json_object_get(t, "id"));
    size_t w = strlen(id ? id : json_string_value(json_object_get(t, "instance")));
    if (w > width) width = w;
  }
  if (width > 80) width = 80;
  tpuci__buf_init(&b);
  n = (int) json_integer_value(json_object_get(rep, "count"));
  tpuci__buf_addf(&b,
                  "flake probe: %d repetition%s; failure rate with its 95%% interval "
                  "(Wilson score)\n",
                  n, n == 1 ? "" : "s");
  json_array_foreach(json_object_get(rep, "tests"), k, t) {
    const char *id = json_string_value(json_object_get(t, "id"));
    const char *inst = json_string_value(json_object_get(t, "instance"));
    tpuci__buf_addf(
        &b, "  %-*s  %3d/%-3d failed  rate %.2f  95%% interval [%.3f, %.3f]  [%s]\n", (int) width,
        id ? id : inst, (int) json_integer_value(json_object_get(t, "failures")),
        (int) json_integer_value(json_object_get(t, "runs")),
        json_real_value(json_object_get(t, "rate")), json_real_value(json_object_get(t, "low")),
        json_real_value(json_object_get(t, "high")), inst);
  }
  *out = tpuci__buf_steal(&b);
  return 0;
}
