/* core/kind/pytest/: pytest jobs. This header is what the scheduler calls:
 * the command of each attempt, reading its JUnit file into the
 * instance's history, what a retry runs, and splitting a collected suite
 * into shards. The parts: JUnit parsing, per-test history and the merged
 * report (junit.h), recorded durations (timings.h) and shards (shard.h).
 * It may use core/runtime/ (an attempt's results folder), core/plan/ and
 * core/base/; core/sched/, core/report/ and core/api/ call it. */
#ifndef TPUCI_PYTEST_RUN_H
#define TPUCI_PYTEST_RUN_H

#include "kind/pytest/junit.h"
#include "plan/plan.h"
#include "runtime/runtime.h"
#include "kind/pytest/shard.h"
#include "kind/pytest/timings.h"
#include "base/util.h"

/* The JUnit file an attempt writes, in its results folder. */
#define TPUCI__JUNIT_FILE "junit.xml"
/* Each test report as pytest makes it, one JSON line (see pytest_run.c). */
#define TPUCI__PROGRESS_FILE "progress.jsonl"

/* What the bootstrap writes into the results folder when pytest cannot
 * be imported, {"problem": TEXT}, and the exit code it then ends with
 * (core/kind/pytest/plugin/tpuci_plugin.py, SETUP_FILE and SETUP_EXIT). */
#define TPUCI__SETUP_FILE "setup.json"
#define TPUCI__SETUP_EXIT 78
/* The line the collection pass prints (after a newline) when pytest
 * cannot be imported, followed by what is missing. */
#define TPUCI__SETUP_LINE "tpuci-setup: "
/* A shell's and tini's exit code for a program that is not there. */
#define TPUCI__EXIT_NOT_FOUND 127

/* pytest's exit codes when it ran to its end with tests that failed, and
 * when it collected nothing. */
#define TPUCI__PYTEST_FAILED 1
#define TPUCI__PYTEST_NO_TESTS 5

/* The command of one attempt: the instance's pytest command, run through
 * a bootstrap that records progress, with the JUnit options added (xunit1,
 * for file and line attributes) and, when `select` is not NULL, the
 * trailing pytest.args replaced by those node ids. With `only` (may be
 * NULL or empty) the process keeps only those node ids of what it
 * collects, in pytest's own order (the failing-first process, an order
 * check). */
void tpuci__pytest_argv(const tpuci__instance_t *inst, const char *results_path,
                        const tpuci__strv_t *select, const tpuci__strv_t *only, tpuci__strv_t *out);

/* The same for a shard that collects the whole suite itself and keeps
 * its part: `shard` is its tpuci__shard_assignment() (used only when
 * `select` is NULL; NULL: none); and `deps` the plugin's DEPS argument
 * (deps.h: recording what each test needs, the tests left out as
 * unaffected; NULL: neither); and `devices` its DEVICES argument, the
 * device check (tpuci__devices_arg(), plan/host_env.h; kind/devices.h;
 * NULL: none). */
void tpuci__pytest_argv_shard(const tpuci__instance_t *inst, const char *results_path,
                              const tpuci__strv_t *select, const tpuci__strv_t *only,
                              const char *shard, const char *deps, const char *devices,
                              tpuci__strv_t *out);

/* What a shard that kept its part of the whole suite collected before it
 * did (progress.jsonl's {"suite": [N, CRC]}: the count and the crc32 of
 * its sorted node ids). Returns 1 and fills both, or 0 when it did not
 * say. */
int tpuci__pytest_suite_seen(const char *results_dir, unsigned long *count, unsigned long *crc);

/* At most this much of node ids is given to a process as its `only`
 * (an argument's length is capped by the kernel at 128 KiB): the
 * failing-first process's, an order check's. */
#define TPUCI__ONLY_MAX_BYTES (64 * 1024)

/* `pytest --collect-only -q` with the instance's selection (-m, -k,
 * options, args), through a -c that says when pytest cannot be imported
 * (TPUCI__SETUP_LINE, exit TPUCI__SETUP_EXIT). */
void tpuci__pytest_collect_argv(const tpuci__instance_t *inst, tpuci__strv_t *out);

/* A pytest process as it ended: the folder of its results (may be
 * NULL), its outcome as the scheduler classified it, how it exited, its
 * cause so far (may be NULL) and how long it ran. */
typedef struct {
  const char *results_dir;
  tpuci_outcome_t outcome;
  const tpuci__exit_t *exit;
  const char *cause;
  uint64_t duration_ms;
} tpuci__pytest_ended_t;

/* After an attempt: reads results_dir/junit.xml (if any) into `h`, and
 * applies pytest's meaning of exit 5 (nothing collected): a pass with
 * allow_empty, else a failure that says which selection found nothing.
 * Returns the attempt's outcome; *cause is set to a new string when the
 * cause changes (else NULL). */
tpuci_outcome_t tpuci__pytest_after(tpuci__history_t *h, const tpuci__instance_t *inst,
                                    const char *results_dir, tpuci_outcome_t o,
                                    const tpuci__exit_t *ex, const char *cause,
                                    uint64_t duration_ms, const tpuci__strv_t *selection,
                                    char **new_cause);

/* What the attempt's environment lacked, as its cause, or NULL: the
 * bootstrap's TPUCI__SETUP_FILE (a gang's hosts, host 0 first), or exit
 * 127 before the bootstrap wrote anything (no interpreter). Names the
 * image (or this machine, for a local job) and what is missing:
 * "setup: image 'tpuci-test/busybox:1' has no python3 (exit 127)". Such
 * an attempt is infra and is not retried: a retry would lack it too.
 * `plan` may be NULL (then the image is named by its index). A new
 * string. */
char *tpuci__pytest_setup_problem(const tpuci__plan_t *plan, const tpuci__instance_t *inst,
                                  const char *results_dir, const tpuci__exit_t *ex);

/* The same for the collection pass, from its output `log` (NULL: not
 * read): its TPUCI__SETUP_LINE, or exit 127 with no line of pytest's. */
char *tpuci__pytest_collect_setup_problem(const tpuci__plan_t *plan, const tpuci__instance_t *inst,
                                          const char *log, size_t len, const tpuci__exit_t *ex);

/* The same for the failing-first process (the tests that failed last
 * time, in a process of their own): recorded as attempt 0, apart from
 * the attempts (tpuci__junit_attempt_t's `first`). */
tpuci_outcome_t tpuci__pytest_after_first(tpuci__history_t *h, const tpuci__instance_t *inst,
                                          const tpuci__pytest_ended_t *end, char **new_cause);

/* What a process's progress.jsonl says of test `id`: 1 it failed (or
 * errored), 0 it passed, -1 neither (not reported, skipped). */
int tpuci__pytest_test_result(const char *results_dir, const char *id);

/* "/a/./b//c/../d" -> "/a/b/d"; `path` is absolute. A new string. */
char *tpuci__path_normal(const char *path);

/* Where a test's file is on the host: pytest writes it relative to its
 * rootdir (or absolute), in the container for a docker or swarm job. The file is
 * joined to `rootdir` (which may be NULL: then only an absolute file can
 * be placed) and normalised; for a container job the result is mapped back
 * through the job's mounts (the longest target that holds it). Returns a
 * new absolute host path, or NULL when the file cannot be placed on the
 * host (no rootdir, or no mount holds it). */
char *tpuci__pytest_host_path(const tpuci__instance_t *inst, const char *rootdir, const char *file);

/* What the next attempt runs: returns 1 and fills `out` with node ids
 * (only what failed or did not run; with `unfinished`, only what did not
 * finish), or 0 when it must run everything again (the last attempt
 * crashed before pytest reported anything, or nothing failing is known),
 * or -1 with `unfinished` when every test finished: nothing to retry.
 * `prev` is the last attempt's selection (NULL: everything). */
int tpuci__pytest_next_selection(const tpuci__history_t *h, const tpuci__strv_t *prev,
                                 int unfinished, tpuci__strv_t *out);

/* The part of an instance name that identifies its shard group: the name
 * without ",shard=i/N" (or "[shard=i/N]"). A new string. */
char *tpuci__pytest_group_name(const tpuci__instance_t *inst);
/* The same for an instance's name: a test's identity across shards (the
 * history, `tpuci flaky`, the merged JUnit). A new string. */
char *tpuci__group_name_of(const char *name);

/* The line of a failure's traceback (a clipped tail, as progress.jsonl
 * has it when pytest's own crash line is missing) that says what was
 * raised: the first of the last group of pytest's "E   " lines, without
 * the "E" (`AssertionError: assert 1 == 2`), else the last line that
 * starts with an exception's name (`RuntimeError: boom`); NULL when there
 * is none. A new string. */
char *tpuci__pytest_failure_line(const char *tail);

#endif /* TPUCI_PYTEST_RUN_H */
