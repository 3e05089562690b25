/* The library functions a spec could keep busy in C for longer than the
 * load's deadline, replaced by copies that look at the clock as they go.
 *
 * The count hook stops Lua code, and the call hook stops C functions that
 * loop calling others (sandbox.c); neither reaches a C function that
 * loops on its own. Those are:
 *
 * - the pattern matcher of string.find, match, gmatch and gsub, which
 *   backtracks: string.find(string.rep("a", 30), string.rep("a-", 12) ..
 *   "b") takes hours, and ("a"):rep(1e8):find(".-b") as long;
 * - table.insert, table.remove and table.move, whose loops run over as
 *   many elements as a __len metamethod or the arguments say, without
 *   allocating anything (setting an absent key to nil is free);
 * - load(), whose parser reads a chunk of any size in one go.
 *
 * The matcher (pattern.c) and the table functions (here) are Lua
 * 5.4.4's own (lstrlib.c, ltablib.c), with a count of the work done and a
 * look at the clock every so often; the results, errors and messages are
 * Lua's. load() hands the parser its chunk in slices and looks at the
 * clock before each. Functions whose work is bounded by the memory cap
 * (string.rep, table.concat on plain values, string.format, whose widths
 * Lua caps at two digits) are left alone.
 *
 * The code taken from Lua is
 *   Copyright (C) 1994-2022 Lua.org, PUC-Rio.
 *   Permission is hereby granted, free of charge, to any person obtaining
 *   a copy of this software and associated documentation files (the
 *   "Software"), to deal in the Software without restriction, including
 *   without limitation the rights to use, copy, modify, merge, publish,
 *   distribute, sublicense, and/or sell copies of the Software, and to
 *   permit persons to whom the Software is furnished to do so, subject to
 *   the following conditions:
 *   The above copyright notice and this permission notice shall be
 *   included in all copies or substantial portions of the Software.
 *   THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND,
 *   EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
 *   MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
 *   NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS
 *   BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN
 *   ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN
 *   CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
 *   SOFTWARE. */
#include <stddef.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "spec/internal.h"

/* Elements moved between two looks at the clock: well under a
 * millisecond. */
#define TPUCI__BOUNDED_WORK 65536

/* load() parses its chunk in slices of this many bytes. */
#define TPUCI__BOUNDED_SLICE (64 * 1024)

/* ------------------------------------------------------------------ */
/* table.insert, table.remove, table.move (ltablib.c)                 */

#define TPUCI__TAB_R 1 /* read */
#define TPUCI__TAB_W 2 /* write */
#define TPUCI__TAB_L 4 /* length */
#define TPUCI__TAB_RW (TPUCI__TAB_R | TPUCI__TAB_W)

static int tpuci__tab_checkfield(lua_State *L, const char *key, int n) {
  lua_pushstring(L, key);
  return (lua_rawget(L, -n) != LUA_TNIL);
}

/* Whether arg is a table or behaves like one (ltablib.c checktab). */
static void tpuci__tab_check(lua_State *L, int arg, int what) {
  if (lua_type(L, arg) != LUA_TTABLE) {
    int n = 1; /* number of elements to pop */
    if (lua_getmetatable(L, arg) &&
        (!(what & TPUCI__TAB_R) || tpuci__tab_checkfield(L, "__index", ++n)) &&
        (!(what & TPUCI__TAB_W) || tpuci__tab_checkfield(L, "__newindex", ++n)) &&
        (!(what & TPUCI__TAB_L) || tpuci__tab_checkfield(L, "__len", ++n)))
      lua_pop(L, n);
    else luaL_checktype(L, arg, LUA_TTABLE); /* force an error */
  }
}

static lua_Integer tpuci__tab_getn(lua_State *L, int arg, int what) {
  tpuci__tab_check(L, arg, what | TPUCI__TAB_L);
  return luaL_len(L, arg);
}

/* One element moved: every TPUCI__BOUNDED_WORK of them, the clock. */
static void tpuci__tab_step(lua_State *L, lua_Integer i, const char *what) {
  if ((i & (TPUCI__BOUNDED_WORK - 1)) == 0) tpuci__spec_check_deadline(L, what);
}

static int tpuci__tab_insert(lua_State *L) {
  lua_Integer pos; /* where to insert new element */
  lua_Integer e = tpuci__tab_getn(L, 1, TPUCI__TAB_RW);
  e = (lua_Integer) ((lua_Unsigned) e + 1u); /* first empty element */
  switch (lua_gettop(L)) {
    case 2: {  /* called with only 2 arguments */
      pos = e; /* insert new element at the end */
      break;
    }
    case 3: {
      lua_Integer i;
      pos = luaL_checkinteger(L, 2); /* 2nd argument is the position */
      /* check whether 'pos' is in [1, e] */
      luaL_argcheck(L, (lua_Unsigned) pos - 1u < (lua_Unsigned) e, 2, "position out of bounds");
      for (i = e; i > pos; i--) { /* move up elements */
        tpuci__tab_step(L, i, "table.insert");
        lua_geti(L, 1, i - 1);
        lua_seti(L, 1, i); /* t[i] = t[i - 1] */
      }
      break;
    }
    default: return luaL_error(L, "wrong number of arguments to 'insert'");
  }
  lua_seti(L, 1, pos); /* t[pos] = v */
  return 0;
}

static int tpuci__tab_remove(lua_State *L) {
  lua_Integer size = tpuci__tab_getn(L, 1, TPUCI__TAB_RW);
  lua_Integer pos = luaL_optinteger(L, 2, size);
  if (pos != size) /* validate 'pos' if given */
    /* check whether 'pos' is in [1, size + 1] */
    luaL_argcheck(L, (lua_Unsigned) pos - 1u <= (lua_Unsigned) size, 1, "position out of bounds");
  lua_geti(L, 1, pos); /* result = t[pos] */
  for (; pos < size; pos++) {
    tpuci__tab_step(L, pos, "table.remove");
    lua_geti(L, 1, pos + 1);
    lua_seti(L, 1, pos); /* t[pos] = t[pos + 1] */
  }
  lua_pushnil(L);
  lua_seti(L, 1, pos); /* remove entry t[pos] */
  return 1;
}

/* Copies a1[f..e] into a2[t..] (a2 defaults to a1), in increasing order
 * where that is safe. */
static int tpuci__tab_move(lua_State *L) {
  lua_Integer f = luaL_checkinteger(L, 2);
  lua_Integer e = luaL_checkinteger(L, 3);
  lua_Integer t = luaL_checkinteger(L, 4);
  int tt = !lua_isnoneornil(L, 5) ? 5 : 1; /* destination table */
  tpuci__tab_check(L, 1, TPUCI__TAB_R);
  tpuci__tab_check(L, tt, TPUCI__TAB_W);
  if (e >= f) { /* otherwise, nothing to move */
    lua_Integer n, i;
    luaL_argcheck(L, f > 0 || e < LUA_MAXINTEGER + f, 3, "too many elements to move");
    n = e - f + 1; /* number of elements to move */
    luaL_argcheck(L, t <= LUA_MAXINTEGER - n + 1, 4, "destination wrap around");
    if (t > e || t <= f || (tt != 1 && !lua_compare(L, 1, tt, LUA_OPEQ))) {
      for (i = 0; i < n; i++) {
        tpuci__tab_step(L, i, "table.move");
        lua_geti(L, 1, f + i);
        lua_seti(L, tt, t + i);
      }
    } else {
      for (i = n - 1; i >= 0; i--) {
        tpuci__tab_step(L, i, "table.move");
        lua_geti(L, 1, f + i);
        lua_seti(L, tt, t + i);
      }
    }
  }
  lua_pushvalue(L, tt); /* return destination table */
  return 1;
}

/* ------------------------------------------------------------------ */
/* load()                                                             */

/* The reader load() gets instead of the spec's chunk: upvalue 1 is the
 * spec's reader function (nil for a string chunk), 2 the string being
 * handed out, 3 how much of it was. Slices of TPUCI__BOUNDED_SLICE bytes,
 * the clock before each, so the parser returns here often enough. */
static int tpuci__bounded_reader(lua_State *L) {
  size_t len = 0, off, n;
  const char *s;

  tpuci__spec_check_deadline(L, "load");
  s = lua_tolstring(L, lua_upvalueindex(2), &len);
  off = (size_t) lua_tointeger(L, lua_upvalueindex(3));
  if (s == NULL || off >= len) {
    if (lua_isnil(L, lua_upvalueindex(1))) return 0; /* a string: done */
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_call(L, 0, 1);
    if (lua_isnil(L, -1)) return 0;
    if (!lua_isstring(L, -1)) {
      /* Located at the spec's call of load(), as Lua does: levels 1 and
       * 2 are Lua's load() and tpuci__bounded_load(). */
      luaL_where(L, 3);
      lua_pushliteral(L, "reader function must return a string");
      lua_concat(L, 2);
      return lua_error(L);
    }
    s = lua_tolstring(L, -1, &len);
    lua_replace(L, lua_upvalueindex(2));
    off = 0;
    if (len == 0) return 0; /* "" ends the chunk, as in Lua */
  }
  n = len - off < TPUCI__BOUNDED_SLICE ? len - off : TPUCI__BOUNDED_SLICE;
  lua_pushlstring(L, s + off, n);
  lua_pushinteger(L, (lua_Integer) (off + n));
  lua_replace(L, lua_upvalueindex(3));
  return 1;
}

/* load(chunk [, chunkname [, mode [, env]]]), text only: Lua's load with
 * the mode forced to "t" (binary chunks could break the VM) and the chunk
 * read through tpuci__bounded_reader. Upvalue 1 is Lua's load. */
static int tpuci__bounded_load(lua_State *L) {
  int n = lua_gettop(L);
  size_t len;

  lua_settop(L, n < 4 ? 3 : 4);
  lua_pushliteral(L, "t");
  lua_replace(L, 3);
  if (lua_tolstring(L, 1, &len) != NULL) {
    /* A string's default chunk name is the string itself. */
    if (lua_isnil(L, 2)) {
      lua_pushvalue(L, 1);
      lua_replace(L, 2);
    }
    lua_pushnil(L);
    lua_pushvalue(L, 1);
  } else {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
  }
  lua_pushinteger(L, 0);
  lua_pushcclosure(L, tpuci__bounded_reader, 3);
  lua_replace(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

void tpuci__spec_bounded(lua_State *L) {
  static const luaL_Reg tables[] = {{"insert", tpuci__tab_insert},
                                    {"remove", tpuci__tab_remove},
                                    {"move", tpuci__tab_move},
                                    {NULL, NULL}};

  tpuci__spec_patterns(L);
  lua_getglobal(L, LUA_TABLIBNAME);
  luaL_setfuncs(L, tables, 0);
  lua_pop(L, 1);
  lua_getglobal(L, "load");
  lua_pushcclosure(L, tpuci__bounded_load, 1);
  lua_setglobal(L, "load");
}
