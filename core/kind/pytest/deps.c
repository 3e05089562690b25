/* What each test of a pytest job needs: the record and its store
 * (deps.h). The rule is in deps_select.c, the record made new after a run
 * in deps_update.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <uv.h>

#include "kind/pytest/deps_internal.h"

#define TPUCI__DEPS_FORMAT 2

void tpuci__deps_ix_push(tpuci__deps_ix_t *x, size_t k) {
  size_t i;
  for (i = 0; i < x->n; i++)
    if (x->v[i] == k) return;
  if (x->n == x->cap) {
    x->cap = x->cap ? 2 * x->cap : 8;
    x->v = tpuci__realloc(x->v, x->cap * sizeof(*x->v));
  }
  x->v[x->n++] = k;
}

void tpuci__deps_need_block(tpuci__deps_need_t *n, size_t file, const char *name) {
  size_t i;
  for (i = 0; i < n->nblocks; i++)
    if (n->blocks[i].file == file && strcmp(n->blocks[i].name, name) == 0) return;
  if (n->nblocks == n->cap) {
    n->cap = n->cap ? 2 * n->cap : 8;
    n->blocks = tpuci__realloc(n->blocks, n->cap * sizeof(*n->blocks));
  }
  n->blocks[n->nblocks].file = file;
  n->blocks[n->nblocks++].name = tpuci__strdup(name);
}

void tpuci__deps_need_free(tpuci__deps_need_t *n) {
  size_t i;
  free(n->whole.v);
  free(n->top.v);
  free(n->dirs.v);
  free(n->probes.v);
  for (i = 0; i < n->nblocks; i++) free(n->blocks[i].name);
  free(n->blocks);
  free(n->why);
  memset(n, 0, sizeof(*n));
}

void tpuci__deps_rec_init(tpuci__deps_rec_t *rec) {
  memset(rec, 0, sizeof(*rec));
  tpuci__dtree_init(&rec->tree);
  tpuci__idmap_init(&rec->tmap);
}

void tpuci__deps_rec_free(tpuci__deps_rec_t *rec) {
  size_t i;
  free(rec->key);
  free(rec->root);
  free(rec->run);
  for (i = 0; rec->py != NULL && i < rec->tree.n; i++) tpuci__pyblocks_free(&rec->py[i]);
  free(rec->py);
  free(rec->flags);
  tpuci__dtree_free(&rec->tree);
  tpuci__strv_free(&rec->dirs);
  tpuci__strv_free(&rec->dir_ids);
  tpuci__strv_free(&rec->probes);
  free(rec->probe_states);
  tpuci__strv_free(&rec->python_files);
  tpuci__deps_need_free(&rec->session);
  for (i = 0; i < rec->ntests; i++) {
    free(rec->tests[i].id);
    free(rec->tests[i].run);
    tpuci__deps_need_free(&rec->tests[i].need);
  }
  free(rec->tests);
  tpuci__idmap_free(&rec->tmap);
  tpuci__deps_rec_init(rec);
}

/* Room for the per-file arrays after the tree grew to `n` files. */
void tpuci__deps_rec_files(tpuci__deps_rec_t *rec, size_t old_n) {
  size_t n = rec->tree.n;
  rec->py = tpuci__realloc(rec->py, (n + 1) * sizeof(*rec->py));
  rec->flags = tpuci__realloc(rec->flags, n + 1);
  if (n > old_n) {
    memset(&rec->py[old_n], 0, (n - old_n) * sizeof(*rec->py));
    memset(&rec->flags[old_n], 0, n - old_n);
  }
}

tpuci__deps_test_t *tpuci__deps_rec_test(tpuci__deps_rec_t *rec, const char *id) {
  tpuci__deps_test_t *t;
  if (rec->ntests == rec->cap) {
    rec->cap = rec->cap ? 2 * rec->cap : 64;
    rec->tests = tpuci__realloc(rec->tests, rec->cap * sizeof(*rec->tests));
  }
  t = &rec->tests[rec->ntests];
  memset(t, 0, sizeof(*t));
  t->id = tpuci__strdup(id);
  tpuci__idmap_put(&rec->tmap, t->id, rec->ntests++);
  return t;
}

/* ------------------------------------------------------------------ */
/* Reading, validated                                                  */

/* Text a record may hold: no control character (a newline would forge a
 * skip line or a console line). */
int tpuci__deps_text_ok(const char *s) {
  const unsigned char *p;
  if (s == NULL || *s == '\0') return 0;
  for (p = (const unsigned char *) s; *p; p++)
    if (*p < 0x20 || *p == 0x7f) return 0;
  return 1;
}

/* A path relative to the root that stays in it. */
int tpuci__deps_path_ok(const char *s) {
  const char *p;
  if (!tpuci__deps_text_ok(s) || s[0] == '/') return 0;
  if (strcmp(s, ".") == 0) return 1;
  for (p = s;;) {
    size_t n = strcspn(p, "/");
    if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) return 0;
    if (p[n] == '\0') return 1;
    p += n + 1;
  }
}

static const char *tpuci__jstr(const json_t *o, const char *k) {
  return json_string_value(json_object_get(o, k));
}

/* Indices in `a`, each below `n`, into x: 0, or -1. */
static int tpuci__ix_json(const json_t *a, size_t n, tpuci__deps_ix_t *x) {
  size_t i;
  json_t *v;
  if (a == NULL) return 0;
  if (!json_is_array(a)) return -1;
  json_array_foreach(a, i, v) {
    json_int_t k = json_integer_value(v);
    if (!json_is_integer(v) || k < 0 || (size_t) k >= n) return -1;
    tpuci__deps_ix_push(x, (size_t) k);
  }
  return 0;
}

static int tpuci__need_json(const json_t *o, const tpuci__deps_rec_t *rec, tpuci__deps_need_t *n) {
  const json_t *b = json_object_get(o, "b"), *why = json_object_get(o, "why"), *v;
  size_t i;
  if (!json_is_object(o)) return -1;
  if (tpuci__ix_json(json_object_get(o, "w"), rec->tree.n, &n->whole) != 0 ||
      tpuci__ix_json(json_object_get(o, "t"), rec->tree.n, &n->top) != 0 ||
      tpuci__ix_json(json_object_get(o, "d"), rec->dirs.len, &n->dirs) != 0 ||
      tpuci__ix_json(json_object_get(o, "p"), rec->probes.len, &n->probes) != 0)
    return -1;
  if (b != NULL && !json_is_array(b)) return -1;
  json_array_foreach(b, i, v) {
    json_int_t k = json_integer_value(json_array_get(v, 0));
    const char *name = json_string_value(json_array_get(v, 1));
    if (!json_is_integer(json_array_get(v, 0)) || k < 0 || (size_t) k >= rec->tree.n ||
        !tpuci__deps_text_ok(name))
      return -1;
    tpuci__deps_need_block(n, (size_t) k, name);
  }
  if (why != NULL && !json_is_null(why)) {
    if (!tpuci__deps_text_ok(json_string_value(why))) return -1;
    n->why = tpuci__strdup(json_string_value(why));
  }
  return 0;
}

static int tpuci__files_json(const json_t *a, tpuci__deps_rec_t *rec) {
  size_t i;
  json_t *v;
  if (!json_is_array(a) || json_array_size(a) > TPUCI__DTREE_MAX_FILES) return -1;
  json_array_foreach(a, i, v) {
    const char *p = json_string_value(json_array_get(v, 0));
    const char *id = json_string_value(json_array_get(v, 1));
    json_int_t fl = json_integer_value(json_array_get(v, 6));
    tpuci__dtree_file_t f;
    if (!tpuci__deps_path_ok(p) || id == NULL || strlen(id) >= 96 || !tpuci__deps_text_ok(id) ||
        tpuci__dtree_get(&rec->tree, p) != NULL)
      return -1;
    f.path = (char *) p;
    snprintf(f.id, sizeof(f.id), "%s", id);
    f.size = json_integer_value(json_array_get(v, 2));
    f.mtime_ns = json_integer_value(json_array_get(v, 3));
    f.ctime_ns = json_integer_value(json_array_get(v, 4));
    f.ino = (uint64_t) json_integer_value(json_array_get(v, 5));
    tpuci__dtree_add(&rec->tree, &f);
    tpuci__deps_rec_files(rec, rec->tree.n - 1);
    rec->flags[rec->tree.n - 1] = (unsigned char) (fl & 3);
  }
  return 0;
}

/* [[file, top, [[name, first, last, body, hash], ...]], ...] */
static int tpuci__py_json(const json_t *a, tpuci__deps_rec_t *rec) {
  size_t i, k;
  json_t *v, *b;
  if (a == NULL) return 0;
  if (!json_is_array(a)) return -1;
  json_array_foreach(a, i, v) {
    json_int_t f = json_integer_value(json_array_get(v, 0));
    const char *top = json_string_value(json_array_get(v, 1));
    const json_t *bs = json_array_get(v, 2);
    tpuci__pyblocks_t *py;
    if (!json_is_integer(json_array_get(v, 0)) || f < 0 || (size_t) f >= rec->tree.n ||
        top == NULL || strlen(top) != 64 || !json_is_array(bs) || rec->py[f].top[0] != '\0')
      return -1;
    py = &rec->py[f];
    snprintf(py->top, sizeof(py->top), "%s", top);
    py->blocks = tpuci__calloc(json_array_size(bs) + 1, sizeof(*py->blocks));
    json_array_foreach(bs, k, b) {
      tpuci__pyblock_t *pb = &py->blocks[py->n];
      const char *name = json_string_value(json_array_get(b, 0));
      const char *h = json_string_value(json_array_get(b, 4));
      if (!tpuci__deps_text_ok(name) || h == NULL || strlen(h) != 64) return -1;
      pb->name = tpuci__strdup(name);
      pb->first = (int) json_integer_value(json_array_get(b, 1));
      pb->last = (int) json_integer_value(json_array_get(b, 2));
      pb->body = (int) json_integer_value(json_array_get(b, 3));
      snprintf(pb->hash, sizeof(pb->hash), "%s", h);
      py->n++;
    }
  }
  return 0;
}

/* [[path, id], ...] into two lists. */
static int tpuci__pairs_json(const json_t *a, tpuci__strv_t *paths, tpuci__strv_t *ids) {
  size_t i;
  json_t *v;
  if (a == NULL) return 0;
  if (!json_is_array(a)) return -1;
  json_array_foreach(a, i, v) {
    const char *p = json_string_value(json_array_get(v, 0));
    const char *id = json_string_value(json_array_get(v, 1));
    if (!tpuci__deps_path_ok(p) || !tpuci__deps_text_ok(id)) return -1;
    tpuci__strv_push(paths, p);
    tpuci__strv_push(ids, id);
  }
  return 0;
}

/* Each listing "FULL TESTLESS": two words. */
static int tpuci__listings_ok(const tpuci__strv_t *ids) {
  size_t i;
  for (i = 0; i < ids->len; i++) {
    const char *sp = strchr(ids->items[i], ' ');
    if (sp == NULL || sp == ids->items[i] || sp[1] == '\0' || strchr(sp + 1, ' ') != NULL)
      return -1;
  }
  return 0;
}

static int tpuci__tests_json(const json_t *a, tpuci__deps_rec_t *rec) {
  size_t i;
  json_t *v;
  if (!json_is_array(a) || json_array_size(a) > TPUCI__DEPS_MAX_TESTS) return -1;
  json_array_foreach(a, i, v) {
    const char *id = tpuci__jstr(v, "id"), *run = tpuci__jstr(v, "run");
    tpuci__deps_test_t *t;
    if (!tpuci__deps_text_ok(id) || tpuci__idmap_get(&rec->tmap, id) != TPUCI__IDMAP_NONE ||
        (run != NULL && !tpuci__deps_text_ok(run)))
      return -1;
    t = tpuci__deps_rec_test(rec, id);
    t->passed = json_is_true(json_object_get(v, "passed"));
    t->run = run ? tpuci__strdup(run) : NULL;
    if (tpuci__need_json(v, rec, &t->need) != 0) return -1;
  }
  return 0;
}

int tpuci__deps_parse(const char *text, size_t len, tpuci__deps_rec_t *rec) {
  json_t *root = json_loadb(text, len, 0, NULL);
  tpuci__strv_t states = {0};
  const char *key, *rootdir, *run;
  int r = -1;
  size_t i;
  tpuci__deps_rec_init(rec);
  key = tpuci__jstr(root, "key");
  rootdir = tpuci__jstr(root, "root");
  run = tpuci__jstr(root, "run");
  if (!json_is_object(root) ||
      json_integer_value(json_object_get(root, "format")) != TPUCI__DEPS_FORMAT ||
      !tpuci__deps_text_ok(key) || !tpuci__deps_text_ok(rootdir) ||
      (run != NULL && !tpuci__deps_text_ok(run)))
    goto out;
  rec->key = tpuci__strdup(key);
  rec->root = tpuci__strdup(rootdir);
  rec->run = run ? tpuci__strdup(run) : NULL;
  if (tpuci__files_json(json_object_get(root, "files"), rec) != 0) goto out;
  tpuci__dtree_sort(&rec->tree);
  /* The order read is the order written (sorted): check it held. */
  for (i = 0; i < rec->tree.n; i++)
    if (strcmp(rec->tree.files[i].path,
               json_string_value(
                   json_array_get(json_array_get(json_object_get(root, "files"), i), 0))) != 0)
      goto out;
  if (tpuci__py_json(json_object_get(root, "py"), rec) != 0 ||
      tpuci__pairs_json(json_object_get(root, "dirs"), &rec->dirs, &rec->dir_ids) != 0 ||
      tpuci__listings_ok(&rec->dir_ids) != 0 ||
      tpuci__pairs_json(json_object_get(root, "probes"), &rec->probes, &states) != 0)
    goto out;
  rec->probe_states = tpuci__calloc(states.len + 1, 1);
  for (i = 0; i < states.len; i++) {
    if (strlen(states.items[i]) != 1 || strchr("fdlo-", states.items[i][0]) == NULL) goto out;
    rec->probe_states[i] = states.items[i][0];
  }
  {
    const json_t *pf = json_object_get(root, "python_files"), *v;
    if (pf != NULL && !json_is_array(pf)) goto out;
    json_array_foreach(pf, i, v) {
      if (!tpuci__deps_text_ok(json_string_value(v))) goto out;
      tpuci__strv_push(&rec->python_files, json_string_value(v));
    }
  }
  if (tpuci__need_json(json_object_get(root, "session"), rec, &rec->session) != 0 ||
      tpuci__tests_json(json_object_get(root, "tests"), rec) != 0)
    goto out;
  r = 0;
out:
  if (r != 0) tpuci__deps_rec_free(rec);
  tpuci__strv_free(&states);
  json_decref(root);
  return r;
}

/* state_dir/deps/<SHA-256 of the name>.json: a name is any text. */
static char *tpuci__deps_path(const char *state_dir, const char *name) {
  char hex[65];
  tpuci__sha256_hex(name, strlen(name), hex);
  return tpuci__printf("%s/%s/%s.json", state_dir, TPUCI__DEPS_DIR, hex);
}

int tpuci__deps_load(const char *state_dir, const char *name, tpuci__deps_rec_t *rec,
                     tpuci__err_t *err) {
  char *path = tpuci__deps_path(state_dir, name), *text = NULL;
  size_t len = 0;
  int r;
  tpuci__deps_rec_init(rec);
  r = tpuci__read_file_max(path, TPUCI__DEPS_MAX_BYTES, &text, &len);
  if (r == UV_ENOENT) {
    free(path);
    return 1;
  }
  if (r != 0) {
    char *why = tpuci__read_why(path, r);
    tpuci__err_set(err, r, "%s: %s", path, r == UV_EFBIG ? "too big" : why);
    free(why);
  } else if (tpuci__deps_parse(text, len, rec) != 0) {
    r = tpuci__err_set(err, TPUCI_EIO, "%s: not a record of this tpuci's, or unsafe", path);
  }
  free(text);
  free(path);
  return r;
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */

static json_t *tpuci__ix_to_json(const tpuci__deps_ix_t *x) {
  json_t *a = json_array();
  size_t i;
  for (i = 0; i < x->n; i++) json_array_append_new(a, json_integer((json_int_t) x->v[i]));
  return a;
}

static json_t *tpuci__need_to_json(const tpuci__deps_need_t *n) {
  json_t *o = json_object(), *b = json_array();
  size_t i;
  json_object_set_new(o, "w", tpuci__ix_to_json(&n->whole));
  json_object_set_new(o, "t", tpuci__ix_to_json(&n->top));
  json_object_set_new(o, "d", tpuci__ix_to_json(&n->dirs));
  json_object_set_new(o, "p", tpuci__ix_to_json(&n->probes));
  for (i = 0; i < n->nblocks; i++)
    json_array_append_new(b, json_pack("[Is]", (json_int_t) n->blocks[i].file, n->blocks[i].name));
  json_object_set_new(o, "b", b);
  json_object_set_new(o, "why", n->why ? json_string(n->why) : json_null());
  return o;
}

static json_t *tpuci__rec_to_json(const tpuci__deps_rec_t *rec, const char *name) {
  json_t *root = json_object(), *files = json_array(), *py = json_array(), *dirs = json_array(),
         *probes = json_array(), *tests = json_array(), *pf = json_array();
  size_t i, k;
  json_object_set_new(root, "format", json_integer(TPUCI__DEPS_FORMAT));
  json_object_set_new(root, "instance", json_string(name));
  json_object_set_new(root, "key", json_string(rec->key));
  json_object_set_new(root, "root", json_string(rec->root ? rec->root : "."));
  if (rec->run) json_object_set_new(root, "run", json_string(rec->run));
  for (i = 0; i < rec->tree.n; i++) {
    const tpuci__dtree_file_t *f = &rec->tree.files[i];
    json_array_append_new(files, json_pack("[ssIIIIi]", f->path, f->id, (json_int_t) f->size,
                                           (json_int_t) f->mtime_ns, (json_int_t) f->ctime_ns,
                                           (json_int_t) f->ino, (int) rec->flags[i]));
    if (rec->py[i].top[0] != '\0') {
      json_t *bs = json_array();
      for (k = 0; k < rec->py[i].n; k++) {
        const tpuci__pyblock_t *b = &rec->py[i].blocks[k];
        json_array_append_new(bs,
                              json_pack("[siiis]", b->name, b->first, b->last, b->body, b->hash));
      }
      json_array_append_new(py, json_pack("[Iso]", (json_int_t) i, rec->py[i].top, bs));
    }
  }
  for (i = 0; i < rec->dirs.len; i++)
    json_array_append_new(dirs, json_pack("[ss]", rec->dirs.items[i], rec->dir_ids.items[i]));
  for (i = 0; i < rec->probes.len; i++)
    json_array_append_new(
        probes, json_pack("[ss#]", rec->probes.items[i], &rec->probe_states[i], (size_t) 1));
  for (i = 0; i < rec->python_files.len; i++)
    json_array_append_new(pf, json_string(rec->python_files.items[i]));
  for (i = 0; i < rec->ntests; i++) {
    const tpuci__deps_test_t *t = &rec->tests[i];
    json_t *o = tpuci__need_to_json(&t->need);
    json_object_set_new(o, "id", json_string(t->id));
    json_object_set_new(o, "passed", json_boolean(t->passed));
    json_object_set_new(o, "run", t->run ? json_string(t->run) : json_null());
    json_array_append_new(tests, o);
  }
  json_object_set_new(root, "files", files);
  json_object_set_new(root, "py", py);
  json_object_set_new(root, "dirs", dirs);
  json_object_set_new(root, "probes", probes);
  json_object_set_new(root, "python_files", pf);
  json_object_set_new(root, "session", tpuci__need_to_json(&rec->session));
  json_object_set_new(root, "tests", tests);
  return root;
}

char *tpuci__deps_text(const tpuci__deps_rec_t *rec, const char *name) {
  json_t *root = tpuci__rec_to_json(rec, name);
  char *text = json_dumps(root, JSON_COMPACT);
  json_decref(root);
  return text;
}

int tpuci__deps_save(const char *state_dir, const char *name, const tpuci__deps_rec_t *rec,
                     tpuci__err_t *err) {
  char *path = tpuci__deps_path(state_dir, name), *text = tpuci__deps_text(rec, name);
  int r;
  r = text == NULL ? UV_ENOMEM : tpuci__write_file_atomic_p(path, text, strlen(text));
  if (r != 0) tpuci__err_set(err, r, "%s: %s", path, tpuci__strerror(r));
  free(text);
  free(path);
  return r;
}
