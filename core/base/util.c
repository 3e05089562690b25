/* Allocation, strings, vectors, errors and files. */
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <uv.h>

static void tpuci__oom(void) {
  static const char msg[] = "tpuci: out of memory\n";
  ssize_t r = write(2, msg, sizeof(msg) - 1);
  (void) r;
  abort();
}

void *tpuci__malloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (p == NULL) tpuci__oom();
  return p;
}

void *tpuci__calloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (p == NULL) tpuci__oom();
  return p;
}

void *tpuci__realloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (q == NULL) tpuci__oom();
  return q;
}

char *tpuci__strdup(const char *s) { return s == NULL ? NULL : tpuci__strndup(s, strlen(s)); }

char *tpuci__strndup(const char *s, size_t n) {
  char *p = tpuci__malloc(n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

static char *tpuci__vprintf(const char *fmt, va_list ap) {
  va_list aq;
  int n;
  char *p;

  va_copy(aq, ap);
  n = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  if (n < 0) n = 0;
  p = tpuci__malloc((size_t) n + 1);
  vsnprintf(p, (size_t) n + 1, fmt, ap);
  return p;
}

char *tpuci__printf(const char *fmt, ...) {
  va_list ap;
  char *p;
  va_start(ap, fmt);
  p = tpuci__vprintf(fmt, ap);
  va_end(ap);
  return p;
}

/* Growable strings. */

void tpuci__buf_init(tpuci__buf_t *b) {
  b->data = NULL;
  b->len = 0;
  b->cap = 0;
}

void tpuci__buf_free(tpuci__buf_t *b) {
  free(b->data);
  tpuci__buf_init(b);
}

static void tpuci__buf_grow(tpuci__buf_t *b, size_t extra) {
  size_t need = b->len + extra + 1;
  if (need <= b->cap) return;
  if (b->cap == 0) b->cap = 64;
  while (b->cap < need) b->cap *= 2;
  b->data = tpuci__realloc(b->data, b->cap);
}

void tpuci__buf_add(tpuci__buf_t *b, const char *s, size_t n) {
  tpuci__buf_grow(b, n);
  if (n) memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void tpuci__buf_adds(tpuci__buf_t *b, const char *s) { tpuci__buf_add(b, s, strlen(s)); }

void tpuci__buf_addf(tpuci__buf_t *b, const char *fmt, ...) {
  va_list ap, aq;
  int n;

  va_start(ap, fmt);
  va_copy(aq, ap);
  n = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  if (n > 0) {
    tpuci__buf_grow(b, (size_t) n);
    vsnprintf(b->data + b->len, (size_t) n + 1, fmt, ap);
    b->len += (size_t) n;
  }
  va_end(ap);
}

char *tpuci__buf_steal(tpuci__buf_t *b) {
  char *p = b->data;
  if (p == NULL) p = tpuci__strdup("");
  tpuci__buf_init(b);
  return p;
}

/* Whether s can be one shell word unquoted. */
static int tpuci__shell_plain(const char *s) {
  if (*s == '\0') return 0;
  for (; *s; s++) {
    unsigned char ch = (unsigned char) *s;
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
          strchr("_./=:,+-@%", ch)))
      return 0;
  }
  return 1;
}

void tpuci__buf_add_shell(tpuci__buf_t *b, const char *s) {
  if (tpuci__shell_plain(s)) {
    tpuci__buf_adds(b, s);
    return;
  }
  tpuci__buf_add(b, "'", 1);
  for (; *s; s++) {
    if (*s == '\'') tpuci__buf_adds(b, "'\\''");
    else tpuci__buf_add(b, s, 1);
  }
  tpuci__buf_add(b, "'", 1);
}

/* String vectors. */

void tpuci__strv_take(tpuci__strv_t *v, char *s) {
  /* One spare slot keeps the vector NULL-terminated, as execve wants. */
  if (v->len + 1 >= v->cap) {
    v->cap = v->cap ? v->cap * 2 : 8;
    v->items = tpuci__realloc(v->items, v->cap * sizeof(*v->items));
  }
  v->items[v->len++] = s;
  v->items[v->len] = NULL;
}

void tpuci__strv_push(tpuci__strv_t *v, const char *s) { tpuci__strv_take(v, tpuci__strdup(s)); }

void tpuci__strv_free(tpuci__strv_t *v) {
  size_t i;
  for (i = 0; i < v->len; i++) free(v->items[i]);
  free(v->items);
  v->items = NULL;
  v->len = v->cap = 0;
}

void tpuci__strv_copy(tpuci__strv_t *dst, const tpuci__strv_t *src) {
  size_t i;
  for (i = 0; i < src->len; i++) tpuci__strv_push(dst, src->items[i]);
}

/* Key/value lists. */

void tpuci__kv_set(tpuci__kvlist_t *l, const char *key, const char *value) {
  size_t i;
  for (i = 0; i < l->len; i++) {
    if (strcmp(l->items[i].key, key) == 0) {
      free(l->items[i].value);
      l->items[i].value = tpuci__strdup(value);
      return;
    }
  }
  if (l->len == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 4;
    l->items = tpuci__realloc(l->items, l->cap * sizeof(*l->items));
  }
  l->items[l->len].key = tpuci__strdup(key);
  l->items[l->len].value = tpuci__strdup(value);
  l->len++;
}

const char *tpuci__kv_get(const tpuci__kvlist_t *l, const char *key) {
  size_t i;
  for (i = 0; i < l->len; i++)
    if (strcmp(l->items[i].key, key) == 0) return l->items[i].value;
  return NULL;
}

void tpuci__kv_free(tpuci__kvlist_t *l) {
  size_t i;
  for (i = 0; i < l->len; i++) {
    free(l->items[i].key);
    free(l->items[i].value);
  }
  free(l->items);
  l->items = NULL;
  l->len = l->cap = 0;
}

void tpuci__kv_copy(tpuci__kvlist_t *dst, const tpuci__kvlist_t *src) {
  size_t i;
  for (i = 0; i < src->len; i++) tpuci__kv_set(dst, src->items[i].key, src->items[i].value);
}

/* Errors. */

int tpuci__err_set(tpuci__err_t *err, int code, const char *fmt, ...) {
  va_list ap;
  if (err == NULL) return code;
  free(err->msg);
  va_start(ap, fmt);
  err->msg = tpuci__vprintf(fmt, ap);
  va_end(ap);
  err->code = code;
  return code;
}

void tpuci__err_clear(tpuci__err_t *err) {
  free(err->msg);
  err->msg = NULL;
  err->code = 0;
}

const char *tpuci__strerror(int code) {
  /* libuv's own codes (UV_EOF, UV_EFTYPE, UV_EAI_*) are no errno. */
  if (code < 0 && code > TPUCI_EBASE && code <= -3000) return uv_strerror(code);
  if (code < 0 && code > TPUCI_EBASE) return strerror(-code);
  return tpuci_strerror(code);
}

/* Time. */

uint64_t tpuci__now_ms(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (uint64_t) tv.tv_sec * 1000u + (uint64_t) tv.tv_usec / 1000u;
}

/* Names and paths. */

size_t tpuci__edit_distance(const char *a, const char *b, size_t cap) {
  size_t la = strlen(a), lb = strlen(b), i, j;
  size_t *prev, *cur, *tmp, best, d;

  if (la > lb + cap || lb > la + cap) return cap + 1;
  prev = tpuci__malloc((lb + 1) * sizeof(size_t));
  cur = tpuci__malloc((lb + 1) * sizeof(size_t));
  for (j = 0; j <= lb; j++) prev[j] = j;
  for (i = 1; i <= la; i++) {
    cur[0] = i;
    best = cur[0];
    for (j = 1; j <= lb; j++) {
      size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
      size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
      d = del < ins ? del : ins;
      cur[j] = d < sub ? d : sub;
      if (cur[j] < best) best = cur[j];
    }
    tmp = prev;
    prev = cur;
    cur = tmp;
    if (best > cap) {
      free(prev);
      free(cur);
      return cap + 1;
    }
  }
  d = prev[lb];
  free(prev);
  free(cur);
  return d > cap ? cap + 1 : d;
}

/* The files a run folder holds besides the instances' folders (and the
 * temporary names tpuci__write_file_atomic() gives them). */
static const char *const tpuci__run_files[] = {
    "attempts.jsonl", "summary.json", "summary.json.tmp", "junit.xml",
    "junit.xml.tmp",  "report.html",  "report.html.tmp",  NULL};

static int tpuci__path_safe_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         (c != '\0' && strchr("._=,+-", c) != NULL);
}

/* Whether a name can be a folder name as it is. */
static int tpuci__path_keeps(const char *name) {
  size_t n = strlen(name), k;
  if (n == 0 || n > TPUCI__PATH_KEEP_MAX || name[0] == '.') return 0;
  for (k = 0; k < n; k++)
    if (!tpuci__path_safe_char((unsigned char) name[k])) return 0;
  for (k = 0; tpuci__run_files[k]; k++)
    if (strcmp(name, tpuci__run_files[k]) == 0) return 0;
  return 1;
}

/* 64-bit FNV-1a. */
static uint64_t tpuci__fnv1a64(const char *s) {
  uint64_t h = 14695981039346656037ull;
  for (; *s; s++) {
    h ^= (unsigned char) *s;
    h *= 1099511628211ull;
  }
  return h;
}

char *tpuci__path_component(const char *name) {
  tpuci__buf_t b;
  size_t k;

  if (tpuci__path_keeps(name)) return tpuci__strdup(name);
  tpuci__buf_init(&b);
  for (k = 0; name[k] && k < TPUCI__PATH_PREFIX_MAX; k++) {
    int keep = tpuci__path_safe_char((unsigned char) name[k]) && !(k == 0 && name[k] == '.');
    tpuci__buf_add(&b, keep ? &name[k] : "_", 1);
  }
  if (k == 0) tpuci__buf_adds(&b, "_");
  tpuci__buf_addf(&b, "~%016llx", (unsigned long long) tpuci__fnv1a64(name));
  return tpuci__buf_steal(&b);
}

int tpuci__mkdir_p(const char *path, int mode) {
  char *p, *s;
  int r = 0;

  /* The common case: only the last component is missing. */
  if (mkdir(path, (mode_t) mode) == 0 || errno == EEXIST) return 0;
  if (errno != ENOENT) return TPUCI__ERRNO;
  p = tpuci__strdup(path);
  for (s = p + 1;; s++) {
    if (*s == '/' || *s == '\0') {
      char c = *s;
      *s = '\0';
      if (mkdir(p, (mode_t) mode) != 0 && errno != EEXIST) {
        r = TPUCI__ERRNO;
        break;
      }
      *s = c;
      if (c == '\0') break;
    }
  }
  free(p);
  return r;
}

int tpuci__write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return TPUCI__ERRNO;
    }
    buf += n;
    len -= (size_t) n;
  }
  return 0;
}

const char *tpuci__path_shown(const char *path) {
  char cwd[4096];
  size_t n;
  if (path == NULL || path[0] != '/' || getcwd(cwd, sizeof(cwd)) == NULL) return path;
  n = strlen(cwd);
  if (n == 1) return path; /* "/": absolute is as short */
  if (strncmp(path, cwd, n) == 0 && path[n] == '/' && path[n + 1] != '\0') return path + n + 1;
  return path;
}

char *tpuci__path_rel(const char *from, const char *to) {
  size_t i = 0, common = 0;
  tpuci__buf_t b;
  int root = strcmp(from, "/") == 0;
  /* The longest common prefix that ends where both end a component. */
  while (!root && from[i] != '\0' && from[i] == to[i]) {
    i++;
    if ((from[i] == '/' || from[i] == '\0') && (to[i] == '/' || to[i] == '\0')) common = i;
  }
  tpuci__buf_init(&b);
  for (i = common; !root && from[i] != '\0'; i++)
    if (from[i] == '/') tpuci__buf_adds(&b, b.len ? "/.." : "..");
  while (to[common] == '/') common++;
  if (to[common] != '\0') tpuci__buf_addf(&b, "%s%s", b.len ? "/" : "", to + common);
  if (b.len == 0) tpuci__buf_adds(&b, ".");
  return tpuci__buf_steal(&b);
}

/* The temporary name of a file being written: beside it, so that the
 * rename stays on one file system, hidden, and this process's own
 * (its pid and a counter), so that processes writing the same file at
 * once never share one: ".NAME.PID.N.tmp". */
static char *tpuci__atomic_tmp_name(const char *path) {
  static unsigned counter;
  const char *slash = strrchr(path, '/');
  unsigned n = __atomic_fetch_add(&counter, 1u, __ATOMIC_RELAXED);
  if (slash == NULL) return tpuci__printf(".%s.%ld.%u.tmp", path, (long) getpid(), n);
  return tpuci__printf("%.*s/.%s.%ld.%u.tmp", (int) (slash - path), path, slash + 1,
                       (long) getpid(), n);
}

typedef struct {
  const char *data;
  size_t len;
} tpuci__bytes_t;

static int tpuci__fill_bytes(int fd, void *arg) {
  const tpuci__bytes_t *b = arg;
  return tpuci__write_all(fd, b->data, b->len);
}

int tpuci__write_file_atomic(const char *path, const char *data, size_t len) {
  tpuci__bytes_t b = {data, len};
  return tpuci__write_file_atomic_by(path, tpuci__fill_bytes, &b);
}

int tpuci__write_file_atomic_by(const char *path, int (*fill)(int fd, void *arg), void *arg) {
  char *tmp = tpuci__atomic_tmp_name(path);
  int fd, r = 0;

  /* O_EXCL: a name left by a crashed process with the same pid is never
   * written into (nor truncated under another writer). */
  fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) {
    free(tmp);
    tmp = tpuci__atomic_tmp_name(path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  }
  if (fd < 0) {
    r = TPUCI__ERRNO;
    free(tmp);
    return r;
  }
  r = fill(fd, arg);
  if (r == 0 && fsync(fd) != 0) r = TPUCI__ERRNO;
  if (close(fd) != 0 && r == 0) r = TPUCI__ERRNO;
  if (r == 0 && rename(tmp, path) != 0) r = TPUCI__ERRNO;
  if (r != 0) unlink(tmp);
  free(tmp);
  return r;
}

int tpuci__write_file_atomic_p(const char *path, const char *data, size_t len) {
  const char *slash = strrchr(path, '/');
  int r = 0;
  if (slash != NULL && slash != path) {
    char *dir = tpuci__strndup(path, (size_t) (slash - path));
    r = tpuci__mkdir_p(dir, 0755);
    free(dir);
  }
  return r == 0 ? tpuci__write_file_atomic(path, data, len) : r;
}

int tpuci__read_file(const char *path, char **out, size_t *len) {
  FILE *f = fopen(path, "rb");
  tpuci__buf_t b;
  char chunk[65536];
  size_t n;
  int r = 0;

  if (f == NULL) return TPUCI__ERRNO;
  tpuci__buf_init(&b);
  while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) tpuci__buf_add(&b, chunk, n);
  if (ferror(f)) r = TPUCI__ERRNO;
  fclose(f);
  if (r != 0) {
    tpuci__buf_free(&b);
    return r;
  }
  if (len) *len = b.len;
  *out = tpuci__buf_steal(&b);
  return 0;
}

int tpuci__open_regular(const char *path, struct stat *st) {
  int fd, r;

  /* O_NONBLOCK: opening a FIFO must not wait for a writer. It changes
   * nothing for regular files. */
  do fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return TPUCI__ERRNO;
  if (fstat(fd, st) != 0) {
    r = TPUCI__ERRNO;
    close(fd);
    return r;
  }
  if (!S_ISREG(st->st_mode)) {
    close(fd);
    return S_ISDIR(st->st_mode) ? UV_EISDIR : UV_EFTYPE;
  }
  return fd;
}

/* Reads from fd into buf until `want` bytes or end of file (again after
 * EINTR and short reads): 0 with *got, or a negative code. */
static int tpuci__read_upto(int fd, char *buf, size_t want, size_t *got) {
  ssize_t n;
  *got = 0;
  while (*got < want) {
    n = read(fd, buf + *got, want - *got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return TPUCI__ERRNO;
    if (n == 0) break;
    *got += (size_t) n;
  }
  return 0;
}

int tpuci__read_file_tail(const char *path, size_t max, char **out, size_t *len) {
  struct stat st;
  size_t got = 0, skip;
  char *buf, *nl;
  int r, fd = tpuci__open_regular(path, &st);
  if (fd < 0) return fd;
  if ((uint64_t) st.st_size > (uint64_t) max && lseek(fd, st.st_size - (off_t) max, SEEK_SET) < 0) {
    r = TPUCI__ERRNO;
    close(fd);
    return r;
  }
  buf = tpuci__malloc(max + 1);
  r = tpuci__read_upto(fd, buf, max, &got);
  close(fd);
  if (r != 0) {
    free(buf);
    return r;
  }
  /* Cut into the middle of a line only when the file was longer. */
  nl = (uint64_t) st.st_size > (uint64_t) max ? memchr(buf, '\n', got) : NULL;
  skip = nl != NULL ? (size_t) (nl - buf) + 1 : (uint64_t) st.st_size > (uint64_t) max ? got : 0;
  memmove(buf, buf + skip, got - skip);
  got -= skip;
  buf[got] = '\0';
  *out = buf;
  if (len) *len = got;
  return 0;
}

int tpuci__read_file_max(const char *path, size_t max, char **out, size_t *len) {
  struct stat st;
  size_t got = 0, cap;
  char *buf;
  int fd = tpuci__open_regular(path, &st);

  if (fd < 0) return fd;
  if (st.st_size > 0 && (uint64_t) st.st_size > (uint64_t) max) {
    close(fd);
    return UV_EFBIG;
  }
  /* The size fstat() gave is a hint: read until EOF, at most max + 1. */
  cap = (size_t) st.st_size + 1;
  buf = tpuci__malloc(cap + 1);
  for (;;) {
    size_t n;
    int r;
    if (got == cap) {
      if (cap > max) break;
      cap = cap * 2 > max + 1 || cap * 2 < cap ? max + 1 : cap * 2;
      buf = tpuci__realloc(buf, cap + 1);
    }
    r = tpuci__read_upto(fd, buf + got, cap - got, &n);
    if (r != 0) {
      close(fd);
      free(buf);
      return r;
    }
    got += n;
    if (got < cap) break; /* end of file */
  }
  close(fd);
  if (got > max) {
    free(buf);
    return UV_EFBIG;
  }
  buf[got] = '\0';
  *out = buf;
  if (len) *len = got;
  return 0;
}

void tpuci__wipe_free(char *s) {
  volatile char *p = s;
  if (s == NULL) return;
  while (*p) *p++ = '\0';
  free(s);
}

char *tpuci__read_why(const char *path, int code) {
  struct stat st;
  if (code == UV_EISDIR || code == UV_EFTYPE) {
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
      return tpuci__printf("it is %s, not a regular file", tpuci__file_kind(st.st_mode));
    return tpuci__strdup("it is not a regular file");
  }
  return tpuci__strdup(tpuci__strerror(code));
}

const char *tpuci__file_kind(unsigned mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/* Text encodings. */

size_t tpuci__utf8_len(const unsigned char *p, const unsigned char *end) {
  unsigned long cp;
  size_t n, i;

  if (*p >= 0xC2 && *p <= 0xDF) {
    n = 2;
    cp = *p & 0x1F;
  } else if (*p >= 0xE0 && *p <= 0xEF) {
    n = 3;
    cp = *p & 0x0F;
  } else if (*p >= 0xF0 && *p <= 0xF4) {
    n = 4;
    cp = *p & 0x07;
  } else {
    return 0;
  }
  if ((size_t) (end - p) < n) return 0;
  for (i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

const char *tpuci__text_problem(const char *s, size_t len, size_t *at) {
  const unsigned char *p = (const unsigned char *) s, *end = p + len;
  const char *problem = NULL;
  size_t n;

  while (p < end) {
    if (*p == 0) {
      problem = "contains a NUL byte";
      break;
    }
    n = *p < 0x80 ? 1 : tpuci__utf8_len(p, end);
    if (n == 0) {
      problem = "not valid UTF-8";
      break;
    }
    p += n;
  }
  if (at) *at = (size_t) (p - (const unsigned char *) s);
  return problem;
}

int tpuci__env_name_valid(const char *s, size_t len) {
  size_t i;
  if (len == 0 || (s[0] >= '0' && s[0] <= '9')) return 0;
  for (i = 0; i < len; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
          (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
      return 0;
  return 1;
}

int tpuci__yaml_ambiguous(const char *s) {
  static const char *const words[] = {"true",  "false", "yes",  "no", "on",   "off",
                                      "y",     "n",     "null", "~",  ".inf", "-.inf",
                                      "+.inf", ".nan",  "<<",   "=",  NULL};
  const char *d = s;
  size_t k;
  if (*s == '\0') return 1;
  for (k = 0; words[k]; k++)
    if (strcasecmp(s, words[k]) == 0) return 1;
  if (*d == '-' || *d == '+' || *d == '.') d++;
  if (*d == '.') d++;
  return *d >= '0' && *d <= '9';
}
