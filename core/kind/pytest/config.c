/* A pytest instance's record as the plan holds it (config.h): freed,
 * copied and shown in `tpuci plan --json` through the operations the
 * plan calls (plan.h's tpuci__kind_config_t). */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kind/pytest/config.h"

const tpuci__pytest_t *tpuci__pytest_of(const tpuci__instance_t *inst) {
  return inst->kind == &tpuci__pytest_config ? inst->kind_config : NULL;
}

static void tpuci__pytest_free(void *config) {
  tpuci__pytest_t *py = config;
  if (py == NULL) return;
  free(py->markers);
  free(py->k);
  free(py->setup);
  tpuci__strv_free(&py->select_always);
  tpuci__strv_free(&py->select_ignore);
  free(py);
}

static void *tpuci__pytest_copy(const void *config) {
  const tpuci__pytest_t *src = config;
  tpuci__pytest_t *dst;
  if (src == NULL) return NULL;
  dst = tpuci__malloc(sizeof(*dst));
  *dst = *src;
  dst->markers = tpuci__strdup(src->markers);
  dst->k = tpuci__strdup(src->k);
  dst->setup = tpuci__strdup(src->setup);
  memset(&dst->select_always, 0, sizeof(dst->select_always));
  tpuci__strv_copy(&dst->select_always, &src->select_always);
  memset(&dst->select_ignore, 0, sizeof(dst->select_ignore));
  tpuci__strv_copy(&dst->select_ignore, &src->select_ignore);
  return dst;
}

/* A string or null. */
static json_t *tpuci__py_str(const char *s) { return s ? json_string(s) : json_null(); }

/* A list of strings as a JSON array. */
static json_t *tpuci__py_strv(const tpuci__strv_t *v) {
  json_t *a = json_array();
  size_t i;
  for (i = 0; i < v->len; i++) json_array_append_new(a, json_string(v->items[i]));
  return a;
}

static const char *tpuci__shard_by_name(tpuci__shard_by_t by) {
  switch (by) {
    case TPUCI__SHARD_BY_TEST: return "test";
    case TPUCI__SHARD_BY_CLASS: return "class";
    default: return "file";
  }
}

/* The instance's "pytest" object: its record, and its shards. Keys
 * given only when set are left out otherwise, so that plans without
 * them read as before. */
static json_t *tpuci__pytest_json(const tpuci__instance_t *in) {
  const tpuci__pytest_t *py = tpuci__pytest_of(in);
  json_t *o = json_object();
  json_object_set_new(o, "markers", tpuci__py_str(py->markers));
  json_object_set_new(o, "k", tpuci__py_str(py->k));
  json_object_set_new(o, "shards", json_integer(in->shards));
  json_object_set_new(o, "shard", json_integer(in->shard));
  json_object_set_new(o, "shard_by", json_string(tpuci__shard_by_name(py->shard_by)));
  json_object_set_new(o, "allow_empty", json_boolean(py->allow_empty));
  json_object_set_new(o, "retry_steady", json_boolean(py->retry_steady));
  json_object_set_new(
      o, "failed_first",
      py->failed_first_steady ? json_string("always") : json_boolean(py->failed_first));
  json_object_set_new(o, "test_timeout_ms", json_integer((json_int_t) py->test_timeout_ms));
  json_object_set_new(o, "select", json_string(py->select_affected ? "affected" : "all"));
  if (py->new_tests_runs > 1)
    json_object_set_new(o, "new_tests_runs", json_integer(py->new_tests_runs));
  if (py->select_always.len > 0)
    json_object_set_new(o, "select_always", tpuci__py_strv(&py->select_always));
  if (py->select_ignore.len > 0)
    json_object_set_new(o, "select_ignore", tpuci__py_strv(&py->select_ignore));
  if (py->select_audit > 0) json_object_set_new(o, "select_audit", json_real(py->select_audit));
  return o;
}

const tpuci__kind_config_t tpuci__pytest_config = {
    .name = "pytest",
    .free = tpuci__pytest_free,
    .copy = tpuci__pytest_copy,
    .json = tpuci__pytest_json,
    /* retries.rerun: the failed tests again, or only the unfinished */
    .partial_retries = 1,
    /* every pytest process checks before its first test */
    .devices_when = "per process",
};
