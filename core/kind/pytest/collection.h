/* The collections store: what each shard group collected last time,
 * kept in .tpuci/collections.json between runs, so that a sharded suite
 * is split without a collection pass of its own (docs/pytest.md,
 * "Shards at run time").
 *
 *   {"version": 1,
 *    "groups": {"suite": {"key": "...", "ids": ["tests/test_a.py::test_x", ...],
 *                         "overhead_s": 2.5}}}
 *
 * A group's record is used only while its key matches (the key says
 * what selects the tests: the runtime, the interpreter and pytest's
 * arguments, the image, the workdir, the mounts and the env but
 * TEST_SHARD_INDEX, tpuci__collection_key()). It need not
 * match the tree: every shard collects the suite itself and keeps its
 * part of the split made from the record, and a test the record does not
 * know goes to one shard by a rule every shard computes alike, so a
 * stale record costs balance, never a test.
 */
#ifndef TPUCI_COLLECTION_H
#define TPUCI_COLLECTION_H

#include <stddef.h>

#include "plan/plan.h"
#include "base/util.h"

#define TPUCI__COLLECTIONS_MAX_BYTES ((size_t) 256 << 20)

typedef struct {
  char *group; /* the shard group's name (tpuci__pytest_group_name) */
  char *key;
  tpuci__strv_t ids; /* node ids, in the order collected */
  /* What one of its attempts took beyond its tests (start, imports,
   * collection), in seconds: the cost of a retry; -1: not known. */
  double overhead_s;
} tpuci__collection_t;

typedef struct tpuci__collections_s {
  tpuci__collection_t *items;
  size_t len, cap;
} tpuci__collections_t;

void tpuci__collections_init(tpuci__collections_t *c);
void tpuci__collections_free(tpuci__collections_t *c);

/* Loads a store into c (init'ed and empty). A missing file is an empty
 * store (0). A file that is not such JSON returns TPUCI_EIO with
 * "path:LINE:COL: what" or the group's name in err, and leaves c empty. */
int tpuci__collections_load(tpuci__collections_t *c, const char *path, tpuci__err_t *err);
int tpuci__collections_load_string(tpuci__collections_t *c, const char *data, size_t len,
                                   const char *name, tpuci__err_t *err);
/* The store as JSON (a new string); written atomically, its folder made. */
char *tpuci__collections_dump(const tpuci__collections_t *c);
int tpuci__collections_save(const tpuci__collections_t *c, const char *path, tpuci__err_t *err);

/* The record of `group` when its key is `key`; else NULL. */
const tpuci__collection_t *tpuci__collection_get(const tpuci__collections_t *c, const char *group,
                                                 const char *key);
/* Records what `group` collected under `key` (replacing its record). */
void tpuci__collection_put(tpuci__collections_t *c, const char *group, const char *key,
                           const tpuci__strv_t *ids, double overhead_s);

/* The key of the shard group of `inst`: everything of the plan that
 * selects its tests (the same for every shard of the group), as one
 * string. A new string. */
char *tpuci__collection_key(const tpuci__plan_t *plan, const tpuci__instance_t *inst);

#endif /* TPUCI_COLLECTION_H */
