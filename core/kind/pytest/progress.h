/* What an attempt's progress.jsonl says, host by host (the bootstrap of
 * pytest_run.c writes it as pytest runs: docs/pytest.md). */
#ifndef TPUCI_PYTEST_PROGRESS_H
#define TPUCI_PYTEST_PROGRESS_H

#include "kind/pytest/junit.h"
#include "base/util.h"

/* What progress.jsonl says of an attempt (of one host of a gang). */
typedef struct {
  char *rootdir; /* pytest's rootdir, or NULL */
  char *running; /* the test started last and not finished, or NULL */
  int has_collection;
  tpuci__strv_t collected; /* what pytest collected, in run order */
} tpuci__progress_t;

void tpuci__progress_free(tpuci__progress_t *pr);

/* Reads results_dir's progress.jsonl into `pr` (zeroed, or freed with
 * tpuci__progress_free): pytest's rootdir, its collection, the test that
 * was running when the attempt ended, and, when `j` is not NULL, the
 * tests pytest reported (what stands for the JUnit file of an attempt
 * stopped before it wrote one, and what a failed gang's cause compares
 * host by host). Returns 1 when it added tests to `j`. */
int tpuci__progress_read(const char *results_dir, tpuci__junit_t *j, tpuci__progress_t *pr);

/* The tests the plugin left out as unaffected (deps.h), appended to
 * out. */
void tpuci__progress_unaffected(const char *results_dir, tpuci__strv_t *out);

#endif /* TPUCI_PYTEST_PROGRESS_H */
