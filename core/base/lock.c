/* The state folder's lock (lock.h). */
#include "base/lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

/* A short pause between two tries (the holder writes a few files). */
static void tpuci__lock_pause(void) {
  struct timespec ts = {0, 10 * 1000 * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

int tpuci__state_lock(const char *dir, uint64_t wait_ms, tpuci__err_t *err) {
  char *path;
  uint64_t start = tpuci__now_ms();
  int fd, r = tpuci__mkdir_p(dir, 0755);

  path = tpuci__printf("%s/%s", dir, TPUCI__STATE_LOCK_FILE);
  if (r != 0) {
    tpuci__err_set(err, r, "cannot lock %s: %s", path, tpuci_strerror(r));
    free(path);
    return r;
  }
  fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    r = TPUCI__ERRNO;
    tpuci__err_set(err, r, "cannot lock %s: %s", path, tpuci_strerror(r));
    free(path);
    return r;
  }
  /* Non-blocking tries, so that a holder that never lets go (a stopped
   * process) costs a bounded wait, not a hung run. */
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      r = TPUCI__ERRNO;
      break;
    }
    if (tpuci__now_ms() - start >= wait_ms) {
      r = UV_ETIMEDOUT;
      break;
    }
    tpuci__lock_pause();
  }
  if (r != 0) {
    tpuci__err_set(err, r, "cannot lock %s: %s", path,
                   r == UV_ETIMEDOUT ? "another run held it too long" : tpuci_strerror(r));
    close(fd);
    free(path);
    return r;
  }
  free(path);
  return fd;
}

void tpuci__state_unlock(int fd) {
  if (fd < 0) return;
  flock(fd, LOCK_UN);
  close(fd);
}
