/* What a run recorded, and the record made new from it (deps.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kind/pytest/deps_internal.h"
#include "runtime/tree.h"

/* One attempt's deps.jsonl: far beyond any suite's. */
#define TPUCI__DEPS_JSONL_MAX ((size_t) 256 << 20)
#define TPUCI__DEPS_PY_MAX ((size_t) 16 << 20)

static void tpuci__raw_free(tpuci__deps_raw_t *r) {
  tpuci__strv_free(&r->read);
  tpuci__strv_free(&r->mods);
  tpuci__strv_free(&r->list);
  tpuci__strv_free(&r->probe);
  tpuci__strv_free(&r->wrote);
  tpuci__strv_free(&r->code_files);
  free(r->code_lines);
  free(r->why);
  memset(r, 0, sizeof(*r));
}

void tpuci__deps_fresh_init(tpuci__deps_fresh_t *f) {
  memset(f, 0, sizeof(*f));
  tpuci__idmap_init(&f->map);
}

void tpuci__deps_fresh_free(tpuci__deps_fresh_t *f) {
  size_t i;
  for (i = 0; i < f->ids.len; i++) tpuci__raw_free(&f->tests[i]);
  free(f->tests);
  tpuci__strv_free(&f->ids);
  tpuci__idmap_free(&f->map);
  tpuci__raw_free(&f->session);
  tpuci__strv_free(&f->imported);
  tpuci__strv_free(&f->python_files);
  free(f->rootdir);
  free(f->off);
  tpuci__deps_fresh_init(f);
}

static void tpuci__why(tpuci__deps_raw_t *r, const char *why) {
  if (r->why == NULL) r->why = tpuci__strdup(why);
}

/* The paths of `a` into v; one the record cannot hold makes r incomplete. */
static void tpuci__paths(tpuci__deps_raw_t *r, tpuci__strv_t *v, const json_t *a) {
  size_t i;
  json_t *x;
  json_array_foreach(a, i, x) {
    const char *p = json_string_value(x);
    if (tpuci__deps_path_ok(p)) tpuci__strv_push(v, p);
    else tpuci__why(r, "a path the record cannot hold");
  }
}

static void tpuci__raw_json(tpuci__deps_raw_t *r, const json_t *o) {
  const json_t *code = json_object_get(o, "code"), *why = json_object_get(o, "why"), *c;
  size_t i, n;
  tpuci__paths(r, &r->read, json_object_get(o, "read"));
  tpuci__paths(r, &r->mods, json_object_get(o, "mods"));
  tpuci__paths(r, &r->list, json_object_get(o, "list"));
  tpuci__paths(r, &r->probe, json_object_get(o, "probe"));
  tpuci__paths(r, &r->wrote, json_object_get(o, "wrote"));
  n = r->code_files.len + json_array_size(code);
  r->code_lines = tpuci__realloc(r->code_lines, (n + 1) * sizeof(*r->code_lines));
  json_array_foreach(code, i, c) {
    const char *p = json_string_value(json_array_get(c, 0));
    json_int_t line = json_integer_value(json_array_get(c, 1));
    if (!tpuci__deps_path_ok(p) || line < 0 || line > 10000000) {
      tpuci__why(r, "a path the record cannot hold");
      continue;
    }
    r->code_lines[r->code_files.len] = (int) line;
    tpuci__strv_push(&r->code_files, p);
  }
  if (json_is_string(why)) {
    const char *w = json_string_value(why);
    tpuci__why(r, tpuci__deps_text_ok(w) ? w : "a reason the record cannot hold");
  }
}

static void tpuci__strv_json(tpuci__strv_t *v, const json_t *a, int paths) {
  size_t i;
  json_t *x;
  json_array_foreach(a, i, x) {
    const char *s = json_string_value(x);
    if (paths ? tpuci__deps_path_ok(s) : tpuci__deps_text_ok(s)) tpuci__strv_push(v, s);
  }
}

/* One line of deps.jsonl. */
static void tpuci__fresh_line(tpuci__deps_fresh_t *f, const json_t *o) {
  const char *id = json_string_value(json_object_get(o, "t"));
  if (id != NULL) {
    size_t k;
    if (!tpuci__deps_text_ok(id)) return; /* never left out: it always runs */
    k = tpuci__idmap_get(&f->map, id);
    if (k == TPUCI__IDMAP_NONE) {
      tpuci__strv_push(&f->ids, id);
      k = f->ids.len - 1;
      f->tests = tpuci__realloc(f->tests, f->ids.len * sizeof(*f->tests));
      memset(&f->tests[k], 0, sizeof(f->tests[k]));
      tpuci__idmap_put(&f->map, f->ids.items[k], k);
    } else {
      tpuci__raw_free(&f->tests[k]);
    }
    tpuci__raw_json(&f->tests[k], o);
  } else if (json_is_true(json_object_get(o, "session"))) {
    const char *ini = json_string_value(json_object_get(o, "ini"));
    f->nsessions++;
    tpuci__raw_json(&f->session, o);
    if (ini != NULL && tpuci__deps_path_ok(ini)) tpuci__strv_push(&f->session.read, ini);
    tpuci__strv_json(&f->imported, json_object_get(o, "imported"), 1);
    if (f->python_files.len == 0)
      tpuci__strv_json(&f->python_files, json_object_get(o, "python_files"), 0);
  } else if (json_string_value(json_object_get(o, "off")) != NULL && f->off == NULL) {
    const char *off = json_string_value(json_object_get(o, "off"));
    f->off = tpuci__strdup(tpuci__deps_text_ok(off) ? off : "off");
  }
}

void tpuci__deps_fresh_add(tpuci__deps_fresh_t *f, const char *results_dir, const char *rootdir) {
  char *path = tpuci__printf("%s/%s", results_dir, TPUCI__DEPS_FILE), *text = NULL, *line, *nl;
  size_t len = 0;
  if (tpuci__read_file_max(path, TPUCI__DEPS_JSONL_MAX, &text, &len) != 0) {
    free(path);
    free(text);
    return;
  }
  if (rootdir != NULL && f->rootdir == NULL) f->rootdir = tpuci__strdup(rootdir);
  for (line = text; line < text + len; line = nl + 1) {
    json_t *o;
    nl = memchr(line, '\n', (size_t) (text + len - line));
    if (nl == NULL) nl = text + len;
    o = json_loadb(line, (size_t) (nl - line), 0, NULL);
    if (json_is_object(o)) tpuci__fresh_line(f, o);
    json_decref(o);
  }
  free(text);
  free(path);
}

/* ------------------------------------------------------------------ */
/* The record made new                                                 */

/* Whether the final result of test `id` in one of the histories passes
 * (or skips), neither flaky nor order-dependent. */
static int tpuci__passed_in(const tpuci__history_t *const *hs, size_t nh, const char *id) {
  size_t i;
  for (i = 0; i < nh; i++) {
    const tpuci__history_t *h = hs[i];
    size_t k = h ? tpuci__idmap_get(&h->map, id) : TPUCI__IDMAP_NONE;
    const tpuci__test_t *fin;
    if (k == TPUCI__IDMAP_NONE) continue;
    fin = tpuci__history_final(&h->tests[k]);
    return fin != NULL && !tpuci__test_outcome_failing(fin->outcome) &&
           fin->outcome != TPUCI_TEST_UNAFFECTED && !tpuci__history_flaky(&h->tests[k]) &&
           !h->tests[k].order_dep;
  }
  return 0;
}

typedef struct {
  tpuci__deps_rec_t *out;
  const tpuci__deps_rec_t *old;
  const tpuci__deps_where_t *w;
  unsigned char *moved; /* per out file: it changed while the run ran */
  size_t nmoved;
} tpuci__upd_t;

/* The out record's index of `path`: a file not in the tree (gone, or
 * behind another mount) is added as unknown. */
static size_t tpuci__file_ix(tpuci__upd_t *u, const char *path) {
  tpuci__deps_rec_t *out = u->out;
  const tpuci__dtree_file_t *f = tpuci__dtree_get(&out->tree, path);
  tpuci__dtree_file_t unknown = {.path = (char *) path, .id = TPUCI__DTREE_UNKNOWN};
  size_t n = out->tree.n;
  if (f != NULL) return (size_t) (f - out->tree.files);
  tpuci__dtree_add(&out->tree, &unknown);
  tpuci__deps_rec_files(out, n);
  u->moved = tpuci__realloc(u->moved, out->tree.n + 1);
  u->moved[n] = 0;
  return n;
}

/* The functions of Python file `f` as the run read it: from the old record
 * when its content is the same, else read now (and only when what is
 * there now is what the run started with). 0, or -1: none. */
static int tpuci__table(tpuci__upd_t *u, size_t f) {
  tpuci__deps_rec_t *out = u->out;
  const tpuci__dtree_file_t *file = &out->tree.files[f];
  char *abs, *text = NULL, hex[65];
  size_t len = 0;
  if (out->py[f].top[0] != '\0') return 0;
  if (strlen(file->id) != 64 || u->moved[f]) return -1;
  if (u->old != NULL) {
    const tpuci__dtree_file_t *was = tpuci__dtree_get(&u->old->tree, file->path);
    size_t k = was ? (size_t) (was - u->old->tree.files) : 0;
    if (was != NULL && strcmp(was->id, file->id) == 0 && u->old->py[k].top[0] != '\0') {
      const tpuci__pyblocks_t *src = &u->old->py[k];
      tpuci__pyblocks_t *dst = &out->py[f];
      size_t i;
      memcpy(dst->top, src->top, sizeof(dst->top));
      dst->blocks = tpuci__calloc(src->n + 1, sizeof(*dst->blocks));
      for (i = 0; i < src->n; i++) {
        dst->blocks[i] = src->blocks[i];
        dst->blocks[i].name = tpuci__strdup(src->blocks[i].name);
      }
      dst->n = src->n;
      return 0;
    }
  }
  abs = tpuci__printf("%s/%s", u->w->root, file->path);
  if (tpuci__read_file_max(abs, TPUCI__DEPS_PY_MAX, &text, &len) == 0) {
    tpuci__sha256_hex(text, len, hex);
    if (strcmp(hex, file->id) == 0) tpuci__pyblocks_scan(text, len, &out->py[f]);
  }
  free(text);
  free(abs);
  return out->py[f].top[0] != '\0' ? 0 : -1;
}

static int tpuci__is_py(const char *path) {
  size_t n = strlen(path);
  return n > 3 && strcmp(path + n - 3, ".py") == 0;
}

static size_t tpuci__dir_ix(tpuci__upd_t *u, const char *dir) {
  tpuci__deps_rec_t *out = u->out;
  char id[130];
  size_t i;
  for (i = 0; i < out->dirs.len; i++)
    if (strcmp(out->dirs.items[i], dir) == 0) return i;
  tpuci__dtree_listing(u->w->root, dir, u->w->ignore, &out->python_files, id);
  tpuci__strv_push(&out->dirs, dir);
  tpuci__strv_push(&out->dir_ids, id);
  return out->dirs.len - 1;
}

static size_t tpuci__probe_ix(tpuci__upd_t *u, const char *path) {
  tpuci__deps_rec_t *out = u->out;
  char *abs;
  size_t i;
  for (i = 0; i < out->probes.len; i++)
    if (strcmp(out->probes.items[i], path) == 0) return i;
  abs = tpuci__printf("%s/%s", u->w->root, path);
  tpuci__strv_push(&out->probes, path);
  out->probe_states = tpuci__realloc(out->probe_states, out->probes.len + 1);
  out->probe_states[out->probes.len - 1] = tpuci__dtree_probe(abs);
  out->probe_states[out->probes.len] = '\0';
  free(abs);
  return out->probes.len - 1;
}

/* Whether select_ignore says a path never matters. */
static int tpuci__never(const tpuci__upd_t *u, const char *path) {
  size_t g;
  for (g = 0; u->w->ignore != NULL && g < u->w->ignore->len; g++)
    if (tpuci__glob_match(u->w->ignore->items[g], path)) return 1;
  return 0;
}

/* Whether a path that matters is one the snapshot leaves out (.git,
 * .tpuci, a virtual environment...): a test that needs it cannot be
 * followed. Sets n's why then. */
static int tpuci__unseen(tpuci__deps_need_t *n, const char *path) {
  if (!tpuci__dtree_ignored(path, NULL)) return 0;
  if (n->why == NULL)
    n->why = tpuci__printf("it needs %s, which the project's snapshot leaves out", path);
  return 1;
}

/* What a process recorded, as the record keeps it. */
static void tpuci__need_of(tpuci__upd_t *u, const tpuci__deps_raw_t *r, tpuci__deps_need_t *n) {
  tpuci__deps_rec_t *out = u->out;
  size_t i, f;
  for (i = 0; i < r->read.len; i++)
    if (!tpuci__never(u, r->read.items[i]) && !tpuci__unseen(n, r->read.items[i]))
      tpuci__deps_ix_push(&n->whole, tpuci__file_ix(u, r->read.items[i]));
  for (i = 0; i < r->mods.len; i++) {
    if (tpuci__never(u, r->mods.items[i]) || tpuci__unseen(n, r->mods.items[i])) continue;
    f = tpuci__file_ix(u, r->mods.items[i]);
    tpuci__deps_ix_push(&n->top, f);
    out->flags[f] |= TPUCI__DEPS_IMPORTED;
    if (tpuci__is_py(r->mods.items[i])) tpuci__table(u, f);
  }
  for (i = 0; i < r->code_files.len; i++) {
    const tpuci__pyblock_t *b;
    if (tpuci__never(u, r->code_files.items[i]) || tpuci__unseen(n, r->code_files.items[i]))
      continue;
    f = tpuci__file_ix(u, r->code_files.items[i]);
    out->flags[f] |= TPUCI__DEPS_IMPORTED;
    /* Running a function needs its module's top level too (its def). */
    tpuci__deps_ix_push(&n->top, f);
    if (tpuci__table(u, f) == 0 && (b = tpuci__pyblocks_at(&out->py[f], r->code_lines[i])))
      tpuci__deps_need_block(n, f, b->name);
    else if (out->py[f].top[0] == '\0') tpuci__deps_ix_push(&n->whole, f);
  }
  /* What tools write beside the sources (.tpuci's runs, caches) is no
   * listing or probe of the project's. */
  for (i = 0; i < r->list.len; i++)
    if (!tpuci__dtree_ignored(r->list.items[i], u->w->ignore))
      tpuci__deps_ix_push(&n->dirs, tpuci__dir_ix(u, r->list.items[i]));
  for (i = 0; i < r->probe.len; i++)
    if (!tpuci__dtree_ignored(r->probe.items[i], u->w->ignore))
      tpuci__deps_ix_push(&n->probes, tpuci__probe_ix(u, r->probe.items[i]));
  for (i = 0; i < r->wrote.len; i++)
    if (!tpuci__dtree_ignored(r->wrote.items[i], u->w->ignore))
      out->flags[tpuci__file_ix(u, r->wrote.items[i])] |= TPUCI__DEPS_WRITTEN;
  if (r->why != NULL && n->why == NULL) n->why = tpuci__strdup(r->why);
}

/* A left-out test's need, from the old record's indices to the new's.
 * 0, or -1 when a folder's listing or a path it probed moved since (it
 * must run next time). */
static int tpuci__need_copy(tpuci__upd_t *u, const tpuci__deps_need_t *o, tpuci__deps_need_t *n) {
  const tpuci__deps_rec_t *old = u->old;
  size_t i, k;
  int same = 0;
  for (i = 0; i < o->whole.n; i++)
    tpuci__deps_ix_push(&n->whole, tpuci__file_ix(u, old->tree.files[o->whole.v[i]].path));
  for (i = 0; i < o->top.n; i++) {
    size_t f = tpuci__file_ix(u, old->tree.files[o->top.v[i]].path);
    tpuci__deps_ix_push(&n->top, f);
    if (tpuci__is_py(u->out->tree.files[f].path)) tpuci__table(u, f);
  }
  for (i = 0; i < o->nblocks; i++) {
    size_t f = tpuci__file_ix(u, old->tree.files[o->blocks[i].file].path);
    tpuci__table(u, f);
    tpuci__deps_need_block(n, f, o->blocks[i].name);
  }
  for (i = 0; i < o->dirs.n; i++) {
    k = tpuci__dir_ix(u, old->dirs.items[o->dirs.v[i]]);
    tpuci__deps_ix_push(&n->dirs, k);
    if (strcmp(u->out->dir_ids.items[k], old->dir_ids.items[o->dirs.v[i]]) != 0) same = -1;
  }
  for (i = 0; i < o->probes.n; i++) {
    k = tpuci__probe_ix(u, old->probes.items[o->probes.v[i]]);
    tpuci__deps_ix_push(&n->probes, k);
    if (u->out->probe_states[k] != old->probe_states[o->probes.v[i]]) same = -1;
  }
  return same;
}

/* Whether any need of the record names file f. */
static int tpuci__needed(const tpuci__deps_rec_t *rec, size_t f) {
  const tpuci__deps_need_t *n;
  size_t t, i;
  for (t = 0; t <= rec->ntests; t++) {
    n = t < rec->ntests ? &rec->tests[t].need : &rec->session;
    for (i = 0; i < n->whole.n; i++)
      if (n->whole.v[i] == f) return 1;
    for (i = 0; i < n->top.n; i++)
      if (n->top.v[i] == f) return 1;
    for (i = 0; i < n->nblocks; i++)
      if (n->blocks[i].file == f) return 1;
  }
  return 0;
}

/* The tree as the run started, the files it changed marked. */
static void tpuci__start_tree(tpuci__upd_t *u, const tpuci__deps_sel_t *sel) {
  tpuci__deps_rec_t *out = u->out;
  tpuci__dtree_opts_t o = {u->w->ignore, u->w->exclude, u->w->nexclude, &sel->start};
  tpuci__dtree_t end;
  tpuci__err_t e = {0, NULL};
  size_t i;
  int have_end = tpuci__dtree_walk(u->w->root, &o, &end, &e) == 0;
  tpuci__err_clear(&e);
  for (i = 0; i < sel->start.n; i++) {
    const tpuci__dtree_file_t *f = &sel->start.files[i];
    tpuci__dtree_add(&out->tree, f);
  }
  /* What appeared while the run ran: as it is at the end. */
  for (i = 0; have_end && i < end.n; i++) {
    const tpuci__dtree_file_t *f = &end.files[i];
    if (tpuci__dtree_get(&sel->start, f->path) == NULL) tpuci__dtree_add(&out->tree, f);
  }
  tpuci__dtree_sort(&out->tree);
  tpuci__deps_rec_files(out, 0);
  u->moved = tpuci__calloc(out->tree.n + 1, 1);
  for (i = 0; i < out->tree.n; i++) {
    const tpuci__dtree_file_t *s = tpuci__dtree_get(&sel->start, out->tree.files[i].path);
    const tpuci__dtree_file_t *x =
        have_end ? tpuci__dtree_get(&end, out->tree.files[i].path) : NULL;
    u->moved[i] = !have_end || s == NULL || x == NULL || strcmp(s->id, x->id) != 0;
  }
  if (have_end) tpuci__dtree_free(&end);
}

int tpuci__deps_update(tpuci__deps_rec_t *out, const tpuci__deps_ran_t *ran,
                       const tpuci__deps_where_t *w) {
  const tpuci__deps_rec_t *old = ran->old;
  const tpuci__deps_sel_t *sel = ran->sel;
  const tpuci__deps_fresh_t *fresh = ran->fresh;
  tpuci__upd_t u;
  size_t i;
  tpuci__deps_rec_init(out);
  if (fresh->off != NULL || !sel->has_start || w->root == NULL || fresh->nsessions == 0) return 1;
  memset(&u, 0, sizeof(u));
  u.out = out;
  u.old = old;
  u.w = w;
  out->key = tpuci__strdup(ran->key);
  out->run = tpuci__strdup(ran->run);
  out->root = tpuci__strdup(ran->root_saved ? ran->root_saved : ".");
  tpuci__start_tree(&u, sel);
  tpuci__strv_copy(&out->python_files, &fresh->python_files);
  tpuci__need_of(&u, &fresh->session, &out->session);
  for (i = 0; i < fresh->imported.len; i++)
    out->flags[tpuci__file_ix(&u, fresh->imported.items[i])] |= TPUCI__DEPS_IMPORTED;
  for (i = 0; i < fresh->ids.len; i++) {
    tpuci__deps_test_t *t = tpuci__deps_rec_test(out, fresh->ids.items[i]);
    tpuci__need_of(&u, &fresh->tests[i], &t->need);
    t->passed = tpuci__passed_in(ran->hs, ran->nh, t->id);
    t->run = t->passed ? tpuci__strdup(ran->run) : NULL;
  }
  /* The tests left out keep what the old record said of them. */
  for (i = 0; old != NULL && i < old->ntests; i++) {
    const tpuci__deps_test_t *o = &old->tests[i];
    tpuci__deps_test_t *t;
    if (tpuci__idmap_get(&sel->unaffected, o->id) == TPUCI__IDMAP_NONE ||
        tpuci__idmap_get(&out->tmap, o->id) != TPUCI__IDMAP_NONE)
      continue;
    t = tpuci__deps_rec_test(out, o->id);
    t->passed = tpuci__need_copy(&u, &o->need, &t->need) == 0 && o->passed;
    t->run = t->passed && o->run ? tpuci__strdup(o->run) : NULL;
    if (o->need.why) t->need.why = tpuci__strdup(o->need.why);
  }
  /* A file that changed while the suite ran: unknown to those who need
   * it (which content did they read?), the suite's own output to the
   * others. */
  for (i = 0; i < out->tree.n; i++) {
    if (w->late && tpuci__needed(out, i))
      snprintf(out->tree.files[i].id, sizeof(out->tree.files[i].id), "%s", TPUCI__DTREE_UNKNOWN);
    if (!u.moved[i]) continue;
    if (tpuci__needed(out, i)) {
      snprintf(out->tree.files[i].id, sizeof(out->tree.files[i].id), "%s", TPUCI__DTREE_UNKNOWN);
    } else {
      char *abs = tpuci__printf("%s/%s", w->root, out->tree.files[i].path);
      tpuci__dtree_file_id(abs, out->tree.files[i].id);
      out->flags[i] |= TPUCI__DEPS_WRITTEN;
      free(abs);
    }
  }
  free(u.moved);
  return out->ntests > TPUCI__DEPS_MAX_TESTS;
}
