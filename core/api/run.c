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

/* What the instances say: 0 passed, 1 failed, 3 nothing ran or the
 * machines were not there (every instance that did not pass ended
 * preempted or no-capacity), 130 interrupted. */
static int tpuci__compute_verdict(const tpuci__run_t *run) {
  size_t i, applied = 0, na = 0;
  int failed = 0, capacity = 0;
  if (run->run_error) return 3;
  if (tpuci__sched_interrupted(run->sched)) return 130;
  for (i = 0; i < run->plan.ninstances; i++) {
    tpuci_outcome_t o = run->results[i].outcome;
    if (!run->plan.instances[i].selected) continue;
    /* run --test: a job that does not collect the test is neither. */
    if (o == TPUCI_OUTCOME_NOT_APPLICABLE) {
      na++;
      continue;
    }
    applied++;
    if (o == TPUCI_OUTCOME_PASSED || o == TPUCI_OUTCOME_CACHED) continue;
    if ((o == TPUCI_OUTCOME_FLAKY || o == TPUCI_OUTCOME_ORDER_DEPENDENT) &&
        !run->ropts.strict_flaky)
      continue;
    if (tpuci_instance_quarantined(run, i)) continue; /* quarantined tests only */
    if (o == TPUCI_OUTCOME_PREEMPTED || o == TPUCI_OUTCOME_NO_CAPACITY) capacity = 1;
    else failed = 1;
  }
  /* No job collected it: the test named is nobody's. */
  if (na > 0 && applied == 0) failed = 1;
  return failed ? 1 : capacity ? 3 : 0;
}

/* The exit code: the verdict, or 4 when a file of the run's records could
 * not be written, unless nothing ran (3) or the run was interrupted (130). */
static int tpuci__compute_exit(const tpuci__run_t *run) {
  if (run->write_paths.len == 0 || run->verdict == 3 || run->verdict == 130) return run->verdict;
  return TPUCI__EXIT_RECORDS;
}

/* A message for the host: a warning, or a file that could not be written. */
/* A file of the run's records (run folder, reports) could not be written:
 * the host hears it once per file, and the records are incomplete. */
static void tpuci__records_failed(tpuci__run_t *run, const char *path, int err) {
  char *msg;
  size_t i;
  for (i = 0; i < run->write_paths.len; i++)
    if (strcmp(run->write_paths.items[i], path) == 0) return;
  tpuci__strv_push(&run->write_paths, path);
  tpuci__strv_push(&run->write_errors, tpuci__strerror(err));
  msg = tpuci__printf("cannot write %s: %s", path, tpuci__strerror(err));
  tpuci__message(run, msg);
  free(msg);
}

static void tpuci__on_write_error(void *host, const char *path, int err) {
  tpuci__records_failed(host, path, err);
}

/* Lowers the run's slots to what the process's file descriptors allow,
 * with one warning. The limit is read, never changed (that is the host's
 * business: the CLI raises its soft limit to the hard one). */
static void tpuci__cap_jobs(tpuci__run_t *run) {
  struct rlimit rl;
  char *msg;
  int cap;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return;
  cap = tpuci__sched_fd_cap(&run->plan, (uint64_t) rl.rlim_cur);
  if (run->jobs <= cap) return;
  msg = tpuci__printf("warning: -j %d lowered to %d: only %llu file descriptors (ulimit -n)",
                      run->jobs, cap, (unsigned long long) rl.rlim_cur);
  tpuci__message(run, msg);
  free(msg);
  run->jobs = cap;
}

/* The outcomes of the last runs the HTML strip shows. */
#define TPUCI__RECENT_RUNS 20

/* Each failed or flaky test of the report gets its outcomes in the last
 * TPUCI__RECENT_RUNS runs of the history ("recent": "ppfpf", this run
 * last), for the HTML report's strip: from what appending this run to
 * the history read (run->recent), so the store is read once a run. */
static void tpuci__report_recent(tpuci__run_t *run) {
  json_t *recent = run->recent, *inst, *t;
  size_t i, k;
  if (recent == NULL) return;
  json_array_foreach(json_object_get(run->report, "instances"), i, inst) {
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

/* How many of the last runs run->recent keeps: the HTML strip's, or the
 * quarantine's release window when longer. */
static int tpuci__recent_window(const tpuci__run_t *run) {
  /* Ready to release looks at every run of the history. */
  return run->quar.n > 0 ? 0 : TPUCI__RECENT_RUNS;
}

static void tpuci__state_warning(tpuci__run_t *run, tpuci__err_t *err, const char *what);

/* Adds the run's pytest results to the history across runs
 * (state_dir/history.jsonl, `tpuci flaky`), and keeps each test's recent
 * outcomes from it (run->recent). */
static void tpuci__append_history(tpuci__run_t *run, const tpuci__junit_suite_t *suites, size_t n,
                                  size_t npytest) {
  const tpuci__history_t **hs = tpuci__calloc(npytest, sizeof(*hs));
  tpuci__flaky_run_t fr;
  tpuci__err_t e = {0, NULL};
  char *path, *commit, *warning = NULL;
  size_t i, k = 0;
  int r;
  for (i = 0; i < n; i++)
    if (suites[i].history) hs[k++] = suites[i].history;
  memset(&fr, 0, sizeof(fr));
  fr.run_id = run->rd.id;
  fr.start_ms = run->start_ms;
  fr.commit = commit = tpuci__git_commit(run->plan.spec_dir);
  fr.histories = hs;
  fr.n = k;
  path = tpuci__printf("%s/%s", run->ropts.state_dir ? run->ropts.state_dir : ".tpuci",
                       TPUCI__FLAKY_FILE);
  json_decref(run->recent);
  r = tpuci__flaky_append(path, &fr, tpuci__recent_window(run), &run->recent, &warning, &e);
  if (warning != NULL) {
    char *msg = tpuci__printf("warning: %s", warning);
    tpuci__message(run, msg);
    free(msg);
  }
  /* Unreadable, it is kept as it is: this run is not in it. */
  if (r != 0) tpuci__records_failed(run, path, r);
  free(warning);
  tpuci__err_clear(&e);
  free(path);
  free(commit);
  free(hs);
}

/* The durations of this run's tests (`npytest` histories among
 * `suites`), into timings.json as it is now: read again under the lock,
 * so that a run that ended meanwhile keeps its part. */
static void tpuci__save_timings(tpuci__run_t *run, const tpuci__junit_suite_t *suites, size_t n) {
  tpuci__timings_t t;
  tpuci__err_t e = {0, NULL};
  size_t i;
  int r;
  tpuci__timings_init(&t);
  /* A file that is not the store's (the run's start warned): this run's
   * durations replace it. */
  if (tpuci__timings_load(&t, run->timings_path, &e) != 0) {
    tpuci__timings_free(&t);
    tpuci__timings_init(&t);
    tpuci__err_clear(&e);
  }
  for (i = 0; i < n; i++)
    if (suites[i].history) tpuci__timings_update_history(&t, suites[i].history);
  if ((r = tpuci__timings_save(&t, run->timings_path, &e)) != 0)
    tpuci__records_failed(run, run->timings_path, r);
  tpuci__err_clear(&e);
  tpuci__timings_free(&t);
}

/* What this run's shard groups collected, into collections.json as it
 * is now (read again under the lock; other groups' records stay). */
static void tpuci__save_collections(tpuci__run_t *run) {
  tpuci__collections_t c;
  tpuci__err_t e = {0, NULL};
  int r;
  tpuci__collections_init(&c);
  if (tpuci__collections_load(&c, run->collections_path, &e) != 0) {
    tpuci__collections_free(&c);
    tpuci__collections_init(&c);
    tpuci__err_clear(&e);
  }
  if (tpuci__pytest_kind_collections(tpuci__run_kind(run, &tpuci__kind_pytest), &c) > 0 &&
      (r = tpuci__collections_save(&c, run->collections_path, &e)) != 0)
    tpuci__records_failed(run, run->collections_path, r);
  tpuci__err_clear(&e);
  tpuci__collections_free(&c);
}

/* The state folder's files this run adds to (timings.json,
 * collections.json, history.jsonl), one run at a time: under the
 * folder's lock, each read again, this run's part put in, written back
 * (each as its own temporary file renamed into place), so that runs
 * sharing the folder lose none of each other's updates. A lock that
 * cannot be had is a warning: the files are written without it. */
static void tpuci__save_state(tpuci__run_t *run, const tpuci__junit_suite_t *suites, size_t n,
                              size_t npytest) {
  const char *dir = run->ropts.state_dir ? run->ropts.state_dir : ".tpuci";
  tpuci__err_t e = {0, NULL};
  int fd;
  /* A probe's repetitions are not runs of the suite: none of it. */
  if (run->repeat != 0) return;
  if (npytest == 0 && !(run->sched && run->collections_path)) return;
  fd = tpuci__state_lock(dir, TPUCI__STATE_LOCK_WAIT_MS, &e);
  if (fd < 0) tpuci__state_warning(run, &e, "the state files are written without it");
  if (npytest > 0 && run->timings_path) tpuci__save_timings(run, suites, n);
  /* What shard groups collected: the next run splits them without a
   * collection pass. */
  if (run->sched && run->collections_path) tpuci__save_collections(run);
  if (npytest > 0) tpuci__append_history(run, suites, n, npytest);
  /* What each test needed, for the next run's selection (deps.h). */
  if (npytest > 0) {
    tpuci__strv_t warnings = {0};
    size_t w;
    tpuci__pytest_kind_deps_save(tpuci__run_kind(run, &tpuci__kind_pytest), run->rd.id, &warnings);
    for (w = 0; w < warnings.len; w++) {
      char *msg = tpuci__printf("warning: %s", warnings.items[w]);
      tpuci__message(run, msg);
      free(msg);
    }
    tpuci__strv_free(&warnings);
  }
  tpuci__state_unlock(fd);
}

/* The project's folder on the host: the git repository holding the spec,
 * else the spec's folder. A new string, or NULL. */
static char *tpuci__project_root(const tpuci__run_t *run) {
  char *root = tpuci__git_root(run->plan.spec_dir);
  return root ? root : run->plan.spec_dir ? tpuci__strdup(run->plan.spec_dir) : NULL;
}

/* Where each failing test of pytest instance `i` failed in the project
 * (the innermost frame of its traceback there): pytest's current folder
 * is the job's workdir (a local job without one: the spec's folder). */
static void tpuci__locate_failures(tpuci__run_t *run, size_t i, const char *root) {
  const tpuci__instance_t *inst = &run->plan.instances[i];
  const char *cwd = inst->workdir                                       ? inst->workdir
                    : tpuci__runtime_props(inst->runtime)->workdir_spec ? run->plan.spec_dir
                                                                        : NULL;
  tpuci__trace_locate(tpuci__res_history(&run->results[i]), inst, cwd, root);
}

/* A pytest instance's suite properties of order (JUnit's schemas allow
 * properties on a suite, not on a test case): "tpuci.first", the tests
 * that ran first in a process of their own, and "tpuci.order_dependent",
 * "ID: how" for each order-dependent test. */
static void tpuci__order_props(const tpuci__run_t *run, size_t i, tpuci__strv_t *out) {
  const tpuci__pytest_result_t *res = tpuci__res_pytest_of(&run->results[i]);
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
static void tpuci__write_junit(tpuci__run_t *run, const char *error) {
  tpuci__strv_t *props, ids = {0};
  tpuci__junit_suite_t *suites;
  tpuci__junit_command_t *cmds;
  tpuci__junit_run_t *runs;
  unsigned char *cached;
  const tpuci__history_t **hs_own;
  tpuci__err_t e = {0, NULL};
  size_t i, k, n = 0, nruns = 0, r0;
  char *path, *root = tpuci__project_root(run);
  int r;

  for (i = 0; i < run->nresults; i++) nruns += run->results[i].nattempts;
  suites = tpuci__calloc(run->nresults + 1, sizeof(*suites));
  cmds = tpuci__malloc((run->nresults + 1) * sizeof(*cmds));
  runs = tpuci__malloc((nruns + 1) * sizeof(*runs));
  cached = tpuci__calloc(run->nresults + 1, 1);
  hs_own = tpuci__calloc(run->nresults + 1, sizeof(*hs_own));
  nruns = 0;
  for (i = 0; i < run->nresults; i++) {
    const tpuci__instance_result_t *res = &run->results[i];
    tpuci__junit_command_t *c = &cmds[n];
    if (!run->plan.instances[i].selected) continue;
    cached[n] = (unsigned char) tpuci__cache_hit(run, i);
    suites[n].history = tpuci__res_history(res);
    suites[n].command = tpuci__res_history(res) ? NULL : c;
    if (tpuci__res_history(res)) {
      /* Test cases named by the instance without its shard, from the
       * project's folder, with where they failed there. */
      char *id = tpuci__pytest_group_name(&run->plan.instances[i]);
      tpuci__strv_push(&ids, id);
      free(id);
      tpuci__locate_failures(run, i, root);
      if (tpuci__res_history(res)->inputs == NULL && tpuci__cache_key(run, i) != NULL)
        tpuci__res_history(res)->inputs = tpuci__strdup(tpuci__cache_key(run, i));
      suites[n].root = root;
      suites[n].file_line = run->ropts.junit_file_line;
    }
    memset(c, 0, sizeof(*c));
    c->instance = run->plan.instances[i].name;
    c->outcome = res->outcome;
    c->why = error;
    r0 = nruns;
    for (k = 0; !tpuci__res_history(res) && k < res->nattempts; k++) {
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
  tpuci__save_state(run, suites, n, k);
  for (i = 0; i < n; i++)
    if (hs_own[i]) suites[i].history = hs_own[i];
  /* The quarantine's properties, once the history says what is ready. */
  tpuci__quar_ready(run);
  props = tpuci__calloc(n + 1, sizeof(*props));
  for (i = 0, k = 0; i < run->nresults; i++) {
    if (!run->plan.instances[i].selected) continue;
    tpuci__quar_props(run, i, &props[k]);
    tpuci__cache_props(run, i, &props[k]);
    tpuci__order_props(run, i, &props[k]);
    suites[k].props = &props[k];
    k++;
  }
  for (i = 0, k = 0; i < n; i++)
    if (suites[i].history) suites[i].identity = ids.items[k++];
  path = tpuci__printf("%s/junit.xml", run->rd.dir);
  if ((r = tpuci__junit_write_run_file(path, suites, n, &e)) != 0)
    tpuci__records_failed(run, path, r);
  free(path);
  if (run->ropts.junit && (r = tpuci__junit_write_run_file(run->ropts.junit, suites, n, &e)) != 0)
    tpuci__records_failed(run, run->ropts.junit, r);
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
static int tpuci__write_report(tpuci__run_t *run, const char *format, const char *path) {
  tpuci__err_t e = {0, NULL};
  int r;
  tpuci__report_set_records(run->report, tpuci__compute_exit(run), &run->write_paths,
                            &run->write_errors);
  r = tpuci__report_write(run->report, format, path, &e);
  tpuci__err_clear(&e);
  if (r != 0) tpuci__records_failed(run, path, r);
  return r;
}

/* Every record written at the end: the run folder's last, and
 * summary.json last of all, so that it lists every other file that could
 * not be written. */
static void tpuci__write_reports(tpuci__run_t *run, const char *error) {
  static const struct {
    size_t offset;
    const char *format;
  } extra[] = {{offsetof(tpuci_run_options_t, report_html), "html"},
               {offsetof(tpuci_run_options_t, report_yaml), "yaml"},
               {offsetof(tpuci_run_options_t, report_json), "json"}};
  tpuci__run_info_t info;
  size_t k;
  char *path, *commit;

  tpuci__write_junit(run, error);
  memset(&info, 0, sizeof(info));
  info.run_id = run->rd.id;
  info.run_dir = run->rd.dir;
  info.start_ms = run->start_ms;
  info.duration_ms = run->duration_ms;
  info.exit_code = tpuci__compute_exit(run);
  info.verdict = run->verdict;
  info.jobs = run->jobs;
  info.error = error;
  info.commit = commit = tpuci__git_commit(run->plan.spec_dir);
  run->report = tpuci__report_build(&run->plan, run->results, &info);
  tpuci__report_recent(run);
  tpuci__quar_report(run);
  tpuci__cache_report(run);
  tpuci__probe_report(run);
  free(commit);
  for (k = 0; k < sizeof(extra) / sizeof(extra[0]); k++) {
    const char *p = *(const char *const *) ((const char *) &run->ropts + extra[k].offset);
    if (p != NULL) tpuci__write_report(run, extra[k].format, p);
  }
  /* The HTML report always goes into the run folder too. */
  path = tpuci__printf("%s/report.html", run->rd.dir);
  tpuci__write_report(run, "html", path);
  free(path);
  path = tpuci__rundir_summary_path(&run->rd);
  if (tpuci__write_report(run, "json", path) == 0) run->summary_path = path;
  else free(path);
  /* The tree says what happened to summary.json too (tpuci_report()). */
  tpuci__report_set_records(run->report, tpuci__compute_exit(run), &run->write_paths,
                            &run->write_errors);
}

/* The run is over: its error (code, and message or NULL), its verdict,
 * its records, its exit code. */
static void tpuci__run_end(tpuci__run_t *run, int code, const char *error) {
  run->running = 0;
  run->duration_ms = (uv_hrtime() - run->start_hr) / 1000000u;
  if (error) tpuci__run_fail(run, code != 0 ? code : TPUCI_EENGINE, error);
  tpuci__quar_apply(run);
  tpuci__cache_finish(run);
  run->verdict = tpuci__compute_verdict(run);
  tpuci__write_reports(run, error);
  run->exit_code = tpuci__compute_exit(run);
}

static void tpuci__on_sched_event(void *host, const tpuci_event_t *ev) {
  tpuci__run_t *run = host;
  int jsonl_err = 0;

  if (ev->type == TPUCI_EVENT_ATTEMPT_FINISHED) {
    const tpuci__instance_result_t *r = &run->results[ev->instance];
    jsonl_err = tpuci__rundir_append(&run->rd, &run->plan.instances[ev->instance], ev->attempt,
                                     &r->attempts[r->nattempts - 1]);
  }
  if (ev->type == TPUCI_EVENT_RUN_FINISHED)
    tpuci__run_end(run, tpuci__sched_error_code(run->sched), tpuci__sched_error(run->sched));
  if (run->ropts.on_event) run->ropts.on_event(run, ev, run->ropts.userdata);
  /* After the attempt's own event, so the host shows the attempt first. */
  if (jsonl_err != 0) {
    char *path = tpuci__rundir_jsonl_path(&run->rd);
    tpuci__records_failed(run, path, jsonl_err);
    free(path);
  }
}

/* "warning: WHY; WHAT" for a state file that could not be read (the run
 * goes on without it); clears err. */
static void tpuci__state_warning(tpuci__run_t *run, tpuci__err_t *err, const char *what) {
  char *msg = tpuci__printf("warning: %s; %s", err->msg, what);
  tpuci__err_clear(err);
  tpuci__message(run, msg);
  free(msg);
}

/* The steps of a run, each a function of the run (tpuci_run_start calls
 * them in order). */

/* Before the first event: what can refuse the run (nothing selected, an
 * invalid quarantine, a job no kind can run, no run folder). 0, or a
 * code with `e`. */
static int tpuci__run_check(tpuci__run_t *run, tpuci__err_t *e) {
  const char *state_dir = run->ropts.state_dir ? run->ropts.state_dir : ".tpuci";
  tpuci__strv_t warnings = {0};
  size_t i, nsel = 0;
  int r;
  for (i = 0; i < run->plan.ninstances; i++) nsel += run->plan.instances[i].selected != 0;
  if (nsel == 0)
    return tpuci__err_set(e, TPUCI_ENOMATCH, "%s: no job instance selected", run->plan.spec_path);
  r = tpuci__quar_start(run, &warnings, e);
  for (i = 0; i < warnings.len; i++) {
    char *msg = tpuci__printf("warning: %s", warnings.items[i]);
    tpuci__message(run, msg);
    free(msg);
  }
  tpuci__strv_free(&warnings);
  if (r != 0) return r;
  tpuci__real_check(run);
  run->jobs = run->ropts.jobs > 0 ? run->ropts.jobs : (int) uv_available_parallelism();
  tpuci__cap_jobs(run);
  tpuci__kinds_bind(run);
  r = tpuci__sched_check(&run->plan, run->kinds, TPUCI__NKINDS, run->jobs, e);
  if (r != 0) return r;
  return tpuci__rundir_create(&run->rd, state_dir, e);
}

/* What the run reads of its records across runs: recorded durations,
 * shard groups' collections, the tests that failed last time. A file
 * that cannot be read is a warning: the run goes on without it. */
static void tpuci__run_records(tpuci__run_t *run) {
  const char *state_dir = run->ropts.state_dir ? run->ropts.state_dir : ".tpuci";
  tpuci__err_t e = {0, NULL};
  run->timings_path = tpuci__printf("%s/timings.json", state_dir);
  if (tpuci__timings_load(&run->timings, run->timings_path, &e) != 0) {
    /* Shards fall back to counts; the next run rewrites the file. */
    tpuci__timings_free(&run->timings);
    tpuci__timings_init(&run->timings);
    tpuci__state_warning(run, &e, "test durations start afresh");
  }
  run->collections_path = tpuci__printf("%s/collections.json", state_dir);
  /* Shard groups collect first again; the run rewrites the file. */
  if (tpuci__collections_load(&run->collections, run->collections_path, &e) != 0)
    tpuci__state_warning(run, &e, "shards collect first");
  tpuci__first_load(run, state_dir);
}

/* The results, and the cache's hits in them (off after a failed build:
 * nothing runs). */
static void tpuci__run_results(tpuci__run_t *run, int built) {
  run->nresults = run->plan.ninstances;
  run->results = tpuci__calloc(run->nresults ? run->nresults : 1, sizeof(*run->results));
  /* Passes whose inputs have not changed are taken, not run (the run's
   * time counts their keys). */
  run->start_ms = tpuci__now_ms();
  run->start_hr = uv_hrtime();
  tpuci__cache_start(run, run->ropts.no_cache || built != 0);
}

/* The scheduler's options for the run, its kinds' states made. */
static void tpuci__run_sched_opts(tpuci__run_t *run, tpuci__sched_opts_t *so) {
  const tpuci_run_options_t *opts = &run->ropts;
  memset(so, 0, sizeof(*so));
  so->jobs = run->jobs;
  so->fail_fast = opts->fail_fast;
  so->strict_flaky = opts->strict_flaky;
  so->keep_failed = opts->keep_failed;
  so->deadline_ms = opts->deadline_ms;
  so->grace_ms = opts->grace_ms;
  so->handle_signals = opts->handle_signals;
  so->tick_ms = opts->tick_ms;
  so->run_id = run->rd.id;
  so->done = tpuci__cache_done(run);
  tpuci__kinds_new(run, opts, so->done);
  so->kinds = run->kinds;
  so->nkinds = TPUCI__NKINDS;
  so->run_dir = run->rd.dir;
  so->on_event = tpuci__on_sched_event;
  so->on_write_error = tpuci__on_write_error;
  so->host = run;
}

/* One of the run's own events (RUN_STARTED, or RUN_FINISHED when the
 * scheduler never started) for the host. */
static void tpuci__run_tell(tpuci__run_t *run, tpuci_event_type_t type, const char *message) {
  tpuci_event_t ev;
  memset(&ev, 0, sizeof(ev));
  ev.size = sizeof(ev);
  ev.type = type;
  ev.message = message;
  if (run->ropts.on_event) run->ropts.on_event(run, &ev, run->ropts.userdata);
}

/* RUN_STARTED, then the messages held until it. */
static void tpuci__run_announce(tpuci__run_t *run) {
  size_t i;
  run->running = 1;
  run->ran = 1;
  tpuci__run_tell(run, TPUCI_EVENT_RUN_STARTED, run->rd.dir);
  run->hold = 0;
  for (i = 0; i < run->held.len; i++) tpuci__message(run, run->held.items[i]);
  tpuci__strv_free(&run->held);
  if (run->rd.latest_err != 0) tpuci__records_failed(run, run->rd.latest, run->rd.latest_err);
}

/* Started, but the scheduler could not (or a build failed): it ends as
 * runs do: nothing ran, and why is its result (exit code 3), its
 * records and its last event. */
static void tpuci__run_not_started(tpuci__run_t *run, int r, tpuci__err_t *e) {
  run->sched = NULL;
  if (run->own_loop) {
    uv_loop_close(run->own_loop);
    free(run->own_loop);
    run->own_loop = NULL;
  }
  tpuci__run_end(run, r, e->msg ? e->msg : tpuci_strerror(r));
  tpuci__err_clear(e);
  tpuci__run_tell(run, TPUCI_EVENT_RUN_FINISHED, tpuci_run_error_message(run));
}

/* A run on a loop of its own: runs it to the end. */
static void tpuci__run_own_loop(tpuci__run_t *run) {
  int r;
  uv_run(run->own_loop, UV_RUN_DEFAULT);
  r = uv_loop_close(run->own_loop);
  free(run->own_loop);
  run->own_loop = NULL;
  if (r != 0 && run->run_error == 0) {
    /* A bug of tpuci's, after the run's last event: told in its result. */
    tpuci__run_fail(run, TPUCI_ESTATE, "internal error: handles left open on the loop");
    run->exit_code = run->verdict = 3;
  }
}

/* A run refused before its first event: what was held stays as the
 * context's warnings, the selection of tests goes back to the context,
 * and the run is gone. */
static int tpuci__run_refused(tpuci__run_t *run, tpuci__err_t *e) {
  tpuci_ctx_t *ctx = run->ctx;
  size_t i;
  for (i = 0; i < run->held.len; i++) tpuci__strv_push(&ctx->plan.warnings, run->held.items[i]);
  tpuci__strv_free(&run->held);
  if (ctx->preselect == NULL) {
    ctx->preselect = run->preselect;
    ctx->preselect_tests = run->preselect_tests;
    run->preselect = NULL;
  }
  tpuci__run_destroy(run);
  return tpuci__fail(ctx, e);
}

int tpuci_run_start(tpuci_ctx_t *ctx, const tpuci_run_options_t *opts, tpuci_run_t **out) {
  tpuci_run_options_t ro;
  tpuci__run_t *run;
  tpuci__sched_opts_t so;
  tpuci__err_t e = {0, NULL};
  uv_loop_t *loop;
  int r, built;

  if (out != NULL) *out = NULL;
  if (ctx == NULL || opts == NULL || out == NULL) return TPUCI_EUSAGE;
  if (!ctx->loaded) {
    tpuci__err_set(&e, TPUCI_ESTATE, "no spec loaded");
    return tpuci__fail(ctx, &e);
  }
  /* The fields the caller's struct has: the rest are defaults. */
  tpuci_run_options_init(&ro);
  if (tpuci__struct_in(&ro, sizeof(ro), opts, TPUCI__RUN_OPTIONS_MIN) != 0) {
    tpuci__err_set(&e, TPUCI_EUSAGE, "tpuci_run_start: options of size %zu, below %zu", opts->size,
                   (size_t) TPUCI__RUN_OPTIONS_MIN);
    return tpuci__fail(ctx, &e);
  }
  run = tpuci__run_new(ctx);
  tpuci__run_take(run);
  run->ropts = ro;
  run->hold = 1; /* messages wait for RUN_STARTED */
  if ((r = tpuci__run_check(run, &e)) != 0) return tpuci__run_refused(run, &e);
  tpuci__run_records(run);
  /* A build that fails is the run's error, as a failed pull is: the run
   * starts and ends at once, with nothing run. */
  built = tpuci__run_build(run, &e);
  tpuci__run_results(run, built);
  if (ro.loop != NULL) {
    loop = ro.loop;
  } else {
    run->own_loop = tpuci__malloc(sizeof(*run->own_loop));
    if ((r = uv_loop_init(run->own_loop)) != 0) {
      free(run->own_loop);
      run->own_loop = NULL;
      tpuci__err_set(&e, r, "cannot create an event loop: %s", uv_strerror(r));
      return tpuci__run_refused(run, &e);
    }
    loop = run->own_loop;
  }
  tpuci__run_sched_opts(run, &so);
  tpuci__run_announce(run);
  *out = run;
  r = built != 0 ? built : tpuci__sched_start(&run->sched, loop, &run->plan, run->results, &so, &e);
  if (r != 0) tpuci__run_not_started(run, r, &e);
  else if (run->own_loop != NULL) tpuci__run_own_loop(run);
  return 0;
}

int tpuci_cancel(tpuci_run_t *run, int force) {
  if (run == NULL) return TPUCI_EUSAGE;
  if (!run->running || run->sched == NULL) return TPUCI_ESTATE;
  tpuci__sched_cancel(run->sched, force);
  return 0;
}
