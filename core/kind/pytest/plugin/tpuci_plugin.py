"""tpuci's pytest bootstrap: how every pytest attempt runs pytest.

tpuci runs an attempt's pytest as

    python -c <tpuci_devices.py><this file> PROGRESS TIMEOUT_MS ONLY SHARD DEPS DEVICES [pytest arguments...]

rather than `python -m pytest`. The files are built into tpuci
(cmake/embed.cmake) and passed whole with -c, so nothing is written into
the image or the sources and no PYTHONPATH is needed; tpuci_devices.py
(the device check, which a command job's attempt runs too) goes first,
in the same namespace, and this file imports it by name. The five arguments
after it are the attempt's own (tpuci__pytest_argv_shard() in
core/kind/pytest/pytest_run.c writes them; docs/pytest.md):

    PROGRESS    progress.jsonl in the attempt's results folder
    TIMEOUT_MS  pytest.test_timeout in milliseconds; 0: none
    ONLY        the node ids this process keeps, one a line; empty: all
    SHARD       a shard's assignment (tpuci__shard_assignment(),
                core/kind/pytest/shard.h); empty: not a shard of the whole suite
    DEPS        what each test depends on (TpuciDeps, core/kind/pytest/deps.h),
                one a line: "record" to write deps.jsonl beside PROGRESS,
                "skip ID" for a test to leave out as unaffected, "audit
                ID" for one to run last as a sample; empty: none of them
    DEVICES     the device check (tpuci_devices.py): "FRAMEWORKS PLATFORM
                DEVICES CHIPS" (tpuci__devices_arg(), core/plan/host_env.h);
                empty: none

A plugin object (TpuciProgress) appends every test report to PROGRESS as
it happens: when an attempt is killed (timeout, OOM) before pytest writes
its JUnit file, the tests it finished are kept. The collection comes first
({"collected": [node ids in run order]}, after deselection and
reordering), so that the tests a killed or crashed attempt never reached
are known too. With DEPS "record", a TpuciDeps traces the whole session
from before pytest.main(): what each test needs ("leave a test out only
with proof": what the recorder could not see makes the record
incomplete, and tpuci runs the test).

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
import fnmatch  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import operator  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import zlib  # noqa: E402

# What the attempt's own environment lacks is not a failing test: when
# pytest cannot be imported (not installed, or broken), the bootstrap
# writes SETUP_FILE into the results folder, {"problem": TEXT}, and ends
# with SETUP_EXIT; tpuci makes the attempt infra with that cause and does
# not retry it (core/kind/pytest/pytest_run.h, tpuci__pytest_setup_problem).
SETUP_FILE = "setup.json"
SETUP_EXIT = 78


def setup_failed(progress, problem):
    """Writes the setup problem beside PROGRESS, says it on stderr and
    ends the process (exit SETUP_EXIT)."""
    folder = os.path.dirname(progress)
    try:
        if folder and not os.path.isdir(folder):
            os.makedirs(folder)
        with open(os.path.join(folder, SETUP_FILE), "w") as f:
            json.dump({"problem": problem}, f)
    except OSError as e:
        sys.stderr.write("tpuci: cannot write %s: %s\n" % (SETUP_FILE, e))
    sys.stderr.write("tpuci: setup: %s\n" % problem)
    sys.stderr.flush()
    os._exit(SETUP_EXIT)


def run_setup(progress):
    """pytest.setup: the commands in TPUCI_SETUP (one a line), each with
    sh -c in the attempt's folder, their output in its log, before pytest
    is imported. One that fails ends the attempt (setup_failed())."""
    cmds = os.environ.pop("TPUCI_SETUP", "")
    for cmd in [c for c in cmds.split("\n") if c]:
        sys.stdout.write("tpuci: setup: %s\n" % cmd)
        sys.stdout.flush()
        status = os.system(cmd)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            continue
        how = ("exit %d" % os.WEXITSTATUS(status) if os.WIFEXITED(status)
               else "signal %d" % os.WTERMSIG(status))
        setup_failed(progress, "pytest.setup command failed (%s): %s" % (how, cmd))


if __name__ == "__main__" and os.environ.get("TPUCI_SETUP"):
    run_setup(sys.argv[1])

try:
    import pytest  # noqa: E402
except Exception as e:  # ImportError, or whatever a broken install raises
    if __name__ != "__main__":
        raise
    setup_failed(sys.argv[1], "%s cannot import pytest (%s: %s)" % (
        os.path.basename(sys.executable) or "python", type(e).__name__,
        str(e).splitlines()[0] if str(e) else ""))


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


# What a context of the record saw happen, and how its paths are judged.
# Events of the import system itself (a module's source read, a folder of
# sys.path listed to find it) start under these frames.
IMPORT_SYSTEM = "<frozen importlib._bootstrap"
# The audit events of a process started (the first one names the command).
PROCESS_EVENTS = frozenset(("subprocess.Popen", "os.system", "os.fork", "os.forkpty", "os.exec",
                            "os.posix_spawn", "os.spawn"))
LIST_EVENTS = frozenset(("os.listdir", "os.scandir", "glob.glob", "glob.glob/2"))
AUDITED = PROCESS_EVENTS | LIST_EVENTS | frozenset(("open",))
# Path components of files that are never the project's.
NOT_PROJECT = frozenset(("site-packages", "dist-packages", "__pycache__"))
# The sets of os that name functions by identity (os.stat in
# os.supports_dir_fd): a probe's wrapper joins its function's.
OS_SUPPORTS = ("supports_fd", "supports_dir_fd", "supports_follow_symlinks",
               "supports_effective_ids")
FILENAME = operator.attrgetter("co_filename")
THREAD_WHY = "a thread the recorder could not trace was running"
TRACER_WHY = "the tracer was replaced during the test"


def module_file(module):
    """The __file__ of `module` (a str), from its __dict__: never runs a
    lazy module's __getattr__."""
    d = getattr(module, "__dict__", None)
    f = d.get("__file__") if isinstance(d, dict) else None
    return f if isinstance(f, str) else None


def glob_dir(pattern):
    """The folder a glob pattern lists: its part before the first magic
    character, up to its last "/" ("" for none)."""
    cut = [i for i in (pattern.find(c) for c in "*?[") if i >= 0]
    return os.path.dirname(pattern[:min(cut)] if cut else pattern)


def process_why(event, args):
    """Why a test that started a process is incomplete: "started a process
    (subprocess.Popen: cat x)", the command clipped to 200 characters."""
    what = None
    if event == "subprocess.Popen" and len(args) > 1:
        what = args[1] if args[1] is not None else args[0]
    elif event == "os.system" and args:
        what = args[0]
    elif event in ("os.exec", "os.posix_spawn") and len(args) > 1:
        what = args[1]
    elif event == "os.spawn" and len(args) > 2:
        what = args[2]

    def word(w):
        return os.fsdecode(w) if isinstance(w, bytes) else str(w)

    if isinstance(what, (list, tuple)):
        what = " ".join(word(w) for w in what)
    elif what is not None:
        what = word(what)
    text = event + (": " + what if what else "")
    return "started a process (%s)" % text[:200]


class TpuciCtx(object):
    """What happened while one context was on top of TpuciDeps' stack: the
    session (the stack's bottom, never popped), a wider fixture's setup, a
    test (its setup, call and teardown), or a module's import (`path` its
    file, `key` the <module> code running, `frame` its frame, `name` the
    module's name). `code` holds the code objects that started; `mods`,
    `read`, `listed`, `probe` and `wrote` absolute paths, resolved when it
    happened; `edges` the files of the modules whose import started on top
    of it; `why` the first reason the record is incomplete; `files` (a
    fixture) the files of its code, `fixtures` (a test) the ids of the
    wider fixtures it used."""

    __slots__ = ("code", "mods", "read", "listed", "probe", "wrote", "edges", "why", "path",
                 "key", "frame", "name", "files", "fixtures")

    def __init__(self, path=None):
        self.code, self.mods, self.read, self.listed = set(), set(), set(), set()
        self.probe, self.wrote, self.edges = set(), set(), set()
        self.files, self.fixtures = set(), set()
        self.why = self.key = self.frame = self.name = None
        self.path = path

    def incomplete(self, why):
        if self.why is None:
            self.why = why


class TpuciSummary(object):
    """A context made relative to the rootdir, as deps.jsonl says it:
    `code` (file, first line) pairs, the rest paths, and `why`."""

    __slots__ = ("code", "mods", "read", "listed", "probe", "wrote", "why")

    def __init__(self):
        self.code, self.mods, self.read, self.listed = set(), set(), set(), set()
        self.probe, self.wrote = set(), set()
        self.why = None

    def add(self, other):
        self.code |= other.code
        self.mods |= other.mods
        self.read |= other.read
        self.listed |= other.listed
        self.probe |= other.probe
        self.wrote |= other.wrote
        if self.why is None:
            self.why = other.why

    def drop(self, files):
        """Forgets the code and the modules of `files` (relative)."""
        self.code = set(c for c in self.code if c[0] not in files)
        self.mods -= files

    def empty(self):
        return not (self.code or self.mods or self.read or self.listed or self.probe
                    or self.wrote or self.why)

    def line(self):
        """Its part of a line of deps.jsonl."""
        return {"code": [list(c) for c in sorted(self.code)], "mods": sorted(self.mods),
                "read": sorted(self.read), "list": sorted(self.listed),
                "probe": sorted(self.probe)}


EMPTY = TpuciSummary()
NOTHING = frozenset()


class TpuciDeps:
    """What each test depends on, from its DEPS argument's lines (any other
    line is ignored):

        record      write deps.jsonl beside PROGRESS (below)
        skip ID     the test whose node id is ID is left out as unaffected
                    (nothing it needs changed since it passed): deselected,
                    and said ({"unaffected": [...]}). Only a whole node id
                    matches: a test new in a file whose other tests are
                    left out runs.
        audit ID    a test tpuci could leave out but runs as a sample: kept,
                    and moved after every other test of the process (their
                    order kept), and said ({"audit": [the ids collected]}).

    Recording starts before pytest.main() (start()), so that conftest.py
    files, plugins and the collection are seen too, and ends when the
    session finishes. Every event goes to a context: the top one of the
    thread's imports running, else the top one of a stack pytest's hooks
    push and pop:

        session   the bottom, never popped: the collection, the time
                  between tests, a thread running then
        fixture   the setup of a fixture wider than a test: it counts for
                  every test that uses it
        test      its setup, call and teardown (pytest_runtest_protocol)
        import    the run of a module's top level (a code object
                  "<module>" of a file, till its frame returns or raises):
                  what it runs, reads, lists, probes and starts is its
                  module's, whoever imported it, and a module imported on
                  top of it is an edge (each thread has its own imports)

    Recorded are the code objects that start (sys.settrace's call events
    before Python 3.12, and threading.settrace's function for the threads
    started later, which traces each with one of its own; from 3.12
    sys.monitoring's PY_START, once a code object a context: DISABLE,
    and restart_events() at every push and pop), the files opened ("open"
    audit event: one the import system opens for a module's source, a
    frame of importlib's bootstrap inward of any module's top level, is a
    module, not a read; a file opened to write is "wrote"), the folders
    listed (os.listdir, os.scandir, glob.glob: the pattern's folder before
    its first wildcard), the paths probed (os.stat, os.lstat, os.access,
    os.path.exists/isfile/isdir/lexists, so pathlib's exists too: wrapped
    while recording, returning and raising as they do), and the processes
    started; every path resolved when it happens, against the working
    directory then.

    A test uses the module of its file and those its source imports,
    transitively (Python runs a module's top level once a process), the
    modules imported during it (and its wider fixtures' setup), and the
    module of every code object it ran; and with each, its packages'
    __init__.py files (by its name in sys.modules) and the modules
    imported on top of it, transitively. Its line has what it and its
    wider fixtures saw, and what the import of every module it uses saw,
    whichever test or the collection ran it:

        {"t": ID, "code": [[FILE, FIRST_LINE], ...], "mods": [FILE, ...],
         "read": [...], "list": [FOLDER, ...], "probe": [...],
         "wrote": [...], "why": null or why the record is incomplete}

    Paths are relative to pytest's rootdir with "/", of files inside it and
    not under site-packages, dist-packages or __pycache__ ("." the rootdir).
    A record is incomplete ("why": the first reason) when the test, or the
    import of a module it uses, started a process, read a file outside
    the project (but for the interpreter's, the system's, site-packages,
    the temporary folder, ~/.cache, ~/.config, and a file this process
    wrote); when a thread the recorder could not trace ran during it (one
    started by _thread, or before recording: settrace only); when the
    tracer was replaced (sys.settrace: a debugger, coverage; put back for
    the next test). When the session finishes:

        {"session": true, "code", "mods", "read", "list", "probe", "why":
         the same for the session's context and the modules imported in
         it (every conftest.py, the collection; a project module imported
         before recording started makes it incomplete), "python_files":
         pytest's python_files, "ini": its configuration file or null,
         "imported": every module of the project in sys.modules}

    Nothing of the plugin's own is recorded (its device check). A tracer
    already on before 3.12, or a Python without audit hooks (before 3.8):
    {"off": why} alone, and nothing is recorded; a pytest that ends before
    its session does (a usage error) ends the file with {"off": why}."""

    def __init__(self, lines, progress):
        self.record = False
        self.skip, self.audit = set(), set()
        for line in lines:
            word, _, rest = line.partition(" ")
            if word == "record" and not rest:
                self.record = True
            elif word == "skip" and rest:
                self.skip.add(rest)
            elif word == "audit" and rest:
                self.audit.add(rest)
        self.path = os.path.join(os.path.dirname(progress), "deps.jsonl")
        self.out = None
        self.off = None
        self.active = False
        self.mode = None
        self.root = self.root_slash = None
        self.config = None
        self.session = TpuciCtx()
        self.shared = [self.session]
        self.importing = {}
        self.current = None
        self.modules = {}
        self.fixtures = {}
        self.written = set()
        self.traced = set()
        self.quiet = None
        self.broken = None
        self.trace = self.thread_trace = None
        self.tool = self.events = None
        self.wrapped = []
        self.allowed = []
        self.main = None
        self.relcache, self.filecache, self.owns, self.reaches = {}, {}, {}, {}
        self.fixture_sums = {}
        self.names, self.names_count = {}, -1
        self.closures, self.parsed = {}, {}
        self.own_code = set()
        self.before = []

    def unaffected(self, nodeid):
        """Whether the test `nodeid` is one of those DEPS leaves out."""
        return nodeid in self.skip and nodeid not in self.audit

    # Starting and stopping.

    def start(self):
        """Recording starts: deps.jsonl, the audit hook, the probes'
        wrappers and the tracer (run(), before pytest.main())."""
        if not self.record or self.out is not None:
            return
        self.out = open(self.path, "w", buffering=1)
        if not hasattr(sys, "addaudithook"):
            self.turn_off("Python %d.%d has no audit hooks (3.8 has): the files tests "
                          "open are not seen" % sys.version_info[:2])
            return
        home = os.path.expanduser("~")
        for d in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                  getattr(sys, "base_exec_prefix", sys.exec_prefix), "/usr", "/lib", "/lib64",
                  "/etc", "/proc", "/sys", "/dev", "/run", "/var", tempfile.gettempdir(),
                  os.path.join(home, ".cache"), os.path.join(home, ".config")):
            d = os.path.normpath(os.path.abspath(d))
            self.allowed.append(d.rstrip("/") + "/")
        self.main = threading.get_ident()
        self.before = [module_file(m) for m in list(sys.modules.values())]
        self.own_code = set(f.__code__ for f in (self.on_audit, self.opened, self.by_import,
                                                 self.listing, self.probed))
        if hasattr(sys, "monitoring") and self.monitor():
            self.mode = "monitoring"
        elif sys.gettrace() is not None:
            self.turn_off("a tracer (a debugger, coverage) is already on")
            return
        else:
            self.settrace()
            self.mode = "settrace"
        self.active = True
        watched, on_audit = AUDITED, self.on_audit

        # Called for every audited event: frame.f_code is one from 3.11,
        # so once a function call while tracing. A plain function, so
        # that costs little.
        def hook(event, args):
            if event in watched:
                on_audit(event, args)

        sys.addaudithook(hook)
        self.wrap_probes()

    def turn_off(self, why):
        self.off = why
        self.out.write(json.dumps({"off": why}) + "\n")
        self.out.close()

    def stop(self):
        """Recording ends (the session's end; run(), after pytest.main()).
        Audit hooks stay: this one does nothing from now on."""
        if not self.active:
            return
        self.active = False
        if self.mode == "settrace":
            sys.settrace(None)
            threading.settrace(None)
        elif self.mode == "monitoring":
            self.unmonitor()
        for mod, name, orig, wrapper in self.wrapped:
            if getattr(mod, name, None) is wrapper:
                setattr(mod, name, orig)
            for s in OS_SUPPORTS:
                getattr(os, s, set()).discard(wrapper)
        self.wrapped = []

    def configure(self, config):
        """pytest's rootdir is known: paths can be judged."""
        if self.root is not None or not self.active:
            return
        self.config = config
        root = os.path.normpath(str(getattr(config, "rootpath", None) or config.rootdir))
        self.root, self.root_slash = root, root.rstrip("/") + "/"
        for ctx in list(self.modules.values()):
            if ctx.frame is None:
                self.compact(ctx)

    # The tracers.

    def settrace(self):
        """sys.settrace's call events, and threading.settrace's for the
        threads started from now on (each says it is traced and gets its
        own trace function, with its own stack of imports)."""
        traced, tracer = self.traced, self.tracer

        def thread_trace(frame, event, arg):
            try:
                traced.add(threading.get_ident())
                trace = tracer()
                sys.settrace(trace)
            except Exception:
                return None
            return trace(frame, event, arg)

        self.trace, self.thread_trace = tracer(), thread_trace
        sys.settrace(self.trace)
        threading.settrace(thread_trace)

    def tracer(self):
        """The trace function of the thread that calls it."""
        shared, imports, entered = self.shared, [], self.entered
        self.importing[threading.get_ident()] = imports

        # A module's top level: a code object "<module>" of a file ("" and
        # "<string>" are exec's and eval's).
        def trace(frame, event, arg):
            try:
                code = frame.f_code
                (imports[-1] if imports else shared[-1]).code.add(code)
                if code.co_name == "<module>" and code.co_filename[:1] not in "<":
                    return entered(frame, imports)
            except Exception:
                pass
            return None

        return trace

    def entered(self, frame, imports):
        """A module's top level starts (settrace): its import context, until
        its frame returns (or raises)."""
        ctx = self.enter(frame.f_code, frame, imports)
        try:
            frame.f_trace_lines = False
        except AttributeError:
            pass
        leave = self.leave

        def local(frame, event, arg):
            if event == "return":
                try:
                    leave(ctx, imports)
                except Exception:
                    pass
                return None
            return local

        return local

    def monitor(self):
        """sys.monitoring (3.12): PY_START, once a code object a context
        (DISABLE, then restart_events() at each push and pop); a module's
        import from the PY_START of its <module> code to its PY_RETURN (a
        local event) or PY_UNWIND. False when that cannot be had."""
        mon = sys.monitoring
        ev, tool = mon.events, mon.PROFILER_ID
        try:
            mon.use_tool_id(tool, "tpuci")
        except ValueError:
            return False
        shared, all_imports, enter, disable = self.shared, self.importing, self.enter, mon.DISABLE

        def started(code, offset):
            try:
                imports = all_imports.get(threading.get_ident())
                (imports[-1] if imports else shared[-1]).code.add(code)
                if code.co_name == "<module>" and code.co_filename[:1] not in "<":
                    if imports is None:
                        imports = all_imports[threading.get_ident()] = []
                    enter(code, sys._getframe(1), imports)
                    mon.set_local_events(tool, code, ev.PY_RETURN)
                    return None
                # While a thread imports, threads are in different
                # contexts: DISABLE would hide this code from the others'
                # until the next restart.
                if any(list(all_imports.values())) and threading.active_count() > 1:
                    return None
            except Exception:
                pass
            return disable

        def ended(code, offset, arg):
            try:
                if code.co_name == "<module>":
                    imports = all_imports.get(threading.get_ident()) or ()
                    for ctx in reversed(list(imports)):
                        if ctx.key is code:
                            self.leave(ctx, imports)
                            break
            except Exception:
                pass

        self.tool, self.events = tool, ev.PY_START | ev.PY_UNWIND
        try:
            mon.register_callback(tool, ev.PY_START, started)
            mon.register_callback(tool, ev.PY_RETURN, ended)
            mon.register_callback(tool, ev.PY_UNWIND, ended)
            mon.set_events(tool, self.events)
        except Exception:
            self.unmonitor()
            return False
        return True

    def unmonitor(self):
        mon = sys.monitoring
        try:
            mon.set_events(self.tool, 0)
            for e in (mon.events.PY_START, mon.events.PY_RETURN, mon.events.PY_UNWIND):
                mon.register_callback(self.tool, e, None)
            mon.free_tool_id(self.tool)
        except Exception:
            pass

    def restart(self):
        if self.mode == "monitoring":
            sys.monitoring.restart_events()

    # The contexts: `shared`, the session's, a test's and a fixture's (pytest
    # pushes and pops them, in the main thread), and on top, in each thread,
    # the imports running there (`importing`, by thread).

    def top(self):
        """The context of an event in the calling thread."""
        imports = self.importing.get(threading.get_ident())
        return imports[-1] if imports else self.shared[-1]

    def enter(self, code, frame, imports):
        """Pushes the import context of the module whose <module> `code`
        starts (in `frame`): an edge from the context below."""
        path = code.co_filename
        if not os.path.isabs(path):
            path = os.path.normpath(os.path.join(os.getcwd(), path))
            self.filecache.setdefault(code.co_filename, path)
        ctx = self.modules.get(path)
        if ctx is None:
            ctx = self.modules[path] = TpuciCtx(path)
        else:
            # Run again: what it and those that reach it need may change.
            self.reaches.clear()
            self.owns.pop(path, None)
        ctx.key, ctx.frame = code, frame
        ctx.code.add(code)
        name = frame.f_globals.get("__name__") if frame is not None else None
        if isinstance(name, str):
            ctx.name = name
        (imports[-1] if imports else self.shared[-1]).edges.add(path)
        imports.append(ctx)
        self.restart()
        return ctx

    def leave(self, ctx, stack, compact=True):
        """Pops `ctx`, wherever it is in `stack`."""
        try:
            stack.remove(ctx)
        except ValueError:
            return
        ctx.frame = None
        if compact and self.root is not None:
            self.compact(ctx)
        self.restart()

    def prune(self):
        """Pops the import contexts whose module's frame no longer runs (a
        return the tracer did not see, a thread that ended): one left on a
        stack would take the next test's events."""
        frames = sys._current_frames()
        live = set()
        for f in list(frames.values()):
            while f is not None:
                live.add(f)
                f = f.f_back
        for ident, imports in list(self.importing.items()):
            for ctx in list(imports):
                if ctx.frame not in live:
                    self.leave(ctx, imports)
            if ident not in frames:
                self.importing.pop(ident, None)

    def compact(self, ctx):
        """Drops the code objects of files outside the project."""
        codes = list(ctx.code)
        rel = dict((name, self.rel_code(name)) for name in set(map(FILENAME, codes)))
        ctx.code.difference_update([c for c in codes if rel[c.co_filename] is None])

    def push(self, ctx):
        self.shared.append(ctx)
        self.restart()
        return ctx

    def push_test(self):
        self.prune()
        self.check_tracer(self.session)
        self.shrink(self.session)
        ctx = self.current = TpuciCtx()
        if self.untraced_threads():
            ctx.incomplete(THREAD_WHY)
        return self.push(ctx)

    def push_fixture(self, fixturedef):
        ctx = self.fixtures.get(id(fixturedef))
        if ctx is None:
            ctx = self.fixtures[id(fixturedef)] = TpuciCtx()
        self.fixture_sums.pop(id(fixturedef), None)
        return self.push(ctx)

    def pop_fixture(self, ctx):
        """A wider fixture's setup ended: what it saw is its own, and the
        test's that set it up."""
        self.leave(ctx, self.shared, compact=False)
        below = self.current if self.current is not None else self.session
        for a in ("code", "mods", "read", "listed", "probe", "wrote", "edges"):
            getattr(below, a).update(getattr(ctx, a))
        if ctx.why is not None:
            below.incomplete(ctx.why)
        self.shrink(ctx)

    def shrink(self, ctx):
        """The session's or a fixture's context keeps the files of the code
        it ran (what they imported counts) and the project's code only."""
        if self.root is None:
            return
        self.quiet = threading.get_ident()
        try:
            ctx.files |= self.code_files(ctx.code)
            self.compact(ctx)
        finally:
            self.quiet = None

    def used_fixtures(self, item):
        """The wider fixtures `item` asked for, also by name at run time
        (request.getfixturevalue): at its teardown's start."""
        ctx = self.current
        defs = getattr(getattr(item, "_request", None), "_fixture_defs", None)
        if ctx is not None and isinstance(defs, dict):
            ctx.fixtures.update(id(d) for d in defs.values())

    def check_tracer(self, ctx):
        """A tracer that replaced this one (sys.settrace: a debugger,
        coverage) makes `ctx` incomplete; this one is put back."""
        if self.mode == "settrace":
            if sys.gettrace() is not self.trace:
                ctx.incomplete(TRACER_WHY)
                sys.settrace(self.trace)
            if getattr(threading, "_trace_hook", self.thread_trace) is not self.thread_trace:
                ctx.incomplete(TRACER_WHY)
                threading.settrace(self.thread_trace)
        elif self.mode == "monitoring":
            mon = sys.monitoring
            if mon.get_tool(self.tool) != "tpuci":
                ctx.incomplete(TRACER_WHY)
                self.broken = "sys.monitoring's tool was taken from the recorder"
            elif mon.get_events(self.tool) != self.events:
                ctx.incomplete(TRACER_WHY)
                mon.set_events(self.tool, self.events)

    def untraced_threads(self):
        """Whether a thread that runs Python is not traced (settrace): one
        that was never seen by threading.settrace's function (started
        before recording, or by _thread), but for the main thread and a
        thread still in threading's start."""
        if self.mode != "settrace":
            return False
        mine = threading.Thread.run.__code__.co_filename
        frames = sys._current_frames()
        self.traced.intersection_update(frames)
        for ident, f in frames.items():
            if ident == self.main or ident in self.traced:
                continue
            while f is not None and f.f_code.co_filename == mine:
                f = f.f_back
            if f is not None:
                return True
        return False

    # The events.

    def on_audit(self, event, args):
        if not self.active:
            return
        try:
            if self.quiet == threading.get_ident():
                return
            if event == "open":
                self.opened(args)
            elif event in PROCESS_EVENTS:
                self.top().incomplete(process_why(event, args))
            else:
                self.listing(event, args)
        except Exception:
            pass

    def by_import(self):
        """Whether the event is the import system's own: a frame of
        importlib's bootstrap comes before (inward of) any module's top
        level on the calling stack."""
        f = sys._getframe(1)
        while f is not None and f.f_code in self.own_code:
            f = f.f_back
        while f is not None:
            code = f.f_code
            if code.co_filename.startswith(IMPORT_SYSTEM):
                return True
            if code.co_name == "<module>":
                return False
            f = f.f_back
        return False

    def opened(self, args):
        if not args or isinstance(args[0], int):
            return
        path = self.absolute(args[0])
        if path is None:
            return
        mode = args[1] if len(args) > 1 else None
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        if isinstance(mode, str) and mode:
            writing = any(c in mode for c in "wax+")
            reading = "r" in mode or ("a" in mode and "+" in mode)
        else:
            acc = flags & getattr(os, "O_ACCMODE", 3)
            writing = acc != os.O_RDONLY or bool(flags & os.O_CREAT)
            reading = acc != os.O_WRONLY and not flags & (os.O_TRUNC | os.O_EXCL)
        top = self.top()
        if writing:
            top.wrote.add(path)
            self.written.add(path)
        if not reading:
            return
        if self.by_import():
            if path.endswith(".py"):
                top.mods.add(path)
            elif not path.endswith(".pyc"):
                top.read.add(path)
        else:
            top.read.add(path)

    def listing(self, event, args):
        if event in ("os.listdir", "os.scandir"):
            path = args[0] if args and args[0] is not None else "."
        elif event == "glob.glob/2" or (event == "glob.glob" and sys.version_info < (3, 10)):
            pattern = args[0]
            if isinstance(pattern, bytes):
                pattern = os.fsdecode(pattern)
            root_dir = args[2] if len(args) > 3 else None
            if len(args) > 3 and args[3] is not None and not os.path.isabs(pattern):
                return
            path = glob_dir(pattern) or "."
            if root_dir is not None and not os.path.isabs(path):
                path = os.path.join(self.absolute(root_dir) or ".", path)
        else:
            return
        if isinstance(path, int) or self.by_import():
            return
        path = self.absolute(path)
        if path is not None:
            self.top().listed.add(path)

    def wrap_probes(self):
        """os.stat, os.lstat, os.access and os.path's exists, isfile, isdir
        and lexists record the path they are given (os.path's call os.stat;
        so does pathlib's exists from 3.10) and return or raise as they
        would."""
        for mod, name in ((os, "stat"), (os, "lstat"), (os, "access"), (os.path, "exists"),
                          (os.path, "isfile"), (os.path, "isdir"), (os.path, "lexists")):
            orig = getattr(mod, name, None)
            if orig is None:
                continue
            wrapper = self.prober(orig)
            setattr(mod, name, wrapper)
            self.wrapped.append((mod, name, orig, wrapper))
            for s in OS_SUPPORTS:
                s = getattr(os, s, None)
                if isinstance(s, set) and orig in s:
                    s.add(wrapper)

    def prober(self, orig):
        probed = self.probed

        def probe(*args, **kwargs):
            __tracebackhide__ = True  # pytest shows the caller's frame
            if args:
                probed(args[0], kwargs.get("dir_fd"))
            elif kwargs:
                probed(kwargs.get("path", kwargs.get("s")), kwargs.get("dir_fd"))
            return orig(*args, **kwargs)

        try:
            functools.update_wrapper(probe, orig)
        except (AttributeError, TypeError):
            pass
        return probe

    def probed(self, path, dir_fd):
        if not self.active or path is None or isinstance(path, int):
            return
        try:
            if self.quiet == threading.get_ident():
                return
            path = self.absolute(path, dir_fd)
            if path is not None:
                self.top().probe.add(path)
        except Exception:
            pass

    # Paths.

    def absolute(self, path, dir_fd=None):
        """`path` (str, bytes or path-like) absolute, from the working
        directory now; None for anything else, or relative to a dir_fd."""
        if not isinstance(path, (str, bytes)):
            fspath = getattr(type(path), "__fspath__", None)
            if fspath is None:
                return None
            path = fspath(path)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return None
        if not os.path.isabs(path):
            if dir_fd is not None:
                return None
            path = os.path.join(os.getcwd(), path)
        return os.path.normpath(path)

    def inside(self, path):
        return path == self.root or path.startswith(self.root_slash)

    def rel(self, path):
        """The absolute `path` relative to the rootdir, with "/"; None when
        it is outside, or under site-packages, dist-packages, __pycache__."""
        if path == self.root:
            return "."
        if not path.startswith(self.root_slash):
            return None
        rel = path[len(self.root_slash):]
        parts = rel.split(os.sep)
        if NOT_PROJECT.intersection(parts):
            return None
        return "/".join(parts)

    def code_file(self, name):
        """The absolute file of a code object's co_filename; None for
        "<string>" and the like."""
        got = self.filecache.get(name, False)
        if got is False:
            got = None
            if name[:1] not in "<":
                got = self.absolute(name)
            self.filecache[name] = got
        return got

    def rel_code(self, name):
        got = self.relcache.get(name, False)
        if got is False:
            path = self.code_file(name)
            got = self.relcache[name] = self.rel(path) if path is not None else None
        return got

    def code_files(self, codes):
        """The absolute files of the code objects `codes`."""
        files = set(self.code_file(name) for name in set(map(FILENAME, list(codes))))
        files.discard(None)
        return files

    def project_code(self, codes):
        """The (file, first line) pairs of the code objects `codes` of the
        project's files: the files first (a test runs hundreds of pytest's
        functions), then the code of those; a module's top level (its
        "<module>" code) is line 0, in no function."""
        rel = dict((name, self.rel_code(name)) for name in set(map(FILENAME, codes)))
        mine = dict((name, r) for name, r in rel.items() if r is not None)
        return set((mine[c.co_filename], 0 if c.co_name == "<module>" else c.co_firstlineno)
                   for c in codes if c.co_filename in mine)

    def allowed_outside(self, path):
        if path in self.written or NOT_PROJECT.intersection(path.split(os.sep)):
            return True
        return any(path.startswith(d) or path + "/" == d for d in self.allowed)

    # What a test needs.

    def summarize(self, ctx, wrote=False):
        """`ctx` relative to the rootdir (a TpuciSummary)."""
        s = TpuciSummary()
        s.code = self.project_code(list(ctx.code))
        for into, paths in ((s.mods, ctx.mods), (s.listed, ctx.listed), (s.probe, ctx.probe),
                            (s.wrote, ctx.wrote if wrote else ())):
            for p in list(paths):
                r = self.rel(p)
                if r is not None:
                    into.add(r)
        s.why = ctx.why
        for p in sorted(ctx.read):
            if self.inside(p):
                r = self.rel(p)
                if r is not None:
                    # A folder opened (os.open, to list it by its fd).
                    (s.listed if os.path.isdir(p) else s.read).add(r)
            elif s.why is None and not self.allowed_outside(p):
                s.why = "read %s outside the project" % p
        return s

    def busy(self):
        """The ids of the contexts still running: what they saw grows."""
        busy = set(id(c) for c in list(self.shared))
        for imports in list(self.importing.values()):
            busy.update(id(c) for c in list(imports))
        return busy

    def own(self, path, busy):
        """What the import of the module `path` saw, and its file."""
        s = self.owns.get(path)
        if s is not None:
            return s
        ctx = self.modules.get(path)
        s = self.summarize(ctx) if ctx is not None else TpuciSummary()
        r = self.rel(path)
        if r is not None:
            s.mods.add(r)
        if s.empty():
            s = EMPTY
        if ctx is None or id(ctx) not in busy:
            self.owns[path] = s
        return s

    def name_of(self, path):
        if len(sys.modules) != self.names_count:
            names = {}
            for name, m in list(sys.modules.items()):
                f = module_file(m)
                if f is not None:
                    names.setdefault(self.code_file(f), name)
            self.names, self.names_count = names, len(sys.modules)
        return self.names.get(path)

    def children(self, path):
        """The modules `path` needs: those imported on top of its import,
        and its packages' __init__.py files (their name in sys.modules)."""
        ctx = self.modules.get(path)
        out = list(ctx.edges) if ctx is not None else []
        name = ctx.name if ctx is not None and ctx.name else self.name_of(path)
        if name:
            parts = name.split(".")
            for k in range(len(parts) - 1, 0, -1):
                f = module_file(sys.modules.get(".".join(parts[:k])))
                if f is not None:
                    out.append(self.code_file(f))
        return [c for c in out if c is not None]

    def reach(self, start, busy):
        """The modules reachable from `start` (children(), transitively)
        whose own() has something: a frozenset, kept for a module whose
        import and those it reaches are over (Tarjan's strongly connected
        components: a package and the submodules it imports reach each
        other)."""
        memo = self.reaches
        got = memo.get(start)
        if got is not None:
            return got
        index, low, onstack, stack, kids, tmp = {}, {}, set(), [], {}, {}

        def opened(v):
            index[v] = low[v] = len(index)
            stack.append(v)
            onstack.add(v)
            kids[v] = self.children(v)
            return iter(kids[v])

        work = [(start, opened(start))]
        while work:
            v, it = work[-1]
            deeper = False
            for w in it:
                if w in memo or w in tmp:
                    continue
                if w not in index:
                    work.append((w, opened(w)))
                    deeper = True
                    break
                if w in onstack and index[w] < low[v]:
                    low[v] = index[w]
            if deeper:
                continue
            work.pop()
            if work and low[v] < low[work[-1][0]]:
                low[work[-1][0]] = low[v]
            if low[v] != index[v]:
                continue
            scc = []
            while True:
                w = stack.pop()
                onstack.discard(w)
                scc.append(w)
                if w == v:
                    break
            members = set(scc)
            mine, parts, volatile = set(), [], False
            for w in scc:
                ctx = self.modules.get(w)
                if ctx is not None and id(ctx) in busy:
                    volatile = True
                if self.own(w, busy) is not EMPTY:
                    mine.add(w)
                for c in kids[w]:
                    if c in members:
                        continue
                    if c in memo:
                        part = memo[c]
                    else:
                        part, vol = tmp[c]
                        volatile = volatile or vol
                    if part and not any(part is p for p in parts):
                        parts.append(part)
            if not mine and len(parts) <= 1:
                result = parts[0] if parts else NOTHING
            else:
                result = frozenset(mine.union(*parts))
            for w in scc:
                if volatile:
                    tmp[w] = (result, True)
                else:
                    memo[w] = result
        return memo[start] if start in memo else tmp[start][0]

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
        """The files of the project's modules `module` imports at its top
        level, with its own, transitively (read from their source)."""
        key = getattr(module, "__name__", None)
        if key in self.closures:
            return self.closures[key]
        files, seen, todo = set(), set(), [module]
        while todo:
            m = todo.pop()
            f = module_file(m)
            f = self.code_file(f) if f is not None else None
            if f is None or f in seen or not self.inside(f):
                continue
            seen.add(f)
            files.add(f)
            for name in self.imports(f, m):
                sub = sys.modules.get(name)
                if sub is not None:
                    todo.append(sub)
        self.closures[key] = files
        return files

    def fixture_ids(self, item, ctx):
        ids = set(ctx.fixtures)
        info = getattr(item, "_fixtureinfo", None)
        for defs in (getattr(info, "name2fixturedefs", None) or {}).values():
            ids.update(id(d) for d in defs)
        return ids

    def needs(self, ctx, roots, wrote, skip=frozenset()):
        """The summary of `ctx`, the modules `roots`, those of the code it
        ran, and all they reach; but the modules `skip` (the session's test
        modules: what their import ran counts for their tests)."""
        s = self.summarize(ctx, wrote)
        ran = self.code_files(ctx.code) - skip
        roots = set(roots) | ctx.edges | ctx.files | ran
        # A module imported inside a function that ran, when it was
        # imported before (nothing executes): the import statements of the
        # files whose code ran, read from their source.
        for f in ran:
            name = self.name_of(f)
            if name and sys.modules.get(name) is not None:
                roots |= self.closure(sys.modules[name])
        roots -= skip
        if skip:
            s.drop(set(r for r in (self.rel(f) for f in skip) if r is not None))
        busy = self.busy()
        mods = set()
        for r in roots:
            mods |= self.reach(r, busy)
        for m in mods:
            s.add(self.own(m, busy))
        return s

    def done(self, item, ctx):
        """The test `item`'s context `ctx` ends: writes its line."""
        self.prune()
        self.check_tracer(ctx)
        if self.untraced_threads():
            ctx.incomplete(THREAD_WHY)
        self.leave(ctx, self.shared, compact=False)
        self.current = None
        self.quiet = threading.get_ident()
        try:
            line = self.test_line(item, ctx)
        except Exception as e:
            line = self.failed({"t": item.nodeid, "wrote": []}, e)
        finally:
            self.quiet = None
        self.out.write(json.dumps(line) + "\n")

    def failed(self, line, e):
        """A line for a record the recorder failed to make: incomplete."""
        line.update(TpuciSummary().line())
        line["why"] = "tpuci's recorder failed: %s: %s" % (type(e).__name__, e)
        return line

    def test_line(self, item, ctx):
        roots = set(self.closure(getattr(item, "module", None)))
        path = getattr(item, "path", None) or getattr(item, "fspath", None)
        if path is not None:
            roots.add(self.absolute(str(path)))
        fixtures = []
        for fid in self.fixture_ids(item, ctx):
            fx = self.fixtures.get(fid)
            if fx is not None:
                fixtures.append(fid)
                roots |= fx.edges | fx.files
        s = self.needs(ctx, roots, True)
        for fid in fixtures:
            got = self.fixture_sums.get(fid)
            if got is None:
                got = self.fixture_sums[fid] = self.summarize(self.fixtures[fid], True)
            s.add(got)
        line = {"t": item.nodeid}
        line.update(s.line())
        line["wrote"] = sorted(s.wrote)
        line["why"] = s.why or self.broken
        return line

    def finish(self, session):
        """The session's line, and recording ends."""
        if not self.active:
            return
        self.prune()
        self.check_tracer(self.session)
        self.quiet = threading.get_ident()
        try:
            line = self.session_line(session)
        except Exception as e:
            line = self.failed({"session": True, "python_files": [], "ini": None,
                                "imported": []}, e)
        finally:
            self.quiet = None
        self.stop()
        self.out.write(json.dumps(line) + "\n")
        self.out.close()

    def end(self):
        """pytest.main() returned: a session that never finished (a usage
        error) leaves {"off": ...}."""
        if self.active:
            self.stop()
            self.out.write(json.dumps({"off": "pytest ended before its session finished"}) + "\n")
            self.out.close()

    def python_files(self, session):
        """pytest's python_files globs."""
        config = self.config or session.config
        try:
            return list(config.getini("python_files"))
        except (ValueError, KeyError):
            return []

    def session_line(self, session):
        if self.root is None:
            self.configure(session.config)
        conftests = set()
        imported = set()
        # The test modules pytest imported to collect them: their imports
        # count for their own tests (test_line()), not for the session.
        patterns = self.python_files(session)
        tests = set()
        for m in list(sys.modules.values()):
            f = module_file(m)
            f = self.code_file(f) if f is not None else None
            if f is None:
                continue
            if os.path.basename(f) == "conftest.py":
                conftests.add(f)
            elif is_test_file(f, patterns):
                tests.add(f)
            r = self.rel(f)
            if r is not None:
                imported.add(r)
        s = self.needs(self.session, conftests, False, frozenset(tests))
        s.mods.update(r for r in (self.rel(f) for f in conftests) if r is not None)
        for f in self.before:
            r = self.rel(self.code_file(f) or "") if f else None
            if r is not None and s.why is None:
                s.why = "%s was imported before the recorder started" % r
        line = {"session": True}
        line.update(s.line())
        line["why"] = s.why or self.broken
        line["python_files"] = patterns
        config = self.config or session.config
        ini = getattr(config, "inipath", None) or getattr(config, "inifile", None)
        line["ini"] = self.rel(self.absolute(str(ini))) if ini else None
        line["imported"] = sorted(imported)
        return line


def is_test_file(path, patterns):
    """Whether `path` is a file pytest collects tests from: its name (or
    its path, for a glob with a "/") matches one of pytest's python_files
    globs (none: test_*.py and *_test.py), as pytest matches them."""
    base = os.path.basename(path)
    if not base.endswith(".py") or base == "conftest.py":
        return False
    for p in patterns or ("test_*.py", "*_test.py"):
        if fnmatch.fnmatch(path if "/" in p else base, p):
            return True
    return False


def tree_packages(root):
    """The tree's top-level packages, {name: folder}: the folders with an
    __init__.py at `root` (a flat layout) and under root/src (a src
    layout)."""
    out = {}
    for base in (root, os.path.join(root, "src")):
        try:
            names = sorted(os.listdir(base))
        except OSError:
            continue
        for name in names:
            folder = os.path.join(base, name)
            if name.startswith(".") or not name.isidentifier() or name in out:
                continue
            if os.path.isfile(os.path.join(folder, "__init__.py")):
                out[name] = folder
    return out


def within(path, folder):
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def same_sources(tree, copy, limit=5000):
    """Whether the package folder `tree` is in `copy` with the same bytes
    (a copy installed from this tree: pip install --no-deps .): every .py
    file and every extension module (.so, .pyd) must be there alike, and
    every other file of the tree that the copy has too (package data: one
    the copy lacks fails the tests that read it, loudly). At most `limit`
    files are compared; more is False."""
    n = 0
    for dirpath, dirnames, names in os.walk(tree):
        dirnames[:] = [d for d in dirnames if d != "__pycache__" and not d.startswith(".")]
        for name in names:
            code = name.endswith((".py", ".so", ".pyd"))
            if name.endswith((".pyc", ".pyo")) or name.startswith("."):
                continue
            mine = os.path.join(dirpath, name)
            theirs = os.path.join(copy, os.path.relpath(mine, tree))
            if not code and not os.path.isfile(theirs):
                continue
            n += 1
            if n > limit:
                return False
            try:
                with open(mine, "rb") as a, open(theirs, "rb") as b:
                    while True:
                        x, y = a.read(1 << 20), b.read(1 << 20)
                        if x != y:
                            return False
                        if not x:
                            break
            except OSError:
                return False
    return True


def stale_copy(root):
    """None, or why the tests do not test the tree at `root`: a package of
    the tree that the session imported from elsewhere (an installed copy
    in the image's site-packages) whose sources differ from the tree's.
    Only packages already imported count (after the collection: what the
    test modules and conftest.py import)."""
    root = os.path.realpath(root)
    for name, folder in sorted(tree_packages(root).items()):
        m = sys.modules.get(name)
        if m is None:
            continue
        paths = list(getattr(m, "__path__", None) or [])
        if not paths and getattr(m, "__file__", None):
            paths = [os.path.dirname(m.__file__)]
        real = [os.path.realpath(p) for p in paths]
        if not real or any(within(r, root) for r in real):
            continue  # from the tree (its own folder, or another of its copies)
        if same_sources(folder, real[0]):
            continue  # installed from this very tree
        where = os.path.relpath(os.path.dirname(folder), root)
        return ("package '%s' is imported from %s, not from the tree under test (%s): "
                "the tests would test an installed copy; install the tree in the "
                "attempt (pytest.setup = { \"pip install --no-deps -e .\" }) or put it "
                "first on the path (env = { PYTHONPATH = \"%s\" })" % (
                    name, real[0], folder, "." if where == "." else where))
    return None


class TpuciProgress:
    """The plugin: writes PROGRESS, one JSON object a line, as pytest goes
    ({"rootdir": ...}, with SHARD {"suite": [N, CRC]}, {"collected": [...]},
    then per test {"start": ...} and a report per phase; read by
    core/kind/pytest/progress.c), keeps this process's tests (ONLY, SHARD) and
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
        return d is not None and d.active

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        """With a test timeout, a SIGALRM timer covers each test's setup,
        call and teardown together; so does the record of what it needs
        (its context, TpuciDeps)."""
        record = self.recording()
        if self.limit > 0:
            signal.signal(signal.SIGALRM, self.over)
            signal.setitimer(signal.ITIMER_REAL, self.limit)
        ctx = self.deps.push_test() if record else None
        try:
            yield
        finally:
            if self.limit > 0:
                signal.setitimer(signal.ITIMER_REAL, 0)
            if ctx is not None:
                self.deps.done(item, ctx)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        """A fixture wider than a test: what its setup saw counts for every
        test that uses it (the first one sets it up for all)."""
        record = self.recording() and fixturedef.scope != "function"
        ctx = self.deps.push_fixture(fixturedef) if record else None
        try:
            yield
        finally:
            if ctx is not None:
                self.deps.pop_fixture(ctx)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self, item):
        """The wider fixtures a test asked for by name at run time too
        (request.getfixturevalue), before pytest forgets them."""
        if self.recording():
            self.deps.used_fixtures(item)

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
        part; ONLY keeps those node ids. What is dropped is deselected.
        DEPS comes first, in every process alike: the tests it says are
        unaffected are dropped ({"unaffected": [...]}), those it audits are
        kept and moved after every other test, whose order stays
        ({"audit": [...]}); tpuci reorders nothing else."""
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
        if deps is not None and deps.audit:
            audited = [i for i in items if i.nodeid in deps.audit]
            self.out.write(json.dumps({"audit": [i.nodeid for i in audited]}) + "\n")
            if audited:
                items[:] = [i for i in items if i.nodeid not in deps.audit] + audited
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
        that sets XLA_FLAGS has run): the tree check (stale_copy(): a
        package of the tree imported from elsewhere ends the attempt as a
        setup error, setup_failed()), then the device check. A mismatch writes
        devices.json beside PROGRESS ({"seen": ..., "mismatch": ...}),
        says it and ends the process with DEVICES_EXIT: no test runs and
        no JUnit file is written; tpuci makes the attempt infra."""
        if session.config.option.collectonly or not session.items:
            return None
        c = session.config
        stale = stale_copy(str(getattr(c, "rootpath", None) or c.rootdir))
        if stale is not None:
            self.out.close()
            setup_failed(self.path, stale)
        if not self.devices:
            return None
        # tpuci's own: not the session's to record (what it imports is).
        if self.recording():
            self.deps.quiet = threading.get_ident()
        try:
            bad = tpuci_devices.check_and_record(self.devices, os.path.dirname(self.path))
        finally:
            if self.deps is not None:
                self.deps.quiet = None
        if bad is None:
            return None
        print("tpuci: device check: %s: no test runs" % bad)
        sys.stdout.flush()
        sys.stderr.flush()
        self.out.close()
        os._exit(tpuci_devices.DEVICES_EXIT)

    def pytest_configure(self, config):
        if self.deps is not None:
            self.deps.configure(config)

    def pytest_sessionstart(self, session):
        c = session.config
        root = getattr(c, "rootpath", None) or c.rootdir
        self.out.write(json.dumps({"rootdir": str(root)}) + "\n")
        if self.deps is not None:
            self.deps.configure(c)

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
    if deps is not None:
        # Before pytest.main(): conftest.py files, plugins and the
        # collection are the session's.
        deps.start()
    try:
        ret = pytest.main(argv[7:], plugins=[plugin])
    finally:
        if deps is not None:
            deps.end()
    return settle(ret, plugin)


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
