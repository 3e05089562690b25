/* pytest.per_chip checked against the job's topology and matrix: one
 * pytest process per chip of its one host (docs/pytest.md, "One process
 * per chip"). expand.c emits the processes as shards. */
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "spec/internal.h"

int tpuci__spec_per_chip(lua_State *L, const char *job, const char *where,
                         const tpuci__topology_t *tp, int pytest, int mt) {
  lua_Integer k, n;

  if (lua_isnil(L, pytest) || !tpuci__spec_get_bool(L, pytest, "per_chip")) return 0;
  if (tp == NULL)
    return luaL_error(L,
                      "%s: job '%s': pytest.per_chip needs a topology: one process runs "
                      "per chip of its host",
                      where, job);
  if (tp->hosts != 1)
    return luaL_error(L,
                      "%s: job '%s': pytest.per_chip runs on one host, and topology '%s' "
                      "has %d hosts: use a one-host layout (e.g. layout = \"1x8\") or leave "
                      "per_chip out",
                      where, job, tp->name, tp->hosts);
  if (lua_istable(L, mt)) {
    lua_getfield(L, mt, "keys");
    n = (lua_Integer) lua_rawlen(L, -1);
    for (k = 1; k <= n; k++) {
      lua_rawgeti(L, -1, k);
      if (lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "shard") == 0)
        return luaL_error(L,
                          "%s: job '%s': matrix.shard: the key 'shard' is taken by "
                          "pytest.per_chip",
                          where, job);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  return tp->chips_per_host;
}
