/* A job's pytest record (`pytest = { ... }`, as lua/prelude.lua checked
 * and made it) into each instance's (plan/kind_spec.h: core/spec/ calls
 * these for the row of kind/kinds.c): -m and -k rendered with the
 * instance's combination, which shard it is ("shard=2/4" in its
 * matrix), and what its environment gets. pytest.per_chip is checked
 * against the job's topology and matrix here: one pytest process per chip
 * of its one host (docs/pytest.md, "One process per chip"), which the
 * loader makes parts of the job, as shards. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "kind/pytest/config.h"

/* The strings of the list t[k] (the prelude checked it) into out, which
 * the plan owns already. */
static void tpuci__rec_strv(lua_State *L, int t, const char *k, tpuci__strv_t *out) {
  lua_getfield(L, t, k);
  if (lua_istable(L, -1)) {
    lua_Integer i, n = (lua_Integer) lua_rawlen(L, -1);
    for (i = 1; i <= n; i++) {
      lua_rawgeti(L, -1, i);
      if (lua_type(L, -1) == LUA_TSTRING) tpuci__strv_push(out, lua_tostring(L, -1));
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
}

/* pytest.setup's commands (its strings), one a line, or NULL. */
static char *tpuci__rec_setup(lua_State *L, int t) {
  tpuci__buf_t b;
  lua_Integer i, n;
  int any = 0;
  lua_getfield(L, t, "setup");
  n = lua_istable(L, -1) ? (lua_Integer) lua_rawlen(L, -1) : 0;
  /* Nothing below allocates in Lua, so nothing raises: b cannot leak. */
  tpuci__buf_init(&b);
  for (i = 1; i <= n; i++) {
    if (lua_rawgeti(L, -1, i) == LUA_TSTRING)
      tpuci__buf_addf(&b, "%s%s", any++ ? "\n" : "", lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (any) return tpuci__buf_steal(&b);
  tpuci__buf_free(&b);
  return NULL;
}

/* pytest.per_chip (kind_spec.h's parts): the chips of the job's one host
 * (of its topology `tp`), one pytest process each; 0 when the record
 * does not ask for it. Raises "file:line: job 'x': ..." without a
 * topology, with one of more than one host, or when the matrix at `mt`
 * (maybe nil) has a key 'shard'. */
static int tpuci__pytest_parts(lua_State *L, const tpuci__spec_reader_t *read, int rec,
                               const char *job, const char *where, const tpuci__topology_t *tp,
                               int mt) {
  lua_Integer k, n;

  if (!read->boolean(L, rec, "per_chip")) return 0;
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

/* The record's fields but -m and -k, which are rendered. */
static void tpuci__pytest_fields(lua_State *L, const tpuci__spec_reader_t *read, int rec,
                                 tpuci__pytest_t *py) {
  const char *sel = read->str(L, rec, "select");
  /* The prelude checked it: "file" (its default), "class" or "test". */
  const char *by = read->str(L, rec, "shard_by");

  py->nargs = (size_t) read->integer(L, rec, "nargs");
  py->allow_empty = read->boolean(L, rec, "allow_empty");
  py->failed_first = read->boolean(L, rec, "failed_first");
  py->failed_first_steady = read->boolean(L, rec, "failed_first_steady");
  py->retry_steady = read->boolean(L, rec, "retry_steady");
  py->select_affected = sel != NULL && strcmp(sel, "affected") == 0;
  lua_getfield(L, rec, "select_audit");
  if (lua_isnumber(L, -1)) py->select_audit = (double) lua_tonumber(L, -1);
  lua_pop(L, 1);
  tpuci__rec_strv(L, rec, "select_ignore", &py->select_ignore);
  tpuci__rec_strv(L, rec, "select_always", &py->select_always);
  py->setup = tpuci__rec_setup(L, rec);
  py->shard_by = by && strcmp(by, "test") == 0    ? TPUCI__SHARD_BY_TEST
                 : by && strcmp(by, "class") == 0 ? TPUCI__SHARD_BY_CLASS
                                                  : TPUCI__SHARD_BY_FILE;
  py->test_timeout_ms = (uint64_t) read->integer(L, rec, "test_timeout_ms");
  py->new_tests_runs = (int) read->integer(L, rec, "new_tests_runs");
}

/* What a pytest job's environment gets unless the job sets it: no .pyc
 * files in the mounted sources, and Bazel's shard variables (0-based). */
static void tpuci__pytest_env(tpuci__instance_t *in, const tpuci__pytest_t *py) {
  char num[32];
  if (tpuci__kv_get(&in->env, "PYTHONDONTWRITEBYTECODE") == NULL)
    tpuci__kv_set(&in->env, "PYTHONDONTWRITEBYTECODE", "1");
  /* pytest.setup, for the bootstrap (which takes it out of the
   * environment before anything else runs). */
  if (py->setup != NULL) tpuci__kv_set(&in->env, "TPUCI_SETUP", py->setup);
  if (in->shards <= 1) return;
  snprintf(num, sizeof(num), "%d", in->shards);
  if (tpuci__kv_get(&in->env, "TEST_TOTAL_SHARDS") == NULL)
    tpuci__kv_set(&in->env, "TEST_TOTAL_SHARDS", num);
  snprintf(num, sizeof(num), "%d", in->shard - 1);
  if (tpuci__kv_get(&in->env, "TEST_SHARD_INDEX") == NULL)
    tpuci__kv_set(&in->env, "TEST_SHARD_INDEX", num);
}

/* The instance's pytest record, its shard, and its environment
 * (kind_spec.h's load). The record is the instance's before any Lua call
 * that may raise: the plan frees it. */
static void tpuci__pytest_load(lua_State *L, const tpuci__spec_reader_t *read, int rec,
                               tpuci__instance_t *in, int parts) {
  tpuci__pytest_t *py = tpuci__calloc(1, sizeof(*py));
  const char *shard;

  in->kind_config = py;
  in->runs_pytest = 1;
  lua_getfield(L, rec, "markers");
  if (!lua_isnil(L, -1)) py->markers = read->render(L, lua_gettop(L));
  lua_pop(L, 1);
  lua_getfield(L, rec, "k");
  if (!lua_isnil(L, -1)) py->k = read->render(L, lua_gettop(L));
  lua_pop(L, 1);
  tpuci__pytest_fields(L, read, rec, py);
  in->shards = (int) read->integer(L, rec, "shards");
  if (parts > 0) {
    in->per_chip = 1;
    in->shards = parts;
  }
  if (in->shards < 1) in->shards = 1;
  shard = in->shards > 1 ? tpuci__kv_get(&in->matrix, "shard") : NULL;
  if (shard != NULL) in->shard = atoi(shard);
  tpuci__pytest_env(in, py);
}

const tpuci__kind_spec_t tpuci__pytest_spec = {
    .key = "pytest",
    .config = &tpuci__pytest_config,
    .parts = tpuci__pytest_parts,
    .load = tpuci__pytest_load,
};
