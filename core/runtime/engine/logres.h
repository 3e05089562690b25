/* A pytest attempt's results folder brought back through its container's
 * log, for a task that may run on any node of a swarm (no folder of this
 * machine can be mounted there). tpuci's pytest bootstrap, told the
 * attempt's key in TPUCI_RESULTS_LOG (pytest_run.c), says so first, runs
 * pytest in a child process, and once it ended prints every file of the
 * results folder to stdout between lines that start with the key (which
 * the output filter takes out, output.h):
 *
 *   KEY results on                   at the start: a block will follow
 *   KEY results begin N              N files follow (the last block)
 *   KEY results snapshot N           the same, at a SIGTERM that pytest
 *                                    outlived (a later block replaces it)
 *   KEY file NAME SIZE CRC32         one file: its bytes, CRC-32 (zlib's)
 *   KEY d BASE64                     its bytes, in pieces, in order
 *   KEY end NAME
 *   KEY results end N
 *
 * This writes each file into the host's results folder here as it comes
 * and checks that everything announced arrived whole. */
#ifndef TPUCI_ENGINE_LOGRES_H
#define TPUCI_ENGINE_LOGRES_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  char *dir;     /* the host's results folder here */
  int announced; /* "results on" */
  int begun;     /* a block began ("results begin" or "snapshot") */
  int final;     /* ... and it is the last one ("begin") */
  int ended;     /* it ended ("results end") */
  long files;    /* announced by its first line */
  long whole;    /* files that arrived whole */
  /* The file being received. */
  int fd;
  char *name;
  uint64_t size, got;
  uint32_t crc, crc_want;
  char *err; /* the first thing that went wrong */
} tpuci__logres_t;

/* `dir` is copied; files are written there (it exists). */
void tpuci__logres_init(tpuci__logres_t *r, const char *dir);
/* One of the attempt's own lines (without its key and space): 1 when it
 * was a results line (taken), 0 when it is not one of these. */
int tpuci__logres_line(tpuci__logres_t *r, const char *rest, size_t len);
/* After the whole log was read: NULL when the last block (or, after a
 * SIGKILL, the snapshot) arrived whole, or none was announced; else what
 * is missing or wrong ("junit.xml: 1200 of 53000 bytes, then the log
 * ended"). New string. */
char *tpuci__logres_check(const tpuci__logres_t *r);
/* Whether the last block arrived whole (nothing more will come). */
int tpuci__logres_done(const tpuci__logres_t *r);
/* Also of one never initialised (all zero). */
void tpuci__logres_free(tpuci__logres_t *r);

#endif /* TPUCI_ENGINE_LOGRES_H */
