/* The `inputs` globs (tree.h, tpuci__glob_match): `*`, `?`, classes,
 * quoting, and `**` as a whole path segment. */
#include <stdlib.h>
#include <string.h>

#include "runtime/tree.h"

/* `[...]` at p (after the '['): whether c is in it; *end past the ']'.
 * -1 when the class is not closed (then '[' is an ordinary character). */
static int tpuci__glob_class(const char *p, char c, const char **end) {
  int neg = 0, in = 0;
  const char *q = p;
  if (*q == '!' || *q == '^') {
    neg = 1;
    q++;
  }
  if (*q == ']') {
    in = c == ']';
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
    if ((unsigned char) c >= lo && (unsigned char) c <= hi) in = 1;
    q++;
  }
  if (*q != ']') return -1;
  *end = q + 1;
  return in != neg;
}

static int tpuci__glob_at(const char *start, const char *p, const char *s, int depth) {
  if (depth > 64) return 0;
  for (;;) {
    if (*p == '\0') return *s == '\0';
    if (p[0] == '*' && p[1] == '*' && (p == start || p[-1] == '/') &&
        (p[2] == '/' || p[2] == '\0')) {
      const char *q = s;
      if (p[2] == '\0') return 1;
      /* Zero or more whole folders. */
      for (;;) {
        if (tpuci__glob_at(start, p + 3, q, depth + 1)) return 1;
        if ((q = strchr(q, '/')) == NULL) return 0;
        q++;
      }
    }
    if (*p == '*') {
      while (*p == '*') p++;
      for (;;) {
        if (tpuci__glob_at(start, p, s, depth + 1)) return 1;
        if (*s == '\0' || *s == '/') return 0;
        s++;
      }
    }
    if (*p == '?') {
      if (*s == '\0' || *s == '/') return 0;
      p++;
      s++;
      continue;
    }
    if (*p == '[') {
      const char *end;
      int in;
      if (*s == '\0' || *s == '/') return 0;
      in = tpuci__glob_class(p + 1, *s, &end);
      if (in == 0) return 0;
      if (in == 1) {
        p = end;
        s++;
        continue;
      }
    }
    if (*p == '\\' && p[1]) p++;
    if (*p != *s) return 0;
    p++;
    s++;
  }
}

int tpuci__glob_match(const char *pattern, const char *path) {
  char *prefix;
  const char *slash;
  int hit;
  if (tpuci__glob_at(pattern, pattern, path, 0)) return 1;
  /* A folder of the path. */
  for (slash = strchr(path, '/'); slash; slash = strchr(slash + 1, '/')) {
    prefix = tpuci__strndup(path, (size_t) (slash - path));
    hit = tpuci__glob_at(pattern, pattern, prefix, 0);
    free(prefix);
    if (hit) return 1;
  }
  return 0;
}
