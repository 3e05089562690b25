/* Shards by predicted duration (LPT), and --collect-only output. */
#include "kind/pytest/shard.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* pytest --collect-only -q                                            */

static int tpuci__starts(const char *s, size_t n, const char *prefix) {
  size_t p = strlen(prefix);
  return n >= p && memcmp(s, prefix, p) == 0;
}

static int tpuci__contains(const char *s, size_t n, const char *needle) {
  size_t k = strlen(needle), i;
  for (i = 0; i + k <= n; i++)
    if (memcmp(s + i, needle, k) == 0) return 1;
  return 0;
}

/* "21 tests collected in 0.02s", "1 test collected, 1 error in 0.05s",
 * "3/5 tests collected (2 deselected) in 0.01s", "no tests collected in
 * 0.01s", "no tests ran in 0.01s", "5 tests deselected ...". */
static int tpuci__summary_line(const char *s, size_t n) {
  size_t i = 0;
  if (tpuci__starts(s, n, "no tests ")) return 1;
  while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '/')) i++;
  if (i == 0 || i >= n || s[i] != ' ') return 0;
  return tpuci__contains(s, n, " collected") || tpuci__contains(s, n, " deselected") ||
         tpuci__contains(s, n, " selected") || tpuci__contains(s, n, " error");
}

/* "tests/test_a.py: 3", what -qq prints per file. */
static int tpuci__count_line(const char *s, size_t n) {
  size_t i = n;
  while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') i--;
  return i < n && i >= 2 && s[i - 1] == ' ' && s[i - 2] == ':';
}

int tpuci__collect_parse(const char *text, size_t len, tpuci__strv_t *ids, tpuci__err_t *err) {
  const char *p = text, *end = text + len;
  int stop = 0, summary = 0, errors = 0, counts = 0;
  size_t found = 0;
  tpuci__idmap_t seen;
  size_t i;

  tpuci__idmap_init(&seen);
  for (i = 0; i < ids->len; i++) tpuci__idmap_put(&seen, ids->items[i], i);
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t) (end - p));
    const char *line = p;
    size_t n = nl ? (size_t) (nl - p) : (size_t) (end - p);
    char *id;
    p = nl ? nl + 1 : end;
    if (n > 0 && line[n - 1] == '\r') n--;

    if (tpuci__contains(line, n, "error during collection") ||
        tpuci__contains(line, n, "errors during collection"))
      errors = 1;
    if (tpuci__summary_line(line, n)) {
      /* The last line; it may follow a warnings section. */
      summary = stop = 1;
      if (tpuci__contains(line, n, " error")) errors = 1;
      continue;
    }
    if (stop || n == 0 || line[0] == ' ' || line[0] == '\t') continue;
    if (line[0] == '=' || line[0] == '!') {
      stop = 1; /* a section: ERRORS, warnings summary, ... */
      continue;
    }
    if (memchr(line, '\0', n) != NULL) continue; /* not text */
    if (!tpuci__contains(line, n, "::")) {
      if (tpuci__count_line(line, n)) counts = 1;
      continue;
    }
    id = tpuci__strndup(line, n);
    if (tpuci__idmap_get(&seen, id) != TPUCI__IDMAP_NONE) {
      free(id);
      continue;
    }
    /* The map borrows the string, which the vector only moves by pointer. */
    tpuci__strv_take(ids, id);
    tpuci__idmap_put(&seen, id, ids->len - 1);
    found++;
  }
  tpuci__idmap_free(&seen);

  if (errors)
    return tpuci__err_set(err, TPUCI_EIO,
                          "pytest reported errors during collection (%zu node id%s listed)", found,
                          found == 1 ? "" : "s");
  if (found == 0 && counts)
    return tpuci__err_set(err, TPUCI_EIO,
                          "counts per file instead of node ids: run `pytest --collect-only -q`, "
                          "not -qq");
  if (found == 0 && !summary)
    return tpuci__err_set(err, TPUCI_EIO,
                          "no node ids and no summary line: not the output of "
                          "`pytest --collect-only -q`");
  return 0;
}

/* ------------------------------------------------------------------ */
/* LPT                                                                 */

typedef struct {
  const char *id;
  size_t order; /* position among the distinct ids given */
  double d;     /* predicted seconds */
  int fails;    /* its latest result failed: a retry runs it again */
} tpuci__item_t;

static int tpuci__cmp_double(const void *a, const void *b) {
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

void tpuci__shard_plan_free(tpuci__shard_plan_t *p) {
  size_t i;
  for (i = 0; i < p->n; i++) tpuci__strv_free(&p->shards[i].ids);
  free(p->shards);
  memset(p, 0, sizeof(*p));
}

size_t tpuci__shard_unit_len(const char *id, tpuci__shard_by_t by) {
  size_t end = strcspn(id, "["), i, seps = 0;
  if (by == TPUCI__SHARD_BY_TEST) return strlen(id);
  for (i = 0; i + 1 < end; i++) {
    if (id[i] != ':' || id[i + 1] != ':') continue;
    if (by == TPUCI__SHARD_BY_FILE || ++seps == 2) return i;
    i++;
  }
  /* No class: a function of the file is a group of its own. */
  return by == TPUCI__SHARD_BY_FILE ? end : strlen(id);
}

typedef struct {
  size_t first;   /* the position of its first test */
  size_t len;     /* of its name in that test's id */
  const char *id; /* that test's id */
  double d;       /* its tests' predicted seconds (failing ones twice) */
  int fails;      /* it has a failing test, which a retry runs again */
  size_t ntests;  /* how many tests it has */
  size_t shard;
} tpuci__group_t;

/* Longest first, then by name: the order never depends on the input. */
static int tpuci__cmp_group(const void *a, const void *b) {
  const tpuci__group_t *x = a, *y = b;
  int c;
  if (x->d != y->d) return x->d > y->d ? -1 : 1;
  c = strncmp(x->id, y->id, x->len < y->len ? x->len : y->len);
  if (c != 0) return c;
  return x->len < y->len ? -1 : x->len > y->len;
}

static int tpuci__cmp_group_first(const void *a, const void *b) {
  const tpuci__group_t *x = a, *y = b;
  return x->first < y->first ? -1 : x->first > y->first;
}

/* The shard of lowest load among the first n; on a tie the one given
 * fewer tests (tests that took no measurable time, recorded as 0 s,
 * still spread over the shards), then the lowest index. */
static size_t tpuci__least(const double *load, const size_t *count, size_t n) {
  size_t s, best = 0;
  for (s = 1; s < n; s++)
    if (load[s] < load[best] || (load[s] == load[best] && count[s] < count[best])) best = s;
  return best;
}

/* LPT of groups g[0..ng) (longest first) into `shards` loads: the groups
 * with failing tests first, over the first `nretry` shards, which start
 * with retry_s each (their retry attempt's own cost), then the others
 * over all. Sets each group's shard; returns the longest load. */
static double tpuci__lpt(tpuci__group_t *g, size_t ng, size_t shards, size_t nretry, double retry_s,
                         double *load) {
  size_t i, pass, *count = tpuci__calloc(shards, sizeof(*count));
  double max = 0;
  for (i = 0; i < shards; i++) load[i] = i < nretry ? retry_s : 0;
  for (pass = 0; pass < 2; pass++)
    for (i = 0; i < ng; i++) {
      size_t best;
      if (g[i].fails != (pass == 0)) continue;
      best = tpuci__least(load, count, pass == 0 ? nretry : shards);
      load[best] += g[i].d;
      count[best] += g[i].ntests;
      g[i].shard = best;
    }
  for (i = 0; i < shards; i++)
    if (load[i] > max) max = load[i];
  free(count);
  return max;
}

/* Where a split puts things: each item's shard (shard_of[0..m)), each
 * shard's load (load[0..shards)), and how many shards retry. */
typedef struct {
  size_t *shard_of;
  double *load;
  size_t retrying;
} tpuci__split_t;

/* LPT over the groups of items[0..m) (in their given order): each group's
 * tests go to one shard. With retry_s >= 0 the groups with failing tests
 * (which a retry runs again) go first, over as few shards as make the
 * longest shard shortest, each starting with retry_s; then the others
 * over all shards, which gives those shards less: their retries end with
 * the other shards instead of after them. */
static void tpuci__shard_groups(const tpuci__item_t *items, size_t m, const tpuci__shard_ask_t *ask,
                                double retry_s, tpuci__split_t *split) {
  size_t shards = ask->shards, *shard_of = split->shard_of;
  double *load = split->load;
  tpuci__group_t *g = tpuci__calloc(m + 1, sizeof(*g));
  size_t *group_of = tpuci__calloc(m + 1, sizeof(*group_of));
  tpuci__strv_t keys = {0}; /* the map borrows them */
  tpuci__idmap_t names;
  size_t ng = 0, i;
  int any = 0;

  tpuci__idmap_init(&names);
  for (i = 0; i < m; i++) {
    size_t len = tpuci__shard_unit_len(items[i].id, ask->by), k;
    char *name = tpuci__strndup(items[i].id, len);
    k = tpuci__idmap_get(&names, name);
    if (k == TPUCI__IDMAP_NONE) {
      k = ng++;
      g[k].first = i;
      g[k].len = len;
      g[k].id = items[i].id;
      tpuci__strv_take(&keys, name);
      tpuci__idmap_put(&names, name, k);
    } else {
      free(name);
    }
    g[k].d += items[i].d;
    g[k].ntests++;
    if (items[i].fails && retry_s >= 0) {
      g[k].d += items[i].d; /* run again by the retry */
      g[k].fails = 1;
    }
    group_of[i] = k;
  }
  tpuci__idmap_free(&names);
  tpuci__strv_free(&keys);
  qsort(g, ng, sizeof(*g), tpuci__cmp_group);
  for (i = 0; i < ng; i++) any |= g[i].fails;
  /* With failing groups: as many retrying shards as make the longest
   * shard shortest (trying more while it helps), fewest on a tie. */
  if (any) {
    double best = tpuci__lpt(g, ng, shards, 1, retry_s, load), next;
    size_t nretry = 1;
    while (nretry < shards &&
           (next = tpuci__lpt(g, ng, shards, nretry + 1, retry_s, load)) < best) {
      best = next;
      nretry++;
    }
    split->retrying = nretry;
    tpuci__lpt(g, ng, shards, nretry, retry_s, load);
  } else {
    tpuci__lpt(g, ng, shards, 0, 0, load);
  }
  /* Back to the order they were made in: group_of's. */
  qsort(g, ng, sizeof(*g), tpuci__cmp_group_first);
  for (i = 0; i < m; i++) shard_of[i] = g[group_of[i]].shard;
  free(group_of);
  free(g);
}

/* tpuci__shard_plan(), planning the retry when retry_s >= 0. */
static int tpuci__shard_split(const tpuci__shard_ask_t *ask, double retry_s,
                              tpuci__shard_plan_t *out, tpuci__err_t *err) {
  const char *const *ids = ask->ids;
  const tpuci__timings_t *t = ask->timings;
  size_t n = ask->n, shards = ask->shards;
  tpuci__item_t *items;
  tpuci__split_t split = {0};
  size_t m = 0, i, known = 0;
  double *knownv;
  tpuci__idmap_t seen, no_retry;

  memset(out, 0, sizeof(*out));
  if (shards == 0 || shards > TPUCI__SHARD_MAX)
    return tpuci__err_set(err, TPUCI_EUSAGE, "the number of shards must be 1 to %d, not %zu",
                          TPUCI__SHARD_MAX, shards);
  items = tpuci__calloc(n, sizeof(*items));
  knownv = tpuci__calloc(n, sizeof(*knownv));
  tpuci__idmap_init(&seen);
  tpuci__idmap_init(&no_retry);
  for (i = 0; ask->no_retry != NULL && i < ask->no_retry->len; i++)
    tpuci__idmap_put(&no_retry, ask->no_retry->items[i], i);
  for (i = 0; i < n; i++) {
    double d;
    if (ids[i] == NULL || tpuci__idmap_get(&seen, ids[i]) != TPUCI__IDMAP_NONE) continue;
    tpuci__idmap_put(&seen, ids[i], m);
    items[m].id = ids[i];
    items[m].order = m;
    items[m].d = -1;
    if (t != NULL && retry_s >= 0) {
      size_t k = tpuci__idmap_get(&t->map, ids[i]);
      items[m].fails = k != TPUCI__IDMAP_NONE && t->items[k].failed &&
                       tpuci__idmap_get(&no_retry, ids[i]) == TPUCI__IDMAP_NONE;
    }
    if (t != NULL && (ask->traced ? tpuci__timings_get_traced(t, ids[i], &d)
                                  : tpuci__timings_get(t, ids[i], &d))) {
      items[m].d = d;
      knownv[known++] = d;
    }
    m++;
  }
  tpuci__idmap_free(&seen);
  tpuci__idmap_free(&no_retry);

  out->n = shards;
  out->shards = tpuci__calloc(shards, sizeof(*out->shards));
  out->known = known;
  out->unknown = m - known;
  out->by_count = known == 0;
  if (known == 0) {
    out->unknown_s = TPUCI__SHARD_DEFAULT_S;
  } else {
    qsort(knownv, known, sizeof(*knownv), tpuci__cmp_double);
    out->unknown_s =
        known % 2 ? knownv[known / 2] : (knownv[known / 2 - 1] + knownv[known / 2]) / 2;
  }
  for (i = 0; i < m; i++)
    if (items[i].d < 0) items[i].d = out->unknown_s;

  split.shard_of = tpuci__calloc(m, sizeof(*split.shard_of));
  split.load = tpuci__calloc(shards, sizeof(*split.load));
  if (out->by_count && ask->by == TPUCI__SHARD_BY_TEST) {
    for (i = 0; i < m; i++) {
      size_t s = i % shards;
      split.shard_of[i] = s;
      split.load[s] += items[i].d;
    }
  } else {
    tpuci__shard_groups(items, m, ask, retry_s, &split);
  }
  out->retrying = split.retrying;
  for (i = 0; i < m; i++) tpuci__strv_push(&out->shards[split.shard_of[i]].ids, items[i].id);
  for (i = 0; i < shards; i++) {
    out->shards[i].predicted_s = split.load[i];
    out->total_s += split.load[i];
  }
  free(split.load);
  free(split.shard_of);
  free(knownv);
  free(items);
  return 0;
}

int tpuci__shard_plan(const tpuci__shard_ask_t *ask, tpuci__shard_plan_t *out, tpuci__err_t *err) {
  return tpuci__shard_split(ask, -1, out, err);
}

int tpuci__shard_plan_retry(const char *const *ids, size_t n, const tpuci__timings_t *t,
                            size_t shards, tpuci__shard_by_t by, double retry_s,
                            tpuci__shard_plan_t *out, tpuci__err_t *err) {
  tpuci__shard_ask_t ask = {.ids = ids, .n = n, .timings = t, .shards = shards, .by = by};
  return tpuci__shard_split(&ask, retry_s, out, err);
}

int tpuci__shard_plan_ask_retry(const tpuci__shard_ask_t *ask, double retry_s,
                                tpuci__shard_plan_t *out, tpuci__err_t *err) {
  return tpuci__shard_split(ask, retry_s, out, err);
}

double tpuci__shard_imbalance(const tpuci__shard_plan_t *p) {
  double max = 0;
  size_t i;
  if (p->n == 0 || p->total_s <= 0) return 0;
  for (i = 0; i < p->n; i++)
    if (p->shards[i].predicted_s > max) max = p->shards[i].predicted_s;
  return max / (p->total_s / (double) p->n);
}

char *tpuci__shard_assignment(const tpuci__shard_plan_t *p, tpuci__shard_by_t by, size_t shard) {
  static const char *const names[] = {"file", "class", "test"};
  tpuci__idmap_t seen;
  tpuci__strv_t keys = {0}; /* the map borrows them */
  tpuci__buf_t b;
  size_t k, i, live = 0;

  tpuci__buf_init(&b);
  tpuci__buf_addf(&b, "%s %zu ", names[by], shard);
  for (k = 0; k < p->n; k++)
    if (p->shards[k].ids.len > 0) tpuci__buf_addf(&b, "%s%zu", live++ ? "," : "", k + 1);
  tpuci__idmap_init(&seen);
  for (k = 0; k < p->n; k++)
    for (i = 0; i < p->shards[k].ids.len; i++) {
      const char *id = p->shards[k].ids.items[i];
      char *unit = tpuci__strndup(id, tpuci__shard_unit_len(id, by));
      if (tpuci__idmap_get(&seen, unit) != TPUCI__IDMAP_NONE) {
        free(unit);
        continue;
      }
      tpuci__idmap_put(&seen, unit, keys.len);
      tpuci__strv_take(&keys, unit);
      tpuci__buf_addf(&b, "\n%zu\t%s", k + 1, unit);
    }
  tpuci__idmap_free(&seen);
  tpuci__strv_free(&keys);
  return tpuci__buf_steal(&b);
}

double tpuci__shard_retry_s(const tpuci__instance_t *inst, double overhead_s) {
  const tpuci__retry_t *r = &inst->retry;
  if (r->attempts < 2 || !tpuci__retry_wants(r, TPUCI_OUTCOME_FAILED) || r->rerun_unfinished)
    return -1;
  return (overhead_s > 0 ? overhead_s : 0) + (double) tpuci__retry_delay(r, 2) / 1000.0;
}
