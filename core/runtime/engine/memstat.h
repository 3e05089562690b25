/* How close a container came to its memory limit, from the engine's
 * stats stream (GET /containers/{id}/stats?stream=1: a JSON object per
 * line, about every second while it runs). For a container that ended
 * by a SIGKILL nobody here sent, under a memory limit, when the engine
 * reported no OOM kill (State.OOMKilled false: Docker misses the kernel's
 * OOM kills of containers that die right after their start, and some
 * under load): the stats say whether the limit was reached. Pure but for
 * the stream's bytes it is fed. */
#ifndef TPUCI_ENGINE_MEMSTAT_H
#define TPUCI_ENGINE_MEMSTAT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

typedef struct {
  tpuci__buf_t line; /* a line not complete yet */
  uint64_t peak;     /* the most it used: max_usage (cgroup v1, the
                             high-water mark) or usage (v2), in bytes */
  uint64_t limit;    /* memory_stats.limit, 0 until a sample says */
  int samples;       /* samples of a running container */
} tpuci__memstat_t;

void tpuci__memstat_init(tpuci__memstat_t *m);
void tpuci__memstat_free(tpuci__memstat_t *m);
/* One stats object (borrowed). */
void tpuci__memstat_sample(tpuci__memstat_t *m, json_t *stats);
/* A chunk of the stream (a tpuci__http_chunk_cb): its whole lines are
 * samples. A line that is not JSON is skipped. */
void tpuci__memstat_chunk(void *m, const char *buf, size_t len);
/* Whether a sample showed the container at its memory limit: the peak
 * within 1% of the limit (the stats' own, else `limit`). */
int tpuci__memstat_reached(const tpuci__memstat_t *m, uint64_t limit);

#endif /* TPUCI_ENGINE_MEMSTAT_H */
