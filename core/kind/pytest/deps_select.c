/* The rule that leaves a test out (deps.h): unknown means run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind/pytest/deps_internal.h"
#include "runtime/tree.h"

/* What happened to a record's file since. */
enum { TPUCI__SAME, TPUCI__CHANGED, TPUCI__GONE };

/* What the tree says now, against the record. */
typedef struct {
  const tpuci__deps_rec_t *rec;
  const tpuci__deps_where_t *w;
  const tpuci__dtree_t *now;
  unsigned char *state;      /* per record file */
  unsigned char *top_moved;  /* per record file: its top level changed */
  tpuci__pyblocks_t *py_now; /* per record file with functions kept: now */
  unsigned char *needed;     /* per record file: a test or the session needs it */
} tpuci__diff_t;

static int tpuci__has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static const char *tpuci__base(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* Python code, or a file that decides what pytest imports, collects or
 * how it is configured: a new or deleted one is never accounted for by a
 * listing. */
static int tpuci__decides(const char *path) {
  static const char *const names[] = {"conftest.py", "pytest.ini",     ".pytest.ini", "tox.ini",
                                      "setup.cfg",   "pyproject.toml", "setup.py",    NULL};
  static const char *const suffixes[] = {".py", ".so", ".pyd", ".pth", NULL};
  size_t i;
  for (i = 0; names[i] != NULL; i++)
    if (strcmp(tpuci__base(path), names[i]) == 0) return 1;
  for (i = 0; suffixes[i] != NULL; i++)
    if (tpuci__has_suffix(path, suffixes[i])) return 1;
  return 0;
}

/* An id that can never match what is read now. */
static int tpuci__unknown_id(const char *id) {
  return strcmp(id, TPUCI__DTREE_UNKNOWN) == 0 || strncmp(id, "big:", 4) == 0;
}

/* The functions of the record's file `f` as they are now. */
static void tpuci__scan_now(tpuci__diff_t *d, size_t f) {
  char *abs = tpuci__printf("%s/%s", d->w->root, d->rec->tree.files[f].path), *text = NULL;
  size_t len = 0;
  tpuci__pyblocks_t *now = &d->py_now[f];
  if (tpuci__read_file_max(abs, (size_t) 16 << 20, &text, &len) != 0 ||
      tpuci__pyblocks_scan(text, len, now) != 0) {
    tpuci__pyblocks_free(now);
    memset(now, 0, sizeof(*now));
  }
  d->top_moved[f] = now->top[0] == '\0' || strcmp(now->top, d->rec->py[f].top) != 0;
  free(text);
  free(abs);
}

static void tpuci__mark_needed(unsigned char *needed, const tpuci__deps_need_t *n) {
  size_t i;
  for (i = 0; i < n->whole.n; i++) needed[n->whole.v[i]] = 1;
  for (i = 0; i < n->top.n; i++) needed[n->top.v[i]] = 1;
  for (i = 0; i < n->nblocks; i++) needed[n->blocks[i].file] = 1;
}

static void tpuci__diff(tpuci__diff_t *d) {
  const tpuci__deps_rec_t *rec = d->rec;
  size_t i, n = rec->tree.n;
  d->state = tpuci__calloc(n + 1, 1);
  d->top_moved = tpuci__calloc(n + 1, 1);
  d->py_now = tpuci__calloc(n + 1, sizeof(*d->py_now));
  d->needed = tpuci__calloc(n + 1, 1);
  tpuci__mark_needed(d->needed, &rec->session);
  for (i = 0; i < rec->ntests; i++) tpuci__mark_needed(d->needed, &rec->tests[i].need);
  for (i = 0; i < n; i++) {
    const tpuci__dtree_file_t *was = &rec->tree.files[i];
    const tpuci__dtree_file_t *is = tpuci__dtree_get(d->now, was->path);
    d->state[i] = is == NULL ? TPUCI__GONE
                  : strcmp(was->id, TPUCI__DTREE_UNKNOWN) == 0 || strcmp(is->id, was->id) != 0
                      ? TPUCI__CHANGED
                      : TPUCI__SAME;
    if (d->state[i] == TPUCI__GONE) d->top_moved[i] = 1;
    else if (d->state[i] == TPUCI__CHANGED && rec->py[i].top[0] != '\0') tpuci__scan_now(d, i);
    else if (d->state[i] == TPUCI__CHANGED) d->top_moved[i] = 1;
  }
}

static void tpuci__diff_free(tpuci__diff_t *d) {
  size_t i;
  for (i = 0; i < d->rec->tree.n; i++) tpuci__pyblocks_free(&d->py_now[i]);
  free(d->py_now);
  free(d->state);
  free(d->top_moved);
  free(d->needed);
}

/* The file a need names: why it moved, or NULL. */
static const char *tpuci__file_moved(const tpuci__diff_t *d, size_t f) {
  if (d->state[f] == TPUCI__GONE) return "deleted";
  if (tpuci__unknown_id(d->rec->tree.files[f].id)) return "unknown";
  return d->state[f] == TPUCI__CHANGED ? "changed" : NULL;
}

static int tpuci__block_moved(const tpuci__diff_t *d, const tpuci__deps_bref_t *b) {
  const tpuci__pyblock_t *was, *is;
  if (tpuci__file_moved(d, b->file) == NULL) return 0;
  if (d->state[b->file] != TPUCI__CHANGED || d->py_now[b->file].top[0] == '\0') return 1;
  was = tpuci__pyblocks_find(&d->rec->py[b->file], b->name);
  is = tpuci__pyblocks_find(&d->py_now[b->file], b->name);
  return was == NULL || is == NULL || strcmp(was->hash, is->hash) != 0;
}

/* The first thing of `n` that moved: its path (the record's), or NULL.
 * The session's listings (collection's) count without test files: a new
 * test file runs its own tests. */
static const char *tpuci__need_moved(const tpuci__diff_t *d, const tpuci__deps_need_t *n,
                                     int session) {
  const tpuci__deps_rec_t *rec = d->rec;
  size_t i;
  for (i = 0; i < n->whole.n; i++)
    if (tpuci__file_moved(d, n->whole.v[i])) return rec->tree.files[n->whole.v[i]].path;
  for (i = 0; i < n->top.n; i++) {
    size_t f = n->top.v[i];
    if (tpuci__file_moved(d, f) && (d->top_moved[f] || tpuci__unknown_id(rec->tree.files[f].id)))
      return rec->tree.files[f].path;
  }
  for (i = 0; i < n->nblocks; i++)
    if (tpuci__block_moved(d, &n->blocks[i])) return rec->tree.files[n->blocks[i].file].path;
  for (i = 0; i < n->dirs.n; i++) {
    const char *dir = rec->dirs.items[n->dirs.v[i]], *was = rec->dir_ids.items[n->dirs.v[i]];
    char now[130];
    tpuci__dtree_listing(d->w->root, dir, d->w->ignore, &rec->python_files, now);
    if (session ? strcmp(strchr(now, ' '), strchr(was, ' ')) != 0
                : strncmp(now, was, (size_t) (strchr(was, ' ') - was)) != 0)
      return dir;
  }
  for (i = 0; i < n->probes.n; i++) {
    const char *p = rec->probes.items[n->probes.v[i]];
    char *abs = tpuci__printf("%s/%s", d->w->root, p);
    char now = tpuci__dtree_probe(abs);
    free(abs);
    if (now != rec->probe_states[n->probes.v[i]]) return p;
  }
  return NULL;
}

/* Whether some test listed the folder of `path` or probed `path`. */
static int tpuci__seen_by_listing(const tpuci__deps_rec_t *rec, const char *path) {
  const char *slash = strrchr(path, '/');
  char *dir = slash ? tpuci__strndup(path, (size_t) (slash - path)) : tpuci__strdup(".");
  size_t i;
  int seen = 0;
  for (i = 0; i < rec->dirs.len && !seen; i++) seen = strcmp(rec->dirs.items[i], dir) == 0;
  for (i = 0; i < rec->probes.len && !seen; i++) seen = strcmp(rec->probes.items[i], path) == 0;
  free(dir);
  return seen;
}

/* A change nothing accounts for: why every test runs (a new string), or
 * NULL. Each change is also listed in out->changed. */
static char *tpuci__unaccounted(const tpuci__diff_t *d, tpuci__deps_sel_t *out) {
  const tpuci__deps_rec_t *rec = d->rec;
  char *why = NULL;
  size_t i;
  for (i = 0; i < d->now->n; i++) {
    const char *p = d->now->files[i].path;
    if (tpuci__dtree_get(&rec->tree, p) != NULL) continue;
    tpuci__strv_push(&out->changed, p);
    if (why != NULL || tpuci__dtree_test_file(p, &rec->python_files)) continue;
    if (tpuci__decides(p))
      why = tpuci__printf("%s is new, and may change what is imported, collected or configured", p);
    else if (!tpuci__seen_by_listing(rec, p))
      why = tpuci__printf("%s is new, and no record accounts for it", p);
  }
  for (i = 0; i < rec->tree.n; i++) {
    const char *p = rec->tree.files[i].path;
    int py_unused = tpuci__has_suffix(p, ".py") && !(rec->flags[i] & TPUCI__DEPS_IMPORTED);
    if (d->state[i] == TPUCI__SAME) continue;
    tpuci__strv_push(&out->changed, p);
    if (why != NULL || d->needed[i] || py_unused || (rec->flags[i] & TPUCI__DEPS_WRITTEN)) continue;
    if (d->state[i] == TPUCI__GONE && tpuci__seen_by_listing(rec, p)) continue;
    why = tpuci__printf("%s %s, and no record accounts for it", p,
                        d->state[i] == TPUCI__GONE ? "was deleted" : "changed");
  }
  return why;
}

static void tpuci__sel_all(tpuci__deps_sel_t *out, char *why) {
  out->all = 1;
  free(out->why);
  out->why = why;
  tpuci__idmap_free(&out->unaffected);
  tpuci__idmap_init(&out->unaffected);
  tpuci__idmap_free(&out->audited);
  tpuci__idmap_init(&out->audited);
  out->nunaffected = out->naudit = 0;
  free(out->arg);
  out->arg = tpuci__strdup("record");
}

void tpuci__deps_sel_free(tpuci__deps_sel_t *sel) {
  free(sel->why);
  free(sel->arg);
  free(sel->incomplete_why);
  tpuci__idmap_free(&sel->unaffected);
  tpuci__idmap_free(&sel->audited);
  tpuci__strv_free(&sel->changed);
  tpuci__dtree_free(&sel->start);
  memset(sel, 0, sizeof(*sel));
}

/* Whether the test `id`'s file matches a glob of select_always. */
static int tpuci__always(const tpuci__strv_t *always, const char *id) {
  char *f = tpuci__strndup(id, strcspn(id, ":"));
  size_t g;
  int hit = 0;
  for (g = 0; always != NULL && g < always->len && !hit; g++)
    hit = tpuci__glob_match(always->items[g], f);
  free(f);
  return hit;
}

/* xorshift: the audit's sample, the same for the same seed. */
static unsigned long tpuci__next(unsigned long *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* The skip and audit lines; `left` per test: 1 left out, 2 audited. */
static void tpuci__lines(tpuci__deps_sel_t *out, const tpuci__deps_rec_t *rec, unsigned char *left,
                         const tpuci__deps_where_t *w) {
  tpuci__buf_t b;
  size_t i, want = 0, nleft = out->nunaffected;
  unsigned long s = w->seed ? w->seed : 0x9e3779b97f4a7c15UL;
  if (w->audit > 0 && nleft > 0) {
    want = (size_t) (w->audit * (double) nleft + 0.999999);
    if (want > nleft) want = nleft;
  }
  /* A partial Fisher-Yates over the left-out tests' indices. */
  if (want > 0) {
    size_t *ix = tpuci__malloc(nleft * sizeof(*ix)), k = 0;
    for (i = 0; i < rec->ntests; i++)
      if (left[i]) ix[k++] = i;
    for (k = 0; k < want; k++) {
      size_t j = k + tpuci__next(&s) % (nleft - k), t = ix[k];
      ix[k] = ix[j];
      ix[j] = t;
      left[ix[k]] = 2;
    }
    free(ix);
  }
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "record");
  for (i = 0; i < rec->ntests; i++) {
    if (left[i] == 1) {
      tpuci__buf_addf(&b, "\nskip %s", rec->tests[i].id);
      tpuci__idmap_put(&out->unaffected, rec->tests[i].id, i);
    } else if (left[i] == 2) {
      tpuci__buf_addf(&b, "\naudit %s", rec->tests[i].id);
      tpuci__idmap_put(&out->audited, rec->tests[i].id, i);
    }
  }
  out->naudit = want;
  out->nunaffected = nleft - want;
  out->arg = tpuci__buf_steal(&b);
}

void tpuci__deps_select(const tpuci__deps_rec_t *rec, const char *key, const tpuci__deps_where_t *w,
                        size_t max_bytes, tpuci__deps_sel_t *out) {
  tpuci__diff_t d;
  unsigned char *left;
  char *why;
  size_t i;

  memset(out, 0, sizeof(*out));
  tpuci__idmap_init(&out->unaffected);
  tpuci__idmap_init(&out->audited);
  tpuci__dtree_init(&out->start);
  if (w->root != NULL) {
    tpuci__dtree_opts_t o = {w->ignore, w->exclude, w->nexclude, rec ? &rec->tree : NULL};
    tpuci__err_t e = {0, NULL};
    out->has_start = tpuci__dtree_walk(w->root, &o, &out->start, &e) == 0;
    if (!out->has_start) {
      tpuci__sel_all(out, tpuci__printf("the project's files cannot be read (%s): every test "
                                        "runs, and nothing is recorded",
                                        e.msg));
      tpuci__err_clear(&e);
      return;
    }
  }
  if (rec == NULL) {
    tpuci__sel_all(out, tpuci__strdup("no record yet: every test runs and is recorded"));
    return;
  }
  out->recorded = rec->ntests;
  if (key == NULL || strcmp(rec->key, key) != 0) {
    tpuci__sel_all(out, tpuci__strdup("the record was made with other inputs (image, "
                                      "environment, command or topology): every test runs"));
    return;
  }
  if (!out->has_start) {
    tpuci__sel_all(out, tpuci__strdup("the project's folder on this machine is not known: "
                                      "every test runs"));
    return;
  }
  if (rec->session.why != NULL) {
    tpuci__sel_all(out, tpuci__printf("the record's session is incomplete (%s): every test runs",
                                      rec->session.why));
    return;
  }
  memset(&d, 0, sizeof(d));
  d.rec = rec;
  d.w = w;
  d.now = &out->start;
  tpuci__diff(&d);
  why = NULL;
  {
    const char *moved = tpuci__need_moved(&d, &rec->session, 1);
    size_t k;
    for (k = 0; moved != NULL && k < rec->dirs.len && moved != rec->dirs.items[k]; k++) continue;
    if (moved != NULL && k < rec->dirs.len)
      why = tpuci__printf("a file other than a test file appeared in or left %s%s, a folder "
                          "the session lists (collection)",
                          strcmp(moved, ".") == 0 ? "the project's folder" : moved,
                          strcmp(moved, ".") == 0 ? "" : "/");
    else if (moved != NULL)
      why = tpuci__printf("%s changed, which the whole session needs (collection, "
                          "configuration, conftest.py)",
                          moved);
  }
  if (why == NULL) why = tpuci__unaccounted(&d, out);
  else tpuci__unaccounted(&d, out);
  if (why != NULL) {
    char *all = tpuci__printf("%s: every test runs", why);
    free(why);
    tpuci__diff_free(&d);
    tpuci__sel_all(out, all);
    return;
  }
  left = tpuci__calloc(rec->ntests + 1, 1);
  for (i = 0; i < rec->ntests; i++) {
    const tpuci__deps_test_t *t = &rec->tests[i];
    if (tpuci__need_moved(&d, &t->need, 0) != NULL) {
      out->affected++;
    } else if (!t->passed) {
      out->failed_last++;
    } else if (t->need.why != NULL) {
      out->incomplete++;
      if (out->incomplete_why == NULL) out->incomplete_why = tpuci__strdup(t->need.why);
    } else if (tpuci__always(w->always, t->id)) {
      out->always++;
    } else {
      left[i] = 1;
      out->nunaffected++;
    }
  }
  tpuci__diff_free(&d);
  tpuci__lines(out, rec, left, w);
  free(left);
  if (strlen(out->arg) > max_bytes) {
    out->recorded = rec->ntests;
    tpuci__sel_all(out, tpuci__strdup("the tests to leave out are too many to name: every "
                                      "test runs"));
  }
}

char *tpuci__deps_sel_text(const tpuci__deps_sel_t *sel) {
  tpuci__buf_t b;
  size_t run = sel->recorded - sel->nunaffected;
  tpuci__buf_init(&b);
  if (sel->all) {
    tpuci__safe_add(&b, sel->why, strlen(sel->why), 0);
    return tpuci__buf_steal(&b);
  }
  tpuci__buf_addf(&b, "%zu of %zu recorded test%s run%s: %zu affected", run, sel->recorded,
                  sel->recorded == 1 ? "" : "s", run == 1 ? "s" : "", sel->affected);
  if (sel->changed.len > 0) {
    tpuci__buf_adds(&b, " (changed since: ");
    tpuci__safe_add(&b, sel->changed.items[0], strlen(sel->changed.items[0]), 0);
    if (sel->changed.len > 1)
      tpuci__buf_addf(&b, " and %zu more file%s", sel->changed.len - 1,
                      sel->changed.len == 2 ? "" : "s");
    tpuci__buf_adds(&b, ")");
  }
  tpuci__buf_addf(&b, ", %zu failed last time", sel->failed_last);
  if (sel->incomplete > 0) {
    tpuci__buf_addf(&b, ", %zu incomplete (", sel->incomplete);
    tpuci__safe_add(&b, sel->incomplete_why, strlen(sel->incomplete_why), 0);
    tpuci__buf_adds(&b, sel->incomplete > 1 ? ", ...)" : ")");
  }
  if (sel->always > 0) tpuci__buf_addf(&b, ", %zu always (select_always)", sel->always);
  if (sel->naudit > 0) tpuci__buf_addf(&b, ", %zu left out but run as the audit", sel->naudit);
  tpuci__buf_adds(&b, "; new tests run too");
  return tpuci__buf_steal(&b);
}
