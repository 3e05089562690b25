/* Running pytest jobs (see pytest_run.h). */
#include "kind/pytest/pytest_run.h"
#include "kind/devices.h"
#include "kind/kind.h"
#include "kind/pytest/live.h"
#include "kind/pytest/progress.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

/* pytest runs through tpuci's bootstrap rather than `-m pytest`:
 * core/kind/pytest/plugin/tpuci_plugin.py, embedded at build time by
 * cmake/embed.cmake (CMakeLists.txt) and passed whole with -c, after the
 * device check's Python (kind/devices.h). Its docstring says what it does
 * (progress.jsonl as tests run, stacks at a SIGTERM, test_timeout, ONLY,
 * a shard's part, a swarm task's results through the log, the device
 * check before the first test). The attempt's own values follow it as
 * arguments: -c CODE <progress file> <test timeout in ms, 0: none> <only>
 * <shard, or empty> <deps> <devices> <pytest arguments...>. */
extern const char tpuci__py_tpuci_plugin[];

void tpuci__pytest_argv(const tpuci__instance_t *inst, const char *results_path,
                        const tpuci__strv_t *select, const tpuci__strv_t *only,
                        tpuci__strv_t *out) {
  tpuci__pytest_argv_shard(inst, results_path, select, only, NULL, NULL, NULL, out);
}

void tpuci__pytest_argv_shard(const tpuci__instance_t *inst, const char *results_path,
                              const tpuci__strv_t *select, const tpuci__strv_t *only,
                              const char *shard, const char *deps, const char *devices,
                              tpuci__strv_t *out) {
  const tpuci__pytest_t *py = tpuci__pytest_of(inst);
  tpuci__buf_t ids;
  size_t base = inst->argv.len - py->nargs, i;

  /* argv is python -m pytest ...: the interpreter, then the bootstrap. */
  tpuci__strv_push(out, inst->argv.items[0]);
  tpuci__strv_push(out, "-c");
  tpuci__strv_take(out, tpuci__devices_code(tpuci__py_tpuci_plugin));
  tpuci__strv_take(out, tpuci__printf("%s/%s", results_path, TPUCI__PROGRESS_FILE));
  tpuci__strv_take(out, tpuci__printf("%llu", (unsigned long long) py->test_timeout_ms));
  tpuci__buf_init(&ids);
  for (i = 0; only != NULL && i < only->len; i++)
    tpuci__buf_addf(&ids, "%s%s", i ? "\n" : "", only->items[i]);
  tpuci__strv_take(out, tpuci__buf_steal(&ids));
  /* Node ids say what to run; without them a shard keeps its part. */
  tpuci__strv_push(out, select == NULL && shard != NULL ? shard : "");
  tpuci__strv_push(out, deps != NULL ? deps : "");
  tpuci__strv_push(out, devices != NULL ? devices : "");
  for (i = 3; i < base; i++) tpuci__strv_push(out, inst->argv.items[i]);
  tpuci__strv_take(out, tpuci__printf("--junitxml=%s/%s", results_path, TPUCI__JUNIT_FILE));
  /* xunit1 keeps file and line: exact node ids and annotations. */
  tpuci__strv_push(out, "-o");
  tpuci__strv_push(out, "junit_family=xunit1");
  if (select != NULL) {
    for (i = 0; i < select->len; i++) tpuci__strv_push(out, select->items[i]);
  } else {
    for (i = base; i < inst->argv.len; i++) tpuci__strv_push(out, inst->argv.items[i]);
  }
}

/* The collection pass's -c: pytest.setup's commands (TPUCI_SETUP), then
 * pytest.main() as `-m pytest` would run it; a setup command that fails
 * or a pytest that cannot be imported says so on a line of its own
 * (TPUCI__SETUP_LINE) and ends with TPUCI__SETUP_EXIT. */
static const char tpuci__collect_code[] =
    "import os, sys\n"
    "for c in [c for c in os.environ.pop('TPUCI_SETUP', '').split('\\n') if c]:\n"
    "    r = os.system(c)\n"
    "    if r:\n"
    "        how = 'signal %d' % (r & 127) if r & 127 else 'exit %d' % (r >> 8)\n"
    "        sys.stderr.write('\\n" TPUCI__SETUP_LINE "pytest.setup command failed (%s): "
    "%s\\n' % (how, c))\n"
    "        sys.exit(78)\n"
    "try:\n"
    "    import pytest\n"
    "except Exception as e:\n"
    "    m = str(e).splitlines()\n"
    "    sys.stderr.write('\\n" TPUCI__SETUP_LINE "%s cannot import pytest (%s: %s)\\n' % (\n"
    "        os.path.basename(sys.executable) or 'python', type(e).__name__, m[0] if m else ''))\n"
    "    sys.exit(78)\n"
    "sys.exit(pytest.main(sys.argv[1:]))\n";

void tpuci__pytest_collect_argv(const tpuci__instance_t *inst, tpuci__strv_t *out) {
  size_t i;
  /* python -c (pytest), then what selects the tests. */
  if (inst->argv.len > 0) tpuci__strv_push(out, inst->argv.items[0]);
  tpuci__strv_push(out, "-c");
  tpuci__strv_push(out, tpuci__collect_code);
  i = 3;
  tpuci__strv_push(out, "--collect-only");
  tpuci__strv_push(out, "-q");
  for (; i < inst->argv.len; i++) tpuci__strv_push(out, inst->argv.items[i]);
}

/* "image 'REF'", or "this machine" for a job of no image. */
static char *tpuci__pytest_where(const tpuci__plan_t *plan, const tpuci__instance_t *inst) {
  if (inst->image < 0) return tpuci__strdup("this machine");
  if (plan != NULL && (size_t) inst->image < plan->nimages)
    return tpuci__printf("image '%s'", plan->images[inst->image].ref);
  return tpuci__printf("image %d", inst->image);
}

/* Whether a host of the attempt wrote `file` into its results folder. */
static int tpuci__results_have(const tpuci__strv_t *dirs, const char *file) {
  size_t k;
  for (k = 0; k < dirs->len; k++) {
    struct stat st;
    char *path = tpuci__printf("%s/%s", dirs->items[k], file);
    int r = stat(path, &st);
    free(path);
    if (r == 0) return 1;
  }
  return 0;
}

char *tpuci__pytest_setup_problem(const tpuci__plan_t *plan, const tpuci__instance_t *inst,
                                  const char *results_dir, const tpuci__exit_t *ex) {
  tpuci__strv_t dirs = {0};
  char *said, *where, *out = NULL;
  if (results_dir == NULL) return NULL;
  /* The image's words: bounded. */
  said = tpuci__results_first_string(results_dir, TPUCI__SETUP_FILE, "problem", 512);
  tpuci__results_host_dirs(results_dir, &dirs);
  where = tpuci__pytest_where(plan, inst);
  if (said != NULL) {
    out = tpuci__printf("setup: %s: %s", where, said);
  } else if (ex != NULL && ex->exit_code == TPUCI__EXIT_NOT_FOUND && ex->term_signal == 0 &&
             !tpuci__results_have(&dirs, TPUCI__PROGRESS_FILE)) {
    /* The interpreter never ran: nothing of the bootstrap's is there. */
    out = tpuci__printf("setup: %s has no %s (exit %d)", where,
                        inst->argv.len > 0 ? inst->argv.items[0] : "python", TPUCI__EXIT_NOT_FOUND);
  }
  free(said);
  free(where);
  tpuci__strv_free(&dirs);
  return out;
}

char *tpuci__pytest_collect_setup_problem(const tpuci__plan_t *plan, const tpuci__instance_t *inst,
                                          const char *log, size_t len, const tpuci__exit_t *ex) {
  static const char mark[] = "\n" TPUCI__SETUP_LINE;
  const char *at = NULL, *end;
  char *where, *out = NULL;
  size_t i;
  if (ex == NULL || ex->term_signal != 0) return NULL;
  if (ex->exit_code == TPUCI__SETUP_EXIT && log != NULL) {
    for (i = 0; i + sizeof(mark) - 1 <= len && at == NULL; i++)
      if (memcmp(log + i, mark, sizeof(mark) - 1) == 0) at = log + i + sizeof(mark) - 1;
  }
  if (at == NULL && ex->exit_code != TPUCI__EXIT_NOT_FOUND) return NULL;
  where = tpuci__pytest_where(plan, inst);
  if (at != NULL) {
    end = memchr(at, '\n', (size_t) (log + len - at));
    if (end == NULL) end = log + len;
    /* The image's words: bounded. */
    out = tpuci__printf("setup: %s: %.*s", where, (int) (end - at > 512 ? 512 : end - at), at);
  } else {
    out = tpuci__printf("setup: %s has no %s (exit %d)", where,
                        inst->argv.len > 0 ? inst->argv.items[0] : "python", TPUCI__EXIT_NOT_FOUND);
  }
  free(where);
  return out;
}

/* "-m 'tpu' -k 'not slow' tests/" for messages. */
static char *tpuci__pytest_selection_text(const tpuci__instance_t *inst) {
  const tpuci__pytest_t *py = tpuci__pytest_of(inst);
  tpuci__buf_t b;
  size_t i;
  tpuci__buf_init(&b);
  if (py->markers) tpuci__buf_addf(&b, "-m '%s'", py->markers);
  if (py->k) tpuci__buf_addf(&b, "%s-k '%s'", b.len ? " " : "", py->k);
  for (i = inst->argv.len - py->nargs; i < inst->argv.len; i++)
    tpuci__buf_addf(&b, "%s%s", b.len ? " " : "", inst->argv.items[i]);
  if (b.len == 0) tpuci__buf_adds(&b, "the default test paths");
  return tpuci__buf_steal(&b);
}

/* Thread stacks (stacks.txt) kept per host in the reports: at most this
 * much each, the head (the thread that was running comes first). */
#define TPUCI__STACKS_MAX (16 * 1024)

/* "FILE:LINE in FUNC" of the innermost frame of the first thread in
 * faulthandler's text (the thread that was running), into `out`. */
static void tpuci__stacks_where(const char *text, tpuci__buf_t *out) {
  const char *p = strstr(text, "  File \""), *q, *nl;
  if (p == NULL) return;
  p += strlen("  File \"");
  q = strstr(p, "\", line ");
  nl = strchr(p, '\n');
  if (q == NULL || (nl != NULL && q > nl)) return;
  tpuci__buf_add(out, p, (size_t) (q - p));
  q += strlen("\", line ");
  tpuci__buf_adds(out, ":");
  tpuci__buf_add(out, q, nl ? (size_t) (nl - q) : strlen(q));
}

/* Appends to `b` the thread stacks host `k` (of `n`) wrote when tpuci
 * stopped it, under a heading naming the host and the file. Returns 1
 * when there were any. */
static int tpuci__stacks_text(tpuci__buf_t *b, tpuci__buf_t *where, const char *dir, size_t k,
                              size_t n) {
  char *path = tpuci__printf("%s/stacks.txt", dir), *text = NULL;
  size_t len = 0;
  int got = 0;
  if (tpuci__read_file_max(path, (size_t) 4 << 20, &text, &len) == 0 && len > 0) {
    tpuci__buf_adds(b, "\nThe stacks of its threads");
    if (n > 1) tpuci__buf_addf(b, " on worker-%zu", k);
    tpuci__buf_addf(b, " when tpuci stopped it (%s%s):\n", path,
                    len > TPUCI__STACKS_MAX ? ", the first 16 KiB" : "");
    tpuci__buf_add(b, text, len > TPUCI__STACKS_MAX ? TPUCI__STACKS_MAX : len);
    if (where->len == 0) {
      tpuci__stacks_where(text, where);
      if (where->len > 0 && n > 1) tpuci__buf_addf(where, " on worker-%zu", k);
    }
    got = 1;
  }
  free(text);
  free(path);
  return got;
}

/* A gang's report is host 0's. The tests that failed on another host and
 * not on host 0, by host: "; failed on worker-1, not on worker-0: T, U"
 * (3 named, then "and N more"). tests[k] is what host k's progress.jsonl
 * says, read once by tpuci__pytest_after. */
static void tpuci__others_failed_text(tpuci__buf_t *b, const tpuci__junit_t *const *tests,
                                      size_t n) {
  tpuci__idmap_t failed0;
  size_t i, k;

  tpuci__idmap_init(&failed0);
  for (i = 0; i < tests[0]->len; i++)
    if (tpuci__test_outcome_failing(tests[0]->items[i].outcome))
      tpuci__idmap_put(&failed0, tests[0]->items[i].id, i);
  for (k = 1; k < n; k++) {
    size_t m = 0;
    for (i = 0; i < tests[k]->len; i++) {
      const tpuci__test_t *t = &tests[k]->items[i];
      if (!tpuci__test_outcome_failing(t->outcome) ||
          tpuci__idmap_get(&failed0, t->id) != TPUCI__IDMAP_NONE)
        continue;
      if (m == 0) tpuci__buf_addf(b, "; failed on worker-%zu, not on worker-0: ", k);
      if (m < 3) tpuci__buf_addf(b, "%s%s", m ? ", " : "", t->id);
      m++;
    }
    if (m > 3) tpuci__buf_addf(b, " and %zu more", m - 3);
  }
  tpuci__idmap_free(&failed0);
}

/* " while running X" for one host; for a gang the hosts that were in a
 * test, by name (tpuci__running_list_text). */
static void tpuci__running_text(tpuci__buf_t *b, const tpuci__progress_t *prs, size_t n) {
  const char **running = tpuci__calloc(n ? n : 1, sizeof(*running));
  tpuci__buf_t list;
  size_t i;
  for (i = 0; i < n; i++) running[i] = prs[i].running;
  tpuci__buf_init(&list);
  tpuci__running_list_text(&list, running, n);
  if (list.len > 0) tpuci__buf_addf(b, " while running %s", list.data);
  tpuci__buf_free(&list);
  free(running);
}

/* tpuci__pytest_after(), or with `first` the failing-first process's. */
static tpuci_outcome_t tpuci__after(tpuci__history_t *h, const tpuci__instance_t *inst,
                                    const tpuci__pytest_ended_t *end,
                                    const tpuci__strv_t *selection, int first, char **new_cause) {
  const char *results_dir = end->results_dir, *cause = end->cause;
  const tpuci__exit_t *ex = end->exit;
  tpuci_outcome_t o = end->outcome;
  tpuci__junit_attempt_t rec;
  tpuci__junit_t report;
  tpuci__progress_t *prs = NULL;
  tpuci__junit_t *hosts = NULL, **tests = NULL;
  tpuci__strv_t dirs = {0};
  tpuci__err_t e = {0, NULL};
  const char *running = NULL;
  struct stat st;
  tpuci__buf_t stacks, where;
  size_t ti, k;
  int have = 0, junit = 0, nstacks = 0;

  *new_cause = NULL;
  memset(&report, 0, sizeof(report));
  tpuci__buf_init(&stacks);
  tpuci__buf_init(&where);
  if (results_dir != NULL) tpuci__results_host_dirs(results_dir, &dirs);
  /* A gang's hosts each have a folder; host 0's report speaks for it. */
  if (dirs.len > 0) {
    char *path = tpuci__printf("%s/%s", dirs.items[0], TPUCI__JUNIT_FILE);
    if (stat(path, &st) == 0) {
      if (tpuci__junit_parse_file(path, &report, &e) == 0) junit = 1;
      if (junit || report.len > 0) have = 1;
      tpuci__err_clear(&e);
    }
    free(path);
  }

  if (o == TPUCI_OUTCOME_FAILED && ex->term_signal == 0 &&
      ex->exit_code == TPUCI__PYTEST_NO_TESTS) {
    char *sel = tpuci__pytest_selection_text(inst);
    if (tpuci__pytest_of(inst)->allow_empty) {
      o = TPUCI_OUTCOME_PASSED;
      *new_cause = tpuci__printf("no test selected by %s (allowed: allow_empty)", sel);
    } else {
      *new_cause = tpuci__printf("no test selected by %s (pytest exit 5; set "
                                 "pytest.allow_empty = true if that is fine)",
                                 sel);
    }
    free(sel);
  }

  /* progress.jsonl: host 0's rootdir, collection and, when there is no
   * JUnit file, the tests that finished; every host's running test; for
   * a failed gang, every host's tests (the cause compares them). */
  prs = tpuci__calloc(dirs.len ? dirs.len : 1, sizeof(*prs));
  if (o == TPUCI_OUTCOME_FAILED && dirs.len > 1) {
    hosts = tpuci__calloc(dirs.len, sizeof(*hosts));
    tests = tpuci__calloc(dirs.len, sizeof(*tests));
    for (k = 0; k < dirs.len; k++) tests[k] = &hosts[k];
    if (!have) tests[0] = &report; /* host 0's report is its progress */
  }
  for (k = 0; k < dirs.len; k++) {
    tpuci__junit_t *into = k == 0 && !have ? &report : tests != NULL ? &hosts[k] : NULL;
    if (tpuci__progress_read(dirs.items[k], into, &prs[k]) && into == &report) have = 1;
  }
  if (dirs.len > 0 && prs[0].rootdir) {
    free(h->rootdir);
    h->rootdir = prs[0].rootdir;
    prs[0].rootdir = NULL;
  }
  for (k = 0; k < dirs.len && running == NULL; k++) running = prs[k].running;
  /* pytest did not finish: say which test it was in. */
  if (running && o != TPUCI_OUTCOME_PASSED && *new_cause == NULL) {
    tpuci__buf_t b;
    tpuci__buf_init(&b);
    tpuci__buf_adds(&b, cause && *cause ? cause : tpuci_outcome_name(o));
    tpuci__running_text(&b, prs, dirs.len);
    *new_cause = tpuci__buf_steal(&b);
  }
  /* A gang that failed where host 0's report does not show it. */
  if (o == TPUCI_OUTCOME_FAILED && dirs.len > 1 && *new_cause == NULL) {
    tpuci__buf_t b;
    tpuci__buf_init(&b);
    tpuci__others_failed_text(&b, (const tpuci__junit_t *const *) tests, dirs.len);
    if (b.len > 0)
      *new_cause = tpuci__printf("%s%s", cause && *cause ? cause : tpuci_outcome_name(o), b.data);
    tpuci__buf_free(&b);
  }
  /* What faulthandler wrote at the SIGTERM, host by host. */
  if (o != TPUCI_OUTCOME_PASSED)
    for (k = 0; k < dirs.len; k++)
      nstacks += tpuci__stacks_text(&stacks, &where, dirs.items[k], k, dirs.len);
  if (nstacks > 0) {
    /* "... (at /src/t.py:4 in test_x; thread stacks in stacks.txt)" */
    tpuci__buf_t c;
    tpuci__buf_init(&c);
    tpuci__buf_addf(&c, "%s (",
                    *new_cause        ? *new_cause
                    : cause && *cause ? cause
                                      : tpuci_outcome_name(o));
    if (where.len) tpuci__buf_addf(&c, "at %s; ", where.data);
    /* The path from the run folder, as the console shows it. */
    tpuci__buf_addf(&c, "thread stacks in %s/%sstacks.txt)", tpuci__path_shown(results_dir),
                    dirs.len > 1 ? "worker-*/" : "");
    free(*new_cause);
    *new_cause = tpuci__buf_steal(&c);
  }
  /* Exact node ids where xunit1's attributes leave room for a guess. */
  if (have && dirs.len > 0 && prs[0].has_collection)
    tpuci__junit_resolve_ids(&report, &prs[0].collected);

  memset(&rec, 0, sizeof(rec));
  rec.outcome = o;
  rec.exit_code = ex->exit_code;
  rec.cause = *new_cause ? *new_cause : cause;
  rec.time_s = (double) end->duration_ms / 1000.0;
  rec.running = o != TPUCI_OUTCOME_PASSED ? running : NULL;
  rec.cut = o != TPUCI_OUTCOME_PASSED && (!junit || running != NULL);
  rec.stacks = nstacks > 0 ? stacks.data : NULL;
  rec.first = first;
  if (dirs.len > 0 && prs[0].has_collection) {
    rec.has_collection = 1;
    rec.collected = (const char *const *) prs[0].collected.items;
    rec.n_collected = prs[0].collected.len;
  }
  if (selection != NULL) {
    rec.selected = (const char *const *) selection->items;
    rec.n_selected = selection->len;
  }
  tpuci__history_add(h, &rec, have ? &report : NULL);
  tpuci__junit_free(&report);
  for (k = 0; k < dirs.len; k++) tpuci__progress_free(&prs[k]);
  free(prs);
  for (k = 0; hosts != NULL && k < dirs.len; k++) tpuci__junit_free(&hosts[k]);
  free(hosts);
  free(tests);
  tpuci__buf_free(&stacks);
  tpuci__buf_free(&where);
  tpuci__strv_free(&dirs);
  /* The tests this attempt ran: where their files are on the host. */
  for (ti = 0; have && ti < h->len; ti++) {
    tpuci__test_hist_t *t = &h->tests[ti];
    const tpuci__test_t *fin = tpuci__history_final(t);
    char *path;
    if (fin == NULL || tpuci__history_run_in(t, first ? 0 : (int) h->n_attempts) == NULL) continue;
    path = tpuci__pytest_host_path(inst, h->rootdir, fin->file);
    if (path == NULL) continue;
    free(t->path);
    t->path = path;
  }
  return o;
}

tpuci_outcome_t tpuci__pytest_after(tpuci__history_t *h, const tpuci__instance_t *inst,
                                    const char *results_dir, tpuci_outcome_t o,
                                    const tpuci__exit_t *ex, const char *cause,
                                    uint64_t duration_ms, const tpuci__strv_t *selection,
                                    char **new_cause) {
  tpuci__pytest_ended_t end = {.results_dir = results_dir,
                               .outcome = o,
                               .exit = ex,
                               .cause = cause,
                               .duration_ms = duration_ms};
  return tpuci__after(h, inst, &end, selection, 0, new_cause);
}

tpuci_outcome_t tpuci__pytest_after_first(tpuci__history_t *h, const tpuci__instance_t *inst,
                                          const tpuci__pytest_ended_t *end, char **new_cause) {
  return tpuci__after(h, inst, end, NULL, 1, new_cause);
}

int tpuci__pytest_test_result(const char *results_dir, const char *id) {
  tpuci__junit_t j;
  tpuci__progress_t pr;
  size_t i;
  int said = -1;
  memset(&j, 0, sizeof(j));
  memset(&pr, 0, sizeof(pr));
  tpuci__progress_read(results_dir, &j, &pr);
  for (i = 0; i < j.len; i++)
    if (j.items[i].id != NULL && strcmp(j.items[i].id, id) == 0)
      said = tpuci__test_outcome_failing(j.items[i].outcome) ? 1
             : j.items[i].outcome == TPUCI_TEST_PASSED       ? 0
                                                             : -1;
  tpuci__junit_free(&j);
  tpuci__progress_free(&pr);
  return said;
}

char *tpuci__path_normal(const char *path) {
  tpuci__buf_t b;
  const char *p = path;
  tpuci__buf_init(&b);
  while (*p) {
    const char *end;
    size_t n;
    while (*p == '/') p++;
    end = strchr(p, '/');
    n = end ? (size_t) (end - p) : strlen(p);
    if (n == 0 || (n == 1 && p[0] == '.')) {
      /* nothing */
    } else if (n == 2 && p[0] == '.' && p[1] == '.') {
      while (b.len > 0 && b.data[b.len - 1] != '/') b.len--;
      if (b.len > 0) b.len--;
      if (b.data) b.data[b.len] = '\0';
    } else {
      tpuci__buf_add(&b, "/", 1);
      tpuci__buf_add(&b, p, n);
    }
    p += n;
  }
  if (b.len == 0) tpuci__buf_adds(&b, "/");
  return tpuci__buf_steal(&b);
}

char *tpuci__pytest_host_path(const tpuci__instance_t *inst, const char *rootdir,
                              const char *file) {
  const tpuci__mount_t *best = NULL;
  size_t i, best_len = 0;
  char *joined, *norm, *out;

  if (file == NULL || *file == '\0') return NULL;
  if (file[0] == '/') joined = tpuci__strdup(file);
  else if (rootdir != NULL && rootdir[0] == '/') joined = tpuci__printf("%s/%s", rootdir, file);
  else return NULL;
  norm = tpuci__path_normal(joined);
  free(joined);
  if (!tpuci__runtime_props(inst->runtime)->containers) return norm;
  /* In a container (docker, podman, a swarm task: the same bind mounts):
   * back through the mount that holds it. */
  for (i = 0; i < inst->nmounts; i++) {
    char *target = tpuci__path_normal(inst->mounts[i].target);
    size_t n = strlen(target);
    int holds = strcmp(target, "/") == 0 ||
                (strncmp(norm, target, n) == 0 && (norm[n] == '/' || norm[n] == '\0'));
    if (strcmp(target, "/") == 0) n = 0;
    if (holds && (best == NULL || n > best_len)) {
      best = &inst->mounts[i];
      best_len = n;
    }
    free(target);
  }
  if (best == NULL) {
    free(norm);
    return NULL;
  }
  joined = tpuci__printf("%s/%s", best->source, norm + best_len);
  out = tpuci__path_normal(joined);
  free(joined);
  free(norm);
  return out;
}

int tpuci__pytest_next_selection(const tpuci__history_t *h, const tpuci__strv_t *prev,
                                 int unfinished, tpuci__strv_t *out) {
  int unknown = 0;
  size_t n = unfinished ? tpuci__history_unfinished_ids(h, out, &unknown)
                        : tpuci__history_failed_ids(h, out, &unknown);
  /* An attempt of the whole suite that ended before pytest said what it
   * collected may hide tests nobody has seen: run everything again. */
  if (unknown) {
    tpuci__strv_free(out);
    return 0;
  }
  if (n == 0) {
    tpuci__strv_free(out);
    if (unfinished) return -1;
    if (prev != NULL) {
      /* A selection whose attempt failed without a failing test (pytest
       * interrupted, a usage error): the same selection again. */
      tpuci__strv_copy(out, prev);
      return 1;
    }
    return 0;
  }
  return 1;
}

char *tpuci__group_name_of(const char *name) {
  const char *p = strstr(name, "shard="), *end;
  tpuci__buf_t b;

  /* Only a matrix value: "[shard=" or ",shard=". */
  while (p != NULL && (p == name || (p[-1] != '[' && p[-1] != ','))) p = strstr(p + 1, "shard=");
  if (p == NULL) return tpuci__strdup(name);
  end = p + strlen("shard=");
  while (*end && *end != ',' && *end != ']') end++;
  tpuci__buf_init(&b);
  if (p[-1] == ',') {
    tpuci__buf_add(&b, name, (size_t) (p - 1 - name));
    tpuci__buf_adds(&b, end);
  } else if (*end == ',') {
    tpuci__buf_add(&b, name, (size_t) (p - name));
    tpuci__buf_adds(&b, end + 1);
  } else {
    /* "job[shard=i/N]": the job alone. */
    tpuci__buf_add(&b, name, (size_t) (p - 1 - name));
  }
  return tpuci__buf_steal(&b);
}

char *tpuci__pytest_group_name(const tpuci__instance_t *inst) {
  return tpuci__group_name_of(inst->name);
}
