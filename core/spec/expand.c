/* Expanding the prelude's declarations into the plan: images, topologies,
 * and one instance per job and matrix combination. A job that has a job
 * kind's record (a table under the kind's key) gets the kind's part of
 * each instance from the kind's loader, given in (plan/kind_spec.h):
 * this file names no kind.
 *
 * The prelude has validated everything, so this file only reads plain
 * tables: strings, numbers and templates (a string, or a list of literal
 * strings and 1-based matrix key indexes). It runs inside the loader's
 * lua_pcall, so any Lua call may raise; every C allocation is stored into
 * the plan the moment it is made, and scratch space is either Lua userdata
 * or the context's buffer, so an error never leaks. Lua tables are made
 * per instance only for jobs with function-valued fields. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "spec/internal.h"
#include "plan/topology.h"

typedef struct tpuci__job_s {
  const char *name;
  const char *where;
  int jt;                     /* stack index of the job's table */
  int eval;                   /* stack index of the prelude's eval() */
  int run, cmd, env, workdir; /* stack indexes of those fields (maybe nil) */
  int container;              /* stack index of the container options (maybe nil) */
  /* The job's kind, whose record it has (at stack index rec), or NULL:
   * a command. */
  const tpuci__kind_spec_t *kind;
  int rec;
  int has_fn;
  tpuci__runtime_kind_t runtime;
  int image, topology, hostset;
  uint64_t timeout_ms, idle_timeout_ms, start_timeout_ms, grace_ms;
  tpuci__retry_t retry;
  double cpus;
  uint64_t memory;
  const char *network;
  int no_cache;
  const char **inputs; /* globs (Lua's strings, on the stack) */
  size_t ninputs;
  size_t nmounts;
  const char **msrc, **mtgt;
  int *mro;
  size_t nkeys;
  const char **keys;
  const char **cur; /* values of the combination being emitted */
  size_t emitted;
  int parts; /* its kind splits each combination into this many; else 0 */
} tpuci__job_t;

const char *tpuci__spec_get_str(lua_State *L, int t, const char *k) {
  const char *s;
  lua_getfield(L, t, k);
  s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
  lua_pop(L, 1);
  return s; /* Still referenced by the table. */
}

lua_Integer tpuci__spec_get_int(lua_State *L, int t, const char *k) {
  lua_Integer v;
  lua_getfield(L, t, k);
  v = lua_tointeger(L, -1);
  lua_pop(L, 1);
  return v;
}

double tpuci__spec_get_num(lua_State *L, int t, const char *k) {
  double v;
  lua_getfield(L, t, k);
  v = (double) lua_tonumber(L, -1);
  lua_pop(L, 1);
  return v;
}

int tpuci__spec_get_bool(lua_State *L, int t, const char *k) {
  int v;
  lua_getfield(L, t, k);
  v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

/* Scratch arrays live in Lua userdata left on the stack until the job is
 * done, so an error frees them with the state. */
static void *tpuci__scratch(lua_State *L, size_t n, size_t size) {
  void *p = lua_newuserdatauv(L, (n ? n : 1) * size, 0);
  memset(p, 0, (n ? n : 1) * size);
  return p;
}

/* A job-level error, located like the prelude's. */
static int tpuci__job_error(lua_State *L, const tpuci__job_t *j, const char *msg) {
  lua_pushfstring(L, "%s: job '%s': %s", j->where, j->name, msg);
  return lua_error(L);
}

/* Appends key=value to l, taking both strings; keys are known unique. */
static void tpuci__kv_append(tpuci__kvlist_t *l, char *key, char *value) {
  if (l->len == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 4;
    l->items = tpuci__realloc(l->items, l->cap * sizeof(*l->items));
  }
  l->items[l->len].key = key;
  l->items[l->len].value = value;
  l->len++;
}

/* tpuci__strv_take() keeps argv NULL-terminated, as uv_spawn() wants. */
#define tpuci__argv_push tpuci__strv_take

/* Renders the template at idx with the current combination into the
 * scratch buffer. */
static void tpuci__render(lua_State *L, int idx, const tpuci__job_t *j, tpuci__buf_t *b) {
  size_t n, i, len;
  const char *s;

  b->len = 0;
  tpuci__buf_add(b, "", 0);
  if (lua_type(L, idx) == LUA_TSTRING) {
    s = lua_tolstring(L, idx, &len);
    tpuci__buf_add(b, s, len);
    return;
  }
  n = (size_t) lua_rawlen(L, idx);
  for (i = 1; i <= n; i++) {
    if (lua_rawgeti(L, idx, (lua_Integer) i) == LUA_TSTRING) {
      s = lua_tolstring(L, -1, &len);
      tpuci__buf_add(b, s, len);
    } else {
      lua_Integer k = lua_tointeger(L, -1);
      if (k >= 1 && (size_t) k <= j->nkeys) tpuci__buf_adds(b, j->cur[k - 1]);
    }
    lua_pop(L, 1);
  }
}

static char *tpuci__render_dup(lua_State *L, int idx, const tpuci__job_t *j) {
  tpuci__buf_t *b = &tpuci__spec_ctx(L)->scratch;
  tpuci__render(L, idx, j, b);
  return tpuci__strndup(b->data, b->len);
}

/* Appends the components of s to the absolute path in b, resolving "."
 * and "..". */
static void tpuci__path_add(tpuci__buf_t *b, const char *s) {
  while (*s) {
    size_t n = strcspn(s, "/");
    if (n == 0 || (n == 1 && s[0] == '.')) {
      /* Nothing. */
    } else if (n == 2 && s[0] == '.' && s[1] == '.') {
      while (b->len > 0 && b->data[b->len - 1] != '/') b->len--;
      if (b->len > 0) b->len--;
      b->data[b->len] = '\0';
    } else {
      tpuci__buf_add(b, "/", 1);
      tpuci__buf_add(b, s, n);
    }
    s += n;
    while (*s == '/') s++;
  }
}

/* The absolute, normalised form of path, relative paths being taken
 * against base. */
void tpuci__spec_path_abs(tpuci__buf_t *b, const char *base, const char *path) {
  b->len = 0;
  tpuci__buf_add(b, "", 0);
  if (path[0] != '/') tpuci__path_add(b, base);
  tpuci__path_add(b, path);
  if (b->len == 0) tpuci__buf_add(b, "/", 1);
}

/* The prelude has checked every string the spec gave (valid UTF-8, no
 * NUL byte: tpuci__text_problem). Mount sources and local workdirs are
 * also made absolute with the spec's folder, which it has not seen: the
 * plan's strings must stay valid there too. */
static void tpuci__check_folder(lua_State *L, const tpuci__job_t *j, const char *key,
                                const char *path) {
  if (tpuci__text_problem(path, strlen(path), NULL) == NULL) return;
  lua_pushfstring(L,
                  "%s: the spec's folder is not valid UTF-8, and the "
                  "path made from it could not be recorded (move the spec, "
                  "or give an absolute path)",
                  key);
  tpuci__job_error(L, j, lua_tostring(L, -1));
}

/* Calls eval(job, field, inst, name), leaving the result on the stack. */
static void tpuci__eval(lua_State *L, const tpuci__job_t *j, const char *field, int inst,
                        const char *name) {
  lua_pushvalue(L, j->eval);
  lua_pushvalue(L, j->jt);
  lua_pushstring(L, field);
  lua_pushvalue(L, inst);
  lua_pushstring(L, name);
  lua_call(L, 4, 1);
}

/* A template of the job's kind's record, rendered with the combination
 * being emitted (tpuci__spec_render_t). */
static char *tpuci__render_kind(lua_State *L, int idx) {
  return tpuci__render_dup(L, idx, tpuci__spec_ctx(L)->job);
}

static long long tpuci__get_integer(lua_State *L, int t, const char *k) {
  return (long long) tpuci__spec_get_int(L, t, k);
}

/* What a kind's loader reads its record with (plan/kind_spec.h). */
static const tpuci__spec_reader_t tpuci__reader = {
    .str = tpuci__spec_get_str,
    .integer = tpuci__get_integer,
    .boolean = tpuci__spec_get_bool,
    .render = tpuci__render_kind,
};

/* Pushes { name = ..., job = ..., matrix = { key = value } }. */
static int tpuci__push_instance_table(lua_State *L, const tpuci__job_t *j,
                                      const tpuci__instance_t *in) {
  size_t k;
  lua_createtable(L, 0, 3);
  lua_pushstring(L, in->name);
  lua_setfield(L, -2, "name");
  lua_pushstring(L, j->name);
  lua_setfield(L, -2, "job");
  lua_createtable(L, 0, (int) j->nkeys);
  for (k = 0; k < j->nkeys; k++) {
    lua_pushstring(L, j->cur[k]);
    lua_setfield(L, -2, j->keys[k]);
  }
  lua_setfield(L, -2, "matrix");
  return lua_gettop(L);
}

/* The bytes an instance's strings take, roughly (allocator overhead
 * included). */
static size_t tpuci__instance_bytes(const tpuci__instance_t *in) {
  size_t n = 0, i;
#define TPUCI__STR_BYTES(s) ((s) ? strlen(s) + 16 : 0)
  n += TPUCI__STR_BYTES(in->name) + TPUCI__STR_BYTES(in->job) + TPUCI__STR_BYTES(in->where) +
       TPUCI__STR_BYTES(in->run) + TPUCI__STR_BYTES(in->workdir) + TPUCI__STR_BYTES(in->network);
  for (i = 0; i < in->argv.len; i++) n += TPUCI__STR_BYTES(in->argv.items[i]) + 8;
  for (i = 0; i < in->env.len; i++)
    n += TPUCI__STR_BYTES(in->env.items[i].key) + TPUCI__STR_BYTES(in->env.items[i].value) + 16;
  for (i = 0; i < in->matrix.len; i++)
    n += TPUCI__STR_BYTES(in->matrix.items[i].key) + TPUCI__STR_BYTES(in->matrix.items[i].value) +
         16;
  for (i = 0; i < in->nmounts; i++)
    n += TPUCI__STR_BYTES(in->mounts[i].source) + TPUCI__STR_BYTES(in->mounts[i].target) +
         sizeof(in->mounts[i]);
#undef TPUCI__STR_BYTES
  return n + tpuci__ctr_opts_bytes(&in->ctr);
}

/* One instance for the combination in j->cur. */
static void tpuci__emit(lua_State *L, tpuci__spec_ctx_t *c, tpuci__job_t *j) {
  tpuci__plan_t *plan = c->plan;
  tpuci__buf_t *b = &c->scratch;
  tpuci__instance_t *in;
  int top = lua_gettop(L), inst = 0;
  size_t k, n;

  if (plan->ninstances >= TPUCI__SPEC_MAX_INSTANCES) {
    lua_pushfstring(L, "the plan has more than %d instances", TPUCI__SPEC_MAX_INSTANCES);
    tpuci__job_error(L, j, lua_tostring(L, -1));
  }
  in = tpuci__plan_add_instance(plan);

  b->len = 0;
  tpuci__buf_adds(b, j->name);
  if (j->nkeys > 0) {
    for (k = 0; k < j->nkeys; k++) {
      tpuci__buf_adds(b, k == 0 ? "[" : ",");
      tpuci__buf_adds(b, j->keys[k]);
      tpuci__buf_adds(b, "=");
      tpuci__buf_adds(b, j->cur[k]);
    }
    tpuci__buf_adds(b, "]");
  }
  in->name = tpuci__strndup(b->data, b->len);
  in->job = tpuci__strdup(j->name);
  in->where = tpuci__strdup(j->where);
  for (k = 0; k < j->nkeys; k++)
    tpuci__kv_append(&in->matrix, tpuci__strdup(j->keys[k]), tpuci__strdup(j->cur[k]));
  in->runtime = j->runtime;
  in->timeout_ms = j->timeout_ms;
  in->idle_timeout_ms = j->idle_timeout_ms;
  in->start_timeout_ms = j->start_timeout_ms;
  in->grace_ms = j->grace_ms;
  in->retry = j->retry;
  in->image = j->image;
  in->topology = j->topology;
  in->hostset = j->hostset;
  in->cpus = j->cpus;
  in->memory_bytes = j->memory;
  in->network = tpuci__strdup(j->network);
  in->no_cache = j->no_cache;
  in->expect_devices = tpuci__strdup(tpuci__spec_get_str(L, j->jt, "expect_devices"));
  for (k = 0; k < j->ninputs; k++) tpuci__strv_push(&in->inputs, j->inputs[k]);
  in->selected = 1;
  if (j->nmounts > 0) {
    in->mounts = tpuci__calloc(j->nmounts, sizeof(*in->mounts));
    in->nmounts = j->nmounts;
    for (k = 0; k < j->nmounts; k++) {
      in->mounts[k].source = tpuci__strdup(j->msrc[k]);
      in->mounts[k].target = tpuci__strdup(j->mtgt[k]);
      in->mounts[k].read_only = j->mro[k];
    }
  }

  if (!lua_isnil(L, j->container)) {
    char *why;
    tpuci__spec_expand_ctr(L, j->container, &in->ctr);
    why = tpuci__ctr_opts_refusal(&in->ctr, in->runtime);
    if (why != NULL) {
      lua_pushstring(L, why);
      free(why);
      tpuci__job_error(L, j, lua_tostring(L, -1));
    }
  }

  if (j->has_fn) inst = tpuci__push_instance_table(L, j, in);

  /* The command: run (through the shell) or cmd. */
  if (lua_isfunction(L, j->run)) {
    tpuci__eval(L, j, "run", inst, in->name);
    in->run = tpuci__strdup(lua_tostring(L, -1));
    lua_pop(L, 1);
  } else if (!lua_isnil(L, j->run)) {
    in->run = tpuci__render_dup(L, j->run, j);
  }
  if (in->run != NULL) {
    tpuci__argv_push(&in->argv, tpuci__strdup("/bin/sh"));
    tpuci__argv_push(&in->argv, tpuci__strdup("-c"));
    tpuci__argv_push(&in->argv, tpuci__strdup(in->run));
  } else if (lua_isfunction(L, j->cmd)) {
    tpuci__eval(L, j, "cmd", inst, in->name);
    n = (size_t) lua_rawlen(L, -1);
    for (k = 1; k <= n; k++) {
      lua_rawgeti(L, -1, (lua_Integer) k);
      tpuci__argv_push(&in->argv, tpuci__strdup(lua_tostring(L, -1)));
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  } else if (!lua_isnil(L, j->cmd)) {
    n = (size_t) lua_rawlen(L, j->cmd);
    for (k = 1; k <= n; k++) {
      lua_rawgeti(L, j->cmd, (lua_Integer) k);
      tpuci__argv_push(&in->argv, tpuci__render_dup(L, lua_gettop(L), j));
      lua_pop(L, 1);
    }
  }

  /* env: a flat list { k1, v1, k2, v2, ... } sorted by name. */
  if (lua_isfunction(L, j->env)) {
    tpuci__eval(L, j, "env", inst, in->name);
    n = (size_t) lua_rawlen(L, -1);
    for (k = 1; k + 1 <= n; k += 2) {
      const char *key, *value;
      lua_rawgeti(L, -1, (lua_Integer) k);
      lua_rawgeti(L, -2, (lua_Integer) k + 1);
      key = lua_tostring(L, -2);
      value = lua_tostring(L, -1);
      tpuci__kv_append(&in->env, tpuci__strdup(key), tpuci__strdup(value));
      lua_pop(L, 2);
    }
    lua_pop(L, 1);
  } else if (!lua_isnil(L, j->env)) {
    n = (size_t) lua_rawlen(L, j->env);
    for (k = 1; k + 1 <= n; k += 2) {
      const char *key;
      lua_rawgeti(L, j->env, (lua_Integer) k);
      lua_rawgeti(L, j->env, (lua_Integer) k + 1);
      key = lua_tostring(L, -2);
      tpuci__render(L, lua_gettop(L), j, b);
      tpuci__kv_append(&in->env, tpuci__strdup(key), tpuci__strndup(b->data, b->len));
      lua_pop(L, 2);
    }
  }
  /* The kind's part, once the command and the job's env are set. */
  if (j->kind != NULL) {
    in->kind = j->kind->config;
    c->job = j;
    j->kind->load(L, &tpuci__reader, j->rec, in, j->parts);
    c->job = NULL;
  }

  /* workdir: relative paths are the spec folder's for the local runtime;
   * for docker it is a container path, kept as written. */
  if (lua_isfunction(L, j->workdir)) {
    tpuci__eval(L, j, "workdir", inst, in->name);
    b->len = 0;
    tpuci__buf_adds(b, lua_tostring(L, -1));
    lua_pop(L, 1);
  } else if (!lua_isnil(L, j->workdir)) {
    tpuci__render(L, j->workdir, j, b);
  } else {
    b->len = 0;
  }
  if (b->len > 0) {
    if (tpuci__runtime_props(j->runtime)->workdir_spec) {
      char *given = tpuci__strndup(b->data, b->len);
      tpuci__spec_path_abs(b, c->plan->spec_dir ? c->plan->spec_dir : c->spec_dir, given);
      free(given);
      tpuci__check_folder(L, j, "workdir", b->data);
    }
    in->workdir = tpuci__strndup(b->data, b->len);
  }

  lua_settop(L, top);
  j->emitted++;

  /* The cap on Lua memory does not cover the plan's copies (a long run
   * string times many instances): count them against the same cap. */
  c->plan_bytes += sizeof(*in) + tpuci__instance_bytes(in);
  if (c->plan_bytes > c->mem_limit) {
    c->mem_error = 1;
    lua_pushliteral(L, "the plan is too large");
    lua_error(L);
  }
}

/* The combination in j->cur: one instance, or one per part when the
 * job's kind splits it, with "shard=2/8" (part 2 of 8) in a slot after
 * the keys. */
static void tpuci__emit_all(lua_State *L, tpuci__spec_ctx_t *c, tpuci__job_t *j) {
  char value[32];
  size_t n = j->nkeys;
  int i;
  if (j->parts == 0) {
    tpuci__emit(L, c, j);
    return;
  }
  j->keys[n] = "shard";
  for (i = 1; i <= j->parts; i++) {
    snprintf(value, sizeof(value), "%d/%d", i, j->parts);
    j->cur[n] = value, j->nkeys = n + 1;
    tpuci__emit(L, c, j);
    j->nkeys = n;
  }
}

/* Whether the combination idx matches one of the exclude rules. */
static int tpuci__excluded(const lua_Integer *rules, size_t nrules, const size_t *idx,
                           size_t nkeys) {
  size_t r, k;
  for (r = 0; r < nrules; r++) {
    for (k = 0; k < nkeys; k++) {
      lua_Integer want = rules[r * nkeys + k];
      if (want != -1 && (size_t) want != idx[k]) break;
    }
    if (k == nkeys) return 1;
  }
  return 0;
}

/* The product of the matrix lists (the last key varies fastest), minus
 * the excluded combinations, then the included ones. */
static void tpuci__expand_matrix(lua_State *L, tpuci__spec_ctx_t *c, tpuci__job_t *j, int mt) {
  const char **vals;
  size_t *off, *nvals, *idx, nrules, total = 0, k, i, n;
  lua_Integer *rules;
  int keys, values, rows;

  lua_getfield(L, mt, "keys");
  keys = lua_gettop(L);
  lua_getfield(L, mt, "values");
  values = lua_gettop(L);
  j->nkeys = (size_t) lua_rawlen(L, keys);
  j->keys = tpuci__scratch(L, j->nkeys + 1, sizeof(*j->keys)); /* + parts */
  j->cur = tpuci__scratch(L, j->nkeys + 1, sizeof(*j->cur));
  off = tpuci__scratch(L, j->nkeys, sizeof(*off));
  nvals = tpuci__scratch(L, j->nkeys, sizeof(*nvals));
  idx = tpuci__scratch(L, j->nkeys, sizeof(*idx));
  for (k = 0; k < j->nkeys; k++) {
    lua_rawgeti(L, keys, (lua_Integer) k + 1);
    j->keys[k] = lua_tostring(L, -1);
    lua_pop(L, 1);
  }

  if (tpuci__spec_get_bool(L, mt, "product")) {
    for (k = 0; k < j->nkeys; k++) {
      lua_rawgeti(L, values, (lua_Integer) k + 1);
      nvals[k] = (size_t) lua_rawlen(L, -1);
      off[k] = total;
      total += nvals[k];
      lua_pop(L, 1);
    }
    vals = tpuci__scratch(L, total, sizeof(*vals));
    for (k = 0; k < j->nkeys; k++) {
      lua_rawgeti(L, values, (lua_Integer) k + 1);
      for (i = 0; i < nvals[k]; i++) {
        lua_rawgeti(L, -1, (lua_Integer) i + 1);
        vals[off[k] + i] = lua_tostring(L, -1);
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    }
    nrules = (size_t) tpuci__spec_get_int(L, mt, "nexclude");
    rules = tpuci__scratch(L, nrules * j->nkeys, sizeof(*rules));
    lua_getfield(L, mt, "exclude");
    for (i = 0; i < nrules * j->nkeys; i++) {
      lua_rawgeti(L, -1, (lua_Integer) i + 1);
      rules[i] = lua_tointeger(L, -1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);

    for (;;) {
      if (!tpuci__excluded(rules, nrules, idx, j->nkeys)) {
        for (k = 0; k < j->nkeys; k++) j->cur[k] = vals[off[k] + idx[k]];
        tpuci__emit_all(L, c, j);
      }
      for (k = j->nkeys; k > 0; k--) {
        if (++idx[k - 1] < nvals[k - 1]) break;
        idx[k - 1] = 0;
      }
      if (k == 0) break;
    }
  }

  lua_getfield(L, mt, "include");
  rows = lua_gettop(L);
  n = (size_t) lua_rawlen(L, rows);
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, rows, (lua_Integer) i);
    for (k = 0; k < j->nkeys; k++) {
      lua_rawgeti(L, -1, (lua_Integer) k + 1);
      j->cur[k] = lua_tostring(L, -1);
      lua_pop(L, 1); /* The row still holds the string. */
    }
    tpuci__emit_all(L, c, j);
    lua_pop(L, 1);
  }
}

/* The first kind whose record the job has (left on the stack at j->rec),
 * or none: a command. */
static void tpuci__job_kind(lua_State *L, const tpuci__spec_ctx_t *c, tpuci__job_t *j) {
  size_t k;
  for (k = 0; c->kinds != NULL && c->kinds[k] != NULL; k++) {
    lua_getfield(L, j->jt, c->kinds[k]->key);
    if (!lua_isnil(L, -1)) {
      j->kind = c->kinds[k];
      j->rec = lua_gettop(L);
      return;
    }
    lua_pop(L, 1);
  }
}

static void tpuci__expand_job(lua_State *L, tpuci__spec_ctx_t *c, int jt, int eval) {
  tpuci__job_t j;
  const tpuci__topology_t *tp;
  const char *s;
  size_t k;
  int mounts, mt;

  luaL_checkstack(L, 40, "expanding a job");
  memset(&j, 0, sizeof(j));
  j.jt = jt;
  j.eval = eval;
  j.name = tpuci__spec_get_str(L, jt, "name");
  j.where = tpuci__spec_get_str(L, jt, "where");
  s = tpuci__spec_get_str(L, jt, "runtime");
  j.runtime = tpuci__runtime_kind_parse(s) >= 0
                  ? (tpuci__runtime_kind_t) tpuci__runtime_kind_parse(s)
                  : TPUCI__RUNTIME_DEFAULT;
  j.image = (int) tpuci__spec_get_int(L, jt, "image");
  j.topology = (int) tpuci__spec_get_int(L, jt, "topology");
  j.hostset = (int) tpuci__spec_get_int(L, jt, "hosts");
  j.timeout_ms = (uint64_t) tpuci__spec_get_int(L, jt, "timeout_ms");
  j.idle_timeout_ms = (uint64_t) tpuci__spec_get_int(L, jt, "idle_timeout_ms");
  j.start_timeout_ms = (uint64_t) tpuci__spec_get_int(L, jt, "start_timeout_ms");
  j.grace_ms = (uint64_t) tpuci__spec_get_int(L, jt, "grace_ms");
  j.retry.attempts = (int) tpuci__spec_get_int(L, jt, "attempts");
  j.retry.on = (unsigned) tpuci__spec_get_int(L, jt, "on");
  j.retry.backoff_ms = (uint64_t) tpuci__spec_get_int(L, jt, "backoff_ms");
  j.retry.factor = tpuci__spec_get_num(L, jt, "factor");
  j.retry.max_backoff_ms = (uint64_t) tpuci__spec_get_int(L, jt, "max_backoff_ms");
  j.retry.rerun_unfinished = tpuci__spec_get_bool(L, jt, "rerun_unfinished");
  j.retry.capacity_attempts = (int) tpuci__spec_get_int(L, jt, "capacity_attempts");
  j.retry.capacity_wait_ms = (uint64_t) tpuci__spec_get_int(L, jt, "capacity_wait_ms");
  j.cpus = tpuci__spec_get_num(L, jt, "cpus");
  j.memory = (uint64_t) tpuci__spec_get_int(L, jt, "memory");
  j.network = tpuci__spec_get_str(L, jt, "network");
  j.has_fn = tpuci__spec_get_bool(L, jt, "has_fn");
  j.no_cache = !tpuci__spec_get_bool(L, jt, "cache");
  if (j.name == NULL || j.where == NULL)
    luaL_error(L, "tpuci: internal error: a job without a name");
  tpuci__spec_check_hosts(L, j.name, j.where, j.topology, j.hostset);

  lua_getfield(L, jt, "run");
  j.run = lua_gettop(L);
  lua_getfield(L, jt, "cmd");
  j.cmd = lua_gettop(L);
  lua_getfield(L, jt, "env");
  j.env = lua_gettop(L);
  lua_getfield(L, jt, "workdir");
  j.workdir = lua_gettop(L);
  tpuci__job_kind(L, c, &j);
  lua_getfield(L, jt, "container");
  j.container = lua_gettop(L);

  /* Mount sources become absolute once per job; the strings are kept in a
   * Lua table so the pointers stay valid. */
  lua_getfield(L, jt, "mounts");
  mounts = lua_gettop(L);
  j.nmounts = (size_t) lua_rawlen(L, mounts);
  j.msrc = tpuci__scratch(L, j.nmounts, sizeof(*j.msrc));
  j.mtgt = tpuci__scratch(L, j.nmounts, sizeof(*j.mtgt));
  j.mro = tpuci__scratch(L, j.nmounts, sizeof(*j.mro));
  lua_createtable(L, (int) j.nmounts, 0);
  for (k = 0; k < j.nmounts; k++) {
    int m;
    lua_rawgeti(L, mounts, (lua_Integer) k + 1);
    m = lua_gettop(L);
    tpuci__spec_path_abs(&c->scratch, c->plan->spec_dir ? c->plan->spec_dir : c->spec_dir,
                         tpuci__spec_get_str(L, m, "source"));
    tpuci__check_folder(L, &j, "mounts", c->scratch.data);
    lua_pushlstring(L, c->scratch.data, c->scratch.len);
    j.msrc[k] = lua_tostring(L, -1);
    lua_rawseti(L, m - 1, (lua_Integer) k + 1);
    j.mtgt[k] = tpuci__spec_get_str(L, m, "target");
    j.mro[k] = tpuci__spec_get_bool(L, m, "readonly");
    lua_pop(L, 1);
  }

  lua_getfield(L, jt, "inputs");
  if (lua_istable(L, -1)) {
    int inputs = lua_gettop(L);
    j.ninputs = (size_t) lua_rawlen(L, inputs);
    j.inputs = tpuci__scratch(L, j.ninputs, sizeof(*j.inputs));
    for (k = 0; k < j.ninputs; k++) {
      lua_rawgeti(L, inputs, (lua_Integer) k + 1);
      j.inputs[k] = lua_tostring(L, -1);
      lua_pop(L, 1); /* the list keeps the string */
    }
  }

  lua_getfield(L, jt, "matrix");
  mt = lua_gettop(L);
  tp = j.topology >= 0 && (size_t) j.topology < c->plan->ntopologies
           ? &c->plan->topologies[j.topology]
           : NULL;
  if (j.kind != NULL && j.kind->parts != NULL)
    j.parts = j.kind->parts(L, &tpuci__reader, j.rec, j.name, j.where, tp, mt);
  if (lua_istable(L, mt)) {
    tpuci__expand_matrix(L, c, &j, mt);
    if (j.emitted == 0) tpuci__job_error(L, &j, "matrix: every combination is excluded");
  } else {
    j.keys = tpuci__scratch(L, 1, sizeof(*j.keys));
    j.cur = tpuci__scratch(L, 1, sizeof(*j.cur));
    tpuci__emit_all(L, c, &j);
  }
}

void tpuci__spec_expand(lua_State *L, int decls, int eval) {
  tpuci__spec_ctx_t *c = tpuci__spec_ctx(L);
  tpuci__plan_t *plan = c->plan;
  int list, t, top = lua_gettop(L);
  size_t n, i;

  lua_getfield(L, decls, "images");
  list = lua_gettop(L);
  n = (size_t) lua_rawlen(L, list);
  if (n > 0) {
    plan->images = tpuci__calloc(n, sizeof(*plan->images));
    plan->nimages = n;
  }
  for (i = 0; i < n; i++) {
    tpuci__image_t *img = &plan->images[i];
    lua_rawgeti(L, list, (lua_Integer) i + 1);
    t = lua_gettop(L);
    tpuci__spec_expand_image(L, c, img, t);
    lua_pop(L, 1);
  }
  lua_settop(L, top);

  lua_getfield(L, decls, "topologies");
  list = lua_gettop(L);
  n = (size_t) lua_rawlen(L, list);
  if (n > 0) {
    plan->topologies = tpuci__calloc(n, sizeof(*plan->topologies));
    plan->ntopologies = n;
  }
  for (i = 0; i < n; i++) {
    lua_rawgeti(L, list, (lua_Integer) i + 1);
    tpuci__spec_expand_topology(L, c, &plan->topologies[i], lua_gettop(L));
    lua_pop(L, 1);
  }
  lua_settop(L, top);

  lua_getfield(L, decls, "hostsets");
  list = lua_gettop(L);
  n = (size_t) lua_rawlen(L, list);
  if (n > 0) {
    plan->hostsets = tpuci__calloc(n, sizeof(*plan->hostsets));
    plan->nhostsets = n;
  }
  for (i = 0; i < n; i++) {
    lua_rawgeti(L, list, (lua_Integer) i + 1);
    tpuci__spec_expand_hosts(L, &plan->hostsets[i], lua_gettop(L));
    lua_pop(L, 1);
  }
  lua_settop(L, top);

  lua_getfield(L, decls, "jobs");
  list = lua_gettop(L);
  n = (size_t) lua_rawlen(L, list);
  for (i = 0; i < n; i++) {
    lua_rawgeti(L, list, (lua_Integer) i + 1);
    tpuci__expand_job(L, c, lua_gettop(L), eval);
    lua_settop(L, list);
  }
  lua_settop(L, top);
}
