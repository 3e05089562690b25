/* libFuzzer harness for the spec's copy of Lua's pattern matcher
 * (core/spec/pattern.c), against Lua's own: string.find, match, gmatch
 * and gsub with a subject, a pattern, a start and a replacement from the
 * input, in the sandbox of a spec (with the load's deadline) and in a
 * plain Lua state. Both must give the same results, or the same error.
 *
 * Input: a mode byte (bits 0-1: the function; 2: plain find; 3-7: the
 * start, -8..23), then the subject, a 0xFF byte, the pattern, a 0xFF
 * byte and the replacement (gsub; "%1" when missing). A case the sandbox
 * stopped at its deadline (a pattern that backtracks for hours) is not
 * run in the plain state; the copy does the same steps, so one that the
 * copy finished is finished there too. See run.sh and replay.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "spec/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP_MS 200

#define CHECK(c)                                                           \
  do {                                                                     \
    if (!(c)) {                                                            \
      fprintf(stderr, "fuzz_pattern: %s:%d: check failed: %s\n", __FILE__, \
              __LINE__, #c);                                               \
      abort();                                                             \
    }                                                                      \
  } while (0)

/* Runs the case with the string functions of L; leaves one string on
 * the stack: the results, or the error. */
static const char case_lua[] =
  "local mode, s, p, init, r = ...\n"
  "local fn = mode % 4\n"
  "local out = {}\n"
  "local function add(...)\n"
  "  for i = 1, select('#', ...) do\n"
  "    local v = select(i, ...)\n"
  "    out[#out + 1] = type(v) .. ':' .. tostring(v)\n"
  "  end\n"
  "end\n"
  "local ok, e = pcall(function()\n"
  "  if fn == 0 then add(string.find(s, p, init, (mode // 4) % 2 == 1))\n"
  "  elseif fn == 1 then add(string.match(s, p, init))\n"
  "  elseif fn == 2 then\n"
  "    local n = 0\n"
  "    for a, b in string.gmatch(s, p, init) do\n"
  "      add(a, b) n = n + 1 if n > 200 then break end\n"
  "    end\n"
  "  else\n"
  "    add(string.gsub(s, p, r, init > 0 and init or nil))\n"
  "    add(string.gsub(s, p, { a = 'A', [''] = false }))\n"
  "    add(string.gsub(s, p, function(a, b) return b or a end))\n"
  "  end\n"
  "end)\n"
  "if not ok then return 'error: ' .. tostring(e) end\n"
  "return table.concat(out, '|')\n";

static int push_case(lua_State *L, int mode, const char *s, size_t sl,
                     const char *p, size_t pl, int init, const char *r,
                     size_t rl) {
  if (luaL_loadbufferx(L, case_lua, sizeof(case_lua) - 1, "=case", "t") != LUA_OK)
    return -1;
  lua_pushinteger(L, mode);
  lua_pushlstring(L, s, sl);
  lua_pushlstring(L, p, pl);
  lua_pushinteger(L, init);
  lua_pushlstring(L, r, rl);
  return 0;
}

/* The sandbox's side, in protected mode. */
static int sandboxed(lua_State *L) {
  tpuci__spec_sandbox(L);
  tpuci__spec_arm_hook(L);
  lua_call(L, 5, 1);
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *in = (const char *) data, *s, *p, *r = "%1", *sep;
  size_t sl, pl, rl = 2, rest;
  tpuci__spec_ctx_t *c;
  lua_State *L;
  int mode, init, status;
  char *got;

  if (size < 1 || size > 4096) return 0;
  mode = data[0];
  init = (int) (mode >> 3) - 8;
  s = in + 1;
  rest = size - 1;
  sep = memchr(s, '\xff', rest);
  if (sep == NULL) return 0;
  sl = (size_t) (sep - s);
  p = sep + 1;
  rest -= sl + 1;
  sep = memchr(p, '\xff', rest);
  pl = sep ? (size_t) (sep - p) : rest;
  if (sep != NULL) {
    r = sep + 1;
    rl = rest - pl - 1;
  }

  /* The sandbox: a spec's state, with its deadline. */
  c = tpuci__calloc(1, sizeof(*c));
  c->chunkname = "fuzz.lua";
  c->timeout_ms = CAP_MS;
  c->deadline_ms = tpuci__spec_clock_ms() + CAP_MS;
  c->mem_limit = 64u * 1024 * 1024;
  tpuci__buf_init(&c->warning);
  tpuci__buf_init(&c->scratch);
  c->plan = tpuci__calloc(1, sizeof(*c->plan));
  tpuci__plan_init(c->plan);
  L = tpuci__spec_newstate(c);
  CHECK(L != NULL);
  c->L = L;
  lua_pushcfunction(L, sandboxed);
  CHECK(push_case(L, mode, s, sl, p, pl, init, r, rl) == 0);
  status = lua_pcall(L, 6, 1, 0);
  got = status == LUA_OK && lua_isstring(L, -1) ? tpuci__strdup(lua_tostring(L, -1)) : NULL;
  CHECK(status == LUA_OK || c->timed_out || c->mem_error || status == LUA_ERRMEM);
  c->closing = 1;
  lua_close(L);

  if (got != NULL && !c->timed_out && strstr(got, "spec took longer") == NULL &&
      strstr(got, "not enough memory") == NULL) {
    /* Lua's own, in a plain state. */
    lua_State *P = luaL_newstate();
    luaL_openlibs(P);
    CHECK(push_case(P, mode, s, sl, p, pl, init, r, rl) == 0);
    CHECK(lua_pcall(P, 5, 1, 0) == LUA_OK);
    if (strcmp(got, lua_tostring(P, -1)) != 0) {
      fprintf(stderr, "fuzz_pattern: the copy and Lua differ\n  copy: %s\n  Lua:  %s\n",
              got, lua_tostring(P, -1));
      abort();
    }
    lua_close(P);
  }
  free(got);
  tpuci__plan_free(c->plan);
  free(c->plan);
  tpuci__buf_free(&c->warning);
  tpuci__buf_free(&c->scratch);
  free(c->timeout_msg);
  free(c);
  return 0;
}
