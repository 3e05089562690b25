/* tpuci.yaml(path): a YAML file beside the spec, as a Lua value.
 *
 * The file is read into a Lua string (so its size counts against the
 * spec's memory limit) and parsed with libyaml's event parser. The Lua
 * value is built by tpuci__yaml_build(), run under lua_pcall: a Lua error
 * on the way (a YAML error, the memory limit, the deadline) returns to
 * tpuci__spec_yaml(), which deletes the pending event and the parser and
 * only then raises the error again. No longjmp ever crosses a frame that
 * still owns libyaml memory.
 *
 * Values (YAML 1.2 core schema):
 *   mapping          a table; keys are the key scalars' text, as strings
 *   sequence         a list (1, 2, ...); a null item leaves a hole
 *   plain scalar     null, ~ and empty: nil; true/false (also True, TRUE,
 *                    ...): booleans; 12, -3, 0x1f, 0o17: integers; 1.5,
 *                    1e3, .inf, -.inf, .nan: floats; anything else: a string
 *   quoted, | and >  strings, always
 *   !!str !!int !!float !!bool !!null   force the type (an error when the
 *                    text does not fit); other tags are refused
 *   &anchor, *alias  the alias is the same Lua value (for a collection, the
 *                    same table); an alias to a node it is inside is refused
 *   <<: *base        merge keys: the mappings' entries are copied in where
 *                    the mapping does not set them itself
 * A stream of more than one document is refused; an empty one is nil.
 * Collections nest at most TPUCI__YAML_MAX_DEPTH deep. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <yaml.h>

#include "spec/internal.h"

#define TPUCI__YAML_MAX_DEPTH 100

/* Events between two looks at the clock. */
#define TPUCI__YAML_CLOCK_EVERY 1024

#define TPUCI__YAML_TAG "tag:yaml.org,2002:"

/* Slots of the builder's Lua stack. */
#define TPUCI__YAML_ANCHORS 2 /* anchor name -> value (or a marker) */
#define TPUCI__YAML_SEQS 3    /* sequence table -> true, for merge keys */

/* aux[key] in a mapping being built: what the entry is so far. */
#define TPUCI__YAML_EXPLICIT_NULL 1
#define TPUCI__YAML_MERGED 2

typedef struct {
  yaml_parser_t parser;
  yaml_event_t event;
  int have_event;   /* event holds memory to delete */
  const char *name; /* the path as the spec gave it */
  const char *data; /* the file's contents (a Lua string) */
  size_t len;
  unsigned long nevents;
} tpuci__yaml_t;

/* Distinct addresses as markers in the anchors table. */
static const char tpuci__yaml_pending = 'p'; /* the anchored node is open */
static const char tpuci__yaml_null = 'n';    /* the anchored node is null */

/* Raises "NAME:LINE:COL: MESSAGE" for a mark (0-based, as libyaml's). */
static int tpuci__yaml_fail(lua_State *L, tpuci__yaml_t *y, yaml_mark_t m, const char *fmt,
                            const char *arg) {
  lua_pushfstring(L, "tpuci.yaml: %s:%d:%d: ", y->name, (int) m.line + 1, (int) m.column + 1);
  lua_pushfstring(L, fmt, arg);
  lua_concat(L, 2);
  return lua_error(L);
}

/* The mark of byte `offset` of the input (reader errors give only that). */
static yaml_mark_t tpuci__yaml_mark_at(const tpuci__yaml_t *y, size_t offset) {
  yaml_mark_t m = {0, 0, 0};
  size_t i;
  if (offset > y->len) offset = y->len;
  m.index = offset;
  for (i = 0; i < offset; i++) {
    if (y->data[i] == '\n') {
      m.line++;
      m.column = 0;
    } else if (((unsigned char) y->data[i] & 0xC0) != 0x80) {
      m.column++; /* count characters, not UTF-8 continuation bytes */
    }
  }
  return m;
}

static int tpuci__yaml_parser_error(lua_State *L, tpuci__yaml_t *y) {
  yaml_parser_t *p = &y->parser;
  const char *problem = p->problem ? p->problem : "malformed YAML";

  switch (p->error) {
    case YAML_MEMORY_ERROR:
      lua_pushfstring(L, "tpuci.yaml: %s: out of memory in libyaml", y->name);
      return lua_error(L);
    case YAML_READER_ERROR:
      if (p->problem_value != -1) {
        char hex[16];
        snprintf(hex, sizeof(hex), "0x%02X", (unsigned) p->problem_value & 0xFFu);
        lua_pushfstring(L, "%s (byte %s)", problem, hex);
        problem = lua_tostring(L, -1);
      }
      return tpuci__yaml_fail(L, y, tpuci__yaml_mark_at(y, p->problem_offset), "%s", problem);
    case YAML_SCANNER_ERROR:
    case YAML_PARSER_ERROR:
      if (p->problem_mark.index < y->len && y->data[p->problem_mark.index] == '\t') {
        lua_pushfstring(L, "%s (a tab: YAML indents with spaces only)", problem);
        problem = lua_tostring(L, -1);
      } else if (p->context != NULL) {
        lua_pushfstring(L, "%s (%s at line %d, column %d)", problem, p->context,
                        (int) p->context_mark.line + 1, (int) p->context_mark.column + 1);
        problem = lua_tostring(L, -1);
      }
      return tpuci__yaml_fail(L, y, p->problem_mark, "%s", problem);
    default: return tpuci__yaml_fail(L, y, p->problem_mark, "%s", problem);
  }
}

/* Moves to the next event; raises on a YAML error or past the deadline. */
static void tpuci__yaml_next(lua_State *L, tpuci__yaml_t *y) {
  if (y->have_event) {
    yaml_event_delete(&y->event);
    y->have_event = 0;
  }
  if (++y->nevents % TPUCI__YAML_CLOCK_EVERY == 0) tpuci__spec_check_deadline(L, "tpuci.yaml");
  if (!yaml_parser_parse(&y->parser, &y->event)) tpuci__yaml_parser_error(L, y);
  y->have_event = 1;
}

/* ------------------------------------------------------------------ */
/* Scalars                                                            */

static int tpuci__yaml_is(const char *s, const char *const *words) {
  for (; *words; words++)
    if (strcmp(s, *words) == 0) return 1;
  return 0;
}

static int tpuci__yaml_digits(const char *s, const char *set) {
  if (*s == '\0') return 0;
  for (; *s; s++)
    if (strchr(set, *s) == NULL) return 0;
  return 1;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static int tpuci__yaml_is_float(const char *s) {
  int mant = 0;
  if (*s == '-' || *s == '+') s++;
  while (*s >= '0' && *s <= '9') s++, mant++;
  if (*s == '.') {
    s++;
    while (*s >= '0' && *s <= '9') s++, mant++;
  }
  if (mant == 0) return 0;
  if (*s == 'e' || *s == 'E') {
    s++;
    if (*s == '-' || *s == '+') s++;
    if (!(*s >= '0' && *s <= '9')) return 0;
    while (*s >= '0' && *s <= '9') s++;
  }
  return *s == '\0';
}

/* 0x1f, 0o17: pushes the integer; 0 when it does not fit 64 bits. */
static int tpuci__yaml_push_based(lua_State *L, const char *digits, int base) {
  unsigned long long v;
  char *end;
  errno = 0;
  v = strtoull(digits, &end, base);
  if (errno == ERANGE || *end != '\0' || v > (unsigned long long) LUA_MAXINTEGER) return 0;
  lua_pushinteger(L, (lua_Integer) v);
  return 1;
}

enum { Y_NULL = 1, Y_BOOL = 2, Y_INT = 4, Y_FLOAT = 8 };

/* Pushes the value of plain scalar text s if it is one of the types in
 * `want` (Y_* bits); returns 0 (pushing nothing) when it is not, and -1
 * for an integer out of range. Y_FLOAT also takes integers, as floats. */
static int tpuci__yaml_resolve(lua_State *L, const char *s, int want) {
  static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
  static const char *const trues[] = {"true", "True", "TRUE", NULL};
  static const char *const falses[] = {"false", "False", "FALSE", NULL};
  static const char *const infs[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
  static const char *const ninfs[] = {"-.inf", "-.Inf", "-.INF", NULL};
  static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};
  const char *d = (*s == '-' || *s == '+') ? s + 1 : s;

  if ((want & Y_NULL) && tpuci__yaml_is(s, nulls)) {
    lua_pushnil(L);
    return 1;
  }
  if (want & Y_BOOL) {
    if (tpuci__yaml_is(s, trues) || tpuci__yaml_is(s, falses)) {
      lua_pushboolean(L, tpuci__yaml_is(s, trues));
      return 1;
    }
  }
  if (want & (Y_INT | Y_FLOAT)) {
    int based = s[0] == '0' && (s[1] == 'x' || s[1] == 'o');
    if (based && tpuci__yaml_digits(s + 2, s[1] == 'x' ? "0123456789abcdefABCDEF" : "01234567")) {
      if (!tpuci__yaml_push_based(L, s + 2, s[1] == 'x' ? 16 : 8)) return -1;
      if (!(want & Y_INT)) {
        lua_Number f = (lua_Number) lua_tointeger(L, -1);
        lua_pop(L, 1);
        lua_pushnumber(L, f);
      }
      return 1;
    }
    if (tpuci__yaml_digits(d, "0123456789")) {
      /* lua_stringtonumber gives a float past the 64-bit range. */
      if (lua_stringtonumber(L, s) == 0) return 0;
      if (!(want & Y_INT) || lua_isinteger(L, -1) == 0) {
        if (want & Y_FLOAT) {
          lua_Number n = lua_tonumber(L, -1);
          lua_pop(L, 1);
          lua_pushnumber(L, n);
        } else {
          lua_pop(L, 1);
          return -1;
        }
      }
      return 1;
    }
  }
  if (want & Y_FLOAT) {
    if (tpuci__yaml_is(s, infs) || tpuci__yaml_is(s, ninfs)) {
      lua_pushnumber(L, tpuci__yaml_is(s, infs) ? (lua_Number) HUGE_VAL : -(lua_Number) HUGE_VAL);
      return 1;
    }
    if (tpuci__yaml_is(s, nans)) {
      lua_pushnumber(L, (lua_Number) NAN);
      return 1;
    }
    if (tpuci__yaml_is_float(s) && lua_stringtonumber(L, s) != 0) {
      if (lua_isinteger(L, -1)) {
        lua_Number n = lua_tonumber(L, -1);
        lua_pop(L, 1);
        lua_pushnumber(L, n);
      }
      return 1;
    }
  }
  return 0;
}

/* "!!set" for "tag:yaml.org,2002:set", as it was probably written. */
static const char *tpuci__yaml_short_tag(lua_State *L, const char *tag) {
  size_t n = strlen(TPUCI__YAML_TAG);
  if (strncmp(tag, TPUCI__YAML_TAG, n) == 0) return lua_pushfstring(L, "!!%s", tag + n);
  return tag;
}

/* Pushes the value of the scalar event. */
static void tpuci__yaml_scalar(lua_State *L, tpuci__yaml_t *y) {
  yaml_event_t *e = &y->event;
  const char *s = (const char *) e->data.scalar.value;
  size_t n = e->data.scalar.length;
  const char *tag = (const char *) e->data.scalar.tag;
  int want = 0, r;

  if (tag == NULL) {
    if (e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) want = Y_NULL | Y_BOOL | Y_INT | Y_FLOAT;
  } else if (strcmp(tag, "!") == 0 || strcmp(tag, TPUCI__YAML_TAG "str") == 0) {
    want = 0;
  } else if (strcmp(tag, TPUCI__YAML_TAG "null") == 0) {
    want = Y_NULL;
  } else if (strcmp(tag, TPUCI__YAML_TAG "bool") == 0) {
    want = Y_BOOL;
  } else if (strcmp(tag, TPUCI__YAML_TAG "int") == 0) {
    want = Y_INT;
  } else if (strcmp(tag, TPUCI__YAML_TAG "float") == 0) {
    want = Y_FLOAT;
  } else {
    tpuci__yaml_fail(L, y, e->start_mark,
                     "unsupported tag '%s' (tpuci.yaml "
                     "knows !!str, !!int, !!float, !!bool and !!null)",
                     tpuci__yaml_short_tag(L, tag));
  }
  if (want == 0) {
    lua_pushlstring(L, s, n);
    return;
  }
  /* Text with a NUL (from "\0" in a tagged quoted scalar) is no number. */
  r = strlen(s) == n ? tpuci__yaml_resolve(L, s, want) : 0;
  if (r == 1) return;
  if (r < 0) tpuci__yaml_fail(L, y, e->start_mark, "integer '%s' does not fit in 64 bits", s);
  if (tag == NULL) {
    lua_pushlstring(L, s, n);
    return;
  }
  tpuci__yaml_fail(L, y, e->start_mark,
                   want == Y_NULL   ? "'%s' is not a null (tagged !!null)"
                   : want == Y_BOOL ? "'%s' is not a boolean (tagged !!bool)"
                   : want == Y_INT  ? "'%s' is not an integer (tagged !!int)"
                                    : "'%s' is not a number (tagged !!float)",
                   s);
}

/* ------------------------------------------------------------------ */
/* Nodes                                                              */

static void tpuci__yaml_node(lua_State *L, tpuci__yaml_t *y, int depth);

/* anchors[name] = the value at the top (not popped); nil is stored as a
 * marker, so that an alias to a null anchor is told from an unknown one. */
static void tpuci__yaml_anchor(lua_State *L, const yaml_char_t *anchor) {
  if (anchor == NULL) return;
  if (lua_isnil(L, -1)) lua_pushlightuserdata(L, (void *) &tpuci__yaml_null);
  else lua_pushvalue(L, -1);
  lua_setfield(L, TPUCI__YAML_ANCHORS, (const char *) anchor);
}

static void tpuci__yaml_alias(lua_State *L, tpuci__yaml_t *y) {
  const char *name = (const char *) y->event.data.alias.anchor;
  lua_getfield(L, TPUCI__YAML_ANCHORS, name);
  if (lua_islightuserdata(L, -1)) {
    void *p = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (p == &tpuci__yaml_null) {
      lua_pushnil(L);
      return;
    }
    tpuci__yaml_fail(L, y, y->event.start_mark,
                     "alias '*%s' is inside the node "
                     "it refers to (recursive structures are not supported)",
                     name);
  }
  if (lua_isnil(L, -1)) tpuci__yaml_fail(L, y, y->event.start_mark, "unknown alias '*%s'", name);
}

static void tpuci__yaml_check_collection_tag(lua_State *L, tpuci__yaml_t *y, const yaml_char_t *tag,
                                             const char *expected) {
  const char *t = (const char *) tag;
  if (t == NULL || strcmp(t, "!") == 0) return;
  if (strncmp(t, TPUCI__YAML_TAG, strlen(TPUCI__YAML_TAG)) == 0 &&
      strcmp(t + strlen(TPUCI__YAML_TAG), expected) == 0)
    return;
  tpuci__yaml_fail(L, y, y->event.start_mark, "unsupported tag '%s'", tpuci__yaml_short_tag(L, t));
}

/* Opens a collection: depth and stack checks, then pushes its table and
 * marks its anchor (if any) as open. */
static void tpuci__yaml_open(lua_State *L, tpuci__yaml_t *y, int depth, const yaml_char_t *anchor) {
  if (depth > TPUCI__YAML_MAX_DEPTH) {
    lua_pushfstring(L, "nested deeper than %d levels", TPUCI__YAML_MAX_DEPTH);
    tpuci__yaml_fail(L, y, y->event.start_mark, "%s", lua_tostring(L, -1));
  }
  if (!lua_checkstack(L, 16)) tpuci__yaml_fail(L, y, y->event.start_mark, "%s", "out of Lua stack");
  lua_newtable(L);
  if (anchor != NULL) {
    lua_pushlightuserdata(L, (void *) &tpuci__yaml_pending);
    lua_setfield(L, TPUCI__YAML_ANCHORS, (const char *) anchor);
  }
}

/* Copies one merge source (the table at the top, a mapping) into the
 * mapping at t where t has no entry of its own; aux records them. */
static void tpuci__yaml_merge_one(lua_State *L, int t, int aux) {
  int src = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, src) != 0) {
    /* key at -2, value at -1 */
    lua_pushvalue(L, -2);
    if (lua_rawget(L, t) == LUA_TNIL) {
      lua_pop(L, 1);
      lua_pushvalue(L, -2);
      if (lua_rawget(L, aux) != LUA_TNIL) { /* an explicit null: keep it */
        lua_pop(L, 2);
        continue;
      }
      lua_pop(L, 1);
      lua_pushvalue(L, -2);
      lua_pushvalue(L, -2);
      lua_rawset(L, t);
      lua_pushvalue(L, -2);
      lua_pushinteger(L, TPUCI__YAML_MERGED);
      lua_rawset(L, aux);
    } else {
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
}

/* "<<: value": value (at the top, popped) is a mapping or a list of them. */
static void tpuci__yaml_merge(lua_State *L, tpuci__yaml_t *y, yaml_mark_t m, int t, int aux) {
  int v = lua_gettop(L);
  lua_Integer i, n;

  if (lua_type(L, v) != LUA_TTABLE)
    tpuci__yaml_fail(L, y, m, "%s",
                     "'<<' (a merge key) needs a mapping or a "
                     "list of mappings");
  lua_pushvalue(L, v);
  if (lua_rawget(L, TPUCI__YAML_SEQS) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushvalue(L, v);
    tpuci__yaml_merge_one(L, t, aux);
    lua_pop(L, 2);
    return;
  }
  lua_pop(L, 1);
  /* Earlier mappings in the list win: each only fills what is unset. */
  n = (lua_Integer) lua_rawlen(L, v);
  for (i = 1; i <= n; i++) {
    int seq;
    if (lua_rawgeti(L, v, i) != LUA_TTABLE)
      tpuci__yaml_fail(L, y, m, "%s",
                       "'<<' (a merge key) needs a mapping or "
                       "a list of mappings");
    lua_pushvalue(L, -1);
    seq = lua_rawget(L, TPUCI__YAML_SEQS) != LUA_TNIL;
    lua_pop(L, 1);
    if (seq)
      tpuci__yaml_fail(L, y, m, "%s",
                       "'<<' (a merge key) needs a mapping or "
                       "a list of mappings");
    tpuci__yaml_merge_one(L, t, aux);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* Pushes the mapping key of the current event as a string. */
static void tpuci__yaml_key(lua_State *L, tpuci__yaml_t *y) {
  yaml_event_t *e = &y->event;
  if (e->type == YAML_SCALAR_EVENT) {
    lua_pushlstring(L, (const char *) e->data.scalar.value, e->data.scalar.length);
    tpuci__yaml_anchor(L, e->data.scalar.anchor);
    return;
  }
  if (e->type == YAML_ALIAS_EVENT) {
    tpuci__yaml_alias(L, y);
    if (lua_type(L, -1) == LUA_TSTRING) return;
    if (lua_type(L, -1) == LUA_TNUMBER || lua_type(L, -1) == LUA_TBOOLEAN) {
      luaL_tolstring(L, -1, NULL);
      lua_remove(L, -2);
      return;
    }
  }
  tpuci__yaml_fail(L, y, e->start_mark, "%s",
                   "mapping keys must be scalars "
                   "(strings, numbers or booleans)");
}

static void tpuci__yaml_mapping(lua_State *L, tpuci__yaml_t *y, int depth) {
  const yaml_char_t *anchor = y->event.data.mapping_start.anchor;
  int t, aux;

  tpuci__yaml_check_collection_tag(L, y, y->event.data.mapping_start.tag, "map");
  /* The event's anchor is freed by the next event: keep a copy. */
  if (anchor != NULL) {
    lua_pushstring(L, (const char *) anchor);
    anchor = (const yaml_char_t *) lua_tostring(L, -1);
  } else {
    lua_pushnil(L);
  }
  tpuci__yaml_open(L, y, depth, anchor);
  t = lua_gettop(L);
  lua_newtable(L); /* aux: explicit nulls and merged keys */
  aux = t + 1;
  for (;;) {
    yaml_mark_t km;
    int merge, type;
    tpuci__yaml_next(L, y);
    if (y->event.type == YAML_MAPPING_END_EVENT) break;
    km = y->event.start_mark;
    merge = y->event.type == YAML_SCALAR_EVENT &&
            y->event.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
            y->event.data.scalar.tag == NULL &&
            strcmp((const char *) y->event.data.scalar.value, "<<") == 0;
    tpuci__yaml_key(L, y);
    tpuci__yaml_next(L, y);
    tpuci__yaml_node(L, y, depth + 1);
    if (merge) {
      lua_remove(L, -2);
      tpuci__yaml_merge(L, y, km, t, aux);
      continue;
    }
    /* key at -2, value at -1 */
    lua_pushvalue(L, -2);
    type = lua_rawget(L, t);
    lua_pushvalue(L, -3);
    lua_rawget(L, aux);
    if ((type != LUA_TNIL && lua_tointeger(L, -1) != TPUCI__YAML_MERGED) ||
        (type == LUA_TNIL && lua_tointeger(L, -1) == TPUCI__YAML_EXPLICIT_NULL)) {
      lua_pop(L, 2);
      tpuci__yaml_fail(L, y, km, "duplicate key '%s'", lua_tostring(L, -2));
    }
    lua_pop(L, 2);
    lua_pushvalue(L, -2);
    if (lua_isnil(L, -2)) lua_pushinteger(L, TPUCI__YAML_EXPLICIT_NULL);
    else lua_pushnil(L);
    lua_rawset(L, aux);
    lua_rawset(L, t);
  }
  lua_pop(L, 1); /* aux */
  if (anchor != NULL) {
    lua_pushvalue(L, t);
    lua_setfield(L, TPUCI__YAML_ANCHORS, (const char *) anchor);
  }
  lua_remove(L, t - 1); /* the anchor's copy */
}

static void tpuci__yaml_sequence(lua_State *L, tpuci__yaml_t *y, int depth) {
  const yaml_char_t *anchor = y->event.data.sequence_start.anchor;
  lua_Integer i = 0;
  int t;

  tpuci__yaml_check_collection_tag(L, y, y->event.data.sequence_start.tag, "seq");
  if (anchor != NULL) {
    lua_pushstring(L, (const char *) anchor);
    anchor = (const yaml_char_t *) lua_tostring(L, -1);
  } else {
    lua_pushnil(L);
  }
  tpuci__yaml_open(L, y, depth, anchor);
  t = lua_gettop(L);
  lua_pushvalue(L, t);
  lua_pushboolean(L, 1);
  lua_rawset(L, TPUCI__YAML_SEQS);
  for (;;) {
    tpuci__yaml_next(L, y);
    if (y->event.type == YAML_SEQUENCE_END_EVENT) break;
    tpuci__yaml_node(L, y, depth + 1);
    i++;
    if (lua_isnil(L, -1)) lua_pop(L, 1);
    else lua_rawseti(L, t, i);
  }
  if (anchor != NULL) {
    lua_pushvalue(L, t);
    lua_setfield(L, TPUCI__YAML_ANCHORS, (const char *) anchor);
  }
  lua_remove(L, t - 1);
}

/* Pushes the value of the node that starts with the current event. */
static void tpuci__yaml_node(lua_State *L, tpuci__yaml_t *y, int depth) {
  if (!lua_checkstack(L, 4)) tpuci__yaml_fail(L, y, y->event.start_mark, "%s", "out of Lua stack");
  switch (y->event.type) {
    case YAML_SCALAR_EVENT:
      tpuci__yaml_scalar(L, y);
      tpuci__yaml_anchor(L, y->event.data.scalar.anchor);
      break;
    case YAML_ALIAS_EVENT: tpuci__yaml_alias(L, y); break;
    case YAML_SEQUENCE_START_EVENT: tpuci__yaml_sequence(L, y, depth); break;
    case YAML_MAPPING_START_EVENT: tpuci__yaml_mapping(L, y, depth); break;
    default: tpuci__yaml_fail(L, y, y->event.start_mark, "%s", "unexpected YAML event");
  }
}

/* Runs under lua_pcall with the tpuci__yaml_t as light userdata; returns
 * the document's value. */
static int tpuci__yaml_build(lua_State *L) {
  tpuci__yaml_t *y = lua_touserdata(L, 1);

  lua_settop(L, 1);
  lua_newtable(L); /* TPUCI__YAML_ANCHORS */
  lua_newtable(L); /* TPUCI__YAML_SEQS */
  tpuci__yaml_next(L, y);
  if (y->event.type != YAML_STREAM_START_EVENT)
    tpuci__yaml_fail(L, y, y->event.start_mark, "%s",
                     "expected the start of "
                     "the stream");
  tpuci__yaml_next(L, y);
  if (y->event.type == YAML_STREAM_END_EVENT) {
    lua_pushnil(L); /* an empty file, or only comments */
    return 1;
  }
  if (y->event.type != YAML_DOCUMENT_START_EVENT)
    tpuci__yaml_fail(L, y, y->event.start_mark, "%s", "expected a document");
  tpuci__yaml_next(L, y);
  tpuci__yaml_node(L, y, 1);
  tpuci__yaml_next(L, y); /* DOCUMENT-END */
  tpuci__yaml_next(L, y);
  if (y->event.type == YAML_DOCUMENT_START_EVENT)
    tpuci__yaml_fail(L, y, y->event.start_mark, "%s",
                     "a second document "
                     "(tpuci.yaml reads files with one; remove the '---' "
                     "or split the file)");
  if (y->event.type != YAML_STREAM_END_EVENT)
    tpuci__yaml_fail(L, y, y->event.start_mark, "%s",
                     "expected the end of "
                     "the stream");
  return 1;
}

int tpuci__spec_yaml(lua_State *L) {
  tpuci__spec_ctx_t *c = tpuci__spec_ctx(L);
  tpuci__yaml_t y;
  int status;

  lua_settop(L, 1);
  /* Raises before any libyaml memory exists. */
  tpuci__spec_read_beside(L, "tpuci.yaml");
  memset(&y, 0, sizeof(y));
  y.name = lua_tostring(L, 1);
  y.data = lua_tolstring(L, 2, &y.len);
  if (!yaml_parser_initialize(&y.parser))
    return luaL_error(L, "tpuci.yaml: %s: out of memory in libyaml", y.name);
  yaml_parser_set_input_string(&y.parser, (const unsigned char *) y.data, y.len);

  lua_pushcfunction(L, tpuci__yaml_build);
  lua_pushlightuserdata(L, &y);
  status = lua_pcall(L, 1, 1, 0);

  /* The one cleanup path, before anything is raised again. */
  if (y.have_event) yaml_event_delete(&y.event);
  yaml_parser_delete(&y.parser);

  if (status == LUA_OK) return 1;
  if (status == LUA_ERRRUN && !c->timed_out && lua_type(L, -1) == LUA_TSTRING) {
    /* "spec.lua:3: tpuci.yaml: versions.yaml:4:7: ..." like luaL_error. */
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
  }
  /* A memory error stays one: lua_error() re-raises Lua's own message as
   * LUA_ERRMEM. */
  return lua_error(L);
}
