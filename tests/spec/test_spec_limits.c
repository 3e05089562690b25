/* The load's time and memory caps against specs that try to get past
 * them inside library functions (patterns, table functions, load(),
 * metamethods that are C functions, recursion, huge strings and tables),
 * and the copies of Lua's functions that make this work (core/spec/
 * pattern.c, bounded.c) checked against Lua's own: the same cases run in
 * a plain Lua state and in the sandbox must give the same results and
 * errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "base/util.h"
#include "plan/plan.h"
#include "spec/spec.h"
#include "spec_fixture.h"

#define CAP_MS 300
#define CAP_MEMORY ((size_t) 32 * 1024 * 1024)
/* What a stopped load may take past its cap before the test calls it a
 * hang: a look at the clock is at most a millisecond of work away, but
 * sanitizer builds on a loaded, shared machine are slow, and freeing the
 * state counts too. Only a hang fails this; it is no speed check. */
#define SLACK_MS 30000

static int load_capped(const char *src, uint64_t timeout_ms, size_t memory) {
  return load_with(src, "/srv/proj", timeout_ms, memory);
}

/* Outcomes a hostile spec may have. */
/* LIMIT: one of the two caps, whichever a slow (sanitizer) build or a
 * fast one reaches first. */
enum { TIMEOUT, MEMORY, LIMIT, ERROR, REFUSED, ANY_BOUNDED };

static const struct {
  const char *src;
  int want;
  const char *msg; /* part of the message, or NULL */
} hostile[] = {
  /* Patterns that backtrack for hours or are quadratic. */
  {"local r = string.find(string.rep('a', 30), string.rep('a-', 12) .. 'b')",
   TIMEOUT, "spec.lua:1: spec took longer than 300ms to load (stopped in string.find)"},
  {"local r = string.match(string.rep('a', 30), string.rep('a*', 12) .. 'b')",
   TIMEOUT, "(stopped in string.match)"},
  {"for x in string.rep('a', 30):gmatch(string.rep('a-', 12) .. 'b') do end",
   TIMEOUT, "(stopped in string.gmatch)"},
  {"local r = string.gsub(string.rep('a', 30), string.rep('a?', 30) .. 'b', '')",
   TIMEOUT, "(stopped in string.gsub)"},
  {"local s = ('a'):rep(1e6)\nlocal r = s:find('.-b')", TIMEOUT,
   "spec.lua:2: spec took longer than 300ms to load (stopped in string.find)"},
  {"local s = ('a'):rep(3e6)\nlocal r = s:find(('a'):rep(1e6) .. 'b', 1, true)",
   TIMEOUT, "(stopped in string.find)"},
  {"local r = ('('):rep(1e6):find('%b()')", TIMEOUT, "(stopped in string.find)"},
  {"local c = '[' .. ('b'):rep(1e6) .. ']'\nlocal r = ('a'):rep(1e5):find(c)",
   TIMEOUT, "(stopped in string.find)"},
  {"local r = ('a'):rep(1e4):find('(a-)%1%1b')", ANY_BOUNDED, NULL},
  {"while true do pcall(string.find, ('a'):rep(30), ('a-'):rep(12) .. 'b') end",
   TIMEOUT, "spec took longer than 300ms"},
  /* Table functions that loop in C over what __len or arguments say. */
  {"local t = setmetatable({}, { __len = function() return math.maxinteger - 1 end })\n"
   "table.insert(t, 1, 'x')", TIMEOUT, "spec.lua:2: spec took longer than 300ms "
   "to load (stopped in table.insert)"},
  {"table.remove(setmetatable({}, { __len = function() return 1 << 62 end }), 1)",
   TIMEOUT, "(stopped in table.remove)"},
  {"table.move({}, 1, math.maxinteger - 1, 2)", TIMEOUT, "(stopped in table.move)"},
  {"table.move({}, 1, 1 << 62, 1, {})", TIMEOUT, "(stopped in table.move)"},
  /* C loops calling C functions: the call hook. */
  {"local s = table.concat(setmetatable({}, { __index = rawlen }), '', 1, 1 << 40)",
   TIMEOUT, "(stopped in a library function)"},
  {"table.sort(setmetatable({}, { __len = function() return 1 << 30 end,\n"
   "  __index = rawlen, __newindex = rawlen }))", TIMEOUT, "spec took longer"},
  {"local s = ('x'):rep(1e6):gsub('.', rawlen)", ANY_BOUNDED, NULL},
  {"local s = ('x'):rep(1e6):gsub('.', function(c) while true do end end)",
   TIMEOUT, "(endless loop?)"},
  /* load(): a big chunk, an endless reader. */
  {"local f = load(('x = 1 '):rep(4e6))", ANY_BOUNDED, NULL},
  {"local f = load(function() return 'x = 1 ' end)", TIMEOUT, "spec took longer"},
  {"local f = load(function() return ('x = 1 '):rep(1e5) end)", ANY_BOUNDED, NULL},
  {"local f = load(('x = 1 '):rep(1e6) .. 'while true do end')\nf()", TIMEOUT,
   "spec took longer"},
  /* Sizes the memory cap bounds. */
  {"local s = string.rep('x', 1 << 30)", MEMORY, "spec used more than 32 MiB"},
  {"local s = string.rep('x', 1 << 62)", ERROR, "resulting string too large"},
  {"local s = string.rep('x', 1e9, ',')", MEMORY, "spec used more than 32 MiB"},
  {"local s = 'x' while true do s = s .. s end", MEMORY, NULL},
  {"local t = {} for i = 1, 1e9 do t[i] = {} end", LIMIT, NULL},
  {"local t = {} for i = 1, 1e8 do t[i] = 'xxxxxxxx' end\nlocal s = table.concat(t)",
   LIMIT, NULL},
  {"local s = ('a'):rep(1e6):gsub('a', ('b'):rep(1000))", LIMIT, NULL},
  {"local s = string.pack('c' .. (1 << 40), '')", ANY_BOUNDED, NULL},
  {"local s = string.format('%q', ('\\0'):rep(1e7))", ANY_BOUNDED, NULL},
  {"local s = ('ab'):rep(1e7):upper():reverse():lower()", ANY_BOUNDED, NULL},
  {"collectgarbage('step', 1 << 40)\ncollectgarbage()", ANY_BOUNDED, NULL},
  /* string.format: Lua caps widths and precisions at two digits. */
  {"local s = string.format('%99999d', 1)", ERROR, "invalid conversion"},
  {"local s = string.format('%.99999f', 1)", ERROR, "invalid conversion"},
  {"local s = string.format('%099.99f', 1e308)", ANY_BOUNDED, NULL},
  /* Recursion: Lua's stack, the C stack. */
  {"local function f(n) return 1 + f(n + 1) end\nf(1)", REFUSED, NULL},
  {"local t = setmetatable({}, { __index = function(t, k) return t[k + 1] end })\n"
   "local x = t[1]", ERROR, "stack overflow"},
  {"local function g(s) return (s:gsub('.', g)) end\ng('ab')", ERROR, "stack overflow"},
  {"local t = setmetatable({}, { __tostring = function(t) return tostring(t) end })\n"
   "local s = tostring(t)", ERROR, "stack overflow"},
  {"local function f() return pcall(f) end\nf()", ANY_BOUNDED, NULL},
  {"local function f() return f() end\nf()", TIMEOUT, "spec took longer"},
  {"local t = table.unpack({}, 1, 1e8)", ERROR, "too many results to unpack"},
  {"local n = select('#', string.byte(('x'):rep(1e7), 1, -1))", ERROR,
   "string slice too long"},
  /* Errors whose reporting runs spec code. */
  {"error(setmetatable({}, { __tostring = function() while true do end end }))",
   TIMEOUT, "spec took longer"},
  {"coroutine.wrap(function() while true do end end)()", TIMEOUT, "spec took longer"},
};

/* Every hostile spec ends within its cap (plus slack) the way it should:
 * never a hang, never more memory than the cap. */
static void test_hostile(void **state) {
  size_t i;
  (void) state;
  for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
    uint64_t t0 = tpuci__now_ms(), dt;
    int r = load_capped(hostile[i].src, CAP_MS, CAP_MEMORY), ok;
    dt = tpuci__now_ms() - t0;
    switch (hostile[i].want) {
      case TIMEOUT:
        ok = r == TPUCI_ELIMIT && strstr(err.msg, "spec took longer than") != NULL;
        break;
      case MEMORY:
        ok = r == TPUCI_ELIMIT && strstr(err.msg, "spec used more than") != NULL;
        break;
      case LIMIT:
        ok = r == TPUCI_ELIMIT;
        break;
      case ERROR:
        ok = r == TPUCI_ESPEC;
        break;
      case REFUSED: /* an error, the memory cap or the time cap, whichever
                       comes first (under a sanitizer on a loaded machine
                       the clock can win) */
        ok = r == TPUCI_ESPEC ||
             (r == TPUCI_ELIMIT && (strstr(err.msg, "spec used more than") != NULL ||
                                    strstr(err.msg, "spec took longer than") != NULL));
        break;
      default:
        ok = 1;
        break;
    }
    if (ok && hostile[i].msg != NULL)
      ok = err.msg != NULL && strstr(err.msg, hostile[i].msg) != NULL;
    if (!ok)
      fail_msg("case %zu (%s): got %d: %s", i, hostile[i].src, r,
               err.msg ? err.msg : "(no message)");
    if (dt > CAP_MS + SLACK_MS)
      fail_msg("case %zu (%s) took %llu ms", i, hostile[i].src,
               (unsigned long long) dt);
    if (r != 0) assert_int_equal(plan.ninstances, 0);
  }
}

/* The CLI's default cap, 5 s, on the pattern of the report. */
static void test_default_cap(void **state) {
  uint64_t t0 = tpuci__now_ms(), dt;
  int r;
  (void) state;
  r = load_capped("job 'x' { run = 'x' }\n"
                  "local r = string.find(string.rep('a', 30), string.rep('a-', 12) .. 'b')\n",
                  0, 0);
  dt = tpuci__now_ms() - t0;
  assert_int_equal(r, TPUCI_ELIMIT);
  assert_string_equal(err.msg, "spec.lua:2: spec took longer than 5s to load "
                               "(stopped in string.find)");
  assert_true(dt >= 4990 && dt < 5000 + SLACK_MS);
}

/* ------------------------------------------------------------------ */
/* The copies behave like Lua's own                                    */

/* Turns what a pcall returned into one line: types and values, strings
 * in hex (a warning keeps neither NUL bytes nor bad UTF-8); the line in
 * "spec.lua:N:" goes, since the cases sit on other lines in each state. */
static const char ser_lua[] =
  "local function hex(s)\n"
  "  local t = {}\n"
  "  for i = 1, #s do t[i] = string.format('%02x', string.byte(s, i)) end\n"
  "  return table.concat(t)\n"
  "end\n"
  "local function one(v)\n"
  "  if type(v) == 'string' and v:sub(1, 9) == 'spec.lua:' then\n"
  "    v = 'spec.lua:?' .. v:sub((v:find(':', 10, true)))\n"
  "  end\n"
  "  if type(v) == 'string' then return 's:' .. hex(v) end\n"
  "  if type(v) == 'table' then\n"
  "    local keys = {}\n"
  "    for k in pairs(v) do keys[#keys + 1] = k end\n"
  "    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)\n"
  "    local p = {}\n"
  "    for _, k in ipairs(keys) do p[#p + 1] = one(k) .. '=' .. one(v[k]) end\n"
  "    return '{' .. table.concat(p, ',') .. '}'\n"
  "  end\n"
  "  if type(v) == 'function' then return 'function' end\n"
  "  return type(v) .. ':' .. tostring(v)\n"
  "end\n"
  "local function ser(...)\n"
  "  local out = {}\n"
  "  for i = 1, select('#', ...) do out[i] = one((select(i, ...))) end\n"
  "  return 'r ' .. table.concat(out, '|')\n"
  "end\n";

/* Lua expressions, each evaluated as pcall(function() return EXPR end). */
static const char *const same[] = {
  "string.find('hello world', 'o w')",
  "string.find('hello world', 'o', 6)",
  "string.find('hello world', 'l+')",
  "string.find('hello', 'l', -2)",
  "string.find('hello', 'l', -100)",
  "string.find('hello', '', 10)",
  "string.find('hello', '', 6)",
  "string.find('a.b', '.', 1, true)",
  "string.find('a+b', '+', 1, true)",
  "string.find('abc', 'b', 1, false)",
  "string.find('a\\0b', '\\0')",
  "string.find('a\\0b', '%z')",
  "string.find('  x', '^%s*()')",
  "string.find('key = value', '(%w+)%s*=%s*(%w+)')",
  "string.find('THE (quick) fox', '%((%a+)%)')",
  "string.find('f(a(b)c)d', '%b()')",
  "string.find('THE (quick) fox', '%f[%a]%a+', 5)",
  "string.find('aaa', 'a-b')",
  "string.find('aaab', 'a-b')",
  "string.find('abc', '[a-')",
  "string.find('abc', '[a')",
  "string.find('abc', '%')",
  "string.find('abc', '(()')",
  "string.find('abc', '%1')",
  "string.find('abc', 'a)')",
  "string.find('abc', '%g')",
  "string.find('abc', '%bx')",
  "string.find('abc', '%f')",
  "string.find(123, 2)",
  "string.find('abc', {})",
  "string.find(string.rep('a', 40), string.rep('(a)', 33))",
  "string.find('x', string.rep('(', 250) .. 'x' .. string.rep(')', 250))",
  "string.find(string.rep('x', 300), string.rep('x?', 300) .. 'x')",
  "string.match('hello 123 world', '%d+')",
  "string.match('2024-01-02', '(%d+)-(%d+)-(%d+)')",
  "string.match('abc', '()b()')",
  "string.match('abcabc', '(abc)%1')",
  "string.match('[[x]]', '^%[(%b[])%]$')",
  "string.match('x', '^(x)$')",
  "string.match('xy', '^(x)$')",
  "string.match('hello', '.-(l+)(.*)')",
  "string.match('  trim  ', '^%s*(.-)%s*$')",
  "string.match('caf\\xc3\\xa9', '[\\x80-\\xff]+')",
  "string.match('AbC', '%u%l%u')",
  "string.match('a,b;c', '[^,;]+$')",
  "string.match('x]', '[]]')",
  "string.match('x^', '[%^]')",
  "string.match('-', '[a%-z]')",
  "string.match('hello', 'l', 10)",
  "string.match('hello', 'h', 0)",
  "(function() local t = {} for k, v in ('a=1, b=2, c=3'):gmatch('(%w+)=(%w+)') do "
  "t[#t + 1] = k .. v end return table.concat(t, ';') end)()",
  "(function() local t = {} for w in ('one two  three'):gmatch('%a*') do "
  "t[#t + 1] = '<' .. w .. '>' end return table.concat(t) end)()",
  "(function() local t = {} for p in ('abc'):gmatch('()') do t[#t + 1] = p end "
  "return table.concat(t, ',') end)()",
  "(function() local t = {} for w in ('hello world'):gmatch('%a+', 3) do "
  "t[#t + 1] = w end return table.concat(t, ',') end)()",
  "(function() local t = {} for w in ('abc'):gmatch('^a') do t[#t + 1] = w end "
  "return #t end)()",
  "(function() local t = {} for w in ('abc'):gmatch('.', 10) do t[#t + 1] = w end "
  "return #t end)()",
  "string.gsub('hello world', 'o', '0')",
  "string.gsub('hello world', 'o', '0', 1)",
  "string.gsub('hello world', '(%w+)', '<%1>')",
  "string.gsub('hello world', '%w+', '%0 %0')",
  "string.gsub('abc', '', '-')",
  "string.gsub('abc', '.-', '-')",
  "string.gsub('hello', 'l', {l = 'L'})",
  "string.gsub('hello', 'l', {x = 'L'})",
  "string.gsub('hello', '.', function(c) return c:upper() end)",
  "string.gsub('hello', '.', function(c) if c == 'l' then return false end return 1 end)",
  "string.gsub('hello', '(l)(l)', '%2%1')",
  "string.gsub('hello', 'l', '%%')",
  "string.gsub('hello', 'l', '%2')",
  "string.gsub('hello', 'l', '%x')",
  "string.gsub('hello', '()l', '%1')",
  "string.gsub('hello', '^h', 'H')",
  "string.gsub('hello', '$', '!')",
  "string.gsub('hello', 'l', function() return {} end)",
  "string.gsub('hello', 'l', true)",
  "string.gsub('abc', '%w', '%0', -1)",
  "string.gsub('x = 1, y = 2', '(%w+) = (%w+)', '%2 = %1')",
  "string.gsub('\\0\\1\\2', '%c', 'c')",
  "(('x'):rep(3)):find('x', 2)",
  "('test'):match('t(e)s')",
  "table.insert({1, 2, 3}, 'x')",
  "(function() local t = {1, 2, 3} table.insert(t, 1, 'x') return t end)()",
  "(function() local t = {1, 2, 3} table.insert(t, 4, 'x') return t end)()",
  "(function() local t = {1, 2, 3} table.insert(t, 5, 'x') return t end)()",
  "(function() local t = {1, 2, 3} table.insert(t, 0, 'x') return t end)()",
  "(function() local t = {} table.insert(t, 1, 2, 3) return t end)()",
  "table.insert(nil, 1)",
  "table.insert({}, 'a', 1)",
  "(function() local t = {1, 2, 3} return table.remove(t), t end)()",
  "(function() local t = {1, 2, 3} return table.remove(t, 1), t end)()",
  "(function() local t = {1, 2, 3} return table.remove(t, 4), t end)()",
  "(function() local t = {1, 2, 3} return table.remove(t, 5), t end)()",
  "(function() local t = {} return table.remove(t), t end)()",
  "(function() local t = {} return table.remove(t, 0), t end)()",
  "(function() local t = {[0] = 'z'} return table.remove(t, 0), t end)()",
  "table.remove('x')",
  "table.move({1, 2, 3}, 1, 3, 2)",
  "table.move({1, 2, 3}, 2, 3, 1)",
  "table.move({1, 2, 3}, 1, 3, 1, {})",
  "table.move({1, 2, 3}, 3, 1, 1)",
  "table.move({1, 2, 3}, 1, 0, 5, {9})",
  "table.move({}, -1, math.maxinteger, 1)",
  "table.move({}, 1, 2, math.maxinteger)",
  "table.move({1}, 1, 1, 1, 'x')",
  "(function() local log = {} local p = setmetatable({}, {\n"
  "  __index = function(_, k) log[#log + 1] = 'r' .. k return k * 10 end,\n"
  "  __newindex = function(_, k, v) log[#log + 1] = 'w' .. k .. '=' .. v end,\n"
  "  __len = function() return 3 end })\n"
  "  table.insert(p, 1, 'x') table.remove(p, 1) table.move(p, 1, 3, 2)\n"
  "  return table.concat(log, ' ') end)()",
  "load('return 1 + 1')()",
  "load('return ...', 'chunk')(7, 8)",
  "load('x = ')",
  "load('x = ', '=named')",
  "load('error(\"e\")', '@file.lua')",
  "select(2, pcall(load('error(\"boom\")')))",
  "load('return x', 'c', 't', { x = 42 })()",
  "load(42)",
  "load(nil)",
  "load({})",
  "load('')",
  "(function() local parts, i = { 'return ', '1 ', '+ 2' }, 0\n"
  "  return load(function() i = i + 1 return parts[i] end)() end)()",
  "(function() local i = 0\n"
  "  return load(function() i = i + 1 if i == 1 then return 'return 5' end return '' end)() end)()",
  "(function() local done\n"
  "  return load(function() if not done then done = true return 1 end end)() end)()",
  "load(function() return {} end)",
  "load(function() error('in reader', 0) end)",
  "(function() local s = 'return ' .. string.rep('1 + ', 30000) .. '1'\n"
  "  return load(s)() end)()",
  "(function() local s = 'local x = \"' .. string.rep('y', 200000) .. '\" return #x'\n"
  "  return load(s)() end)()",
  "load(string.rep('x', 100000) .. ' = = 1')",
};

/* What Lua's own functions make of each case, in a plain state. */
static char *expected(size_t i) {
  lua_State *L = luaL_newstate();
  char *chunk, *out;
  luaL_openlibs(L);
  chunk = tpuci__printf("%s\nreturn ser(pcall(function() return %s end))", ser_lua,
                        same[i]);
  if (luaL_loadbuffer(L, chunk, strlen(chunk), "=spec.lua") != LUA_OK ||
      lua_pcall(L, 0, 1, 0) != LUA_OK)
    fail_msg("case %zu does not run in plain Lua: %s", i, lua_tostring(L, -1));
  out = tpuci__strdup(lua_tostring(L, -1));
  free(chunk);
  lua_close(L);
  return out;
}

static void test_same_as_lua(void **state) {
  tpuci__buf_t spec;
  size_t i, n = sizeof(same) / sizeof(same[0]);
  int r;
  (void) state;

  tpuci__buf_init(&spec);
  tpuci__buf_adds(&spec, ser_lua);
  for (i = 0; i < n; i++)
    tpuci__buf_addf(&spec, "warn(ser(pcall(function() return %s end)))\n", same[i]);
  tpuci__buf_adds(&spec, "job 'x' { run = 'x' }\n");
  r = load_capped(spec.data, 0, 0);
  if (r != 0) fail_msg("the spec failed: %s", err.msg);
  assert_int_equal(plan.warnings.len, n);
  for (i = 0; i < n; i++) {
    char *want = expected(i);
    const char *got = strstr(plan.warnings.items[i], ": r ");
    /* Messages with a location name the chunk: both are "spec.lua". */
    if (got == NULL || strcmp(got + 2, want) != 0)
      fail_msg("case %zu (%s):\n  Lua:     %s\n  sandbox: %s", i, same[i], want,
               plan.warnings.items[i]);
    free(want);
  }
  tpuci__buf_free(&spec);
}

/* What stays different on purpose: load() reads text only. */
static void test_load_text_only(void **state) {
  (void) state;
  assert_int_equal(load_capped("local f = string.dump(function() return 1 end)\n"
                               "local g, e = load(f)\n"
                               "assert(g == nil and e:find('attempt to load a "
                               "binary chunk'), e)\n"
                               "job 'x' { run = 'x' }\n", 0, 0), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_hostile, setup, teardown),
    cmocka_unit_test_setup_teardown(test_default_cap, setup, teardown),
    cmocka_unit_test_setup_teardown(test_same_as_lua, setup, teardown),
    cmocka_unit_test_setup_teardown(test_load_text_only, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
