/* A map from borrowed strings to indexes: open addressing, FNV-1a. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/idmap.h"
#include "base/util.h"

/* FNV-1a from a per-process random start, so that a hostile report
 * cannot pick ids that all collide. */
static uint64_t tpuci__hash_seed;

static uint64_t tpuci__hash(const char *s) {
  uint64_t h;
  if (tpuci__hash_seed == 0) {
    uint64_t x =
        tpuci__now_ms() ^ ((uint64_t) getpid() << 32) ^ (uint64_t) (uintptr_t) &tpuci__hash_seed;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdu;
    x ^= x >> 33;
    tpuci__hash_seed = x | 1;
  }
  h = 14695981039346656037u ^ tpuci__hash_seed;
  for (; *s; s++) {
    h ^= (unsigned char) *s;
    h *= 1099511628211u;
  }
  return h;
}

void tpuci__idmap_init(tpuci__idmap_t *m) { memset(m, 0, sizeof(*m)); }

void tpuci__idmap_free(tpuci__idmap_t *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof(*m));
}

static void tpuci__idmap_grow(tpuci__idmap_t *m) {
  size_t old = m->cap, i;
  const char **keys = m->keys;
  size_t *vals = m->vals;

  m->cap = old ? old * 2 : 16;
  m->keys = tpuci__calloc(m->cap, sizeof(*m->keys));
  m->vals = tpuci__calloc(m->cap, sizeof(*m->vals));
  m->len = 0;
  for (i = 0; i < old; i++)
    if (keys[i] != NULL) tpuci__idmap_put(m, keys[i], vals[i]);
  free(keys);
  free(vals);
}

void tpuci__idmap_put(tpuci__idmap_t *m, const char *key, size_t val) {
  size_t i;
  if ((m->len + 1) * 2 > m->cap) tpuci__idmap_grow(m);
  for (i = (size_t) tpuci__hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == NULL) {
      m->keys[i] = key;
      m->vals[i] = val;
      m->len++;
      return;
    }
    if (strcmp(m->keys[i], key) == 0) {
      m->keys[i] = key;
      m->vals[i] = val;
      return;
    }
  }
}

size_t tpuci__idmap_get(const tpuci__idmap_t *m, const char *key) {
  size_t i;
  if (m->cap == 0) return TPUCI__IDMAP_NONE;
  for (i = (size_t) tpuci__hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == NULL) return TPUCI__IDMAP_NONE;
    if (strcmp(m->keys[i], key) == 0) return m->vals[i];
  }
}
