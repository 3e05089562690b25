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
/* Hashing                                                             */

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
  tpuci__hex(d, 20, hex);
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
  tpuci__hex(d, 20, hex);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Entries                                                             */

typedef struct {
  char *path;   /* relative to the root */
  char mode[8]; /* git's: 100644, 100755, 120000, 160000, 040000 */
  char *id;     /* hex */
  int stale;    /* git's id may not be the file's: look at the file */
} tpuci__tentry_t;

typedef struct {
  const char *root;
  const tpuci__tree_opts_t *o;
  char *glob_prefix; /* the root relative to glob_base: "", "x/", "../x/" */
  size_t kept;       /* entries git keeps that are not left out, globs aside */
  size_t ignored;    /* entries git ignores that did not count */
  tpuci__tentry_t *v;
  size_t len, cap;
  size_t hashed;
  uint64_t bytes;
  EVP_MD_CTX *md;
  tpuci__err_t *err;
} tpuci__tree_t;

static void tpuci__tree_push(tpuci__tree_t *t, const char *path, size_t plen, const char *mode,
                             const char *id, int stale) {
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

/* Whether the relative path `rel` is kept: not under an excluded path and
 * no skipped folder in it (the globs aside). */
static int tpuci__kept(const tpuci__tree_t *t, const char *rel) {
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
      if (xrl <= k && strncmp(rel, xr, xrl) == 0 && (rel[xrl] == '\0' || rel[xrl] == '/')) return 0;
    }
  }
  return 1;
}

/* Whether the relative path `rel` counts: kept, and matching a glob when
 * there are globs (a folder is walked whatever the globs say). */
static int tpuci__counts(tpuci__tree_t *t, const char *rel, int is_dir) {
  const tpuci__tree_opts_t *o = t->o;
  size_t i;
  if (!tpuci__kept(t, rel)) return 0;
  if (is_dir || o == NULL || o->nglobs == 0) return 1;
  {
    char *g = tpuci__printf("%s%s", t->glob_prefix, rel);
    int any = 0;
    for (i = 0; i < o->nglobs; i++)
      if (tpuci__glob_match(o->globs[i], g)) {
        any = 1;
        if (o->glob_hits) o->glob_hits[i]++;
      }
    free(g);
    return any;
  }
}

/* The blob id of the regular file at `abs` (followed when it is a link
 * and `follow`), into hex; its mode bits into *st. 0, 1 when it is gone
 * or not a regular file, or a negative code. */
static int tpuci__blob_path(tpuci__tree_t *t, const char *abs, int follow, struct stat *st,
                            char hex[41]) {
  int fd = open(abs, O_RDONLY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW)), tries, r = 0;
  if (fd < 0) return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? 1 : -errno;
  if (fstat(fd, st) != 0) r = -errno;
  else if (!S_ISREG(st->st_mode)) r = 1;
  if (r != 0) {
    close(fd);
    return r;
  }
  /* A file written while it is read: read it again. */
  for (tries = 0; tries < 3; tries++) {
    if (tries > 0 && (fstat(fd, st) != 0 || lseek(fd, 0, SEEK_SET) != 0)) break;
    if ((r = tpuci__blob_fd(t->md, fd, (uint64_t) st->st_size, hex)) != UV_EAGAIN) break;
  }
  close(fd);
  if (r == 0) {
    t->hashed++;
    t->bytes += (uint64_t) st->st_size;
  }
  return r;
}

/* Whether the link at root/rel whose text is `target` leads out of the
 * root (absolute, or more ".." than folders above it). */
static int tpuci__link_leaves(const char *rel, const char *target) {
  const char *c;
  long depth = 0;
  if (target[0] == '/') return 1;
  for (c = rel; (c = strchr(c, '/')) != NULL; c++) depth++;
  for (c = target; *c;) {
    size_t n = strcspn(c, "/");
    if (n == 2 && c[0] == '.' && c[1] == '.') {
      if (--depth < 0) return 1;
    } else if (n > 0 && !(n == 1 && c[0] == '.')) {
      depth++;
    }
    c += n;
    while (*c == '/') c++;
  }
  return 0;
}

static char *tpuci__nested(tpuci__tree_t *t, const char *rel, const char *commit);
static int tpuci__walk(tpuci__tree_t *t, const char *rel);

/* The id of the link root/rel whose text is `target`: the text (git's
 * blob of it), and with follow_links, when it leads out of the root,
 * what it leads to (a file's content, a folder's key). */
static char *tpuci__link_id(tpuci__tree_t *t, const char *abs, const char *rel, const char *target,
                            size_t n) {
  char hex[41], *leads = NULL, *id;
  struct stat st;
  tpuci__git_blob_id(target, n, hex);
  if (t->o == NULL || !t->o->follow_links || !tpuci__link_leaves(rel, target))
    return tpuci__strdup(hex);
  if (stat(abs, &st) != 0) {
    leads = tpuci__strdup("dangling");
  } else if (S_ISDIR(st.st_mode)) {
    leads = tpuci__nested(t, rel, "folder");
  } else {
    char blob[41];
    int r = tpuci__blob_path(t, abs, 1, &st, blob);
    leads = r == 0 ? tpuci__printf("%s%s", (st.st_mode & S_IXUSR) ? "x" : "", blob)
                   : tpuci__printf("%s", tpuci__file_kind(st.st_mode));
  }
  id = tpuci__printf("%s>%s", hex, leads);
  free(leads);
  return id;
}

/* The file root/rel as an entry's mode and id: 0, 1 when it is gone (or
 * not a file git would keep), or a negative code with err. With `follow`,
 * a link is taken as what it leads to (the mount's own source). */
static int tpuci__look_at(tpuci__tree_t *t, const char *rel, int follow, char mode[8], char **id) {
  char *abs = *rel ? tpuci__printf("%s/%s", t->root, rel) : tpuci__strdup(t->root), hex[41];
  struct stat st;
  int r = 0;
  *id = NULL;
  if ((follow ? stat(abs, &st) : lstat(abs, &st)) != 0) {
    r = errno == ENOENT || errno == ENOTDIR ? 1 : -errno;
  } else if (S_ISLNK(st.st_mode)) {
    char target[4096];
    ssize_t n = readlink(abs, target, sizeof(target) - 1);
    if (n < 0) {
      r = -errno;
    } else {
      target[n] = '\0';
      snprintf(mode, 8, "120000");
      *id = tpuci__link_id(t, abs, rel, target, (size_t) n);
    }
  } else if (S_ISREG(st.st_mode)) {
    r = tpuci__blob_path(t, abs, follow, &st, hex);
    if (r == 0) {
      snprintf(mode, 8, (st.st_mode & S_IXUSR) ? "100755" : "100644");
      *id = tpuci__strdup(hex);
    }
  } else {
    r = 1; /* a folder now, a FIFO, a socket: git keeps none of them */
  }
  if (r < 0) tpuci__err_set(t->err, r, "%s: cannot read it: %s", abs, tpuci__strerror(r));
  free(abs);
  return r;
}

static int tpuci__look(tpuci__tree_t *t, const char *rel, char mode[8], char **id) {
  return tpuci__look_at(t, rel, 0, mode, id);
}

/* ------------------------------------------------------------------ */
/* git                                                                 */

/* Runs git with `args` in `dir`, its standard output into out. Returns
 * git's exit status (0 ok), or a negative code when it could not run. */
static int tpuci__git(const char *dir, const char *const *args, tpuci__buf_t *out) {
  const char *argv[24];
  posix_spawn_file_actions_t fa;
  int fds[2], status = 0, r;
  size_t n = 0, i;
  pid_t pid;
  argv[n++] = "git";
  argv[n++] = "--no-optional-locks";
  /* What the job sees is the file's mode and kind, whatever the
   * checkout's settings say git should trust: with core.fileMode=false a
   * chmod would otherwise not make the file "modified". */
  argv[n++] = "-c";
  argv[n++] = "core.fileMode=true";
  argv[n++] = "-c";
  argv[n++] = "core.symlinks=true";
  argv[n++] = "-C";
  argv[n++] = dir;
  for (i = 0; args[i] && n < 23; i++) argv[n++] = args[i];
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
  else id = tpuci__printf("%s%s%s", commit ? commit : "", commit ? ":" : "", "unreadable");
  tpuci__err_clear(&e);
  free(abs);
  return id;
}

/* The fixed leading part of a glob: up to its last '/' before the first
 * wildcard ("data/" of "data" "/" "**"), or all of it when it has none. */
static size_t tpuci__glob_fixed(const char *g) {
  size_t n = strcspn(g, "*?[\\"), k;
  if (g[n] == '\0') return n;
  for (k = n; k > 0 && g[k - 1] != '/'; k--) continue;
  return k;
}

/* Whether a glob names the ignored entry `rel` (a folder ends in '/') by
 * its fixed leading part P: for an ignored folder, P is that folder or
 * inside it ("data/" of a glob for an ignored "data/"); for an ignored
 * file, P is the file's own folder or the file ("tests/fixtures/" for an
 * ignored "tests/fixtures/w.ckpt", but not "tests/" for it). */
static int tpuci__glob_reaches(const tpuci__tree_t *t, const char *rel) {
  char *e = tpuci__printf("%s%s", t->glob_prefix ? t->glob_prefix : "", rel);
  size_t i, el = strlen(e), fl;
  int dir = el > 0 && e[el - 1] == '/', hit = 0;
  if (dir) e[--el] = '\0';
  /* The folder that must be named: the ignored folder, or the file's. */
  if (dir) {
    fl = el;
  } else {
    const char *slash = strrchr(e, '/');
    fl = slash ? (size_t) (slash - e) : 0;
  }
  for (i = 0; t->o && i < t->o->nglobs && !hit; i++) {
    const char *g = t->o->globs[i];
    size_t n = tpuci__glob_fixed(g);
    if (n > 0 && g[n - 1] == '/') n--;
    if (n == 0) continue;
    if (!dir && n == el && strncmp(g, e, el) == 0) hit = 1; /* the file itself */
    else if (n >= fl && fl > 0 && strncmp(g, e, fl) == 0 && (n == fl || g[fl] == '/')) hit = 1;
  }
  free(e);
  return hit;
}

/* Git's ignored entries (`ls-files -o -i --directory`): those a glob names
 * count (a folder walked under the globs), the others are counted in
 * t->ignored. Asked only when some glob has a fixed part, or when git
 * keeps at most one file (to say that a dataset beside its .gitkeep does
 * not count). 0, or a negative code with err. */
static int tpuci__tree_ignored(tpuci__tree_t *t) {
  static const char *const args[] = {"ls-files",           "-z", "-o", "-i", "--directory",
                                     "--exclude-standard", NULL};
  tpuci__buf_t out;
  const char *p, *end;
  size_t g;
  int named = 0, r = 0;
  for (g = 0; t->o && g < t->o->nglobs; g++) named |= tpuci__glob_fixed(t->o->globs[g]) > 0;
  if (!named && t->kept > 1) return 0;
  tpuci__buf_init(&out);
  if (tpuci__git(t->root, args, &out) != 0) {
    tpuci__buf_free(&out);
    return 0;
  }
  for (p = out.data, end = out.data + out.len; p && p < end && r == 0; p += strlen(p) + 1) {
    size_t len = strlen(p);
    int dir = len > 0 && p[len - 1] == '/';
    char *rel = tpuci__strndup(p, dir ? len - 1 : len);
    if (len == 0 || !tpuci__kept(t, rel)) {
      /* left out */
    } else if (!named || !tpuci__glob_reaches(t, p)) {
      t->ignored++;
    } else if (dir) {
      r = tpuci__walk(t, rel);
    } else if (tpuci__counts(t, rel, 0)) {
      tpuci__tree_push(t, rel, strlen(rel), "100644", NULL, 1);
    }
    free(rel);
  }
  tpuci__buf_free(&out);
  return r;
}

/* Git's view: 1 when git does not know the folder (the caller walks it),
 * 0, or a negative code with err. */
static int tpuci__tree_git(tpuci__tree_t *t) {
  /* One listing: the index (-s, tagged by -v), what differs from it (-m:
   * tag C) and the untracked files that are not ignored (-o: tag ?). */
  static const char *const args[] = {"ls-files",           "-z", "-s", "-v", "-m", "-o",
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
    if (tpuci__kept(t, tab + 1)) t->kept++;
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
  for (i = 0; i < others.len; i++) t->kept += tpuci__kept(t, others.items[i]);
  if (t->kept == 0 && changed.len == 0) {
    /* Nothing git keeps or sees (an ignored folder): walk it. */
    tpuci__strv_free(&changed);
    tpuci__strv_free(&others);
    return 1;
  }
  for (i = 0; i < changed.len; i++) {
    /* Modified, or deleted; every stage of it. */
    const char *path = changed.items[i];
    int at = tpuci__has_path(t, nindex, path);
    if (at < 0) continue; /* left out */
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
      tpuci__tree_push(t, path, len, "100644", NULL, 1); /* untracked */
    }
  }
  tpuci__strv_free(&changed);
  tpuci__strv_free(&others);
  if ((r = tpuci__tree_ignored(t)) < 0) return r;

  for (i = 0; i < t->len && r >= 0; i++) {
    tpuci__tentry_t *e = &t->v[i];
    /* A link that may lead out of the folder: look where. */
    if (t->o && t->o->follow_links && strcmp(e->mode, "120000") == 0) e->stale = 1;
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
  if (t->len > 1) qsort(t->v, t->len, sizeof(*t->v), tpuci__cmp_entry);
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
      continue; /* gone meanwhile */
    }
    if (S_ISDIR(st.st_mode)) {
      size_t before = t->len;
      if (tpuci__counts(t, sub, 1)) r = tpuci__walk(t, sub);
      /* An empty folder is something a job can see (os.listdir). */
      if (r == 0 && t->len == before && tpuci__counts(t, sub, 0))
        tpuci__tree_push(t, sub, strlen(sub), "040000", "empty", 0);
    } else if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
      /* A FIFO, a socket, a device: its kind. */
      if (tpuci__counts(t, sub, 0))
        tpuci__tree_push(t, sub, strlen(sub), "0", tpuci__file_kind(st.st_mode), 0);
    } else if (tpuci__counts(t, sub, 0)) {
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

/* `path` relative to the folder `base` (both absolute, normalised), as a
 * prefix for the paths under it: "" when equal, "x/y/" under it, "../",
 * "../x/" outside it. */
static char *tpuci__rel_to(const char *path, const char *base) {
  tpuci__buf_t b;
  const char *p = path, *q = base;
  /* The folders both start with. */
  for (;;) {
    size_t pn, qn;
    while (*p == '/') p++;
    while (*q == '/') q++;
    pn = strcspn(p, "/");
    qn = strcspn(q, "/");
    if (pn == 0 || qn == 0 || pn != qn || strncmp(p, q, pn) != 0) break;
    p += pn;
    q += qn;
  }
  tpuci__buf_init(&b);
  tpuci__buf_add(&b, "", 0);
  while (*q) {
    size_t qn = strcspn(q, "/");
    if (qn > 0) tpuci__buf_adds(&b, "../");
    q += qn;
    while (*q == '/') q++;
  }
  while (*p) {
    size_t pn = strcspn(p, "/");
    if (pn > 0) {
      tpuci__buf_add(&b, p, pn);
      tpuci__buf_adds(&b, "/");
    }
    p += pn;
    while (*p == '/') p++;
  }
  return tpuci__buf_steal(&b);
}

int tpuci__tree_key(const char *path, const tpuci__tree_opts_t *opts, tpuci__tree_key_t *out,
                    tpuci__err_t *err) {
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
    t.glob_prefix = tpuci__rel_to(path, opts->glob_base ? opts->glob_base : "/");
    if (opts->glob_hits) memset(opts->glob_hits, 0, opts->nglobs * sizeof(size_t));
  }
  if (S_ISREG(st.st_mode)) {
    /* One file: its content, under its folder's rules; a link is what
     * it leads to (a bind mount of it gives the job the target). */
    const char *slash = strrchr(path, '/');
    char *dir = slash && slash != path ? tpuci__strndup(path, (size_t) (slash - path))
                                       : tpuci__strdup("/"),
         *id = NULL, mode[8];
    out->how = "file";
    t.root = dir;
    if (opts && opts->nglobs > 0) {
      free(t.glob_prefix);
      t.glob_prefix = tpuci__rel_to(dir, opts->glob_base ? opts->glob_base : "/");
    }
    r = 0;
    if (slash && tpuci__counts(&t, slash + 1, 0)) {
      r = tpuci__look_at(&t, slash + 1, 1, mode, &id);
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
      if (r == 0 && t.len > 1) qsort(t.v, t.len, sizeof(*t.v), tpuci__cmp_entry);
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
    tpuci__hex(d, 32, out->hex);
    out->files = t.len;
    out->hashed = t.hashed;
    out->ignored_only = t.kept <= 1 ? t.ignored : 0;
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
