/* The history store across runs and the flaky report (flaky.h). */
#include "kind/pytest/flaky.h"
#include "kind/pytest/flaky_stats.h"
#include "kind/pytest/pytest_run.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

/* ------------------------------------------------------------------ */
/* Writing                                                             */

/* The run that says how the test did in this run: its last, leaving out
 * a run a cancel cut short; NULL when none says. */
static const tpuci__test_run_t *tpuci__flaky_said(const tpuci__test_hist_t *t) {
  size_t k = t->len;
  while (k > 0)
    if (!tpuci__test_cancelled(&t->runs[--k].result)) return &t->runs[k];
  return NULL;
}

/* The test's code in the store, or 0 when the run says nothing of it
 * (absent): a cancelled run did not reach it (or cut it short), which
 * is no failure, and a test left out as unaffected did not run; a test
 * not run after a timeout or a crash fails. */
static char tpuci__flaky_code(const tpuci__history_t *h, const tpuci__test_hist_t *t) {
  const tpuci__test_run_t *said = tpuci__flaky_said(t);
  size_t k;
  if (said == NULL) {
    int cancelled =
        h->n_attempts > 0 && h->attempts[h->n_attempts - 1].outcome == TPUCI_OUTCOME_CANCELLED;
    for (k = 0; k < t->len; k++) cancelled |= tpuci__test_cancelled(&t->runs[k].result);
    return cancelled ? 0 : 'f';
  }
  if (tpuci__test_outcome_failing(said->result.outcome)) return 'f';
  /* Left out as unaffected: this run did not run it. */
  if (said->result.outcome == TPUCI_TEST_UNAFFECTED) return 0;
  if (t->order_dep) return 'o';
  for (k = 0; &t->runs[k] != said; k++)
    if (tpuci__test_outcome_failing(t->runs[k].result.outcome) &&
        !tpuci__test_cancelled(&t->runs[k].result))
      return 'k';
  if (said->result.outcome == TPUCI_TEST_SKIPPED || said->result.outcome == TPUCI_TEST_XFAIL)
    return 's';
  return 'p';
}

/* Of two codes of one test in one run (a test two shards ran; records
 * written before shards shared one identity), the one that says more:
 * a failure, then order dependence, flakiness, a pass, a skip. */
static char tpuci__flaky_worse(char a, char b) {
  static const char rank[] = "-spkof";
  const char *x = strchr(rank, a), *y = strchr(rank, b);
  if (x == NULL) return b;
  if (y == NULL) return a;
  return x > y ? a : b;
}

/* The message of the test's last failing run, clipped, or NULL. */
static json_t *tpuci__flaky_msg(const tpuci__test_hist_t *t) {
  size_t k = t->len;
  while (k > 0) {
    const tpuci__test_t *r = &t->runs[--k].result;
    const char *m;
    char buf[TPUCI__FLAKY_MSG_MAX + 1];
    size_t n;
    if (!tpuci__test_outcome_failing(r->outcome)) continue;
    m = r->message ? r->message : r->text;
    if (m == NULL) return json_null();
    n = strlen(m);
    if (n > TPUCI__FLAKY_MSG_MAX) n = TPUCI__FLAKY_MSG_MAX;
    /* Not in the middle of a UTF-8 sequence. */
    while (n > 0 && n < strlen(m) && ((unsigned char) m[n] & 0xc0) == 0x80) n--;
    memcpy(buf, m, n);
    buf[n] = '\0';
    {
      json_t *v = json_stringn(buf, n); /* NULL when not UTF-8 */
      return v ? v : json_null();
    }
  }
  return json_null();
}

/* The tree the run was of (flaky.h): "COMMIT:FILES", or FILES in a
 * repository without a commit yet; null when no history knows its files
 * (outside git, only cached passes). A new reference. */
static json_t *tpuci__flaky_tree_json(const tpuci__flaky_run_t *run) {
  size_t i;
  for (i = 0; i < run->n; i++) {
    const char *files = run->histories[i]->tree;
    char *tree;
    json_t *v;
    if (files == NULL) continue;
    tree = run->commit ? tpuci__printf("%s:%s", run->commit, files) : tpuci__strdup(files);
    v = json_string(tree);
    free(tree);
    return v ? v : json_null();
  }
  return json_null();
}

/* What each test identity ran from: {identity: key}, the results
 * cache's input key of its instance (of its shards, hashed together in
 * order), or null when one of them had none. The flip count takes a
 * change across trees only where this key is the same (flaky.h). A new
 * reference. */
static json_t *tpuci__flaky_inputs_json(const tpuci__flaky_run_t *run) {
  json_t *o = json_object();
  tpuci__strv_t joined = {0}, ids = {0};
  size_t i, k;
  for (i = 0; i < run->n; i++) {
    const tpuci__history_t *h = run->histories[i];
    char *identity = tpuci__group_name_of(h->instance);
    for (k = 0; k < ids.len && strcmp(ids.items[k], identity) != 0; k++) continue;
    if (k == ids.len) {
      tpuci__strv_push(&ids, identity);
      tpuci__strv_push(&joined, "");
    }
    if (joined.items[k] != NULL) {
      char *next = h->inputs ? tpuci__printf("%s%s\n", joined.items[k], h->inputs) : NULL;
      free(joined.items[k]);
      joined.items[k] = next;
    }
    free(identity);
  }
  for (k = 0; k < ids.len; k++) {
    char hex[65];
    if (joined.items[k] == NULL) {
      json_object_set_new(o, ids.items[k], json_null());
      continue;
    }
    tpuci__sha256_hex(joined.items[k], strlen(joined.items[k]), hex);
    json_object_set_new(o, ids.items[k], json_string(hex));
    free(joined.items[k]);
    joined.items[k] = NULL;
  }
  tpuci__strv_free(&joined);
  tpuci__strv_free(&ids);
  return o;
}

/* The run as the store's JSON object: each test under its identity (the
 * instance without its shard, so that its runs in different shards are
 * one test's). A new reference. */
static json_t *tpuci__flaky_run_json(const tpuci__flaky_run_t *run) {
  json_t *o = json_object(), *tests = json_array();
  size_t i, k;
  json_object_set_new(o, "run", json_string(run->run_id));
  json_object_set_new(o, "time", json_integer((json_int_t) run->start_ms));
  json_object_set_new(o, "commit", run->commit ? json_string(run->commit) : json_null());
  json_object_set_new(o, "tree", tpuci__flaky_tree_json(run));
  json_object_set_new(o, "inputs", tpuci__flaky_inputs_json(run));
  for (i = 0; i < run->n; i++) {
    const tpuci__history_t *h = run->histories[i];
    char *identity = tpuci__group_name_of(h->instance);
    for (k = 0; k < h->len; k++) {
      const tpuci__test_hist_t *t = &h->tests[k];
      const tpuci__test_run_t *said = tpuci__flaky_said(t);
      char code[2] = {tpuci__flaky_code(h, t), '\0'};
      json_t *row;
      if (code[0] == 0) continue; /* absent: a cancel did not reach it */
      row = json_array();
      json_array_append_new(row, json_string(identity));
      json_array_append_new(row, json_string(t->id));
      json_array_append_new(row, json_string(code));
      json_array_append_new(
          row, json_real(said ? (double) (long) (said->result.time_s * 1000) / 1000 : 0.0));
      json_array_append_new(row, said == NULL             ? json_string(TPUCI__FLAKY_NOT_RUN)
                                 : strchr("fko", code[0]) ? tpuci__flaky_msg(t)
                                                          : json_null());
      json_array_append_new(tests, row);
    }
    free(identity);
  }
  json_object_set_new(o, "tests", tests);
  return o;
}

/* The store's lines that parse as runs, oldest first, each parsed once:
 * the text in `out`, and with `parsed` non-NULL the object too (*parsed
 * a new array parallel to `out`, each a new reference). */
static void tpuci__flaky_lines(const char *text, size_t len, tpuci__strv_t *out, json_t ***parsed) {
  const char *p = text, *end = text + len;
  size_t cap = 0;
  if (parsed) *parsed = NULL;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t) (end - p));
    size_t n = nl ? (size_t) (nl - p) : (size_t) (end - p);
    json_t *o = n ? json_loadb(p, n, 0, NULL) : NULL;
    if (o != NULL && json_is_string(json_object_get(o, "run")) &&
        json_is_array(json_object_get(o, "tests"))) {
      tpuci__strv_take(out, tpuci__strndup(p, n));
      if (parsed) {
        if (out->len > cap) {
          cap = cap ? 2 * cap : 16;
          *parsed = tpuci__realloc(*parsed, cap * sizeof(**parsed));
        }
        (*parsed)[out->len - 1] = o;
        o = NULL;
      }
    }
    json_decref(o);
    p += n + 1;
  }
}

static void tpuci__flaky_parsed_free(json_t **parsed, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) json_decref(parsed[i]);
  free(parsed);
}

/* A test's key in the store's maps: its identity (the instance without
 * its shard: rows written before the shard was left out read as the
 * rows written since) and its node id. A new string. */
static char *tpuci__flaky_key(const char *instance, const char *id) {
  char *identity = tpuci__group_name_of(instance);
  char *key = tpuci__printf("%s\x1f%s", identity, id);
  free(identity);
  return key;
}

/* Each test's outcomes in the last `window` (0: all) of `n` runs, oldest
 * first ("instance\x1fid" -> "pf-k"). A new reference. */
static json_t *tpuci__flaky_recent_of(json_t *const *runs, size_t n, int window) {
  size_t first = window > 0 && n > (size_t) window ? n - (size_t) window : 0;
  size_t nrun = n - first, i;
  json_t *out = json_object();
  for (i = 0; i < nrun; i++) {
    json_t *row;
    size_t j;
    json_array_foreach(json_object_get(runs[first + i], "tests"), j, row) {
      const char *inst = json_string_value(json_array_get(row, 0));
      const char *id = json_string_value(json_array_get(row, 1));
      const char *code = json_string_value(json_array_get(row, 2));
      char *key, *seq;
      json_t *have;
      if (inst == NULL || id == NULL || code == NULL || !*code || strchr("pfkso", code[0]) == NULL)
        continue;
      key = tpuci__flaky_key(inst, id);
      have = json_object_get(out, key);
      seq = tpuci__malloc(nrun + 1);
      if (have) memcpy(seq, json_string_value(have), nrun);
      else memset(seq, '-', nrun);
      seq[nrun] = '\0';
      seq[i] = tpuci__flaky_worse(seq[i], code[0]);
      json_object_set_new(out, key, json_string(seq));
      free(seq);
      free(key);
    }
  }
  return out;
}

int tpuci__flaky_append(const char *path, const tpuci__flaky_run_t *run, int recent_runs,
                        json_t **recent, char **warning, tpuci__err_t *err) {
  tpuci__strv_t lines = {0};
  tpuci__buf_t b;
  json_t **parsed = NULL, *obj;
  char *text = NULL, *line;
  size_t len = 0, first = 0, bytes, i;
  int r = tpuci__read_file_max(path, TPUCI__FLAKY_MAX_BYTES * 2, &text, &len);

  if (recent) *recent = NULL;
  if (warning) *warning = NULL;
  if (r == UV_EFBIG) {
    /* Over the cap (written by something else, or by hand): its newest
     * runs stay, and the run says so. */
    r = tpuci__read_file_tail(path, TPUCI__FLAKY_MAX_BYTES, &text, &len);
    if (r == 0 && warning)
      *warning = tpuci__printf("%s was over %zu MiB: only its newest runs are kept", path,
                               (size_t) (TPUCI__FLAKY_MAX_BYTES * 2) >> 20);
  }
  if (r != 0 && r != -ENOENT) {
    /* Unreadable: the file stays as it is, and this run is not in it;
     * never a history started afresh over the old one. */
    return tpuci__err_set(err, r,
                          "%s: cannot read the history (%s): this run is not added "
                          "to it, and the file is kept",
                          path, tpuci_strerror(r));
  }
  if (text) tpuci__flaky_lines(text, len, &lines, &parsed);
  free(text);
  obj = tpuci__flaky_run_json(run);
  line = json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(6));
  if (line == NULL) {
    json_decref(obj);
    tpuci__flaky_parsed_free(parsed, lines.len);
    tpuci__strv_free(&lines);
    return tpuci__err_set(err, TPUCI_ENOMEM, "%s: cannot encode the run", path);
  }
  bytes = strlen(line) + 1;
  for (i = 0; i < lines.len; i++) bytes += strlen(lines.items[i]) + 1;
  /* The caps: runs, then bytes (the newest run always stays). */
  if (lines.len + 1 > TPUCI__FLAKY_MAX_RUNS) first = lines.len + 1 - TPUCI__FLAKY_MAX_RUNS;
  for (i = 0; i < first; i++) bytes -= strlen(lines.items[i]) + 1;
  while (first < lines.len && bytes > TPUCI__FLAKY_MAX_BYTES)
    bytes -= strlen(lines.items[first++]) + 1;
  tpuci__buf_init(&b);
  for (i = first; i < lines.len; i++) tpuci__buf_addf(&b, "%s\n", lines.items[i]);
  tpuci__buf_addf(&b, "%s\n", line);
  free(line);
  r = tpuci__write_file_atomic(path, b.data, b.len);
  tpuci__buf_free(&b);
  if (r == 0 && recent) {
    /* What the store now holds, from what was read: no second read. */
    size_t n = lines.len - first;
    json_t **kept = tpuci__malloc((n + 1) * sizeof(*kept));
    for (i = 0; i < n; i++) kept[i] = parsed[first + i];
    kept[n] = obj;
    *recent = tpuci__flaky_recent_of(kept, n + 1, recent_runs);
    free(kept);
  }
  json_decref(obj);
  tpuci__flaky_parsed_free(parsed, lines.len);
  tpuci__strv_free(&lines);
  if (r != 0) return tpuci__err_set(err, r, "%s: cannot write: %s", path, tpuci_strerror(r));
  return 0;
}

/* ------------------------------------------------------------------ */
/* The report                                                          */

static int tpuci__flaky_cmp(const void *a, const void *b) {
  const tpuci__flaky_test_t *x = a, *y = b;
  double rx = x->runs ? (double) x->flips / (double) x->runs : 0;
  double ry = y->runs ? (double) y->flips / (double) y->runs : 0;
  int c;
  if (rx != ry) return rx < ry ? 1 : -1;
  if (x->fails != y->fails) return x->fails < y->fails ? 1 : -1;
  if ((c = strcmp(x->id, y->id)) != 0) return c;
  return strcmp(x->instance, y->instance);
}

double tpuci__flaky_rate(const tpuci__flaky_test_t *t) {
  return t->runs ? (double) t->flips / (double) t->runs : 0;
}

/* The jobs of run `o` in which more than half the tests that ran failed
 * (at least TPUCI__FLAKY_INFRA_MIN of them): an infra run (a lost
 * device, a full disk), which says nothing of any one test. Their
 * identities go into `out` (identity -> true), each also into s->infra. */
static void tpuci__flaky_infra_of(tpuci__flaky_stats_t *s, json_t *o, json_t *out) {
  json_t *counts = json_object(), *row, *c;
  const char *identity;
  size_t j;
  json_array_foreach(json_object_get(o, "tests"), j, row) {
    const char *inst = json_string_value(json_array_get(row, 0));
    const char *code = json_string_value(json_array_get(row, 2));
    char *ident;
    if (inst == NULL || code == NULL || !*code || strchr("pfko", code[0]) == NULL) continue;
    ident = tpuci__group_name_of(inst);
    if ((c = json_object_get(counts, ident)) == NULL) {
      c = json_pack("[ii]", 0, 0);
      json_object_set_new(counts, ident, c);
    }
    json_array_set_new(c, 0, json_integer(json_integer_value(json_array_get(c, 0)) + 1));
    if (code[0] == 'f')
      json_array_set_new(c, 1, json_integer(json_integer_value(json_array_get(c, 1)) + 1));
    free(ident);
  }
  json_object_foreach(counts, identity, c) {
    size_t tests = (size_t) json_integer_value(json_array_get(c, 0));
    size_t failed = (size_t) json_integer_value(json_array_get(c, 1));
    tpuci__flaky_infra_t *x;
    if (tests < TPUCI__FLAKY_INFRA_MIN || failed * 2 <= tests) continue;
    json_object_set_new(out, identity, json_true());
    s->infra = tpuci__realloc(s->infra, (s->ninfra + 1) * sizeof(*s->infra));
    x = &s->infra[s->ninfra++];
    x->run = json_string_value(json_object_get(o, "run"));
    x->instance = tpuci__strdup(identity);
    x->tests = tests;
    x->failed = failed;
  }
  json_decref(counts);
}

void tpuci__flaky_stats_free(tpuci__flaky_stats_t *s) {
  size_t k;
  for (k = 0; k < s->ntests; k++) {
    free(s->tests[k].rests);
    free(s->tests[k].seq);
    free(s->tests[k].key);
    free(s->tests[k].instance);
  }
  free(s->tests);
  for (k = 0; k < s->ninfra; k++) free(s->infra[k].instance);
  free(s->infra);
  free(s->tree);
  free(s->tree_ix);
  tpuci__flaky_parsed_free(s->all, s->lines.len);
  tpuci__strv_free(&s->lines);
  memset(s, 0, sizeof(*s));
}

/* Adds row `row` of window run `i` to the test it is of. */
static void tpuci__flaky_stats_row(tpuci__flaky_stats_t *s, tpuci__idmap_t *map, size_t cap[1],
                                   size_t i, json_t *row, int infra) {
  const char *inst = json_string_value(json_array_get(row, 0));
  const char *id = json_string_value(json_array_get(row, 1));
  const char *code = json_string_value(json_array_get(row, 2));
  tpuci__flaky_test_t *t;
  char *key;
  size_t at;
  if (inst == NULL || id == NULL || code == NULL || !*code) return;
  key = tpuci__flaky_key(inst, id);
  at = tpuci__idmap_get(map, key);
  if (at == TPUCI__IDMAP_NONE) {
    if (s->ntests == cap[0]) {
      cap[0] = cap[0] ? 2 * cap[0] : 64;
      s->tests = tpuci__realloc(s->tests, cap[0] * sizeof(*s->tests));
    }
    at = s->ntests++;
    t = &s->tests[at];
    memset(t, 0, sizeof(*t));
    t->instance = tpuci__group_name_of(inst);
    t->id = id;
    t->seq = tpuci__malloc(s->nrun + 1);
    memset(t->seq, '-', s->nrun);
    t->seq[s->nrun] = '\0';
    t->key = key;
    tpuci__idmap_put(map, key, at); /* borrowed: freed with the tests */
  } else {
    free(key);
  }
  t = &s->tests[at];
  if (infra) {
    t->seq[i] = 'x';
    return;
  }
  t->seq[i] = tpuci__flaky_worse(t->seq[i], code[0]);
  if (strchr("fko", code[0]) != NULL) {
    t->last_run = json_string_value(json_object_get(s->parsed[i], "run"));
    t->last_msg = json_string_value(json_array_get(row, 4));
  }
}

/* The tree each run of the window was of, numbered among the window's
 * distinct ones (-1: none recorded, as in lines written before trees
 * were). */
static void tpuci__flaky_trees(tpuci__flaky_stats_t *s) {
  tpuci__idmap_t seen;
  size_t i, at;
  s->tree = tpuci__calloc(s->nrun + 1, sizeof(*s->tree));
  s->tree_ix = tpuci__malloc((s->nrun + 1) * sizeof(*s->tree_ix));
  tpuci__idmap_init(&seen);
  for (i = 0; i < s->nrun; i++) {
    const char *tree = json_string_value(json_object_get(s->parsed[i], "tree"));
    s->tree_ix[i] = -1;
    if (tree == NULL || *tree == '\0') continue;
    s->tree[i] = tree;
    at = tpuci__idmap_get(&seen, tree);
    if (at == TPUCI__IDMAP_NONE) tpuci__idmap_put(&seen, tree, at = s->ntrees++);
    s->tree_ix[i] = (int) at;
  }
  tpuci__idmap_free(&seen);
}

/* A flip of `t` resting on runs `a` and `b` (the same run for one flaky
 * within itself). */
static void tpuci__flaky_flip(const tpuci__flaky_stats_t *s, tpuci__flaky_test_t *t, size_t a,
                              size_t b) {
  t->flips++;
  if (t->rests == NULL) t->rests = tpuci__calloc(s->nrun + 1, 1);
  t->rests[a] = t->rests[b] = 1;
}

/* Whether the test's identity ran from the same inputs in runs a and b
 * (both recorded the same results cache key for it): then a change of
 * result between two trees is a flip all the same. */
static int tpuci__flaky_same_inputs(const tpuci__flaky_stats_t *s, const tpuci__flaky_test_t *t,
                                    size_t a, size_t b) {
  const char *ka =
      json_string_value(json_object_get(json_object_get(s->parsed[a], "inputs"), t->instance));
  const char *kb =
      json_string_value(json_object_get(json_object_get(s->parsed[b], "inputs"), t->instance));
  return ka != NULL && kb != NULL && strcmp(ka, kb) == 0;
}

/* A test's runs and fails (skips, infra runs and runs without it left
 * out) and flips: every run flaky or order-dependent within itself, and
 * every change of result from the test's last run of the same tree, or
 * from its run just before when that was of another tree (or of none)
 * but the test ran from the same inputs (tpuci__flaky_same_inputs).
 * Any other change between two trees proves nothing (a fix is no flip).
 * `last` has room for s->ntrees. */
static void tpuci__flaky_count(const tpuci__flaky_stats_t *s, tpuci__flaky_test_t *t,
                               size_t *last) {
  size_t i, prev = SIZE_MAX;
  for (i = 0; i < s->ntrees; i++) last[i] = SIZE_MAX;
  for (i = 0; i < s->nrun; i++) {
    char c = t->seq[i];
    int tr = s->tree_ix[i];
    if (c == '-' || c == 's' || c == 'x') continue;
    t->runs++;
    t->fails += c == 'f';
    if (c == 'k' || c == 'o') tpuci__flaky_flip(s, t, i, i);
    else if (tr >= 0 && last[tr] != SIZE_MAX && (t->seq[last[tr]] == 'f') != (c == 'f'))
      tpuci__flaky_flip(s, t, last[tr], i);
    else if (prev != SIZE_MAX && (tr < 0 || s->tree_ix[prev] != tr) &&
             (t->seq[prev] == 'f') != (c == 'f') && tpuci__flaky_same_inputs(s, t, prev, i))
      tpuci__flaky_flip(s, t, prev, i);
    if (tr >= 0) last[tr] = i;
    prev = i;
  }
}

int tpuci__flaky_stats(const char *path, int runs, tpuci__flaky_stats_t *s, tpuci__err_t *err) {
  tpuci__idmap_t map;
  char *text = NULL;
  size_t len = 0, first, cap = 0, i, k, *last;
  int r = tpuci__read_file_max(path, TPUCI__FLAKY_MAX_BYTES * 2, &text, &len);

  memset(s, 0, sizeof(*s));
  if (r == -ENOENT)
    return tpuci__err_set(err, TPUCI_ENOMATCH,
                          "%s: no history yet (every `tpuci run` with "
                          "pytest jobs adds to it)",
                          path);
  if (r != 0) return tpuci__err_set(err, r, "%s: cannot read: %s", path, tpuci_strerror(r));
  tpuci__flaky_lines(text, len, &s->lines, &s->all);
  free(text);
  first = runs > 0 && s->lines.len > (size_t) runs ? s->lines.len - (size_t) runs : 0;
  s->nrun = s->lines.len - first;
  s->parsed = s->all ? s->all + first : NULL;
  tpuci__flaky_trees(s);
  tpuci__idmap_init(&map);
  for (i = 0; i < s->nrun; i++) {
    json_t *infra = json_object(), *row;
    size_t j;
    tpuci__flaky_infra_of(s, s->parsed[i], infra);
    json_array_foreach(json_object_get(s->parsed[i], "tests"), j, row) {
      const char *inst = json_string_value(json_array_get(row, 0));
      char *ident = inst ? tpuci__group_name_of(inst) : NULL;
      tpuci__flaky_stats_row(s, &map, &cap, i, row,
                             ident != NULL && json_object_get(infra, ident) != NULL);
      free(ident);
    }
    json_decref(infra);
  }
  tpuci__idmap_free(&map);
  last = tpuci__malloc((s->ntrees + 1) * sizeof(*last));
  for (k = 0; k < s->ntests; k++) tpuci__flaky_count(s, &s->tests[k], last);
  free(last);
  if (s->ntests > 0) qsort(s->tests, s->ntests, sizeof(*s->tests), tpuci__flaky_cmp);
  return 0;
}

void tpuci__flaky_tree_short(const char *tree, char out[24]) {
  const char *colon = strchr(tree, ':');
  if (colon == NULL) snprintf(out, 24, "%.8s", tree);
  else snprintf(out, 24, "%.*s:%.8s", colon - tree < 7 ? (int) (colon - tree) : 7, tree, colon + 1);
}

/* The window's run `i`'s id ("" when it has none). */
static const char *tpuci__flaky_run_id(const tpuci__flaky_stats_t *s, size_t i) {
  const char *run = json_string_value(json_object_get(s->parsed[i], "run"));
  return run ? run : "";
}

/* The ids of the runs the test's flips rest on, oldest first. A new
 * reference. */
static json_t *tpuci__flaky_rests_json(const tpuci__flaky_stats_t *s,
                                       const tpuci__flaky_test_t *t) {
  json_t *a = json_array();
  size_t i;
  for (i = 0; t->rests && i < s->nrun; i++)
    if (t->rests[i]) json_array_append_new(a, json_string(tpuci__flaky_run_id(s, i)));
  return a;
}

static void tpuci__flaky_json(tpuci__buf_t *b, const tpuci__flaky_stats_t *s) {
  json_t *root = json_object(), *ids = json_array(), *arr = json_array(), *left = json_array();
  json_t *trees = json_array();
  char *text;
  size_t i, k;
  for (i = 0; i < s->nrun; i++) {
    json_array_append_new(ids, json_string(tpuci__flaky_run_id(s, i)));
    json_array_append_new(trees, s->tree[i] ? json_string(s->tree[i]) : json_null());
  }
  for (k = 0; k < s->ntests; k++) {
    const tpuci__flaky_test_t *t = &s->tests[k];
    if (t->last_run == NULL) continue;
    json_array_append_new(
        arr,
        json_pack("{s:s, s:s, s:f, s:I, s:I, s:I, s:s, s:o, s:s, s:o}", "instance", t->instance,
                  "id", t->id, "flip_rate", tpuci__flaky_rate(t), "flips", (json_int_t) t->flips,
                  "fails", (json_int_t) t->fails, "runs", (json_int_t) t->runs, "outcomes", t->seq,
                  "flip_runs", tpuci__flaky_rests_json(s, t), "last_failure_run", t->last_run,
                  "last_failure", t->last_msg ? json_string(t->last_msg) : json_null()));
  }
  for (k = 0; k < s->ninfra; k++)
    json_array_append_new(
        left, json_pack("{s:s, s:s, s:I, s:I}", "run", s->infra[k].run, "instance",
                        s->infra[k].instance, "tests", (json_int_t) s->infra[k].tests, "failed",
                        (json_int_t) s->infra[k].failed));
  json_object_set_new(root, "runs", ids);
  json_object_set_new(root, "trees", trees);
  json_object_set_new(root, "tests", arr);
  json_object_set_new(root, "left_out", left);
  text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(4));
  tpuci__buf_addf(b, "%s\n", text ? text : "{}");
  free(text);
  json_decref(root);
}

static void tpuci__flaky_text(tpuci__buf_t *b, const tpuci__flaky_stats_t *s, const char *path) {
  size_t k, listed = 0, unknown = 0;
  for (k = 0; k < s->ntests; k++) listed += s->tests[k].last_run != NULL;
  tpuci__buf_addf(b, "%zu run%s in the history (%s), %zu test%s failed in %s\n", s->nrun,
                  s->nrun == 1 ? "" : "s", path, listed, listed == 1 ? "" : "s",
                  s->nrun == 1 ? "it" : "them");
  for (k = 0; k < s->nrun; k++) unknown += s->tree[k] == NULL;
  if (unknown > 0)
    tpuci__buf_addf(b,
                    "%zu of %s of no known tree (outside git, or recorded before trees "
                    "were): a change of result from or to %s is no flip\n",
                    unknown, s->nrun == 1 ? "it" : "them", unknown == 1 ? "it" : "one");
  for (k = 0; k < s->ninfra; k++)
    tpuci__buf_addf(b,
                    "left out of flip rates: run %s of %s: %zu of its %zu tests failed "
                    "(an infra run)\n",
                    s->infra[k].run, s->infra[k].instance, s->infra[k].failed, s->infra[k].tests);
  if (listed > 0)
    tpuci__buf_addf(b,
                    "flip rate  fails/runs  outcomes (oldest first: p pass, f fail, "
                    "k flaky, o order-dependent, s skip, - absent%s)\n",
                    s->ninfra ? ", x infra run" : "");
  for (k = 0; k < s->ntests; k++) {
    const tpuci__flaky_test_t *t = &s->tests[k];
    const char *seq = t->seq;
    if (t->last_run == NULL) continue;
    if (strlen(seq) > 30) seq += strlen(seq) - 30;
    tpuci__buf_addf(b, "     %4.2f  %5zu/%-4zu  %-30s  %s [%s]\n", tpuci__flaky_rate(t), t->fails,
                    t->runs, seq, t->id, t->instance);
    tpuci__buf_addf(b, "           last failed in run %s", t->last_run);
    if (t->last_msg) {
      const char *nl = strchr(t->last_msg, '\n');
      int n = nl ? (int) (nl - t->last_msg) : (int) strlen(t->last_msg);
      tpuci__buf_addf(b, ": %.*s", n, t->last_msg);
    }
    tpuci__buf_adds(b, "\n");
  }
}

int tpuci__flaky_report(const char *path, int runs, int json, char **out, tpuci__err_t *err) {
  tpuci__flaky_stats_t s;
  tpuci__buf_t b;
  int r = tpuci__flaky_stats(path, runs, &s, err);
  if (r != 0) return r;
  tpuci__buf_init(&b);
  if (json) tpuci__flaky_json(&b, &s);
  else tpuci__flaky_text(&b, &s, path);
  tpuci__flaky_stats_free(&s);
  *out = tpuci__buf_steal(&b);
  return 0;
}

json_t *tpuci__flaky_recent(const char *path, int runs) {
  tpuci__strv_t lines = {0};
  json_t **parsed = NULL, *out;
  char *text = NULL;
  size_t len = 0;
  if (tpuci__read_file_max(path, TPUCI__FLAKY_MAX_BYTES * 2, &text, &len) != 0) return NULL;
  tpuci__flaky_lines(text, len, &lines, &parsed);
  free(text);
  out = tpuci__flaky_recent_of(parsed, lines.len, runs);
  tpuci__flaky_parsed_free(parsed, lines.len);
  tpuci__strv_free(&lines);
  return out;
}
