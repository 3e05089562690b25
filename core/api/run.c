/* Running the plan: the run folder, the scheduler on a loop, the
 * records written as attempts end and at the end, the exit code. */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "api/ctx.h"
#include "base/lock.h"
#include "kind/pytest/flaky.h"
#include "kind/pytest/pytest_run.h"
#include "kind/pytest/trace.h"
#include "report/report.h"

/* ------------------------------------------------------------------ */
/* Running                                                             */

void tpuci_run_options_init(tpuci_run_options_t *opts) {
  memset(opts, 0, sizeof(*opts));
  opts->size = sizeof(*opts);
}

/* What the instances say: 0 passed, 1 failed, 3 nothing ran or the
 * machines were not there (every instance that did not pass ended
 * preempted or no-capacity), 130 interrupted. */
static int tpuci__compute_verdict(const tpuci_ctx_t *ctx) {
  size_t i, applied = 0, na = 0;
  int failed = 0, capacity = 0;
  if (ctx->run.run_error) return 3;
  if (tpuci__sched_interrupted(ctx->run.sched)) return 130;
  for (i = 0; i < ctx->plan.ninstances; i++) {
    tpuci_outcome_t o = ctx->run.results[i].outcome;
    if (!ctx->plan.instances[i].selected) continue;
    /* run --test: a job that does not collect the test is neither. */
    if (o == TPUCI_OUTCOME_NOT_APPLICABLE) {
      na++;
      continue;
    }
    applied++;
    if (o == TPUCI_OUTCOME_PASSED || o == TPUCI_OUTCOME_CACHED) continue;
    if ((o == TPUCI_OUTCOME_FLAKY || o == TPUCI_OUTCOME_ORDER_DEPENDENT) &&
        !ctx->run.ropts.strict_flaky)
      continue;
    if (tpuci_instance_quarantined(ctx, i)) continue; /* quarantined tests only */
    if (o == TPUCI_OUTCOME_PREEMPTED || o == TPUCI_OUTCOME_NO_CAPACITY) capacity = 1;
    else failed = 1;
  }
  /* No job collected it: the test named is nobody's. */
  if (na > 0 && applied == 0) failed = 1;
  return failed ? 1 : capacity ? 3 : 0;
}

/* The exit code: the verdict, or 4 when a file of the run's records could
 * not be written, unless nothing ran (3) or the run was interrupted (130). */
static int tpuci__compute_exit(const tpuci_ctx_t *ctx) {
  if (ctx->run.write_paths.len == 0 || ctx->run.verdict == 3 || ctx->run.verdict == 130)
    return ctx->run.verdict;
  return TPUCI__EXIT_RECORDS;
}

/* A message for the host: a warning, or a file that could not be written. */
/* A file of the run's records (run folder, reports) could not be written:
 * the host hears it once per file, and the records are incomplete. */
static void tpuci__records_failed(tpuci_ctx_t *ctx, const char *path, int err) {
  char *msg;
  size_t i;
  for (i = 0; i < ctx->run.write_paths.len; i++)
    if (strcmp(ctx->run.write_paths.items[i], path) == 0) return;
  tpuci__strv_push(&ctx->run.write_paths, path);
  tpuci__strv_push(&ctx->run.write_errors, tpuci__strerror(err));
  msg = tpuci__printf("cannot write %s: %s", path, tpuci__strerror(err));
  tpuci__message(ctx, msg);
  free(msg);
}

static void tpuci__on_write_error(void *host, const char *path, int err) {
  tpuci__records_failed(host, path, err);
}

/* Lowers the run's slots to what the process's file descriptors allow,
 * with one warning. The limit is read, never changed (that is the host's
 * business: the CLI raises its soft limit to the hard one). */
static void tpuci__cap_jobs(tpuci_ctx_t *ctx) {
  struct rlimit rl;
  char *msg;
  int cap;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return;
  cap = tpuci__sched_fd_cap(&ctx->plan, (uint64_t) rl.rlim_cur);
  if (ctx->run.jobs <= cap) return;
  msg = tpuci__printf("warning: -j %d lowered to %d: only %llu file descriptors (ulimit -n)",
                      ctx->run.jobs, cap, (unsigned long long) rl.rlim_cur);
  tpuci__message(ctx, msg);
  free(msg);
  ctx->run.jobs = cap;
}

/* The outcomes of the last runs the HTML strip shows. */
#define TPUCI__RECENT_RUNS 20

/* Each failed or flaky test of the report gets its outcomes in the last
 * TPUCI__RECENT_RUNS runs of the history ("recent": "ppfpf", this run
 * last), for the HTML report's strip: from what appending this run to
 * the history read (ctx->run.recent), so the store is read once a run. */
static void tpuci__report_recent(tpuci_ctx_t *ctx) {
  json_t *recent = ctx->run.recent, *inst, *t;
  size_t i, k;
  if (recent == NULL) return;
  json_array_foreach(json_object_get(ctx->run.report, "instances"), i, inst) {
    const char *name = json_string_value(json_object_get(inst, "name"));
    /* The history keeps a test under the instance without its shard. */
    char *identity = name ? tpuci__group_name_of(name) : NULL;
    json_array_foreach(json_object_get(inst, "tests"), k, t) {
      const char *o = json_string_value(json_object_get(t, "outcome"));
      const char *seq;
      char *key;
      json_t *have;
      size_t len;
      if (name == NULL || o == NULL) continue;
      if ((strcmp(o, "passed") == 0 || strcmp(o, "skipped") == 0 || strcmp(o, "xfail") == 0 ||
           strcmp(o, "unaffected") == 0) &&
          !json_is_true(json_object_get(t, "flaky")) &&
          !json_is_true(json_object_get(t, "order_dependent")))
        continue;
      key = tpuci__printf("%s\x1f%s", identity, json_string_value(json_object_get(t, "id")));
      if ((have = json_object_get(recent, key)) != NULL) {
        seq = json_string_value(have);
        len = strlen(seq);
        if (len > TPUCI__RECENT_RUNS) seq += len - TPUCI__RECENT_RUNS;
        json_object_set_new(t, "recent", json_string(seq));
      }
      free(key);
    }
    free(identity);
  }
}

/* How many of the last runs ctx->run.recent keeps: the HTML strip's, or the
 * quarantine's release window when longer. */
static int tpuci__recent_window(const tpuci_ctx_t *ctx) {
  /* Ready to release looks at every run of the history. */
  return ctx->run.quar.n > 0 ? 0 : TPUCI__RECENT_RUNS;
}

static void tpuci__state_warning(tpuci_ctx_t *ctx, tpuci__err_t *err, const char *what);

/* Adds the run's pytest results to the history across runs
 * (state_dir/history.jsonl, `tpuci flaky`), and keeps each test's recent
 * outcomes from it (ctx->run.recent). */
static void tpuci__append_history(tpuci_ctx_t *ctx, const tpuci__junit_suite_t *suites, size_t n,
                                  size_t npytest) {
  const tpuci__history_t **hs = tpuci__calloc(npytest, sizeof(*hs));
  tpuci__flaky_run_t run;
  tpuci__err_t e = {0, NULL};
  char *path, *commit, *warning = NULL;
  size_t i, k = 0;
  int r;
  for (i = 0; i < n; i++)
    if (suites[i].history) hs[k++] = suites[i].history;
  memset(&run, 0, sizeof(run));
  run.run_id = ctx->run.rd.id;
  run.start_ms = ctx->run.start_ms;
  run.commit = commit = tpuci__git_commit(ctx->plan.spec_dir);
  run.histories = hs;
  run.n = k;
  path = tpuci__printf("%s/%s", ctx->run.ropts.state_dir ? ctx->run.ropts.state_dir : ".tpuci",
                       TPUCI__FLAKY_FILE);
  json_decref(ctx->run.recent);
  r = tpuci__flaky_append(path, &run, tpuci__recent_window(ctx), &ctx->run.recent, &warning, &e);
  if (warning != NULL) {
    char *msg = tpuci__printf("warning: %s", warning);
    tpuci__message(ctx, msg);
    free(msg);
  }
  /* Unreadable, it is kept as it is: this run is not in it. */
  if (r != 0) tpuci__records_failed(ctx, path, r);
  free(warning);
  tpuci__err_clear(&e);
  free(path);
  free(commit);
  free(hs);
}

/* The durations of this run's tests (`npytest` histories among
 * `suites`), into timings.json as it is now: read again under the lock,
 * so that a run that ended meanwhile keeps its part. */
static void tpuci__save_timings(tpuci_ctx_t *ctx, const tpuci__junit_suite_t *suites, size_t n) {
  tpuci__timings_t t;
  tpuci__err_t e = {0, NULL};
  size_t i;
  int r;
  tpuci__timings_init(&t);
  /* A file that is not the store's (the run's start warned): this run's
   * durations replace it. */
  if (tpuci__timings_load(&t, ctx->run.timings_path, &e) != 0) {
    tpuci__timings_free(&t);
    tpuci__timings_init(&t);
    tpuci__err_clear(&e);
  }
  for (i = 0; i < n; i++)
    if (suites[i].history) tpuci__timings_update_history(&t, suites[i].history);
  if ((r = tpuci__timings_save(&t, ctx->run.timings_path, &e)) != 0)
    tpuci__records_failed(ctx, ctx->run.timings_path, r);
  tpuci__err_clear(&e);
  tpuci__timings_free(&t);
}

/* What this run's shard groups collected, into collections.json as it
 * is now (read again under the lock; other groups' records stay). */
static void tpuci__save_collections(tpuci_ctx_t *ctx) {
  tpuci__collections_t c;
  tpuci__err_t e = {0, NULL};
  int r;
  tpuci__collections_init(&c);
  if (tpuci__collections_load(&c, ctx->run.collections_path, &e) != 0) {
    tpuci__collections_free(&c);
    tpuci__collections_init(&c);
    tpuci__err_clear(&e);
  }
  if (tpuci__pytest_kind_collections(tpuci__run_kind(ctx, &tpuci__kind_pytest), &c) > 0 &&
      (r = tpuci__collections_save(&c, ctx->run.collections_path, &e)) != 0)
    tpuci__records_failed(ctx, ctx->run.collections_path, r);
  tpuci__err_clear(&e);
  tpuci__collections_free(&c);
}

/* The state folder's files this run adds to (timings.json,
 * collections.json, history.jsonl), one run at a time: under the
 * folder's lock, each read again, this run's part put in, written back
 * (each as its own temporary file renamed into place), so that runs
 * sharing the folder lose none of each other's updates. A lock that
 * cannot be had is a warning: the files are written without it. */
static void tpuci__save_state(tpuci_ctx_t *ctx, const tpuci__junit_suite_t *suites, size_t n,
                              size_t npytest) {
  const char *dir = ctx->run.ropts.state_dir ? ctx->run.ropts.state_dir : ".tpuci";
  tpuci__err_t e = {0, NULL};
  int fd;
  /* A probe's repetitions are not runs of the suite: none of it. */
  if (ctx->repeat != 0) return;
  if (npytest == 0 && !(ctx->run.sched && ctx->run.collections_path)) return;
  fd = tpuci__state_lock(dir, TPUCI__STATE_LOCK_WAIT_MS, &e);
  if (fd < 0) tpuci__state_warning(ctx, &e, "the state files are written without it");
  if (npytest > 0 && ctx->run.timings_path) tpuci__save_timings(ctx, suites, n);
  /* What shard groups collected: the next run splits them without a
   * collection pass. */
  if (ctx->run.sched && ctx->run.collections_path) tpuci__save_collections(ctx);
  if (npytest > 0) tpuci__append_history(ctx, suites, n, npytest);
  /* What each test needed, for the next run's selection (deps.h). */
  if (npytest > 0) {
    tpuci__strv_t warnings = {0};
    size_t w;
    tpuci__pytest_kind_deps_save(tpuci__run_kind(ctx, &tpuci__kind_pytest), ctx->run.rd.id,
                                 &warnings);
    for (w = 0; w < warnings.len; w++) {
      char *msg = tpuci__printf("warning: %s", warnings.items[w]);
      tpuci__message(ctx, msg);
      free(msg);
    }
    tpuci__strv_free(&warnings);
  }
  tpuci__state_unlock(fd);
}

/* The project's folder on the host: the git repository holding the spec,
 * else the spec's folder. A new string, or NULL. */
static char *tpuci__project_root(const tpuci_ctx_t *ctx) {
  char *root = tpuci__git_root(ctx->plan.spec_dir);
  return root ? root : ctx->plan.spec_dir ? tpuci__strdup(ctx->plan.spec_dir) : NULL;
}

/* Where each failing test of pytest instance `i` failed in the project
 * (the innermost frame of its traceback there): pytest's current folder
 * is the job's workdir (a local job without one: the spec's folder). */
static void tpuci__locate_failures(tpuci_ctx_t *ctx, size_t i, const char *root) {
  const tpuci__instance_t *inst = &ctx->plan.instances[i];
  const char *cwd = inst->workdir                                       ? inst->workdir
                    : tpuci__runtime_props(inst->runtime)->workdir_spec ? ctx->plan.spec_dir
                                                                        : NULL;
  tpuci__trace_locate(ctx->run.results[i].history, inst, cwd, root);
}

/* A pytest instance's suite properties of order (JUnit's schemas allow
 * properties on a suite, not on a test case): "tpuci.first", the tests
 * that ran first in a process of their own, and "tpuci.order_dependent",
 * "ID: how" for each order-dependent test. */
static void tpuci__order_props(const tpuci_ctx_t *ctx, size_t i, tpuci__strv_t *out) {
  const tpuci__instance_result_t *res = &ctx->run.results[i];
  const tpuci__history_t *h = res->history;
  size_t k;
  if (h == NULL) return;
  if (res->first != NULL) {
    tpuci__buf_t b;
    tpuci__buf_init(&b);
    tpuci__buf_addf(&b,
                    "%zu test%s that failed last time ran first, in a process of %s own "
                    "(%s: %s):",
                    res->first_tests.len, res->first_tests.len == 1 ? "" : "s",
                    res->first_tests.len == 1 ? "its" : "their",
                    tpuci_outcome_name(res->first->outcome),
                    res->first->cause ? res->first->cause : "");
    for (k = 0; k < res->first_tests.len; k++)
      tpuci__buf_addf(&b, "%s %s", k ? "," : "", res->first_tests.items[k]);
    tpuci__strv_push(out, "tpuci.first");
    tpuci__strv_take(out, tpuci__buf_steal(&b));
  }
  for (k = 0; k < h->len; k++) {
    if (!h->tests[k].order_dep) continue;
    tpuci__strv_push(out, "tpuci.order_dependent");
    tpuci__strv_take(out, tpuci__printf("%s: %s", h->tests[k].id,
                                        h->tests[k].order_note ? h->tests[k].order_note : ""));
  }
}

/* The merged JUnit file (run folder, and --junit): pytest instances with
 * their tests, every other instance as one test case; before it, the
 * durations of this run's tests recorded for the next one's shards and
 * the run added to the history. */
static void tpuci__write_junit(tpuci_ctx_t *ctx, const char *error) {
  tpuci__strv_t *props, ids = {0};
  tpuci__junit_suite_t *suites;
  tpuci__junit_command_t *cmds;
  tpuci__junit_run_t *runs;
  unsigned char *cached;
  const tpuci__history_t **hs_own;
  tpuci__err_t e = {0, NULL};
  size_t i, k, n = 0, nruns = 0, r0;
  char *path, *root = tpuci__project_root(ctx);
  int r;

  for (i = 0; i < ctx->run.nresults; i++) nruns += ctx->run.results[i].nattempts;
  suites = tpuci__calloc(ctx->run.nresults + 1, sizeof(*suites));
  cmds = tpuci__malloc((ctx->run.nresults + 1) * sizeof(*cmds));
  runs = tpuci__malloc((nruns + 1) * sizeof(*runs));
  cached = tpuci__calloc(ctx->run.nresults + 1, 1);
  hs_own = tpuci__calloc(ctx->run.nresults + 1, sizeof(*hs_own));
  nruns = 0;
  for (i = 0; i < ctx->run.nresults; i++) {
    const tpuci__instance_result_t *res = &ctx->run.results[i];
    tpuci__junit_command_t *c = &cmds[n];
    if (!ctx->plan.instances[i].selected) continue;
    cached[n] = (unsigned char) tpuci__cache_hit(ctx, i);
    suites[n].history = res->history;
    suites[n].command = res->history ? NULL : c;
    if (res->history) {
      /* Test cases named by the instance without its shard, from the
       * project's folder, with where they failed there. */
      char *id = tpuci__pytest_group_name(&ctx->plan.instances[i]);
      tpuci__strv_push(&ids, id);
      free(id);
      tpuci__locate_failures(ctx, i, root);
      if (res->history->inputs == NULL && tpuci__cache_key(ctx, i) != NULL)
        res->history->inputs = tpuci__strdup(tpuci__cache_key(ctx, i));
      suites[n].root = root;
      suites[n].file_line = ctx->run.ropts.junit_file_line;
    }
    memset(c, 0, sizeof(*c));
    c->instance = ctx->plan.instances[i].name;
    c->outcome = res->outcome;
    c->why = error;
    r0 = nruns;
    for (k = 0; !res->history && k < res->nattempts; k++) {
      const tpuci__attempt_result_t *a = &res->attempts[k];
      tpuci__junit_run_t *jr = &runs[nruns++];
      jr->outcome = a->outcome;
      jr->exit_code = a->exit_code;
      jr->cause = a->cause;
      jr->time_s = (double) a->duration_ms / 1000.0;
      jr->log = a->log_path;
      jr->log_tail = a->outcome != TPUCI_OUTCOME_PASSED && a->outcome != TPUCI_OUTCOME_CACHED
                         ? tpuci__report_log_tail(a->log_path, &jr->log_tail_len)
                         : NULL;
    }
    c->runs = runs + r0;
    c->n_runs = nruns - r0;
    n++;
  }
  for (i = 0, k = 0; i < n; i++) {
    if (suites[i].history == NULL) continue;
    if (cached[i]) {
      /* A pass taken from the cache is not a new run of its tests: its
       * durations are recorded already, and the history leaves it out. */
      hs_own[i] = suites[i].history;
      suites[i].history = NULL;
      continue;
    }
    k++;
  }
  tpuci__save_state(ctx, suites, n, k);
  for (i = 0; i < n; i++)
    if (hs_own[i]) suites[i].history = hs_own[i];
  /* The quarantine's properties, once the history says what is ready. */
  tpuci__quar_ready(ctx);
  props = tpuci__calloc(n + 1, sizeof(*props));
  for (i = 0, k = 0; i < ctx->run.nresults; i++) {
    if (!ctx->plan.instances[i].selected) continue;
    tpuci__quar_props(ctx, i, &props[k]);
    tpuci__cache_props(ctx, i, &props[k]);
    tpuci__order_props(ctx, i, &props[k]);
    suites[k].props = &props[k];
    k++;
  }
  for (i = 0, k = 0; i < n; i++)
    if (suites[i].history) suites[i].identity = ids.items[k++];
  path = tpuci__printf("%s/junit.xml", ctx->run.rd.dir);
  if ((r = tpuci__junit_write_run_file(path, suites, n, &e)) != 0)
    tpuci__records_failed(ctx, path, r);
  free(path);
  if (ctx->run.ropts.junit &&
      (r = tpuci__junit_write_run_file(ctx->run.ropts.junit, suites, n, &e)) != 0)
    tpuci__records_failed(ctx, ctx->run.ropts.junit, r);
  for (k = 0; k < nruns; k++) free((char *) runs[k].log_tail);
  for (i = 0; i < n; i++) tpuci__strv_free(&props[i]);
  free(props);
  tpuci__strv_free(&ids);
  free(root);
  tpuci__err_clear(&e);
  free(suites);
  free(cmds);
  free(runs);
  free(cached);
  free(hs_own);
}

/* Writes the report to `path`, saying what is known of the records so
 * far. Returns 0 or the write's error, already reported. */
static int tpuci__write_report(tpuci_ctx_t *ctx, const char *format, const char *path) {
  tpuci__err_t e = {0, NULL};
  int r;
  tpuci__report_set_records(ctx->run.report, tpuci__compute_exit(ctx), &ctx->run.write_paths,
                            &ctx->run.write_errors);
  r = tpuci__report_write(ctx->run.report, format, path, &e);
  tpuci__err_clear(&e);
  if (r != 0) tpuci__records_failed(ctx, path, r);
  return r;
}

/* Every record written at the end: the run folder's last, and
 * summary.json last of all, so that it lists every other file that could
 * not be written. */
static void tpuci__write_reports(tpuci_ctx_t *ctx, const char *error) {
  static const struct {
    size_t offset;
    const char *format;
  } extra[] = {{offsetof(tpuci_run_options_t, report_html), "html"},
               {offsetof(tpuci_run_options_t, report_yaml), "yaml"},
               {offsetof(tpuci_run_options_t, report_json), "json"}};
  tpuci__run_info_t info;
  size_t k;
  char *path, *commit;

  tpuci__write_junit(ctx, error);
  memset(&info, 0, sizeof(info));
  info.run_id = ctx->run.rd.id;
  info.run_dir = ctx->run.rd.dir;
  info.start_ms = ctx->run.start_ms;
  info.duration_ms = ctx->run.duration_ms;
  info.exit_code = tpuci__compute_exit(ctx);
  info.verdict = ctx->run.verdict;
  info.jobs = ctx->run.jobs;
  info.error = error;
  info.commit = commit = tpuci__git_commit(ctx->plan.spec_dir);
  ctx->run.report = tpuci__report_build(&ctx->plan, ctx->run.results, &info);
  tpuci__report_recent(ctx);
  tpuci__quar_report(ctx);
  tpuci__cache_report(ctx);
  tpuci__probe_report(ctx);
  free(commit);
  for (k = 0; k < sizeof(extra) / sizeof(extra[0]); k++) {
    const char *p = *(const char *const *) ((const char *) &ctx->run.ropts + extra[k].offset);
    if (p != NULL) tpuci__write_report(ctx, extra[k].format, p);
  }
  /* The HTML report always goes into the run folder too. */
  path = tpuci__printf("%s/report.html", ctx->run.rd.dir);
  tpuci__write_report(ctx, "html", path);
  free(path);
  path = tpuci__rundir_summary_path(&ctx->run.rd);
  if (tpuci__write_report(ctx, "json", path) == 0) ctx->run.summary_path = path;
  else free(path);
  /* The tree says what happened to summary.json too (tpuci_report()). */
  tpuci__report_set_records(ctx->run.report, tpuci__compute_exit(ctx), &ctx->run.write_paths,
                            &ctx->run.write_errors);
}

/* The run is over: its error (code, and message or NULL), its verdict,
 * its records, its exit code. */
static void tpuci__run_end(tpuci_ctx_t *ctx, int code, const char *error) {
  tpuci__err_t e = {0, NULL};
  ctx->run.running = 0;
  ctx->run.duration_ms = (uv_hrtime() - ctx->run.start_hr) / 1000000u;
  if (error) {
    ctx->run.run_error = code != 0 ? code : TPUCI_EENGINE;
    tpuci__err_set(&e, ctx->run.run_error, "%s", error);
    tpuci__fail(ctx, &e);
  }
  tpuci__quar_apply(ctx);
  tpuci__cache_finish(ctx);
  ctx->run.verdict = tpuci__compute_verdict(ctx);
  tpuci__write_reports(ctx, error);
  ctx->run.exit_code = tpuci__compute_exit(ctx);
}

static void tpuci__on_sched_event(void *host, const tpuci_event_t *ev) {
  tpuci_ctx_t *ctx = host;
  int jsonl_err = 0;

  if (ev->type == TPUCI_EVENT_ATTEMPT_FINISHED) {
    const tpuci__instance_result_t *r = &ctx->run.results[ev->instance];
    jsonl_err = tpuci__rundir_append(&ctx->run.rd, &ctx->plan.instances[ev->instance], ev->attempt,
                                     &r->attempts[r->nattempts - 1]);
  }
  if (ev->type == TPUCI_EVENT_RUN_FINISHED)
    tpuci__run_end(ctx, tpuci__sched_error_code(ctx->run.sched),
                   tpuci__sched_error(ctx->run.sched));
  if (ctx->run.ropts.on_event) ctx->run.ropts.on_event(ctx, ev, ctx->run.ropts.userdata);
  /* After the attempt's own event, so the host shows the attempt first. */
  if (jsonl_err != 0) {
    char *path = tpuci__rundir_jsonl_path(&ctx->run.rd);
    tpuci__records_failed(ctx, path, jsonl_err);
    free(path);
  }
}

/* Failing first: each selected pytest instance's tests that failed in
 * its last run, from the history (its identity's newest run there), for
 * the scheduler (ctx->run.first; every entry made, most empty). A probe has
 * none. */
static void tpuci__first_load(tpuci_ctx_t *ctx, const char *state_dir) {
  size_t n = ctx->plan.ninstances, i, m = 0, k;
  char **names = tpuci__calloc(n + 1, sizeof(*names));
  const char **uniq = tpuci__calloc(n + 1, sizeof(*uniq));
  tpuci__strv_t *got;
  tpuci__idmap_t at;
  char *path;

  ctx->run.first = tpuci__calloc(n + 1, sizeof(*ctx->run.first));
  for (i = 0; i < n; i++) ctx->run.first[i] = tpuci__calloc(1, sizeof(*ctx->run.first[i]));
  tpuci__idmap_init(&at);
  for (i = 0; i < n && ctx->repeat == 0; i++) {
    const tpuci__instance_t *inst = &ctx->plan.instances[i];
    if (!inst->selected || inst->pytest == NULL || !inst->pytest->failed_first) continue;
    names[i] = tpuci__group_name_of(inst->name);
    if (tpuci__idmap_get(&at, names[i]) == TPUCI__IDMAP_NONE) {
      tpuci__idmap_put(&at, names[i], m);
      uniq[m++] = names[i];
    }
  }
  got = tpuci__calloc(m + 1, sizeof(*got));
  path = tpuci__printf("%s/%s", state_dir, TPUCI__FLAKY_FILE);
  if (m > 0) tpuci__flaky_last_failed(path, uniq, m, got);
  for (i = 0; i < n; i++)
    if (names[i] != NULL && (k = tpuci__idmap_get(&at, names[i])) != TPUCI__IDMAP_NONE)
      tpuci__strv_copy(ctx->run.first[i], &got[k]);
  for (k = 0; k < m; k++) tpuci__strv_free(&got[k]);
  for (i = 0; i < n; i++) free(names[i]);
  tpuci__idmap_free(&at);
  free(got);
  free(names);
  free(uniq);
  /* New tests are new to this history: read before the run adds to it. */
  for (i = 0; i < n && ctx->repeat == 0; i++) {
    const tpuci__instance_t *inst = &ctx->plan.instances[i];
    if (!inst->selected || inst->pytest == NULL || inst->pytest->new_tests_runs < 2) continue;
    /* No store (or none that reads): no job has a run in it. */
    if ((ctx->run.known = tpuci__flaky_recent(path, 0)) == NULL) ctx->run.known = json_object();
    break;
  }
  free(path);
}

/* "warning: WHY; WHAT" for a state file that could not be read (the run
 * goes on without it); clears err. */
static void tpuci__state_warning(tpuci_ctx_t *ctx, tpuci__err_t *err, const char *what) {
  char *msg = tpuci__printf("warning: %s; %s", err->msg, what);
  tpuci__err_clear(err);
  tpuci__message(ctx, msg);
  free(msg);
}

/* The job kinds an instance may be (kind/kinds.h's rows, the command
 * kind last, which claims every other one). Their states are made once
 * the run's records are read (tpuci__kinds_new). */
static void tpuci__kinds_bind(tpuci_ctx_t *ctx) {
  size_t k;
  for (k = 0; k < TPUCI__NKINDS; k++) {
    ctx->run.kinds[k].ops = tpuci__kinds[k].ops;
    ctx->run.kinds[k].run = NULL;
  }
}

/* Every kind's state for the run, from what the run read of its records
 * (`done`: the cache's hits). */
static void tpuci__kinds_new(tpuci_ctx_t *ctx, const tpuci_run_options_t *opts,
                             const unsigned char *done) {
  tpuci__kind_args_t a;
  size_t i, k;
  memset(&a, 0, sizeof(a));
  a.plan = &ctx->plan;
  a.results = ctx->run.results;
  a.timings = &ctx->run.timings;
  a.collections = &ctx->run.collections;
  a.preselect = ctx->preselect;
  a.preselect_tests = ctx->preselect_tests;
  a.first = ctx->run.first;
  a.known = ctx->run.known;
  a.no_first = ctx->repeat != 0;
  a.done = done;
  a.state_dir = opts->state_dir ? opts->state_dir : ".tpuci";
  a.affected = opts->affected;
  a.no_select = opts->no_select;
  ctx->run.nonfile = tpuci__calloc(ctx->plan.ninstances + 1, sizeof(*ctx->run.nonfile));
  for (i = 0; i < ctx->plan.ninstances; i++) ctx->run.nonfile[i] = tpuci__cache_nonfile(ctx, i);
  a.keys = ctx->run.nonfile;
  for (k = 0; k < TPUCI__NKINDS; k++) ctx->run.kinds[k].run = tpuci__kinds[k].run_new(&a);
}

int tpuci_run(tpuci_ctx_t *ctx, const tpuci_run_options_t *opts) {
  tpuci_run_options_t ro;
  tpuci__sched_opts_t so;
  tpuci__err_t e = {0, NULL};
  tpuci_event_t ev;
  uv_loop_t *loop;
  size_t i, nsel = 0;
  int r, built;

  if (ctx == NULL || opts == NULL) return TPUCI_EUSAGE;
  if (ctx->run.running) {
    tpuci__err_set(&e, TPUCI_ESTATE, "a run is already in progress");
    return tpuci__fail(ctx, &e);
  }
  if (!ctx->loaded) {
    tpuci__err_set(&e, TPUCI_ESTATE, "no spec loaded");
    return tpuci__fail(ctx, &e);
  }
  /* The fields the caller's struct has: the rest are defaults. */
  tpuci_run_options_init(&ro);
  if (tpuci__struct_in(&ro, sizeof(ro), opts, TPUCI__RUN_OPTIONS_MIN) != 0) {
    tpuci__err_set(&e, TPUCI_EUSAGE, "tpuci_run: options of size %zu, below %zu", opts->size,
                   (size_t) TPUCI__RUN_OPTIONS_MIN);
    return tpuci__fail(ctx, &e);
  }
  opts = &ro;
  tpuci__run_state_free(ctx);
  ctx->run.ropts = ro;
  ctx->run.hold = 1;
  ctx->run.run_error = 0;
  ctx->run.exit_code = 0;
  ctx->run.verdict = 0;
  for (i = 0; i < ctx->plan.ninstances; i++) nsel += ctx->plan.instances[i].selected != 0;
  if (nsel == 0) {
    tpuci__err_set(&e, TPUCI_ENOMATCH, "%s: no job instance selected", ctx->plan.spec_path);
    goto fail;
  }

  {
    tpuci__strv_t warnings = {0};
    r = tpuci__quar_start(ctx, &warnings, &e);
    for (i = 0; i < warnings.len; i++) {
      char *msg = tpuci__printf("warning: %s", warnings.items[i]);
      tpuci__message(ctx, msg);
      free(msg);
    }
    tpuci__strv_free(&warnings);
    if (r != 0) goto fail;
  }
  tpuci__real_check(ctx);
  ctx->run.jobs = opts->jobs > 0 ? opts->jobs : (int) uv_available_parallelism();
  tpuci__cap_jobs(ctx);
  tpuci__kinds_bind(ctx);
  r = tpuci__sched_check(&ctx->plan, ctx->run.kinds, TPUCI__NKINDS, ctx->run.jobs, &e);
  if (r != 0) goto fail;
  r = tpuci__rundir_create(&ctx->run.rd, opts->state_dir ? opts->state_dir : ".tpuci", &e);
  if (r != 0) goto fail;
  ctx->run.timings_path =
      tpuci__printf("%s/timings.json", opts->state_dir ? opts->state_dir : ".tpuci");
  if (tpuci__timings_load(&ctx->run.timings, ctx->run.timings_path, &e) != 0) {
    /* Shards fall back to counts; the next run rewrites the file. */
    tpuci__timings_free(&ctx->run.timings);
    tpuci__timings_init(&ctx->run.timings);
    tpuci__state_warning(ctx, &e, "test durations start afresh");
  }
  ctx->run.collections_path =
      tpuci__printf("%s/collections.json", opts->state_dir ? opts->state_dir : ".tpuci");
  /* Shard groups collect first again; the run rewrites the file. */
  if (tpuci__collections_load(&ctx->run.collections, ctx->run.collections_path, &e) != 0)
    tpuci__state_warning(ctx, &e, "shards collect first");
  tpuci__first_load(ctx, opts->state_dir ? opts->state_dir : ".tpuci");
  /* A build that fails is the run's error, as a failed pull is: the run
   * starts and ends at once, with nothing run. */
  built = tpuci__run_build(ctx, &e);
  ctx->run.nresults = ctx->plan.ninstances;
  ctx->run.results =
      tpuci__calloc(ctx->run.nresults ? ctx->run.nresults : 1, sizeof(*ctx->run.results));
  /* Passes whose inputs have not changed are taken, not run (the run's
   * time counts their keys). */
  ctx->run.start_ms = tpuci__now_ms();
  ctx->run.start_hr = uv_hrtime();
  tpuci__cache_start(ctx, ctx->run.ropts.no_cache || built != 0);

  if (opts->loop != NULL) {
    loop = opts->loop;
  } else {
    ctx->run.own_loop = tpuci__malloc(sizeof(*ctx->run.own_loop));
    r = uv_loop_init(ctx->run.own_loop);
    if (r != 0) {
      free(ctx->run.own_loop);
      ctx->run.own_loop = NULL;
      tpuci__err_set(&e, r, "cannot create an event loop: %s", uv_strerror(r));
      goto fail;
    }
    loop = ctx->run.own_loop;
  }

  memset(&so, 0, sizeof(so));
  so.jobs = ctx->run.jobs;
  so.fail_fast = opts->fail_fast;
  so.strict_flaky = opts->strict_flaky;
  so.keep_failed = opts->keep_failed;
  so.deadline_ms = opts->deadline_ms;
  so.grace_ms = opts->grace_ms;
  so.handle_signals = opts->handle_signals;
  so.tick_ms = opts->tick_ms;
  so.run_id = ctx->run.rd.id;
  so.done = tpuci__cache_done(ctx);
  tpuci__kinds_new(ctx, opts, so.done);
  so.kinds = ctx->run.kinds;
  so.nkinds = TPUCI__NKINDS;
  so.run_dir = ctx->run.rd.dir;
  so.on_event = tpuci__on_sched_event;
  so.on_write_error = tpuci__on_write_error;
  so.host = ctx;

  ctx->run.running = 1;
  ctx->run.ran = 1;
  memset(&ev, 0, sizeof(ev));
  ev.size = sizeof(ev);
  ev.type = TPUCI_EVENT_RUN_STARTED;
  ev.message = ctx->run.rd.dir;
  if (opts->on_event) opts->on_event(ctx, &ev, opts->userdata);
  ctx->run.hold = 0;
  for (i = 0; i < ctx->run.held.len; i++) tpuci__message(ctx, ctx->run.held.items[i]);
  tpuci__strv_free(&ctx->run.held);
  if (ctx->run.rd.latest_err != 0)
    tpuci__records_failed(ctx, ctx->run.rd.latest, ctx->run.rd.latest_err);

  r = built != 0 ? built
                 : tpuci__sched_start(&ctx->run.sched, loop, &ctx->plan, ctx->run.results, &so, &e);
  if (r != 0) {
    /* Started, so it ends as runs do: nothing ran, and why is its
     * result (exit code 3), its records and its last event. */
    ctx->run.sched = NULL;
    if (ctx->run.own_loop) {
      uv_loop_close(ctx->run.own_loop);
      free(ctx->run.own_loop);
      ctx->run.own_loop = NULL;
    }
    tpuci__run_end(ctx, r, e.msg ? e.msg : tpuci_strerror(r));
    tpuci__err_clear(&e);
    memset(&ev, 0, sizeof(ev));
    ev.size = sizeof(ev);
    ev.type = TPUCI_EVENT_RUN_FINISHED;
    ev.message = tpuci_last_error(ctx);
    if (opts->on_event) opts->on_event(ctx, &ev, opts->userdata);
    return 0;
  }
  if (ctx->run.own_loop == NULL) return 0;

  uv_run(ctx->run.own_loop, UV_RUN_DEFAULT);
  r = uv_loop_close(ctx->run.own_loop);
  free(ctx->run.own_loop);
  ctx->run.own_loop = NULL;
  if (r != 0 && ctx->run.run_error == 0) {
    /* A bug of tpuci's, after the run's last event: told in its result. */
    ctx->run.run_error = TPUCI_ESTATE;
    ctx->run.exit_code = ctx->run.verdict = 3;
    tpuci__err_set(&e, TPUCI_ESTATE, "internal error: handles left open on the loop");
    tpuci__fail(ctx, &e);
  }
  return 0;

fail:
  /* Nothing was told: what was held stays as the context's warnings. */
  ctx->run.hold = 0;
  for (i = 0; i < ctx->run.held.len; i++)
    tpuci__strv_push(&ctx->plan.warnings, ctx->run.held.items[i]);
  tpuci__strv_free(&ctx->run.held);
  return tpuci__fail(ctx, &e);
}

int tpuci_run_error(const tpuci_ctx_t *ctx) { return ctx ? ctx->run.run_error : TPUCI_EUSAGE; }

int tpuci_cancel(tpuci_ctx_t *ctx, int force) {
  if (ctx == NULL) return TPUCI_EUSAGE;
  if (!ctx->run.running || ctx->run.sched == NULL) return TPUCI_ESTATE;
  tpuci__sched_cancel(ctx->run.sched, force);
  return 0;
}
