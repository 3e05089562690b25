"""tpuci's pytest bootstrap: how every pytest attempt runs pytest.

tpuci runs an attempt's pytest as

    python -c <tpuci_devices.py><this file> PROGRESS TIMEOUT_MS ONLY SHARD DEPS DEVICES [pytest arguments...]

rather than `python -m pytest`. The files are built into tpuci
(cmake/embed.cmake) and passed whole with -c, so nothing is written into
the image or the sources and no PYTHONPATH is needed; tpuci_devices.py
(the device check, which a command job's attempt runs too) goes first,
in the same namespace, and this file imports it by name. The five arguments
after it are the attempt's own (tpuci__pytest_argv_shard() in
core/pytest/pytest_run.c writes them; docs/pytest.md):

    PROGRESS    progress.jsonl in the attempt's results folder
    TIMEOUT_MS  pytest.test_timeout in milliseconds; 0: none
    ONLY        the node ids this process keeps, one a line; empty: all
    SHARD       a shard's assignment (tpuci__shard_assignment(),
                core/pytest/shard.h); empty: not a shard of the whole suite
    DEPS        what each test depends on (TpuciDeps, core/pytest/deps.h):
                "record" to write it, "skip UNIT" lines for the tests to
                leave out as unaffected; empty: neither
    DEVICES     the device check (tpuci_devices.py): "FRAMEWORKS PLATFORM
                DEVICES CHIPS" (tpuci__devices_arg(), core/plan/host_env.h);
                empty: none

A plugin object (TpuciProgress) appends every test report to PROGRESS as
it happens: when an attempt is killed (timeout, OOM) before pytest writes
its JUnit file, the tests it finished are kept. The collection comes first
({"collected": [node ids in run order]}, after deselection and
reordering), so that the tests a killed or crashed attempt never reached
are known too.

This file runs in users' containers, on whatever Python and pytest they
have: it keeps to Python 3.5's syntax and the standard library (the
syntax check, tests/pytest/plugin/check_syntax.py, parses it so), and
does nothing when imported (its tests, tests/pytest/plugin/, import it).
tpuci's Kubernetes export runs tpuci_k8s.py before both in the same -c.
"""
import atexit
import os
import signal
import sys
import time

import tpuci_devices
from tpuci_devices import send_results, write_all

# The signals the parent of a swarm task passes to pytest's process.
RELAYED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT,
           signal.SIGUSR1, signal.SIGUSR2)


def exit_as(status):
    """Ends this process as a child that ended with wait status `status`
    did: by its signal, or with its exit code."""
    if os.WIFSIGNALED(status):
        try:
            signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        except (OSError, ValueError):
            pass
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def relay(key, progress):
    """A swarm task (TPUCI_RESULTS_LOG set to the attempt's key; the task
    may run on any node, and no folder of tpuci's machine is mounted
    there) forks here: the child returns and runs pytest; the parent
    passes it the signals it gets, waits for it, prints the results
    folder (send_results()) and ends as the child did. At a SIGTERM that
    the child outlives by 0.1 s (a test that ignores it: the SIGKILL after
    the grace leaves no time after), it prints what the folder holds then
    (the stacks, the progress) as a snapshot first."""
    write_all((key + " results on\n").encode())
    pid = os.fork()
    if pid == 0:
        return

    def forward(signum, frame):
        os.kill(pid, signum)
        if signum == signal.SIGTERM:
            for _ in range(10):
                time.sleep(0.01)
                if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):
                    return
            send_results(key, os.path.dirname(progress), "snapshot")

    for s in RELAYED:
        signal.signal(s, forward)
    status = os.waitpid(pid, 0)[1]
    try:
        send_results(key, os.path.dirname(progress), "begin")
    finally:
        exit_as(status)


# The parent of a swarm task imports nothing more than the above.
if __name__ == "__main__" and os.environ.get("TPUCI_RESULTS_LOG"):
    relay(os.environ["TPUCI_RESULTS_LOG"], sys.argv[1])

import ast  # noqa: E402
import faulthandler  # noqa: E402
import json  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import zlib  # noqa: E402

import pytest  # noqa: E402


class TpuciPart:
    """A shard's part of the whole suite, from its SHARD argument: a
    first line "BY SHARD LIVE" (BY file, class or test: the unit that
    stays whole; SHARD this shard; LIVE the shards with a test, "1,2"),
    then "K<tab>UNIT" for each unit of the recorded collection and the
    shard it went to. A unit the lines do not name (new since) goes to
    LIVE[crc32(UNIT) % len(LIVE)], in every shard alike."""

    def __init__(self, lines):
        by, me, live = lines[0].split(" ")
        self.by, self.me = by, int(me)
        self.live = [int(k) for k in live.split(",") if k]
        self.part = {}
        for line in lines[1:]:
            k, _, unit = line.partition("\t")
            self.part[unit] = int(k)
        self.kept = self.dropped = 0

    def unit(self, nodeid):
        """The part of `nodeid` that stays whole: its file, its file and
        class (a test outside a class is a unit of its own), or all of it.
        Only "::" before a parameter's '[' count."""
        if self.by == "test":
            return nodeid
        p = nodeid.split("[", 1)[0].split("::")
        return p[0] if self.by == "file" else "::".join(p[:2]) if len(p) > 2 else nodeid

    def mine(self, nodeid):
        """Whether the test `nodeid` is this shard's."""
        u = self.unit(nodeid)
        k = self.part.get(u)
        if k is None and self.live:
            k = self.live[zlib.crc32(u.encode("utf-8", "surrogateescape")) % len(self.live)]
        return k == self.me


class TpuciDeps:
    """What each test depends on, from its DEPS argument's lines:

        record      write, into deps.jsonl beside PROGRESS, for each test
                    the files of the project (pytest's rootdir) it needs:
                    its module and what that imports at module level, in
                    the project, transitively (read from their source:
                    Python runs a module's import once a process); every
                    file whose Python code ran during its setup, call and
                    teardown, and during the setup of a wider-scoped
                    fixture it uses; every file it opened (the "open"
                    audit event). And what the whole session needs: the
                    conftest.py files and pytest's configuration file.
        skip UNIT   a test whose node id, or whose file, is UNIT is left
                    out as unaffected (nothing it needs changed since it
                    passed): deselected, and said ({"unaffected": [...]}).

    Python 3.12 and later: sys.monitoring, once per function a test;
    before: sys.settrace's call events (no line events)."""

    def __init__(self, lines, progress):
        self.record = False
        self.skip = set()
        for line in lines:
            word, _, rest = line.partition(" ")
            if word == "record":
                self.record = True
            elif word == "skip" and rest:
                self.skip.add(rest)
        self.path = os.path.join(os.path.dirname(progress), "deps.jsonl")
        self.out = None
        self.root = None
        self.stack = []
        self.fixtures = {}
        self.closures = {}
        self.parsed = {}
        self.session = set()
        self.off = None

    def unaffected(self, nodeid):
        """Whether the test `nodeid` is one of those DEPS leaves out."""
        return nodeid in self.skip or nodeid.split("::", 1)[0] in self.skip

    def start(self, config):
        """Recording starts once pytest knows its rootdir."""
        if not self.record:
            return
        self.root = str(getattr(config, "rootpath", None) or config.rootdir)
        self.out = open(self.path, "w", buffering=1)
        if sys.gettrace() is not None and not hasattr(sys, "monitoring"):
            self.off = "a tracer (a debugger, coverage) is already on"
            self.out.write(json.dumps({"off": self.off}) + "\n")
            return
        ini = getattr(config, "inipath", None) or getattr(config, "inifile", None)
        if ini:
            self.note(str(ini), self.session)
        sys.addaudithook(self.audit)
        if hasattr(sys, "monitoring"):
            self.monitor()

    def rel(self, path):
        """`path` relative to the rootdir, or None: outside it, or in an
        installed package (site-packages: the image's, or a venv's)."""
        if not path or path.startswith("<"):
            return None
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        path = os.path.normpath(os.path.join(os.getcwd(), path))
        rel = os.path.relpath(path, self.root)
        if rel.startswith(".."):
            return None
        parts = rel.split(os.sep)
        if "site-packages" in parts or "dist-packages" in parts or "__pycache__" in parts:
            return None
        return rel

    def note(self, path, into):
        rel = self.rel(path)
        if rel is not None:
            into.add(rel)

    def audit(self, event, args):
        if event == "open" and self.stack and args and isinstance(args[0], (str, bytes)):
            self.stack[-1].add(args[0])

    def monitor(self):
        """sys.monitoring (3.12): PY_START, once a function until the next
        test (DISABLE, then restart_events())."""
        mon = sys.monitoring
        tool = mon.PROFILER_ID
        try:
            mon.use_tool_id(tool, "tpuci")
        except ValueError:
            self.off = "sys.monitoring's profiler tool is taken"
            return

        def started(code, offset):
            if self.stack:
                self.stack[-1].add(code.co_filename)
            return mon.DISABLE

        mon.register_callback(tool, mon.events.PY_START, started)
        mon.set_events(tool, mon.events.PY_START)

    def push(self):
        """Files seen from now go into a new set, also the one below's."""
        files = set()
        self.stack.append(files)
        if hasattr(sys, "monitoring"):
            sys.monitoring.restart_events()
        elif len(self.stack) == 1:

            def trace(frame, event, arg):
                self.stack[-1].add(frame.f_code.co_filename)

            sys.settrace(trace)
            threading.settrace(trace)
        return files

    def pop(self):
        files = self.stack.pop()
        if self.stack:
            self.stack[-1].update(files)
        elif not hasattr(sys, "monitoring"):
            sys.settrace(None)
            threading.settrace(None)
        return files

    def imports(self, path, module):
        """The modules `path` (of `module`) imports at its top level, by
        name, from its source."""
        if path in self.parsed:
            return self.parsed[path]
        names = []
        try:
            with open(path, "rb") as f:
                tree = ast.parse(f.read(), path)
        except (OSError, SyntaxError, ValueError):
            tree = None
        pkg = getattr(module, "__package__", None) or ""
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Import):
                for a in node.names:
                    parts = a.name.split(".")
                    names.extend(".".join(parts[:k]) for k in range(1, len(parts) + 1))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")
                    up = up[:len(up) - node.level + 1] if node.level > 1 else up
                    base = ".".join([p for p in up if p] + ([base] if base else []))
                if base:
                    names.append(base)
                for a in node.names:
                    names.append(base + "." + a.name if base else a.name)
        self.parsed[path] = names
        return names

    def closure(self, module):
        """The project's files `module` needs at import: its own, and
        those of the project modules it imports, transitively."""
        key = getattr(module, "__name__", None)
        if key in self.closures:
            return self.closures[key]
        files, seen, todo = set(), set(), [module]
        while todo:
            m = todo.pop()
            f = getattr(m, "__file__", None)
            rel = self.rel(f)
            if rel is None or f in seen:
                continue
            seen.add(f)
            files.add(rel)
            for name in self.imports(f, m):
                sub = sys.modules.get(name)
                if sub is not None:
                    todo.append(sub)
        self.closures[key] = files
        return files

    def fixture_files(self, item):
        """What the wider-scoped fixtures `item` uses ran when set up."""
        files = set()
        info = getattr(item, "_fixtureinfo", None)
        for defs in (getattr(info, "name2fixturedefs", None) or {}).values():
            for d in defs:
                files.update(self.fixtures.get(id(d), ()))
        return files

    def done(self, item, files):
        """Writes the test's line of deps.jsonl."""
        need = set()
        for f in files:
            self.note(f, need)
        need |= self.closure(getattr(item, "module", None))
        need |= self.fixture_files(item)
        path = getattr(item, "fspath", None) or getattr(item, "path", None)
        if path is not None:
            self.note(str(path), need)
        self.out.write(json.dumps({"t": item.nodeid, "f": sorted(need)}) + "\n")

    def finish(self, session):
        """The session's line: the conftest.py files and the ini file."""
        if self.out is None:
            return
        for m in list(sys.modules.values()):
            f = getattr(m, "__file__", None) or ""
            if os.path.basename(f) == "conftest.py":
                self.note(f, self.session)
        self.out.write(json.dumps({"session": sorted(self.session)}) + "\n")
        self.out.close()
        self.out = None


class TpuciProgress:
    """The plugin: writes PROGRESS, one JSON object a line, as pytest goes
    ({"rootdir": ...}, with SHARD {"suite": [N, CRC]}, {"collected": [...]},
    then per test {"start": ...} and a report per phase; read by
    core/pytest/progress.c), keeps this process's tests (ONLY, SHARD) and
    bounds each test (TIMEOUT_MS).

    `limit` is the test timeout in seconds (0: none); `only` a set of node
    ids (empty: all); `part` a TpuciPart or None; `deps` a TpuciDeps or
    None; `devices` DEVICES (empty: no device check)."""

    def __init__(self, path, limit=0, only=frozenset(), part=None, deps=None, devices=""):
        self.out = open(path, "a", buffering=1)
        self.path = path
        self.limit, self.only, self.part, self.deps = limit, only, part, deps
        self.devices = devices
        self.only_kept = self.only_dropped = 0
        self.unaffected = 0

    def recording(self):
        d = self.deps
        return d is not None and d.out is not None and d.off is None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        """With a test timeout, a SIGALRM timer covers each test's setup,
        call and teardown together; so does the record of what it needs."""
        record = self.recording()
        if self.limit > 0:
            signal.signal(signal.SIGALRM, self.over)
            signal.setitimer(signal.ITIMER_REAL, self.limit)
        if record:
            self.deps.push()
        try:
            yield
        finally:
            if self.limit > 0:
                signal.setitimer(signal.ITIMER_REAL, 0)
            if record:
                self.deps.done(item, self.deps.pop())

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        """A fixture wider than a test: what its setup ran counts for every
        test that uses it (the first one sets it up for all)."""
        record = self.recording() and fixturedef.scope != "function"
        if record:
            self.deps.push()
        try:
            yield
        finally:
            if record:
                files = set()
                for f in self.deps.pop():
                    self.deps.note(f, files)
                self.deps.fixtures[id(fixturedef)] = files

    def over(self, signum, frame):
        """The timer fired: the test fails from where it is, with the stacks
        of every thread in its message, and pytest goes on with the next."""
        with tempfile.TemporaryFile("w+") as f:
            faulthandler.dump_traceback(file=f, all_threads=True)
            f.seek(0)
            text = f.read()
        pytest.fail("test_timeout: longer than %gs (tpuci); the stacks of its "
                    "threads:\n%s" % (self.limit, text))

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        """After every other plugin's deselection and reordering: a shard
        writes what it collected ({"suite": [count, crc32 of the sorted
        node ids]}, for tpuci to compare across the shards) and keeps its
        part; ONLY keeps those node ids. What is dropped is deselected;
        tpuci never reorders the tests of a process. Tests DEPS says are
        unaffected go first, in every process alike."""
        part = self.part
        deps = self.deps
        if deps is not None and deps.skip:
            keep = [i for i in items if not deps.unaffected(i.nodeid)]
            drop = [i for i in items if deps.unaffected(i.nodeid)]
            self.unaffected = len(drop)
            self.out.write(json.dumps({"unaffected": [i.nodeid for i in drop]}) + "\n")
            if drop:
                config.hook.pytest_deselected(items=drop)
                items[:] = keep
        if part is not None:
            ids = sorted(i.nodeid for i in items)
            crc = zlib.crc32("\n".join(ids).encode("utf-8", "surrogateescape"))
            self.out.write(json.dumps({"suite": [len(ids), crc]}) + "\n")
            keep, drop = [], []
            for i in items:
                (keep if part.mine(i.nodeid) else drop).append(i)
            part.kept, part.dropped = len(keep), len(drop)
            if drop:
                config.hook.pytest_deselected(items=drop)
                items[:] = keep
        if self.only:
            keep = [i for i in items if i.nodeid in self.only]
            drop = [i for i in items if i.nodeid not in self.only]
            self.only_kept, self.only_dropped = len(keep), len(drop)
            if drop:
                config.hook.pytest_deselected(items=drop)
                items[:] = keep

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        """Before the first test (after the collection, so a conftest.py
        that sets XLA_FLAGS has run): the device check. A mismatch writes
        devices.json beside PROGRESS ({"seen": ..., "mismatch": ...}),
        says it and ends the process with DEVICES_EXIT: no test runs and
        no JUnit file is written; tpuci makes the attempt infra."""
        if not self.devices or session.config.option.collectonly or not session.items:
            return None
        bad = tpuci_devices.check_and_record(self.devices, os.path.dirname(self.path))
        if bad is None:
            return None
        print("tpuci: device check: %s: no test runs" % bad)
        sys.stdout.flush()
        sys.stderr.flush()
        self.out.close()
        os._exit(tpuci_devices.DEVICES_EXIT)

    def pytest_sessionstart(self, session):
        c = session.config
        root = getattr(c, "rootpath", None) or c.rootdir
        self.out.write(json.dumps({"rootdir": str(root)}) + "\n")
        if self.deps is not None:
            self.deps.start(c)

    def pytest_sessionfinish(self, session):
        if self.deps is not None:
            self.deps.finish(session)

    def pytest_collection_finish(self, session):
        ids = [item.nodeid for item in session.items]
        self.out.write(json.dumps({"collected": ids}) + "\n")

    def pytest_runtest_logstart(self, nodeid, location):
        self.out.write(json.dumps({"start": nodeid, "t": time.time()}) + "\n")

    def pytest_runtest_logreport(self, report):
        """A failure keeps the last 4000 characters of its traceback and
        pytest's own line for it (`crash`); a skip its reason."""
        msg = crash = None
        if report.failed:
            msg = str(report.longrepr)[-4000:]
            crash = getattr(getattr(report.longrepr, "reprcrash", None), "message", None)
        elif report.skipped and isinstance(report.longrepr, tuple):
            msg = str(report.longrepr[2])
        loc = report.location or ("", None, "")
        self.out.write(json.dumps({"id": report.nodeid, "when": report.when,
                                   "outcome": report.outcome, "xfail": hasattr(report, "wasxfail"),
                                   "duration": report.duration, "file": loc[0], "line": loc[1],
                                   "message": msg, "crash": crash}) + "\n")


def settle(ret, plugin):
    """pytest's exit code `ret`, but 5 (no tests) becomes 0, with a line
    saying why, where that is no failure of this process's: none of ONLY
    is collected (gone since they were recorded), or nothing is left for
    this shard while other shards have tests."""
    part = plugin.part
    if ret == 5 and plugin.unaffected > 0:
        print("tpuci: every test this process was to run is unaffected (nothing it "
              "needs changed since it passed): %d left out" % plugin.unaffected)
        return 0
    if plugin.only and ret == 5 and plugin.only_kept == 0:
        if len(plugin.only) == 1:
            print("tpuci: the test this process was to run is not collected "
                  "(gone since it was recorded)")
        else:
            print("tpuci: none of the %d tests this process was to run is collected "
                  "(gone since they were recorded)" % len(plugin.only))
        ret = 0
    if part is not None and ret == 5 and part.kept == 0 and part.dropped > 0:
        print("tpuci: no test is left for this shard (its tests of the recorded "
              "collection are gone; %s to other shards)"
              % ("the one collected belongs" if part.dropped == 1
                 else "the %d collected belong" % part.dropped))
        ret = 0
    return ret


def watch_stacks(progress):
    """SIGTERM (the first thing tpuci sends at a timeout or a cancel) makes
    faulthandler write every thread's stack to stacks.txt beside
    `progress`, then goes on as it would have (pytest ends, or waits for
    the SIGKILL). faulthandler keeps a reference to the file: it stays
    open until the process ends."""
    stacks = open(os.path.join(os.path.dirname(progress), "stacks.txt"), "w")
    faulthandler.register(signal.SIGTERM, file=stacks, all_threads=True, chain=True)


def run(argv):
    """Runs pytest as the attempt `argv` (sys.argv, above) says, with
    TpuciProgress; returns its exit code (settle())."""
    limit = int(argv[2]) / 1000
    only = set(i for i in argv[3].split("\n") if i)
    part = TpuciPart(argv[4].split("\n")) if argv[4] else None
    deps = TpuciDeps(argv[5].split("\n"), argv[1]) if argv[5] else None
    plugin = TpuciProgress(argv[1], limit, only, part, deps, argv[6])
    return settle(pytest.main(argv[7:], plugins=[plugin]), plugin)


def main(argv):
    """run(), then the atexit functions, and the process ends with
    os._exit(): the interpreter's own teardown (about 2 s with torch
    imported, on a busy machine) would only delay the attempt's end, and
    with it a retry's start."""
    watch_stacks(argv[1])
    ret = run(argv)
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(ret))


if __name__ == "__main__":
    main(sys.argv)
