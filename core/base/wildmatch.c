/* Glob matching in time linear in the text (wildmatch.h): the pattern
 * becomes a list of tokens, and the text is read once while the set of
 * token positions it could be at moves forward (an NFA simulation), so a
 * pattern of 40 stars costs 40 steps a character, never a backtrack. */
#include "base/wildmatch.h"

#include <stdlib.h>
#include <string.h>

typedef enum {
  TPUCI__WM_CHAR,      /* one given byte */
  TPUCI__WM_ANY,       /* '?' */
  TPUCI__WM_CLASS,     /* "[...]" */
  TPUCI__WM_STAR,      /* '*' (a run of them) */
  TPUCI__WM_FOLDERS,   /* "**" + '/' as a whole segment: zero or more "name/" */
  TPUCI__WM_EVERYTHING /* "**" as the whole last segment: the rest */
} tpuci__wm_kind_t;

typedef struct {
  tpuci__wm_kind_t kind;
  unsigned char c;       /* TPUCI__WM_CHAR */
  unsigned char set[32]; /* TPUCI__WM_CLASS: a bit per byte */
} tpuci__wm_tok_t;

static void tpuci__wm_set(unsigned char *set, unsigned lo, unsigned hi) {
  unsigned b;
  for (b = lo; b <= hi; b++) set[b >> 3] |= (unsigned char) (1u << (b & 7));
}

/* "[...]" at p (after the '['): its bits into t, and the pattern after
 * the ']'; NULL when it is not closed (then '[' is an ordinary byte). */
static const char *tpuci__wm_class(const char *p, tpuci__wm_tok_t *t) {
  int neg = 0, k;
  const char *q = p;
  memset(t->set, 0, sizeof(t->set));
  if (*q == '!' || *q == '^') {
    neg = 1;
    q++;
  }
  if (*q == ']') {
    tpuci__wm_set(t->set, ']', ']');
    q++;
  }
  while (*q && *q != ']') {
    unsigned char lo, hi;
    if (*q == '\\' && q[1]) q++;
    lo = hi = (unsigned char) *q;
    if (q[1] == '-' && q[2] && q[2] != ']') {
      q += 2;
      if (*q == '\\' && q[1]) q++;
      hi = (unsigned char) *q;
    }
    if (lo <= hi) tpuci__wm_set(t->set, lo, hi);
    q++;
  }
  if (*q != ']') return NULL;
  if (neg)
    for (k = 0; k < 32; k++) t->set[k] = (unsigned char) ~t->set[k];
  t->kind = TPUCI__WM_CLASS;
  return q + 1;
}

/* The tokens of `pattern`; *n their number. */
static tpuci__wm_tok_t *tpuci__wm_compile(const char *pattern, int flags, size_t *n) {
  size_t len = strlen(pattern), k = 0;
  tpuci__wm_tok_t *v = tpuci__calloc(len + 1, sizeof(*v));
  const char *p = pattern;
  int path = flags & TPUCI__WM_PATH;
  while (*p) {
    tpuci__wm_tok_t *t = &v[k];
    const char *next;
    if (path && p[0] == '*' && p[1] == '*' && (p == pattern || p[-1] == '/') &&
        (p[2] == '/' || p[2] == '\0')) {
      t->kind = p[2] == '\0' ? TPUCI__WM_EVERYTHING : TPUCI__WM_FOLDERS;
      p += p[2] == '\0' ? 2 : 3;
    } else if (*p == '*') {
      while (*p == '*') p++;
      t->kind = TPUCI__WM_STAR;
    } else if (*p == '?') {
      t->kind = TPUCI__WM_ANY;
      p++;
    } else if (*p == '[' && (next = tpuci__wm_class(p + 1, t)) != NULL) {
      p = next;
    } else {
      if (*p == '\\' && p[1]) p++;
      t->kind = TPUCI__WM_CHAR;
      t->c = (unsigned char) *p++;
    }
    k++;
  }
  *n = k;
  return v;
}

/* The states: position i (before token i; n is the end) in at[i], and,
 * for a TPUCI__WM_FOLDERS token, being inside one of its folders' names
 * in inside[i]. */
typedef struct {
  unsigned char *at, *inside;
} tpuci__wm_states_t;

/* Adds position i and every position reachable from it without reading:
 * past stars and folder runs, which may match nothing. */
static void tpuci__wm_enter(const tpuci__wm_tok_t *v, size_t n, tpuci__wm_states_t *s, size_t i) {
  for (; i <= n && !s->at[i]; i++) {
    s->at[i] = 1;
    if (i == n || (v[i].kind != TPUCI__WM_STAR && v[i].kind != TPUCI__WM_FOLDERS &&
                   v[i].kind != TPUCI__WM_EVERYTHING))
      break;
  }
}

/* One byte: the states after it into `to` (cleared first). */
static int tpuci__wm_step(const tpuci__wm_tok_t *v, size_t n, int path,
                          const tpuci__wm_states_t *from, tpuci__wm_states_t *to, unsigned char c) {
  size_t i;
  int any = 0;
  int sep = path && c == '/';
  memset(to->at, 0, n + 1);
  memset(to->inside, 0, n + 1);
  for (i = 0; i < n; i++) {
    const tpuci__wm_tok_t *t = &v[i];
    if (t->kind == TPUCI__WM_FOLDERS && from->inside[i]) {
      /* Inside a folder's name: it goes on, or ends with its '/'. */
      if (sep) tpuci__wm_enter(v, n, to, i);
      else to->inside[i] = 1;
      any = 1;
    }
    if (!from->at[i]) continue;
    switch (t->kind) {
      case TPUCI__WM_CHAR:
        if (t->c == c) tpuci__wm_enter(v, n, to, i + 1);
        break;
      case TPUCI__WM_ANY:
        if (!sep) tpuci__wm_enter(v, n, to, i + 1);
        break;
      case TPUCI__WM_CLASS:
        if (!sep && (t->set[c >> 3] >> (c & 7)) & 1) tpuci__wm_enter(v, n, to, i + 1);
        break;
      case TPUCI__WM_STAR:
        if (!sep) tpuci__wm_enter(v, n, to, i);
        break;
      case TPUCI__WM_FOLDERS:
        if (sep) tpuci__wm_enter(v, n, to, i);
        else to->inside[i] = 1;
        break;
      case TPUCI__WM_EVERYTHING: tpuci__wm_enter(v, n, to, i); break;
    }
  }
  for (i = 0; i <= n && !any; i++) any = to->at[i] || to->inside[i];
  return any;
}

int tpuci__wildmatch(const char *pattern, const char *text, int flags) {
  size_t n, len = strlen(text), k;
  tpuci__wm_tok_t *v = tpuci__wm_compile(pattern, flags, &n);
  unsigned char *mem = tpuci__calloc(4 * (n + 1), 1);
  tpuci__wm_states_t a = {mem, mem + (n + 1)}, b = {mem + 2 * (n + 1), mem + 3 * (n + 1)}, tmp;
  int path = flags & TPUCI__WM_PATH, hit = 0;

  tpuci__wm_enter(v, n, &a, 0);
  for (k = 0; k < len && !hit; k++) {
    /* A folder of the path that the pattern matches whole. */
    if ((flags & TPUCI__WM_FOLDER) && text[k] == '/' && k > 0 && a.at[n]) hit = 1;
    else if (!tpuci__wm_step(v, n, path, &a, &b, (unsigned char) text[k])) break;
    tmp = a;
    a = b;
    b = tmp;
  }
  if (!hit && k == len) hit = a.at[n];
  free(mem);
  free(v);
  return hit;
}
