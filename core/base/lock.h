/* The state folder's lock: runs that share one state folder (.tpuci, or
 * --state-dir: two terminals, parallel CI jobs) read, change and write
 * its files (history.jsonl, timings.json, collections.json) one at a
 * time, so that none loses another's update. Part of core/base/. */
#ifndef TPUCI_BASE_LOCK_H
#define TPUCI_BASE_LOCK_H

#include <stdint.h>

#include "base/util.h"

/* The lock file in the state folder (flock(2) on it; its content is
 * nothing). */
#define TPUCI__STATE_LOCK_FILE "state.lock"
/* How long tpuci__state_lock() waits for another run's hold. */
#define TPUCI__STATE_LOCK_WAIT_MS 60000

/* Takes the exclusive lock of state folder `dir` (made when missing):
 * an flock(2) on dir/state.lock, waited for at most wait_ms (another run
 * holds it for as long as it writes its files). Returns the descriptor
 * to give to tpuci__state_unlock(), or a negative code with err set:
 * the file cannot be made (a read-only folder), or UV_ETIMEDOUT when
 * another process held it all that time. */
int tpuci__state_lock(const char *dir, uint64_t wait_ms, tpuci__err_t *err);
/* Releases it (fd < 0: nothing). */
void tpuci__state_unlock(int fd);

#endif /* TPUCI_BASE_LOCK_H */
