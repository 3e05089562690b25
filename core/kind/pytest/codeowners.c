/* Reading a CODEOWNERS file and matching paths to it (codeowners.h). */
#include "kind/pytest/codeowners.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/tree.h"

void tpuci__codeowners_free(tpuci__codeowners_t *c) {
  size_t i;
  for (i = 0; i < c->n; i++) {
    free(c->rules[i].glob);
    free(c->rules[i].owners);
  }
  free(c->rules);
  free(c->path);
  free(c->prefix);
  memset(c, 0, sizeof(*c));
}

/* The rule of one line's pattern: anchored or at any depth. */
static void tpuci__owner_rule(tpuci__codeowners_t *c, const char *pat, size_t n, const char *owners,
                              int line) {
  tpuci__owner_rule_t *r;
  char *p = tpuci__strndup(pat, n), *slash;
  int anchored;
  size_t len = strlen(p);
  while (len > 1 && p[len - 1] == '/') p[--len] = '\0'; /* a folder: all below */
  slash = strchr(p, '/');
  anchored = slash != NULL;
  c->rules = tpuci__realloc(c->rules, (c->n + 1) * sizeof(*c->rules));
  r = &c->rules[c->n++];
  r->glob = p[0] == '/' ? tpuci__strdup(p + 1)
            : anchored  ? tpuci__strdup(p)
                        : tpuci__printf("**/%s", p);
  if (r->glob[0] == '\0') {
    free(r->glob);
    r->glob = tpuci__strdup("**");
  }
  len = strlen(r->glob);
  r->shallow = len >= 2 && strcmp(r->glob + len - 2, "/*") == 0 && strstr(r->glob, "**") == NULL;
  r->owners = tpuci__strdup(owners);
  r->line = line;
  free(p);
}

void tpuci__codeowners_parse(const char *text, size_t len, tpuci__codeowners_t *c) {
  const char *p = text, *end = text + len;
  int line = 0;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t) (end - p));
    const char *e = nl ? nl : end, *q = p, *pat;
    tpuci__buf_t owners;
    size_t n;
    line++;
    while (q < e && (*q == ' ' || *q == '\t')) q++;
    if (q < e && *q != '#') {
      pat = q;
      while (q < e && *q != ' ' && *q != '\t' && *q != '\r') q++;
      n = (size_t) (q - pat);
      tpuci__buf_init(&owners);
      while (q < e) {
        const char *o;
        while (q < e && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
        if (q >= e || *q == '#') break;
        o = q;
        while (q < e && *q != ' ' && *q != '\t' && *q != '\r') q++;
        tpuci__buf_addf(&owners, "%s%.*s", owners.len ? " " : "", (int) (q - o), o);
      }
      tpuci__owner_rule(c, pat, n, owners.data ? owners.data : "", line);
      tpuci__buf_free(&owners);
    }
    p = e + 1;
  }
}

int tpuci__codeowners_load(const char *path, tpuci__codeowners_t *c, tpuci__err_t *err) {
  char *text = NULL;
  size_t len = 0;
  int r = tpuci__read_file_max(path, TPUCI__CODEOWNERS_MAX_BYTES, &text, &len);
  memset(c, 0, sizeof(*c));
  if (r != 0) return tpuci__err_set(err, r, "%s: cannot read: %s", path, tpuci_strerror(r));
  tpuci__codeowners_parse(text, len, c);
  free(text);
  c->path = tpuci__strdup(path);
  c->prefix = tpuci__strdup("");
  return 0;
}

static int tpuci__is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int tpuci__codeowners_find(const char *dir, tpuci__codeowners_t *c, tpuci__err_t *err) {
  static const char *const where[] = {".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"};
  char *at = realpath(dir, NULL), *prefix = tpuci__strdup("");
  int r = TPUCI_ENOMATCH;
  memset(c, 0, sizeof(*c));
  while (at != NULL && r == TPUCI_ENOMATCH) {
    char *git = tpuci__printf("%s/.git", at), *slash, *up;
    size_t k;
    struct stat st;
    int top = stat(git, &st) == 0;
    free(git);
    for (k = 0; k < 3 && r == TPUCI_ENOMATCH; k++) {
      char *path = tpuci__printf("%s/%s", at, where[k]);
      if (tpuci__is_file(path)) {
        r = tpuci__codeowners_load(path, c, err);
        if (r == 0) {
          free(c->prefix);
          c->prefix = prefix;
          prefix = NULL;
        }
      }
      free(path);
    }
    slash = strrchr(at, '/');
    if (r != TPUCI_ENOMATCH || top || slash == NULL || slash == at) break;
    up = tpuci__printf("%s/%s", slash + 1, prefix);
    free(prefix);
    prefix = up;
    *slash = '\0';
  }
  free(at);
  free(prefix);
  return r;
}

static size_t tpuci__segments(const char *p) {
  size_t n = 1;
  for (; *p; p++) n += *p == '/';
  return n;
}

const tpuci__owner_rule_t *tpuci__codeowners_match(const tpuci__codeowners_t *c, const char *path) {
  char *full = tpuci__printf("%s%s", c->prefix ? c->prefix : "", path);
  size_t i = c->n;
  const tpuci__owner_rule_t *hit = NULL;
  while (i > 0 && hit == NULL) {
    const tpuci__owner_rule_t *r = &c->rules[--i];
    if (!tpuci__glob_match(r->glob, full)) continue;
    if (r->shallow && tpuci__segments(r->glob) != tpuci__segments(full)) continue;
    hit = r;
  }
  free(full);
  return hit;
}
