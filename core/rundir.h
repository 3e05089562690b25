/* The run folder: .tpuci/runs/<run-id>/ with per-attempt logs,
 * attempts.jsonl (one line per finished attempt, appended as they end, so
 * a killed tpuci loses nothing already done) and summary.json (written at
 * the end), and the `latest` link beside the runs. */
#ifndef TPUCI_RUNDIR_H
#define TPUCI_RUNDIR_H

#include <jansson.h>

#include "plan.h"
#include "scheduler.h"
#include "util.h"

typedef struct {
  char *id;               /* "20261202-143015-1a2b" */
  char *dir;              /* "<state>/runs/<id>" */
  int jsonl_fd;
} tpuci__rundir_t;

/* Creates the folder under `state_dir` and points `latest` at it. */
int tpuci__rundir_create(tpuci__rundir_t *rd, const char *state_dir,
                         tpuci__err_t *err);

/* Appends one attempt's record to attempts.jsonl. */
void tpuci__rundir_append(tpuci__rundir_t *rd, const tpuci__instance_t *inst,
                          int number, const tpuci__attempt_result_t *res);

/* Writes the report as summary.json. */
int tpuci__rundir_summary(tpuci__rundir_t *rd, const json_t *report,
                          tpuci__err_t *err);

void tpuci__rundir_close(tpuci__rundir_t *rd);

#endif /* TPUCI_RUNDIR_H */
