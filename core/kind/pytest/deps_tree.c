/* The project tree as a selection sees it (deps_tree.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <uv.h>

#include "base/wildmatch.h"
#include "base/lock.h"
#include "kind/pytest/deps_tree.h"
#include "runtime/tree.h"

void tpuci__dtree_init(tpuci__dtree_t *t) {
  memset(t, 0, sizeof(*t));
  tpuci__idmap_init(&t->map);
}

void tpuci__dtree_free(tpuci__dtree_t *t) {
  size_t i;
  for (i = 0; i < t->n; i++) free(t->files[i].path);
  free(t->files);
  tpuci__idmap_free(&t->map);
  tpuci__dtree_init(t);
}

size_t tpuci__dtree_add(tpuci__dtree_t *t, const tpuci__dtree_file_t *f) {
  tpuci__dtree_file_t *copy;
  if (t->n == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 256;
    t->files = tpuci__realloc(t->files, t->cap * sizeof(*t->files));
  }
  copy = &t->files[t->n];
  *copy = *f;
  copy->path = tpuci__strdup(f->path);
  tpuci__idmap_put(&t->map, copy->path, t->n);
  return t->n++;
}

static int tpuci__dtree_cmp(const void *a, const void *b) {
  return strcmp(((const tpuci__dtree_file_t *) a)->path, ((const tpuci__dtree_file_t *) b)->path);
}

void tpuci__dtree_sort(tpuci__dtree_t *t) {
  size_t i;
  if (t->n > 1) qsort(t->files, t->n, sizeof(*t->files), tpuci__dtree_cmp);
  tpuci__idmap_free(&t->map);
  tpuci__idmap_init(&t->map);
  for (i = 0; i < t->n; i++) tpuci__idmap_put(&t->map, t->files[i].path, i);
}

const tpuci__dtree_file_t *tpuci__dtree_get(const tpuci__dtree_t *t, const char *path) {
  size_t k = tpuci__idmap_get(&t->map, path);
  return k == TPUCI__IDMAP_NONE ? NULL : &t->files[k];
}

/* Folders tools write beside the sources. */
static int tpuci__dtree_skip_dir(const char *name) {
  static const char *const dirs[] = {
      ".git",        ".hg",         ".svn", ".tpuci", "__pycache__", ".pytest_cache", ".mypy_cache",
      ".ruff_cache", ".hypothesis", ".tox", ".nox",   ".venv",       "node_modules",  NULL};
  size_t i;
  for (i = 0; dirs[i] != NULL; i++)
    if (strcmp(name, dirs[i]) == 0) return 1;
  return 0;
}

static int tpuci__dtree_skip_file(const char *name) {
  size_t n = strlen(name);
  return n > 4 && (strcmp(name + n - 4, ".pyc") == 0 || strcmp(name + n - 4, ".pyo") == 0);
}

int tpuci__dtree_ignored(const char *rel, const tpuci__strv_t *ignore) {
  const char *p = rel, *slash;
  size_t g;
  for (; (slash = strchr(p, '/')) != NULL; p = slash + 1) {
    char *seg = tpuci__strndup(p, (size_t) (slash - p));
    int skip = tpuci__dtree_skip_dir(seg);
    free(seg);
    if (skip) return 1;
  }
  if (tpuci__dtree_skip_file(p) || tpuci__dtree_skip_dir(p)) return 1;
  for (g = 0; ignore != NULL && g < ignore->len; g++)
    if (tpuci__glob_match(ignore->items[g], rel)) return 1;
  return 0;
}

static int64_t tpuci__ns(struct timespec ts) {
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* SHA-256 of the regular file `fd`, streamed: 0, or an errno code. */
static int tpuci__dtree_hash_fd(int fd, char hex[65]) {
  static const char digits[] = "0123456789abcdef";
  unsigned char buf[65536], d[EVP_MAX_MD_SIZE];
  unsigned int dn = 0, i;
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  ssize_t r;
  int rc = 0;
  if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
    EVP_MD_CTX_free(ctx);
    return ENOMEM;
  }
  while ((r = read(fd, buf, sizeof(buf))) != 0) {
    if (r < 0) {
      if (errno == EINTR) continue;
      rc = errno;
      break;
    }
    EVP_DigestUpdate(ctx, buf, (size_t) r);
  }
  if (rc == 0) EVP_DigestFinal_ex(ctx, d, &dn);
  EVP_MD_CTX_free(ctx);
  for (i = 0; i < dn && rc == 0; i++) {
    hex[2 * i] = digits[d[i] >> 4];
    hex[2 * i + 1] = digits[d[i] & 15];
  }
  hex[2 * dn] = '\0';
  return rc;
}

/* The id of what `path` (lstat'ed as *lst) holds, into id; *st is what it
 * leads to. 0, or UV_ENOENT. */
static int tpuci__dtree_id(const char *path, const struct stat *lst, struct stat *st, char id[96]) {
  char target[4096], hex[65];
  int fd;
  if (S_ISLNK(lst->st_mode)) {
    ssize_t n = readlink(path, target, sizeof(target));
    if (n < 0) return UV_ENOENT;
    if (stat(path, st) != 0 || !S_ISREG(st->st_mode)) {
      /* A folder, or nothing: the link's text is what counts. */
      tpuci__sha256_hex(target, (size_t) n, hex);
      snprintf(id, 96, "link:%.64s", hex);
      *st = *lst;
      return 0;
    }
  } else {
    *st = *lst;
  }
  if (st->st_size > TPUCI__DTREE_HASH_MAX) {
    snprintf(id, 96, "big:%lld:%lld", (long long) st->st_size, (long long) tpuci__ns(st->st_mtim));
    return 0;
  }
  fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return errno == ENOENT ? UV_ENOENT : (snprintf(id, 96, "%s", TPUCI__DTREE_UNKNOWN), 0);
  if (tpuci__dtree_hash_fd(fd, hex) != 0) snprintf(id, 96, "%s", TPUCI__DTREE_UNKNOWN);
  else snprintf(id, 96, "%s", hex);
  close(fd);
  return 0;
}

int tpuci__dtree_file_id(const char *path, char id[96]) {
  struct stat lst, st;
  if (lstat(path, &lst) != 0) return UV_ENOENT;
  if (!S_ISREG(lst.st_mode) && !S_ISLNK(lst.st_mode)) return UV_ENOENT;
  return tpuci__dtree_id(path, &lst, &st, id);
}

static int tpuci__dtree_excluded(const char *abs, const tpuci__dtree_opts_t *o) {
  size_t i;
  for (i = 0; i < o->nexclude; i++)
    if (o->exclude[i] != NULL && strcmp(abs, o->exclude[i]) == 0) return 1;
  return 0;
}

/* A folder a tool keeps beside the sources under any name: a virtual
 * environment (it holds pyvenv.cfg) or a state folder of tpuci's (it holds
 * state.lock: another run's --state-dir, a copy of one). */
static int tpuci__dtree_tool_dir(const char *abs) {
  static const char *const marks[] = {"pyvenv.cfg", TPUCI__STATE_LOCK_FILE};
  struct stat st;
  size_t i;
  for (i = 0; i < 2; i++) {
    char *mark = tpuci__printf("%s/%s", abs, marks[i]);
    int is = stat(mark, &st) == 0;
    free(mark);
    if (is) return 1;
  }
  return 0;
}

/* One file of the walk. 0, or -1 when over the bound. */
static int tpuci__dtree_one(const char *abs, const char *rel, const struct stat *lst,
                            const tpuci__dtree_opts_t *o, tpuci__dtree_t *out) {
  const tpuci__dtree_file_t *old = o->prev ? tpuci__dtree_get(o->prev, rel) : NULL;
  tpuci__dtree_file_t f = {.path = (char *) rel,
                           .size = (int64_t) lst->st_size,
                           .mtime_ns = tpuci__ns(lst->st_mtim),
                           .ctime_ns = tpuci__ns(lst->st_ctim),
                           .ino = (uint64_t) lst->st_ino};
  struct stat st;
  if (out->n >= TPUCI__DTREE_MAX_FILES) return -1;
  /* Unchanged since the last snapshot: its id without reading it. */
  if (old != NULL && !S_ISLNK(lst->st_mode) && old->size == f.size && old->mtime_ns == f.mtime_ns &&
      old->ctime_ns == f.ctime_ns && old->ino == f.ino &&
      strcmp(old->id, TPUCI__DTREE_UNKNOWN) != 0) {
    tpuci__dtree_add(out, old);
    return 0;
  }
  if (tpuci__dtree_id(abs, lst, &st, f.id) != 0) return 0;
  out->hashed++;
  tpuci__dtree_add(out, &f);
  return 0;
}

int tpuci__dtree_walk(const char *root, const tpuci__dtree_opts_t *o, tpuci__dtree_t *out,
                      tpuci__err_t *err) {
  tpuci__strv_t todo = {0}; /* folders relative to the root; "" the root */
  struct stat st;
  int rc = 0;
  tpuci__dtree_init(out);
  if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode))
    return tpuci__err_set(err, UV_ENOTDIR, "%s: not a folder", root);
  tpuci__strv_push(&todo, "");
  while (todo.len > 0 && rc == 0) {
    char *dir = todo.items[--todo.len];
    char *abs = *dir ? tpuci__printf("%s/%s", root, dir) : tpuci__strdup(root);
    DIR *d = opendir(abs);
    struct dirent *e;
    while (d != NULL && rc == 0 && (e = readdir(d)) != NULL) {
      char *rel, *path;
      struct stat lst;
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      rel = *dir ? tpuci__printf("%s/%s", dir, e->d_name) : tpuci__strdup(e->d_name);
      path = tpuci__printf("%s/%s", abs, e->d_name);
      if (lstat(path, &lst) == 0 && !tpuci__dtree_excluded(path, o)) {
        if (S_ISDIR(lst.st_mode)) {
          if (!tpuci__dtree_skip_dir(e->d_name) && !tpuci__dtree_tool_dir(path) &&
              !tpuci__dtree_ignored(rel, o->ignore))
            tpuci__strv_push(&todo, rel);
        } else if ((S_ISREG(lst.st_mode) || S_ISLNK(lst.st_mode)) &&
                   !tpuci__dtree_skip_file(e->d_name) && !tpuci__dtree_ignored(rel, o->ignore) &&
                   tpuci__dtree_one(path, rel, &lst, o, out) != 0) {
          rc =
              tpuci__err_set(err, UV_E2BIG, "%s: more than %d files", root, TPUCI__DTREE_MAX_FILES);
        }
      }
      free(rel);
      free(path);
    }
    if (d != NULL) closedir(d);
    free(abs);
    free(dir);
  }
  tpuci__strv_free(&todo);
  if (rc != 0) {
    tpuci__dtree_free(out);
    return rc;
  }
  tpuci__dtree_sort(out);
  return 0;
}

static int tpuci__strp_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *) a, *(char *const *) b);
}

int tpuci__dtree_test_file(const char *path, const tpuci__strv_t *python_files) {
  static const char *const dflt[] = {"test_*.py", "*_test.py"};
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  size_t n = strlen(path), i;
  if (n < 3 || strcmp(path + n - 3, ".py") != 0 || strcmp(base, "conftest.py") == 0) return 0;
  if (python_files == NULL || python_files->len == 0) {
    for (i = 0; i < 2; i++)
      if (tpuci__wildmatch(dflt[i], base, 0)) return 1;
    return 0;
  }
  for (i = 0; i < python_files->len; i++) {
    const char *p = python_files->items[i];
    if (tpuci__wildmatch(p, strchr(p, '/') ? path : base, 0)) return 1;
  }
  return 0;
}

/* tpuci__dtree_tool_dir() of `rel` below `root`. */
static int tpuci__dtree_tool_dir_at(const char *root, const char *rel) {
  char *abs = tpuci__printf("%s/%s", root, rel);
  int is = tpuci__dtree_tool_dir(abs);
  free(abs);
  return is;
}

void tpuci__dtree_listing(const char *root, const char *rel, const tpuci__strv_t *ignore,
                          const tpuci__strv_t *python_files, char out[130]) {
  tpuci__strv_t names = {0};
  tpuci__buf_t all, testless;
  char *abs = strcmp(rel, ".") == 0 ? tpuci__strdup(root) : tpuci__printf("%s/%s", root, rel);
  char h1[65], h2[65];
  DIR *d = opendir(abs);
  struct dirent *e;
  size_t i;
  free(abs);
  if (d == NULL) {
    snprintf(out, 130, "- -");
    return;
  }
  while ((e = readdir(d)) != NULL) {
    char *path;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    path =
        strcmp(rel, ".") == 0 ? tpuci__strdup(e->d_name) : tpuci__printf("%s/%s", rel, e->d_name);
    if (!tpuci__dtree_skip_dir(e->d_name) && !tpuci__dtree_ignored(path, ignore) &&
        !tpuci__dtree_tool_dir_at(root, path))
      tpuci__strv_take(&names, path);
    else free(path);
  }
  closedir(d);
  if (names.len > 1) qsort(names.items, names.len, sizeof(*names.items), tpuci__strp_cmp);
  tpuci__buf_init(&all);
  tpuci__buf_init(&testless);
  for (i = 0; i < names.len; i++) {
    tpuci__buf_add(&all, names.items[i], strlen(names.items[i]) + 1);
    if (!tpuci__dtree_test_file(names.items[i], python_files))
      tpuci__buf_add(&testless, names.items[i], strlen(names.items[i]) + 1);
  }
  tpuci__sha256_hex(all.data ? all.data : "", all.len, h1);
  tpuci__sha256_hex(testless.data ? testless.data : "", testless.len, h2);
  snprintf(out, 130, "%s %s", h1, h2);
  tpuci__buf_free(&all);
  tpuci__buf_free(&testless);
  tpuci__strv_free(&names);
}

char tpuci__dtree_probe(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return '-';
  if (S_ISLNK(st.st_mode) && stat(path, &st) != 0) return 'l';
  return S_ISREG(st.st_mode) ? 'f' : S_ISDIR(st.st_mode) ? 'd' : 'o';
}
