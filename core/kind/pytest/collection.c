/* .tpuci/collections.json: what each shard group collected last time. */
#include "kind/pytest/collection.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void tpuci__collections_init(tpuci__collections_t *c) { memset(c, 0, sizeof(*c)); }

void tpuci__collections_free(tpuci__collections_t *c) {
  size_t i;
  for (i = 0; i < c->len; i++) {
    free(c->items[i].group);
    free(c->items[i].key);
    tpuci__strv_free(&c->items[i].ids);
  }
  free(c->items);
  memset(c, 0, sizeof(*c));
}

static tpuci__collection_t *tpuci__collection_find(const tpuci__collections_t *c,
                                                   const char *group) {
  size_t i;
  for (i = 0; i < c->len; i++)
    if (strcmp(c->items[i].group, group) == 0) return &c->items[i];
  return NULL;
}

const tpuci__collection_t *tpuci__collection_get(const tpuci__collections_t *c, const char *group,
                                                 const char *key) {
  const tpuci__collection_t *e = tpuci__collection_find(c, group);
  return e != NULL && strcmp(e->key, key) == 0 ? e : NULL;
}

void tpuci__collection_put(tpuci__collections_t *c, const char *group, const char *key,
                           const tpuci__strv_t *ids, double overhead_s) {
  tpuci__collection_t *e = tpuci__collection_find(c, group);
  if (e == NULL) {
    if (c->len == c->cap) {
      c->cap = c->cap ? 2 * c->cap : 4;
      c->items = tpuci__realloc(c->items, c->cap * sizeof(*c->items));
    }
    e = &c->items[c->len++];
    memset(e, 0, sizeof(*e));
    e->group = tpuci__strdup(group);
  } else {
    free(e->key);
    tpuci__strv_free(&e->ids);
  }
  e->key = tpuci__strdup(key);
  tpuci__strv_copy(&e->ids, ids);
  e->overhead_s = overhead_s >= 0 && isfinite(overhead_s) ? overhead_s : -1;
}

int tpuci__collections_load_string(tpuci__collections_t *c, const char *data, size_t len,
                                   const char *name, tpuci__err_t *err) {
  json_error_t jerr;
  json_t *root, *groups, *v, *ver;
  const char *group;
  tpuci__collections_t tmp;

  if (len > TPUCI__COLLECTIONS_MAX_BYTES)
    return tpuci__err_set(err, TPUCI_EIO, "%s: %zu bytes, over the limit of %zu", name, len,
                          TPUCI__COLLECTIONS_MAX_BYTES);
  root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
  if (root == NULL)
    return tpuci__err_set(err, TPUCI_EIO, "%s:%d:%d: %s", name, jerr.line, jerr.column, jerr.text);
  ver = json_object_get(root, "version");
  groups = json_object_get(root, "groups");
  if (!json_is_object(root) || !json_is_integer(ver) || json_integer_value(ver) != 1 ||
      !json_is_object(groups)) {
    json_decref(root);
    return tpuci__err_set(err, TPUCI_EIO, "%s: needs {\"version\": 1, \"groups\": {...}}", name);
  }
  tpuci__collections_init(&tmp);
  json_object_foreach(groups, group, v) {
    json_t *key = json_object_get(v, "key"), *ids = json_object_get(v, "ids"), *id;
    json_t *over = json_object_get(v, "overhead_s");
    tpuci__strv_t list = {0};
    size_t i;
    int ok = json_is_object(v) && json_is_string(key) && json_is_array(ids) &&
             (over == NULL || (json_is_number(over) && json_number_value(over) >= 0));
    json_array_foreach(ids, i, id) {
      if (!ok || !json_is_string(id)) {
        ok = 0;
        break;
      }
      tpuci__strv_push(&list, json_string_value(id));
    }
    if (ok)
      tpuci__collection_put(&tmp, group, json_string_value(key), &list,
                            over ? json_number_value(over) : -1);
    tpuci__strv_free(&list);
    if (!ok) {
      /* The group's name is the document's: said before it goes. */
      tpuci__err_set(err, TPUCI_EIO,
                     "%s: groups[\"%.200s\"]: needs \"key\" (a string), \"ids\" "
                     "(an array of strings) and may have \"overhead_s\" (seconds)",
                     name, group);
      json_decref(root);
      tpuci__collections_free(&tmp);
      return TPUCI_EIO;
    }
  }
  json_decref(root);
  *c = tmp;
  return 0;
}

int tpuci__collections_load(tpuci__collections_t *c, const char *path, tpuci__err_t *err) {
  char *data;
  size_t len;
  int r = tpuci__read_file(path, &data, &len);
  if (r == -ENOENT) return 0;
  if (r != 0) return tpuci__err_set(err, r, "%s: cannot read: %s", path, tpuci_strerror(r));
  r = tpuci__collections_load_string(c, data, len, path, err);
  free(data);
  return r;
}

char *tpuci__collections_dump(const tpuci__collections_t *c) {
  json_t *root = json_object(), *groups = json_object();
  char *s, *out;
  size_t i, k;

  json_object_set_new(root, "version", json_integer(1));
  for (i = 0; i < c->len; i++) {
    json_t *o = json_object(), *ids = json_array();
    for (k = 0; k < c->items[i].ids.len; k++)
      json_array_append_new(ids, json_string(c->items[i].ids.items[k]));
    json_object_set_new(o, "key", json_string(c->items[i].key));
    json_object_set_new(o, "ids", ids);
    if (c->items[i].overhead_s >= 0)
      json_object_set_new(o, "overhead_s", json_real(round(c->items[i].overhead_s * 1e3) / 1e3));
    json_object_set_new(groups, c->items[i].group, o);
  }
  json_object_set_new(root, "groups", groups);
  s = json_dumps(root, JSON_INDENT(1) | JSON_SORT_KEYS);
  json_decref(root);
  if (s == NULL) return tpuci__strdup("{\"version\": 1, \"groups\": {}}\n");
  out = tpuci__printf("%s\n", s);
  free(s);
  return out;
}

int tpuci__collections_save(const tpuci__collections_t *c, const char *path, tpuci__err_t *err) {
  char *s = tpuci__collections_dump(c);
  int r = tpuci__write_file_atomic_p(path, s, strlen(s));
  free(s);
  if (r != 0) return tpuci__err_set(err, r, "%s: cannot write: %s", path, tpuci_strerror(r));
  return 0;
}

/* One part of the key: "name=value" with the value's length first, so
 * that no value can pass for another's parts. */
static void tpuci__key_part(tpuci__buf_t *b, const char *name, const char *value) {
  if (value == NULL) value = "";
  tpuci__buf_addf(b, "%s%s=%zu:%s", b->len ? ";" : "", name, strlen(value), value);
}

char *tpuci__collection_key(const tpuci__plan_t *plan, const tpuci__instance_t *inst) {
  tpuci__buf_t b;
  size_t i;

  tpuci__buf_init(&b);
  tpuci__key_part(&b, "runtime", tpuci__runtime_kind_name(inst->runtime));
  tpuci__key_part(&b, "image", inst->image >= 0 ? plan->images[inst->image].ref : NULL);
  tpuci__key_part(&b, "workdir", inst->workdir);
  for (i = 0; i < inst->argv.len; i++) tpuci__key_part(&b, "arg", inst->argv.items[i]);
  for (i = 0; i < inst->nmounts; i++) {
    tpuci__key_part(&b, "mount", inst->mounts[i].source);
    tpuci__key_part(&b, "at", inst->mounts[i].target);
  }
  /* PYTEST_ADDOPTS and the like select tests too; the shard's own
   * variables differ between the shards of one group. */
  for (i = 0; i < inst->env.len; i++) {
    const char *k = inst->env.items[i].key;
    if (strcmp(k, "TEST_SHARD_INDEX") == 0) continue;
    tpuci__key_part(&b, "env", k);
    tpuci__key_part(&b, "value", inst->env.items[i].value);
  }
  return tpuci__buf_steal(&b);
}
