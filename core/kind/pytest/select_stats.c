/* What each selecting run saved and what its audit found (select_stats.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <uv.h>

#include "kind/pytest/select_stats.h"

/* One file's size cap: far beyond TPUCI__SELECT_KEEP lines. */
#define TPUCI__SELECT_MAX ((size_t) 16 << 20)

/* The lines of the file (its complete ones), newest last. */
static void tpuci__select_lines(const char *text, size_t len, tpuci__strv_t *out) {
  const char *p = text, *end = text + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t) (end - p));
    if (nl == NULL) break;
    if (nl > p) tpuci__strv_take(out, tpuci__strndup(p, (size_t) (nl - p)));
    p = nl + 1;
  }
}

int tpuci__select_stats_append(const char *state_dir, const tpuci__select_line_t *lines, size_t n,
                               tpuci__err_t *err) {
  char *path = tpuci__printf("%s/%s", state_dir, TPUCI__SELECT_FILE), *text = NULL;
  tpuci__strv_t kept = {0};
  tpuci__buf_t b;
  size_t len = 0, i, from;
  int r = tpuci__read_file_max(path, TPUCI__SELECT_MAX, &text, &len);
  if (r == 0) tpuci__select_lines(text, len, &kept);
  free(text);
  for (i = 0; i < n; i++) {
    const tpuci__select_line_t *l = &lines[i];
    json_t *o = json_pack("{s:s,s:s,s:b,s:I,s:I,s:I,s:I,s:f,s:f}", "run", l->run, "instance",
                          l->instance, "all", l->all, "recorded", (json_int_t) l->recorded,
                          "left_out", (json_int_t) l->left_out, "audited", (json_int_t) l->audited,
                          "missed", (json_int_t) l->missed, "time_total_s", l->time_total_s,
                          "time_left_s", l->time_left_s);
    tpuci__strv_take(&kept, json_dumps(o, JSON_COMPACT));
    json_decref(o);
  }
  tpuci__buf_init(&b);
  from = kept.len > TPUCI__SELECT_KEEP ? kept.len - TPUCI__SELECT_KEEP : 0;
  for (i = from; i < kept.len; i++) tpuci__buf_addf(&b, "%s\n", kept.items[i]);
  r = tpuci__write_file_atomic_p(path, b.data ? b.data : "", b.len);
  if (r != 0) tpuci__err_set(err, r, "%s: %s", path, tpuci__strerror(r));
  tpuci__buf_free(&b);
  tpuci__strv_free(&kept);
  free(path);
  return r;
}

/* One instance's sums. */
typedef struct {
  char *name;
  size_t runs, selecting, recorded, left_out, audited, missed;
  double total_s, left_s;
} tpuci__select_sum_t;

static double tpuci__share(double part, double whole) { return whole > 0 ? part / whole : 0; }

static void tpuci__select_text(tpuci__buf_t *b, const tpuci__select_sum_t *s) {
  char *name = tpuci__safe(s->name, 0);
  tpuci__buf_addf(b,
                  "%s: %zu run%s (%zu selecting), %.1f%% of tests and %.1f%% of recorded "
                  "test time left out; ",
                  name, s->runs, s->runs == 1 ? "" : "s", s->selecting,
                  100 * tpuci__share((double) (s->left_out + s->audited), (double) s->recorded),
                  100 * tpuci__share(s->left_s, s->total_s));
  if (s->audited == 0)
    tpuci__buf_adds(b, "no test audited (select = { mode = \"affected\", audit = 0.05 })\n");
  else
    tpuci__buf_addf(b, "%zu audited, %zu missed (miss rate %.2f%%)\n", s->audited, s->missed,
                    100 * tpuci__share((double) s->missed, (double) s->audited));
  free(name);
}

static json_t *tpuci__select_json(const tpuci__select_sum_t *s) {
  return json_pack("{s:s,s:I,s:I,s:f,s:f,s:I,s:I,s:f}", "instance", s->name, "runs",
                   (json_int_t) s->runs, "selecting", (json_int_t) s->selecting, "tests_left_out",
                   tpuci__share((double) (s->left_out + s->audited), (double) s->recorded),
                   "time_left_out", tpuci__share(s->left_s, s->total_s), "audited",
                   (json_int_t) s->audited, "missed", (json_int_t) s->missed, "miss_rate",
                   tpuci__share((double) s->missed, (double) s->audited));
}

int tpuci__select_stats_report(const char *state_dir, int json, char **out, tpuci__err_t *err) {
  char *path = tpuci__printf("%s/%s", state_dir, TPUCI__SELECT_FILE), *text = NULL;
  tpuci__strv_t lines = {0};
  tpuci__select_sum_t *sums = NULL;
  size_t len = 0, n = 0, i, k;
  int r = tpuci__read_file_max(path, TPUCI__SELECT_MAX, &text, &len);
  *out = NULL;
  if (r != 0) {
    r = r == UV_ENOENT ? TPUCI_ENOMATCH : r;
    tpuci__err_set(
        err, r, "%s: %s", path,
        r == TPUCI_ENOMATCH ? "no selecting run yet (select = \"affected\")" : tpuci__strerror(r));
    free(path);
    return r;
  }
  tpuci__select_lines(text, len, &lines);
  for (i = 0; i < lines.len; i++) {
    json_t *o = json_loads(lines.items[i], 0, NULL);
    const char *name = json_string_value(json_object_get(o, "instance"));
    tpuci__select_sum_t *s = NULL;
    if (name != NULL) {
      for (k = 0; k < n && strcmp(sums[k].name, name) != 0; k++) continue;
      if (k == n) {
        sums = tpuci__realloc(sums, (n + 1) * sizeof(*sums));
        memset(&sums[n], 0, sizeof(*sums));
        sums[n++].name = tpuci__strdup(name);
      }
      s = &sums[k];
      s->runs++;
      s->selecting += !json_is_true(json_object_get(o, "all"));
      s->recorded += (size_t) json_integer_value(json_object_get(o, "recorded"));
      s->left_out += (size_t) json_integer_value(json_object_get(o, "left_out"));
      s->audited += (size_t) json_integer_value(json_object_get(o, "audited"));
      s->missed += (size_t) json_integer_value(json_object_get(o, "missed"));
      s->total_s += json_number_value(json_object_get(o, "time_total_s"));
      s->left_s += json_number_value(json_object_get(o, "time_left_s"));
    }
    json_decref(o);
  }
  if (n == 0) {
    r = tpuci__err_set(err, TPUCI_ENOMATCH, "%s: no selecting run yet", path);
  } else if (json) {
    json_t *a = json_array();
    for (k = 0; k < n; k++) json_array_append_new(a, tpuci__select_json(&sums[k]));
    *out = json_dumps(a, JSON_INDENT(2));
    json_decref(a);
  } else {
    tpuci__buf_t b;
    tpuci__buf_init(&b);
    for (k = 0; k < n; k++) tpuci__select_text(&b, &sums[k]);
    *out = tpuci__buf_steal(&b);
  }
  for (k = 0; k < n; k++) free(sums[k].name);
  free(sums);
  tpuci__strv_free(&lines);
  free(text);
  free(path);
  return r;
}
