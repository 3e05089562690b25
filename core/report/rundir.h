/* The run folder: .tpuci/runs/<run-id>/ with per-attempt logs,
 * attempts.jsonl (one line per finished attempt, appended as they end, so
 * a killed tpuci loses nothing already done) and summary.json (written at
 * the end), and the `latest` link beside the runs. */
#ifndef TPUCI_RUNDIR_H
#define TPUCI_RUNDIR_H

#include <jansson.h>

#include "plan/plan.h"
#include "kind/pytest/junit.h"
#include "sched/scheduler.h"
#include "base/util.h"

typedef struct {
  char *id;  /* "20261202-143015-1a2b" */
  char *dir; /* "<state>/runs/<id>" */
  int jsonl_fd;
  int64_t jsonl_len; /* bytes of whole lines in attempts.jsonl */
  char *latest;      /* "<state>/runs/latest" */
  int latest_err;    /* 0, or why `latest` could not be pointed here */
} tpuci__rundir_t;

/* Creates the folder under `state_dir` and points `latest` at it. A
 * `latest` that cannot be updated does not fail the call: latest_err says
 * why. */
int tpuci__rundir_create(tpuci__rundir_t *rd, const char *state_dir, tpuci__err_t *err);

/* Appends one attempt's record to attempts.jsonl. Returns 0 or a negative
 * code; a line that could not be written whole is cut off again, so the
 * file only ever holds whole lines. */
int tpuci__rundir_append(tpuci__rundir_t *rd, const tpuci__instance_t *inst, int number,
                         const tpuci__attempt_result_t *res);

/* The path of attempts.jsonl (a new string). */
char *tpuci__rundir_jsonl_path(const tpuci__rundir_t *rd);

/* The path of summary.json (a new string). */
char *tpuci__rundir_summary_path(const tpuci__rundir_t *rd);

void tpuci__rundir_close(tpuci__rundir_t *rd);

#endif /* TPUCI_RUNDIR_H */
