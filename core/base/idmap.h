/* A map from borrowed strings to indexes (open addressing). Test ids to
 * their place in a list, for the JUnit, history, timings and shards code;
 * hashed from a per-process random start, so that hostile input cannot
 * pick keys that all collide. */
#ifndef TPUCI_BASE_IDMAP_H
#define TPUCI_BASE_IDMAP_H

#include <stddef.h>

typedef struct {
  const char **keys;
  size_t *vals;
  size_t len, cap; /* cap is 0 or a power of two */
} tpuci__idmap_t;

#define TPUCI__IDMAP_NONE ((size_t) -1)

void tpuci__idmap_init(tpuci__idmap_t *m);
void tpuci__idmap_free(tpuci__idmap_t *m);
/* The key is borrowed: it must outlive the map (or be replaced). */
void tpuci__idmap_put(tpuci__idmap_t *m, const char *key, size_t val);
size_t tpuci__idmap_get(const tpuci__idmap_t *m, const char *key);

#endif /* TPUCI_BASE_IDMAP_H */
