/* The run folder and the records written into it. */
#include "report/rundir.h"
#include "report/report.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* 16 random bits from the kernel, or from the clock and pid. */
static unsigned tpuci__random16(void) {
  unsigned char b[2];
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = read(fd, b, sizeof(b));
    close(fd);
    if (n == 2) return (unsigned) b[0] << 8 | b[1];
  }
  return (unsigned) ((uv_hrtime() >> 10) ^ (uint64_t) getpid()) & 0xffffu;
}

int tpuci__rundir_create(tpuci__rundir_t *rd, const char *state_dir, tpuci__err_t *err) {
  char stamp[32], *runs, *jsonl;
  time_t now = time(NULL);
  struct tm tm;
  int r, tries;

  memset(rd, 0, sizeof(*rd));
  rd->jsonl_fd = -1;
  gmtime_r(&now, &tm);
  strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  runs = tpuci__printf("%s/runs", state_dir);
  r = tpuci__mkdir_p(runs, 0755);
  if (r != 0) {
    tpuci__err_set(err, r, "cannot create %s: %s", runs, uv_strerror(r));
    free(runs);
    return r;
  }
  /* Absolute: jobs run in other folders (workdir, containers' mounts)
   * and must still find their results folder. */
  {
    char *abs = realpath(runs, NULL);
    if (abs == NULL) {
      r = TPUCI__ERRNO;
      tpuci__err_set(err, r, "cannot resolve %s: %s", runs, uv_strerror(r));
      free(runs);
      return r;
    }
    free(runs);
    runs = abs;
  }
  /* The id is the UTC time and four random hex digits: unique in this
   * folder (mkdir fails on a clash and we draw again), and unlikely to
   * clash with a run from another folder on the same engine, whose
   * containers carry the id as a label. */
  for (tries = 0;; tries++) {
    rd->id = tpuci__printf("%s-%04x", stamp, tpuci__random16());
    rd->dir = tpuci__printf("%s/%s", runs, rd->id);
    if (mkdir(rd->dir, 0755) == 0) break;
    r = TPUCI__ERRNO;
    free(rd->id);
    free(rd->dir);
    rd->id = rd->dir = NULL;
    if (r != UV_EEXIST || tries > 100) {
      tpuci__err_set(err, r, "cannot create a run folder in %s: %s", runs, uv_strerror(r));
      free(runs);
      return r;
    }
  }
  /* runs/latest -> <id>, replaced atomically. */
  {
    char *t2 = tpuci__printf("%s/.latest.%d", runs, (int) getpid());
    rd->latest = tpuci__printf("%s/latest", runs);
    unlink(t2);
    if (symlink(rd->id, t2) != 0) {
      rd->latest_err = TPUCI__ERRNO;
    } else if (rename(t2, rd->latest) != 0) {
      rd->latest_err = TPUCI__ERRNO;
      unlink(t2);
    }
    free(t2);
  }
  free(runs);

  jsonl = tpuci__rundir_jsonl_path(rd);
  rd->jsonl_fd = open(jsonl, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (rd->jsonl_fd < 0) {
    r = TPUCI__ERRNO;
    tpuci__err_set(err, r, "cannot create %s: %s", jsonl, uv_strerror(r));
    free(jsonl);
    return r;
  }
  free(jsonl);
  return 0;
}

char *tpuci__rundir_jsonl_path(const tpuci__rundir_t *rd) {
  return tpuci__printf("%s/attempts.jsonl", rd->dir);
}

char *tpuci__rundir_summary_path(const tpuci__rundir_t *rd) {
  return tpuci__printf("%s/summary.json", rd->dir);
}

/* Cuts a partly written line off attempts.jsonl. */
static int tpuci__jsonl_cut(tpuci__rundir_t *rd) {
  return ftruncate(rd->jsonl_fd, (off_t) rd->jsonl_len) == 0 ? 0 : TPUCI__ERRNO;
}

int tpuci__rundir_append(tpuci__rundir_t *rd, const tpuci__instance_t *inst, int number,
                         const tpuci__attempt_result_t *res) {
  json_t *o;
  char *line;
  size_t len, off = 0;
  int r = 0;

  if (rd->jsonl_fd < 0) return 0;
  o = tpuci__report_attempt(number, res, 0);
  json_object_set_new(o, "instance", json_string(inst->name));
  line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(o);
  if (line == NULL) return TPUCI_ENOMEM;
  len = strlen(line);
  line[len++] = '\n'; /* json_dumps leaves room: replace the NUL. */
  while (off < len) {
    ssize_t n = write(rd->jsonl_fd, line + off, len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      r = n < 0 ? TPUCI__ERRNO : UV_EIO;
      break;
    }
    off += (size_t) n;
  }
  free(line);
  if (r == 0) rd->jsonl_len += (int64_t) len;
  else if (off > 0) tpuci__jsonl_cut(rd);
  return r;
}

void tpuci__rundir_close(tpuci__rundir_t *rd) {
  if (rd->jsonl_fd >= 0) close(rd->jsonl_fd);
  free(rd->id);
  free(rd->dir);
  free(rd->latest);
  memset(rd, 0, sizeof(*rd));
  rd->jsonl_fd = -1;
}
