/* The spec's sandboxed Lua state: a capped allocator, a deadline hook, a
 * panic handler that does not abort, warnings collected into the plan, a
 * reduced standard library, and the few C helpers a spec may call
 * (tpuci.env, tpuci.read_file) or the prelude relies on. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "spec/internal.h"
#include "plan/plan.h"
#include "plan/topology.h"

/* At most this many warnings are kept; a spec that warns in a loop must
 * not grow the plan without bound (the cap on Lua memory does not cover
 * the plan). */
#define TPUCI__SPEC_MAX_WARNINGS 1000
#define TPUCI__SPEC_MAX_WARNING_LEN 2000

tpuci__spec_ctx_t *tpuci__spec_ctx(lua_State *L) {
  void *ud = NULL;
  lua_getallocf(L, &ud);
  return ud;
}

uint64_t tpuci__spec_clock_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

/* The allocator refuses to grow the state past c->mem_limit. Lua then runs
 * an emergency collection, tries once more, and raises a memory error
 * (LUA_ERRMEM) if that fails too. Shrinking never fails. */
static void *tpuci__spec_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  tpuci__spec_ctx_t *c = ud;
  size_t old = ptr ? osize : 0;
  void *p;

  if (nsize == 0) {
    free(ptr);
    c->mem_used -= old;
    return NULL;
  }
  if (nsize > old && nsize - old > c->mem_limit - c->mem_used) return NULL;
  p = realloc(ptr, nsize);
  if (p == NULL) return NULL;
  c->mem_used = c->mem_used - old + nsize;
  if (c->mem_used > c->mem_peak) c->mem_peak = c->mem_used;
  return p;
}

/* Every entry into Lua is a lua_pcall, so a panic means a bug. The
 * loader arms panic_jmp around its use of the state; jumping there (the
 * manual's way out of a panic) keeps the process alive. */
static int tpuci__spec_panic(lua_State *L) {
  tpuci__spec_ctx_t *c = tpuci__spec_ctx(L);
  const char *msg =
      lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "error object is not a string";
  free(c->panic_msg);
  c->panic_msg = tpuci__strdup(msg);
  if (c->panic_armed) longjmp(c->panic_jmp, 1);
  fprintf(stderr, "tpuci: Lua panic while loading a spec: %s\n", msg);
  return 0;
}

int tpuci__spec_line(lua_State *L, int level) {
  tpuci__spec_ctx_t *c = tpuci__spec_ctx(L);
  lua_Debug ar;

  for (; lua_getstack(L, level, &ar); level++) {
    if (!lua_getinfo(L, "Sl", &ar)) continue;
    if (ar.currentline > 0 && ar.source[0] == '=' && strcmp(ar.source + 1, c->chunkname) == 0)
      return ar.currentline;
  }
  return 0;
}

/* A warning is a message, not data: bytes that are not UTF-8 (from the
 * spec's warn(), or where a long one was cut) become '?', so the JSON plan
 * can hold it. */
static char *tpuci__spec_clean(char *s) {
  size_t len = strlen(s), off = 0, at;
  while (tpuci__text_problem(s + off, len - off, &at) != NULL) {
    s[off + at] = '?';
    off += at + 1;
  }
  return s;
}

void tpuci__spec_warn(tpuci__spec_ctx_t *c, const char *msg) {
  tpuci__strv_t *w = &c->plan->warnings;
  size_t n = strlen(msg);
  if (w->len < TPUCI__SPEC_MAX_WARNINGS && n <= TPUCI__SPEC_MAX_WARNING_LEN)
    tpuci__strv_take(w, tpuci__spec_clean(tpuci__strdup(msg)));
  else if (w->len < TPUCI__SPEC_MAX_WARNINGS)
    tpuci__strv_take(w,
                     tpuci__spec_clean(tpuci__printf("%.*s...", TPUCI__SPEC_MAX_WARNING_LEN, msg)));
  else if (w->len == TPUCI__SPEC_MAX_WARNINGS)
    tpuci__strv_take(w, tpuci__printf("%s: more than %d warnings, the rest "
                                      "were dropped",
                                      c->chunkname, TPUCI__SPEC_MAX_WARNINGS));
}

/* "spec.lua:12: " for the spec line that is running, or "spec.lua: ". */
static void tpuci__spec_where_prefix(tpuci__spec_ctx_t *c, tpuci__buf_t *b) {
  int line = c->closing ? 0 : tpuci__spec_line(c->L, 1);
  if (line > 0) tpuci__buf_addf(b, "%s:%d: ", c->chunkname, line);
  else tpuci__buf_addf(b, "%s: ", c->chunkname);
}

/* warn("a", "b") arrives as pieces; a single piece starting with '@' is a
 * control message ("@on"), which does not apply: warnings are always on. */
static void tpuci__spec_warnf(void *ud, const char *msg, int tocont) {
  tpuci__spec_ctx_t *c = ud;
  if (c->warning.len == 0) {
    if (!tocont && msg[0] == '@') return;
    tpuci__spec_where_prefix(c, &c->warning);
  }
  tpuci__buf_adds(&c->warning, msg);
  if (!tocont) {
    tpuci__spec_warn(c, c->warning.data);
    c->warning.len = 0;
  }
}

static void tpuci__spec_hook(lua_State *L, lua_Debug *ar);

/* The first time the deadline is found past: the message, naming the
 * spec's line and, when it was a library function that ran out of time,
 * which one (`what`, or NULL). */
static void tpuci__spec_timed_out(lua_State *L, const char *what) {
  tpuci__spec_ctx_t *c = tpuci__spec_ctx(L);
  char d[32], why[96];
  int line;

  c->timed_out = 1;
  tpuci__duration_format(c->timeout_ms, d, sizeof(d));
  if (what != NULL) snprintf(why, sizeof(why), "stopped in %s", what);
  else snprintf(why, sizeof(why), "endless loop?");
  line = tpuci__spec_line(L, 0);
  if (line > 0)
    c->timeout_msg = tpuci__printf("%s:%d: spec took longer than %s to load "
                                   "(%s)",
                                   c->chunkname, line, d, why);
  else
    c->timeout_msg = tpuci__printf("%s: spec took longer than %s to load "
                                   "(%s)",
                                   c->chunkname, d, why);
}

static int tpuci__spec_past(lua_State *L, const char *what) {
  tpuci__spec_ctx_t *c = tpuci__spec_ctx(L);
  if (!c->timed_out) {
    if (tpuci__spec_clock_ms() < c->deadline_ms) return 0;
    tpuci__spec_timed_out(L, what);
  }
  /* From now on raise at every instruction, in this thread and the main
   * one, so a pcall in the spec cannot swallow the error and carry on
   * (Redis re-arms its hook the same way). Not at calls: the message
   * handler is a call, and it must run. */
  lua_sethook(L, tpuci__spec_hook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
  if (L != c->L) lua_sethook(c->L, tpuci__spec_hook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
  return 1;
}

/* The hook of the load's deadline. Count events come every
 * TPUCI__SPEC_HOOK_COUNT instructions of Lua code; call events at every
 * call, C functions included, so a C function that loops calling others
 * (table.concat through an __index metamethod that is a C function, say)
 * still meets the deadline. The clock is read at every count event and
 * at every TPUCI__SPEC_HOOK_CALLS-th call. */
static void tpuci__spec_hook(lua_State *L, lua_Debug *ar) {
  tpuci__spec_ctx_t *c = tpuci__spec_ctx(L);
  const char *what = NULL;
  lua_Debug caller;

  if (ar->event == LUA_HOOKCALL || ar->event == LUA_HOOKTAILCALL) {
    if (++c->calls < TPUCI__SPEC_HOOK_CALLS) return;
    c->calls = 0;
    /* A C function calling: a library function looping in C. */
    if (!c->timed_out && tpuci__spec_clock_ms() >= c->deadline_ms && lua_getstack(L, 1, &caller) &&
        lua_getinfo(L, "S", &caller) && strcmp(caller.what, "C") == 0)
      what = "a library function";
  }
  if (!tpuci__spec_past(L, what)) return;
  lua_pushstring(L, c->timeout_msg);
  lua_error(L);
}

void tpuci__spec_check_deadline(lua_State *L, const char *what) {
  if (!tpuci__spec_past(L, what)) return;
  lua_pushstring(L, tpuci__spec_ctx(L)->timeout_msg);
  lua_error(L);
}

void tpuci__spec_arm_hook(lua_State *L) {
  lua_sethook(L, tpuci__spec_hook, LUA_MASKCOUNT | LUA_MASKCALL, TPUCI__SPEC_HOOK_COUNT);
}

lua_State *tpuci__spec_newstate(tpuci__spec_ctx_t *c) {
  lua_State *L = lua_newstate(tpuci__spec_alloc, c);
  if (L == NULL) return NULL;
  lua_atpanic(L, tpuci__spec_panic);
  lua_setwarnf(L, tpuci__spec_warnf, c);
  return L;
}

/* ------------------------------------------------------------------ */
/* The base library, made safe                                        */

/* print() must not write to the host's stdout: it becomes a warning. */
static int tpuci__spec_print(lua_State *L) {
  tpuci__spec_ctx_t *c = tpuci__spec_ctx(L);
  int n = lua_gettop(L), i, line;
  luaL_Buffer b;

  luaL_buffinit(L, &b);
  line = tpuci__spec_line(L, 1);
  if (line > 0) lua_pushfstring(L, "%s:%d: ", c->chunkname, line);
  else lua_pushfstring(L, "%s: ", c->chunkname);
  luaL_addvalue(&b);
  for (i = 1; i <= n; i++) {
    if (i > 1) luaL_addchar(&b, ' ');
    luaL_tolstring(L, i, NULL);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  tpuci__spec_warn(c, lua_tostring(L, -1));
  return 0;
}

/* Lua runs __gc finalizers with hooks off (lgc.c GCTM), so a finalizer
 * with an endless loop would escape the deadline, even in lua_close().
 * Lua marks a table for finalization only if its metatable has __gc when
 * setmetatable() is called, and tables are the only objects a spec can
 * give a metatable: refusing __gc here closes that door. */
static int tpuci__spec_setmetatable(lua_State *L) {
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    if (lua_rawget(L, 2) != LUA_TNIL)
      return luaL_error(L, "setmetatable: __gc metamethods are not allowed "
                           "in a spec");
    lua_pop(L, 1);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

/* The message handler of xpcall() wrapped: an error raised by the
 * deadline hook calls the handler with hooks still off, so once past the
 * deadline the spec's handler is not run at all. */
static int tpuci__spec_xpcall_handler(lua_State *L) {
  if (tpuci__spec_ctx(L)->timed_out) return 1;
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

static int tpuci__spec_xpcall(lua_State *L) {
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_pushvalue(L, 2);
  lua_pushcclosure(L, tpuci__spec_xpcall_handler, 1);
  lua_replace(L, 2);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

void tpuci__spec_sandbox(lua_State *L) {
  static const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base},
                                  {LUA_TABLIBNAME, luaopen_table},
                                  {LUA_STRLIBNAME, luaopen_string},
                                  {LUA_MATHLIBNAME, luaopen_math},
                                  {LUA_UTF8LIBNAME, luaopen_utf8},
                                  {LUA_COLIBNAME, luaopen_coroutine},
                                  {NULL, NULL}};
  const luaL_Reg *lib;

  /* No io, os, package (require) or debug. */
  for (lib = libs; lib->func; lib++) {
    luaL_requiref(L, lib->name, lib->func, 1);
    lua_pop(L, 1);
  }
  lua_pushnil(L);
  lua_setglobal(L, "dofile");
  lua_pushnil(L);
  lua_setglobal(L, "loadfile");
  lua_pushcfunction(L, tpuci__spec_print);
  lua_setglobal(L, "print");
  lua_getglobal(L, "setmetatable");
  lua_pushcclosure(L, tpuci__spec_setmetatable, 1);
  lua_setglobal(L, "setmetatable");
  lua_getglobal(L, "xpcall");
  lua_pushcclosure(L, tpuci__spec_xpcall, 1);
  lua_setglobal(L, "xpcall");
  /* load() (text only), string.find and the others that loop in C. */
  tpuci__spec_bounded(L);
}

/* ------------------------------------------------------------------ */
/* tpuci.env, tpuci.read_file (tpuci.yaml is in yaml.c)              */

/* tpuci.env(name [, default]): the caller's environment, explicitly. */
static int tpuci__l_env(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  const char *v = getenv(name);
  if (v != NULL) lua_pushstring(L, v);
  else if (lua_gettop(L) >= 2) lua_pushvalue(L, 2);
  else lua_pushnil(L);
  return 1;
}

static int tpuci__has_dotdot(const char *p) {
  while (*p) {
    size_t n = strcspn(p, "/");
    if (n == 2 && p[0] == '.' && p[1] == '.') return 1;
    p += n;
    while (*p == '/') p++;
  }
  return 0;
}

/* tpuci.read_file(relpath): a file beside the spec, as a string. Nothing
 * here is malloc'd, and no Lua call can raise while the file is open.
 * tpuci.yaml shares it, with its own name in messages (fn). */
int tpuci__spec_read_beside(lua_State *L, const char *fn) {
  tpuci__spec_ctx_t *c = tpuci__spec_ctx(L);
  char joined[PATH_MAX], real[PATH_MAX], base[PATH_MAX];
  struct stat st, again;
  luaL_Buffer b;
  size_t n, blen, got;
  const char *rel = luaL_checklstring(L, 1, &n);
  char *p;
  int fd, bad = 0;

  if (n == 0 || strlen(rel) != n) return luaL_error(L, "%s: bad path '%s'", fn, rel);
  if (rel[0] == '/')
    return luaL_error(L,
                      "%s: '%s' is absolute; give a path "
                      "relative to the spec's folder",
                      fn, rel);
  if (tpuci__has_dotdot(rel)) return luaL_error(L, "%s: '%s' leaves the spec's folder", fn, rel);
  if (snprintf(joined, sizeof(joined), "%s/%s", c->spec_dir, rel) >= (int) sizeof(joined))
    return luaL_error(L, "%s: '%s': path too long", fn, rel);
  if (realpath(c->spec_dir, base) == NULL)
    return luaL_error(L,
                      "%s: cannot resolve the spec's folder "
                      "'%s': %s",
                      fn, c->spec_dir, strerror(errno));
  if (realpath(joined, real) == NULL)
    return luaL_error(L, "%s: cannot read '%s': %s", fn, rel, strerror(errno));
  blen = strlen(base);
  if (strncmp(real, base, blen) != 0 || (real[blen] != '/' && !(blen == 1 && base[0] == '/')))
    return luaL_error(L,
                      "%s: '%s' leaves the spec's folder "
                      "(through a symbolic link)",
                      fn, rel);
  if (stat(real, &st) != 0)
    return luaL_error(L, "%s: cannot read '%s': %s", fn, rel, strerror(errno));
  /* Like the spec itself: regular files only, checked again with fstat()
   * on the file opened without blocking (a FIFO put in its place must not
   * hang the load). The size is bounded by the state's memory limit. */
  if (!S_ISREG(st.st_mode))
    return luaL_error(L, "%s: '%s' is %s, not a regular file", fn, rel,
                      tpuci__file_kind(st.st_mode));
  p = luaL_buffinitsize(L, &b, (size_t) st.st_size);
  fd = tpuci__open_regular(real, &again);
  if (fd < 0)
    return luaL_error(
        L, "%s: cannot read '%s': %s", fn, rel,
        fd == UV_EISDIR || fd == UV_EFTYPE ? "it is no longer a regular file" : uv_strerror(fd));
  got = 0;
  while (got < (size_t) st.st_size) {
    ssize_t rd = read(fd, p + got, (size_t) st.st_size - got);
    if (rd < 0 && errno == EINTR) continue;
    if (rd <= 0) {
      bad = rd < 0 ? errno : 0;
      break;
    }
    got += (size_t) rd;
  }
  close(fd);
  if (bad) return luaL_error(L, "%s: cannot read '%s': %s", fn, rel, strerror(bad));
  luaL_pushresultsize(&b, got);
  return 1;
}

static int tpuci__l_read_file(lua_State *L) {
  return tpuci__spec_read_beside(L, "tpuci.read_file");
}

/* ------------------------------------------------------------------ */
/* Helpers for the prelude                                            */

/* "spec.lua:12": where the running declaration was called from, skipping
 * C functions (pcall) and the prelude's own frames. */
static int tpuci__l_where(lua_State *L) {
  tpuci__spec_ctx_t *c = tpuci__spec_ctx(L);
  lua_Debug ar;
  int level;

  for (level = 1; lua_getstack(L, level, &ar); level++) {
    if (!lua_getinfo(L, "Sl", &ar)) continue;
    if (ar.currentline <= 0) continue;
    if (strcmp(ar.source, TPUCI__PRELUDE_SOURCE) == 0) continue;
    /* The whole name: short_src is cut at LUA_IDSIZE. */
    lua_pushfstring(L, "%s:%d", ar.source[0] == '=' ? ar.source + 1 : ar.short_src, ar.currentline);
    return 1;
  }
  lua_pushstring(L, c->chunkname);
  return 1;
}

static int tpuci__l_distance(lua_State *L) {
  const char *a = luaL_checkstring(L, 1);
  const char *b = luaL_checkstring(L, 2);
  lua_Integer cap = luaL_checkinteger(L, 3);
  size_t d = tpuci__edit_distance(a, b, cap < 0 ? 0 : (size_t) cap);
  lua_pushinteger(L, (lua_Integer) d);
  return 1;
}

static int tpuci__l_duration(lua_State *L) {
  uint64_t ms;
  if (tpuci__duration_parse(luaL_checkstring(L, 1), &ms) == 0) lua_pushinteger(L, (lua_Integer) ms);
  else lua_pushnil(L);
  return 1;
}

static int tpuci__l_size(lua_State *L) {
  uint64_t bytes;
  if (tpuci__size_parse(luaL_checkstring(L, 1), &bytes) == 0)
    lua_pushinteger(L, (lua_Integer) bytes);
  else lua_pushnil(L);
  return 1;
}

static int tpuci__l_outcome(lua_State *L) {
  int o = tpuci__outcome_parse(luaL_checkstring(L, 1));
  if (o >= 0) lua_pushinteger(L, o);
  else lua_pushnil(L);
  return 1;
}

/* H.text(s): nil when s can be a string of the plan, else what is wrong
 * with it ("not valid UTF-8 (byte 0xE9 at position 4)"). */
static int tpuci__l_text(lua_State *L) {
  size_t len, at;
  const char *s = luaL_checklstring(L, 1, &len);
  const char *problem = tpuci__text_problem(s, len, &at);
  char msg[96];

  if (problem == NULL) {
    lua_pushnil(L);
    return 1;
  }
  if (s[at] == '\0') snprintf(msg, sizeof(msg), "%s (at position %zu)", problem, at + 1);
  else
    snprintf(msg, sizeof(msg), "%s (byte 0x%02X at position %zu)", problem,
             (unsigned) (unsigned char) s[at], at + 1);
  lua_pushstring(L, msg);
  return 1;
}

/* H.tpu_type(name): whether name is a TPU type of the catalogue, and if
 * not, a close one (nil when nothing is close). */
static int tpuci__l_tpu_type(lua_State *L) {
  const char *name = luaL_checkstring(L, 1), *s;
  if (tpuci__tpu_layout_count(name) > 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  s = tpuci__tpu_suggest(name);
  lua_pushboolean(L, 0);
  if (s != NULL) lua_pushstring(L, s);
  else lua_pushnil(L);
  return 2;
}

static int tpuci__l_warn(lua_State *L) {
  tpuci__spec_warn(tpuci__spec_ctx(L), luaL_checkstring(L, 1));
  return 0;
}

void tpuci__spec_push_helpers(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"env", tpuci__l_env},     {"read_file", tpuci__l_read_file}, {"yaml", tpuci__spec_yaml},
      {"where", tpuci__l_where}, {"distance", tpuci__l_distance},   {"duration", tpuci__l_duration},
      {"size", tpuci__l_size},   {"outcome", tpuci__l_outcome},     {"warn", tpuci__l_warn},
      {"text", tpuci__l_text},   {"tpu_type", tpuci__l_tpu_type},   {NULL, NULL}};
  tpuci__spec_ctx_t *c = tpuci__spec_ctx(L);

  luaL_newlib(L, fns);
  lua_pushstring(L, c->spec_dir);
  lua_setfield(L, -2, "spec_dir");
  lua_pushfstring(L, "%d.%d.%d", TPUCI_VERSION_MAJOR, TPUCI_VERSION_MINOR, TPUCI_VERSION_PATCH);
  lua_setfield(L, -2, "version");
}
