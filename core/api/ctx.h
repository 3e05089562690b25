/* core/api/: the library's public functions (include/tpuci.h). A context
 * (ctx.c: the options, the plan, the selection for the next run) loads
 * a spec into a plan (plan_load.c) and starts runs of it (run.c, the one
 * orchestrator of a run: it makes a run object, run_object.c, and calls
 * its steps, run_cache.c, run_quarantine.c, run_probe.c, which never call
 * back); a run holds its own state until it is freed (run_state.c), and
 * several runs of one context live side by side; what a run left is
 * read through results.c, past runs through past.c, several
 * run folders made one through merge_runs.c; common.c holds what every
 * file uses (the last error, messages, a record's instance). The files
 * call each other without a circle (tests/layout/symbols.py). The API is
 * the only part of the core that sees every other folder: it may include
 * any of them, and none of them includes it. The command line tool
 * (core/cli/) uses only tpuci.h. */
#ifndef TPUCI_API_CTX_H
#define TPUCI_API_CTX_H

#include <jansson.h>
#include <stdint.h>
#include <uv.h>

#include "base/util.h"
#include "plan/plan.h"
#include "kind/kinds.h"
#include "kind/pytest/kind.h"
#include "kind/pytest/quarantine.h"
#include "kind/pytest/timings.h"
#include "report/rundir.h"
#include "sched/scheduler.h"
#include "tpuci.h"

#define TPUCI__LOAD_TIMEOUT_MS 5000
#define TPUCI__LOAD_MEMORY (256u * 1024 * 1024)
/* The exit code of a run whose records are incomplete (docs/cli.md). */
#define TPUCI__EXIT_RECORDS 4

/* A run (tpuci_run_t): what one tpuci_run_start() made, from its options
 * to its report, or what tpuci_load_run() or tpuci_merge_runs() read
 * back. It is the run's own: runs of one context live side by side, each
 * until tpuci_run_free() (run_state.c). */
struct tpuci_run_s {
  tpuci_ctx_t *ctx;         /* started from (or loaded by); outlives the run */
  struct tpuci_run_s *next; /* the context's runs */
  /* Its instances: for a spec's run the context's plan as it was at the
   * start (its own instances array, so that a selection made since does
   * not change it; the rest is the context's, which cannot load another
   * spec while the run lives); for a record, a plan of its own. */
  tpuci__plan_t plan;
  int plan_owned;
  /* What the run runs of the plan, taken from the context at the start
   * (rerun --failed's tests, --test's, a flake probe's N). */
  tpuci__strv_t **preselect;
  int preselect_tests;
  int repeat;
  char *error; /* the run's error's message (run_error), or NULL */
  tpuci_run_options_t ropts;
  tpuci__instance_result_t *results;
  size_t nresults;
  tpuci__rundir_t rd;
  tpuci__sched_t *sched;
  /* The job kinds of the run, kind/kinds.h's rows in order, and their
   * states (the pytest kind's: what its shard groups collected, after
   * it). */
  tpuci__kind_binding_t kinds[TPUCI__NKINDS];
  const char **nonfile; /* per instance, tpuci__cache_nonfile() (borrowed) */
  uv_loop_t *own_loop;
  int running;
  int ran;
  uint64_t start_ms;
  uint64_t start_hr;
  uint64_t duration_ms;
  int exit_code;
  int verdict; /* the instances' code: 0, 1, 3 or 130 */
  int run_error;
  /* Messages told before RUN_STARTED wait here (tpuci__message()). */
  int hold;
  tpuci__strv_t held;
  /* Files of the run's records that could not be written, and why. */
  tpuci__strv_t write_paths;
  tpuci__strv_t write_errors;
  char *summary_path; /* summary.json once written (or read) */
  json_t *report;     /* of the last run */
  int jobs;
  tpuci__timings_t timings; /* recorded test durations (state_dir) */
  /* Failing first: per instance, the tests that failed in its last run
   * (the history's); NULL when none. */
  tpuci__strv_t **first;
  /* Per instance, the tests of that list that failed in each of their
   * last TPUCI__FLAKY_STEADY_RUNS runs (kind/pytest/flaky.h), made with
   * `first`: they go first only with failed_first = "always", and a
   * retry of them alone is not run (pytest.retry_steady). */
  tpuci__strv_t **steady;
  /* The tests the history has before the run (tpuci__flaky_recent() of
   * the whole store), when a job has pytest.new_tests; else NULL. */
  json_t *known;
  char *timings_path;
  tpuci__collections_t collections; /* shard groups' last collections */
  char *collections_path;
  /* Each test's outcomes in the history's last runs, this one included
   * ("instance\x1fid" -> "ppf-p"), as appending the run read them; NULL
   * when nothing was appended. */
  json_t *recent;
  /* The run's quarantine (run_quarantine.c): the file's entries (none: no
   * quarantine), each pytest test's entry and readiness (per instance,
   * per test of its history; NULL without entries), and the instances
   * that failed only by quarantined tests. */
  tpuci__quarantine_t quar;
  struct tpuci__qtest_s {
    const tpuci__quarantine_entry_t *entry; /* NULL: not quarantined */
    int ready;                              /* passed its last K runs */
  } * *qtests;
  unsigned char *forgiven;
  struct tpuci__cache_run_s *cache; /* the run's keys and hits (run_cache.c) */
};
typedef struct tpuci_run_s tpuci__run_t;

struct tpuci_ctx_s {
  tpuci_ctx_options_t opts;
  tpuci__err_t err;
  tpuci__plan_t plan;
  int loaded;
  int real; /* specs load for real TPU hardware (tpuci_set_real) */

  /* What the next run runs of the plan (set by selecting, before it). */
  tpuci__strv_t **preselect; /* rerun --failed: failed tests per instance */
  /* The preselection is --test's (tpuci_plan_tests): a job whose own
   * selection does not collect it is not-applicable, not failed. */
  int preselect_tests;
  int repeat; /* tpuci_plan_repeat()'s N; 0: no probe */
  /* Its runs not yet freed (tpuci_run_free); a spec cannot be loaded
   * while one lives, and tpuci_ctx_free() frees those left. */
  tpuci__run_t *runs;
};

/* The run objects (run_object.c). A new run of `ctx`, linked to it, its
 * plan empty and its own; tpuci__run_take() makes its plan the context's
 * (its own instances array) and takes the context's selection of tests
 * and repetitions. tpuci__run_destroy() frees it (running or not). */
tpuci__run_t *tpuci__run_new(tpuci_ctx_t *ctx);
void tpuci__run_take(tpuci__run_t *run);
void tpuci__run_destroy(tpuci__run_t *run);
/* The run's error (code, message), which is the context's last error
 * too. */
void tpuci__run_fail(tpuci__run_t *run, int code, const char *msg);
/* What a run hands its job kinds (run_kinds.c): the rows bound to the
 * run; the tests that failed in each selected pytest instance's last
 * run (run->first) and, for pytest.new_tests, the tests the history
 * knows (run->known); every row's state (`done`: the cache's hits). */
void tpuci__kinds_bind(tpuci__run_t *run);
void tpuci__first_load(tpuci__run_t *run, const char *state_dir);
void tpuci__kinds_new(tpuci__run_t *run, const tpuci_run_options_t *opts,
                      const unsigned char *done);
/* The run's state of the kind whose operations are `ops`, or NULL. */
tpuci__kind_run_t *tpuci__run_kind(const tpuci__run_t *run, const tpuci__kind_t *ops);
/* Sets ctx's last error from `e` (taken) and returns its code. */
int tpuci__fail(tpuci_ctx_t *ctx, tpuci__err_t *e);
/* Frees the run state: results, records, report (run_state.c). */
void tpuci__run_state_free(tpuci__run_t *run);
/* Frees the node ids rerun --failed chose. */
void tpuci__preselect_free(tpuci_ctx_t *ctx);
/* The quarantine (run_quarantine.c). Reads the file when a run starts
 * (expired entries become warnings): 0, or the error that stops it. */
int tpuci__quar_start(tpuci__run_t *run, tpuci__strv_t *warnings, tpuci__err_t *e);
/* When the run is over, before the verdict: each test's entry, and the
 * instances that failed only by quarantined tests. */
void tpuci__quar_apply(tpuci__run_t *run);
/* Once the history has this run (ctx->recent): which are ready to go. */
void tpuci__quar_ready(tpuci__run_t *run);
/* Instance i's JUnit properties (name, value, ...), added to `out`. */
void tpuci__quar_props(const tpuci__run_t *run, size_t i, tpuci__strv_t *out);
/* The report's "quarantine" (the run's) and its instances' and tests'. */
void tpuci__quar_report(tpuci__run_t *run);
/* Frees the run's quarantine and what it said of its tests. */
void tpuci__quar_free(tpuci__run_t *run);
/* The flake probe (run_probe.c): the report's "repeat", each test's
 * failure rate over the repetitions. */
void tpuci__probe_report(tpuci__run_t *run);
/* The 95% Wilson score interval of `fails` in `runs` (runs 0: [0, 1]). */
void tpuci__wilson(size_t fails, size_t runs, double *low, double *high);
/* A TPUCI_EVENT_MESSAGE for the host (common.c). Before a run's
 * RUN_STARTED (run->hold) it is held, and told after it. */
void tpuci__message(tpuci__run_t *run, const char *msg);

/* --real: the run starts with doctor's TPU checks when a selected
 * instance runs on this machine (local or docker) on real hardware, and
 * says once when this machine is not the TPU the spec expects
 * (run_real.c). */
void tpuci__real_check(tpuci__run_t *run);
/* Builds the images the spec builds (image "x" { build = ... }) that the
 * selected docker instances run, before the results cache takes the
 * images' ids: a key names what was built. Logs go to the run folder's
 * build/<image>.log. 0, or a code with err (runtime.h,
 * tpuci__runtime_docker_build; a swarm job on a built image is refused). */
int tpuci__run_build(tpuci__run_t *run, tpuci__err_t *err);

/* The struct convention (include/tpuci.h): a caller's struct starts
 * with its size_t size. tpuci__struct_in() copies `src` into `dst`
 * (already holding the defaults, dst_size bytes) as far as src->size
 * reaches; tpuci__struct_out() copies tpuci's `full` into the caller's
 * `out` as far as out->size reaches, leaving out->size. Both: TPUCI_EUSAGE
 * when the caller's size is below `min`, the struct's size at this SONAME
 * (which stays what it is when fields are added). */
#define TPUCI__END(type, field) (offsetof(type, field) + sizeof(((type *) 0)->field))
#define TPUCI__CTX_OPTIONS_MIN TPUCI__END(tpuci_ctx_options_t, load_memory_bytes)
#define TPUCI__RUN_OPTIONS_MIN TPUCI__END(tpuci_run_options_t, no_select)
#define TPUCI__MERGE_OPTIONS_MIN TPUCI__END(tpuci_merge_options_t, junit)
#define TPUCI__EXPORT_OPTIONS_MIN TPUCI__END(tpuci_export_options_t, jobset)
#define TPUCI__ATTEMPT_INFO_MIN TPUCI__END(tpuci_attempt_info_t, log_path)
#define TPUCI__RUNNING_INFO_MIN TPUCI__END(tpuci_running_info_t, test_ms)
#define TPUCI__TEST_INFO_MIN TPUCI__END(tpuci_test_info_t, unaffected_since)
#define TPUCI__INIT_OPTIONS_MIN TPUCI__END(tpuci_init_options_t, spec_name)
#define TPUCI__BUILD_SOURCE_MIN TPUCI__END(tpuci_build_source_t, pushed)
int tpuci__struct_in(void *dst, size_t dst_size, const void *src, size_t min);
int tpuci__struct_out(void *out, const void *full, size_t full_size, size_t min);
/* The results cache (run_cache.c, docs/cache.md). When the run starts, after
 * its results are made: the keys, and the hits' results filled in (off
 * with no_cache, TPUCI_NO_CACHE set to anything but "" or "0", or a flake
 * probe). */
void tpuci__cache_start(tpuci__run_t *run, int no_cache);
/* Instance i's inputs that are not files (runtime/inputs.h), made for a
 * pytest instance that records what its tests need; NULL: none. */
const char *tpuci__cache_nonfile(const tpuci__run_t *run, size_t i);
/* Per instance, 1 for a hit (the scheduler's `done`); NULL: none. */
const unsigned char *tpuci__cache_done(const tpuci__run_t *run);
int tpuci__cache_hit(const tpuci__run_t *run, size_t i);
/* Instance i's input key this run (hex), or NULL: none could be made. */
const char *tpuci__cache_key(const tpuci__run_t *run, size_t i);
/* When the run is over (the quarantine applied): its passes stored. */
void tpuci__cache_finish(tpuci__run_t *run);
/* Instance i's JUnit properties when it is a hit. */
void tpuci__cache_props(const tpuci__run_t *run, size_t i, tpuci__strv_t *out);
/* The report's "cache" (the run's) and each instance's. */
void tpuci__cache_report(tpuci__run_t *run);
void tpuci__cache_free(tpuci__run_t *run);
/* Reads state_dir/runs/<id>/summary.json (past.c). */
int tpuci__read_summary(const char *state_dir, const char *run_id, json_t **out, tpuci__err_t *err);
/* Reads a summary.json: 0 and *out, or an error naming `path` (with
 * `hint` after it when the file is not there). */
int tpuci__read_summary_file(const char *path, const char *hint, json_t **out, tpuci__err_t *err);
/* Makes the report tree `root` (taken) the context's record, as
 * tpuci_load_run() does: a plan of its instances and their attempts, its
 * verdict and exit code; the tests are read from the tree
 * (tpuci_test_info()). summary_path is the caller's. */
void tpuci__load_record(tpuci__run_t *run, json_t *root);
/* Instance i of the context's record (a loaded or merged run), or NULL
 * when the context holds a spec's run or nothing. */
json_t *tpuci__record_instance(const tpuci__run_t *run, size_t i);

#endif /* TPUCI_API_CTX_H */
