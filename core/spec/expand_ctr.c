/* A job's container options (shm_size, devices, ulimits, ...), from the
 * record the prelude's container_spec() checked into an instance's
 * tpuci__ctr_opts_t (plan.h). Everything allocated is stored into the
 * instance at once, so a Lua memory error on the way leaks nothing. */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "spec/internal.h"

/* t[k] as a new string, or NULL when it is not a string. */
static char *tpuci__ctr_dup(lua_State *L, int t, const char *k) {
  return tpuci__strdup(tpuci__spec_get_str(L, t, k));
}

/* The list of strings t[k] appended to *out. */
static void tpuci__ctr_strv(lua_State *L, int t, const char *k, tpuci__strv_t *out) {
  lua_Integer i, n;
  lua_getfield(L, t, k);
  n = lua_istable(L, -1) ? (lua_Integer) lua_rawlen(L, -1) : 0;
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, -1, i);
    tpuci__strv_push(out, lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* The list of tables t[k]: pushes it and returns its length (0 when
 * absent). */
static size_t tpuci__ctr_list(lua_State *L, int t, const char *k) {
  lua_getfield(L, t, k);
  return lua_istable(L, -1) ? (size_t) lua_rawlen(L, -1) : 0;
}

static void tpuci__ctr_devices(lua_State *L, int t, tpuci__ctr_opts_t *out) {
  size_t i, n = tpuci__ctr_list(L, t, "devices");
  int list = lua_gettop(L);
  if (n > 0) {
    out->devices = tpuci__calloc(n, sizeof(*out->devices));
    out->ndevices = n;
  }
  for (i = 0; i < n; i++) {
    tpuci__device_t *d = &out->devices[i];
    lua_rawgeti(L, list, (lua_Integer) i + 1);
    d->host = tpuci__ctr_dup(L, -1, "host");
    d->target = tpuci__ctr_dup(L, -1, "target");
    d->perms = tpuci__ctr_dup(L, -1, "perms");
    d->glob = tpuci__spec_get_bool(L, -1, "glob");
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

static void tpuci__ctr_ulimits(lua_State *L, int t, tpuci__ctr_opts_t *out) {
  size_t i, n = tpuci__ctr_list(L, t, "ulimits");
  int list = lua_gettop(L);
  if (n > 0) {
    out->ulimits = tpuci__calloc(n, sizeof(*out->ulimits));
    out->nulimits = n;
  }
  for (i = 0; i < n; i++) {
    tpuci__ulimit_t *u = &out->ulimits[i];
    lua_rawgeti(L, list, (lua_Integer) i + 1);
    u->name = tpuci__ctr_dup(L, -1, "name");
    u->soft = (int64_t) tpuci__spec_get_int(L, -1, "soft");
    u->hard = (int64_t) tpuci__spec_get_int(L, -1, "hard");
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

static void tpuci__ctr_gpus(lua_State *L, int t, tpuci__ctr_opts_t *out) {
  tpuci__gpus_t *g;
  if (lua_getfield(L, t, "gpus") != LUA_TTABLE) {
    lua_pop(L, 1);
    return;
  }
  g = out->gpus = tpuci__calloc(1, sizeof(*g));
  g->count = (int) tpuci__spec_get_int(L, -1, "count");
  tpuci__ctr_strv(L, -1, "ids", &g->ids);
  g->driver = tpuci__ctr_dup(L, -1, "driver");
  tpuci__ctr_strv(L, -1, "caps", &g->caps);
  lua_pop(L, 1);
}

void tpuci__spec_expand_ctr(lua_State *L, int t, tpuci__ctr_opts_t *out) {
  lua_Integer i, n;

  luaL_checkstack(L, 8, "expanding container options");
  out->shm_bytes = (uint64_t) tpuci__spec_get_int(L, t, "shm");
  out->ipc = tpuci__ctr_dup(L, t, "ipc");
  out->privileged = tpuci__spec_get_bool(L, t, "privileged");
  tpuci__ctr_devices(L, t, out);
  tpuci__ctr_strv(L, t, "cap_add", &out->cap_add);
  tpuci__ctr_strv(L, t, "cap_drop", &out->cap_drop);
  tpuci__ctr_ulimits(L, t, out);
  tpuci__ctr_gpus(L, t, out);
  /* sysctls: { k1, v1, k2, v2, ... }, sorted by name. */
  lua_getfield(L, t, "sysctls");
  n = lua_istable(L, -1) ? (lua_Integer) lua_rawlen(L, -1) : 0;
  for (i = 1; i + 1 <= n; i += 2) {
    lua_rawgeti(L, -1, i);
    lua_rawgeti(L, -2, i + 1);
    tpuci__kv_set(&out->sysctls, lua_tostring(L, -2), lua_tostring(L, -1));
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
}
