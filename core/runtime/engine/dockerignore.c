/* .dockerignore patterns (dockerignore.h). */
#include "runtime/engine/dockerignore.h"

#include <stdlib.h>
#include <string.h>

/* Patterns. Each is a list of tokens run as a small NFA: one pass over
 * the path with the set of live positions, so that no pattern (stars
 * and all) costs more than path length x pattern length, which matters
 * for the fuzzer and for a .dockerignore someone else wrote. */

enum {
  TPUCI__TOK_RUNE,  /* this character */
  TPUCI__TOK_ONE,   /* '?': any character but '/' */
  TPUCI__TOK_CLASS, /* [...] or [^...] */
  TPUCI__TOK_STAR,  /* '*': any run of characters without a '/' */
  TPUCI__TOK_ALL,   /* "**" at the end: anything at all */
  TPUCI__TOK_DIRS   /* "**" elsewhere, "(.*\/)?": a jump over the ALL and the
                     * '/' that follow it, or into them */
};

typedef struct {
  int kind;
  int negate;      /* CLASS */
  uint32_t rune;   /* RUNE */
  size_t first, n; /* CLASS: its ranges, pairs in ranges[2 * first...] */
} tpuci__tok_t;

struct tpuci__ignore_pat_s {
  char *text; /* cleaned, without the '!' */
  int exception;
  tpuci__tok_t *toks;
  size_t ntoks;
  uint32_t *ranges;
  size_t nranges;
};

/* One character of s: its code point, or, for a byte that starts no
 * valid UTF-8 sequence, a value past Unicode that stands for that byte
 * alone (so it matches only itself, '?' and a negated class). */
static size_t tpuci__rune(const char *s, const char *end, uint32_t *r) {
  const unsigned char *p = (const unsigned char *) s;
  size_t n, i;
  if (*p < 0x80) {
    *r = *p;
    return 1;
  }
  n = tpuci__utf8_len(p, (const unsigned char *) end);
  if (n == 0) {
    *r = 0x110000u + *p;
    return 1;
  }
  *r = *p & (0x7fu >> n);
  for (i = 1; i < n; i++) *r = (*r << 6) | (p[i] & 0x3fu);
  return n;
}

/* The runes of s, with room for one more. */
static uint32_t *tpuci__runes(const char *s, size_t *n) {
  const char *end = s + strlen(s);
  uint32_t *rs = tpuci__malloc(((size_t) (end - s) + 1) * sizeof(*rs));
  *n = 0;
  while (s < end) s += tpuci__rune(s, end, &rs[(*n)++]);
  return rs;
}

/* A character of a class as filepath.Match reads one: '\' escapes, and
 * a bare '-' or ']' is not one. The bytes used, or 0. */
static size_t tpuci__class_char(const char *s, const char *end, uint32_t *r) {
  if (s == end || *s == '-' || *s == ']') return 0;
  if (*s != '\\') return tpuci__rune(s, end, r);
  if (s + 1 == end) return 0;
  return 1 + tpuci__rune(s + 1, end, r);
}

/* The class that starts after a '[' at s: where it ends, or NULL when
 * it does not close, is empty or has a range that runs backwards. */
static const char *tpuci__compile_class(tpuci__ignore_pat_t *p, tpuci__tok_t *t, const char *s,
                                        const char *end) {
  t->kind = TPUCI__TOK_CLASS;
  t->first = p->nranges;
  if (s < end && *s == '^') {
    t->negate = 1;
    s++;
  }
  for (;;) {
    uint32_t lo, hi;
    size_t k;
    if (s < end && *s == ']' && t->n > 0) return s + 1;
    if ((k = tpuci__class_char(s, end, &lo)) == 0) return NULL;
    s += k;
    hi = lo;
    if (s < end && *s == '-') {
      if ((k = tpuci__class_char(s + 1, end, &hi)) == 0 || hi < lo) return NULL;
      s += 1 + k;
    }
    p->ranges[2 * p->nranges] = lo;
    p->ranges[2 * p->nranges + 1] = hi;
    p->nranges++;
    t->n++;
  }
}

/* Fills p->toks from p->text: NULL, or why Docker would refuse it. A
 * range takes at least one byte of the text, a token too, but "**",
 * which takes two and makes three: that sizes both arrays. */
static const char *tpuci__compile(tpuci__ignore_pat_t *p) {
  const char *s = p->text, *end = s + strlen(s);
  size_t cap = 2 * (size_t) (end - s) + 1;

  p->toks = tpuci__calloc(cap, sizeof(*p->toks));
  p->ranges = tpuci__calloc(2 * cap, sizeof(*p->ranges));
  while (s < end) {
    tpuci__tok_t *t = &p->toks[p->ntoks++];
    if (s[0] == '*' && s + 1 < end && s[1] == '*') {
      /* "**\/" is "**": the '/' belongs to it, so "**\/a" matches "a". */
      s += 2;
      if (s < end && *s == '/') s++;
      t->kind = TPUCI__TOK_ALL;
      if (s < end) {
        t->kind = TPUCI__TOK_DIRS;
        p->toks[p->ntoks++].kind = TPUCI__TOK_ALL;
        p->toks[p->ntoks].kind = TPUCI__TOK_RUNE;
        p->toks[p->ntoks++].rune = '/';
      }
    } else if (*s == '*') {
      t->kind = TPUCI__TOK_STAR;
      s++;
    } else if (*s == '?') {
      t->kind = TPUCI__TOK_ONE;
      s++;
    } else if (*s == '[') {
      s = tpuci__compile_class(p, t, s + 1, end);
      if (s == NULL) return "a [ ] class that is empty, unclosed or runs backwards";
    } else if (*s == '\\') {
      if (s + 1 == end) return "a '\\' at its end";
      t->kind = TPUCI__TOK_RUNE;
      s += 1 + tpuci__rune(s + 1, end, &t->rune);
    } else {
      t->kind = TPUCI__TOK_RUNE;
      s += tpuci__rune(s, end, &t->rune);
    }
  }
  return NULL;
}

/* Adds the positions reachable without reading a character. */
static void tpuci__nfa_close(const tpuci__ignore_pat_t *p, unsigned char *set) {
  size_t i;
  for (i = 0; i < p->ntoks; i++) {
    int k = p->toks[i].kind;
    if (!set[i]) continue;
    if (k == TPUCI__TOK_STAR || k == TPUCI__TOK_ALL || k == TPUCI__TOK_DIRS) set[i + 1] = 1;
    if (k == TPUCI__TOK_DIRS) set[i + 3] = 1;
  }
}

static int tpuci__class_has(const tpuci__ignore_pat_t *p, const tpuci__tok_t *t, uint32_t r) {
  size_t i;
  int in = 0;
  for (i = 0; i < t->n && !in; i++)
    in = r >= p->ranges[2 * (t->first + i)] && r <= p->ranges[2 * (t->first + i) + 1];
  return in != t->negate;
}

/* Reads r: from the live set cur into next. Whether anything is live. */
static int tpuci__nfa_step(const tpuci__ignore_pat_t *p, const unsigned char *cur,
                           unsigned char *next, uint32_t r) {
  size_t i;
  int live = 0;
  memset(next, 0, p->ntoks + 1);
  for (i = 0; i < p->ntoks; i++) {
    const tpuci__tok_t *t = &p->toks[i];
    if (!cur[i]) continue;
    switch (t->kind) {
      case TPUCI__TOK_RUNE: next[i + 1] |= r == t->rune; break;
      case TPUCI__TOK_ONE: next[i + 1] |= r != '/'; break;
      case TPUCI__TOK_CLASS: next[i + 1] |= tpuci__class_has(p, t, r); break;
      case TPUCI__TOK_STAR: next[i] |= r != '/'; break;
      case TPUCI__TOK_ALL: next[i] = 1; break;
      case TPUCI__TOK_DIRS: break; /* reads nothing: a jump */
    }
  }
  tpuci__nfa_close(p, next);
  for (i = 0; i <= p->ntoks; i++) live |= next[i];
  return live;
}

/* Runs p over rs[0..n). With `parents`, also answers 1 when p matches
 * the path of a folder above (the text before one of the '/'): Docker
 * leaves out what is below a left-out folder. Returns 1 (matched), 0
 * (not, but some longer path could) or -1 (no path that starts so can).
 * scratch holds 2 * (p->ntoks + 1) bytes. */
static int tpuci__pat_run(const tpuci__ignore_pat_t *p, const uint32_t *rs, size_t n, int parents,
                          unsigned char *scratch) {
  unsigned char *cur = scratch, *next = scratch + p->ntoks + 1, *tmp;
  size_t i;
  memset(cur, 0, p->ntoks + 1);
  cur[0] = 1;
  tpuci__nfa_close(p, cur);
  for (i = 0; i < n; i++) {
    if (parents && rs[i] == '/' && cur[p->ntoks]) return 1;
    if (!tpuci__nfa_step(p, cur, next, rs[i])) return -1;
    tmp = cur;
    cur = next;
    next = tmp;
  }
  return cur[p->ntoks] ? 1 : 0;
}

/* Go's path.Clean of s[0..n): no empty or "." elements, ".." removes
 * the element before it (or stays, leading a relative path; or goes,
 * at the root), no trailing '/'; nothing is ".". */
static char *tpuci__path_clean(const char *s, size_t n) {
  char *out = tpuci__malloc(n + 2);
  size_t r = 0, w = 0, dotdot = 0;
  int rooted = n > 0 && s[0] == '/';

  if (rooted) {
    out[w++] = '/';
    r = dotdot = 1;
  }
  while (r < n) {
    if (s[r] == '/') {
      r++;
    } else if (s[r] == '.' && (r + 1 == n || s[r + 1] == '/')) {
      r++;
    } else if (s[r] == '.' && r + 1 < n && s[r + 1] == '.' && (r + 2 == n || s[r + 2] == '/')) {
      r += 2;
      if (w > dotdot) {
        w--;
        while (w > dotdot && out[w] != '/') w--;
      } else if (!rooted) {
        if (w > 0) out[w++] = '/';
        out[w++] = '.';
        out[w++] = '.';
        dotdot = w;
      }
    } else {
      if ((rooted && w != 1) || (!rooted && w != 0)) out[w++] = '/';
      for (; r < n && s[r] != '/'; r++) out[w++] = s[r];
    }
  }
  if (w == 0) out[w++] = '.';
  out[w] = '\0';
  return out;
}

static int tpuci__is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static void tpuci__trim(const char **b, const char **e) {
  while (*b < *e && tpuci__is_space(**b)) (*b)++;
  while (*e > *b && tpuci__is_space((*e)[-1])) (*e)--;
}

/* One line of the file, [b, e), as Docker reads it. */
static int tpuci__ignore_line(tpuci__dockerignore_t *di, const char *b, const char *e,
                              const char *where, size_t line, tpuci__err_t *err) {
  tpuci__ignore_pat_t *p;
  const char *why;
  int exception;
  char *text;

  /* Only a '#' in the first column makes a comment: " #x" is a pattern. */
  if (b < e && *b == '#') return 0;
  tpuci__trim(&b, &e);
  if (b == e) return 0;
  exception = *b == '!';
  if (exception) {
    b++;
    tpuci__trim(&b, &e);
    if (b == e)
      return tpuci__err_set(err, TPUCI_ESPEC, "%s:%zu: \"!\" without a pattern after it", where,
                            line);
  }
  text = tpuci__path_clean(b, (size_t) (e - b));
  /* The context is the root: "/a" is "a" ("/" alone stays, and matches
   * nothing). */
  if (text[0] == '/' && text[1] != '\0') memmove(text, text + 1, strlen(text));
  p = &di->pats[di->n++];
  memset(p, 0, sizeof(*p));
  p->text = text;
  p->exception = exception;
  if ((why = tpuci__compile(p)) != NULL) {
    char *shown = tpuci__safe(text, 0);
    int r =
        tpuci__err_set(err, TPUCI_ESPEC, "%s:%zu: bad pattern \"%s\": %s", where, line, shown, why);
    free(shown);
    return r;
  }
  if (p->ntoks > di->max_tokens) di->max_tokens = p->ntoks;
  return 0;
}

int tpuci__dockerignore_parse(tpuci__dockerignore_t *di, const char *text, size_t len,
                              const char *where, tpuci__err_t *err) {
  const char *s = text, *end = text + len;
  size_t line = 0, lines = 1, i;

  memset(di, 0, sizeof(*di));
  for (i = 0; i < len; i++) lines += text[i] == '\n';
  di->pats = tpuci__calloc(lines, sizeof(*di->pats));
  if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) s += 3;
  while (s < end) {
    const char *eol = memchr(s, '\n', (size_t) (end - s));
    int r;
    if (eol == NULL) eol = end;
    r = tpuci__ignore_line(di, s, eol, where, ++line, err);
    if (r != 0) {
      tpuci__dockerignore_free(di);
      return r;
    }
    s = eol < end ? eol + 1 : end;
  }
  return 0;
}

int tpuci__dockerignore_excluded(const tpuci__dockerignore_t *di, const char *rel) {
  unsigned char *scratch;
  uint32_t *rs;
  size_t n, i;
  int out = 0;

  if (di->n == 0) return 0;
  rs = tpuci__runes(rel, &n);
  scratch = tpuci__malloc(2 * (di->max_tokens + 1));
  for (i = 0; i < di->n; i++) {
    const tpuci__ignore_pat_t *p = &di->pats[i];
    /* The last match decides: a pattern that would not change the
     * answer need not run. */
    if (p->exception != out) continue;
    if (tpuci__pat_run(p, rs, n, 1, scratch) == 1) out = !p->exception;
  }
  free(scratch);
  free(rs);
  return out;
}

int tpuci__dockerignore_reaches_below(const tpuci__dockerignore_t *di, const char *rel) {
  unsigned char *scratch;
  uint32_t *rs;
  size_t n, i;
  int out = 0;

  if (di->n == 0) return 0;
  rs = tpuci__runes(rel, &n);
  rs[n++] = '/';
  scratch = tpuci__malloc(2 * (di->max_tokens + 1));
  /* An exception that is still live after "rel/" could match a path
   * below rel (or one of its folders). One that matches rel or a folder
   * above it brings back nothing below that a later pattern did not
   * leave out again, or rel would not be left out. */
  for (i = 0; i < di->n && !out; i++)
    if (di->pats[i].exception) out = tpuci__pat_run(&di->pats[i], rs, n, 0, scratch) >= 0;
  free(scratch);
  free(rs);
  return out;
}

void tpuci__dockerignore_free(tpuci__dockerignore_t *di) {
  size_t i;
  for (i = 0; i < di->n; i++) {
    free(di->pats[i].text);
    free(di->pats[i].toks);
    free(di->pats[i].ranges);
  }
  free(di->pats);
  memset(di, 0, sizeof(*di));
}
