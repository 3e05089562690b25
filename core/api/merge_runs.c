/* Several run folders made one record: `tpuci merge` (docs/reports.md,
 * "Merging runs"). Each folder's summary.json gives its instances, whose
 * logs are then named where the folder is now; the merged JUnit is the
 * folders' junit.xml put together (tpuci__junit_merge_files()); the
 * reports are written from the merged tree by the run's own writers. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/ctx.h"
#include "base/idmap.h"
#include "kind/pytest/junit.h"
#include "report/report.h"

void tpuci_merge_options_init(tpuci_merge_options_t *opts) {
  memset(opts, 0, sizeof(*opts));
  opts->size = sizeof(*opts);
}

/* "DIR" without its trailing slashes (a new string). */
static char *tpuci__merge_dir(const char *dir) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--;
  return tpuci__strndup(dir, n);
}

/* A run folder's summary.json, or an error that names the folder. */
static int tpuci__merge_read(const char *dir, json_t **out, tpuci__err_t *e) {
  struct stat st;
  char *path;
  int r;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return tpuci__err_set(e, TPUCI_EUSAGE, "%s: no such run folder", dir);
  path = tpuci__printf("%s/summary.json", dir);
  r = tpuci__read_summary_file(path, " (not a tpuci run folder, or its run did not finish)", out,
                               e);
  free(path);
  return r;
}

/* The logs of a run's instance, recorded below the run's folder as it
 * was (`was`, the summary's run_dir), named below `dir`, where it is. */
static void tpuci__merge_relocate(json_t *inst, const char *was, const char *dir) {
  size_t k, n = strlen(was);
  json_t *att;
  json_array_foreach(json_object_get(inst, "attempts"), k, att) {
    const char *log = json_string_value(json_object_get(att, "log"));
    char *moved;
    if (log == NULL || n == 0 || strncmp(log, was, n) != 0 || log[n] != '/') continue;
    moved = tpuci__printf("%s%s", dir, log + n);
    json_object_set_new(att, "log", json_string(moved));
    free(moved);
  }
}

/* What the runs say together: interrupted when one was, not run when none
 * ran, failed when one failed or did not run, else passed. */
static int tpuci__merge_verdict(const int *verdicts, size_t n) {
  size_t k, not_run = 0;
  int failed = 0;
  for (k = 0; k < n; k++) {
    if (verdicts[k] == 130) return 130;
    if (verdicts[k] == 3) not_run++;
    else if (verdicts[k] != 0) failed = 1;
  }
  if (not_run == n) return 3;
  return failed || not_run > 0 ? 1 : 0;
}

/* Whether writing `path` failed. */
static int tpuci__merge_failed(const tpuci__run_t *run, const char *path) {
  size_t k;
  for (k = 0; k < run->write_paths.len; k++)
    if (strcmp(run->write_paths.items[k], path) == 0) return 1;
  return 0;
}

/* Writes one output of the merge; a failure is recorded (exit code 4). */
static void tpuci__merge_write(tpuci__run_t *run, const char *format, const char *path,
                               const tpuci__buf_t *junit) {
  tpuci__err_t e = {0, NULL};
  int r;
  if (path == NULL) return;
  tpuci__report_set_records(run->report, run->exit_code, &run->write_paths, &run->write_errors);
  if (junit != NULL) r = tpuci__write_file_atomic(path, junit->data, junit->len);
  else r = tpuci__report_write(run->report, format, path, &e);
  tpuci__err_clear(&e);
  if (r == 0) return;
  tpuci__strv_push(&run->write_paths, path);
  tpuci__strv_push(&run->write_errors, tpuci__strerror(r));
  tpuci__strv_take(&run->ctx->plan.warnings,
                   tpuci__printf("cannot write %s: %s", path, tpuci__strerror(r)));
  if (run->verdict == 0 || run->verdict == 1) run->exit_code = TPUCI__EXIT_RECORDS;
}

/* Whether a run before runs[k] has spec `sp` too (whole names: pytest.lua
 * is not ci/pytest.lua). */
static int tpuci__merge_spec_seen(json_t **runs, size_t k, const char *sp) {
  size_t j;
  for (j = 0; j < k; j++) {
    const char *o = json_string_value(json_object_get(runs[j], "spec"));
    if (o != NULL && strcmp(o, sp) == 0) return 1;
  }
  return 0;
}

/* The merged tree of the runs' trees (each read from dirs[k]). */
static json_t *tpuci__merge_tree(json_t **runs, char **dirs, size_t n, int verdict,
                                 int incomplete) {
  json_t *root = json_object(), *insts = json_array(), *merged = json_array();
  json_t *errors = json_array(), *quar = json_null(), *inst, *v;
  tpuci__buf_t error, spec;
  uint64_t start = 0, end = 0;
  size_t k, i, n_out[TPUCI_OUTCOME__COUNT] = {0}, total = 0;
  const char *commit = NULL;
  int jobs = 0, mixed_commit = 0, o;
  char *id;

  tpuci__buf_init(&error);
  tpuci__buf_init(&spec);
  for (k = 0; k < n; k++) {
    json_t *r = runs[k], *m = json_object();
    uint64_t s = (uint64_t) json_integer_value(json_object_get(r, "start_ms"));
    uint64_t e = s + (uint64_t) json_integer_value(json_object_get(r, "duration_ms"));
    const char *c = json_string_value(json_object_get(r, "commit"));
    const char *sp = json_string_value(json_object_get(r, "spec"));
    const char *er = json_string_value(json_object_get(r, "error"));
    if (k == 0 || s < start) start = s;
    if (e > end) end = e;
    jobs += (int) json_integer_value(json_object_get(r, "jobs"));
    if (k == 0) commit = c;
    else if (!(c == commit || (c && commit && strcmp(c, commit) == 0))) mixed_commit = 1;
    if (sp && *sp && !tpuci__merge_spec_seen(runs, k, sp))
      tpuci__buf_addf(&spec, "%s%s", spec.len ? ", " : "", sp);
    if (er) tpuci__buf_addf(&error, "%s%s: %s", error.len ? "; " : "", dirs[k], er);
    json_array_foreach(json_object_get(r, "instances"), i, inst) {
      o = tpuci__outcome_parse(json_string_value(json_object_get(inst, "outcome")));
      n_out[o < 0 ? TPUCI_OUTCOME_NONE : o]++;
      total++;
      json_array_append(insts, inst);
    }
    json_array_foreach(json_object_get(r, "write_errors"), i, v) json_array_append(errors, v);
    if (json_is_null(quar) && json_is_object(json_object_get(r, "quarantine"))) {
      json_decref(quar);
      quar = json_incref(json_object_get(r, "quarantine"));
    }
    json_object_set(m, "run_id", json_object_get(r, "run_id"));
    json_object_set_new(m, "run_dir", json_string(dirs[k]));
    json_object_set(m, "verdict", json_object_get(r, "verdict"));
    json_object_set(m, "exit_code", json_object_get(r, "exit_code"));
    json_array_append_new(merged, m);
  }
  id = n == 1
           ? tpuci__strdup(json_string_value(json_object_get(runs[0], "run_id")))
           : tpuci__printf("%s+%zu", json_string_value(json_object_get(runs[0], "run_id")), n - 1);
  json_object_set_new(root, "version", json_integer(TPUCI__REPORT_VERSION));
  json_object_set_new(root, "run_id", json_string(id));
  json_object_set_new(root, "run_dir", json_string(""));
  json_object_set_new(root, "spec", json_string(spec.data ? spec.data : ""));
  json_object_set_new(root, "start_ms", json_integer((json_int_t) start));
  json_object_set_new(root, "duration_ms", json_integer((json_int_t) (end - start)));
  json_object_set_new(root, "jobs", json_integer(jobs > 0 ? jobs : 1));
  json_object_set_new(
      root, "exit_code",
      json_integer(incomplete && (verdict == 0 || verdict == 1) ? TPUCI__EXIT_RECORDS : verdict));
  json_object_set_new(root, "verdict", json_string(tpuci__report_verdict(verdict)));
  json_object_set_new(root, "error", error.data ? json_string(error.data) : json_null());
  json_object_set(root, "tpuci_version", json_object_get(runs[0], "tpuci_version"));
  json_object_set_new(root, "commit", commit && !mixed_commit ? json_string(commit) : json_null());
  json_object_set_new(root, "write_errors", errors);
  json_object_set_new(root, "counts", tpuci__report_counts(n_out, total));
  json_object_set_new(root, "instances", insts);
  if (!json_is_null(quar)) json_object_set(root, "quarantine", quar);
  json_decref(quar);
  json_object_set_new(root, "merged", merged);
  /* An unknown tpuci_version (a summary without one) is left out. */
  if (!json_is_string(json_object_get(root, "tpuci_version")))
    json_object_del(root, "tpuci_version");
  free(id);
  tpuci__buf_free(&error);
  tpuci__buf_free(&spec);
  return root;
}

int tpuci_merge_runs(tpuci_ctx_t *ctx, const char *const *run_dirs, size_t n,
                     const tpuci_merge_options_t *opts, tpuci_run_t **out) {
  tpuci__run_t *run = NULL;
  tpuci_merge_options_t o;
  tpuci__err_t e = {0, NULL};
  tpuci__idmap_t seen;
  tpuci__buf_t junit;
  json_t **runs;
  char **dirs, **junits;
  int *verdicts, verdict, incomplete = 0, r = 0;
  size_t k, i, at;

  if (out != NULL) *out = NULL;
  if (ctx == NULL || opts == NULL || out == NULL || (n > 0 && run_dirs == NULL))
    return TPUCI_EUSAGE;
  tpuci_merge_options_init(&o);
  if (tpuci__struct_in(&o, sizeof(o), opts, TPUCI__MERGE_OPTIONS_MIN) != 0) return TPUCI_EUSAGE;
  if (n == 0) {
    tpuci__err_set(&e, TPUCI_EUSAGE, "no run folder to merge");
    return tpuci__fail(ctx, &e);
  }
  runs = tpuci__calloc(n, sizeof(*runs));
  dirs = tpuci__calloc(n, sizeof(*dirs));
  junits = tpuci__calloc(n, sizeof(*junits));
  verdicts = tpuci__calloc(n, sizeof(*verdicts));
  tpuci__idmap_init(&seen);
  tpuci__buf_init(&junit);
  for (k = 0; k < n && r == 0; k++) {
    json_t *inst;
    const char *was;
    dirs[k] = tpuci__merge_dir(run_dirs[k]);
    junits[k] = tpuci__printf("%s/junit.xml", dirs[k]);
    if ((r = tpuci__merge_read(dirs[k], &runs[k], &e)) != 0) break;
    was = json_string_value(json_object_get(runs[k], "run_dir"));
    verdicts[k] =
        tpuci__report_verdict_code(json_string_value(json_object_get(runs[k], "verdict")));
    if (verdicts[k] < 0) verdicts[k] = 1;
    incomplete |= json_integer_value(json_object_get(runs[k], "exit_code")) == TPUCI__EXIT_RECORDS;
    json_array_foreach(json_object_get(runs[k], "instances"), i, inst) {
      const char *name = json_string_value(json_object_get(inst, "name"));
      if (name == NULL || *name == '\0') {
        r = tpuci__err_set(&e, TPUCI_EIO, "%s/summary.json: instance record %zu has no name",
                           dirs[k], i + 1);
        break;
      }
      if ((at = tpuci__idmap_get(&seen, name)) != TPUCI__IDMAP_NONE) {
        r = tpuci__err_set(&e, TPUCI_EUSAGE,
                           "instance '%s' is in both %s and %s: merge the "
                           "folders of runs of different instances (tpuci run --only)",
                           name, dirs[at], dirs[k]);
        break;
      }
      tpuci__idmap_put(&seen, name, k);
      tpuci__merge_relocate(inst, was ? was : "", dirs[k]);
    }
  }
  if (r == 0 && o.junit != NULL)
    r = tpuci__junit_merge_files(&junit, (const char *const *) junits, n, &e);
  if (r == 0) {
    verdict = tpuci__merge_verdict(verdicts, n);
    run = tpuci__run_new(ctx);
    tpuci__load_record(run, tpuci__merge_tree(runs, dirs, n, verdict, incomplete));
    run->verdict = verdict;
    run->exit_code = (int) json_integer_value(json_object_get(run->report, "exit_code"));
    /* The merged summary last, so that it lists every file that failed. */
    tpuci__merge_write(run, "junit", o.junit, &junit);
    tpuci__merge_write(run, "html", o.report_html, NULL);
    tpuci__merge_write(run, "yaml", o.report_yaml, NULL);
    tpuci__merge_write(run, "json", o.report_json, NULL);
    tpuci__report_set_records(run->report, run->exit_code, &run->write_paths, &run->write_errors);
    if (o.report_json && !tpuci__merge_failed(run, o.report_json))
      run->summary_path = tpuci__strdup(o.report_json);
    *out = run;
  }
  for (k = 0; k < n; k++) {
    json_decref(runs[k]);
    free(dirs[k]);
    free(junits[k]);
  }
  free(runs);
  free(dirs);
  free(junits);
  free(verdicts);
  tpuci__idmap_free(&seen);
  tpuci__buf_free(&junit);
  if (r != 0) return tpuci__fail(ctx, &e);
  return 0;
}
