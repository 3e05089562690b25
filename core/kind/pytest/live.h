/* The test a running pytest attempt is in, read as it runs: each host's
 * progress.jsonl followed from where the last look stopped (only the
 * bytes added since), for the console's board and alive lines. Part of
 * core/kind/pytest/ (pytest_run.h says what the folder may use). */
#ifndef TPUCI_PYTEST_LIVE_H
#define TPUCI_PYTEST_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "base/idmap.h"
#include "base/util.h"

typedef struct {
  char *path;      /* this host's progress.jsonl */
  uint64_t offset; /* bytes read so far */
  char *partial;   /* a line not ended yet */
  size_t partial_len;
  char *running;     /* the test started and not torn down, or NULL */
  uint64_t since_ms; /* its start (epoch ms: the progress line's "t", else the look) */
} tpuci__live_host_t;

/* A test that failed, as progress reported it (its setup, call or
 * teardown failed). */
typedef struct {
  char *id;
  char *message; /* the first line of what was raised, or NULL */
} tpuci__live_fail_t;

typedef struct {
  tpuci__live_host_t *hosts;
  size_t n;
  /* Tests seen failing since the last tpuci__live_failed() (each once an
   * attempt: host 0's reports, a gang's others left out). */
  tpuci__live_fail_t *failed;
  size_t nfailed, capfailed;
  tpuci__strv_t failed_ids; /* every test seen failing (the map's keys) */
  tpuci__idmap_t failed_seen;
} tpuci__live_t;

/* Follows the progress files of an attempt of `hosts` hosts whose results
 * folder is results_dir (a gang's hosts write worker-<i>/). */
void tpuci__live_init(tpuci__live_t *lv, const char *results_dir, int hosts);
void tpuci__live_free(tpuci__live_t *lv);

/* Reads what each host's file gained (a missing file is no progress
 * yet). `now_ms` stamps tests seen starting. */
void tpuci__live_poll(tpuci__live_t *lv, uint64_t now_ms);

/* Hands over the tests seen failing since the last call (*n of them; the
 * caller frees each with tpuci__live_fail_free() and the array with
 * free()); NULL when none. */
tpuci__live_fail_t *tpuci__live_failed(tpuci__live_t *lv, size_t *n);
void tpuci__live_fail_free(tpuci__live_fail_t *f);

/* The running tests as text: "X" for one host; for a gang "X on all 2
 * hosts" or "X on worker-0, Y on worker-1" (hosts in no test left out);
 * NULL when no host is in a test. *since_ms: the earliest start. New
 * string. */
char *tpuci__live_text(const tpuci__live_t *lv, uint64_t *since_ms);

/* The same text for any per-host list of running tests (entries may be
 * NULL), appended to b; nothing when all are NULL. */
void tpuci__running_list_text(tpuci__buf_t *b, const char *const *running, size_t n);

#endif /* TPUCI_PYTEST_LIVE_H */
