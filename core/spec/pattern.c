/* The pattern matcher of string.find, string.match, string.gmatch and
 * string.gsub, as the spec sees them: Lua 5.4.4's own (lstrlib.c; the
 * same through 5.4.8), with results, errors and messages unchanged, and
 * with a count of the work done (a step of the matcher, a byte compared)
 * and a look at the clock every TPUCI__PM_WORK units, so that a pattern
 * that backtracks for hours (string.find(string.rep("a", 30),
 * string.rep("a-", 12) .. "b")) stops at the load's deadline like a
 * loop does. See bounded.c for the other functions made so.
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
#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "spec/internal.h"

/* Units of work between two looks at the clock: well under a
 * millisecond. */
#define TPUCI__PM_WORK 65536

#define TPUCI__PM_MAXCAPTURES 32 /* LUA_MAXCAPTURES */
#define TPUCI__PM_MAXCCALLS 200  /* MAXCCALLS: recursion of match() */
#define TPUCI__PM_ESC '%'
#define TPUCI__PM_SPECIALS "^$*+?.([%-"
#define TPUCI__CAP_UNFINISHED (-1)
#define TPUCI__CAP_POSITION (-2)
#define uchar(c) ((unsigned char) (c))

typedef struct {
  const char *src_init; /* start of the subject */
  const char *src_end;  /* its end */
  const char *p_end;    /* end of the pattern */
  lua_State *L;
  const char *what;    /* "string.find", for the timeout's message */
  size_t work;         /* units since the clock was read */
  int matchdepth;      /* recursion left (C stack) */
  unsigned char level; /* captures, finished or not */
  struct {
    const char *init;
    ptrdiff_t len;
  } capture[TPUCI__PM_MAXCAPTURES];
} tpuci__pm_t;

static void tpuci__pm_work(tpuci__pm_t *ms, size_t units) {
  ms->work += units;
  if (ms->work < TPUCI__PM_WORK) return;
  ms->work = 0;
  tpuci__spec_check_deadline(ms->L, ms->what);
}

static const char *tpuci__pm_match(tpuci__pm_t *ms, const char *s, const char *p);

/* A position relative to the string (lstrlib.c posrelatI). */
static size_t tpuci__pm_posrelat(lua_Integer pos, size_t len) {
  if (pos > 0) return (size_t) pos;
  else if (pos == 0) return 1;
  else if (pos < -(lua_Integer) len) return 1;
  else return len + (size_t) pos + 1;
}

static int tpuci__pm_check_capture(tpuci__pm_t *ms, int l) {
  l -= '1';
  if (l < 0 || l >= ms->level || ms->capture[l].len == TPUCI__CAP_UNFINISHED)
    return luaL_error(ms->L, "invalid capture index %%%d", l + 1);
  return l;
}

static int tpuci__pm_capture_to_close(tpuci__pm_t *ms) {
  int level = ms->level;
  for (level--; level >= 0; level--)
    if (ms->capture[level].len == TPUCI__CAP_UNFINISHED) return level;
  return luaL_error(ms->L, "invalid pattern capture");
}

static const char *tpuci__pm_classend(tpuci__pm_t *ms, const char *p) {
  switch (*p++) {
    case TPUCI__PM_ESC: {
      if (p == ms->p_end) luaL_error(ms->L, "malformed pattern (ends with '%%')");
      return p + 1;
    }
    case '[': {
      if (*p == '^') p++;
      do { /* look for a ']' */
        if (p == ms->p_end) luaL_error(ms->L, "malformed pattern (missing ']')");
        if (*(p++) == TPUCI__PM_ESC && p < ms->p_end) p++; /* skip escapes (e.g. '%]') */
      } while (*p != ']');
      return p + 1;
    }
    default: return p;
  }
}

static int tpuci__pm_match_class(int c, int cl) {
  int res;
  switch (tolower(cl)) {
    case 'a': res = isalpha(c); break;
    case 'c': res = iscntrl(c); break;
    case 'd': res = isdigit(c); break;
    case 'g': res = isgraph(c); break;
    case 'l': res = islower(c); break;
    case 'p': res = ispunct(c); break;
    case 's': res = isspace(c); break;
    case 'u': res = isupper(c); break;
    case 'w': res = isalnum(c); break;
    case 'x': res = isxdigit(c); break;
    case 'z': res = (c == 0); break; /* deprecated option */
    default: return (cl == c);
  }
  return (islower(cl) ? res : !res);
}

static int tpuci__pm_bracketclass(int c, const char *p, const char *ec) {
  int sig = 1;
  if (*(p + 1) == '^') {
    sig = 0;
    p++; /* skip the '^' */
  }
  while (++p < ec) {
    if (*p == TPUCI__PM_ESC) {
      p++;
      if (tpuci__pm_match_class(c, uchar(*p))) return sig;
    } else if ((*(p + 1) == '-') && (p + 2 < ec)) {
      p += 2;
      if (uchar(*(p - 2)) <= c && c <= uchar(*p)) return sig;
    } else if (uchar(*p) == c) {
      return sig;
    }
  }
  return !sig;
}

static int tpuci__pm_single(tpuci__pm_t *ms, const char *s, const char *p, const char *ep) {
  int c;
  if (s >= ms->src_end) return 0;
  c = uchar(*s);
  switch (*p) {
    case '.': return 1; /* matches any char */
    case TPUCI__PM_ESC: return tpuci__pm_match_class(c, uchar(*(p + 1)));
    case '[':
      /* A class can be as long as the pattern: its length is work. */
      tpuci__pm_work(ms, (size_t) (ep - p));
      return tpuci__pm_bracketclass(c, p, ep - 1);
    default: return (uchar(*p) == c);
  }
}

static const char *tpuci__pm_balance(tpuci__pm_t *ms, const char *s, const char *p) {
  if (p >= ms->p_end - 1) luaL_error(ms->L, "malformed pattern (missing arguments to '%%b')");
  if (*s != *p) return NULL;
  {
    int b = *p, e = *(p + 1), cont = 1;
    while (++s < ms->src_end) {
      tpuci__pm_work(ms, 1);
      if (*s == e) {
        if (--cont == 0) return s + 1;
      } else if (*s == b) {
        cont++;
      }
    }
  }
  return NULL; /* string ends out of balance */
}

static const char *tpuci__pm_max_expand(tpuci__pm_t *ms, const char *s, const char *p,
                                        const char *ep) {
  ptrdiff_t i = 0; /* counts maximum expand for item */
  while (tpuci__pm_single(ms, s + i, p, ep)) {
    tpuci__pm_work(ms, 1);
    i++;
  }
  /* keeps trying to match with the maximum repetitions */
  while (i >= 0) {
    const char *res = tpuci__pm_match(ms, (s + i), ep + 1);
    if (res) return res;
    i--; /* else didn't match; reduce 1 repetition to try again */
  }
  return NULL;
}

static const char *tpuci__pm_min_expand(tpuci__pm_t *ms, const char *s, const char *p,
                                        const char *ep) {
  for (;;) {
    const char *res = tpuci__pm_match(ms, s, ep + 1);
    if (res != NULL) return res;
    else if (tpuci__pm_single(ms, s, p, ep)) s++; /* try with one more repetition */
    else return NULL;
  }
}

static const char *tpuci__pm_start_capture(tpuci__pm_t *ms, const char *s, const char *p,
                                           int what) {
  const char *res;
  int level = ms->level;
  if (level >= TPUCI__PM_MAXCAPTURES) luaL_error(ms->L, "too many captures");
  ms->capture[level].init = s;
  ms->capture[level].len = what;
  ms->level = (unsigned char) (level + 1);
  if ((res = tpuci__pm_match(ms, s, p)) == NULL) /* match failed? */
    ms->level--;                                 /* undo capture */
  return res;
}

static const char *tpuci__pm_end_capture(tpuci__pm_t *ms, const char *s, const char *p) {
  int l = tpuci__pm_capture_to_close(ms);
  const char *res;
  ms->capture[l].len = s - ms->capture[l].init;  /* close capture */
  if ((res = tpuci__pm_match(ms, s, p)) == NULL) /* match failed? */
    ms->capture[l].len = TPUCI__CAP_UNFINISHED;  /* undo capture */
  return res;
}

static const char *tpuci__pm_match_capture(tpuci__pm_t *ms, const char *s, int l) {
  size_t len;
  l = tpuci__pm_check_capture(ms, l);
  len = (size_t) ms->capture[l].len;
  tpuci__pm_work(ms, len);
  if ((size_t) (ms->src_end - s) >= len && memcmp(ms->capture[l].init, s, len) == 0) return s + len;
  return NULL;
}

static const char *tpuci__pm_match(tpuci__pm_t *ms, const char *s, const char *p) {
  if (ms->matchdepth-- == 0) luaL_error(ms->L, "pattern too complex");
init: /* using goto to optimize tail recursion */
  tpuci__pm_work(ms, 1);
  if (p != ms->p_end) { /* end of pattern? */
    switch (*p) {
      case '(': {            /* start capture */
        if (*(p + 1) == ')') /* position capture? */
          s = tpuci__pm_start_capture(ms, s, p + 2, TPUCI__CAP_POSITION);
        else s = tpuci__pm_start_capture(ms, s, p + 1, TPUCI__CAP_UNFINISHED);
        break;
      }
      case ')': { /* end capture */ s = tpuci__pm_end_capture(ms, s, p + 1); break;
      }
      case '$': {
        if ((p + 1) != ms->p_end)          /* is the '$' the last char in pattern? */
          goto dflt;                       /* no; go to default */
        s = (s == ms->src_end) ? s : NULL; /* check end of string */
        break;
      }
      case TPUCI__PM_ESC: { /* escaped sequences not in the format class[*+?-]? */
        switch (*(p + 1)) {
          case 'b': { /* balanced string? */
            s = tpuci__pm_balance(ms, s, p + 2);
            if (s != NULL) {
              p += 4;
              goto init; /* return match(ms, s, p + 4); */
            }            /* else fail (s == NULL) */
            break;
          }
          case 'f': { /* frontier? */
            const char *ep;
            char previous;
            p += 2;
            if (*p != '[') luaL_error(ms->L, "missing '[' after '%%f' in pattern");
            ep = tpuci__pm_classend(ms, p); /* points to what is next */
            previous = (s == ms->src_init) ? '\0' : *(s - 1);
            tpuci__pm_work(ms, (size_t) (ep - p));
            if (!tpuci__pm_bracketclass(uchar(previous), p, ep - 1) &&
                tpuci__pm_bracketclass(uchar(*s), p, ep - 1)) {
              p = ep;
              goto init; /* return match(ms, s, ep); */
            }
            s = NULL; /* match failed */
            break;
          }
          case '0':
          case '1':
          case '2':
          case '3':
          case '4':
          case '5':
          case '6':
          case '7':
          case '8':
          case '9': {
            /* capture results (%0-%9)? */
            s = tpuci__pm_match_capture(ms, s, uchar(*(p + 1)));
            if (s != NULL) {
              p += 2;
              goto init; /* return match(ms, s, p + 2) */
            }
            break;
          }
          default: goto dflt;
        }
        break;
      }
      default:
      dflt : {                                      /* pattern class plus optional suffix */
        const char *ep = tpuci__pm_classend(ms, p); /* points to optional suffix */
        /* does not match at least once? */
        if (!tpuci__pm_single(ms, s, p, ep)) {
          if (*ep == '*' || *ep == '?' || *ep == '-') { /* accept empty? */
            p = ep + 1;
            goto init; /* return match(ms, s, ep + 1); */
          } else {     /* '+' or no suffix */
            s = NULL;  /* fail */
          }
        } else {         /* matched once */
          switch (*ep) { /* handle optional suffix */
            case '?': {  /* optional */
              const char *res;
              if ((res = tpuci__pm_match(ms, s + 1, ep + 1)) != NULL) {
                s = res;
              } else {
                p = ep + 1;
                goto init; /* else return match(ms, s, ep + 1); */
              }
              break;
            }
            case '+': /* 1 or more repetitions */
              s++;    /* 1 match already done */
              /* fallthrough */
            case '*': /* 0 or more repetitions */ s = tpuci__pm_max_expand(ms, s, p, ep); break;
            case '-': /* 0 or more repetitions (minimum) */
              s = tpuci__pm_min_expand(ms, s, p, ep);
              break;
            default: /* no suffix */
              s++;
              p = ep;
              goto init; /* return match(ms, s + 1, ep); */
          }
        }
        break;
      }
    }
  }
  ms->matchdepth++;
  return s;
}

/* A plain search: memchr for the first byte, then memcmp, which is
 * quadratic at worst ("aaa...a" in "aaa...ab"); every byte compared is
 * work. */
static const char *tpuci__pm_memfind(tpuci__pm_t *ms, const char *s1, size_t l1, const char *s2,
                                     size_t l2) {
  const char *init;
  if (l2 == 0) return s1;   /* empty strings are everywhere */
  if (l2 > l1) return NULL; /* avoids a negative 'l1' */
  l2--;                     /* 1st char will be checked by 'memchr' */
  l1 = l1 - l2;             /* 's2' cannot be found after that */
  while (l1 > 0 && (init = memchr(s1, *s2, l1)) != NULL) {
    tpuci__pm_work(ms, (size_t) (init - s1) + l2 + 1);
    init++; /* 1st char is already checked */
    if (memcmp(init, s2 + 1, l2) == 0) return init - 1;
    /* correct 'l1' and 's1' to try again */
    l1 -= (size_t) (init - s1);
    s1 = init;
  }
  return NULL; /* not found */
}

/* The i-th capture: its length and address in *cap when it is a string;
 * CAP_POSITION, with the position pushed, when it is a position. Without
 * captures, capture 0 is the whole match s..e. */
static ptrdiff_t tpuci__pm_get_capture(tpuci__pm_t *ms, int i, const char *s, const char *e,
                                       const char **cap) {
  if (i >= ms->level) {
    if (i != 0) luaL_error(ms->L, "invalid capture index %%%d", i + 1);
    *cap = s;
    return e - s;
  } else {
    ptrdiff_t capl = ms->capture[i].len;
    *cap = ms->capture[i].init;
    if (capl == TPUCI__CAP_UNFINISHED) luaL_error(ms->L, "unfinished capture");
    else if (capl == TPUCI__CAP_POSITION)
      lua_pushinteger(ms->L, (ms->capture[i].init - ms->src_init) + 1);
    return capl;
  }
}

static void tpuci__pm_push_capture(tpuci__pm_t *ms, int i, const char *s, const char *e) {
  const char *cap;
  ptrdiff_t l = tpuci__pm_get_capture(ms, i, s, e, &cap);
  if (l != TPUCI__CAP_POSITION) lua_pushlstring(ms->L, cap, (size_t) l);
  /* else position was already pushed */
}

static int tpuci__pm_push_captures(tpuci__pm_t *ms, const char *s, const char *e) {
  int i;
  int nlevels = (ms->level == 0 && s) ? 1 : ms->level;
  luaL_checkstack(ms->L, nlevels, "too many captures");
  for (i = 0; i < nlevels; i++) tpuci__pm_push_capture(ms, i, s, e);
  return nlevels; /* number of strings pushed */
}

/* Whether the pattern has no special characters. */
static int tpuci__pm_nospecials(const char *p, size_t l) {
  size_t upto = 0;
  do {
    if (strpbrk(p + upto, TPUCI__PM_SPECIALS)) return 0;
    upto += strlen(p + upto) + 1; /* may have more after \0 */
  } while (upto <= l);
  return 1;
}

static void tpuci__pm_prepare(tpuci__pm_t *ms, lua_State *L, const char *what, const char *s,
                              size_t ls, const char *p, size_t lp) {
  ms->L = L;
  ms->what = what;
  ms->work = 0;
  ms->matchdepth = TPUCI__PM_MAXCCALLS;
  ms->src_init = s;
  ms->src_end = s + ls;
  ms->p_end = p + lp;
}

static void tpuci__pm_reprepare(tpuci__pm_t *ms) { ms->level = 0; }

static int tpuci__pm_find_aux(lua_State *L, int find) {
  size_t ls, lp;
  const char *s = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
  size_t init = tpuci__pm_posrelat(luaL_optinteger(L, 3, 1), ls) - 1;
  tpuci__pm_t ms;

  if (init > ls) {    /* start after string's end? */
    luaL_pushfail(L); /* cannot find anything */
    return 1;
  }
  /* explicit request or no special characters? */
  if (find && (lua_toboolean(L, 4) || tpuci__pm_nospecials(p, lp))) {
    /* do a plain search */
    const char *s2;
    tpuci__pm_prepare(&ms, L, "string.find", s, ls, p, lp);
    s2 = tpuci__pm_memfind(&ms, s + init, ls - init, p, lp);
    if (s2) {
      lua_pushinteger(L, (s2 - s) + 1);
      lua_pushinteger(L, (lua_Integer) ((size_t) (s2 - s) + lp));
      return 2;
    }
  } else {
    const char *s1 = s + init;
    int anchor = (*p == '^');
    if (anchor) {
      p++;
      lp--; /* skip anchor character */
    }
    tpuci__pm_prepare(&ms, L, find ? "string.find" : "string.match", s, ls, p, lp);
    do {
      const char *res;
      tpuci__pm_reprepare(&ms);
      if ((res = tpuci__pm_match(&ms, s1, p)) != NULL) {
        if (find) {
          lua_pushinteger(L, (s1 - s) + 1); /* start */
          lua_pushinteger(L, res - s);      /* end */
          return tpuci__pm_push_captures(&ms, NULL, 0) + 2;
        }
        return tpuci__pm_push_captures(&ms, s1, res);
      }
    } while (s1++ < ms.src_end && !anchor);
  }
  luaL_pushfail(L); /* not found */
  return 1;
}

static int tpuci__pm_find(lua_State *L) { return tpuci__pm_find_aux(L, 1); }

static int tpuci__pm_str_match(lua_State *L) { return tpuci__pm_find_aux(L, 0); }

/* The state of a string.gmatch iterator. */
typedef struct {
  const char *src;       /* current position */
  const char *p;         /* pattern */
  const char *lastmatch; /* end of last match */
  tpuci__pm_t ms;
} tpuci__pm_gmatch_t;

static int tpuci__pm_gmatch_aux(lua_State *L) {
  tpuci__pm_gmatch_t *gm = lua_touserdata(L, lua_upvalueindex(3));
  const char *src;
  gm->ms.L = L;
  for (src = gm->src; src <= gm->ms.src_end; src++) {
    const char *e;
    tpuci__pm_reprepare(&gm->ms);
    if ((e = tpuci__pm_match(&gm->ms, src, gm->p)) != NULL && e != gm->lastmatch) {
      gm->src = gm->lastmatch = e;
      return tpuci__pm_push_captures(&gm->ms, src, e);
    }
  }
  return 0; /* not found */
}

static int tpuci__pm_gmatch(lua_State *L) {
  size_t ls, lp;
  const char *s = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
  size_t init = tpuci__pm_posrelat(luaL_optinteger(L, 3, 1), ls) - 1;
  tpuci__pm_gmatch_t *gm;
  lua_settop(L, 2); /* keep strings on closure to avoid being collected */
  gm = lua_newuserdatauv(L, sizeof(*gm), 0);
  if (init > ls)   /* start after string's end? */
    init = ls + 1; /* avoid overflows in 's + init' */
  tpuci__pm_prepare(&gm->ms, L, "string.gmatch", s, ls, p, lp);
  gm->src = s + init;
  gm->p = p;
  gm->lastmatch = NULL;
  lua_pushcclosure(L, tpuci__pm_gmatch_aux, 3);
  return 1;
}

static void tpuci__pm_add_s(tpuci__pm_t *ms, luaL_Buffer *b, const char *s, const char *e) {
  size_t l;
  lua_State *L = ms->L;
  const char *news = lua_tolstring(L, 3, &l);
  const char *p;
  while ((p = memchr(news, TPUCI__PM_ESC, l)) != NULL) {
    luaL_addlstring(b, news, (size_t) (p - news));
    p++;                       /* skip ESC */
    if (*p == TPUCI__PM_ESC) { /* '%%' */
      luaL_addchar(b, *p);
    } else if (*p == '0') { /* '%0' */
      luaL_addlstring(b, s, (size_t) (e - s));
    } else if (isdigit(uchar(*p))) { /* '%n' */
      const char *cap;
      ptrdiff_t resl = tpuci__pm_get_capture(ms, *p - '1', s, e, &cap);
      if (resl == TPUCI__CAP_POSITION) luaL_addvalue(b); /* add position to accumulated result */
      else luaL_addlstring(b, cap, (size_t) resl);
    } else {
      luaL_error(L, "invalid use of '%c' in replacement string", TPUCI__PM_ESC);
    }
    l -= (size_t) (p + 1 - news);
    news = p + 1;
  }
  luaL_addlstring(b, news, l);
}

/* Adds the replacement to b; whether the subject changed (a function or
 * table giving nil or false keeps the match). */
static int tpuci__pm_add_value(tpuci__pm_t *ms, luaL_Buffer *b, const char *s, const char *e,
                               int tr) {
  lua_State *L = ms->L;
  switch (tr) {
    case LUA_TFUNCTION: { /* call the function */
      int n;
      lua_pushvalue(L, 3);                   /* push the function */
      n = tpuci__pm_push_captures(ms, s, e); /* all captures as arguments */
      lua_call(L, n, 1);
      break;
    }
    case LUA_TTABLE: {                     /* index the table */
      tpuci__pm_push_capture(ms, 0, s, e); /* first capture is the index */
      lua_gettable(L, 3);
      break;
    }
    default: { /* LUA_TNUMBER or LUA_TSTRING */ tpuci__pm_add_s(ms, b, s, e); return 1;
    }
  }
  if (!lua_toboolean(L, -1)) { /* nil or false? */
    lua_pop(L, 1);
    luaL_addlstring(b, s, (size_t) (e - s)); /* keep original text */
    return 0;
  } else if (!lua_isstring(L, -1)) {
    return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  }
  luaL_addvalue(b);
  return 1;
}

static int tpuci__pm_gsub(lua_State *L) {
  size_t srcl, lp;
  const char *src = luaL_checklstring(L, 1, &srcl); /* subject */
  const char *p = luaL_checklstring(L, 2, &lp);     /* pattern */
  const char *lastmatch = NULL;                     /* end of last match */
  int tr = lua_type(L, 3);                          /* replacement type */
  lua_Integer max_s = luaL_optinteger(L, 4, (lua_Integer) srcl + 1);
  int anchor = (*p == '^');
  lua_Integer n = 0; /* replacement count */
  int changed = 0;
  tpuci__pm_t ms;
  luaL_Buffer b;
  luaL_argexpected(
      L, tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE, 3,
      "string/function/table");
  luaL_buffinit(L, &b);
  if (anchor) {
    p++;
    lp--; /* skip anchor character */
  }
  tpuci__pm_prepare(&ms, L, "string.gsub", src, srcl, p, lp);
  while (n < max_s) {
    const char *e;
    tpuci__pm_reprepare(&ms);
    if ((e = tpuci__pm_match(&ms, src, p)) != NULL && e != lastmatch) {
      n++;
      changed = tpuci__pm_add_value(&ms, &b, src, e, tr) | changed;
      src = lastmatch = e;
    } else if (src < ms.src_end) { /* otherwise, skip one character */
      luaL_addchar(&b, *src++);
    } else {
      break; /* end of subject */
    }
    if (anchor) break;
  }
  if (!changed) {
    lua_pushvalue(L, 1); /* return original string */
  } else {
    luaL_addlstring(&b, src, (size_t) (ms.src_end - src));
    luaL_pushresult(&b);
  }
  lua_pushinteger(L, n); /* number of substitutions */
  return 2;
}

void tpuci__spec_patterns(lua_State *L) {
  static const luaL_Reg fns[] = {{"find", tpuci__pm_find},
                                 {"match", tpuci__pm_str_match},
                                 {"gmatch", tpuci__pm_gmatch},
                                 {"gsub", tpuci__pm_gsub},
                                 {NULL, NULL}};
  /* The string metatable's __index is this same table, so methods
   * ("s:find(p)") get the copies too. */
  lua_getglobal(L, LUA_STRLIBNAME);
  luaL_setfuncs(L, fns, 0);
  lua_pop(L, 1);
}
