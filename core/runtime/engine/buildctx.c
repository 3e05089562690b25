/* The build context archive (buildctx.h): a ustar writer with pax
 * records for what ustar cannot hold, and the walk of the context
 * folder, filtered by dockerignore.h's patterns. */
#include "runtime/engine/buildctx.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "runtime/engine/dockerignore.h"

/* A .dockerignore bigger than this is not a list of patterns. */
#define TPUCI__IGNORE_MAX (4u << 20)
/* Files are copied into the archive this much at a time. */
#define TPUCI__COPY_CHUNK (64u << 10)
#define TPUCI__TAR_BLOCK 512
/* The largest number an 11-digit octal field holds (8 GiB - 1). */
#define TPUCI__TAR_OCTAL11 077777777777ull
#define TPUCI__MIB (1024ull * 1024ull)

/* The tar writer: ustar headers (name, mode, owner 0:0, size, mtime,
 * type, link), with the name split over the prefix field when it fits
 * there, else a pax 'x' header before it. */

static const char tpuci__zeros[TPUCI__TAR_BLOCK];

typedef struct {
  const char *name; /* in the archive; a folder's ends in '/' */
  char type;        /* '0' file, '2' symbolic link, '5' folder */
  unsigned mode;
  uint64_t size;
  int64_t mtime;
  const char *link; /* '2': the target */
} tpuci__tar_entry_t;

static void tpuci__tar_pad(tpuci__buf_t *tar) {
  size_t r = tar->len % TPUCI__TAR_BLOCK;
  if (r) tpuci__buf_add(tar, tpuci__zeros, TPUCI__TAR_BLOCK - r);
}

/* size - 1 octal digits and a NUL. */
static void tpuci__tar_octal(char *field, size_t size, uint64_t v) {
  field[--size] = '\0';
  while (size > 0) {
    field[--size] = (char) ('0' + (v & 7));
    v >>= 3;
  }
}

/* A pax record, "LEN key=value\n", where LEN counts its own digits. */
static void tpuci__pax_add(tpuci__buf_t *pax, const char *key, const char *value) {
  size_t n = strlen(key) + strlen(value) + 3, digits = 1, total;
  char num[24];
  for (;;) {
    total = n + digits;
    if ((size_t) snprintf(num, sizeof(num), "%zu", total) == digits) break;
    digits++;
  }
  tpuci__buf_addf(pax, "%zu %s=%s\n", total, key, value);
}

/* Where to split name between ustar's prefix (155 bytes) and name (100,
 * not empty) fields: the index of a '/', or 0 when none fits. */
static size_t tpuci__tar_split(const char *name, size_t len) {
  size_t i = len > 101 ? len - 101 : 1;
  for (; i <= 155 && i + 1 < len; i++)
    if (name[i] == '/') return i;
  return 0;
}

static void tpuci__tar_block(tpuci__buf_t *tar, char *h, const tpuci__tar_entry_t *e,
                             uint64_t size) {
  uint64_t mtime = 0;
  unsigned sum = 0;
  size_t i;
  tpuci__tar_octal(h + 100, 8, e->mode & 07777);
  tpuci__tar_octal(h + 108, 8, 0);
  tpuci__tar_octal(h + 116, 8, 0);
  tpuci__tar_octal(h + 124, 12, size);
  /* Before 1970 or after 2242: the nearest time ustar can say. */
  if (e->mtime > 0) mtime = (uint64_t) e->mtime;
  tpuci__tar_octal(h + 136, 12, mtime > TPUCI__TAR_OCTAL11 ? TPUCI__TAR_OCTAL11 : mtime);
  h[156] = e->type;
  memcpy(h + 257, "ustar", 6);
  memcpy(h + 263, "00", 2);
  memset(h + 148, ' ', 8);
  for (i = 0; i < TPUCI__TAR_BLOCK; i++) sum += (unsigned char) h[i];
  tpuci__tar_octal(h + 148, 7, sum);
  tpuci__buf_add(tar, h, TPUCI__TAR_BLOCK);
}

static void tpuci__tar_header(tpuci__buf_t *tar, const tpuci__tar_entry_t *e) {
  char h[TPUCI__TAR_BLOCK];
  size_t len = strlen(e->name), split;
  uint64_t size = e->size;
  tpuci__buf_t pax;

  memset(h, 0, sizeof(h));
  tpuci__buf_init(&pax);
  if (len <= 100) {
    memcpy(h, e->name, len);
  } else if ((split = tpuci__tar_split(e->name, len)) > 0) {
    memcpy(h + 345, e->name, split);
    memcpy(h, e->name + split + 1, len - split - 1);
  } else {
    tpuci__pax_add(&pax, "path", e->name);
    memcpy(h, e->name, 100);
  }
  if (e->link != NULL) {
    size_t n = strlen(e->link);
    if (n > 100) tpuci__pax_add(&pax, "linkpath", e->link);
    memcpy(h + 157, e->link, n > 100 ? 100 : n);
  }
  if (size > TPUCI__TAR_OCTAL11) {
    char num[24];
    snprintf(num, sizeof(num), "%llu", (unsigned long long) size);
    tpuci__pax_add(&pax, "size", num);
    size = 0;
  }
  if (pax.len > 0) {
    char ph[TPUCI__TAR_BLOCK];
    tpuci__tar_entry_t x = {"././@PaxHeader", 'x', 0644, 0, e->mtime, NULL};
    memset(ph, 0, sizeof(ph));
    memcpy(ph, x.name, strlen(x.name));
    tpuci__tar_block(tar, ph, &x, pax.len);
    tpuci__buf_add(tar, pax.data, pax.len);
    tpuci__tar_pad(tar);
  }
  tpuci__buf_free(&pax);
  tpuci__tar_block(tar, h, e, size);
}

/* The walk. */

typedef struct {
  const char *shown; /* the context as the caller named it */
  tpuci__dockerignore_t ign;
  const char *dockerfile; /* its path in the context, or NULL */
  const char *extra;      /* the name of one from outside, or NULL */
  uint64_t max;
  char *chunk;
  tpuci__buildctx_t *out;
  tpuci__err_t *err;
} tpuci__walk_t;

static int tpuci__walk_ioerr(tpuci__walk_t *w, const char *what, const char *path, int code) {
  return tpuci__err_set(w->err, TPUCI_EIO, "cannot %s %s in build context %s: %s", what, path,
                        w->shown, tpuci__strerror(code));
}

/* The context is too big: what the user reads, and what to do. */
static int tpuci__walk_over(tpuci__walk_t *w) {
  char cap[48];
  if (w->max >= TPUCI__MIB && w->max % TPUCI__MIB == 0)
    snprintf(cap, sizeof(cap), "%llu MiB", (unsigned long long) (w->max / TPUCI__MIB));
  else if (w->max >= TPUCI__MIB)
    snprintf(cap, sizeof(cap), "%.1f MiB", (double) w->max / (double) TPUCI__MIB);
  else snprintf(cap, sizeof(cap), "%llu bytes", (unsigned long long) w->max);
  return tpuci__err_set(w->err, TPUCI_ESPEC,
                        "build context %s is over %s (%zu files); add a .dockerignore", w->shown,
                        cap, w->out->files + 1);
}

/* Counts a file of `size` bytes, or stops: the context is too big. */
static int tpuci__walk_count(tpuci__walk_t *w, uint64_t size) {
  if (size > w->max || w->out->bytes > w->max - size) return tpuci__walk_over(w);
  w->out->files++;
  w->out->bytes += size;
  return 0;
}

/* Copies exactly `size` bytes from fd (what fstat() said): docker build fails on a
 * file that changes size while it is archived, and so does this. */
static int tpuci__walk_copy(tpuci__walk_t *w, int fd, const char *path, uint64_t size) {
  ssize_t n;
  while (size > 0) {
    size_t want = size < TPUCI__COPY_CHUNK ? (size_t) size : TPUCI__COPY_CHUNK;
    n = read(fd, w->chunk, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return tpuci__walk_ioerr(w, "read", path, TPUCI__ERRNO);
    if (n == 0) break;
    tpuci__buf_add(&w->out->tar, w->chunk, (size_t) n);
    size -= (uint64_t) n;
  }
  do n = size == 0 ? read(fd, w->chunk, 1) : 0;
  while (n < 0 && errno == EINTR);
  if (n < 0) return tpuci__walk_ioerr(w, "read", path, TPUCI__ERRNO);
  if (size > 0 || n != 0)
    return tpuci__err_set(w->err, TPUCI_EIO,
                          "%s in build context %s changed size while it was archived", path,
                          w->shown);
  tpuci__tar_pad(&w->out->tar);
  return 0;
}

/* A regular file at path, as `name` in the archive. O_NOFOLLOW and the
 * fstat(): what is archived is what was opened, even if the entry was
 * swapped after lstat(). */
static int tpuci__walk_file(tpuci__walk_t *w, const char *path, const char *name) {
  tpuci__tar_entry_t e;
  struct stat st;
  int fd, r;

  do fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return tpuci__walk_ioerr(w, "read", path, TPUCI__ERRNO);
  if (fstat(fd, &st) != 0) {
    r = tpuci__walk_ioerr(w, "read", path, TPUCI__ERRNO);
  } else if (!S_ISREG(st.st_mode)) {
    r = tpuci__err_set(w->err, TPUCI_EIO, "%s in build context %s changed while it was archived",
                       path, w->shown);
  } else if ((r = tpuci__walk_count(w, (uint64_t) st.st_size)) == 0) {
    e = (tpuci__tar_entry_t){name, '0', st.st_mode, (uint64_t) st.st_size, st.st_mtime, NULL};
    tpuci__tar_header(&w->out->tar, &e);
    r = tpuci__walk_copy(w, fd, path, (uint64_t) st.st_size);
  }
  close(fd);
  return r;
}

static int tpuci__walk_link(tpuci__walk_t *w, const char *path, const char *name,
                            const struct stat *st) {
  size_t size = st->st_size > 0 ? (size_t) st->st_size + 1 : 256;
  tpuci__tar_entry_t e;
  char *target;
  ssize_t n;

  /* st_size is the target's length on Linux, but not on every file
   * system (0 on some): grow until it fits. */
  for (;;) {
    target = tpuci__malloc(size);
    n = readlink(path, target, size);
    if (n < 0 || (size_t) n < size) break;
    free(target);
    size *= 2;
  }
  if (n < 0) {
    int r = tpuci__walk_ioerr(w, "read the link", path, TPUCI__ERRNO);
    free(target);
    return r;
  }
  target[n] = '\0';
  e = (tpuci__tar_entry_t){name, '2', st->st_mode, 0, st->st_mtime, target};
  tpuci__tar_header(&w->out->tar, &e);
  free(target);
  return 0;
}

static int tpuci__name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *) a, *(char *const *) b);
}

/* A folder's names, in byte order (filepath.Walk's, as docker's): the
 * same tree is the same archive. */
static int tpuci__walk_list(tpuci__walk_t *w, const char *path, tpuci__strv_t *names) {
  struct dirent *de;
  DIR *d = opendir(path);
  int r = 0;

  if (d == NULL) return tpuci__walk_ioerr(w, "read the folder", path, TPUCI__ERRNO);
  for (;;) {
    errno = 0;
    if ((de = readdir(d)) == NULL) break;
    if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
      tpuci__strv_push(names, de->d_name);
  }
  if (errno != 0) r = tpuci__walk_ioerr(w, "read the folder", path, TPUCI__ERRNO);
  closedir(d);
  if (r == 0 && names->len > 1)
    qsort(names->items, names->len, sizeof(*names->items), tpuci__name_cmp);
  return r;
}

/* Whether rel is sent whatever .dockerignore says. */
static int tpuci__walk_always(const tpuci__walk_t *w, const char *rel) {
  return strcmp(rel, ".dockerignore") == 0 || (w->dockerfile && strcmp(rel, w->dockerfile) == 0);
}

/* Whether the Dockerfile is below the folder rel. */
static int tpuci__walk_holds_dockerfile(const tpuci__walk_t *w, const char *rel) {
  size_t n = strlen(rel);
  return w->dockerfile && strncmp(w->dockerfile, rel, n) == 0 && w->dockerfile[n] == '/';
}

static int tpuci__walk_dir(tpuci__walk_t *w, const char *path, const char *rel);

static int tpuci__walk_entry(tpuci__walk_t *w, const char *path, const char *rel) {
  tpuci__tar_entry_t e;
  struct stat st;
  int keep;

  if (lstat(path, &st) != 0) return tpuci__walk_ioerr(w, "read", path, TPUCI__ERRNO);
  /* The Dockerfile from outside has this name: it wins. */
  if (w->extra && strcmp(rel, w->extra) == 0) return 0;
  keep = tpuci__walk_always(w, rel) || !tpuci__dockerignore_excluded(&w->ign, rel);
  if (S_ISDIR(st.st_mode)) {
    /* A left-out folder is still walked when something below it can
     * come back (as docker does, without the folder's own entry). */
    if (keep) {
      char *name = tpuci__printf("%s/", rel);
      e = (tpuci__tar_entry_t){name, '5', st.st_mode, 0, st.st_mtime, NULL};
      tpuci__tar_header(&w->out->tar, &e);
      free(name);
    } else if (!tpuci__dockerignore_reaches_below(&w->ign, rel) &&
               !tpuci__walk_holds_dockerfile(w, rel)) {
      return 0;
    }
    return tpuci__walk_dir(w, path, rel);
  }
  if (!keep) return 0;
  if (S_ISREG(st.st_mode)) return tpuci__walk_file(w, path, rel);
  if (S_ISLNK(st.st_mode)) return tpuci__walk_link(w, path, rel, &st);
  return 0; /* a socket, FIFO or device: nothing a build can COPY */
}

/* The entries below the folder at path, whose name in the archive is
 * rel ("" for the context itself). */
static int tpuci__walk_dir(tpuci__walk_t *w, const char *path, const char *rel) {
  tpuci__strv_t names = {NULL, 0, 0};
  size_t i;
  int r = tpuci__walk_list(w, path, &names);

  for (i = 0; r == 0 && i < names.len; i++) {
    char *cpath = tpuci__printf("%s/%s", path, names.items[i]);
    char *crel =
        rel[0] ? tpuci__printf("%s/%s", rel, names.items[i]) : tpuci__strdup(names.items[i]);
    r = tpuci__walk_entry(w, cpath, crel);
    free(cpath);
    free(crel);
  }
  tpuci__strv_free(&names);
  return r;
}

/* Reads context_dir/.dockerignore into w->ign; none is no patterns. */
static int tpuci__walk_ignore(tpuci__walk_t *w, const char *context_dir) {
  char *path = tpuci__printf("%s/.dockerignore", context_dir), *text = NULL, *why;
  size_t len;
  int r = tpuci__read_file_max(path, TPUCI__IGNORE_MAX, &text, &len);

  if (r == UV_ENOENT) {
    r = 0;
  } else if (r < 0) {
    why = r == UV_EFBIG ? tpuci__strdup("it is over 4 MiB") : tpuci__read_why(path, r);
    r = tpuci__err_set(w->err, TPUCI_ESPEC, "cannot read %s: %s", path, why);
    free(why);
  } else {
    r = tpuci__dockerignore_parse(&w->ign, text, len, path, w->err);
  }
  free(text);
  free(path);
  return r;
}

/* The Dockerfile the user named: its real path, checked to be a
 * regular file. NULL (or "") is "Dockerfile", else "dockerfile". */
static int tpuci__dockerfile_real(const char *context_dir, const char *dockerfile, char **real,
                                  tpuci__err_t *err) {
  struct stat st;
  char *given;
  int r = 0;

  if (dockerfile == NULL || dockerfile[0] == '\0') {
    given = tpuci__printf("%s/Dockerfile", context_dir);
    if (lstat(given, &st) != 0 && errno == ENOENT) {
      char *lower = tpuci__printf("%s/dockerfile", context_dir);
      if (lstat(lower, &st) == 0) {
        free(given);
        given = lower;
      } else {
        free(lower);
      }
    }
  } else if (dockerfile[0] == '/') {
    given = tpuci__strdup(dockerfile);
  } else {
    given = tpuci__printf("%s/%s", context_dir, dockerfile);
  }
  if ((*real = realpath(given, NULL)) == NULL) {
    int code = TPUCI__ERRNO;
    if (code == UV_ENOENT || code == UV_ENOTDIR)
      r = tpuci__err_set(err, TPUCI_ESPEC, "Dockerfile %s not found", given);
    else
      r = tpuci__err_set(err, TPUCI_ESPEC, "cannot read Dockerfile %s: %s", given,
                         tpuci__strerror(code));
  } else if (stat(*real, &st) != 0) {
    r = tpuci__err_set(err, TPUCI_ESPEC, "cannot read Dockerfile %s: %s", given,
                       tpuci__strerror(TPUCI__ERRNO));
  } else if (!S_ISREG(st.st_mode)) {
    r = tpuci__err_set(err, TPUCI_ESPEC, "Dockerfile %s is %s, not a regular file", given,
                       tpuci__file_kind(st.st_mode));
  }
  if (r != 0) {
    free(*real);
    *real = NULL;
  }
  free(given);
  return r;
}

/* A Dockerfile outside the context, at the archive's top under a name
 * made from its text: the same file is the same archive. */
static int tpuci__walk_outside(tpuci__walk_t *w, const char *real) {
  char *text = NULL, hex[65];
  struct stat st;
  size_t len;
  int r;

  if (stat(real, &st) != 0) return tpuci__walk_ioerr(w, "read", real, TPUCI__ERRNO);
  r = tpuci__read_file_max(real, w->max > SIZE_MAX - 1 ? SIZE_MAX - 1 : (size_t) w->max, &text,
                           &len);
  if (r == UV_EFBIG) return tpuci__walk_over(w);
  if (r < 0) return tpuci__walk_ioerr(w, "read", real, r);
  tpuci__sha256_hex(text, len, hex);
  hex[12] = '\0';
  w->out->dockerfile = tpuci__printf(".tpuci-dockerfile-%s", hex);
  w->extra = w->out->dockerfile;
  if ((r = tpuci__walk_count(w, len)) == 0) {
    tpuci__tar_entry_t e = {w->extra, '0', st.st_mode, len, st.st_mtime, NULL};
    tpuci__tar_header(&w->out->tar, &e);
    tpuci__buf_add(&w->out->tar, text, len);
    tpuci__tar_pad(&w->out->tar);
  }
  free(text);
  return r;
}

/* Where the Dockerfile goes: its path inside the context, or, added
 * first, under a name of its own. */
static int tpuci__walk_dockerfile(tpuci__walk_t *w, const char *context_dir,
                                  const char *dockerfile) {
  char *ctx = realpath(context_dir, NULL), *real = NULL;
  size_t n;
  int r;

  if (ctx == NULL) {
    return tpuci__err_set(w->err, TPUCI_ESPEC, "build context %s: %s", context_dir,
                          tpuci__strerror(TPUCI__ERRNO));
  }
  r = tpuci__dockerfile_real(context_dir, dockerfile, &real, w->err);
  n = strcmp(ctx, "/") == 0 ? 0 : strlen(ctx);
  if (r == 0 && strncmp(real, ctx, n) == 0 && real[n] == '/') {
    w->out->dockerfile = tpuci__strdup(real + n + 1);
    w->dockerfile = w->out->dockerfile;
  } else if (r == 0) {
    r = tpuci__walk_outside(w, real);
  }
  free(real);
  free(ctx);
  return r;
}

int tpuci__buildctx_make(const char *context_dir, const char *dockerfile, uint64_t max_bytes,
                         tpuci__buildctx_t *out, tpuci__err_t *err) {
  tpuci__walk_t w;
  struct stat st;
  int r;

  memset(out, 0, sizeof(*out));
  memset(&w, 0, sizeof(w));
  w.shown = context_dir;
  w.max = max_bytes;
  w.out = out;
  w.err = err;
  if (stat(context_dir, &st) != 0)
    return tpuci__err_set(err, TPUCI_ESPEC, "build context %s: %s", context_dir,
                          tpuci__strerror(TPUCI__ERRNO));
  if (!S_ISDIR(st.st_mode))
    return tpuci__err_set(err, TPUCI_ESPEC, "build context %s is %s, not a folder", context_dir,
                          tpuci__file_kind(st.st_mode));
  if (access(context_dir, R_OK | X_OK) != 0)
    return tpuci__err_set(err, TPUCI_ESPEC, "build context %s: %s", context_dir,
                          tpuci__strerror(TPUCI__ERRNO));
  w.chunk = tpuci__malloc(TPUCI__COPY_CHUNK);
  r = tpuci__walk_ignore(&w, context_dir);
  if (r == 0) r = tpuci__walk_dockerfile(&w, context_dir, dockerfile);
  if (r == 0) r = tpuci__walk_dir(&w, context_dir, "");
  if (r == 0) {
    /* The end of the archive: two zero blocks. */
    tpuci__buf_add(&out->tar, tpuci__zeros, TPUCI__TAR_BLOCK);
    tpuci__buf_add(&out->tar, tpuci__zeros, TPUCI__TAR_BLOCK);
  }
  tpuci__dockerignore_free(&w.ign);
  free(w.chunk);
  if (r != 0) tpuci__buildctx_free(out);
  return r;
}

void tpuci__buildctx_free(tpuci__buildctx_t *c) {
  tpuci__buf_free(&c->tar);
  free(c->dockerfile);
  memset(c, 0, sizeof(*c));
}
