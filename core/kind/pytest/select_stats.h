/* What each selecting run saved and what its audit found
 * (docs/pytest.md, "The audit"): one line per instance group per run in
 * the state folder's select.jsonl, and `tpuci select --stats`, the report
 * of them: the share of tests and of recorded test time left out, and the
 * audited miss rate. */
#ifndef TPUCI_PYTEST_SELECT_STATS_H
#define TPUCI_PYTEST_SELECT_STATS_H

#include <stddef.h>

#include "base/util.h"

#define TPUCI__SELECT_FILE "select.jsonl"
/* The lines kept: the newest. */
#define TPUCI__SELECT_KEEP 2000

typedef struct {
  const char *run, *instance;
  int all;             /* every test ran (no record, a change nothing accounts for) */
  size_t recorded;     /* tests the record knew */
  size_t left_out;     /* left out, not run */
  size_t audited;      /* left out, but run by the audit */
  size_t missed;       /* audited tests that failed */
  double time_total_s; /* recorded durations of the recorded tests */
  double time_left_s;  /* of those left out */
} tpuci__select_line_t;

/* Appends the lines to state_dir/select.jsonl, keeping the newest
 * TPUCI__SELECT_KEEP (the caller holds the state folder's lock). 0, or a
 * negative code with err. */
int tpuci__select_stats_append(const char *state_dir, const tpuci__select_line_t *lines, size_t n,
                               tpuci__err_t *err);

/* The report of state_dir/select.jsonl, per instance: runs, the share of
 * tests and of time left out, audited tests, misses and the miss rate; as
 * text or JSON. 0 and *out, TPUCI_ENOMATCH when there is no line yet, or
 * another negative code with err. */
int tpuci__select_stats_report(const char *state_dir, int json, char **out, tpuci__err_t *err);

#endif /* TPUCI_PYTEST_SELECT_STATS_H */
