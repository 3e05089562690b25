/* `topology` declarations into the plan: each resolved against the TPU
 * catalogue (plan/topology.h), its warnings the spec's. */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "plan/topology.h"
#include "spec/internal.h"

/* A declared topology, resolved against the TPU catalogue (a catalogue
 * type, a base, or custom numbers; core/plan/topology.c). The plan keeps the
 * resolved numbers, so resolving them again gives the same slice. No Lua
 * call is made while the slice or its messages are held. */
void tpuci__spec_expand_topology(lua_State *L, tpuci__spec_ctx_t *c, tpuci__topology_t *tp, int t) {
  tpuci__slice_req_t req;
  tpuci__slice_t slice;
  tpuci__err_t e = {0, NULL};
  tpuci__strv_t warnings = {NULL, 0, 0};
  const char *where = tpuci__spec_get_str(L, t, "where");
  size_t k;

  memset(&req, 0, sizeof(req));
  req.name = tpuci__spec_get_str(L, t, "name");
  req.base = tpuci__spec_get_str(L, t, "base");
  req.layout = tpuci__spec_get_str(L, t, "layout");
  req.hosts = (int) tpuci__spec_get_int(L, t, "hosts");
  req.chips_per_host = (int) tpuci__spec_get_int(L, t, "chips_per_host");
  req.cores_per_chip = (int) tpuci__spec_get_int(L, t, "cores_per_chip");
  req.emulate = tpuci__spec_get_str(L, t, "emulate");
  tp->name = tpuci__strdup(req.name);
  tp->base = tpuci__strdup(req.base);
  tp->where = tpuci__strdup(where);
  if (tpuci__slice_resolve(&slice, &req, &e) != 0) {
    c->scratch.len = 0;
    tpuci__buf_addf(&c->scratch, "%s: topology '%s': %s", where, req.name,
                    e.msg ? e.msg : "invalid");
    tpuci__err_clear(&e);
    lua_pushlstring(L, c->scratch.data, c->scratch.len);
    lua_error(L);
  }
  /* The spec's own emulate was checked; real hardware overrides it. */
  if (c->real) slice.emulate = TPUCI__EMULATE_REAL;
  tp->hosts = slice.hosts;
  tp->chips_per_host = slice.chips_per_host;
  tp->cores_per_chip = slice.cores_per_chip;
  tp->emulate = tpuci__strdup(tpuci__emulate_name(slice.emulate));
  tpuci__slice_warnings(&slice, &warnings);
  for (k = 0; k < warnings.len; k++) {
    char *w = tpuci__printf("%s: topology '%s': %s", where, req.name, warnings.items[k]);
    tpuci__spec_warn(c, w);
    free(w);
  }
  tpuci__strv_free(&warnings);
  tpuci__slice_free(&slice);
}
