/* A results folder brought back through a container's log (logres.h). */
#include "runtime/engine/logres.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>
#include <zlib.h>

#include "runtime/engine/base64.h"
#include "base/util.h"

void tpuci__logres_init(tpuci__logres_t *r, const char *dir) {
  memset(r, 0, sizeof(*r));
  r->dir = tpuci__strdup(dir);
  r->fd = -1;
}

/* The file being received (r->fd is open while r->name is set). */
static void tpuci__logres_close(tpuci__logres_t *r) {
  if (r->name != NULL && r->fd >= 0) close(r->fd);
  r->fd = -1;
  free(r->name);
  r->name = NULL;
}

void tpuci__logres_free(tpuci__logres_t *r) {
  if (r->dir == NULL) return; /* never initialised (all zero) */
  tpuci__logres_close(r);
  free(r->dir);
  free(r->err);
  memset(r, 0, sizeof(*r));
  r->fd = -1;
}

/* The first failure wins. Returns 1 (the line was taken). */
static int tpuci__logres_fail(tpuci__logres_t *r, char *msg) {
  if (r->err == NULL) r->err = msg;
  else free(msg);
  tpuci__logres_close(r);
  return 1;
}

/* A file name the bootstrap may send: one plain name of the folder. */
static int tpuci__logres_name_ok(const char *s, size_t n) {
  size_t i;
  if (n == 0 || n > 255 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
    return 0;
  for (i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '_' || c == '-'))
      return 0;
  }
  return 1;
}

/* "file NAME SIZE CRC": opens NAME in the folder. */
static int tpuci__logres_file(tpuci__logres_t *r, const char *p, size_t len) {
  char *line = tpuci__strndup(p, len), *sp, *path;
  unsigned long long size;
  unsigned long crc;
  int n = 0;
  sp = strchr(line, ' ');
  if (r->name != NULL) {
    char *m = tpuci__printf("%s: %" PRIu64 " of %" PRIu64 " bytes, then another file began",
                            r->name, r->got, r->size);
    free(line);
    return tpuci__logres_fail(r, m);
  }
  if (sp == NULL || !tpuci__logres_name_ok(line, (size_t) (sp - line)) ||
      sscanf(sp + 1, "%llu %lu%n", &size, &crc, &n) != 2 || sp[1 + n] != '\0') {
    char *m = tpuci__printf("a file's heading is not one: '%.80s'", line);
    free(line);
    return tpuci__logres_fail(r, m);
  }
  *sp = '\0';
  r->name = line;
  r->size = (uint64_t) size;
  r->got = 0;
  r->crc = 0;
  r->crc_want = (uint32_t) crc;
  path = tpuci__printf("%s/%s", r->dir, line);
  r->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (r->fd < 0) {
    char *m = tpuci__printf("cannot write %s: %s", path, strerror(errno));
    free(path);
    return tpuci__logres_fail(r, m);
  }
  free(path);
  return 1;
}

static int tpuci__logres_data(tpuci__logres_t *r, const char *p, size_t len) {
  unsigned char *buf;
  long n;
  int w;
  if (r->name == NULL) return 1; /* after a failure: ignored */
  buf = tpuci__malloc(len / 4 * 3 + 3);
  n = tpuci__base64_decode_to(p, len, TPUCI__B64_STRICT, buf);
  if (n < 0) {
    free(buf);
    return tpuci__logres_fail(
        r, tpuci__printf("%s: a piece is not base64 after %" PRIu64 " bytes", r->name, r->got));
  }
  if (r->got + (uint64_t) n > r->size) {
    free(buf);
    return tpuci__logres_fail(
        r, tpuci__printf("%s: more than its %" PRIu64 " bytes", r->name, r->size));
  }
  /* zlib's CRC-32 is Python's binascii.crc32, which the bootstrap sends;
   * crc32_z takes a size_t length (zlib 1.2.9). */
  r->crc = (uint32_t) crc32_z(r->crc, buf, (z_size_t) n);
  r->got += (uint64_t) n;
  w = tpuci__write_all(r->fd, (const char *) buf, (size_t) n);
  free(buf);
  if (w != 0)
    return tpuci__logres_fail(
        r, tpuci__printf("cannot write %s/%s: %s", r->dir, r->name, uv_strerror(w)));
  return 1;
}

static int tpuci__logres_end(tpuci__logres_t *r, const char *p, size_t len) {
  if (r->name == NULL) return 1;
  if (strlen(r->name) != len || memcmp(r->name, p, len) != 0)
    return tpuci__logres_fail(r, tpuci__printf("%s: its end names another file", r->name));
  if (r->got != r->size)
    return tpuci__logres_fail(
        r, tpuci__printf("%s: %" PRIu64 " of %" PRIu64 " bytes", r->name, r->got, r->size));
  if (r->crc != r->crc_want)
    return tpuci__logres_fail(r, tpuci__printf("%s: its bytes differ from what was sent "
                                               "(CRC-32 %08x, sent %08x)",
                                               r->name, (unsigned) r->crc, (unsigned) r->crc_want));
  r->whole++;
  tpuci__logres_close(r);
  return 1;
}

/* Whether p (len) starts with word `w` and a space (or is just `w`); *rest. */
static int tpuci__logres_word(const char *p, size_t len, const char *w, const char **rest,
                              size_t *rest_len) {
  size_t n = strlen(w);
  if (len < n || memcmp(p, w, n) != 0) return 0;
  if (len == n) {
    *rest = p + n;
    *rest_len = 0;
    return 1;
  }
  if (p[n] != ' ') return 0;
  *rest = p + n + 1;
  *rest_len = len - n - 1;
  return 1;
}

int tpuci__logres_line(tpuci__logres_t *r, const char *p, size_t len) {
  const char *rest;
  size_t n;
  if (tpuci__logres_word(p, len, "d", &rest, &n)) return tpuci__logres_data(r, rest, n);
  if (tpuci__logres_word(p, len, "file", &rest, &n)) return tpuci__logres_file(r, rest, n);
  if (tpuci__logres_word(p, len, "end", &rest, &n)) return tpuci__logres_end(r, rest, n);
  if (!tpuci__logres_word(p, len, "results", &rest, &n)) return 0;
  if (n == 2 && memcmp(rest, "on", 2) == 0) {
    r->announced = 1;
  } else if ((n > 6 && memcmp(rest, "begin ", 6) == 0) ||
             (n > 9 && memcmp(rest, "snapshot ", 9) == 0)) {
    /* A block: its files replace those of any before. */
    if (r->name != NULL)
      return tpuci__logres_fail(
          r, tpuci__printf("%s: %" PRIu64 " of %" PRIu64 " bytes, then another block began",
                           r->name, r->got, r->size));
    r->begun = 1;
    r->final = rest[0] == 'b';
    r->ended = 0;
    r->whole = 0;
    r->files = strtol(rest + (r->final ? 6 : 9), NULL, 10);
  } else if (n > 4 && memcmp(rest, "end ", 4) == 0) {
    if (r->name != NULL)
      return tpuci__logres_fail(
          r, tpuci__printf("%s: %" PRIu64 " of %" PRIu64 " bytes, then the block ended", r->name,
                           r->got, r->size));
    r->ended = 1;
  }
  return 1;
}

char *tpuci__logres_check(const tpuci__logres_t *r) {
  if (!r->announced && !r->begun) return NULL;
  if (r->err != NULL) return tpuci__strdup(r->err);
  if (r->name != NULL)
    return tpuci__printf("%s: %" PRIu64 " of %" PRIu64 " bytes, then the log ended", r->name,
                         r->got, r->size);
  if (!r->begun) return tpuci__strdup("the log ended before the results were sent");
  if (!r->ended || r->whole != r->files)
    return tpuci__printf("%ld of %ld file%s, then the log ended", r->whole, r->files,
                         r->files == 1 ? "" : "s");
  /* A whole snapshot without a last block: pytest outlived a SIGTERM
   * until its SIGKILL; the snapshot is what it left. */
  return NULL;
}

int tpuci__logres_done(const tpuci__logres_t *r) {
  return r->final && r->ended && r->err == NULL && r->whole == r->files;
}
