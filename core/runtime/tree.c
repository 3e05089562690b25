/* The content key of a folder or a file (tree.h): git's view of a work
 * tree, or every file hashed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <uv.h>

#include "runtime/tree.h"

extern char **environ;

#define TPUCI__TREE_FORMAT "tpuci-tree-1"
/* What one git listing may print: far beyond any checkout. */
#define TPUCI__TREE_LIST_MAX ((size_t) 1 << 30)

/* ------------------------------------------------------------------ */
/* Globs                                                               */

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

/* ------------------------------------------------------------------ */
/* Hashing                                                             */

static void tpuci__hexify(const unsigned char *d, size_t n, char *hex) {
  static const char digits[] = "0123456789abcdef";
  size_t i;
  for (i = 0; i < n; i++) {
    hex[2 * i] = digits[d[i] >> 4];
    hex[2 * i + 1] = digits[d[i] & 15];
  }
  hex[2 * n] = '\0';
}

void tpuci__git_blob_id(const char *data, size_t len, char hex[41]) {
  EVP_MD_CTX *md = EVP_MD_CTX_new();
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned dn = 0;
  char head[64];
  int n = snprintf(head, sizeof(head), "blob %zu", len);
  EVP_DigestInit_ex(md, EVP_sha1(), NULL);
  EVP_DigestUpdate(md, head, (size_t) n + 1);
  EVP_DigestUpdate(md, data, len);
  EVP_DigestFinal_ex(md, d, &dn);
  EVP_MD_CTX_free(md);
  tpuci__hexify(d, 20, hex);
}

/* The blob id of an open regular file of `size` bytes, read in chunks.
 * 0, or a negative code (the file changed size while read: UV_EAGAIN). */
static int tpuci__blob_fd(EVP_MD_CTX *md, int fd, uint64_t size, char hex[41]) {
  char buf[65536], head[64];
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned dn = 0;
  uint64_t got = 0;
  int n = snprintf(head, sizeof(head), "blob %llu", (unsigned long long) size);
  EVP_DigestInit_ex(md, EVP_sha1(), NULL);
  EVP_DigestUpdate(md, head, (size_t) n + 1);
  for (;;) {
    ssize_t r = read(fd, buf, sizeof(buf));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -errno;
    if (r == 0) break;
    got += (uint64_t) r;
    if (got > size) return UV_EAGAIN;
    EVP_DigestUpdate(md, buf, (size_t) r);
  }
  if (got != size) return UV_EAGAIN;
  EVP_DigestFinal_ex(md, d, &dn);
  tpuci__hexify(d, 20, hex);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Entries                                                             */

typedef struct {
  char *path;       /* relative to the root */
  char mode[8];     /* git's: 100644, 100755, 120000, 160000, 040000 */
  char *id;         /* hex */
  int stale;        /* git's id may not be the file's: look at the file */
} tpuci__tentry_t;

typedef struct {
  const char *root;
  const tpuci__tree_opts_t *o;
  char *glob_prefix;        /* the root relative to glob_base, "" or "x/" */
  int glob_outside;         /* the root is not under glob_base */
  tpuci__tentry_t *v;
  size_t len, cap;
  size_t hashed;
  uint64_t bytes;
  EVP_MD_CTX *md;
  tpuci__err_t *err;
} tpuci__tree_t;

static void tpuci__tree_push(tpuci__tree_t *t, const char *path, size_t plen,
                             const char *mode, const char *id, int stale) {
  tpuci__tentry_t *e;
  if (t->len == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 256;
    t->v = tpuci__realloc(t->v, t->cap * sizeof(*t->v));
  }
  e = &t->v[t->len++];
  e->path = tpuci__strndup(path, plen);
  snprintf(e->mode, sizeof(e->mode), "%s", mode);
  e->id = id ? tpuci__strdup(id) : NULL;
  e->stale = stale;
}

static int tpuci__cmp_entry(const void *a, const void *b) {
  return strcmp(((const tpuci__tentry_t *) a)->path, ((const tpuci__tentry_t *) b)->path);
}

/* Folders whose files never count. */
static int tpuci__skipped_name(const char *name, size_t n) {
  return (n == 4 && memcmp(name, ".git", 4) == 0) ||
         (n == 11 && memcmp(name, "__pycache__", 11) == 0) ||
         (n == 13 && memcmp(name, ".pytest_cache", 13) == 0);
}

/* Whether the relative path `rel` counts: not under an excluded path, no
 * skipped folder in it, and matching a glob when there are globs. */
static int tpuci__counts(tpuci__tree_t *t, const char *rel, int is_dir) {
  const tpuci__tree_opts_t *o = t->o;
  const char *c = rel, *slash;
  size_t i, rl = strlen(t->root);
  for (;;) {
    slash = strchr(c, '/');
    if (tpuci__skipped_name(c, slash ? (size_t) (slash - c) : strlen(c))) return 0;
    if (slash == NULL) break;
    c = slash + 1;
  }
  for (i = 0; o && i < o->nexclude; i++) {
    const char *x = o->exclude[i];
    size_t xl = strlen(x), k = strlen(rel);
    /* x is root/rel or a folder of it. */
    if (xl > rl && strncmp(x, t->root, rl) == 0 && x[rl] == '/') {
      const char *xr = x + rl + 1;
      size_t xrl = strlen(xr);
      if (xrl <= k && strncmp(rel, xr, xrl) == 0 && (rel[xrl] == '\0' || rel[xrl] == '/'))
        return 0;
    }
  }
  if (is_dir || o == NULL || o->nglobs == 0) return 1;
  {
    char *g = t->glob_outside ? NULL : tpuci__printf("%s%s", t->glob_prefix, rel);
    int any = 0;
    for (i = 0; g && i < o->nglobs; i++)
      if (tpuci__glob_match(o->globs[i], g)) {
        any = 1;
        if (o->glob_hits) o->glob_hits[i]++;
      }
    free(g);
    return any;
  }
}

/* The file root/rel as an entry's mode and id: 0, 1 when it is gone (or
 * not a file git would keep), or a negative code with err. */
static int tpuci__look(tpuci__tree_t *t, const char *rel, char mode[8], char **id) {
  char *abs = tpuci__printf("%s/%s", t->root, rel), hex[41];
  struct stat st;
  int r = 0;
  *id = NULL;
  if (lstat(abs, &st) != 0) {
    r = errno == ENOENT || errno == ENOTDIR ? 1 : -errno;
  } else if (S_ISLNK(st.st_mode)) {
    char target[4096];
    ssize_t n = readlink(abs, target, sizeof(target));
    if (n < 0) {
      r = -errno;
    } else {
      tpuci__git_blob_id(target, (size_t) n, hex);
      snprintf(mode, 8, "120000");
      *id = tpuci__strdup(hex);
    }
  } else if (S_ISREG(st.st_mode)) {
    int fd = open(abs, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), tries;
    if (fd < 0) {
      r = -errno;
    } else {
      /* A file written while it is read: read it again. */
      for (tries = 0; tries < 3; tries++) {
        if (tries > 0 && (fstat(fd, &st) != 0 || lseek(fd, 0, SEEK_SET) != 0)) break;
        if ((r = tpuci__blob_fd(t->md, fd, (uint64_t) st.st_size, hex)) != UV_EAGAIN) break;
      }
      close(fd);
      if (r == 0) {
        snprintf(mode, 8, (st.st_mode & S_IXUSR) ? "100755" : "100644");
        *id = tpuci__strdup(hex);
        t->hashed++;
        t->bytes += (uint64_t) st.st_size;
      }
    }
  } else {
    r = 1;  /* a folder now, a FIFO, a socket: git keeps none of them */
  }
  if (r < 0)
    tpuci__err_set(t->err, r, "%s: cannot read it: %s", abs, tpuci__strerror(r));
  free(abs);
  return r;
}

/* ------------------------------------------------------------------ */
/* git                                                                 */

/* Runs git with `args` in `dir`, its standard output into out. Returns
 * git's exit status (0 ok), or a negative code when it could not run. */
static int tpuci__git(const char *dir, const char *const *args, tpuci__buf_t *out) {
  const char *argv[16];
  posix_spawn_file_actions_t fa;
  int fds[2], status = 0, r;
  size_t n = 0, i;
  pid_t pid;
  argv[n++] = "git";
  argv[n++] = "--no-optional-locks";
  argv[n++] = "-C";
  argv[n++] = dir;
  for (i = 0; args[i] && n < 15; i++) argv[n++] = args[i];
  argv[n] = NULL;
  if (pipe(fds) != 0) return -errno;
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  r = posix_spawnp(&pid, "git", &fa, NULL, (char *const *) argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (r != 0) {
    close(fds[0]);
    return -r;
  }
  for (;;) {
    char buf[65536];
    ssize_t got = read(fds[0], buf, sizeof(buf));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (out->len + (size_t) got > TPUCI__TREE_LIST_MAX) {
      kill(pid, SIGKILL);
      break;
    }
    tpuci__buf_add(out, buf, (size_t) got);
  }
  close(fds[0]);
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -errno;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int tpuci__has_path(const tpuci__tree_t *t, size_t n, const char *path) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strcmp(t->v[mid].path, path);
    if (c == 0) return (int) mid;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

/* The key of a folder inside, for a submodule or a nested repository. */
static char *tpuci__nested(tpuci__tree_t *t, const char *rel, const char *commit) {
  tpuci__tree_opts_t o;
  tpuci__tree_key_t k;
  tpuci__err_t e = {0, NULL};
  char *abs = tpuci__printf("%s/%s", t->root, rel), *id;
  memset(&o, 0, sizeof(o));
  if (t->o) {
    o.exclude = t->o->exclude;
    o.nexclude = t->o->nexclude;
    o.max_files = t->o->max_files;
    o.max_bytes = t->o->max_bytes;
  }
  if (tpuci__tree_key(abs, &o, &k, &e) == 0)
    id = tpuci__printf("%s%s%s", commit ? commit : "", commit ? ":" : "", k.hex);
  else
    id = tpuci__printf("%s%s%s", commit ? commit : "", commit ? ":" : "", "unreadable");
  tpuci__err_clear(&e);
  free(abs);
  return id;
}

/* Git's view: 1 when git does not know the folder (the caller walks it),
 * 0, or a negative code with err. */
static int tpuci__tree_git(tpuci__tree_t *t) {
  /* One listing: the index (-s, tagged by -v), what differs from it (-m:
   * tag C) and the untracked files that are not ignored (-o: tag ?). */
  static const char *const args[] = {"ls-files", "-z", "-s", "-v", "-m", "-o",
                                     "--exclude-standard", NULL};
  tpuci__buf_t out;
  tpuci__strv_t changed = {0}, others = {0};
  size_t i, nindex, w;
  const char *p, *end;
  int r;

  tpuci__buf_init(&out);
  if (tpuci__git(t->root, args, &out) != 0) {
    tpuci__buf_free(&out);
    return 1;
  }
  /* "T MODE ID STAGE\tPATH\0" (by path), "C ..." again for a changed
   * one, "? PATH\0" for an untracked one. */
  for (p = out.data, end = out.data + out.len; p && p < end; p += strlen(p) + 1) {
    const char *tab = strchr(p, '\t'), *sp1, *sp2;
    if (p[0] == '\0' || p[1] != ' ') continue;
    if (p[0] == '?') {
      tpuci__strv_push(&others, p + 2);
      continue;
    }
    if (tab == NULL) continue;
    if (p[0] == 'C') {
      tpuci__strv_push(&changed, tab + 1);
      continue;
    }
    sp1 = strchr(p + 2, ' ');
    sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (sp2 == NULL || sp2 > tab || sp1 - (p + 2) >= 8) continue;
    if (!tpuci__counts(t, tab + 1, 0)) continue;
    {
      char mode[8], *id = tpuci__strndup(sp1 + 1, (size_t) (sp2 - sp1 - 1));
      memcpy(mode, p + 2, (size_t) (sp1 - (p + 2)));
      mode[sp1 - (p + 2)] = '\0';
      /* H: as the index says; anything else (assume-unchanged,
       * skip-worktree, unmerged): the file says. */
      tpuci__tree_push(t, tab + 1, strlen(tab + 1), mode, id, p[0] != 'H');
      free(id);
    }
  }
  tpuci__buf_free(&out);
  nindex = t->len;
  if (nindex == 0 && changed.len == 0 && others.len == 0) {
    /* Nothing git keeps or sees (an ignored folder): walk it. */
    tpuci__strv_free(&changed);
    tpuci__strv_free(&others);
    return 1;
  }
  for (i = 0; i < changed.len; i++) {
    /* Modified, or deleted; every stage of it. */
    const char *path = changed.items[i];
    int at = tpuci__has_path(t, nindex, path);
    if (at < 0) continue;  /* left out */
    while (at > 0 && strcmp(t->v[at - 1].path, path) == 0) at--;
    for (; (size_t) at < nindex && strcmp(t->v[at].path, path) == 0; at++) t->v[at].stale = 1;
  }
  for (i = 0; i < others.len; i++) {
    const char *path = others.items[i];
    size_t len = strlen(path);
    if (len > 0 && path[len - 1] == '/') {
      /* A repository of its own inside (not a submodule). */
      char *rel = tpuci__strndup(path, len - 1), *id;
      if (tpuci__counts(t, rel, 1)) {
        id = tpuci__nested(t, rel, NULL);
        tpuci__tree_push(t, rel, len - 1, "040000", id, 0);
        free(id);
      }
      free(rel);
    } else if (tpuci__counts(t, path, 0)) {
      tpuci__tree_push(t, path, len, "100644", NULL, 1);  /* untracked */
    }
  }
  tpuci__strv_free(&changed);
  tpuci__strv_free(&others);

  r = 0;
  for (i = 0; i < t->len && r >= 0; i++) {
    tpuci__tentry_t *e = &t->v[i];
    if (strcmp(e->mode, "160000") == 0) {
      /* A submodule: its commit and its own work tree. */
      char *id = tpuci__nested(t, e->path, e->id);
      free(e->id);
      e->id = id;
      e->stale = 0;
    } else if (e->stale) {
      char *id;
      r = tpuci__look(t, e->path, e->mode, &id);
      free(e->id);
      e->id = r == 0 ? id : NULL;
    }
  }
  if (r < 0) return r;
  /* Gone files out; stages of one path as one entry. */
  qsort(t->v, t->len, sizeof(*t->v), tpuci__cmp_entry);
  for (i = 0, w = 0; i < t->len; i++) {
    if (t->v[i].id == NULL || (w > 0 && strcmp(t->v[w - 1].path, t->v[i].path) == 0)) {
      free(t->v[i].path);
      free(t->v[i].id);
      continue;
    }
    t->v[w++] = t->v[i];
  }
  t->len = w;
  return 0;
}

/* ------------------------------------------------------------------ */
/* Every file                                                          */

static int tpuci__walk(tpuci__tree_t *t, const char *rel) {
  char *abs = *rel ? tpuci__printf("%s/%s", t->root, rel) : tpuci__strdup(t->root);
  DIR *d = opendir(abs);
  struct dirent *de;
  size_t max_files = t->o && t->o->max_files ? t->o->max_files : TPUCI__TREE_MAX_FILES;
  uint64_t max_bytes = t->o && t->o->max_bytes ? t->o->max_bytes : TPUCI__TREE_MAX_BYTES;
  int r = 0;
  if (d == NULL) {
    r = -errno;
    tpuci__err_set(t->err, r, "%s: cannot read the folder: %s", abs, tpuci__strerror(r));
    free(abs);
    return r;
  }
  while (r == 0 && (de = readdir(d)) != NULL) {
    char *sub, *id, mode[8];
    struct stat st;
    int k;
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    sub = *rel ? tpuci__printf("%s/%s", rel, de->d_name) : tpuci__strdup(de->d_name);
    {
      char *full = tpuci__printf("%s/%s", abs, de->d_name);
      k = lstat(full, &st);
      free(full);
    }
    if (k != 0) {
      free(sub);
      continue;  /* gone meanwhile */
    }
    if (S_ISDIR(st.st_mode)) {
      if (tpuci__counts(t, sub, 1)) r = tpuci__walk(t, sub);
    } else if ((S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) && tpuci__counts(t, sub, 0)) {
      if (t->len + 1 > max_files) {
        r = tpuci__err_set(t->err, UV_E2BIG, "%s: more than %zu files outside git", t->root,
                           max_files);
      } else if ((k = tpuci__look(t, sub, mode, &id)) == 0) {
        tpuci__tree_push(t, sub, strlen(sub), mode, id, 0);
        free(id);
        if (t->bytes > max_bytes)
          r = tpuci__err_set(t->err, UV_E2BIG, "%s: more than %llu bytes of files outside git",
                             t->root, (unsigned long long) max_bytes);
      } else if (k < 0) {
        r = k;
      }
    }
    free(sub);
  }
  closedir(d);
  free(abs);
  return r;
}

/* ------------------------------------------------------------------ */
/* The key                                                             */

/* `path` relative to the folder `base` (both absolute, normalised):
 * "" when equal, "x/y/" under it; NULL when outside. */
static char *tpuci__under(const char *path, const char *base) {
  size_t bl = strlen(base);
  while (bl > 1 && base[bl - 1] == '/') bl--;
  if (strcmp(base, "/") == 0) return tpuci__printf("%s/", path + 1);
  if (strncmp(path, base, bl) != 0) return NULL;
  if (path[bl] == '\0') return tpuci__strdup("");
  if (path[bl] != '/') return NULL;
  return tpuci__printf("%s/", path + bl + 1);
}

int tpuci__tree_key(const char *path, const tpuci__tree_opts_t *opts,
                    tpuci__tree_key_t *out, tpuci__err_t *err) {
  tpuci__tree_t t;
  struct stat st;
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned dn = 0;
  EVP_MD_CTX *sum;
  size_t i;
  int r;

  memset(out, 0, sizeof(*out));
  memset(&t, 0, sizeof(t));
  if (stat(path, &st) != 0) {
    r = -errno;
    return tpuci__err_set(err, r, "%s: %s", path,
                          r == UV_ENOENT ? "no such file or folder" : tpuci__strerror(r));
  }
  t.root = path;
  t.o = opts;
  t.err = err;
  t.md = EVP_MD_CTX_new();
  if (opts && opts->nglobs > 0) {
    t.glob_prefix = tpuci__under(path, opts->glob_base ? opts->glob_base : "/");
    t.glob_outside = t.glob_prefix == NULL;
    if (opts->glob_hits) memset(opts->glob_hits, 0, opts->nglobs * sizeof(size_t));
  }
  if (S_ISREG(st.st_mode)) {
    /* One file: its content, under its folder's rules. */
    const char *slash = strrchr(path, '/');
    char *dir = slash && slash != path ? tpuci__strndup(path, (size_t) (slash - path))
                                       : tpuci__strdup("/"), *id = NULL, mode[8];
    out->how = "file";
    t.root = dir;
    if (opts && opts->nglobs > 0) {
      free(t.glob_prefix);
      t.glob_prefix = tpuci__under(dir, opts->glob_base ? opts->glob_base : "/");
      t.glob_outside = t.glob_prefix == NULL;
    }
    r = 0;
    if (slash && tpuci__counts(&t, slash + 1, 0)) {
      r = tpuci__look(&t, slash + 1, mode, &id);
      if (r == 0) tpuci__tree_push(&t, "", 0, mode, id, 0);
      else if (r == 1) r = tpuci__err_set(err, UV_ENOENT, "%s: gone while it was read", path);
    }
    free(id);
    t.root = path;
    free(dir);
  } else if (S_ISDIR(st.st_mode)) {
    r = tpuci__tree_git(&t);
    out->how = "git";
    if (r == 1) {
      for (i = 0; i < t.len; i++) {
        free(t.v[i].path);
        free(t.v[i].id);
      }
      t.len = 0;
      out->how = "files";
      r = tpuci__walk(&t, "");
      if (r == 0) qsort(t.v, t.len, sizeof(*t.v), tpuci__cmp_entry);
    }
  } else {
    r = tpuci__err_set(err, UV_EFTYPE, "%s: %s, not a file or a folder", path,
                       tpuci__file_kind(st.st_mode));
  }

  if (r == 0) {
    sum = EVP_MD_CTX_new();
    EVP_DigestInit_ex(sum, EVP_sha256(), NULL);
    EVP_DigestUpdate(sum, TPUCI__TREE_FORMAT "\n", sizeof(TPUCI__TREE_FORMAT));
    EVP_DigestUpdate(sum, out->how, strlen(out->how) + 1);
    for (i = 0; i < t.len; i++) {
      EVP_DigestUpdate(sum, t.v[i].path, strlen(t.v[i].path) + 1);
      EVP_DigestUpdate(sum, t.v[i].mode, strlen(t.v[i].mode) + 1);
      EVP_DigestUpdate(sum, t.v[i].id, strlen(t.v[i].id));
      EVP_DigestUpdate(sum, "\n", 1);
    }
    EVP_DigestFinal_ex(sum, d, &dn);
    EVP_MD_CTX_free(sum);
    tpuci__hexify(d, 32, out->hex);
    out->files = t.len;
    out->hashed = t.hashed;
  }
  for (i = 0; i < t.len; i++) {
    free(t.v[i].path);
    free(t.v[i].id);
  }
  free(t.v);
  free(t.glob_prefix);
  EVP_MD_CTX_free(t.md);
  return r;
}
