/* Per-test results: parsing pytest's --junitxml reports, the history of
 * one job instance's tests across attempts, and the merged JUnit report
 * of a whole run.
 *
 * Model (docs/pytest.md): each attempt of an instance may leave a JUnit
 * report. A test's final result is its result in the last attempt that
 * reported it; a test that failed or errored and then did not fail is
 * flaky, and its earlier failures are kept. An attempt that timed out,
 * ran out of memory, crashed or hit an infrastructure failure is itself a
 * test case in the merged report, so it can never read as a pass.
 *
 * Strings in these structures are owned, NUL-terminated UTF-8.
 */
#ifndef TPUCI_JUNIT_H
#define TPUCI_JUNIT_H

#include <stddef.h>

#include "tpuci.h"
#include "base/idmap.h"
#include "base/util.h"

/* Limits for untrusted reports. Bodies (failure text, system-out) and
 * message attributes longer than these keep their head and their tail
 * (pytest puts the assertion at the end of a traceback) around a
 * "[... N bytes truncated ...]" marker. */
#define TPUCI__JUNIT_TEXT_MAX (64 * 1024)
#define TPUCI__JUNIT_MESSAGE_MAX (8 * 1024)
#define TPUCI__JUNIT_NAME_MAX 4096                  /* classname, name, file, type */
#define TPUCI__JUNIT_MAX_BYTES ((size_t) 512 << 20) /* one report */
#define TPUCI__JUNIT_MAX_DEPTH 64                   /* element nesting */
#define TPUCI__JUNIT_MAX_TESTS 1000000              /* per report */
#define TPUCI__JUNIT_MAX_JOINS 1000                 /* repeated test cases whose texts join */

/* ------------------------------------------------------------------ */
/* One report                                                          */

typedef enum {
  TPUCI_TEST_PASSED = 0,
  TPUCI_TEST_FAILED,     /* <failure>: the test body failed (or XPASS(strict)) */
  TPUCI_TEST_ERROR,      /* <error>: setup/teardown or collection failed */
  TPUCI_TEST_SKIPPED,    /* <skipped> */
  TPUCI_TEST_XFAIL,      /* <skipped type="pytest.xfail"> */
  TPUCI_TEST_UNAFFECTED, /* left out: nothing it needs changed since it
                            passed (deps.h); <skipped type="tpuci.unaffected"> */
  TPUCI_TEST__COUNT
} tpuci__test_outcome_t;

/* A test's outcome in reports (JSON, tpuci_test_info()) when no attempt
 * reported a result for it; it fails the instance. */
#define TPUCI__TEST_NOT_RUN "not-run"

/* "passed", "failed", "error", "skipped", "xfail", "unaffected". */
const char *tpuci__test_outcome_name(tpuci__test_outcome_t o);
/* 1 for failed and error: the outcomes that make pytest exit non-zero. */
int tpuci__test_outcome_failing(tpuci__test_outcome_t o);

typedef struct {
  char *id;        /* pytest node id, see tpuci__junit_node_id() */
  char *classname; /* as written; "" when absent */
  char *name;      /* as written; "" when absent */
  char *file;      /* the file attribute (xunit1), or NULL */
  int line;        /* the line attribute as written (pytest: 0-based), -1 */
  tpuci__test_outcome_t outcome;
  double time_s;    /* the time attribute; 0 when absent or invalid */
  char *type;       /* type attribute of the failure/error/skipped, or NULL */
  char *message;    /* its message attribute, or NULL */
  char *text;       /* its body (the traceback), or NULL */
  char *system_out; /* <system-out>, <system-err>, or NULL */
  char *system_err;
  int reruns; /* Surefire flakyFailure/flakyError/rerunFailure/
                      rerunError children (our own merged reports) */
} tpuci__test_t;

/* 1 for the run of a test an attempt cancelled cut short (Ctrl-C,
 * --deadline, --fail-fast, a failing-first process stopped): typed
 * "tpuci.cancelled", it says nothing of the test (never an earlier
 * failure that makes it flaky, never a failure in the history). */
int tpuci__test_cancelled(const tpuci__test_t *r);

typedef struct {
  tpuci__test_t *items;
  size_t len, cap;
  int suites; /* <testsuite> elements seen */
} tpuci__junit_t;

/* Parses one JUnit XML report (a <testsuites> root holding <testsuite>
 * elements, or a bare <testsuite>, at any nesting) and appends its tests
 * to j: zeroed, or holding the reports of the same attempt's other
 * shards. A test case that appears twice (pytest writes a call failure
 * and a teardown error as two <testcase>s) is merged into one: failed
 * wins over error, times add up, the second message is appended to the
 * text.
 *
 * Returns 0, or TPUCI_EIO for malformed XML, a DTD that declares entities,
 * a root other than testsuites/testsuite, or a report over the limits
 * above; err then says "junit:LINE:COL: what". On error j still holds the
 * test cases that were complete before the error (a truncated report
 * keeps what it had), and must be freed either way. */
int tpuci__junit_parse(const char *data, size_t len, tpuci__junit_t *j, tpuci__err_t *err);
/* The same for a file; messages start with the path. UV_ENOENT (and other
 * negative errno codes) when the file cannot be read. */
int tpuci__junit_parse_file(const char *path, tpuci__junit_t *j, tpuci__err_t *err);
void tpuci__junit_free(tpuci__junit_t *j);

void tpuci__test_free(tpuci__test_t *t);
/* Deep copy. */
void tpuci__test_copy(tpuci__test_t *dst, const tpuci__test_t *src);

/* Rebuilds pytest's node id from a test case's attributes (a new string):
 *  - with `file` (xunit1): file, then the classname's components after
 *    the module's dotted path as classes, then name:
 *    file="tests/test_m.py" classname="tests.test_m.TestC" name="test_x[1]"
 *    -> "tests/test_m.py::TestC::test_x[1]";
 *  - without it (xunit2): the trailing classname components that start
 *    with an upper-case letter are classes, the rest is the module path:
 *    "tests.test_m.TestC" + "test_x" -> "tests/test_m.py::TestC::test_x";
 *  - an empty classname is a collection error, whose name is the module:
 *    "tests.test_m" -> "tests/test_m.py".
 * Without `file` this is a guess: a module whose name starts with an
 * upper-case letter, a lower-case class (python_classes), a folder whose
 * name holds a dot, a non-.py item or a --junit-prefix come out wrong.
 * tpuci__junit_resolve_ids() fixes them when the collected ids are known. */
char *tpuci__junit_node_id(const char *classname, const char *name, const char *file);

/* pytest's own mapping from a node id to (classname, name), as its
 * junitxml plugin writes them (mangle_test_address). Both new strings. */
void tpuci__junit_mangle(const char *node_id, char **classname, char **name);

/* Replaces the guessed ids of j's tests by the ids in `known` (for
 * example from `pytest --collect-only -q`) whose mangled classname and
 * name match. Returns how many ids changed. */
size_t tpuci__junit_resolve_ids(tpuci__junit_t *j, const tpuci__strv_t *known);

/* ------------------------------------------------------------------ */
/* History of one instance across attempts                             */

/* What the caller knows about one finished attempt. */
typedef struct {
  /* PASSED, FAILED, TIMEOUT, OOM, INFRA or CANCELLED (tpuci__classify). */
  tpuci_outcome_t outcome;
  int exit_code;     /* -1 when killed or never ran */
  const char *cause; /* "timed out after 25m", "exit 3", or NULL */
  double time_s;     /* wall clock of the attempt */
  /* The node ids this attempt was asked to run (a re-run of failures, a
   * shard); NULL means "the whole suite". */
  const char *const *selected;
  size_t n_selected;
  /* The test that had started and not finished when the attempt ended
   * (from progress.jsonl), or NULL. */
  const char *running;
  /* The node ids pytest collected for this attempt, in the order it was
   * to run them (progress.jsonl's "collected"); has_collection 0 when it
   * ended before it had collected (or said nothing). */
  const char *const *collected;
  size_t n_collected;
  int has_collection;
  /* 1 when pytest did not finish: `report` (if any) is what
   * progress.jsonl kept of an attempt killed or crashed in the middle,
   * so the tests without a result in it never finished. */
  int cut;
  /* The stack of every thread of pytest when tpuci stopped the attempt
   * (faulthandler on SIGTERM), per host, or NULL: the text of the run
   * of the test it was cut short in ends with it. */
  const char *stacks;
  /* 1 for the failing-first process (the tests that failed last time,
   * run in a process of their own that starts first): it is recorded
   * apart from the attempts, as attempt 0, and its runs come before
   * every attempt's. */
  int first;
} tpuci__junit_attempt_t;

typedef struct {
  int attempt; /* 1-based; 0: the failing-first process */
  tpuci__test_t result;
} tpuci__test_run_t;

/* One test across attempts: at most one run per attempt, in order. A
 * test that was collected (or selected) but has no run never got a
 * result: its final outcome is "not run", which fails the instance. */
typedef struct {
  char *id;
  tpuci__test_run_t *runs;
  size_t len, cap;
  /* Its file on the host (absolute) when the caller could map pytest's
   * path back (tpuci__pytest_host_path()), or NULL. */
  char *path;
  /* Where its final failure happened in the project: the innermost frame
   * of the traceback there, on the host (absolute), and its 1-based line
   * (tpuci__trace_locate(), pytest/trace.h); NULL and 0 when it does not
   * fail or no frame is in the project. */
  char *fail_path;
  int fail_line;
  /* Order dependence (pytest/order.h): 1 when it failed in one process
   * of this run and passed in another whose tests before it differed,
   * and did not fail in the end: a flaky class of its own. Its
   * candidates are the tests that ran before it where it failed (or,
   * when it failed first in its process, those before it where it
   * passed), its polluter the one of them the order checks found (NULL:
   * none found or none checked); order_confirmed 1 when a check ran it
   * after its candidates again and it failed again. */
  int order_dep;
  int order_confirmed;
  int order_brittle; /* it fails alone: one of them sets it up */
  tpuci__strv_t candidates;
  char *polluter;
  int order_checks;               /* check processes that ran it */
  int order_apart;                /* runs apart from its candidates it passed (order.h) */
  char *order_note;               /* tpuci__order_text(), once the checks are over */
  int fail_attempt, pass_attempt; /* where it failed and passed (0: first) */
  /* The selection left it out, its audit ran it, and it failed: a miss
   * of the selection (select.audit, docs/pytest.md). */
  int missed;
} tpuci__test_hist_t;

/* One attempt as recorded. */
typedef struct {
  tpuci_outcome_t outcome;
  int exit_code;
  char *cause;
  double time_s;
  int reported; /* a report was given (possibly partial) */
  int has_selection;
  tpuci__strv_t selected;
  size_t tests;            /* test cases in its report */
  size_t failing;          /* of which failed or errored */
  size_t missing;          /* tests it should have run but did not report */
  char *running;           /* the test it was running when it ended, or NULL */
  int has_collection;      /* pytest said what it collected: */
  tpuci__strv_t collected; /* those node ids, in run order */
  int cut;                 /* pytest did not finish (killed, crashed) */
} tpuci__attempt_rec_t;

typedef struct tpuci__history_s {
  char *instance;
  tpuci__attempt_rec_t *attempts;
  size_t n_attempts, cap_attempts;
  tpuci__test_hist_t *tests; /* in the order first seen */
  size_t len, cap;
  tpuci__idmap_t map; /* id -> index into tests */
  /* pytest's rootdir as the latest attempt saw it (where the tests' files
   * are relative to, in the container), or NULL. */
  char *rootdir;
  /* The failing-first process (attempt 0), or NULL when there was none. */
  tpuci__attempt_rec_t *first;
  /* 1 once the tests are in the order of an attempt's collection (the
   * first attempt that said what it collected): pytest's own order,
   * whatever process reported them first. */
  int ordered;
  /* The content key (runtime/tree.h) of the files of the git work tree
   * holding the spec as the run started, the state folder left out: with
   * the commit, the tree the history store (flaky.h) says the run was
   * of; NULL: not known (outside git, a cached pass). */
  char *tree;
  /* The results cache's input key of the instance this run (api/
   * run_cache.c), or NULL: the same key in two runs of different trees
   * says the test ran from the same inputs (flaky.h). */
  char *inputs;
  /* 1: its run recorded what each test needs (deps.h: a tracer in the
   * process), so its durations are traced ones (timings.h). */
  int traced;
} tpuci__history_t;

void tpuci__history_init(tpuci__history_t *h, const char *instance);
void tpuci__history_free(tpuci__history_t *h);

/* Records the next attempt (or, with a->first, the failing-first
 * process, as attempt 0). `report` is its parsed JUnit report, or NULL
 * when it left none (crashed or killed before pytest wrote it, file
 * missing or unreadable). The report's tests move into the history:
 * `report` is left empty (freeing it stays harmless).
 * The tests the attempt was to run (its collection, else its selection)
 * become tests of the instance first, in that order, so that one that
 * never gets a result is still there (not run). When the attempt did not
 * pass and names the test it was `running`, that test gets a run of this
 * attempt if it has none (failed, or an error for infra and cancelled,
 * typed "tpuci.<outcome>", the cause as its message): it was cut short,
 * and a later pass makes it flaky with this run kept as the earlier one;
 * a run it has (a passed call whose teardown never finished) becomes
 * that error. */
void tpuci__history_add(tpuci__history_t *h, const tpuci__junit_attempt_t *a,
                        tpuci__junit_t *report);

/* The result that counts: the test's run in the last attempt that
 * reported it; NULL when no attempt did (not run). */
const tpuci__test_t *tpuci__history_final(const tpuci__test_hist_t *t);
/* 1 when the final result does not fail (passed, skipped, xfail) but an
 * earlier run (an attempt's, the failing-first process's) failed or
 * errored, and it is not order-dependent (a class of its own). */
int tpuci__history_flaky(const tpuci__test_hist_t *t);
/* The run of attempt `attempt` (0: the failing-first process), or NULL. */
const tpuci__test_run_t *tpuci__history_run_in(const tpuci__test_hist_t *t, int attempt);
/* The record of attempt `attempt` (0: the failing-first process), or
 * NULL. */
const tpuci__attempt_rec_t *tpuci__history_attempt(const tpuci__history_t *h, int attempt);
/* 1 when the attempt ended abnormally: timeout, OOM, infra, cancelled,
 * no report at all, pytest cut short (killed or crashed in the middle),
 * or failed although its report shows no failing test (pytest
 * interrupted, internal error, usage error, nothing collected).
 * Such an attempt becomes a test case of its own in the merged report. */
int tpuci__attempt_abnormal(const tpuci__attempt_rec_t *a);
/* The node ids an attempt was to run: its collection, else its
 * selection; NULL when it said neither (it ran the whole suite and ended
 * before pytest had collected). */
const tpuci__strv_t *tpuci__attempt_scope(const tpuci__attempt_rec_t *a);
/* 1 when an attempt after attempts[k] (0-based) was not abnormal: the
 * trouble of attempt k was retried away. */
int tpuci__history_recovered_after(const tpuci__history_t *h, size_t k);

/* The node ids to run again ("re-run only what failed"), in collection
 * order (the order tests were first known), appended to out: tests whose
 * final result failed or errored (the test an attempt was cut short in
 * among them), tests that never got a result, and the tests the last
 * attempt was to run (its collection, else its selection) but did not
 * report. *unknown (may be NULL) is set to 1 when the last attempt did
 * not say what it was to run (no collection, no selection: the whole
 * suite) and did not finish normally: tests nobody has seen may exist,
 * and the caller should run the whole selection again.
 * Returns the number of ids appended. */
size_t tpuci__history_failed_ids(const tpuci__history_t *h, tpuci__strv_t *out, int *unknown);
/* The same, without the tests that finished and failed: only the test
 * the last attempt was cut short in, tests that never got a result and
 * those the last attempt was to run but did not report
 * (retries.rerun = "unfinished"). */
size_t tpuci__history_unfinished_ids(const tpuci__history_t *h, tpuci__strv_t *out, int *unknown);

typedef struct {
  size_t tests;                                              /* distinct tests */
  size_t passed, failed, errors, skipped, xfail, unaffected; /* by final result */
  size_t not_run;           /* known, but no attempt reported a result */
  size_t flaky;             /* passed (or skipped) after a failure */
  size_t abnormal_attempts; /* attempts shown as test cases */
  size_t abnormal_failing;  /* of which count as failures: no later
                                attempt completed normally */
} tpuci__history_summary_t;

void tpuci__history_summarize(const tpuci__history_t *h, tpuci__history_summary_t *s);

/* Test `id` was left out of attempt `attempt` as unaffected (deps.h):
 * its run there says so, with the run it last passed in (NULL: not
 * known) as its text. */
void tpuci__history_unaffected(tpuci__history_t *h, int attempt, const char *id, const char *run);

/* 1 when every test of the instance finally passed, was skipped or
 * xfailed (none failed, errored or never ran). */
int tpuci__history_all_pass(const tpuci__history_t *h);

/* ------------------------------------------------------------------ */
/* The merged report                                                   */

/* One attempt of a job that is not a pytest job. */
typedef struct {
  tpuci_outcome_t outcome; /* PASSED, FAILED, TIMEOUT, OOM, INFRA, CANCELLED */
  int exit_code;           /* -1 when killed or never ran */
  const char *cause;       /* "exit 3", "timed out after 2s", or NULL */
  double time_s;
  const char *log;      /* its log's path, or NULL */
  const char *log_tail; /* the last lines of its log, or NULL; */
  size_t log_tail_len;  /* its length (it may hold NUL bytes) */
} tpuci__junit_run_t;

/* A job that is not a pytest job: one test case with the instance's
 * outcome. */
typedef struct {
  const char *instance;
  tpuci_outcome_t outcome; /* final; FLAKY, or NONE when it never ran */
  const char *why;         /* NONE or no attempt: why it did not run */
  const tpuci__junit_run_t *runs;
  size_t n_runs;
} tpuci__junit_command_t;

/* One suite of the merged report: a pytest instance's history, or a
 * command instance (exactly one of the two is set). */
typedef struct {
  const tpuci__history_t *history;
  const tpuci__junit_command_t *command;
  /* More <property>s of the suite (a history's), after tpuci's own:
   * name, value, name, value, ... (the quarantine: "tpuci.quarantined"),
   * or NULL. */
  const tpuci__strv_t *props;
  /* The instance's identity in test cases' classnames (a history's): the
   * instance without its shard ("unit[python=3.11]"), so that tests of
   * two matrix instances never share a classname and the shards of one
   * instance share theirs; NULL: pytest's classnames as they are. */
  const char *identity;
  /* The project's folder on the host (absolute), or NULL: a test whose
   * file is below it is named by its path from there, not from pytest's
   * rootdir, so its classname does not change with the job's workdir. */
  const char *root;
  /* 1: test cases also get `file` (the module's path as in the
   * classname) and `line` (1-based: where it failed in the project, else
   * where the test is), which neither schema allows (--junit-file-line). */
  int file_line;
} tpuci__junit_suite_t;

/* Appends to out one JUnit XML document for a whole run: <testsuites>
 * with one <testsuite name="INSTANCE"> per entry, in order.
 *  - A history: each test once with its final result, its classname
 *    "IDENTITY.MODULE.CLASS" (see tpuci__junit_suite_t, docs/pytest.md)
 *    and, when pytest gave no type, the exception's class as the type of
 *    its <failure>/<error> (tpuci__trace_exception()); earlier failures
 *    as Surefire's <flakyFailure>/<flakyError> (final result passing) or
 *    <rerunFailure>/<rerunError> (still failing), each with <stackTrace>;
 *    abnormal attempts as test cases classname="tpuci" name="INSTANCE
 *    attempt N".
 *  - A command: one test case classname="tpuci" name="INSTANCE" with the
 *    final outcome (failure for failed, timeout, oom; error for infra,
 *    cancelled, not run) and its earlier failed attempts as flaky or
 *    rerun elements, like tests.
 * The document keeps to both Maven Surefire's test report schema (3.0)
 * and Jenkins' JUnit schema, except that Jenkins' has no flaky and rerun
 * elements: every <failure>/<error> and rerun element has a
 * `type`, <skipped> has no attribute, test cases have only classname,
 * name and time (and file and line with `file_line`, which neither
 * allows), and children come in Surefire's order. Counts are those
 * of the test cases written. */
void tpuci__junit_write_run(tpuci__buf_t *out, const tpuci__junit_suite_t *suites, size_t n);
int tpuci__junit_write_run_file(const char *path, const tpuci__junit_suite_t *suites, size_t n,
                                tpuci__err_t *err);
/* The same for histories only. */
void tpuci__junit_write_merged(tpuci__buf_t *out, const tpuci__history_t *const *hs, size_t n);
/* The same, written atomically to path. Returns 0 or a negative code. */
int tpuci__junit_write_merged_file(const char *path, const tpuci__history_t *const *hs, size_t n,
                                   tpuci__err_t *err);

/* The counts of a <testsuite>, or the totals of <testsuites>. */
typedef struct {
  size_t tests, failures, errors, skipped;
  double time_s;
} tpuci__junit_counts_t;

/* The document around `suites` (<testsuite> elements): the XML
 * declaration and <testsuites name="tpuci"> with the `total` counts
 * (what tpuci__junit_write_run() writes around its suites). */
void tpuci__junit_write_doc(tpuci__buf_t *out, const tpuci__junit_counts_t *total,
                            const tpuci__buf_t *suites);

/* Several runs' merged JUnit reports (their run folders' junit.xml, as
 * tpuci__junit_write_run() wrote them) as one document (`tpuci merge`):
 * every <testsuite> of each, byte for byte and in order, in one
 * <testsuites> whose totals are theirs added up. Returns 0, or
 * TPUCI_EIO with "PATH:LINE:COL: what" for a file that is not such a
 * report (malformed, another root, entity declarations, over the size
 * limit), or the read's negative code ("PATH: cannot read: ..."). */
int tpuci__junit_merge_files(tpuci__buf_t *out, const char *const *paths, size_t n,
                             tpuci__err_t *err);
/* The same for documents in memory (read as UTF-8, whatever they
 * declare); `name` is what messages call each. */
typedef struct {
  const char *name;
  const char *data;
  size_t len;
} tpuci__junit_doc_t;
int tpuci__junit_merge_docs(tpuci__buf_t *out, const tpuci__junit_doc_t *docs, size_t n,
                            tpuci__err_t *err);

/* XML escaping into b: & < > and CR always; in attributes also ", tab
 * and LF as character references. Invalid UTF-8 becomes U+FFFD,
 * characters XML 1.0 forbids become "#xNN" as pytest writes them. */
void tpuci__xml_escape(tpuci__buf_t *b, const char *s, size_t n, int attr);

#endif /* TPUCI_JUNIT_H */
