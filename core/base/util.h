/* core/base/: what every other folder uses and nothing more. Small
 * internal helpers (this header): allocation that aborts on OOM, growable
 * strings and vectors, key/value lists, error messages, time, paths and
 * UTF-8 checks; durations and sizes (duration.c), error names (error.c),
 * a string->index map (idmap.h), and YAML written with libyaml's emitter
 * (emit.h). It includes nothing of the core but the public tpuci.h
 * (error codes, outcomes) and is called by everyone. */
#ifndef TPUCI_UTIL_H
#define TPUCI_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "tpuci.h"

/* -errno as a libuv-style error code (UV_E* values are -errno on Unix). */
#define TPUCI__ERRNO (-errno)

#if defined(__GNUC__)
#define TPUCI__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TPUCI__PRINTF(f, a)
#endif

/* Allocation. These abort() on out-of-memory: tpuci's structures are
 * small and a half-built plan is worse than a clear crash. The spec's Lua
 * state has its own capped allocator (spec loading returns TPUCI_ELIMIT). */
void *tpuci__malloc(size_t n);
void *tpuci__calloc(size_t n, size_t size);
void *tpuci__realloc(void *p, size_t n);
char *tpuci__strdup(const char *s);
char *tpuci__strndup(const char *s, size_t n);
char *tpuci__printf(const char *fmt, ...) TPUCI__PRINTF(1, 2);

/* A growable NUL-terminated byte string. */
typedef struct {
  char *data;
  size_t len;
  size_t cap;
} tpuci__buf_t;

void tpuci__buf_init(tpuci__buf_t *b);
void tpuci__buf_free(tpuci__buf_t *b);
void tpuci__buf_add(tpuci__buf_t *b, const char *s, size_t n);
void tpuci__buf_adds(tpuci__buf_t *b, const char *s);
void tpuci__buf_addf(tpuci__buf_t *b, const char *fmt, ...) TPUCI__PRINTF(2, 3);
/* Hands the string over to the caller; `b` is empty afterwards. */
char *tpuci__buf_steal(tpuci__buf_t *b);
/* Appends s as one POSIX shell word: as it is when it is made only of
 * letters, digits and "_./=:,+-@%", else in single quotes (a quote as
 * '\''; the empty string as ''). */
void tpuci__buf_add_shell(tpuci__buf_t *b, const char *s);

/* A vector of owned strings; once not empty, items[len] is NULL. */
typedef struct {
  char **items;
  size_t len;
  size_t cap;
} tpuci__strv_t;

void tpuci__strv_push(tpuci__strv_t *v, const char *s); /* copies s */
void tpuci__strv_take(tpuci__strv_t *v, char *s);       /* takes s */
void tpuci__strv_free(tpuci__strv_t *v);
void tpuci__strv_copy(tpuci__strv_t *dst, const tpuci__strv_t *src);

/* An ordered list of owned key=value pairs. */
typedef struct {
  char *key;
  char *value;
} tpuci__kv_t;

typedef struct {
  tpuci__kv_t *items;
  size_t len;
  size_t cap;
} tpuci__kvlist_t;

/* Sets key to value, replacing an existing entry in place. */
void tpuci__kv_set(tpuci__kvlist_t *l, const char *key, const char *value);
const char *tpuci__kv_get(const tpuci__kvlist_t *l, const char *key);
void tpuci__kv_free(tpuci__kvlist_t *l);
void tpuci__kv_copy(tpuci__kvlist_t *dst, const tpuci__kvlist_t *src);

/* An error with a message. Internal functions that can fail take a
 * tpuci__err_t * and fill it through tpuci__err_set(), which returns the
 * code so callers can `return tpuci__err_set(err, TPUCI_ESPEC, ...)`. */
typedef struct {
  int code;
  char *msg;
} tpuci__err_t;

int tpuci__err_set(tpuci__err_t *err, int code, const char *fmt, ...) TPUCI__PRINTF(3, 4);
void tpuci__err_clear(tpuci__err_t *err);

/* The text of a code as the C library words it for a negative errno
 * ("No space left on device"), libuv's for its own codes (UV_EFTYPE,
 * UV_EOF), else tpuci_strerror()'s. */
const char *tpuci__strerror(int code);

/* Durations: "90s", "20m", "1h30m", "500ms", "1.5s", "2d" or a bare
 * number of seconds. Returns 0 and sets *out_ms, or -1 when malformed or
 * out of range (over 100 years). */
int tpuci__duration_parse(const char *s, uint64_t *out_ms);
/* Formats as "1h30m", "2.5s", "150ms" into buf (at least 32 bytes). */
char *tpuci__duration_format(uint64_t ms, char *buf, size_t size);

/* Sizes: "512m", "2g", "1.5GiB", "1048576" (bytes). Returns 0 or -1. */
int tpuci__size_parse(const char *s, uint64_t *out_bytes);

/* Milliseconds since the Unix epoch. */
uint64_t tpuci__now_ms(void);

/* Levenshtein distance, capped: returns cap+1 when larger. */
size_t tpuci__edit_distance(const char *a, const char *b, size_t cap);

/* The length of the valid UTF-8 sequence that starts with the non-ASCII
 * byte at p (end: one past the last byte), or 0 when it is not one (bad
 * lead or continuation byte, overlong form, surrogate, past U+10FFFF). */
size_t tpuci__utf8_len(const unsigned char *p, const unsigned char *end);

/* Whether s[0..len) can be a string of the plan: valid UTF-8 (JSON
 * reports hold it) without a NUL byte (commands, environment and paths
 * are C strings). Returns NULL when it can, else the problem, "not valid
 * UTF-8" or "contains a NUL byte", with *at set to the 0-based offset of
 * the first bad byte. */
const char *tpuci__text_problem(const char *s, size_t len, size_t *at);

/* Untrusted text (a test's id or message, a field of a file someone
 * else can write, what another machine answered) made safe to print on
 * a terminal and in a GitHub Actions log (safetext.c): ASCII control
 * characters (ESC, CR, ... but a newline with `lines`) and DEL become
 * "\u00NN", C1 controls, the line separators and the bidirectional
 * controls "\uNNNN", bytes that are not UTF-8 "\xNN", a tab a space; a
 * line that would start a workflow command (white space, then "::") has
 * its first ':' as "\u003a", and "##[" (the runner's older form) is
 * "##\u005b". Without `lines` a newline is "\u000a" too: the text is
 * one line. A backslash stays as it is, so JSON that jansson wrote stays
 * the same JSON. Appends to b; tpuci__safe() is a new string (NULL for
 * NULL). tpuci_text_safe() (tpuci.h) is the same for hosts. */
void tpuci__safe_add(tpuci__buf_t *b, const char *s, size_t len, int lines);
char *tpuci__safe(const char *s, int lines);

/* Whether s[0..len) is a variable name a POSIX shell takes in `export
 * NAME=...`: [A-Za-z_][A-Za-z0-9_]*. */
int tpuci__env_name_valid(const char *s, size_t len);

/* Whether a plain YAML scalar with this text could read back as
 * something other than a string, under YAML 1.1 (PyYAML, older tools) or
 * 1.2: empty, null, booleans (yes/no/on/off too), anything starting like
 * a number (3.10, 1e3, 0x1f, 1:30, dates), .inf and .nan, and the merge
 * and value keys. Emitters double-quote those. */
int tpuci__yaml_ambiguous(const char *s);

/* The folder name of an instance (or a pytest shard group) in the run
 * folder; a new string. A name of 1 to TPUCI__PATH_KEEP_MAX bytes of
 * [A-Za-z0-9._=,+-] that does not start with '.' and is not a file of the
 * run folder (summary.json, ...) stays as it is. Any other name becomes
 * its first TPUCI__PATH_PREFIX_MAX bytes with the other characters (and a
 * leading '.') as '_', then '~' and 16 hex digits of a 64-bit hash of the
 * whole name (FNV-1a). '~' is never in a kept name, so the two kinds
 * never meet; two changed names share a folder only if their prefixes
 * and 64-bit hashes both match. The result is always one valid file name:
 * never empty, "." or "..", no '/', at most 81 bytes. */
#define TPUCI__PATH_KEEP_MAX 100
#define TPUCI__PATH_PREFIX_MAX 64
char *tpuci__path_component(const char *name);

/* A path as messages show it: relative to the current folder when it is
 * below it (".tpuci/runs/ID/unit/first.log", as the console shows the
 * run folder), else as it is; a pointer into `path`. */
const char *tpuci__path_shown(const char *path);

/* `to` relative to the folder `from`, both absolute and clean (no "."
 * or ".." element, no trailing '/'): "b/c", "../x", "." for the folder
 * itself. A new string. */
char *tpuci__path_rel(const char *from, const char *to);

/* mkdir -p. Returns 0 or a negative UV_E* code. */
int tpuci__mkdir_p(const char *path, int mode);
/* Writes all of buf to fd (again after EINTR and short writes): 0, or a
 * negative code. */
int tpuci__write_all(int fd, const char *buf, size_t len);

/* Writes a whole file atomically: to a temporary file of this process's
 * own beside it (".NAME.PID.N.tmp", created exclusively), fsync, rename
 * over path. Several processes may write one path at once: each rename
 * is whole, the last one wins (updates that must not be lost take the
 * state folder's lock, base/lock.h). */
int tpuci__write_file_atomic(const char *path, const char *data, size_t len);
/* The same, the content written by `fill` into the temporary file's
 * descriptor (a text too large to hold whole): 0, or a negative UV_E*
 * code from `fill`, which leaves path as it was. */
int tpuci__write_file_atomic_by(const char *path, int (*fill)(int fd, void *arg), void *arg);
/* The same, making its folder first (mkdir -p). */
int tpuci__write_file_atomic_p(const char *path, const char *data, size_t len);

/* Reads a whole file; *out is NUL-terminated and owned by the caller. */
int tpuci__read_file(const char *path, char **out, size_t *len);

/* Opens path for reading without blocking on a FIFO, and checks with
 * fstat() that it is a regular file. Returns the descriptor (st filled
 * in), or a negative UV_E* code: UV_EISDIR for a folder, UV_EFTYPE for
 * any other file that is not regular (FIFO, device, socket). */
int tpuci__open_regular(const char *path, struct stat *st);

/* Reads a regular file of at most max bytes (tpuci__open_regular() plus
 * reading at most max + 1 bytes, so a file that grows or lies about its
 * size cannot make it read more). Returns 0, UV_EFBIG when the file has
 * more than max bytes, or another negative UV_E* code. *out is
 * NUL-terminated and owned by the caller. */
int tpuci__read_file_max(const char *path, size_t max, char **out, size_t *len);
/* The whole lines of the last `max` bytes of a regular file (all of it
 * when it is not longer): a file too large to read whole, newest lines
 * last. Same returns as tpuci__read_file_max(). */
int tpuci__read_file_tail(const char *path, size_t max, char **out, size_t *len);

/* Zeroes a string that held a secret, then frees it (NULL: nothing), so
 * that a later bug that prints freed memory, or a core dump, shows
 * zeros. */
void tpuci__wipe_free(char *s);

/* Why reading path failed with a code of tpuci__open_regular() or
 * tpuci__read_file_max() (UV_EFBIG aside, whose limit the caller
 * knows), for a message: "it is a FIFO, not a regular file", "it is a
 * folder, not a regular file", else the code's text (tpuci__strerror).
 * A new string. */
char *tpuci__read_why(const char *path, int code);

/* What kind of file a st_mode names, for messages: "a folder", "a FIFO",
 * "a character device", "a block device", "a socket", "a regular file". */
const char *tpuci__file_kind(unsigned mode);

/* `n` bytes as 2n lower-case hex digits and a NUL into hex (digest.c). */
void tpuci__hex(const unsigned char *d, size_t n, char *hex);

/* The SHA-256 of `len` bytes at `data` as 64 lower-case hex digits and a
 * NUL (digest.c: the core's one SHA-256, OpenSSL's). */
void tpuci__sha256_hex(const void *data, size_t len, char hex[65]);

/* Which build of tpuci runs (build.c): "gnu:HEX", the build id the linker
 * wrote into the object that holds the core (the binary, libtpuci.so or
 * an embedder's program), else "sha256:HEX" of that object's file, else
 * "unknown". Two builds of other code differ; the same build is the same
 * id on every machine. Found once, then static. */
const char *tpuci__build_id(void);

/* The checkout this build came from, as cmake/build_info.cmake recorded
 * it (build.c): the https (or git) URL of its remote origin and the
 * commit it was built at, each NULL when none was recorded (no git, no
 * origin, an origin a runner cannot fetch); whether tracked files had
 * changes then, and whether the commit was on one of origin's branches
 * as of the last fetch. */
const char *tpuci__build_source_url_get(void);
const char *tpuci__build_source_commit_get(void);
int tpuci__build_source_is_modified(void);
int tpuci__build_source_is_pushed(void);

#endif /* TPUCI_UTIL_H */
