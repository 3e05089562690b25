/* .tpuci/timings.json: test durations between runs. */
#include "kind/pytest/timings.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void tpuci__timings_init(tpuci__timings_t *t) {
  memset(t, 0, sizeof(*t));
  tpuci__idmap_init(&t->map);
}

void tpuci__timings_free(tpuci__timings_t *t) {
  size_t i;
  for (i = 0; i < t->len; i++) free(t->items[i].id);
  free(t->items);
  tpuci__idmap_free(&t->map);
  memset(t, 0, sizeof(*t));
}

static tpuci__timing_t *tpuci__timings_slot(tpuci__timings_t *t, const char *id) {
  size_t k = tpuci__idmap_get(&t->map, id);
  tpuci__timing_t *e;
  if (k != TPUCI__IDMAP_NONE) return &t->items[k];
  if (t->len == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 64;
    t->items = tpuci__realloc(t->items, t->cap * sizeof(*t->items));
  }
  e = &t->items[t->len];
  memset(e, 0, sizeof(*e));
  e->id = tpuci__strdup(id);
  tpuci__idmap_put(&t->map, e->id, t->len);
  t->len++;
  return e;
}

static int tpuci__valid_seconds(double s) { return isfinite(s) && s >= 0 && s < 1e9; }

/* The moving average `avg` of `runs` durations, with one more. */
static void tpuci__timings_add(double *avg, unsigned *runs, double seconds) {
  *avg = *runs == 0 ? seconds : (1 - TPUCI__TIMINGS_ALPHA) * *avg + TPUCI__TIMINGS_ALPHA * seconds;
  if (*runs < 1000000u) (*runs)++;
}

static void tpuci__timings_record_as(tpuci__timings_t *t, const char *id, double seconds,
                                     int traced) {
  tpuci__timing_t *e;
  if (id == NULL || !tpuci__valid_seconds(seconds)) return;
  e = tpuci__timings_slot(t, id);
  if (traced) tpuci__timings_add(&e->traced_s, &e->traced_runs, seconds);
  else tpuci__timings_add(&e->avg_s, &e->runs, seconds);
  e->last_s = seconds;
}

void tpuci__timings_record(tpuci__timings_t *t, const char *id, double seconds) {
  tpuci__timings_record_as(t, id, seconds, 0);
}

size_t tpuci__timings_update(tpuci__timings_t *t, const tpuci__junit_t *j) {
  size_t i, n = 0;
  for (i = 0; i < j->len; i++) {
    if (j->items[i].outcome == TPUCI_TEST_ERROR) continue;
    tpuci__timings_record(t, j->items[i].id, j->items[i].time_s);
    n++;
  }
  return n;
}

size_t tpuci__timings_update_history(tpuci__timings_t *t, const tpuci__history_t *h) {
  size_t i, n = 0;
  for (i = 0; i < h->len; i++) {
    const tpuci__test_t *f = tpuci__history_final(&h->tests[i]);
    size_t k;
    if (f == NULL) continue;
    /* Failing first: an error counts, though its duration does not. */
    if (tpuci__test_outcome_failing(f->outcome)) tpuci__timings_slot(t, h->tests[i].id);
    k = tpuci__idmap_get(&t->map, h->tests[i].id);
    if (k != TPUCI__IDMAP_NONE) t->items[k].failed = tpuci__test_outcome_failing(f->outcome);
    if (f->outcome == TPUCI_TEST_ERROR) continue;
    tpuci__timings_record_as(t, h->tests[i].id, f->time_s, h->traced);
    n++;
  }
  return n;
}

size_t tpuci__timings_failed(const tpuci__timings_t *t, const tpuci__strv_t *among,
                             size_t max_bytes, tpuci__strv_t *out) {
  tpuci__idmap_t in;
  size_t i, n = 0, bytes = 0;
  tpuci__idmap_init(&in);
  for (i = 0; among != NULL && i < among->len; i++) tpuci__idmap_put(&in, among->items[i], i);
  for (i = 0; i < t->len; i++) {
    const tpuci__timing_t *e = &t->items[i];
    if (!e->failed) continue;
    if (among != NULL && tpuci__idmap_get(&in, e->id) == TPUCI__IDMAP_NONE) continue;
    bytes += strlen(e->id) + 1;
    if (bytes > max_bytes) break;
    tpuci__strv_push(out, e->id);
    n++;
  }
  tpuci__idmap_free(&in);
  return n;
}

int tpuci__timings_get(const tpuci__timings_t *t, const char *id, double *seconds) {
  size_t k = tpuci__idmap_get(&t->map, id);
  if (k == TPUCI__IDMAP_NONE || t->items[k].runs == 0) return 0;
  if (seconds) *seconds = t->items[k].avg_s;
  return 1;
}

int tpuci__timings_get_traced(const tpuci__timings_t *t, const char *id, double *seconds) {
  size_t k = tpuci__idmap_get(&t->map, id);
  if (k == TPUCI__IDMAP_NONE || t->items[k].traced_runs == 0)
    return tpuci__timings_get(t, id, seconds);
  if (seconds) *seconds = t->items[k].traced_s;
  return 1;
}

/* ------------------------------------------------------------------ */
/* Loading and saving                                                  */

static int tpuci__json_seconds(json_t *v, double *out) {
  if (!json_is_number(v)) return -1;
  *out = json_number_value(v);
  return tpuci__valid_seconds(*out) ? 0 : -1;
}

int tpuci__timings_load_string(tpuci__timings_t *t, const char *data, size_t len, const char *name,
                               tpuci__err_t *err) {
  json_error_t jerr;
  json_t *root, *tests, *v;
  const char *key;
  tpuci__timings_t tmp;
  int flat, r = 0;
  size_t i;

  if (len > TPUCI__TIMINGS_MAX_BYTES)
    return tpuci__err_set(err, TPUCI_EIO, "%s: %zu bytes, over the limit of %zu", name, len,
                          TPUCI__TIMINGS_MAX_BYTES);
  root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
  if (root == NULL)
    return tpuci__err_set(err, TPUCI_EIO, "%s:%d:%d: %s", name, jerr.line, jerr.column, jerr.text);
  if (!json_is_object(root)) {
    json_decref(root);
    return tpuci__err_set(err, TPUCI_EIO, "%s: not a JSON object", name);
  }
  tests = json_object_get(root, "tests");
  flat = tests == NULL && json_object_get(root, "version") == NULL;
  if (flat) {
    tests = root; /* {"node id": seconds} */
  } else {
    json_t *ver = json_object_get(root, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1) {
      json_decref(root);
      return tpuci__err_set(err, TPUCI_EIO, "%s: \"version\" must be 1", name);
    }
    if (!json_is_object(tests)) {
      json_decref(root);
      return tpuci__err_set(err, TPUCI_EIO, "%s: \"tests\" must be an object", name);
    }
  }

  /* Validate everything first so a bad file changes nothing. */
  tpuci__timings_init(&tmp);
  json_object_foreach(tests, key, v) {
    tpuci__timing_t *e;
    double last = 0, avg = 0, traced = 0;
    json_int_t runs = 1, traced_runs = 0;
    int failed = 0;

    if (flat) {
      if (tpuci__json_seconds(v, &last) != 0) goto bad;
      avg = last;
    } else {
      json_t *jl = json_object_get(v, "last"), *ja = json_object_get(v, "avg");
      json_t *jr = json_object_get(v, "runs");
      if (!json_is_object(v) || tpuci__json_seconds(jl, &last) != 0) goto bad;
      if (ja == NULL) avg = last;
      else if (tpuci__json_seconds(ja, &avg) != 0) goto bad;
      if (jr != NULL) {
        if (!json_is_integer(jr) || json_integer_value(jr) < 0) goto bad;
        runs = json_integer_value(jr);
      }
      failed = json_is_true(json_object_get(v, "failed"));
      jr = json_object_get(v, "traced_runs");
      if (jr != NULL) {
        if (!json_is_integer(jr) || json_integer_value(jr) < 0 ||
            tpuci__json_seconds(json_object_get(v, "traced"), &traced) != 0)
          goto bad;
        traced_runs = json_integer_value(jr);
      }
    }
    e = tpuci__timings_slot(&tmp, key);
    e->last_s = last;
    e->avg_s = avg;
    e->runs = runs > 1000000 ? 1000000u : (unsigned) runs;
    e->failed = failed;
    e->traced_s = traced;
    e->traced_runs = traced_runs > 1000000 ? 1000000u : (unsigned) traced_runs;
    continue;
  bad:
    r = tpuci__err_set(
        err, TPUCI_EIO,
        flat ? "%s: \"%.200s\": a duration must be a non-negative number"
             : "%s: tests[\"%.200s\"]: needs \"last\" (and \"avg\", \"traced\") as "
               "non-negative numbers of seconds and \"runs\" (and \"traced_runs\") as "
               "non-negative integers",
        name, key);
    break;
  }
  json_decref(root);
  if (r == 0) {
    for (i = 0; i < tmp.len; i++) {
      tpuci__timing_t *e = tpuci__timings_slot(t, tmp.items[i].id);
      e->last_s = tmp.items[i].last_s;
      e->avg_s = tmp.items[i].avg_s;
      e->runs = tmp.items[i].runs;
      e->failed = tmp.items[i].failed;
      e->traced_s = tmp.items[i].traced_s;
      e->traced_runs = tmp.items[i].traced_runs;
    }
  }
  tpuci__timings_free(&tmp);
  return r;
}

int tpuci__timings_load(tpuci__timings_t *t, const char *path, tpuci__err_t *err) {
  char *data;
  size_t len;
  int r = tpuci__read_file(path, &data, &len);
  if (r == -ENOENT) return 0;
  if (r != 0) return tpuci__err_set(err, r, "%s: cannot read: %s", path, tpuci_strerror(r));
  r = tpuci__timings_load_string(t, data, len, path, err);
  free(data);
  return r;
}

/* Rounded to 0.1 ms so the file stays readable and diffs stay small. */
static json_t *tpuci__json_secs(double s) { return json_real(round(s * 1e4) / 1e4); }

char *tpuci__timings_dump(const tpuci__timings_t *t) {
  json_t *root = json_object(), *tests = json_object();
  char *s, *out;
  size_t i;

  json_object_set_new(root, "version", json_integer(1));
  for (i = 0; i < t->len; i++) {
    const tpuci__timing_t *e = &t->items[i];
    json_t *o = json_object();
    json_object_set_new(o, "last", tpuci__json_secs(e->last_s));
    json_object_set_new(o, "avg", tpuci__json_secs(e->avg_s));
    json_object_set_new(o, "runs", json_integer(e->runs));
    if (e->failed) json_object_set_new(o, "failed", json_true());
    if (e->traced_runs > 0) {
      json_object_set_new(o, "traced", tpuci__json_secs(e->traced_s));
      json_object_set_new(o, "traced_runs", json_integer(e->traced_runs));
    }
    json_object_set_new(tests, e->id, o);
  }
  json_object_set_new(root, "tests", tests);
  s = json_dumps(root, JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
  json_decref(root);
  if (s == NULL) return tpuci__strdup("{\"version\": 1, \"tests\": {}}\n");
  out = tpuci__printf("%s\n", s);
  free(s);
  return out;
}

int tpuci__timings_save(const tpuci__timings_t *t, const char *path, tpuci__err_t *err) {
  char *s = tpuci__timings_dump(t);
  int r = tpuci__write_file_atomic_p(path, s, strlen(s));
  free(s);
  if (r != 0) return tpuci__err_set(err, r, "%s: cannot write: %s", path, tpuci_strerror(r));
  return 0;
}
