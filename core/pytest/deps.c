/* What each test of a pytest job needs (deps.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <uv.h>

#include "pytest/deps.h"
#include "runtime/tree.h"

#define TPUCI__DEPS_FORMAT 1
/* One attempt's deps.jsonl: far beyond any suite's. */
#define TPUCI__DEPS_JSONL_MAX ((size_t) 256 << 20)

void tpuci__deps_rec_init(tpuci__deps_rec_t *rec) {
  memset(rec, 0, sizeof(*rec));
  tpuci__idmap_init(&rec->fmap);
  tpuci__idmap_init(&rec->tmap);
}

void tpuci__deps_rec_free(tpuci__deps_rec_t *rec) {
  size_t i;
  free(rec->key);
  free(rec->rootdir);
  free(rec->run);
  tpuci__strv_free(&rec->files);
  tpuci__strv_free(&rec->blobs);
  tpuci__idmap_free(&rec->fmap);
  free(rec->session);
  for (i = 0; i < rec->ntests; i++) {
    free(rec->tests[i].id);
    free(rec->tests[i].files);
    free(rec->tests[i].run);
  }
  free(rec->tests);
  tpuci__idmap_free(&rec->tmap);
  tpuci__deps_rec_init(rec);
}

/* The record's index of file `rel`, added (blob "") when new. */
static size_t tpuci__rec_file(tpuci__deps_rec_t *rec, const char *rel) {
  size_t k = tpuci__idmap_get(&rec->fmap, rel);
  if (k != TPUCI__IDMAP_NONE) return k;
  tpuci__strv_push(&rec->files, rel);
  tpuci__strv_push(&rec->blobs, "");
  k = rec->files.len - 1;
  tpuci__idmap_put(&rec->fmap, rec->files.items[k], k);
  return k;
}

static tpuci__deps_test_t *tpuci__rec_test(tpuci__deps_rec_t *rec, const char *id) {
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
/* The store                                                           */

/* state_dir/deps/<SHA-256 of the name>.json: a name is any text. */
static char *tpuci__deps_path(const char *state_dir, const char *name) {
  char hex[65];
  tpuci__sha256_hex(name, strlen(name), hex);
  return tpuci__printf("%s/%s/%s.json", state_dir, TPUCI__DEPS_DIR, hex);
}

static const char *tpuci__jstr(const json_t *o, const char *k) {
  return json_string_value(json_object_get(o, k));
}

/* The indices in the array `a` (each below `n`) into *out: 0, or -1. */
static int tpuci__indices(const json_t *a, size_t n, size_t **out, size_t *len) {
  size_t i;
  json_t *v;
  *out = tpuci__calloc(json_array_size(a) + 1, sizeof(**out));
  *len = 0;
  json_array_foreach(a, i, v) {
    json_int_t k = json_integer_value(v);
    if (!json_is_integer(v) || k < 0 || (size_t) k >= n) return -1;
    (*out)[(*len)++] = (size_t) k;
  }
  return 0;
}

int tpuci__deps_load(const char *state_dir, const char *name, tpuci__deps_rec_t *rec,
                     tpuci__err_t *err) {
  char *path = tpuci__deps_path(state_dir, name), *text = NULL;
  json_error_t je;
  json_t *root = NULL, *a, *v;
  size_t len = 0, i, k;
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
    goto out;
  }
  root = json_loadb(text, len, 0, &je);
  if (!json_is_object(root) ||
      json_integer_value(json_object_get(root, "format")) != TPUCI__DEPS_FORMAT ||
      tpuci__jstr(root, "key") == NULL || !json_is_array(json_object_get(root, "files")) ||
      !json_is_array(json_object_get(root, "tests"))) {
    r = tpuci__err_set(err, TPUCI_EIO, "%s: not a record of tpuci's", path);
    goto out;
  }
  rec->key = tpuci__strdup(tpuci__jstr(root, "key"));
  rec->rootdir = tpuci__strdup(tpuci__jstr(root, "rootdir"));
  rec->run = tpuci__strdup(tpuci__jstr(root, "run"));
  r = 0;
  json_array_foreach(json_object_get(root, "files"), i, v) {
    const char *f = json_string_value(json_array_get(v, 0));
    const char *b = json_string_value(json_array_get(v, 1));
    if (f == NULL || b == NULL || i >= TPUCI__DEPS_MAX_FILES ||
        tpuci__idmap_get(&rec->fmap, f) != TPUCI__IDMAP_NONE) {
      r = -1;
      break;
    }
    k = tpuci__rec_file(rec, f);
    free(rec->blobs.items[k]);
    rec->blobs.items[k] = tpuci__strdup(b);
  }
  if (r == 0)
    r = tpuci__indices(json_object_get(root, "session"), rec->files.len, &rec->session,
                       &rec->nsession);
  a = json_object_get(root, "tests");
  json_array_foreach(a, i, v) {
    const char *id = json_string_value(json_array_get(v, 0));
    const char *run = json_string_value(json_array_get(v, 3));
    tpuci__deps_test_t *t;
    if (r != 0) break;
    if (id == NULL || i >= TPUCI__DEPS_MAX_TESTS ||
        tpuci__idmap_get(&rec->tmap, id) != TPUCI__IDMAP_NONE) {
      r = -1;
      break;
    }
    t = tpuci__rec_test(rec, id);
    t->passed = json_is_true(json_array_get(v, 2));
    t->run = run ? tpuci__strdup(run) : NULL;
    r = tpuci__indices(json_array_get(v, 1), rec->files.len, &t->files, &t->nfiles);
  }
  if (r != 0) r = tpuci__err_set(err, TPUCI_EIO, "%s: malformed", path);
out:
  if (r != 0) tpuci__deps_rec_free(rec);
  json_decref(root);
  free(text);
  free(path);
  return r;
}

int tpuci__deps_save(const char *state_dir, const char *name, const tpuci__deps_rec_t *rec,
                     tpuci__err_t *err) {
  char *path = tpuci__deps_path(state_dir, name), *text;
  json_t *root = json_object(), *files = json_array(), *tests = json_array(), *s = json_array();
  size_t i, k;
  int r;
  json_object_set_new(root, "format", json_integer(TPUCI__DEPS_FORMAT));
  json_object_set_new(root, "instance", json_string(name));
  json_object_set_new(root, "key", json_string(rec->key));
  if (rec->rootdir) json_object_set_new(root, "rootdir", json_string(rec->rootdir));
  if (rec->run) json_object_set_new(root, "run", json_string(rec->run));
  for (i = 0; i < rec->files.len; i++)
    json_array_append_new(files, json_pack("[ss]", rec->files.items[i], rec->blobs.items[i]));
  for (i = 0; i < rec->nsession; i++) json_array_append_new(s, json_integer((json_int_t) rec->session[i]));
  for (i = 0; i < rec->ntests; i++) {
    const tpuci__deps_test_t *t = &rec->tests[i];
    json_t *f = json_array();
    for (k = 0; k < t->nfiles; k++) json_array_append_new(f, json_integer((json_int_t) t->files[k]));
    json_array_append_new(tests, json_pack("[sobs?]", t->id, f, t->passed, t->run));
  }
  json_object_set_new(root, "files", files);
  json_object_set_new(root, "session", s);
  json_object_set_new(root, "tests", tests);
  text = json_dumps(root, JSON_COMPACT);
  json_decref(root);
  r = text == NULL ? UV_ENOMEM : tpuci__write_file_atomic_p(path, text, strlen(text));
  if (r != 0) tpuci__err_set(err, r, "%s: %s", path, tpuci__strerror(r));
  free(text);
  free(path);
  return r;
}

/* ------------------------------------------------------------------ */
/* What a run leaves out                                               */

void tpuci__deps_blob(const char *path, char hex[41]) {
  char *data = NULL;
  size_t len = 0;
  hex[0] = '\0';
  if (path != NULL && tpuci__read_file_max(path, (size_t) 1 << 30, &data, &len) == 0)
    tpuci__git_blob_id(data, len, hex);
  free(data);
}

void tpuci__deps_sel_free(tpuci__deps_sel_t *sel) {
  free(sel->why);
  free(sel->arg);
  tpuci__idmap_free(&sel->unaffected);
  tpuci__strv_free(&sel->changed);
  memset(sel, 0, sizeof(*sel));
}

static void tpuci__sel_all(tpuci__deps_sel_t *out, char *why) {
  out->all = 1;
  free(out->why);
  out->why = why;
  tpuci__idmap_free(&out->unaffected);
  tpuci__idmap_init(&out->unaffected);
  out->nunaffected = 0;
  free(out->arg);
  out->arg = tpuci__strdup("record");
}

/* A test's file: its node id up to "::". */
static char *tpuci__test_file(const char *id) {
  const char *c = strstr(id, "::");
  return c ? tpuci__strndup(id, (size_t) (c - id)) : tpuci__strdup(id);
}

static int tpuci__always(const tpuci__strv_t *always, const char *id) {
  char *f = tpuci__test_file(id);
  size_t g;
  int hit = 0;
  for (g = 0; always != NULL && g < always->len && !hit; g++)
    hit = tpuci__glob_match(always->items[g], f);
  free(f);
  return hit;
}

/* The skip lines: a file whose recorded tests are all left out, else
 * each test. */
static char *tpuci__skip_lines(const tpuci__deps_rec_t *rec, const unsigned char *left) {
  tpuci__buf_t b;
  tpuci__idmap_t whole;
  tpuci__strv_t names = {0};
  unsigned char *ok;
  size_t i, k;
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "record");
  tpuci__idmap_init(&whole);
  for (i = 0; i < rec->ntests; i++) {
    char *f = tpuci__test_file(rec->tests[i].id);
    if (tpuci__idmap_get(&whole, f) == TPUCI__IDMAP_NONE) {
      tpuci__strv_take(&names, f);
      tpuci__idmap_put(&whole, names.items[names.len - 1], names.len - 1);
    } else {
      free(f);
    }
  }
  ok = tpuci__calloc(names.len + 1, 1);
  memset(ok, 1, names.len);
  for (i = 0; i < rec->ntests; i++) {
    char *f = tpuci__test_file(rec->tests[i].id);
    if (!left[i]) ok[tpuci__idmap_get(&whole, f)] = 0;
    free(f);
  }
  for (k = 0; k < names.len; k++)
    if (ok[k]) tpuci__buf_addf(&b, "\nskip %s", names.items[k]);
  for (i = 0; i < rec->ntests; i++) {
    char *f;
    if (!left[i]) continue;
    f = tpuci__test_file(rec->tests[i].id);
    if (!ok[tpuci__idmap_get(&whole, f)]) tpuci__buf_addf(&b, "\nskip %s", rec->tests[i].id);
    free(f);
  }
  free(ok);
  tpuci__idmap_free(&whole);
  tpuci__strv_free(&names);
  return tpuci__buf_steal(&b);
}

void tpuci__deps_select(const tpuci__deps_rec_t *rec, const char *key,
                        const tpuci__strv_t *always, tpuci__deps_path_fn path, void *ud,
                        size_t max_bytes, tpuci__deps_sel_t *out) {
  unsigned char *changed, *left;
  size_t i, k;

  memset(out, 0, sizeof(*out));
  tpuci__idmap_init(&out->unaffected);
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
  changed = tpuci__calloc(rec->files.len + 1, 1);
  for (i = 0; i < rec->files.len; i++) {
    char *abs = path(ud, rec->rootdir, rec->files.items[i]), hex[41];
    tpuci__deps_blob(abs, hex);
    changed[i] = strcmp(hex, rec->blobs.items[i]) != 0;
    if (changed[i]) tpuci__strv_push(&out->changed, rec->files.items[i]);
    free(abs);
  }
  for (i = 0; i < rec->nsession; i++)
    if (changed[rec->session[i]]) {
      tpuci__sel_all(out, tpuci__printf("%s changed, which the whole session needs: every "
                                        "test runs",
                                        rec->files.items[rec->session[i]]));
      free(changed);
      return;
    }
  left = tpuci__calloc(rec->ntests + 1, 1);
  for (i = 0; i < rec->ntests; i++) {
    const tpuci__deps_test_t *t = &rec->tests[i];
    int hit = 0;
    for (k = 0; k < t->nfiles && !hit; k++) hit = changed[t->files[k]];
    if (hit) out->affected++;
    else if (!t->passed) out->failed_last++;
    else if (tpuci__always(always, t->id)) out->always++;
    else left[i] = 1;
  }
  free(changed);
  out->arg = tpuci__skip_lines(rec, left);
  if (strlen(out->arg) > max_bytes) {
    free(left);
    tpuci__sel_all(out, tpuci__strdup("the tests to leave out are too many to name: every "
                                      "test runs"));
    return;
  }
  for (i = 0; i < rec->ntests; i++)
    if (left[i]) {
      tpuci__idmap_put(&out->unaffected, rec->tests[i].id, i);
      out->nunaffected++;
    }
  free(left);
}

char *tpuci__deps_sel_text(const tpuci__deps_sel_t *sel) {
  tpuci__buf_t b;
  if (sel->all) return tpuci__strdup(sel->why);
  tpuci__buf_init(&b);
  tpuci__buf_addf(&b, "%zu of %zu recorded test%s run%s: %zu affected", sel->recorded - sel->nunaffected, sel->recorded, sel->recorded == 1 ? "" : "s",
                  sel->recorded - sel->nunaffected == 1 ? "s" : "", sel->affected);
  if (sel->changed.len > 0)
    tpuci__buf_addf(&b, " by %s", sel->changed.items[0]);
  if (sel->changed.len > 1)
    tpuci__buf_addf(&b, " (and %zu more file%s)", sel->changed.len - 1,
                    sel->changed.len == 2 ? "" : "s");
  tpuci__buf_addf(&b, ", %zu failed last time", sel->failed_last);
  if (sel->always > 0) tpuci__buf_addf(&b, ", %zu always (select_always)", sel->always);
  tpuci__buf_adds(&b, "; tests new since run too");
  return tpuci__buf_steal(&b);
}

/* ------------------------------------------------------------------ */
/* What a run recorded                                                 */

void tpuci__deps_fresh_init(tpuci__deps_fresh_t *f) {
  memset(f, 0, sizeof(*f));
  tpuci__idmap_init(&f->map);
}

void tpuci__deps_fresh_free(tpuci__deps_fresh_t *f) {
  size_t i;
  for (i = 0; i < f->ids.len; i++) tpuci__strv_free(&f->files[i]);
  free(f->files);
  tpuci__strv_free(&f->ids);
  tpuci__idmap_free(&f->map);
  tpuci__strv_free(&f->session);
  free(f->rootdir);
  free(f->off);
  tpuci__deps_fresh_init(f);
}

static void tpuci__strv_json(tpuci__strv_t *v, const json_t *a) {
  size_t i;
  json_t *x;
  json_array_foreach(a, i, x) if (json_is_string(x)) tpuci__strv_push(v, json_string_value(x));
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
    const char *id;
    nl = memchr(line, '\n', (size_t) (text + len - line));
    if (nl == NULL) nl = text + len;
    o = json_loadb(line, (size_t) (nl - line), 0, NULL);
    if (o != NULL && (id = json_string_value(json_object_get(o, "t"))) != NULL) {
      size_t k = tpuci__idmap_get(&f->map, id);
      if (k == TPUCI__IDMAP_NONE) {
        tpuci__strv_push(&f->ids, id);
        k = f->ids.len - 1;
        f->files = tpuci__realloc(f->files, f->ids.len * sizeof(*f->files));
        memset(&f->files[k], 0, sizeof(f->files[k]));
        tpuci__idmap_put(&f->map, f->ids.items[k], k);
      } else {
        tpuci__strv_free(&f->files[k]);
      }
      tpuci__strv_json(&f->files[k], json_object_get(o, "f"));
    } else if (o != NULL && json_object_get(o, "session") != NULL) {
      tpuci__strv_json(&f->session, json_object_get(o, "session"));
    } else if (o != NULL && json_string_value(json_object_get(o, "off")) != NULL && !f->off) {
      f->off = tpuci__strdup(json_string_value(json_object_get(o, "off")));
    }
    json_decref(o);
  }
  free(text);
  free(path);
}

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

int tpuci__deps_update(tpuci__deps_rec_t *out, const tpuci__deps_rec_t *old,
                       const tpuci__deps_sel_t *sel, const tpuci__deps_fresh_t *fresh,
                       const tpuci__history_t *const *hs, size_t nh, const char *key,
                       const char *run, tpuci__deps_path_fn path, void *ud) {
  size_t i, k;
  tpuci__deps_rec_init(out);
  if (fresh->off != NULL || (fresh->ids.len == 0 && (sel == NULL || sel->nunaffected == 0)))
    return 1;
  out->key = tpuci__strdup(key);
  out->run = tpuci__strdup(run);
  out->rootdir = tpuci__strdup(fresh->rootdir ? fresh->rootdir : old ? old->rootdir
                                                                     : NULL);
  for (i = 0; i < fresh->ids.len; i++) {
    tpuci__deps_test_t *t = tpuci__rec_test(out, fresh->ids.items[i]);
    t->files = tpuci__calloc(fresh->files[i].len + 1, sizeof(*t->files));
    for (k = 0; k < fresh->files[i].len; k++) t->files[t->nfiles++] = tpuci__rec_file(out, fresh->files[i].items[k]);
    t->passed = tpuci__passed_in(hs, nh, t->id);
    t->run = t->passed ? tpuci__strdup(run) : NULL;
  }
  /* The tests left out keep what the old record said of them. */
  for (i = 0; old != NULL && sel != NULL && i < old->ntests; i++) {
    const tpuci__deps_test_t *o = &old->tests[i];
    tpuci__deps_test_t *t;
    if (tpuci__idmap_get(&sel->unaffected, o->id) == TPUCI__IDMAP_NONE ||
        tpuci__idmap_get(&out->tmap, o->id) != TPUCI__IDMAP_NONE)
      continue;
    t = tpuci__rec_test(out, o->id);
    t->files = tpuci__calloc(o->nfiles + 1, sizeof(*t->files));
    for (k = 0; k < o->nfiles; k++) t->files[t->nfiles++] = tpuci__rec_file(out, old->files.items[o->files[k]]);
    t->passed = o->passed;
    t->run = o->run ? tpuci__strdup(o->run) : NULL;
  }
  out->session = tpuci__calloc(fresh->session.len + 1, sizeof(*out->session));
  for (i = 0; i < fresh->session.len; i++)
    out->session[out->nsession++] = tpuci__rec_file(out, fresh->session.items[i]);
  for (i = 0; i < out->files.len; i++) {
    char *abs = path(ud, out->rootdir, out->files.items[i]), hex[41];
    tpuci__deps_blob(abs, hex);
    free(out->blobs.items[i]);
    out->blobs.items[i] = tpuci__strdup(hex);
    free(abs);
  }
  return out->files.len > TPUCI__DEPS_MAX_FILES || out->ntests > TPUCI__DEPS_MAX_TESTS;
}
