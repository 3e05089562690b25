/* The results cache in a run (docs/cache.md): each selected instance's
 * input key (runtime/inputs.h) before anything starts, the passes stored
 * under those keys (report/cache.h) taken instead of running, the run's
 * own passes stored once it is over; and `tpuci plan --keys`. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/ctx.h"
#include "kind/pytest/pytest_run.h"
#include "report/cache.h"
#include "runtime/inputs.h"

typedef struct {
  tpuci__inputs_key_t key; /* hex "" with key.why: none */
  /* Its inputs that are not files (tpuci__inputs_nonfile), for a pytest
   * instance that records what its tests need; "": none. */
  char nonfile[65];
  json_t *entry; /* the stored pass it came from (a hit) */
  int stored;    /* this run's pass was stored */
  int evicted;   /* a stored pass under its key was taken away */
} tpuci__ckey_t;

struct tpuci__cache_run_s {
  char *off; /* why the cache is off this run, or NULL: then
                               keys are still made, so that a failure takes
                               a stored pass away */
  char *state_dir;
  tpuci__ckey_t *keys; /* per plan instance */
  unsigned char *done; /* per plan instance: a hit, not run */
  size_t n, hits, stored, evicted;
};

/* The state folder, absolute (what no mount's key may count). */
static char *tpuci__abs_dir(const char *dir) {
  char cwd[PATH_MAX];
  if (dir[0] == '/') return tpuci__strdup(dir);
  if (getcwd(cwd, sizeof(cwd)) == NULL) return tpuci__strdup(dir);
  if (strcmp(dir, ".") == 0) return tpuci__strdup(cwd);
  return tpuci__printf("%s/%s", cwd, strncmp(dir, "./", 2) == 0 ? dir + 2 : dir);
}

/* The spec file, absolute, or NULL (loaded from a string). */
static char *tpuci__spec_file(const tpuci__plan_t *p) {
  const char *base;
  if (p->spec_path == NULL || p->spec_dir == NULL) return NULL;
  base = strrchr(p->spec_path, '/');
  return tpuci__printf("%s/%s", p->spec_dir, base ? base + 1 : p->spec_path);
}

/* A selecting run's result is kept under a key of its own: a run of every
 * test (a plain run, --no-select) never takes the result of a run that
 * left tests out, nor the other way round (docs/cache.md). */
static void tpuci__select_key(const tpuci_run_options_t *o, char hex[65]) {
  char *text;
  if (hex[0] == '\0' || o->no_select) return;
  text = tpuci__printf("%s\nselect=affected", hex);
  tpuci__sha256_hex(text, strlen(text), hex);
  free(text);
}

/* Keys of the selected instances (warnings once each into `warnings`).
 * What went into each key (key.parts) is kept only with `parts`: only
 * `tpuci plan --keys` shows it, and a run of 2000 local jobs kept 3 KB of
 * it per instance. */
static void tpuci__compute_keys(const tpuci__plan_t *plan, tpuci__strv_t *const *preselect,
                                const tpuci_run_options_t *ropts, const char *state_dir, int parts,
                                tpuci__ckey_t *keys, tpuci__strv_t *warnings) {
  tpuci__inputs_opts_t o;
  tpuci__inputs_t *in;
  char *spec = tpuci__spec_file(plan);
  size_t i, k, w;
  o.state_dir = state_dir;
  o.spec_path = spec;
  in = tpuci__inputs_new(plan, &o);
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__pytest_t *py = tpuci__pytest_of(&plan->instances[i]);
    if (!plan->instances[i].selected) continue;
    tpuci__inputs_key(in, i, preselect ? preselect[i] : NULL, &keys[i].key);
    if (!parts) {
      json_decref(keys[i].key.parts);
      keys[i].key.parts = NULL;
    }
    if (py != NULL && (py->select_affected || ropts->affected)) {
      if (tpuci__inputs_nonfile(in, i, keys[i].nonfile) != 0) keys[i].nonfile[0] = '\0';
      tpuci__select_key(ropts, keys[i].key.hex);
    }
    for (k = 0; k < keys[i].key.warnings.len; k++) {
      const char *msg = keys[i].key.warnings.items[k];
      for (w = 0; w < warnings->len && strcmp(warnings->items[w], msg) != 0; w++) continue;
      if (w == warnings->len) tpuci__strv_push(warnings, msg);
    }
  }
  tpuci__inputs_free(in);
  free(spec);
}

/* Looks every key up. A shard group is a hit only when every shard of it
 * is selected and a hit from one run: the split of the suite is that
 * run's, so together they ran every test (one shard alone, as a per-job
 * workflow runs it, may have run another split's part). */
static void tpuci__lookup(const tpuci__plan_t *p, const char *state_dir, int touch,
                          tpuci__ckey_t *keys, tpuci__strv_t *warnings) {
  size_t i, j;
  for (i = 0; i < p->ninstances; i++) {
    tpuci__err_t e = {0, NULL};
    if (!p->instances[i].selected || keys[i].key.hex[0] == '\0') continue;
    if (tpuci__cache_get(state_dir, keys[i].key.hex, p->instances[i].name, touch, &keys[i].entry,
                         &e) < 0)
      tpuci__strv_take(warnings, tpuci__printf("ignoring a cache entry: %s; '%s' runs", e.msg,
                                               p->instances[i].name));
    tpuci__err_clear(&e);
  }
  for (i = 0; i < p->ninstances; i++) {
    const tpuci__instance_t *a = &p->instances[i];
    char *group;
    const char *run;
    int whole = 1;
    if (!a->selected || keys[i].entry == NULL || a->shards <= 1) continue;
    group = tpuci__pytest_group_name(a);
    run = json_string_value(json_object_get(keys[i].entry, "run"));
    for (j = 0; j < p->ninstances && whole; j++) {
      const tpuci__instance_t *b = &p->instances[j];
      char *g;
      if (b->shards <= 1) continue;
      g = tpuci__pytest_group_name(b);
      if (strcmp(g, group) == 0)
        whole = b->selected && keys[j].entry != NULL &&
                strcmp(json_string_value(json_object_get(keys[j].entry, "run")), run) == 0;
      free(g);
    }
    if (!whole)
      for (j = 0; j < p->ninstances; j++) {
        char *g;
        if (keys[j].entry == NULL || tpuci__pytest_of(&p->instances[j]) == NULL) continue;
        g = tpuci__pytest_group_name(&p->instances[j]);
        if (strcmp(g, group) == 0) {
          json_decref(keys[j].entry);
          keys[j].entry = NULL;
        }
        free(g);
      }
    free(group);
  }
}

void tpuci__cache_start(tpuci__run_t *run, int no_cache) {
  struct tpuci__cache_run_s *c = tpuci__calloc(1, sizeof(*c));
  tpuci__strv_t warnings = {0};
  const char *env = getenv("TPUCI_NO_CACHE");
  size_t i;
  run->cache = c;
  c->n = run->plan.ninstances;
  c->keys = tpuci__calloc(c->n + 1, sizeof(*c->keys));
  c->done = tpuci__calloc(c->n + 1, 1);
  c->state_dir = tpuci__abs_dir(run->ropts.state_dir ? run->ropts.state_dir : ".tpuci");
  if (no_cache) c->off = tpuci__strdup("--no-cache");
  else if (env != NULL && *env != '\0' && strcmp(env, "0") != 0)
    c->off = tpuci__printf("TPUCI_NO_CACHE=%s", env);
  else if (run->repeat > 0) c->off = tpuci__strdup("a flake probe runs every repetition");
  tpuci__compute_keys(&run->plan, run->preselect, &run->ropts, c->state_dir, 0, c->keys, &warnings);
  if (!c->off) tpuci__lookup(&run->plan, c->state_dir, 1, c->keys, &warnings);
  for (i = 0; i < warnings.len; i++) {
    char *msg = tpuci__printf("warning: %s", warnings.items[i]);
    tpuci__message(run, msg);
    free(msg);
  }
  tpuci__strv_free(&warnings);
  for (i = 0; i < c->n; i++) {
    if (c->keys[i].entry == NULL) continue;
    tpuci__cache_restore(c->keys[i].entry, &run->plan.instances[i], &run->results[i]);
    c->done[i] = 1;
    c->hits++;
  }
}

const char *tpuci__cache_nonfile(const tpuci__run_t *run, size_t i) {
  if (run->cache == NULL || i >= run->cache->n) return NULL;
  return run->cache->keys[i].nonfile[0] ? run->cache->keys[i].nonfile : NULL;
}

const unsigned char *tpuci__cache_done(const tpuci__run_t *run) {
  return run->cache ? run->cache->done : NULL;
}

const char *tpuci__cache_key(const tpuci__run_t *run, size_t i) {
  const struct tpuci__cache_run_s *c = run->cache;
  return c != NULL && i < c->n && c->keys[i].key.hex[0] != '\0' ? c->keys[i].key.hex : NULL;
}

int tpuci__cache_hit(const tpuci__run_t *run, size_t i) {
  return run->cache && i < run->cache->n && run->cache->done[i];
}

/* A failure under a key takes the pass stored under it away, whether the
 * cache is on or off this run (a nightly with --no-cache that fails must
 * not leave a pass for the next run to take). */
static void tpuci__evict(tpuci__run_t *run) {
  struct tpuci__cache_run_s *c = run->cache;
  size_t i;
  for (i = 0; i < c->n && i < run->nresults; i++) {
    tpuci__err_t e = {0, NULL};
    int r;
    if (!run->plan.instances[i].selected || c->done[i] || c->keys[i].key.hex[0] == '\0' ||
        !tpuci__cache_refutes(&run->results[i]))
      continue;
    r = tpuci__cache_remove(c->state_dir, c->keys[i].key.hex, &e);
    if (r == 0) {
      char *msg = tpuci__printf("the results cache: the pass stored for '%s' is forgotten "
                                "(it did not pass under the same inputs)",
                                run->plan.instances[i].name);
      c->keys[i].evicted = 1;
      c->evicted++;
      tpuci__message(run, msg);
      free(msg);
    } else if (r < 0) {
      char *msg = tpuci__printf("warning: the results cache: %s", e.msg);
      tpuci__message(run, msg);
      free(msg);
    }
    tpuci__err_clear(&e);
  }
}

void tpuci__cache_finish(tpuci__run_t *run) {
  struct tpuci__cache_run_s *c = run->cache;
  size_t i, k;
  if (c == NULL) return;
  tpuci__evict(run);
  if (c->off) return;
  for (i = 0; i < c->n && i < run->nresults; i++) {
    const tpuci__instance_result_t *r = &run->results[i];
    tpuci__err_t e = {0, NULL};
    json_t *entry;
    int quarantined = 0;
    if (!run->plan.instances[i].selected || c->done[i] || c->keys[i].key.hex[0] == '\0' ||
        !tpuci__cache_storable(r))
      continue;
    /* A quarantined test is a known flake: its pass proves little. */
    for (k = 0;
         run->qtests && run->qtests[i] && tpuci__res_history(r) && k < tpuci__res_history(r)->len;
         k++)
      quarantined |= run->qtests[i][k].entry != NULL;
    if (quarantined) continue;
    entry = tpuci__cache_entry(&run->plan.instances[i], r, c->keys[i].key.hex, run->rd.id);
    if (tpuci__cache_put(c->state_dir, c->keys[i].key.hex, entry, &e) == 0) {
      c->keys[i].stored = 1;
      c->stored++;
    } else {
      char *msg = tpuci__printf("warning: the results cache: %s", e.msg);
      tpuci__message(run, msg);
      free(msg);
    }
    tpuci__err_clear(&e);
    json_decref(entry);
  }
  if (c->stored > 0)
    tpuci__cache_trim(c->state_dir, TPUCI__CACHE_MAX_ENTRIES, TPUCI__CACHE_MAX_BYTES);
}

void tpuci__cache_props(const tpuci__run_t *run, size_t i, tpuci__strv_t *out) {
  const json_t *e;
  if (!tpuci__cache_hit(run, i) || (e = run->cache->keys[i].entry) == NULL) return;
  tpuci__strv_push(out, "tpuci.cached");
  tpuci__strv_push(out, json_string_value(json_object_get(e, "run")));
  tpuci__strv_push(out, "tpuci.cache.key");
  tpuci__strv_push(out, run->cache->keys[i].key.hex);
}

/* What the cache says of instance i, for the report and plan --keys. */
static json_t *tpuci__cache_json(const struct tpuci__cache_run_s *c, size_t i) {
  const tpuci__ckey_t *k = &c->keys[i];
  json_t *o = json_object();
  json_object_set_new(o, "key", k->key.hex[0] ? json_string(k->key.hex) : json_null());
  json_object_set_new(o, "hit", json_boolean(c->done[i]));
  if (c->done[i] && k->entry) {
    json_object_set_new(o, "run", json_incref(json_object_get(k->entry, "run")));
    json_object_set_new(o, "duration_ms", json_incref(json_object_get(k->entry, "duration_ms")));
  }
  json_object_set_new(o, "stored", json_boolean(k->stored));
  json_object_set_new(o, "evicted", json_boolean(k->evicted));
  if (c->off || k->key.why)
    json_object_set_new(o, "why", json_string(c->off ? c->off : k->key.why));
  return o;
}

void tpuci__cache_report(tpuci__run_t *run) {
  struct tpuci__cache_run_s *c = run->cache;
  json_t *inst, *sum;
  size_t i, at = 0;
  if (c == NULL || run->report == NULL) return;
  /* The report's instances are the selected ones, in plan order. */
  inst = json_object_get(run->report, "instances");
  for (i = 0; i < c->n; i++) {
    json_t *o;
    if (!run->plan.instances[i].selected) continue;
    o = json_array_get(inst, at++);
    if (o != NULL) json_object_set_new(o, "cache", tpuci__cache_json(c, i));
  }
  sum = json_object();
  json_object_set_new(sum, "enabled", json_boolean(c->off == NULL));
  if (c->off) json_object_set_new(sum, "why", json_string(c->off));
  json_object_set_new(sum, "dir", json_string(c->state_dir));
  json_object_set_new(sum, "hits", json_integer((json_int_t) c->hits));
  json_object_set_new(sum, "stored", json_integer((json_int_t) c->stored));
  json_object_set_new(sum, "evicted", json_integer((json_int_t) c->evicted));
  json_object_set_new(run->report, "cache", sum);
}

void tpuci__cache_free(tpuci__run_t *run) {
  struct tpuci__cache_run_s *c = run->cache;
  size_t i;
  if (c == NULL) return;
  for (i = 0; i < c->n; i++) {
    tpuci__inputs_key_clear(&c->keys[i].key);
    json_decref(c->keys[i].entry);
  }
  free(c->keys);
  free(c->done);
  free(c->off);
  free(c->state_dir);
  free(c);
  run->cache = NULL;
}

/* ------------------------------------------------------------------ */
/* tpuci plan --keys                                                   */

static void tpuci__keys_text(tpuci__buf_t *b, const tpuci_ctx_t *ctx,
                             const struct tpuci__cache_run_s *c, size_t i) {
  const tpuci__ckey_t *k = &c->keys[i];
  const json_t *p = k->key.parts, *m;
  char d[32];
  size_t j;
  tpuci__buf_addf(b, "%s\n", ctx->plan.instances[i].name);
  if (k->key.hex[0] == '\0') {
    tpuci__buf_addf(b, "  not cached: %s\n", k->key.why ? k->key.why : "no key");
  } else {
    tpuci__buf_addf(b, "  key:     %s\n", k->key.hex);
    if (k->entry)
      tpuci__buf_addf(b, "  stored:  passed in run %s (%s): the run takes it\n",
                      json_string_value(json_object_get(k->entry, "run")),
                      tpuci__duration_format(
                          (uint64_t) json_integer_value(json_object_get(k->entry, "duration_ms")),
                          d, sizeof(d)));
    else tpuci__buf_adds(b, "  stored:  no pass under this key: the run runs it\n");
  }
  tpuci__buf_addf(b, "  entry:   %s (%s, tpuci %s, build %s)\n",
                  json_string_value(json_object_get(p, "entry")),
                  json_string_value(json_object_get(p, "format")),
                  json_string_value(json_object_get(p, "tpuci")),
                  json_string_value(json_object_get(p, "build")));
  if (json_object_get(p, "image"))
    tpuci__buf_addf(b, "  image:   %s\n", json_string_value(json_object_get(p, "image")));
  json_array_foreach(json_object_get(p, "mounts"), j, m) tpuci__buf_addf(
      b, "  mount:   %s -> %s: %s, %lld files, %s\n",
      json_string_value(json_object_get(m, "source")),
      json_string_value(json_object_get(m, "target")), json_string_value(json_object_get(m, "how")),
      (long long) json_integer_value(json_object_get(m, "files")),
      json_string_value(json_object_get(m, "key")));
  if ((m = json_object_get(p, "workdir")) != NULL && json_object_get(m, "key"))
    tpuci__buf_addf(b, "  folder:  %s: %s, %lld files, %s\n",
                    json_string_value(json_object_get(m, "source")),
                    json_string_value(json_object_get(m, "how")),
                    (long long) json_integer_value(json_object_get(m, "files")),
                    json_string_value(json_object_get(m, "key")));
  json_array_foreach(json_object_get(p, "python"), j, m) {
    const char *how = json_string_value(json_object_get(m, "how"));
    if (how == NULL) continue;
    tpuci__buf_addf(b, "  python:  %s: %s, %lld %s, %s\n",
                    json_string_value(json_object_get(m, "source")), how,
                    (long long) json_integer_value(json_object_get(m, "files")),
                    strcmp(how, "packages") == 0 ? "distributions" : "files",
                    json_string_value(json_object_get(m, "key")));
  }
  if ((m = json_object_get(p, "env")) != NULL)
    tpuci__buf_addf(b,
                    "  env:     %zu variable%s of tpuci's own (names and value hashes: --json)\n",
                    json_object_size(m), json_object_size(m) == 1 ? "" : "s");
  json_array_foreach(json_object_get(p, "tests"), j, m)
      tpuci__buf_addf(b, "  test:    %s\n", json_string_value(m));
}

int tpuci_plan_keys(tpuci_ctx_t *ctx, const char *state_dir, int json, char **out) {
  struct tpuci__cache_run_s c;
  tpuci_run_options_t ro;
  tpuci__strv_t warnings = {0};
  tpuci__buf_t b;
  json_t *root = NULL, *list = NULL;
  tpuci__err_t e = {0, NULL};
  size_t i;
  if (ctx == NULL || out == NULL) return TPUCI_EUSAGE;
  *out = NULL;
  if (!ctx->loaded) {
    tpuci__err_set(&e, TPUCI_ESTATE, "no spec loaded");
    return tpuci__fail(ctx, &e);
  }
  memset(&c, 0, sizeof(c));
  c.n = ctx->plan.ninstances;
  c.keys = tpuci__calloc(c.n + 1, sizeof(*c.keys));
  c.done = tpuci__calloc(c.n + 1, 1);
  c.state_dir = tpuci__abs_dir(state_dir ? state_dir : ".tpuci");
  tpuci_run_options_init(&ro);
  tpuci__compute_keys(&ctx->plan, ctx->preselect, &ro, c.state_dir, 1, c.keys, &warnings);
  tpuci__lookup(&ctx->plan, c.state_dir, 0, c.keys, &warnings);
  for (i = 0; i < c.n; i++) c.done[i] = c.keys[i].entry != NULL;
  tpuci__buf_init(&b);
  if (json) {
    root = json_object();
    list = json_array();
    json_object_set_new(root, "format", json_string(TPUCI__KEY_FORMAT));
    json_object_set_new(root, "dir", json_string(c.state_dir));
    json_object_set_new(root, "instances", list);
  }
  for (i = 0; i < c.n; i++) {
    if (!ctx->plan.instances[i].selected) continue;
    if (json) {
      json_t *o = tpuci__cache_json(&c, i);
      json_object_del(o, "stored");
      json_object_del(o, "evicted");
      json_object_set_new(o, "name", json_string(ctx->plan.instances[i].name));
      json_object_set_new(o, "inputs", json_incref(c.keys[i].key.parts));
      json_array_append_new(list, o);
    } else {
      if (b.len) tpuci__buf_adds(&b, "\n");
      tpuci__keys_text(&b, ctx, &c, i);
    }
  }
  if (json) {
    json_t *w = json_array();
    for (i = 0; i < warnings.len; i++) json_array_append_new(w, json_string(warnings.items[i]));
    json_object_set_new(root, "warnings", w);
    *out = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    tpuci__buf_free(&b);
  } else {
    for (i = 0; i < warnings.len; i++)
      tpuci__buf_addf(&b, "%swarning: %s\n", i == 0 ? "\n" : "", warnings.items[i]);
    *out = tpuci__buf_steal(&b);
  }
  tpuci__strv_free(&warnings);
  for (i = 0; i < c.n; i++) {
    tpuci__inputs_key_clear(&c.keys[i].key);
    json_decref(c.keys[i].entry);
  }
  free(c.keys);
  free(c.done);
  free(c.state_dir);
  return 0;
}
