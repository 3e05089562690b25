/* core/report/: what a run leaves. The run folder with attempts.jsonl
 * and summary.json (rundir.h), the report tree (this header), written as
 * JSON, YAML (libyaml's emitter) and a self-contained HTML page
 * (report_html.h). It reads the scheduler's results and may use
 * core/sched/, core/kind/pytest/, core/runtime/, core/plan/ and core/base/;
 * only core/api/ calls it.
 *
 * The run report: one tree (Jansson) describing a run, written as
 * summary.json into the run folder, and on request as JSON (--report-json),
 * YAML (--report-yaml, with libyaml's emitter) and HTML. The schema is
 * docs/report.schema.json, described in docs/reports.md. */
#ifndef TPUCI_REPORT_H
#define TPUCI_REPORT_H

#include <jansson.h>

#include "plan/plan.h"
#include "kind/pytest/junit.h"
#include "sched/scheduler.h"
#include "base/util.h"

#define TPUCI__REPORT_VERSION 1

typedef struct {
  const char *run_id;
  const char *run_dir;
  uint64_t start_ms;
  uint64_t duration_ms;
  int exit_code;
  int verdict; /* what the instances say: 0, 1, 3 or 130 */
  int jobs;
  const char *error;  /* why nothing ran, or NULL */
  const char *commit; /* the spec's repository's commit, or NULL */
} tpuci__run_info_t;

/* The commit the git repository holding `dir` (absolute) is at: HEAD of
 * the nearest .git upwards (a folder, or a worktree's or submodule's
 * .git file), through loose refs and packed-refs. A new string of hex
 * digits, or NULL when there is no repository or HEAD names nothing. */
char *tpuci__git_commit(const char *dir);
/* The folder of that repository (the nearest one upwards from `dir`,
 * absolute, with a .git folder or file), or NULL. A new string. */
char *tpuci__git_root(const char *dir);

/* One attempt as a JSON object (also the attempts.jsonl line). */
json_t *tpuci__report_attempt(int number, const tpuci__attempt_result_t *res, int with_tail);

/* The last lines of a log file (at most 40 lines, 4 KiB; bytes that are
 * not UTF-8 become '?'), as a new string of *len bytes (it may hold NUL
 * bytes; a NUL follows the last), or NULL when there is none. */
char *tpuci__report_log_tail(const char *path, size_t *len);

/* The whole report. Returns a new reference. */
json_t *tpuci__report_build(const tpuci__plan_t *plan, const tpuci__instance_result_t *results,
                            const tpuci__run_info_t *info);

/* The report's "counts": n[outcome] instances of each outcome (NONE:
 * "not-run") and their total. A new reference. */
json_t *tpuci__report_counts(const size_t n[TPUCI_OUTCOME__COUNT], size_t total);

/* Sets what the report says of the run's own records: "exit_code" and
 * "write_errors", one {"path", "error"} per file that could not be
 * written (`paths` and `errors` are parallel). */
void tpuci__report_set_records(json_t *report, int exit_code, const tpuci__strv_t *paths,
                               const tpuci__strv_t *errors);

/* "passed", "failed", "interrupted", "not-run" from a verdict code (0, 1,
 * 130, 3). */
const char *tpuci__report_verdict(int code);
/* The other way round; -1 when unknown. */
int tpuci__report_verdict_code(const char *verdict);

/* Serialisations. The YAML mirrors the JSON tree exactly. */
char *tpuci__report_json_text(const json_t *report);
int tpuci__report_yaml_text(const json_t *report, char **out, tpuci__err_t *err);

/* Writes the report to `path` (atomically) as "json" or "yaml". */
int tpuci__report_write(const json_t *report, const char *format, const char *path,
                        tpuci__err_t *err);

#endif /* TPUCI_REPORT_H */
