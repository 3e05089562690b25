/* tpuci: run TPU-emulated CI jobs from a Lua spec on one libuv loop.
 *
 * This is the only public header. It names no Lua or libuv type: a caller
 * that owns a uv_loop_t passes it as `void *` in tpuci_run_options_t.
 *
 * Model: a context (tpuci_ctx_t) loads one spec, which expands into job
 * instances (the plan). tpuci_run() runs the selected instances: each
 * instance gets one or more attempts, each attempt ends with an outcome.
 *
 * Errors, one convention: a function that can fail takes the context
 * first and returns 0 (or a count) on success or a negative error code:
 * libuv's UV_E* codes pass through unchanged, tpuci's own codes are the
 * TPUCI_E* values below; the one-line message for a person is then
 * tpuci_last_error() ("spec.lua:12: job 'unit': ..."). Only
 * tpuci_ctx_new() (no context yet) and tpuci_parse_duration() (a pure
 * parser) return a code alone. A call that fails and takes a callback
 * never invokes the callback; tpuci_run() in particular fails before its
 * first event or not at all (a run that started and could not go on says
 * so in its result: tpuci_run_error()).
 *
 * Structs, one convention: every struct passed between a caller and
 * tpuci starts with `size_t size`, the sizeof of the struct the side that
 * made it was built with. Fields are only ever added at the end. The
 * caller sets `size` with the struct's _init() function or _INIT macro;
 * tpuci reads (options) or fills (info) only the fields that fit in it,
 * and takes the defaults for the rest; a size below the struct's size at
 * this SONAME is TPUCI_EUSAGE. Events carry the size tpuci filled.
 *
 * Text for people: the *_text() and *_report() functions, doctor's and
 * gc's reports and tpuci_strerror() return text to show as it is; every
 * other function returns data. tpuci itself never writes to stdout or
 * stderr (but for a Lua panic, just before its abort); tpuci_text_safe()
 * is the helper for what a host prints.
 *
 * Strings returned by accessors belong to the context and stay valid until
 * the next tpuci_load_*() or tpuci_run() on it, or tpuci_ctx_free().
 */
#ifndef TPUCI_H
#define TPUCI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TPUCI_VERSION_MAJOR 0
#define TPUCI_VERSION_MINOR 2
#define TPUCI_VERSION_PATCH 0

/* Error codes. Every one is below libuv's range. */
#define TPUCI_EBASE (-30000)
#define TPUCI_ESPEC (TPUCI_EBASE - 1)     /* the spec is invalid */
#define TPUCI_EUSAGE (TPUCI_EBASE - 2)    /* a bad argument or option */
#define TPUCI_ESTATE (TPUCI_EBASE - 3)    /* not allowed in this state */
#define TPUCI_ENOMEM (TPUCI_EBASE - 4)    /* out of memory */
#define TPUCI_EIO (TPUCI_EBASE - 5)       /* reading or writing a file */
#define TPUCI_EENGINE (TPUCI_EBASE - 6)   /* container engine unusable */
#define TPUCI_EIMAGE (TPUCI_EBASE - 7)    /* an image is missing */
#define TPUCI_ELIMIT (TPUCI_EBASE - 8)    /* spec load hit a time/memory cap */
#define TPUCI_ENOSPACE (TPUCI_EBASE - 9)  /* not enough disk space */
#define TPUCI_ENOMATCH (TPUCI_EBASE - 10) /* a filter selected nothing */

/* The outcome of one attempt, or the final outcome of an instance. */
typedef enum {
  TPUCI_OUTCOME_NONE = 0,        /* not run */
  TPUCI_OUTCOME_PASSED,          /* exit status 0 */
  TPUCI_OUTCOME_FAILED,          /* non-zero exit status or killed by a signal */
  TPUCI_OUTCOME_TIMEOUT,         /* stopped by tpuci after its timeout */
  TPUCI_OUTCOME_OOM,             /* killed by the kernel for memory (docker) */
  TPUCI_OUTCOME_INFRA,           /* the engine or image failed, not the job */
  TPUCI_OUTCOME_CANCELLED,       /* stopped or never started: Ctrl-C, fail-fast,
                              deadline */
  TPUCI_OUTCOME_FLAKY,           /* instance only: failed, then passed on retry */
  TPUCI_OUTCOME_CACHED,          /* instance only: not run, its inputs passed in
                              an earlier run (docs/cache.md); counts as
                              passed */
  TPUCI_OUTCOME_ORDER_DEPENDENT, /* instance only: passed, and each test that
                              failed on the way is order-dependent (it failed
                              after other tests, passed in another process);
                              a flaky class of its own, counts as passed
                              unless strict_flaky (docs/pytest.md) */
  TPUCI_OUTCOME_PREEMPTED,       /* the machines went away under it: a worker
                              its describe command reports PREEMPTED,
                              TERMINATED, STOPPING or gone (docs/ssh.md,
                              "Capacity"); retried under retries.capacity */
  TPUCI_OUTCOME_NO_CAPACITY,     /* the machines were not there: a worker that
                              refused or timed out at connect before the
                              gang started; retried under retries.capacity */
  TPUCI_OUTCOME_NOT_APPLICABLE,  /* instance only: `run --test ID`, and the
                              job's own selection (markers, -k) does not
                              collect ID; neither a pass nor a failure */
  TPUCI_OUTCOME__COUNT
} tpuci_outcome_t;

typedef struct tpuci_ctx_s tpuci_ctx_t;
/* A run of a context's plan (tpuci_run_start), or a past run's record
 * (tpuci_load_run, tpuci_merge_runs): its own object, freed with
 * tpuci_run_free(). Several runs of one context may be alive at once. */
typedef struct tpuci_run_s tpuci_run_t;

/* ------------------------------------------------------------------ */
/* Library and errors                                                  */

/* "0.2.0". */
const char *tpuci_version(void);

/* A short message for an error code; never NULL. */
const char *tpuci_strerror(int err);

/* The symbolic name of an error code ("TPUCI_ESPEC", "ENOENT"). */
const char *tpuci_err_name(int err);

/* Parses a duration ("90s", "20m", "1h30m", "500ms", or a number of
 * seconds) into milliseconds. Returns 0 or TPUCI_EUSAGE. */
int tpuci_parse_duration(const char *text, uint64_t *out_ms);

/* "passed", "failed", "timeout", "oom", "infra", "cancelled", "flaky",
 * "cached", "order-dependent", "preempted", "no-capacity", "not-applicable",
 * "none". */
const char *tpuci_outcome_name(tpuci_outcome_t outcome);

/* Where this build of tpuci came from, as the build recorded it
 * (cmake/build_info.cmake, at every build): `tpuci export github` builds
 * the same tpuci unless told otherwise (docs/github.md). Set `size`
 * before the call (TPUCI_BUILD_SOURCE_INIT does); tpuci fills what fits.
 * Returns 0, or TPUCI_EUSAGE for a size too small. */
typedef struct tpuci_build_source_s {
  size_t size; /* sizeof(tpuci_build_source_t) */
  /* The https (or git) URL of the checkout's remote origin, without a
   * user or password (an ssh address as its https one), or NULL: not a
   * git checkout, no origin, or one a CI runner could not fetch (a
   * local path). */
  const char *url;
  /* The commit it was built at (hex), or NULL: not a git checkout. */
  const char *commit;
  int modified; /* tracked files had changes at the build */
  int pushed;   /* the commit was on one of origin's branches
                               (as of the checkout's last fetch) */
} tpuci_build_source_t;
#define TPUCI_BUILD_SOURCE_INIT \
  { sizeof(tpuci_build_source_t), NULL, NULL, 0, 0 }

int tpuci_build_source(tpuci_build_source_t *out);

/* Untrusted text made safe to print on a terminal and in a GitHub
 * Actions log: what a test, a file or another machine said, inside a
 * line of the host's own. Control characters (ESC, CR, ...; a newline
 * too, unless `lines`), DEL, C1 and bidirectional controls become
 * "\uNNNN" escapes, bytes that are not UTF-8 "\xNN", a tab a space; a
 * line that would be a workflow command (starting, after white space,
 * with "::") gets its first ':' as "\u003a", and "##[" is written
 * "##\u005b". With `lines`, newlines stay and each line is made safe
 * (JSON tpuci wrote stays the same JSON). A new string (tpuci_free()),
 * or NULL when text is NULL. */
char *tpuci_text_safe(const char *text, int lines);

/* ------------------------------------------------------------------ */
/* Context                                                             */

typedef struct tpuci_ctx_options_s {
  size_t size; /* sizeof(tpuci_ctx_options_t) */
  /* Limits for loading a spec; 0 means the default (5000 ms, 256 MiB). */
  uint64_t load_timeout_ms;
  size_t load_memory_bytes;
} tpuci_ctx_options_t;

/* Fills `opts` with the defaults. */
void tpuci_ctx_options_init(tpuci_ctx_options_t *opts);

/* Creates a context. `opts` may be NULL. On success *out owns a context
 * to be released with tpuci_ctx_free(); TPUCI_EUSAGE for a size too
 * small. */
int tpuci_ctx_new(tpuci_ctx_t **out, const tpuci_ctx_options_t *opts);

/* Frees a context. It must not be running (cancel it and wait for the run
 * finished event first). NULL is ignored. */
void tpuci_ctx_free(tpuci_ctx_t *ctx);

/* The message of the last failure on this context, or "" if none. */
const char *tpuci_last_error(const tpuci_ctx_t *ctx);

/* Frees memory handed out by tpuci (tpuci_plan_json()). */
void tpuci_free(void *p);

/* ------------------------------------------------------------------ */
/* Loading a spec and the plan                                         */

/* Loads and expands a spec file. Relative paths in the spec resolve
 * against the spec's folder. Replaces any plan already loaded.
 * Returns TPUCI_ESPEC for an invalid spec (one that declares no jobs
 * included), TPUCI_ELIMIT when the spec ran too long, used too much
 * memory or is larger than 4 MiB, UV_EISDIR or UV_EFTYPE when the path is
 * not a regular file (a folder, a FIFO, a device), UV_ENOENT and friends
 * when the file cannot be read. */
int tpuci_load_file(tpuci_ctx_t *ctx, const char *path);

/* Loads a spec from memory, with the same rules; `name` is used in
 * messages ("spec.lua") and relative paths resolve against the current
 * directory. */
int tpuci_load_string(tpuci_ctx_t *ctx, const char *chunk, size_t len, const char *name);

/* Warnings the last load produced (unusable combinations, etc.). */
size_t tpuci_warning_count(const tpuci_ctx_t *ctx);
const char *tpuci_warning(const tpuci_ctx_t *ctx, size_t i);

/* Restricts the plan to the instances whose names match at least one of
 * the shell globs (fnmatch(3) rules, so '[' must be escaped as '\['). With
 * n == 0 every instance is selected. Returns the number selected, or
 * TPUCI_ENOMATCH when nothing matches. */
int tpuci_plan_select(tpuci_ctx_t *ctx, const char *const *globs, size_t n);

/* Restricts the selected pytest instances to the node ids `ids` (`tpuci
 * run --test`, repeatable): their attempts run only those tests, in place
 * of pytest.args. Of a sharded job only the first shard stays selected
 * (the tests run once, not once per shard). Instances that are not pytest
 * jobs run as they are. Call it after tpuci_plan_select(), which undoes
 * it. Returns the number of pytest instances, or TPUCI_ENOMATCH when no
 * selected instance is a pytest job. */
int tpuci_plan_tests(tpuci_ctx_t *ctx, const char *const *ids, size_t n);

/* The flake probe (`tpuci run --repeat N`): every selected instance is
 * replaced by N repetitions, instances of their own named
 * "NAME[...,rep=K/N]" that the scheduler runs side by side as slots
 * allow, each with one attempt (no retry), a sharded job's as one
 * unsharded instance, and TPUCI_REPEAT_INDEX (0 ... N-1) and
 * TPUCI_REPEAT_COUNT (N) in its environment. Call it after
 * tpuci_plan_select() and tpuci_plan_tests(). A run of repetitions adds
 * nothing to the history or the recorded durations. Returns the number
 * of repetitions, or TPUCI_EUSAGE (N from 1 to 1000, at most 10000
 * instances). */
int tpuci_plan_repeat(tpuci_ctx_t *ctx, int n);

/* Which container engine runs the plan's container jobs: "docker" (one
 * Docker Engine) or "swarm" (services of a Docker Swarm, docs/swarm.md).
 * Every instance whose runtime is docker or swarm moves to it; local
 * processes stay local. Call it after loading (`tpuci run --engine`).
 * Returns the number of instances that run on it, or TPUCI_EUSAGE for
 * another name, TPUCI_ESTATE when nothing is loaded. */
int tpuci_plan_engine(tpuci_ctx_t *ctx, const char *engine);

/* Whether the specs loaded from now on are for real TPU hardware (1) or
 * emulated (0, the default): with 1 every topology is emulate = "real"
 * whatever the spec says (`tpuci run --real`), so its hosts get no
 * emulation variables (PJRT_DEVICE=CPU, device counts, TPU_* made up from
 * the catalogue), the TPU environment of this process instead, and only
 * the gang's rendezvous variables from tpuci (docs/real-tpu.md). Call it
 * before tpuci_load_file(). Returns 0, or TPUCI_EUSAGE. */
int tpuci_set_real(tpuci_ctx_t *ctx, int real);

/* The expanded plan, in spec order. */
size_t tpuci_instance_count(const tpuci_ctx_t *ctx);
const char *tpuci_instance_name(const tpuci_ctx_t *ctx, size_t i);
const char *tpuci_instance_job(const tpuci_ctx_t *ctx, size_t i);
/* "spec.lua:12", where the job was declared. */
const char *tpuci_instance_where(const tpuci_ctx_t *ctx, size_t i);
int tpuci_instance_selected(const tpuci_ctx_t *ctx, size_t i);

/* The plan as a JSON document (*out is NUL-terminated, freed with
 * tpuci_free()). Only selected instances are included. */
int tpuci_plan_json(const tpuci_ctx_t *ctx, char **out, size_t *len);

/* The plan as human-readable text, one block per instance. */
int tpuci_plan_text(const tpuci_ctx_t *ctx, char **out, size_t *len);

/* `tpuci plan --keys`: each selected instance's input key for the
 * results cache (docs/cache.md) and what went into it (the plan entry's
 * hash, the image's id, each mount's content key), whether a pass is
 * stored under it in state_dir/cache/ (NULL: ".tpuci"), or why it has
 * no key; as text, or JSON with `json`. Blocking: it asks the engine for
 * image ids and hashes the mounts. *out is freed with tpuci_free().
 * 0, or TPUCI_ESTATE when nothing is loaded. */
int tpuci_plan_keys(tpuci_ctx_t *ctx, const char *state_dir, int json, char **out);

/* ------------------------------------------------------------------ */
/* Running                                                             */

typedef enum {
  TPUCI_EVENT_RUN_STARTED = 1, /* run_id and run_dir are known */
  TPUCI_EVENT_ATTEMPT_STARTED,
  TPUCI_EVENT_OUTPUT, /* a chunk of an attempt's stdout/stderr */
  TPUCI_EVENT_ATTEMPT_FINISHED,
  TPUCI_EVENT_RETRY_SCHEDULED, /* the next attempt waits retry_in_ms */
  TPUCI_EVENT_INSTANCE_FINISHED,
  TPUCI_EVENT_MESSAGE, /* a warning or note for the user */
  TPUCI_EVENT_RUN_FINISHED,
  TPUCI_EVENT_TICK, /* every tick_ms while running */
  TPUCI_EVENT_PULL, /* an image pull's progress (image, pull_*) */
  /* A pytest test failed, as its process's progress reported it (within
   * a second, while the process runs on): `test` is its node id,
   * `message` the first line of what was raised (or NULL), `attempt` 0
   * for the instance's failing-first process, -1 for a process after its
   * attempts (a new test run again: pytest.new_tests). Once per test and
   * process. */
  TPUCI_EVENT_TEST_FAILED
} tpuci_event_type_t;

/* TPUCI_EVENT_PULL's pull_state. */
typedef enum {
  TPUCI_PULL_STARTED = 0,
  TPUCI_PULL_PROGRESS, /* at most every 250 ms while bytes come */
  TPUCI_PULL_DONE,
  TPUCI_PULL_FAILED /* why follows: the run's error or a MESSAGE */
} tpuci_pull_state_t;

/* Events are tpuci's to fill and the callback's to read during the call.
 * `size` is sizeof the struct this tpuci fills, so a callback built
 * against a newer header can tell whether a field is there
 * (offsetof(tpuci_event_t, field) < size). RUN_STARTED is a run's first
 * event and RUN_FINISHED its last. */
typedef struct tpuci_event_s {
  size_t size;
  tpuci_event_type_t type;
  size_t instance;  /* index into the plan */
  const char *name; /* the instance's name */
  int attempt;      /* 1-based */
  int max_attempts;
  /* OUTPUT: 1 for stdout, 2 for stderr; `data` is not NUL-terminated. */
  int stream;
  const char *data;
  size_t len;
  /* ATTEMPT_FINISHED, INSTANCE_FINISHED. */
  tpuci_outcome_t outcome;
  int exit_code;   /* -1 when killed by a signal or never ran */
  int term_signal; /* 0 when none */
  uint64_t duration_ms;
  const char *cause;    /* "exit 3", "timed out after 2s", ... */
  const char *log_path; /* the attempt's log file */
  /* RETRY_SCHEDULED. */
  uint64_t retry_in_ms;
  /* MESSAGE, RUN_STARTED (run folder), RUN_FINISHED (verdict) and
   * TEST_FAILED (what was raised). */
  const char *message;
  /* PULL (before any attempt starts; duration_ms is the time since it
   * started): the image reference, and bytes downloaded over the layers
   * the engine announced so far; pull_total counts the layers whose size
   * it told. */
  const char *image;
  tpuci_pull_state_t pull_state;
  int pull_layers;
  uint64_t pull_current;
  uint64_t pull_total;
  /* TEST_FAILED: the test's node id. */
  const char *test;
} tpuci_event_t;

typedef void (*tpuci_event_cb)(tpuci_run_t *run, const tpuci_event_t *ev, void *userdata);

typedef struct tpuci_run_options_s {
  size_t size; /* sizeof(tpuci_run_options_t) */
  /* A uv_loop_t * to run on. NULL: tpuci_run_start() creates a loop,
   * runs it and returns when the run is over. Non-NULL: tpuci_run_start()
   * starts the run and returns; the caller runs the loop;
   * TPUCI_EVENT_RUN_FINISHED says when it is over. Several runs may share
   * one loop. */
  void *loop;
  int jobs;              /* slots; 0: the number of CPUs */
  int fail_fast;         /* stop everything after the first failure */
  int strict_flaky;      /* a flaky instance fails the run */
  int keep_failed;       /* keep containers of failed attempts */
  uint64_t deadline_ms;  /* whole-run wall clock cap; 0: none */
  uint64_t grace_ms;     /* SIGTERM to SIGKILL; 0: the spec's or 5000 */
  const char *state_dir; /* NULL: ".tpuci" */
  /* Install SIGINT/SIGTERM handlers on the loop for the run: the first
   * signal cancels gracefully, a second one forces. */
  int handle_signals;
  tpuci_event_cb on_event;
  void *userdata;
  /* Reports written when the run ends, besides summary.json in the run
   * folder (docs/reports.md). NULL: not written. */
  const char *report_json;
  const char *report_yaml;
  const char *report_html;
  /* The merged JUnit XML of the run (pytest instances test by test, every
   * other instance as one test case), besides junit.xml in
   * the run folder. NULL: not written. */
  const char *junit;
  /* Emit TPUCI_EVENT_TICK this often (a live display redraws on it);
   * 0: never. */
  uint64_t tick_ms;
  /* The quarantine (docs/quarantine.md): a YAML file of tests
   * whose failures do not fail the run until a date. NULL:
   * tpuci-quarantine.yaml beside the spec, when there is one. A file
   * that cannot be read or is invalid stops the run before it starts
   * (TPUCI_ESPEC, "FILE:LINE: ..."). */
  const char *quarantine;
  /* How many runs in a row (in the history) a quarantined test must
   * pass to be reported "ready to release"; 0: 10. */
  int release_after;
  /* 1: the merged JUnit's test cases of pytest instances also
   * get `file` (the test's module, from the project's folder) and `line`
   * (where it failed in the project, else where the test is), for
   * readers that place tests by them; neither Surefire's nor Jenkins'
   * schema allows them (docs/pytest.md). */
  int junit_file_line;
  /* The results cache (docs/cache.md): 0, an instance whose
   * input key has a pass stored in state_dir/cache/ is not run (outcome
   * TPUCI_OUTCOME_CACHED) and the run's passes are stored; 1, neither
   * (`tpuci run --no-cache`), as when the environment variable
   * TPUCI_NO_CACHE is set to anything but "" or "0". */
  int no_cache;
  /* Only what a change can affect (docs/pytest.md): 1, every
   * pytest instance runs as with pytest.select = "affected" (`tpuci run
   * --affected`); `no_select` 1, every test runs, what each needs still
   * recorded (`--no-select`). */
  int affected;
  int no_select;
} tpuci_run_options_t;

/* Fills `opts` with the defaults. */
void tpuci_run_options_init(tpuci_run_options_t *opts);

/* Starts a run of the selected instances of the loaded plan (see `loop`
 * above): the selection, the --test or --failed tests and a flake
 * probe's repetitions chosen so far are the run's, and the context may
 * be given another selection for a next run at once. Either it fails
 * before its first event (nothing loaded, nothing selected, an invalid
 * quarantine, the run folder cannot be created: a negative code,
 * tpuci_last_error(), *out NULL and no event at all), or it returns 0
 * with the run in *out, which goes from TPUCI_EVENT_RUN_STARTED to
 * TPUCI_EVENT_RUN_FINISHED; what went wrong on the way (the engine is
 * unreachable, an image is missing) is in its result: tpuci_run_error(),
 * tpuci_run_exit_code() 3. */
int tpuci_run_start(tpuci_ctx_t *ctx, const tpuci_run_options_t *opts, tpuci_run_t **out);

/* Frees a run and everything it holds (its results, its report). A run
 * still going on is a usage error: cancel it, and free it once
 * TPUCI_EVENT_RUN_FINISHED was told (not from the event callback). NULL
 * is ignored. */
void tpuci_run_free(tpuci_run_t *run);

/* The context a run was started from (or loaded by). */
tpuci_ctx_t *tpuci_run_ctx(const tpuci_run_t *run);

/* The error that kept the run from doing its work (0: none), and its
 * message (""); its exit code is then 3. */
int tpuci_run_error(const tpuci_run_t *run);
const char *tpuci_run_error_message(const tpuci_run_t *run);

/* Cancels a run: no new attempt starts, running attempts are sent
 * SIGTERM and, after the grace period (or at once with force), SIGKILL.
 * The run finishes when they are gone. Safe from an event callback. */
int tpuci_cancel(tpuci_run_t *run, int force);

/* ------------------------------------------------------------------ */
/* A run's results                                                     */

/* A run's instances: for a spec's run the plan's as they were when it
 * started (the same indexes as tpuci_instance_name()), for a record the
 * record's. */
size_t tpuci_run_instance_count(const tpuci_run_t *run);
const char *tpuci_run_instance_name(const tpuci_run_t *run, size_t i);
const char *tpuci_run_instance_job(const tpuci_run_t *run, size_t i);
const char *tpuci_run_instance_where(const tpuci_run_t *run, size_t i);
int tpuci_run_instance_selected(const tpuci_run_t *run, size_t i);

/* 0 all passed (flaky counts as passed unless strict_flaky), 1 something
 * failed, 3 the run could not start its work (engine unreachable, image
 * missing, no disk space: nothing ran), 4 the run's records are incomplete
 * (a write to the run folder or a report file failed: see
 * tpuci_run_write_errors()), 130 interrupted by a signal or
 * tpuci_cancel(). 3 and 130 win over 4, and 4 over 0 and 1. */
int tpuci_run_exit_code(const tpuci_run_t *run);
/* What the instances say, whatever happened to the records: "passed",
 * "failed", "interrupted" or "not-run"; NULL before a run has finished. */
const char *tpuci_run_verdict(const tpuci_run_t *run);
/* How many files of the run's records could not be written (attempt
 * logs, attempts.jsonl, summary.json, junit.xml, report.html,
 * timings.json, the report_* and junit files). Each one was told once, as
 * a TPUCI_EVENT_MESSAGE "cannot write <path>: <error>". */
size_t tpuci_run_write_errors(const tpuci_run_t *run);
/* The path of the run's summary.json, or NULL when it could not be
 * written. */
const char *tpuci_run_summary_path(const tpuci_run_t *run);
const char *tpuci_run_id(const tpuci_run_t *run);
const char *tpuci_run_dir(const tpuci_run_t *run);
/* Wall clock duration of the run. */
uint64_t tpuci_run_duration_ms(const tpuci_run_t *run);
/* Number of selected instances whose final outcome is `outcome`. */
size_t tpuci_outcome_count(const tpuci_run_t *run, tpuci_outcome_t outcome);

tpuci_outcome_t tpuci_instance_outcome(const tpuci_run_t *run, size_t i);
size_t tpuci_attempt_count(const tpuci_run_t *run, size_t i);

/* The structs tpuci fills for a caller (attempt, running and test info)
 * follow the struct convention above: the _INIT macros set `size`, and
 * tpuci fills only what fits. */
typedef struct tpuci_attempt_info_s {
  size_t size; /* sizeof(tpuci_attempt_info_t) */
  tpuci_outcome_t outcome;
  int exit_code; /* -1 when killed by a signal or never ran */
  int term_signal;
  uint64_t start_ms; /* Unix epoch milliseconds */
  uint64_t duration_ms;
  const char *cause;
  const char *log_path;
} tpuci_attempt_info_t;
#define TPUCI_ATTEMPT_INFO_INIT \
  { sizeof(tpuci_attempt_info_t), 0, 0, 0, 0, 0, NULL, NULL }

/* Attempt `k` (0-based) of instance `i`. */
int tpuci_attempt_info(const tpuci_run_t *run, size_t i, size_t k, tpuci_attempt_info_t *out);

/* What a running attempt is doing now, for a live display: call it from
 * the event callback (a TPUCI_EVENT_TICK, say) while the run goes on. */
typedef struct tpuci_running_info_s {
  size_t size; /* sizeof(tpuci_running_info_t) */
  int attempt; /* 1-based */
  uint64_t elapsed_ms;
  uint64_t output_bytes; /* the attempt's output so far, all hosts */
  uint64_t quiet_ms;     /* since its last output (or its start) */
  /* pytest: the test it is in ("tests/t.py::test_x", for a gang "... on
   * all 2 hosts" or "X on worker-0, Y on worker-1"), read from pytest's
   * progress at most once a second; NULL when none (or not pytest).
   * Valid until the next call or event. */
  const char *test;
  uint64_t test_ms; /* how long it has been in that test, at least */
} tpuci_running_info_t;
#define TPUCI_RUNNING_INFO_INIT \
  { sizeof(tpuci_running_info_t), 0, 0, 0, 0, NULL, 0 }

/* Instance `i`'s running attempt (not a shard group's collection): 0 and
 * *out filled, or TPUCI_ESTATE when none runs (or no run is going on). */
int tpuci_running_info(tpuci_run_t *run, size_t i, tpuci_running_info_t *out);

/* Per-test results of a pytest instance (0 tests otherwise): each test
 * once, with the result of the last attempt that ran it. */
size_t tpuci_test_count(const tpuci_run_t *run, size_t i);

typedef struct tpuci_test_info_s {
  size_t size;         /* sizeof(tpuci_test_info_t) */
  const char *id;      /* pytest node id */
  const char *outcome; /* "passed", "failed", "error", "skipped", "xfail",
                               "unaffected" (left out: nothing it needs
                               changed since it passed), or "not-run":
                               collected, but no attempt reported a result
                               for it (the attempts were cut short) */
  int failing;         /* failed, error or not-run */
  int flaky;           /* failed on an attempt, then passed */
  int runs;            /* attempts that ran it */
  double duration_s;   /* of its last run */
  const char *message; /* of its last failure, or NULL */
  /* Its file: an absolute path on this machine when tpuci could place it
   * (pytest's rootdir joined with the file, and for a container job
   * mapped back through the job's mounts), else as pytest wrote it
   * (relative to its rootdir); NULL when unknown. */
  const char *file;
  int line; /* 1-based, or 0 */
  /* The quarantine entry that covers it (docs/quarantine.md): its
   * failure does not fail the run. 0 and NULLs when none does. */
  int quarantined;
  const char *quarantine_where; /* "tpuci-quarantine.yaml:3" */
  const char *quarantine_reason;
  const char *quarantine_owner;
  const char *quarantine_until; /* "2027-01-31" */
  /* Quarantined, and passed its last release_after runs in the history
   * (this one included): the entry can go (`tpuci flaky --release`). */
  int release_ready;
  /* Where its final failure happened in the project: the innermost frame
   * of its traceback there (docs/pytest.md, "Where a test failed"), as a
   * path on this machine, and its 1-based line; NULL and 0 when it did
   * not fail there (or did not fail). Known once the run has finished. */
  const char *failure_file;
  int failure_line;
  /* Order-dependent (docs/pytest.md, "Order dependence"): it failed in
   * one process of the run and passed in another whose tests before it
   * differed, and does not fail in the end; a flaky class of its own
   * (`flaky` is 0 then). `order` says how ("failed after 2 tests in
   * attempt 1, passed in attempt 2; it fails after T (found by 2
   * checks)"), `order_polluter` the test the order checks found (NULL:
   * none found). */
  int order_dependent;
  const char *order;
  const char *order_polluter;
  /* Outcome "unaffected" (docs/pytest.md, "Only what a change can
   * affect"): left out, nothing it needs changed since it passed; the
   * run it last passed in, or NULL. */
  const char *unaffected_since;
} tpuci_test_info_t;
#define TPUCI_TEST_INFO_INIT                                                                       \
  {                                                                                                \
    sizeof(tpuci_test_info_t), NULL, NULL, 0, 0, 0, 0.0, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, \
        0, NULL, 0, 0, NULL, NULL, NULL                                                            \
  }

int tpuci_test_info(const tpuci_run_t *run, size_t i, size_t k, tpuci_test_info_t *out);

/* 1 when instance `i` failed only because of quarantined tests (pytest
 * said tests failed, and every failing test is quarantined): its
 * failure does not count in the verdict. 0 otherwise. */
int tpuci_instance_quarantined(const tpuci_run_t *run, size_t i);

/* After a run of repetitions (tpuci_plan_repeat()): each test's failure
 * rate over them with its 95% Wilson score interval, one line each (an
 * instance without tests as one line of its own); the report's "repeat"
 * says the same. *out is freed with tpuci_free(). 0, or TPUCI_ESTATE when
 * the last run was not a probe. */
int tpuci_repeat_report(const tpuci_run_t *run, char **out);

/* What tpuci_merge_runs() writes; NULL: not written. */
typedef struct tpuci_merge_options_s {
  size_t size;             /* sizeof(tpuci_merge_options_t) */
  const char *report_json; /* the merged summary (a summary.json) */
  const char *report_yaml;
  const char *report_html; /* log links relative to its folder */
  const char *junit;       /* the runs' merged JUnit reports as one */
} tpuci_merge_options_t;

/* Fills `opts` with the defaults (nothing written). */
void tpuci_merge_options_init(tpuci_merge_options_t *opts);

/* Merges the records of `n` run folders (`.tpuci/runs/<id>/` each, as a
 * run left it, wherever it is now: several runners' `--only` runs of one
 * spec) into the context, as tpuci_load_run() loads one: its instances
 * are all the runs' (an instance in two folders is an error), each
 * attempt's log named below its folder as given; its verdict is the
 * runs' together (interrupted if one was, not-run if none ran, failed if
 * one failed or did not run, else passed) and its exit code that, or 4
 * when a run's records or a file of the merge are incomplete
 * (docs/reports.md, "Merging runs"). Writes the files `opts` names from
 * the merged record; one that cannot be written becomes a warning
 * (tpuci_warning()) and a write error (tpuci_run_write_errors()).
 * Returns 0, or TPUCI_EUSAGE (no folder, a folder that is not there, an
 * instance in two) or TPUCI_EIO (a summary.json or junit.xml that cannot
 * be read or is not tpuci's) with a one-line tpuci_last_error() that
 * names the folder or file. */
int tpuci_merge_runs(tpuci_ctx_t *ctx, const char *const *run_dirs, size_t n,
                     const tpuci_merge_options_t *opts, tpuci_run_t **out);

/* Loads a past run's record (state_dir/runs/<run_id>/summary.json; run_id
 * NULL or "latest": the newest; state_dir NULL: ".tpuci") as a run in
 * *out: its instances (tpuci_run_instance_name(); names and jobs only),
 * the result accessors, tpuci_run_id() and tpuci_report() describe it.
 * The context's spec, if any, stays as it was. */
int tpuci_load_run(tpuci_ctx_t *ctx, const char *state_dir, const char *run_id, tpuci_run_t **out);

/* With a spec loaded: selects the instances that did not pass in a past
 * run (failed, timeout, oom, infra, cancelled, not run; flaky counts as
 * passed). Returns the number selected (0: everything passed) or a
 * negative code, leaving the selection as it was: TPUCI_ENOMATCH when an
 * instance that did not pass is not in the spec (renamed), TPUCI_EIO when
 * the summary does not say which instances did not pass (a record without
 * a name; counts, or a failed exit code, that no record accounts for). */
int tpuci_plan_select_unpassed(tpuci_ctx_t *ctx, const char *state_dir, const char *run_id);

/* The history across runs (state_dir/history.jsonl, the last 100 runs'
 * per-test outcomes of pytest jobs) as a flaky report: the tests that
 * failed in any of the last `runs` runs (0: all), most flips first, with
 * their outcomes run by run and their last failure; as text, or JSON with
 * `json`. *out is freed with tpuci_free(). 0, or TPUCI_ENOMATCH when there
 * is no history yet, or another negative code. No spec needs to be
 * loaded for this and the next three. */
int tpuci_flaky_report(tpuci_ctx_t *ctx, const char *state_dir, int runs, int json, char **out);

/* `tpuci select --stats`: what select = "affected" saved and what its
 * audit found (state_dir/select.jsonl, docs/pytest.md): per instance, the
 * share of tests and of recorded test time left out, the tests the audit
 * ran and those of them that failed (misses), as text or JSON. *out is
 * freed with tpuci_free(); 0, or TPUCI_ENOMATCH when no selecting run is
 * recorded yet, or another negative code. */
int tpuci_select_stats(tpuci_ctx_t *ctx, const char *state_dir, int json, char **out);

/* `tpuci flaky --release`: the entries of the quarantine file
 * (docs/quarantine.md) that can go, because every test of theirs in the
 * history (state_dir/history.jsonl) passed its last `release_after` runs
 * (0: 10), one line each; "" when none. *out is freed with tpuci_free();
 * 0, or TPUCI_ENOMATCH without a history, TPUCI_ESPEC for an invalid
 * file. */
int tpuci_flaky_release(tpuci_ctx_t *ctx, const char *state_dir, const char *quarantine,
                        int release_after, char **out);

/* `tpuci flaky --propose`: quarantine entries (docs/quarantine.md's YAML,
 * to be copied into the file by hand: nothing is written) for the tests
 * of the last `runs` runs of the history (0: all) that flipped in at
 * least `min_rate` (0 to 1) of their runs, most flips first, each with an
 * expiry 14 days out and the owner the CODEOWNERS file gives its file
 * (`codeowners`, or NULL: .github/CODEOWNERS, CODEOWNERS or
 * docs/CODEOWNERS here or above, up to the git top); tests the quarantine
 * (`quarantine`, or NULL: tpuci-quarantine.yaml when there is one) holds
 * are left out. *out is freed with tpuci_free(); 0, or TPUCI_ENOMATCH
 * without a history, TPUCI_ESPEC for an invalid quarantine, TPUCI_EUSAGE
 * for a file that cannot be read. */
int tpuci_flaky_propose(tpuci_ctx_t *ctx, const char *state_dir, const char *quarantine,
                        const char *codeowners, int runs, double min_rate, char **out);

/* The spec path recorded in a past run's summary; *out is freed with
 * tpuci_free(). */
int tpuci_run_spec_path(tpuci_ctx_t *ctx, const char *state_dir, const char *run_id, char **out);

/* The report of a finished run (the content of summary.json) as JSON,
 * YAML or HTML ("json", "yaml", "html"); *out is freed with tpuci_free(). */
int tpuci_report(const tpuci_run_t *run, const char *format, char **out);

/* ------------------------------------------------------------------ */
/* A starting spec for a project (`tpuci init`)                        */

typedef struct tpuci_init_options_s {
  size_t size; /* sizeof(tpuci_init_options_t) */
  /* The project's folder, whose pytest configuration is read. NULL: ".". */
  const char *dir;
  /* That folder as the spec names it, relative to the folder the spec
   * will be in (its mounts resolve against that). NULL: ".". */
  const char *project;
  /* The spec's file name, for its comments. NULL: "tpuci.lua". */
  const char *spec_name;
} tpuci_init_options_t;

/* Fills `opts` with the defaults. */
void tpuci_init_options_init(tpuci_init_options_t *opts);

/* The text of a starting spec for the Python project in opts->dir
 * (docs/cli.md, "tpuci init"): it reads pytest's configuration there as
 * pytest finds it (pytest.ini, .pytest.ini, pyproject.toml's
 * [tool.pytest.ini_options], tox.ini's [pytest], setup.cfg's
 * [tool:pytest]) for testpaths, the registered markers and python_files,
 * and proposes a pytest job per family of markers (multi-host names on
 * an emulated v4-16 gang, TPU names on a v4-8, others plain) and one for
 * the unmarked rest, every choice explained in a comment. It writes no
 * file and leaves ctx's spec as it is. opts may be NULL. Returns 0 with
 * *out the spec (it loads, and `tpuci plan` of it warns of nothing) and
 * *summary one line saying what was read and which jobs were proposed,
 * both freed with tpuci_free(); or TPUCI_ESPEC (a configuration file that
 * cannot be read or parsed) or TPUCI_EUSAGE (no such folder, a size too
 * small), with tpuci_last_error() naming the file and line. */
int tpuci_init_spec(tpuci_ctx_t *ctx, const tpuci_init_options_t *opts, char **out, char **summary);

/* ------------------------------------------------------------------ */
/* The TPU catalogue                                                   */

/* The built-in catalogue of TPU accelerator types as a table (type NULL),
 * or one type ("v4-16", "v6e-8:2x4" for a layout) with the environment
 * each emulated host gets under `emulate` ("pjrt", "xrt", "jax", "none";
 * NULL: "pjrt"). *out is freed with tpuci_free(). An unknown type gives
 * TPUCI_EUSAGE and a message (with a suggestion) on ctx. */
int tpuci_topologies(tpuci_ctx_t *ctx, const char *type, const char *emulate, char **out);

/* ------------------------------------------------------------------ */
/* Container engine maintenance (blocking; they run their own loop)    */

/* Removes containers and networks that crashed or killed runs left
 * behind (found by their tpuci.run label), or only lists them with
 * dry_run; with a spec loaded, also the folders such runs left on the
 * workers of its `hosts` declarations (docs/ssh.md). *report (freed with
 * tpuci_free()) gets one line per object.
 * Returns the number found, or a negative code (TPUCI_EENGINE). */
int tpuci_engine_gc(tpuci_ctx_t *ctx, int dry_run, char **report);

/* Checks the engine, the images of the loaded spec (if any), disk space
 * and leftovers, and starts a tiny container on each network mode the
 * loaded spec's container jobs use. *report gets "ok/warn/FAIL" lines.
 * Returns 0 when no check failed, else the first failure's code. */
int tpuci_engine_doctor(tpuci_ctx_t *ctx, char **report);

/* Whether this machine looks like a TPU VM (`tpuci doctor --real`): its
 * TPU device nodes (/dev/accel*, /dev/vfio/<group>), what the Compute
 * Engine metadata server ($GCE_METADATA_HOST, else
 * metadata.google.internal; 2 s) or else TPU_ACCELERATOR_TYPE says the
 * slice is, emulation switches left in the environment, and the loaded
 * spec's real topologies against it. *report gets "ok/warn/FAIL" lines.
 * Returns 0, or TPUCI_EENGINE when it does not look like one. */
int tpuci_tpu_doctor(tpuci_ctx_t *ctx, char **report);

/* ------------------------------------------------------------------ */
/* Exporting the loaded spec to other CI systems                       */

typedef struct tpuci_export_options_s {
  size_t size; /* sizeof(tpuci_export_options_t) */
  /* The spec's path from the repository's root, as the exported workflow
   * runs it. NULL: the path it was loaded from (which must be relative). */
  const char *spec;
  /* A git URL of tpuci's sources and a branch, tag or commit in it that
   * the workflow builds. NULL: the remote and the commit this build of
   * tpuci came from (tpuci_build_source()); without a remote recorded,
   * source_url must be given (TPUCI_EUSAGE), and without a commit,
   * source_ref too. */
  const char *source_url;
  const char *source_ref;
  const char *name; /* the workflow's name; NULL: "tpuci" */
  int per_job;      /* one workflow job per job (a matrix) */
  /* Format "kubernetes" (docs/kubernetes.md). */
  int emulated;              /* every topology as tpuci's CPU emulation */
  int no_mounts;             /* leave the spec's mounts out */
  const char *run;           /* a run id for labels and names, or NULL */
  const char *results_claim; /* a PersistentVolumeClaim for results, or NULL */
  /* Format "github" (docs/github.md). */
  const char *const *runs_on; /* runs-on labels (all must match); n 0: */
  size_t n_runs_on;           /* ubuntu-latest */
  int timeout_minutes;        /* the workflow job's; 0: GitHub's default */
  const char *concurrency;    /* the workflow's concurrency group, or NULL */
  int cancel_in_progress;     /* a new run cancels the group's running one */
  /* A cron schedule ("0 3 * * 1") the workflow also runs on,
   * or NULL; 5 fields, checked (docs/github.md, "Triggers"). */
  const char *schedule;
  /* The URL of a .deb of tpuci (`cpack -G DEB`) that the
   * workflow downloads and installs instead of building tpuci from git;
   * NULL: build it. Not with source_url or source_ref. */
  const char *package;
  /* Format "kubernetes": an instance of more than one host is a JobSet
   * (jobset.x-k8s.io/v1alpha2), not an Indexed Job and a Service
   * (docs/kubernetes.md, "JobSet"). */
  int jobset;
} tpuci_export_options_t;

/* Fills `opts` with the defaults. */
void tpuci_export_options_init(tpuci_export_options_t *opts);

/* Writes the loaded spec for another system: format "github" (a GitHub
 * Actions workflow, docs/github.md) or "kubernetes" (a Job per selected
 * instance, or a JobSet per multi-host one, docs/kubernetes.md). *out is
 * freed with tpuci_free(). opts may be NULL. Returns 0, TPUCI_ESTATE when nothing is loaded,
 * TPUCI_ENOMATCH when no instance is selected (kubernetes), TPUCI_EUSAGE
 * for an unknown format or a spec that cannot be exported (more than 256
 * jobs per job, an absolute spec path, no source of tpuci known, a job
 * without an image on Kubernetes, ...: see tpuci_last_error()). A github
 * workflow that builds the commit this tpuci was built from adds a
 * warning (tpuci_warning()) when that build had changes the commit lacks,
 * or its commit was not on origin's branches. */
int tpuci_export(tpuci_ctx_t *ctx, const char *format, const tpuci_export_options_t *opts,
                 char **out);

#ifdef __cplusplus
}
#endif

#endif /* TPUCI_H */
