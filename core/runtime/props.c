/* The runtimes' properties (props.h). */
#include <string.h>

#include "runtime/props.h"

static const tpuci__runtime_props_t tpuci__runtime_rows[TPUCI__RUNTIME__COUNT] = {
    [TPUCI__RUNTIME_LOCAL] = {.name = "local", .here = 1, .workdir_spec = 1},
    [TPUCI__RUNTIME_DOCKER] =
        {.name = "docker", .here = 1, .containers = 1, .engine = 1, .builds_images = 1},
    [TPUCI__RUNTIME_SWARM] = {.name = "swarm", .containers = 1, .engine = 1, .services = 1},
    [TPUCI__RUNTIME_SSH] = {.name = "ssh", .workers = 1, .capacity = 1},
};

static const tpuci__runtime_props_t tpuci__runtime_unknown = {.name = "unknown"};

const tpuci__runtime_props_t *tpuci__runtime_props(tpuci__runtime_kind_t kind) {
  if ((int) kind < 0 || kind >= TPUCI__RUNTIME__COUNT) return &tpuci__runtime_unknown;
  return &tpuci__runtime_rows[kind];
}

const char *tpuci__runtime_kind_name(tpuci__runtime_kind_t kind) {
  return tpuci__runtime_props(kind)->name;
}

int tpuci__runtime_kind_parse(const char *name) {
  int k;
  for (k = 0; k < TPUCI__RUNTIME__COUNT; k++)
    if (name != NULL && strcmp(name, tpuci__runtime_rows[k].name) == 0) return k;
  return -1;
}
