/* An attempt's own network on an engine (a gang's, or a swarm's overlay
 * for network = "none"): created under a name that may be taken (then
 * with a random suffix, three times at most), removed once its
 * containers or services went (the caller asks again while the engine
 * still has endpoints on it: tpuci__net_remove_again). */
#ifndef TPUCI_RUNTIME_ENGINE_NETWORK_H
#define TPUCI_RUNTIME_ENGINE_NETWORK_H

#include <jansson.h>
#include <stddef.h>

#include "runtime/engine/engine.h"

typedef struct {
  tpuci__engine_t *eng;
  char *name;      /* final once created */
  char *id;        /* set once created */
  json_t *body;    /* POST /networks/create, "Name" kept in step */
  size_t name_max; /* the longest name the engine takes; 0: any */
  int tries;       /* creates again under another name */
  int rm_tries;    /* removals asked */
  /* while creating */
  const int *stop; /* set: a taken name is not tried again */
  tpuci__engine_cb done;
  void *data;
} tpuci__net_t;

/* `name` with a random suffix, for a name some other object has taken
 * (run ids are unique per state folder, the engine may be shared), cut
 * to `max` bytes in all (0: no limit). New string. */
char *tpuci__name_suffixed(const char *name, size_t max);
/* POST /networks/create; `done` gets the last answer (n->id is set when
 * it was ok and had an Id). */
void tpuci__net_create(tpuci__net_t *n, const int *stop, tpuci__engine_cb done, void *data);
/* DELETE /networks/{id}: 1, or 0 when it was never created. */
int tpuci__net_remove(tpuci__net_t *n, tpuci__engine_cb done, void *data);
/* For --keep-failed: "kept network <name> (<why>)...", or NULL when it was
 * never created. New string. */
char *tpuci__net_kept(const tpuci__net_t *n, const char *why);
/* Whether a failed removal is worth asking again (the engine answered,
 * not 404, fewer than `max` tries). */
int tpuci__net_remove_again(const tpuci__net_t *n, const tpuci__engine_res_t *res, int max);
void tpuci__net_free(tpuci__net_t *n);

#endif /* TPUCI_RUNTIME_ENGINE_NETWORK_H */
