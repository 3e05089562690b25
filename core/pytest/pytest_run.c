/* Running pytest jobs (see pytest_run.h). */
#include "pytest/pytest_run.h"
#include "pytest/live.h"
#include "pytest/progress.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* pytest runs through this bootstrap rather than `-m pytest`, so that a
 * plugin object (no file, no PYTHONPATH) appends every test report to
 * progress.jsonl as it happens: when an attempt is killed (timeout, OOM)
 * before pytest writes its JUnit file, the tests it finished are kept.
 * The collection comes first ({"collected": [node ids in run order]},
 * after deselection and reordering), so that the tests a killed or
 * crashed attempt never reached are known too.
 * SIGTERM (the first thing tpuci sends at a timeout or a cancel) makes
 * faulthandler write every thread's stack to stacks.txt beside it, then
 * goes on as it would have (pytest ends, or waits for the SIGKILL).
 * With a test timeout (pytest.test_timeout), each test's setup, call and
 * teardown together get a SIGALRM timer; when it fires, the test fails
 * with the stacks of every thread in its message and pytest goes on with
 * the next test.
 * A process given <only> (node ids, one a line: the failing-first
 * process, an order check) keeps only those of what it collects, in
 * pytest's own order, and deselects the rest; when none of them is
 * collected, pytest's exit 5 becomes 0. tpuci never reorders the tests
 * of a process.
 * A shard given <shard> (tpuci__shard_assignment(): its number, the
 * shards with tests, and which shard each file, class or test of the
 * recorded collection went to) collects the whole suite and keeps its
 * part: what the lines name for it, and of what they do not name (tests
 * new since), what crc32 of its file, class or test gives it; the rest is
 * deselected. When nothing is left for it but other shards have tests,
 * pytest's exit 5 becomes 0. Such a shard also writes what it collected
 * before keeping its part, as a count and the crc32 of the sorted node
 * ids ({"suite": [N, CRC]}), for tpuci to compare across the shards.
 * When pytest is done (its reports written), the atexit functions run
 * and the process ends with os._exit(): the interpreter's own teardown
 * (about 2 s with torch imported, on a busy machine) would only delay the
 * attempt's end, and with it a retry's start.
 *
 * With TPUCI_RESULTS_LOG (a swarm task, which may run on any node: no
 * folder of tpuci's machine is mounted there) the bootstrap first forks:
 * the child runs pytest as above, and the parent passes it the signals
 * it gets, waits for it, prints the results folder to stdout between
 * lines that start with that key (runtime/engine/logres.h), each line
 * in one write (at most 3 KB: atomic on a pipe), and ends as the child did (its exit code, or its signal).
 * At a SIGTERM that the child outlives by 0.1 s (a test that ignores it:
 * the SIGKILL after the grace leaves no time after), it prints what the
 * folder holds then (the stacks, the progress) as a snapshot first.
 * argv: -c CODE <progress file> <test timeout in ms, 0: none> <only>
 * <shard, or empty> <pytest arguments...>. */
static const char tpuci__bootstrap[] =
    "import os, sys\n"
    "k = os.environ.get('TPUCI_RESULTS_LOG')\n"
    "if k:\n"
    "    import binascii, signal, time\n"
    "    def w(b):\n"
    "        while b:\n"
    "            b = b[os.write(1, b):]\n"
    "    def send(how):\n"
    "        d = os.path.dirname(sys.argv[1])\n"
    "        names = sorted(n for n in os.listdir(d) if os.path.isfile(os.path.join(d, n)))\n"
    "        w(('%s results %s %d\\n' % (k, how, len(names))).encode())\n"
    "        for n in names:\n"
    "            with open(os.path.join(d, n), 'rb') as f:\n"
    "                b = f.read()\n"
    "            w(('%s file %s %d %d\\n' % (k, n, len(b), binascii.crc32(b))).encode())\n"
    "            for i in range(0, len(b), 2250):\n"
    "                w(k.encode() + b' d ' + binascii.b2a_base64(b[i:i + 2250]))\n"
    "            w(('%s end %s\\n' % (k, n)).encode())\n"
    "        w(('%s results end %d\\n' % (k, len(names))).encode())\n"
    "    w((k + ' results on\\n').encode())\n"
    "    pid = os.fork()\n"
    "    if pid:\n"
    "        def fwd(n, f):\n"
    "            os.kill(pid, n)\n"
    "            if n == signal.SIGTERM:\n"
    "                for i in range(10):\n"
    "                    time.sleep(0.01)\n"
    "                    if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):\n"
    "                        return\n"
    "                send('snapshot')\n"
    "        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT,\n"
    "                  signal.SIGUSR1, signal.SIGUSR2):\n"
    "            signal.signal(s, fwd)\n"
    "        st = os.waitpid(pid, 0)[1]\n"
    "        try:\n"
    "            send('begin')\n"
    "        finally:\n"
    "            if os.WIFSIGNALED(st):\n"
    "                try:\n"
    "                    signal.signal(os.WTERMSIG(st), signal.SIG_DFL)\n"
    "                except (OSError, ValueError):\n"
    "                    pass\n"
    "                os.kill(os.getpid(), os.WTERMSIG(st))\n"
    "            os._exit(os.WEXITSTATUS(st) if os.WIFEXITED(st) else 1)\n"
    "import faulthandler, json, signal, tempfile, time, zlib\n"
    "import pytest\n"
    "stacks = open(os.path.join(os.path.dirname(sys.argv[1]), 'stacks.txt'), 'w')\n"
    "faulthandler.register(signal.SIGTERM, file=stacks, all_threads=True, chain=True)\n"
    "limit = int(sys.argv[2]) / 1000\n"
    "only = set(i for i in sys.argv[3].split('\\n') if i)\n"
    "class TpuciPart:\n"
    "    def __init__(self, lines):\n"
    "        by, me, live = lines[0].split(' ')\n"
    "        self.by, self.me = by, int(me)\n"
    "        self.live = [int(k) for k in live.split(',') if k]\n"
    "        self.part = {}\n"
    "        for line in lines[1:]:\n"
    "            k, _, unit = line.partition('\\t')\n"
    "            self.part[unit] = int(k)\n"
    "        self.kept = self.dropped = 0\n"
    "    def mine(self, nodeid):\n"
    "        u = nodeid\n"
    "        if self.by != 'test':\n"
    "            p = nodeid.split('[', 1)[0].split('::')\n"
    "            u = p[0] if self.by == 'file' else '::'.join(p[:2]) if len(p) > 2 else nodeid\n"
    "        k = self.part.get(u)\n"
    "        if k is None and self.live:\n"
    "            k = self.live[zlib.crc32(u.encode('utf-8', 'surrogateescape')) % len(self.live)]\n"
    "        return k == self.me\n"
    "part = TpuciPart(sys.argv[4].split('\\n')) if sys.argv[4] else None\n"
    "class TpuciProgress:\n"
    "    def __init__(self, path):\n"
    "        self.out = open(path, 'a', buffering=1)\n"
    "        self.only_kept = self.only_dropped = 0\n"
    "    @pytest.hookimpl(hookwrapper=True)\n"
    "    def pytest_runtest_protocol(self, item, nextitem):\n"
    "        if limit > 0:\n"
    "            signal.signal(signal.SIGALRM, self.over)\n"
    "            signal.setitimer(signal.ITIMER_REAL, limit)\n"
    "        try:\n"
    "            yield\n"
    "        finally:\n"
    "            if limit > 0:\n"
    "                signal.setitimer(signal.ITIMER_REAL, 0)\n"
    "    def over(self, signum, frame):\n"
    "        with tempfile.TemporaryFile('w+') as f:\n"
    "            faulthandler.dump_traceback(file=f, all_threads=True)\n"
    "            f.seek(0)\n"
    "            text = f.read()\n"
    "        pytest.fail('test_timeout: longer than %gs (tpuci); the stacks of its '\n"
    "                    'threads:\\n%s' % (limit, text))\n"
    "    @pytest.hookimpl(trylast=True)\n"
    "    def pytest_collection_modifyitems(self, config, items):\n"
    "        if part:\n"
    "            ids = sorted(i.nodeid for i in items)\n"
    "            crc = zlib.crc32('\\n'.join(ids).encode('utf-8', 'surrogateescape'))\n"
    "            self.out.write(json.dumps({'suite': [len(ids), crc]}) + '\\n')\n"
    "            keep, drop = [], []\n"
    "            for i in items:\n"
    "                (keep if part.mine(i.nodeid) else drop).append(i)\n"
    "            part.kept, part.dropped = len(keep), len(drop)\n"
    "            if drop:\n"
    "                config.hook.pytest_deselected(items=drop)\n"
    "                items[:] = keep\n"
    "        if only:\n"
    "            keep = [i for i in items if i.nodeid in only]\n"
    "            drop = [i for i in items if i.nodeid not in only]\n"
    "            self.only_kept, self.only_dropped = len(keep), len(drop)\n"
    "            if drop:\n"
    "                config.hook.pytest_deselected(items=drop)\n"
    "                items[:] = keep\n"
    "    def pytest_sessionstart(self, session):\n"
    "        c = session.config\n"
    "        root = getattr(c, 'rootpath', None) or c.rootdir\n"
    "        self.out.write(json.dumps({'rootdir': str(root)}) + '\\n')\n"
    "    def pytest_collection_finish(self, session):\n"
    "        ids = [item.nodeid for item in session.items]\n"
    "        self.out.write(json.dumps({'collected': ids}) + '\\n')\n"
    "    def pytest_runtest_logstart(self, nodeid, location):\n"
    "        self.out.write(json.dumps({'start': nodeid, 't': time.time()}) + '\\n')\n"
    "    def pytest_runtest_logreport(self, report):\n"
    "        msg = crash = None\n"
    "        if report.failed:\n"
    "            msg = str(report.longrepr)[-4000:]\n"
    "            crash = getattr(getattr(report.longrepr, 'reprcrash', None), 'message', None)\n"
    "        elif report.skipped and isinstance(report.longrepr, tuple):\n"
    "            msg = str(report.longrepr[2])\n"
    "        loc = report.location or ('', None, '')\n"
    "        self.out.write(json.dumps({'id': report.nodeid, 'when': report.when,\n"
    "            'outcome': report.outcome, 'xfail': hasattr(report, 'wasxfail'),\n"
    "            'duration': report.duration, 'file': loc[0], 'line': loc[1],\n"
    "            'message': msg, 'crash': crash}) + '\\n')\n"
    "plugin = TpuciProgress(sys.argv[1])\n"
    "ret = pytest.main(sys.argv[5:], plugins=[plugin])\n"
    "if only and ret == 5 and plugin.only_kept == 0:\n"
    "    print('tpuci: none of the %d tests this process was to run is collected '\n"
    "          '(gone since they were recorded)' % len(only))\n"
    "    ret = 0\n"
    "if part and ret == 5 and part.kept == 0 and part.dropped > 0:\n"
    "    print('tpuci: no test is left for this shard (its tests of the recorded '\n"
    "          'collection are gone; the %d collected belong to other shards)' % part.dropped)\n"
    "    ret = 0\n"
    "import atexit\n"
    "atexit._run_exitfuncs()\n"
    "sys.stdout.flush()\n"
    "sys.stderr.flush()\n"
    "os._exit(int(ret))\n";

void tpuci__pytest_argv(const tpuci__instance_t *inst, const char *results_path,
                        const tpuci__strv_t *select, const tpuci__strv_t *only,
                        tpuci__strv_t *out) {
  tpuci__pytest_argv_shard(inst, results_path, select, only, NULL, out);
}

void tpuci__pytest_argv_shard(const tpuci__instance_t *inst, const char *results_path,
                              const tpuci__strv_t *select, const tpuci__strv_t *only,
                              const char *shard, tpuci__strv_t *out) {
  tpuci__buf_t ids;
  size_t base = inst->argv.len - inst->pytest->nargs, i;

  /* argv is python -m pytest ...: the interpreter, then the bootstrap. */
  tpuci__strv_push(out, inst->argv.items[0]);
  tpuci__strv_push(out, "-c");
  tpuci__strv_push(out, tpuci__bootstrap);
  tpuci__strv_take(out, tpuci__printf("%s/%s", results_path, TPUCI__PROGRESS_FILE));
  tpuci__strv_take(out, tpuci__printf("%llu", (unsigned long long) inst->pytest->test_timeout_ms));
  tpuci__buf_init(&ids);
  for (i = 0; only != NULL && i < only->len; i++)
    tpuci__buf_addf(&ids, "%s%s", i ? "\n" : "", only->items[i]);
  tpuci__strv_take(out, tpuci__buf_steal(&ids));
  /* Node ids say what to run; without them a shard keeps its part. */
  tpuci__strv_push(out, select == NULL && shard != NULL ? shard : "");
  for (i = 3; i < base; i++) tpuci__strv_push(out, inst->argv.items[i]);
  tpuci__strv_take(out, tpuci__printf("--junitxml=%s/%s", results_path,
                                      TPUCI__JUNIT_FILE));
  /* xunit1 keeps file and line: exact node ids and annotations. */
  tpuci__strv_push(out, "-o");
  tpuci__strv_push(out, "junit_family=xunit1");
  if (select != NULL) {
    for (i = 0; i < select->len; i++) tpuci__strv_push(out, select->items[i]);
  } else {
    for (i = base; i < inst->argv.len; i++) tpuci__strv_push(out, inst->argv.items[i]);
  }
}

void tpuci__pytest_collect_argv(const tpuci__instance_t *inst, tpuci__strv_t *out) {
  size_t i;
  /* python -m pytest first, then what selects the tests. */
  for (i = 0; i < 3 && i < inst->argv.len; i++) tpuci__strv_push(out, inst->argv.items[i]);
  tpuci__strv_push(out, "--collect-only");
  tpuci__strv_push(out, "-q");
  for (; i < inst->argv.len; i++) tpuci__strv_push(out, inst->argv.items[i]);
}

/* "-m 'tpu' -k 'not slow' tests/" for messages. */
static char *tpuci__pytest_selection_text(const tpuci__instance_t *inst) {
  tpuci__buf_t b;
  size_t i;
  tpuci__buf_init(&b);
  if (inst->pytest->markers) tpuci__buf_addf(&b, "-m '%s'", inst->pytest->markers);
  if (inst->pytest->k) tpuci__buf_addf(&b, "%s-k '%s'", b.len ? " " : "", inst->pytest->k);
  for (i = inst->argv.len - inst->pytest->nargs; i < inst->argv.len; i++)
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
static int tpuci__stacks_text(tpuci__buf_t *b, tpuci__buf_t *where, const char *dir,
                              size_t k, size_t n) {
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

/* The folders an attempt's hosts wrote: the results folder, or for a gang
 * its worker-<i> folders (host 0 first). */
static void tpuci__host_dirs(const char *results_dir, tpuci__strv_t *out) {
  struct stat st;
  int i;
  for (i = 0;; i++) {
    char *dir = tpuci__printf("%s/worker-%d", results_dir, i);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
      free(dir);
      break;
    }
    tpuci__strv_take(out, dir);
  }
  if (out->len == 0) tpuci__strv_push(out, results_dir);
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
                                    const char *results_dir, tpuci_outcome_t o,
                                    const tpuci__exit_t *ex, const char *cause,
                                    uint64_t duration_ms, const tpuci__strv_t *selection,
                                    int first, char **new_cause) {
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
  if (results_dir != NULL) tpuci__host_dirs(results_dir, &dirs);
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
    if (inst->pytest->allow_empty) {
      o = TPUCI_OUTCOME_PASSED;
      *new_cause = tpuci__printf("no test selected by %s (allowed: allow_empty)", sel);
    } else {
      *new_cause = tpuci__printf("no test selected by %s (pytest exit 5; set "
                                 "pytest.allow_empty = true if that is fine)", sel);
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
    tpuci__buf_addf(&c, "%s (", *new_cause ? *new_cause
                                : cause && *cause ? cause : tpuci_outcome_name(o));
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
  rec.time_s = (double) duration_ms / 1000.0;
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
    if (fin == NULL || tpuci__history_run_in(t, first ? 0 : (int) h->n_attempts) == NULL)
      continue;
    path = tpuci__pytest_host_path(inst, h->rootdir, fin->file);
    if (path == NULL) continue;
    free(t->path);
    t->path = path;
  }
  return o;
}

tpuci_outcome_t tpuci__pytest_after(tpuci__history_t *h,
                                    const tpuci__instance_t *inst,
                                    const char *results_dir, tpuci_outcome_t o,
                                    const tpuci__exit_t *ex, const char *cause,
                                    uint64_t duration_ms,
                                    const tpuci__strv_t *selection,
                                    char **new_cause) {
  return tpuci__after(h, inst, results_dir, o, ex, cause, duration_ms, selection, 0,
                      new_cause);
}

tpuci_outcome_t tpuci__pytest_after_first(tpuci__history_t *h, const tpuci__instance_t *inst,
                                          const char *results_dir, tpuci_outcome_t o,
                                          const tpuci__exit_t *ex, const char *cause,
                                          uint64_t duration_ms, char **new_cause) {
  return tpuci__after(h, inst, results_dir, o, ex, cause, duration_ms, NULL, 1, new_cause);
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
             : j.items[i].outcome == TPUCI_TEST_PASSED      ? 0
                                                            : -1;
  tpuci__junit_free(&j);
  tpuci__progress_free(&pr);
  return said;
}

/* "/a/./b//c/../d" -> "/a/b/d"; `path` is absolute. A new string. */
static char *tpuci__path_normal(const char *path) {
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
  if (inst->runtime != TPUCI__RUNTIME_DOCKER && inst->runtime != TPUCI__RUNTIME_SWARM)
    return norm;
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

int tpuci__pytest_next_selection(const tpuci__history_t *h,
                                 const tpuci__strv_t *prev, int unfinished,
                                 tpuci__strv_t *out) {
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
  while (p != NULL && (p == name || (p[-1] != '[' && p[-1] != ',')))
    p = strstr(p + 1, "shard=");
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
