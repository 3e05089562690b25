/* core/export/: the plan written out for another system to run (`tpuci
 * export`). It reads the plan only (and core/kind/pytest/ for pytest command
 * lines), and may use core/plan/ and core/base/; only core/api/ calls it.
 *
 * A GitHub Actions workflow that runs a spec with tpuci (`tpuci export
 * github`): it builds tpuci from source (cached between runs), gets the
 * spec's images onto the runner, restores the recorded test durations,
 * runs the spec and uploads the reports and run folders. github.c writes
 * the document and github_steps.c its steps and helper jobs.
 * docs/github.md describes the workflow. */
#ifndef TPUCI_EXPORT_GITHUB_H
#define TPUCI_EXPORT_GITHUB_H

#include <yaml.h>

#include "plan/plan.h"
#include "base/emit.h"
#include "base/util.h"

/* GitHub's cap on the jobs one matrix may generate. */
#define TPUCI__GITHUB_MATRIX_MAX 256
/* GitHub's cap on timeout-minutes (72 hours, self-hosted runners). */
#define TPUCI__GITHUB_TIMEOUT_MAX 4320

typedef struct {
  /* The spec's path from the repository's root, as the workflow passes it
   * to `tpuci run`. NULL: the plan's spec_path, which must then be
   * relative. */
  const char *spec;
  /* A git URL of tpuci's sources and a branch, tag or commit in it. NULL:
   * build_url and build_commit. */
  const char *source_url;
  const char *source_ref;
  /* Where the running tpuci was built from (tpuci__build_source_*:
   * core/api/ fills them), the defaults of source_url and source_ref, or
   * NULL when the build recorded none: then source_url (and without a
   * commit, source_ref) must be given. */
  const char *build_url;
  const char *build_commit;
  /* The URL of a .deb of tpuci that the workflow installs instead of
   * building tpuci (`--package`), or NULL. Not with source_url or
   * source_ref; build_url and build_commit do not matter then. */
  const char *package;
  /* The workflow's name. NULL: "tpuci". */
  const char *name;
  /* One workflow job per tpuci job (a matrix over the job names, each
   * entry running `tpuci run --only JOB`; a sharded pytest job has an
   * entry per shard) instead of one workflow job running the whole spec. */
  int per_job;
  /* runs-on: one label, or several (all must match). None:
   * ubuntu-latest. */
  const char *const *runs_on;
  size_t n_runs_on;
  /* timeout-minutes of the workflow job(s); 0: GitHub's default (360). */
  int timeout_minutes;
  /* The workflow's concurrency group, or NULL; with cancel_in_progress a
   * new run cancels the group's running one. */
  const char *concurrency;
  int cancel_in_progress;
  /* A cron schedule the workflow also runs on (5 fields, checked:
   * tpuci__github_cron_check()), or NULL. The workflow always runs on
   * push, pull_request and workflow_dispatch (by hand). */
  const char *schedule;
  /* The spec was loaded for real TPU hardware (tpuci_set_real): the
   * workflow runs `tpuci run --real`. */
  int real;
} tpuci__export_opts_t;

/* Fills `opts` with the defaults (every field NULL or 0). */
void tpuci__export_opts_init(tpuci__export_opts_t *opts);

/* Appends the workflow for `plan` to `out`, as YAML written by libyaml's
 * emitter. `opts` may be NULL for the defaults. The output depends only
 * on the plan's job names (in the order they first appear) and the
 * options. Returns 0, or TPUCI_EUSAGE with a one-line message in `err`
 * (which may be NULL) when no source of tpuci is known (no package,
 * source_url or build_url; no source_ref or build_commit), when a package
 * comes with a source, when the spec path is missing or absolute, when
 * per_job is set and the plan has no job or more than
 * TPUCI__GITHUB_MATRIX_MAX, or when a string is not valid UTF-8;
 * TPUCI_ENOMEM when the emitter cannot start. On error `out` is left as
 * it was. */
int tpuci__export_github(const tpuci__plan_t *plan, const tpuci__export_opts_t *opts,
                         tpuci__buf_t *out, tpuci__err_t *err);

/* A GitHub job id from any name: letters, digits, '-' and '_' stay, runs
 * of anything else become one '-', the result starts with a letter or '_'
 * (a '_' is put in front otherwise) and has at most 64 characters. Returns
 * a new string, never empty. */
char *tpuci__github_id(const char *name);

/* Checks a cron schedule as GitHub reads one: 5 fields (minute 0-59,
 * hour 0-23, day of the month 1-31, month 1-12 or JAN-DEC, day of the
 * week 0-6 or SUN-SAT), each `*`, a number or name, a range `a-b`, any
 * of them with a step `/n`, or a comma-separated list of those. Returns
 * NULL, or a new string saying what is wrong. */
char *tpuci__github_cron_check(const char *cron);

/* The registry host of an image reference ("ghcr.io" for
 * "ghcr.io/org/img:1"), or NULL when it names none (Docker Hub) or
 * names localhost. A new string. */
char *tpuci__image_registry(const char *ref);
/* The secrets a registry's login step reads: "TPUCI_REGISTRY_" and the
 * host in upper case with every other character '_', then "_USERNAME"
 * or "_PASSWORD". A new string. */
char *tpuci__registry_secret(const char *host, const char *what);

#endif /* TPUCI_EXPORT_GITHUB_H */
