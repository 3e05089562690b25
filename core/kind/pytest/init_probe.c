/* What `tpuci init` reads of the project's folder besides pytest's
 * configuration (init.h, tpuci__init_probe): a Dockerfile, whether its
 * files name JAX, its layout and the top-level entries that count. */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kind/pytest/init.h"

/* Whether text names JAX: "jax" in any case at the start of a word
 * ("import jax", "jaxlib", "JAX_PLATFORMS"), not inside one ("ajax"). */
static int tpuci__names_jax(const char *text, size_t len) {
  size_t i;
  for (i = 0; i + 3 <= len; i++) {
    char b = i ? text[i - 1] : ' ';
    if ((text[i] | 0x20) != 'j' || (text[i + 1] | 0x20) != 'a' || (text[i + 2] | 0x20) != 'x')
      continue;
    if (!((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '_'))
      return 1;
  }
  return 0;
}

typedef struct {
  const char *dir; /* the project */
  size_t scanned;  /* files read so far */
  char *found;     /* the first that names JAX (relative), or NULL */
} tpuci__scan_t;

/* Reads dir/rel (a regular file of at most 1 MiB) for JAX. */
static void tpuci__scan_file(tpuci__scan_t *sc, const char *rel) {
  char *path, *text = NULL;
  size_t len;
  if (sc->found || sc->scanned >= TPUCI__INIT_MAX_SCAN) return;
  sc->scanned++;
  path = tpuci__printf("%s/%s", sc->dir, rel);
  if (tpuci__read_file_max(path, TPUCI__PYCONF_MAX_BYTES, &text, &len) == 0 &&
      tpuci__names_jax(text, len))
    sc->found = tpuci__strdup(rel);
  free(text);
  free(path);
}

/* The *.py files of dir/rel, and of its folders down to `depth` more
 * levels (hidden ones left out). */
static void tpuci__scan_tree(tpuci__scan_t *sc, const char *rel, int depth) {
  char *path = tpuci__printf("%s/%s", sc->dir, rel);
  DIR *d = opendir(path);
  struct dirent *e;
  free(path);
  if (d == NULL) return;
  while (!sc->found && sc->scanned < TPUCI__INIT_MAX_SCAN && (e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    char *sub;
    struct stat st;
    if (e->d_name[0] == '.') continue;
    sub = tpuci__printf("%s/%s", rel, e->d_name);
    path = tpuci__printf("%s/%s", sc->dir, sub);
    if (lstat(path, &st) == 0) {
      if (S_ISREG(st.st_mode) && n > 3 && strcmp(e->d_name + n - 3, ".py") == 0)
        tpuci__scan_file(sc, sub);
      else if (S_ISDIR(st.st_mode) && depth > 0) tpuci__scan_tree(sc, sub, depth - 1);
    }
    free(path);
    free(sub);
  }
  closedir(d);
}

/* A test path worth looking into: relative, without "..". */
static int tpuci__plain_rel(const char *p) { return *p && *p != '/' && strstr(p, "..") == NULL; }

/* Whether a top-level entry is the project's prose, hidden or built:
 * not counted for the results cache. */
static int tpuci__init_uncounted(const char *name) {
  static const char *const folders[] = {"docs", "doc",         "build",   "dist",
                                        "venv", "__pycache__", "htmlcov", NULL};
  static const char *const prefixes[] = {"README",       "LICENSE",   "LICENCE", "COPYING",
                                         "AUTHORS",      "CHANGELOG", "CHANGES", "NOTICE",
                                         "CONTRIBUTING", NULL};
  size_t k, n = strlen(name);
  if (name[0] == '.') return 1;
  for (k = 0; folders[k]; k++)
    if (strcmp(name, folders[k]) == 0) return 1;
  for (k = 0; prefixes[k]; k++)
    if (strncmp(name, prefixes[k], strlen(prefixes[k])) == 0) return 1;
  if (n > 9 && strcmp(name + n - 9, ".egg-info") == 0) return 1;
  return (n > 3 && strcmp(name + n - 3, ".md") == 0) ||
         (n > 4 && strcmp(name + n - 4, ".rst") == 0);
}

static int tpuci__cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *) a, *(char *const *) b);
}

/* o->src_layout and o->counted from the project's top level. */
static void tpuci__init_layout(const char *dir, tpuci__init_opts_t *o) {
  DIR *d;
  struct dirent *e;
  if ((d = opendir(dir)) == NULL) return;
  while ((e = readdir(d)) != NULL && o->counted.len < 200) {
    if (tpuci__init_uncounted(e->d_name)) continue;
    if (o->spec_name != NULL && strcmp(e->d_name, o->spec_name) == 0) continue;
    tpuci__strv_push(&o->counted, e->d_name);
  }
  closedir(d);
  if (o->counted.len > 1)
    qsort(o->counted.items, o->counted.len, sizeof(*o->counted.items), tpuci__cmp_str);
  {
    char *src = tpuci__printf("%s/src", dir);
    DIR *s = opendir(src);
    while (s != NULL && !o->src_layout && (e = readdir(s)) != NULL) {
      char *init = tpuci__printf("%s/%s/__init__.py", src, e->d_name);
      struct stat st;
      o->src_layout = e->d_name[0] != '.' && stat(init, &st) == 0 && S_ISREG(st.st_mode);
      free(init);
    }
    if (s != NULL) closedir(s);
    free(src);
  }
}

void tpuci__init_probe(const char *dir, const tpuci__pyconf_t *conf, tpuci__init_opts_t *o,
                       char **image_name, char **jax) {
  static const char *const files[] = {"pyproject.toml", "setup.cfg", "setup.py", "conftest.py",
                                      NULL};
  tpuci__scan_t sc = {dir, 0, NULL};
  char real[PATH_MAX], *name, *q;
  const char *base;
  struct stat st;
  DIR *d;
  size_t k;

  for (k = 0; files[k]; k++) tpuci__scan_file(&sc, files[k]);
  if ((d = opendir(dir)) != NULL) {
    struct dirent *e;
    while (!sc.found && sc.scanned < TPUCI__INIT_MAX_SCAN && (e = readdir(d)) != NULL) {
      size_t n = strlen(e->d_name);
      if (strncmp(e->d_name, "requirements", 12) == 0 && n > 16 &&
          strcmp(e->d_name + n - 4, ".txt") == 0)
        tpuci__scan_file(&sc, e->d_name);
    }
    closedir(d);
  }
  for (k = 0; k < conf->testpaths.len; k++)
    if (tpuci__plain_rel(conf->testpaths.items[k]))
      tpuci__scan_tree(&sc, conf->testpaths.items[k], 2);
  if (conf->testpaths.len == 0) {
    tpuci__scan_tree(&sc, "tests", 2);
    tpuci__scan_tree(&sc, "test", 2);
  }
  *jax = sc.found;
  o->jax = sc.found;
  name = tpuci__printf("%s/Dockerfile", dir);
  o->dockerfile = stat(name, &st) == 0 && S_ISREG(st.st_mode);
  free(name);
  base = realpath(dir, real) ? strrchr(real, '/') + 1 : "";
  /* An image name: lower-case letters and digits, each run of anything
   * else one '-' between them ("My Lib.v2" is "my-lib-v2"). */
  name = tpuci__malloc(strlen(base) + 1);
  for (q = name; *base; base++) {
    char c = *base >= 'A' && *base <= 'Z' ? (char) (*base - 'A' + 'a') : *base;
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) *q++ = c;
    else if (q > name && q[-1] != '-') *q++ = '-';
  }
  if (q > name && q[-1] == '-') q--;
  *q = '\0';
  if (*name == '\0') {
    free(name);
    name = tpuci__strdup("project");
  }
  *image_name = name;
  tpuci__init_layout(dir, o);
}
