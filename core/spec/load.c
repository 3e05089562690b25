/* tpuci__spec_load(): runs a spec in a fresh sandboxed Lua state and
 * expands what it declared into the plan.
 *
 * The whole load is one lua_pcall of tpuci__spec_main(), with a message
 * handler that turns any error into one line starting with "file:line: ".
 * Inside, the prelude (lua/prelude.lua) defines the DSL, the spec runs,
 * the prelude's finish() validates references, and expand.c builds the
 * plan. C memory made on the way is owned by the plan or the context at
 * every moment a Lua error could be raised, so the longjmp of an error
 * never leaks. The state is closed before returning: the plan is plain C
 * data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>

#include <lauxlib.h>
#include <lua.h>

#include "spec/internal.h"

extern const char tpuci__lua_prelude[];
extern const size_t tpuci__lua_prelude_len;

#define TPUCI__SPEC_DEFAULT_TIMEOUT_MS 5000
#define TPUCI__SPEC_DEFAULT_MEMORY ((size_t) 256 * 1024 * 1024)

/* Whether msg already starts with "<chunkname>:" (1), or with Lua's
 * shortened form of it, "<src>:" (2); 0 when neither. */
static int tpuci__spec_located(const tpuci__spec_ctx_t *c, const char *msg) {
  size_t n = strlen(c->chunkname), m = strlen(c->src);
  if (strncmp(msg, c->chunkname, n) == 0 && msg[n] == ':') return 1;
  if (strncmp(msg, c->src, m) == 0 && msg[m] == ':') return 2;
  return 0;
}

/* A hint for "attempt to ... a nil value (global 'x')" when x is a
 * sandboxed-away library or a misspelt DSL function. */
static const char *tpuci__spec_hint(lua_State *L, const char *msg) {
  static const char *removed_libs[] = {"os", "io", "debug", "package", NULL};
  static const char *removed_fns[] = {"require", "dofile", "loadfile", NULL};
  static const char *dsl[] = {"job", "image", "topology", "tpuci", NULL};
  const char *p = strstr(msg, "a nil value (global '"), *e;
  char name[64];
  size_t n, i;

  if (p == NULL) return NULL;
  p += strlen("a nil value (global '");
  e = strchr(p, '\'');
  if (e == NULL || (n = (size_t) (e - p)) >= sizeof(name)) return NULL;
  memcpy(name, p, n);
  name[n] = '\0';
  for (i = 0; removed_libs[i]; i++)
    if (strcmp(name, removed_libs[i]) == 0)
      return lua_pushfstring(L,
                             " (a spec has no '%s'; use tpuci.env() and "
                             "tpuci.read_file())",
                             name);
  for (i = 0; removed_fns[i]; i++)
    if (strcmp(name, removed_fns[i]) == 0)
      return lua_pushfstring(L, " (a spec has no '%s'; it runs in a sandbox)", name);
  for (i = 0; dsl[i]; i++)
    if (tpuci__edit_distance(name, dsl[i], 2) <= 2)
      return lua_pushfstring(L, ", did you mean '%s'?", dsl[i]);
  return NULL;
}

/* The message handler: any error value becomes one located line. */
static int tpuci__spec_msgh(lua_State *L) {
  tpuci__spec_ctx_t *c = tpuci__spec_ctx(L);
  const char *msg, *hint;
  int line;

  if (lua_type(L, 1) == LUA_TSTRING || lua_type(L, 1) == LUA_TNUMBER) msg = lua_tostring(L, 1);
  else if (c->timed_out) msg = "(past the deadline)"; /* Hooks may be off: run no spec code. */
  else if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
    msg = lua_tostring(L, -1);
  else msg = lua_pushfstring(L, "error object is a %s value", luaL_typename(L, 1));
  switch (tpuci__spec_located(c, msg)) {
    case 0:
      line = tpuci__spec_line(L, 1);
      if (line > 0) msg = lua_pushfstring(L, "%s:%d: %s", c->chunkname, line, msg);
      else msg = lua_pushfstring(L, "%s: %s", c->chunkname, msg);
      break;
    case 2:
      /* Lua cut a long file name to LUA_IDSIZE: put it back whole. */
      msg = lua_pushfstring(L, "%s%s", c->chunkname, msg + strlen(c->src));
      break;
    default: break;
  }
  hint = tpuci__spec_hint(L, msg);
  if (hint != NULL) msg = lua_pushfstring(L, "%s%s", msg, hint);
  msg = luaL_gsub(L, msg, "\r\n", " ");
  msg = luaL_gsub(L, msg, "\n", " ");
  msg = luaL_gsub(L, msg, "\t", " ");
  return 1;
}

/* Re-raises a failed load's message; a memory error is remembered, since
 * lua_error() reports it as an ordinary one. */
static int tpuci__spec_rethrow(lua_State *L, int status) {
  if (status == LUA_ERRMEM) tpuci__spec_ctx(L)->mem_error = 1;
  return lua_error(L);
}

static int tpuci__spec_main(lua_State *L) {
  tpuci__spec_ctx_t *c = tpuci__spec_ctx(L);
  const char *source;
  int api, decls, eval, status;

  tpuci__spec_sandbox(L);

  status =
      luaL_loadbufferx(L, tpuci__lua_prelude, tpuci__lua_prelude_len, TPUCI__PRELUDE_SOURCE, "t");
  if (status != LUA_OK) return tpuci__spec_rethrow(L, status);
  tpuci__spec_push_helpers(L);
  lua_call(L, 1, 1);
  api = lua_gettop(L);

  /* The spec runs under the deadline; so does everything after it. */
  tpuci__spec_arm_hook(L);
  source = lua_pushfstring(L, "=%s", c->chunkname);
  status = luaL_loadbufferx(L, c->chunk, c->len, source, "t");
  if (status != LUA_OK) return tpuci__spec_rethrow(L, status);
  lua_call(L, 0, 0);

  lua_getfield(L, api, "finish");
  lua_call(L, 0, 1);
  decls = lua_gettop(L);
  lua_getfield(L, api, "eval");
  eval = lua_gettop(L);
  tpuci__spec_expand(L, decls, eval);
  return 0;
}

/* "256 MiB", "1.5 MiB", "300 KiB", "100 bytes". */
static void tpuci__spec_format_size(size_t n, char *buf, size_t size) {
  const double mib = 1024.0 * 1024.0;
  if (n >= 1024 * 1024) {
    if (n % (1024 * 1024) == 0) snprintf(buf, size, "%zu MiB", n / (1024 * 1024));
    else snprintf(buf, size, "%.1f MiB", (double) n / mib);
  } else if (n >= 1024 && n % 1024 == 0) {
    snprintf(buf, size, "%zu KiB", n / 1024);
  } else {
    snprintf(buf, size, "%zu bytes", n);
  }
}

/* Skips what Lua's own loadfile() skips: a UTF-8 byte order mark, then a
 * first line that starts with '#' (a shebang: "#!/usr/bin/env tpuci").
 * The line's newline is kept, so line numbers in messages stay right. */
static void tpuci__spec_skip_header(const char **chunk, size_t *len) {
  const char *p = *chunk, *end = *chunk + *len;

  if (end - p >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;
  if (p < end && *p == '#') {
    const char *nl = memchr(p, '\n', (size_t) (end - p));
    p = nl ? nl : end;
  }
  *len -= (size_t) (p - *chunk);
  *chunk = p;
}

/* Leaves the plan as it was given, except for warnings, when the load
 * failed: a half-expanded plan must not be run by mistake. */
static void tpuci__spec_discard(tpuci__plan_t *plan) {
  tpuci__strv_t warnings = plan->warnings;
  char *path = plan->spec_path, *dir = plan->spec_dir;
  plan->warnings.items = NULL;
  plan->warnings.len = plan->warnings.cap = 0;
  plan->spec_path = plan->spec_dir = NULL;
  tpuci__plan_free(plan);
  tpuci__plan_init(plan);
  plan->warnings = warnings;
  plan->spec_path = path;
  plan->spec_dir = dir;
}

int tpuci__spec_load(tpuci__plan_t *plan, const char *chunk, size_t len, const char *chunkname,
                     const char *spec_dir, const tpuci__spec_limits_t *limits, tpuci__err_t *err) {
  tpuci__spec_ctx_t *c;
  char cwd[PATH_MAX], size[32];
  lua_State *L;
  int status, r;

  /* The context lives on the heap: after a panic's longjmp, locals changed
   * since setjmp() would be indeterminate, memory they point to is not. */
  c = tpuci__calloc(1, sizeof(*c));
  c->plan = plan;
  c->chunk = chunk;
  c->len = len;
  c->chunkname = chunkname ? chunkname : "spec.lua";
  snprintf(c->src, sizeof(c->src), "%.*s", LUA_IDSIZE - 1, c->chunkname);
  if (spec_dir == NULL) spec_dir = getcwd(cwd, sizeof(cwd)) ? cwd : ".";
  c->spec_dir = spec_dir;
  c->real = limits ? limits->real : 0;
  c->kinds = limits ? limits->kinds : NULL;
  c->timeout_ms =
      limits && limits->timeout_ms ? limits->timeout_ms : TPUCI__SPEC_DEFAULT_TIMEOUT_MS;
  c->mem_limit = limits && limits->memory_bytes ? limits->memory_bytes : TPUCI__SPEC_DEFAULT_MEMORY;
  c->deadline_ms = tpuci__spec_clock_ms() + c->timeout_ms;
  tpuci__buf_init(&c->warning);
  tpuci__buf_init(&c->scratch);
  if (plan->spec_path == NULL) plan->spec_path = tpuci__strdup(c->chunkname);
  if (plan->spec_dir == NULL) plan->spec_dir = tpuci__strdup(spec_dir);

  /* The file name becomes part of every instance's "where". */
  if (tpuci__text_problem(c->chunkname, strlen(c->chunkname), NULL) != NULL) {
    r = tpuci__err_set(err, TPUCI_ESPEC,
                       "%s: the spec's file name is not "
                       "valid UTF-8 (reports could not record it); rename "
                       "the file",
                       c->chunkname);
    goto done;
  }
  if (len > TPUCI__SPEC_MAX_BYTES) {
    tpuci__spec_format_size(TPUCI__SPEC_MAX_BYTES, size, sizeof(size));
    r = tpuci__err_set(err, TPUCI_ELIMIT,
                       "%s: the spec is larger than %s "
                       "(the most a spec may have)",
                       c->chunkname, size);
    goto done;
  }
  tpuci__spec_skip_header(&c->chunk, &c->len);
  tpuci__spec_format_size(c->mem_limit, size, sizeof(size));

  L = tpuci__spec_newstate(c);
  if (L == NULL) {
    r = tpuci__err_set(err, TPUCI_ELIMIT,
                       "%s: spec used more than %s while "
                       "loading",
                       c->chunkname, size);
    goto done;
  }
  c->L = L;

  if (setjmp(c->panic_jmp) == 0) {
    c->panic_armed = 1;
    lua_pushcfunction(L, tpuci__spec_msgh);
    lua_pushcfunction(L, tpuci__spec_main);
    status = lua_pcall(L, 0, 0, 1);
    if (c->timed_out) {
      r = tpuci__err_set(err, TPUCI_ELIMIT, "%s", c->timeout_msg);
    } else if (status == LUA_ERRMEM || c->mem_error) {
      r = tpuci__err_set(err, TPUCI_ELIMIT,
                         "%s: spec used more than %s while "
                         "loading",
                         c->chunkname, size);
    } else if (status == LUA_ERRERR) {
      r = tpuci__err_set(err, TPUCI_ESPEC,
                         "%s: error while reporting an "
                         "error (a __tostring metamethod failed?)",
                         c->chunkname);
    } else if (status != LUA_OK) {
      const char *msg = lua_tostring(L, -1);
      r = tpuci__err_set(err, TPUCI_ESPEC, "%s", msg ? msg : "unknown error");
    } else {
      r = 0;
    }
    c->closing = 1;
    lua_close(L);
    c->panic_armed = 0;
  } else {
    /* The state is unusable after a panic; leaking it is the safe choice. */
    c->panic_armed = 0;
    r = tpuci__err_set(err, TPUCI_ESPEC, "%s: internal error: Lua panicked: %s", c->chunkname,
                       c->panic_msg ? c->panic_msg : "?");
  }

done:
  if (r != 0) tpuci__spec_discard(plan);
  tpuci__buf_free(&c->warning);
  tpuci__buf_free(&c->scratch);
  free(c->timeout_msg);
  free(c->panic_msg);
  free(c);
  return r;
}
