#!/usr/bin/env python3
"""The adversarial suite of select = "affected" (issue 41; docs/pytest.md,
"Only what a change can affect"): small projects, each with a change that
makes a test fail in a way a recorder can easily not see, run by tpuci
with the selection and with every test, so that a failing test the
selection leaves out (a miss) or a test that fails only under the
selection (a false red) is seen.

Each case is a project written here (a dict of files) with a local pytest
job (select = "affected"). Its protocol:

  1. the project in a temporary folder (a git work tree, its files
     committed); plain pytest passes it (else the case itself is broken);
     a recording run (`tpuci run --plain --no-cache`, the state folder
     outside the project): every test must pass;
  2. the change: files edited, added or removed (left uncommitted, or
     committed with --commit); some cases act during the recording run
     instead (a conftest.py that saves a file while the suite runs,
     switched on by a marker file outside the project);
  3. from a copy of the recording's state folder: the selecting run (the
     tests that ran: every outcome but "unaffected");
  4. from another copy: `tpuci run --no-select`, the truth (the tests
     that fail: failed, error, not-run), and plain pytest with the same
     files (what fails without tpuci's recorder).

The cases (--list names them, each with what it does): code run at
import or at collection whose effect a second test sees without running
it (import_*, collect_*); what decides an import or pytest's
configuration (shadow_*, new_conftest_*, *_ini*, setup_cfg_*,
pytest_plugins_*); reads a recorder may not see (read_*: listdir, glob,
exists, skipif, chdir, a file beyond a hashing cap, subprocesses,
multiprocessing); new tests (new_test_*, new_parametrize_*); a file saved
during the run (time_*); a second checkout (place_*); the results cache
(cache_*); a daemon thread under the recorder (false_red_*); threads
(thread_*); how much runs (granularity_*); and mutation.py's mutants of a
project with all of the above (mutation_project).

A miss is a test failing in the truth that the selecting run left out
("unaffected", or not there at all). A false red is a test failing in a
tpuci run (recording, selecting or truth) that plain pytest passes, or in
the selecting run where the truth passes it. A case whose truth has no
failing test is vacuous (its change no longer breaks anything): an error
too. The second checkout runs its selection and truth in a copy of the
project; the results cache and the mutants have a protocol of their own
(cache_runner, mutation_runner); the granularity cases also print the
fraction of the suite the selection ran (a measurement, not a check).

Prints a line per case (its truth's failing tests, the tests the
selection ran of the suite, the misses) and a summary; exits 1 on a miss,
a false red, a vacuous case or a case that could not run.

usage: select_cases.py [--commit] [--keep] [--jobs N] [-v] TPUCI [CASE...]
       select_cases.py --list
  CASE        a case's name, or a prefix of names (import_, shadow_...)
  --commit    commit each change before the selecting run (default: the
              change is left in the work tree, as on a developer's machine)
  --keep      keep the temporary folders (their paths are printed)
  --jobs N    cases at a time (2)
  -v          also each selecting run's "select affected" line, and every
              mutant's figures
"""
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

# Another interpreter (Python 3.12's sys.monitoring path, say) with
# TPUCI_SELECT_PYTHON, and TPUCI_SELECT_PYTHONPATH where its pytest is.
PYTHON = os.environ.get("TPUCI_SELECT_PYTHON", "/usr/bin/python3")
EXTRA_PATH = os.environ.get("TPUCI_SELECT_PYTHONPATH", "")
HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = ('job "p" { pytest = { python = "%s", args = { "tests" }, select = "affected" }%s }\n'
        % (PYTHON, ', env = { PYTHONPATH = "%s" }' % EXTRA_PATH if EXTRA_PATH else ""))
FAILING = ("failed", "error", "not-run")
RUN_TIMEOUT = 180


def D(text):
    return textwrap.dedent(text).lstrip("\n")


ROOT_CONFTEST = "# The rootdir's conftest.py: pytest puts the rootdir on sys.path.\n"

# What plain pytest says (the check that a case's project is sound, and
# that what fails under tpuci fails without it): a plugin outside the
# project, loaded with -p, writes each test's outcome.
PLAIN_PLUGIN = D('''
    import json
    import os

    _out = {}


    def pytest_runtest_logreport(report):
        if report.failed:
            _out[report.nodeid] = "failed"
        elif report.when == "call" or report.skipped:
            _out.setdefault(report.nodeid, report.outcome)


    def pytest_collectreport(report):
        if report.failed:
            _out[report.nodeid] = "error"


    def pytest_sessionfinish(session):
        with open(os.environ["SELECT_CASES_PLAIN"], "w") as f:
            json.dump(_out, f)
    ''')


class Case:
    """A case: `files` ({path: text}, "@WORK@" replaced by the case's
    temporary folder, outside the project); `change(ctx)` edits the
    project (returns the folder the selecting and truth runs use, None:
    the project); `setup(ctx)` runs before the commit of the base,
    `before_record(ctx)` after plain pytest passed the base and
    `after_record(ctx)` after the recording run; `runner`, a protocol of
    its own; `measure`, a case that reports the fraction run."""

    def __init__(self, name, group, doc, files, change=None, setup=None, before_record=None,
                 after_record=None, runner=None, measure=False):
        self.name, self.group, self.doc, self.files = name, group, doc, files
        self.change, self.setup = change, setup
        self.before_record, self.after_record = before_record, after_record
        self.runner, self.measure = runner, measure


CASES = []


def case(name, group, doc, files, **kw):
    CASES.append(Case(name, group, doc, files, **kw))


class Result:
    def __init__(self, name):
        self.name = name
        self.truth = set()      # failing with every test run (tpuci --no-select)
        self.ran = set()        # run by the selection
        self.total = 0
        self.missed = []
        self.false_red = []
        self.vacuous = False
        self.error = None
        self.note = ""          # shown with -v
        self.info = ""          # shown always
        self.fraction = None
        self.rows = []          # the mutants' (name, truth, ran, total, missed)
        self.seconds = 0.0

    def bad(self):
        return bool(self.missed or self.false_red or self.vacuous or self.error)


class Ctx:
    def __init__(self, tpuci, work, commit):
        self.tpuci, self.work, self.commit = tpuci, work, commit
        self.proj = os.path.join(work, "proj")
        self.log = []

    def path(self, rel, folder=None):
        return os.path.join(folder or self.proj, rel)

    def subst(self, text):
        return text.replace("@WORK@", self.work)


# --- files and git ---------------------------------------------------------

def write_files(ctx, files, folder=None):
    for rel, text in files.items():
        path = ctx.path(rel, folder)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(ctx.subst(text))


def read(ctx, rel, folder=None):
    with open(ctx.path(rel, folder)) as f:
        return f.read()


def write(ctx, rel, text, folder=None):
    path = ctx.path(rel, folder)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(ctx.subst(text))


def edit(ctx, rel, old, new, folder=None):
    text = read(ctx, rel, folder)
    if text.count(old) != 1:
        raise RuntimeError("%s: %r is there %d times" % (rel, old, text.count(old)))
    write(ctx, rel, text.replace(old, new), folder)


def append(ctx, rel, text, folder=None):
    write(ctx, rel, read(ctx, rel, folder) + text, folder)


GIT = ["git", "-c", "user.email=cases@tpuci", "-c", "user.name=cases", "-c",
       "commit.gpgsign=false", "-c", "init.defaultBranch=main"]


def git(folder, *args):
    subprocess.run(GIT + list(args), cwd=folder, check=True, capture_output=True)


def commit(folder, message):
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "--allow-empty", "-m", message)


# --- runs ------------------------------------------------------------------

def environment():
    env = dict(os.environ)
    for k in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "TPUCI_NO_CACHE", "PYTHONPATH",
              "VIRTUAL_ENV", "CONDA_PREFIX", "SELECT_CASES_PLAIN"):
        env.pop(k, None)
    return env


ENV = environment()


class Run:
    def __init__(self, what, out, outcomes, instance):
        self.what, self.out, self.outcomes, self.instance = what, out, outcomes, instance
        self.total = len(outcomes)
        self.ran = {t for t, o in outcomes.items() if o != "unaffected"}
        self.failed = {t for t, o in outcomes.items() if o in FAILING}

    def select_line(self):
        return " ".join(l.strip() for l in self.out.split("\n") if "select affected" in l)


class RunError(Exception):
    pass


def tpuci(ctx, folder, state, *extra, cache=False, what="run"):
    """`tpuci run` in `folder` with the state folder `state` (absolute)."""
    cmd = [ctx.tpuci, "run", "--plain"] + ([] if cache else ["--no-cache"]) + \
        ["--state-dir", state] + list(extra) + ["spec.lua"]
    try:
        p = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, env=ENV,
                           timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise RunError("%s: tpuci did not end in %ds" % (what, RUN_TIMEOUT))
    out = p.stdout + p.stderr
    ctx.log.append("$ %s  (in %s)\n%s" % (" ".join(cmd), folder, out))
    try:
        with open(os.path.join(state, "runs", "latest", "summary.json")) as f:
            s = json.load(f)
        inst = s["instances"][0]
    except (OSError, ValueError, KeyError, IndexError) as e:
        raise RunError("%s: no summary (%s); exit %d:\n%s" % (what, e, p.returncode, out[-1500:]))
    outcomes = {t["id"]: t["outcome"] for t in inst.get("tests", [])}
    return Run(what, out, outcomes, inst)


def plain(ctx, folder, what="plain pytest"):
    """Plain pytest (no tpuci) on `folder`: {node id: outcome}."""
    plugin = os.path.join(ctx.work, "plainrec")
    os.makedirs(plugin, exist_ok=True)
    with open(os.path.join(plugin, "select_cases_plain.py"), "w") as f:
        f.write(PLAIN_PLUGIN)
    out = os.path.join(ctx.work, "plain.json")
    if os.path.exists(out):
        os.remove(out)
    env = dict(ENV, PYTHONPATH=plugin + (os.pathsep + EXTRA_PATH if EXTRA_PATH else ""),
               SELECT_CASES_PLAIN=out, PYTHONDONTWRITEBYTECODE="1")
    try:
        p = subprocess.run([PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                            "select_cases_plain", "tests"], cwd=folder, env=env,
                           capture_output=True, text=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise RunError("%s: pytest did not end in %ds" % (what, RUN_TIMEOUT))
    ctx.log.append("$ pytest tests  (in %s)\n%s" % (folder, p.stdout[-3000:] + p.stderr[-2000:]))
    try:
        with open(out) as f:
            return json.load(f)
    except (OSError, ValueError):
        raise RunError("%s: no outcomes; exit %d:\n%s" % (what, p.returncode, p.stdout[-1500:]))


def plain_failing(outcomes):
    return {t for t, o in outcomes.items() if o in ("failed", "error")}


def copy_state(src, dst):
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, symlinks=True)


def prepare(ctx, case):
    """The project written and committed, plain pytest passing it."""
    os.makedirs(ctx.proj)
    write_files(ctx, dict(case.files, **{"spec.lua": SPEC}))
    if case.setup:
        case.setup(ctx)
    git(ctx.proj, "init", "-q")
    commit(ctx.proj, "base")
    base = plain(ctx, ctx.proj, "plain pytest of the base")
    if plain_failing(base) or not base:
        raise RunError("the case's project fails without tpuci: %s" % sorted(plain_failing(base)))
    return base


class RecordFailed(Exception):
    pass


def record(ctx, case, res, state):
    """The recording run: every test runs and passes (plain pytest passed
    them: a failure here is a false red)."""
    if case.before_record:
        case.before_record(ctx)
    rec = tpuci(ctx, ctx.proj, state, what="recording run")
    if rec.failed:
        res.false_red = ["%s (recording run)" % t for t in sorted(rec.failed)]
        res.error = "the recording run failed where plain pytest passes"
        raise RecordFailed()
    if not rec.total or rec.ran != set(rec.outcomes):
        raise RunError("recording run: %d tests, %d run\n%s" % (rec.total, len(rec.ran),
                                                                 rec.out[-1500:]))
    if case.after_record:
        case.after_record(ctx)
    return rec


def left_out(truth, sel):
    """The tests failing in the truth that the selecting run left out
    (unaffected), or did not have at all (a module's collection error the
    selection did not collect)."""
    return sorted(t for t in truth.failed if sel.outcomes.get(t, "unaffected") == "unaffected")


def judge(res, rec, sel, truth, plain_truth):
    """Misses, false reds (failing in the selecting run where the truth or
    plain pytest passes; failing in the truth where plain pytest passes),
    a vacuous case."""
    res.truth, res.ran, res.total = truth.failed, sel.ran, sel.total
    res.missed = left_out(truth, sel)
    plain_passing = {t for t, o in plain_truth.items() if o not in ("failed", "error")}
    truth_passing = {t for t, o in truth.outcomes.items() if o not in FAILING}
    reds = []
    if rec is not None:
        reds += ["%s (recording run)" % t for t in sorted(rec.failed)]
    reds += ["%s (selecting run)" % t for t in sorted(sel.failed & (plain_passing | truth_passing))]
    reds += ["%s (run with --no-select)" % t for t in sorted(truth.failed & plain_passing)]
    res.false_red = reds
    res.vacuous = not truth.failed


def standard(ctx, case, res):
    prepare(ctx, case)
    rec_state = os.path.join(ctx.work, "state-rec")
    rec = record(ctx, case, res, rec_state)
    folder = (case.change(ctx) if case.change else None) or ctx.proj
    if ctx.commit:
        commit(folder, "change")
    sel_state, truth_state = os.path.join(ctx.work, "state-sel"), os.path.join(ctx.work,
                                                                                 "state-truth")
    copy_state(rec_state, sel_state)
    copy_state(rec_state, truth_state)
    sel = tpuci(ctx, folder, sel_state, what="selecting run")
    truth = tpuci(ctx, folder, truth_state, "--no-select", what="run with --no-select")
    pt = plain(ctx, folder, "plain pytest of the change")
    judge(res, rec, sel, truth, pt)
    res.note = sel.select_line()
    if case.measure:
        res.fraction = len(sel.ran) / sel.total if sel.total else 1.0


# --- import-time code ------------------------------------------------------

case("import_lazy_class_attr", "import-time code",
     "a class attribute of a module a fixture imports lazily; the second test "
     "reads it without importing anything",
     {
         "conftest.py": D('''
             import pytest


             @pytest.fixture
             def config():
                 from app.settings import Config  # imported when first needed
                 return Config
             '''),
         "app/__init__.py": "",
         "app/settings.py": D('''
             class Config:
                 NAME = "base"
                 SCALE = 2
             '''),
         "app/calc.py": D('''
             def scale(x, factor):
                 return x * factor
             '''),
         "tests/test_a_first.py": D('''
             def test_config_name(config):
                 assert config.NAME == "base"
             '''),
         "tests/test_b_second.py": D('''
             from app.calc import scale


             def test_scaled(config):
                 assert scale(3, config.SCALE) == 6
             '''),
     },
     change=lambda ctx: edit(ctx, "app/settings.py", "SCALE = 2", "SCALE = 3"))

case("import_lazy_dataclass_default", "import-time code",
     "a dataclass field's default (its __init__ is generated code, '<string>'); "
     "a fixture imports the module lazily, the second test only builds one",
     {
         "conftest.py": D('''
             import pytest


             @pytest.fixture
             def options():
                 from app.options import Options  # imported when first needed
                 return Options()
             '''),
         "app/__init__.py": "",
         "app/options.py": D('''
             from dataclasses import dataclass, field


             @dataclass
             class Options:
                 size: int = 4
                 tags: list = field(default_factory=list)
             '''),
         "app/build.py": D('''
             def make_buffer(options):
                 return [0] * options.size
             '''),
         "tests/test_a_options.py": D('''
             def test_options_tags(options):
                 assert options.tags == []
             '''),
         "tests/test_b_buffer.py": D('''
             from app.build import make_buffer


             def test_buffer(options):
                 assert len(make_buffer(options)) == 4
             '''),
     },
     change=lambda ctx: edit(ctx, "app/options.py", "size: int = 4", "size: int = 8"))

case("import_lazy_default_argument", "import-time code",
     "a default argument taken at import from another module's constant; a "
     "fixture imports the function's module lazily",
     {
         "conftest.py": D('''
             import pytest


             @pytest.fixture
             def pager():
                 from app.paging import page  # imported when first needed
                 return page
             '''),
         "app/__init__.py": "",
         "app/limits.py": "MAX_ITEMS = 3\n",
         "app/paging.py": D('''
             from app import limits


             def page(items, size=limits.MAX_ITEMS):
                 return items[:size]
             '''),
         "tests/test_a_paging.py": D('''
             def test_short_list(pager):
                 assert pager([1, 2]) == [1, 2]
             '''),
         "tests/test_b_first_page.py": D('''
             def test_first_page(pager):
                 assert pager(list(range(10))) == [0, 1, 2]
             '''),
     },
     change=lambda ctx: edit(ctx, "app/limits.py", "MAX_ITEMS = 3", "MAX_ITEMS = 4"))

case("import_lazy_registry", "import-time code",
     "a decorator registry filled when a module is imported (lazily, by a fixture) "
     "with classes; a registration's name changes",
     {
         "conftest.py": D('''
             import pytest


             @pytest.fixture
             def registry():
                 import app.handlers  # noqa: F401  (fills the registry at its import)
                 from app import registry
                 return registry
             '''),
         "app/__init__.py": "",
         "app/registry.py": D('''
             HANDLERS = {}


             def register(name):
                 def deco(cls):
                     HANDLERS[name] = cls
                     return cls
                 return deco


             def handle(name, value):
                 return HANDLERS[name].factor * value
             '''),
         "app/handlers.py": D('''
             from app.registry import register


             @register("double")
             class Double:
                 factor = 2


             @register("negate")
             class Negate:
                 factor = -1
             '''),
         "tests/test_a_negate.py": D('''
             def test_negate(registry):
                 assert registry.handle("negate", 2) == -2
             '''),
         "tests/test_b_double.py": D('''
             def test_double(registry):
                 assert registry.handle("double", 4) == 8
             '''),
     },
     change=lambda ctx: edit(ctx, "app/handlers.py", '@register("double")', '@register("twice")'))

case("import_package_init_ran_first", "import-time code",
     "a package's __init__.py configures a submodule when it runs (in the first "
     "test); the second test imports only the submodule",
     {
         "conftest.py": ROOT_CONFTEST,
         "app/__init__.py": D('''
             from app import backend

             backend.select("fast")
             '''),
         "app/backend.py": D('''
             _CURRENT = None


             def select(name):
                 global _CURRENT
                 _CURRENT = name


             def current():
                 return _CURRENT
             '''),
         "tests/test_a_import.py": D('''
             def test_package_imports():
                 import app
                 assert hasattr(app, "backend")
             '''),
         "tests/test_b_backend.py": D('''
             def test_default_backend():
                 from app.backend import current
                 assert current() == "fast"
             '''),
     },
     change=lambda ctx: edit(ctx, "app/__init__.py", 'select("fast")', 'select("safe")'))

case("collect_parametrize_from_function", "import-time code",
     "parametrize data from a project function (its module imported lazily, at "
     "collection); the ids stay, an expected value changes",
     {
         "conftest.py": ROOT_CONFTEST,
         "app/__init__.py": "",
         "app/cases.py": D('''
             def table():
                 from app.gen import rows
                 return rows()
             '''),
         "app/gen.py": D('''
             def rows():
                 return [(1, 1), (2, 4), (3, 9)]
             '''),
         "app/mathx.py": D('''
             def square(x):
                 return x * x
             '''),
         "tests/test_square.py": D('''
             import pytest

             from app.cases import table
             from app.mathx import square


             @pytest.mark.parametrize("x,want", table(), ids=["one", "two", "three"])
             def test_square(x, want):
                 assert square(x) == want
             '''),
     },
     change=lambda ctx: edit(ctx, "app/gen.py", "(2, 4)", "(2, 5)"))

case("collect_generate_tests_hook", "import-time code",
     "conftest.py's pytest_generate_tests parametrizes from a project function at "
     "collection; an expected value changes (conftest.py does not)",
     {
         "conftest.py": D('''
             def pytest_generate_tests(metafunc):
                 if "case" in metafunc.fixturenames:
                     from app.gen import rows
                     metafunc.parametrize("case", rows(), ids=["one", "two", "three"])
             '''),
         "app/__init__.py": "",
         "app/gen.py": D('''
             def rows():
                 return [(1, 1), (2, 4), (3, 9)]
             '''),
         "app/mathx.py": D('''
             def square(x):
                 return x * x
             '''),
         "tests/test_square.py": D('''
             from app.mathx import square


             def test_square(case):
                 x, want = case
                 assert square(x) == want
             '''),
     },
     change=lambda ctx: edit(ctx, "app/gen.py", "(2, 4)", "(2, 5)"))

case("collect_module_config", "import-time code",
     "a test module reads a config file at its top (at collection)",
     {
         "conftest.py": ROOT_CONFTEST,
         "app/__init__.py": "",
         "app/stats.py": D('''
             def mean(xs):
                 return sum(xs) / len(xs)
             '''),
         "tests/settings.json": '{"tolerance": 0.05}\n',
         "tests/test_stats.py": D('''
             import json
             import os

             from app.stats import mean

             with open(os.path.join(os.path.dirname(__file__), "settings.json")) as f:
                 SETTINGS = json.load(f)


             def test_mean_close():
                 assert abs(mean([1.0, 1.02]) - 1.0) <= SETTINGS["tolerance"]
             '''),
     },
     change=lambda ctx: edit(ctx, "tests/settings.json", "0.05", "0.001"))


# --- what decides an import ------------------------------------------------

LEGACY = {
    "app/__init__.py": "",
    "app/old.py": D('''
        import warnings


        def legacy():
            warnings.warn("legacy() is deprecated", DeprecationWarning, stacklevel=2)
            return 1
        '''),
    "tests/test_legacy.py": D('''
        from app.old import legacy


        def test_legacy():
            assert legacy() == 1
        '''),
    "tests/test_other.py": D('''
        def test_other():
            assert sum([1, 2]) == 3
        '''),
}

case("shadow_stdlib_in_tests", "what decides an import",
     "a new tests/colorsys.py shadows the standard library's (tests/ is on sys.path: "
     "pytest's prepend import mode)",
     {
         "conftest.py": ROOT_CONFTEST,
         "tests/test_colors.py": D('''
             import colorsys


             def test_red_hsv():
                 assert colorsys.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)
             '''),
     },
     change=lambda ctx: write(ctx, "tests/colorsys.py", D('''
         """The project's own colour helpers (shadows the standard library's)."""


         def rgb_to_hsv(r, g, b):
             return (0.0, 0.0, max(r, g, b))
         ''')))

case("shadow_stdlib_at_rootdir", "what decides an import",
     "a new statistics.py at the rootdir (on sys.path through pytest.ini's pythonpath) "
     "shadows the standard library's",
     {
         "pytest.ini": "[pytest]\npythonpath = .\n",
         "tests/test_mean.py": D('''
             import statistics


             def test_mean():
                 assert statistics.mean([1, 2, 3]) == 2
             '''),
     },
     change=lambda ctx: write(ctx, "statistics.py", D('''
         def mean(xs):
             return sum(xs)
         ''')))

case("shadow_package_beside_module", "what decides an import",
     "a new package app/fmt/__init__.py beside app/fmt.py: the package wins",
     {
         "conftest.py": ROOT_CONFTEST,
         "app/__init__.py": "",
         "app/fmt.py": D('''
             def render(x):
                 return "<%s>" % x
             '''),
         "tests/test_fmt.py": D('''
             from app.fmt import render


             def test_render():
                 assert render(1) == "<1>"
             '''),
     },
     change=lambda ctx: write(ctx, "app/fmt/__init__.py", D('''
         def render(x):
             return "[%s]" % x
         ''')))

case("new_conftest_autouse", "what decides an import",
     "a new tests/unit/conftest.py with an autouse fixture that fails",
     {
         "conftest.py": ROOT_CONFTEST,
         "app/__init__.py": "",
         "app/units.py": D('''
             def km(m):
                 return m / 1000
             '''),
         "tests/unit/test_units.py": D('''
             from app.units import km


             def test_km():
                 assert km(1500) == 1.5


             def test_zero():
                 assert km(0) == 0
             '''),
     },
     change=lambda ctx: write(ctx, "tests/unit/conftest.py", D('''
         import os

         import pytest


         @pytest.fixture(autouse=True)
         def _offline():
             assert os.environ.get("APP_OFFLINE") == "1", "unit tests run offline"
         ''')))

case("new_pytest_ini", "what decides an import",
     "a new pytest.ini whose addopts turns a plugin off (-p no:tmpdir): a test "
     "using tmp_path errors",
     {
         "conftest.py": ROOT_CONFTEST,
         "tests/test_files.py": D('''
             def test_write(tmp_path):
                 p = tmp_path / "x.txt"
                 p.write_text("x")
                 assert p.read_text() == "x"


             def test_plain():
                 assert "x".upper() == "X"
             '''),
     },
     change=lambda ctx: write(ctx, "pytest.ini", "[pytest]\naddopts = -p no:tmpdir\n"))

case("pyproject_ini_options_added", "what decides an import",
     "[tool.pytest.ini_options] added to a pyproject.toml that had none: "
     "filterwarnings = error fails a test that warns",
     dict(LEGACY, **{
         "conftest.py": ROOT_CONFTEST,
         "pyproject.toml": D('''
             [project]
             name = "app"
             version = "0.1"
             '''),
     }),
     change=lambda ctx: append(ctx, "pyproject.toml", D('''

         [tool.pytest.ini_options]
         filterwarnings = ["error"]
         ''')))

case("pytest_ini_beside_tox", "what decides an import",
     "a new pytest.ini beside tox.ini (whose [pytest] was the configuration): "
     "pytest.ini wins, without tox.ini's ignore",
     dict(LEGACY, **{
         "conftest.py": ROOT_CONFTEST,
         "tox.ini": D('''
             [tox]
             envlist = py311

             [pytest]
             filterwarnings =
                 error
                 ignore:legacy:DeprecationWarning
             '''),
     }),
     change=lambda ctx: write(ctx, "pytest.ini", "[pytest]\nfilterwarnings =\n    error\n"))

case("setup_cfg_added", "what decides an import",
     "a new setup.cfg with [tool:pytest] xfail_strict = true: an xfail test that "
     "passes now fails",
     {
         "conftest.py": ROOT_CONFTEST,
         "tests/test_xfail.py": D('''
             import pytest


             @pytest.mark.xfail(reason="rounding was broken once")
             def test_round():
                 assert round(2.5) == 2


             def test_plain():
                 assert round(3.2) == 3
             '''),
     },
     change=lambda ctx: write(ctx, "setup.cfg", "[tool:pytest]\nxfail_strict = true\n"))

case("pytest_plugins_module_changed", "what decides an import",
     "a module named in conftest.py's pytest_plugins gets an autouse fixture; "
     "conftest.py itself is unchanged",
     {
         "conftest.py": 'pytest_plugins = ["support.fixtures"]\n',
         "support/__init__.py": "",
         "support/fixtures.py": D('''
             import pytest


             @pytest.fixture
             def db():
                 return {"users": 2}
             '''),
         "tests/test_db.py": D('''
             def test_users(db):
                 assert db["users"] == 2
             '''),
         "tests/test_plain.py": D('''
             def test_plain():
                 assert len("abc") == 3
             '''),
     },
     change=lambda ctx: append(ctx, "support/fixtures.py", D('''


         @pytest.fixture(autouse=True)
         def _clean_db():
             raise RuntimeError("the test database is not reachable")
         ''')))

case("pytest_plugins_new_module", "what decides an import",
     "conftest.py lists fixtures/*.py as pytest_plugins; a new module there has a "
     "failing autouse fixture",
     {
         "conftest.py": D('''
             import os

             _FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
             pytest_plugins = sorted("fixtures." + n[:-3] for n in os.listdir(_FIXTURES)
                                     if n.endswith(".py") and n != "__init__.py")
             '''),
         "fixtures/__init__.py": "",
         "fixtures/numbers.py": D('''
             import pytest


             @pytest.fixture
             def numbers():
                 return [1, 2, 3]
             '''),
         "tests/test_numbers.py": D('''
             def test_sum(numbers):
                 assert sum(numbers) == 6
             '''),
         "tests/test_plain.py": D('''
             def test_plain():
                 assert max(1, 2) == 2
             '''),
     },
     change=lambda ctx: write(ctx, "fixtures/zz_guard.py", D('''
         import pytest


         @pytest.fixture(autouse=True)
         def _guard():
             raise RuntimeError("a guard every test now passes through")
         ''')))


# --- reads a recorder may not see ------------------------------------------

case("read_listdir_new_file", "reads",
     "a test checks every file os.listdir finds in a folder; a new, bad file there",
     {
         "conftest.py": ROOT_CONFTEST,
         "tests/data/a.json": '{"value": 1}\n',
         "tests/data/b.json": '{"value": 2}\n',
         "tests/test_data.py": D('''
             import json
             import os

             DATA = os.path.join(os.path.dirname(__file__), "data")


             def test_every_record_positive():
                 for name in sorted(os.listdir(DATA)):
                     with open(os.path.join(DATA, name)) as f:
                         assert json.load(f)["value"] > 0, name
             '''),
     },
     change=lambda ctx: write(ctx, "tests/data/c.json", '{"value": -1}\n'))

case("read_glob_new_module", "reads",
     "plugins found by glob and imported by name (app/ext/*.py); a new one there",
     {
         "conftest.py": ROOT_CONFTEST,
         "app/__init__.py": "",
         "app/ext/__init__.py": "",
         "app/ext/csv_ext.py": "OK = True\n",
         "app/discover.py": D('''
             import glob
             import importlib
             import os

             _EXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ext")


             def extensions():
                 out = []
                 for path in sorted(glob.glob(os.path.join(_EXT, "*_ext.py"))):
                     name = os.path.basename(path)[:-3]
                     out.append(importlib.import_module("app.ext." + name))
                 return out
             '''),
         "tests/test_ext.py": D('''
             from app.discover import extensions


             def test_extensions_ok():
                 assert all(e.OK for e in extensions())
             '''),
     },
     change=lambda ctx: write(ctx, "app/ext/xml_ext.py", "OK = False\n"))

case("read_exists_new_file", "reads",
     "a config read only when os.path.exists() finds it; the file is new",
     {
         "conftest.py": ROOT_CONFTEST,
         "app/__init__.py": "",
         "app/config.py": D('''
             import os

             ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
             DEFAULTS = {"workers": 2}


             def load():
                 cfg = dict(DEFAULTS)
                 path = os.path.join(ROOT, "local.cfg")
                 if os.path.exists(path):
                     with open(path) as f:
                         for line in f:
                             k, v = line.strip().split("=")
                             cfg[k] = int(v)
                 return cfg
             '''),
         "tests/test_config.py": D('''
             from app.config import load


             def test_workers():
                 assert load()["workers"] == 2
             '''),
     },
     change=lambda ctx: write(ctx, "local.cfg", "workers=8\n"))

case("read_skipif_file_now_exists", "reads",
     "skipif(not os.path.exists(golden)): the golden file is added, the test now "
     "runs and fails",
     {
         "conftest.py": ROOT_CONFTEST,
         "app/__init__.py": "",
         "app/render.py": D('''
             def render():
                 return "Title\\n"
             '''),
         "tests/test_golden.py": D('''
             import os

             import pytest

             from app.render import render

             GOLDEN = os.path.join(os.path.dirname(__file__), "golden", "page.txt")


             @pytest.mark.skipif(not os.path.exists(GOLDEN), reason="no golden file yet")
             def test_page_matches_golden():
                 with open(GOLDEN) as f:
                     assert render() == f.read()


             def test_render_nonempty():
                 assert render()
             '''),
     },
     change=lambda ctx: write(ctx, "tests/golden/page.txt", "title\n"))

case("read_relative_after_chdir", "reads",
     "open('input.txt') after monkeypatch.chdir(tests/fixtures)",
     {
         "conftest.py": ROOT_CONFTEST,
         "tests/fixtures/input.txt": "3\n",
         "tests/test_chdir.py": D('''
             import os

             HERE = os.path.dirname(os.path.abspath(__file__))


             def test_read_relative(monkeypatch):
                 monkeypatch.chdir(os.path.join(HERE, "fixtures"))
                 with open("input.txt") as f:
                     assert int(f.read()) == 3
             '''),
     },
     change=lambda ctx: write(ctx, "tests/fixtures/input.txt", "4\n"))

BIG = 300 << 20


def big_setup(ctx):
    path = ctx.path("tests/data/big.bin")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"MAGIC1")
    os.truncate(path, BIG)  # sparse: fast to make, and cheap on the disk


def big_change(ctx):
    with open(ctx.path("tests/data/big.bin"), "r+b") as f:
        f.seek(5)
        f.write(b"2")


case("read_big_sparse_file", "reads",
     "a 300 MiB (sparse) file, beyond a hashing cap; a byte near its start changes",
     {
         "conftest.py": ROOT_CONFTEST,
         ".gitignore": "tests/data/big.bin\n",
         "tests/test_big.py": D('''
             import os

             BIG = os.path.join(os.path.dirname(__file__), "data", "big.bin")


             def test_header():
                 with open(BIG, "rb") as f:
                     assert f.read(6) == b"MAGIC1"
             '''),
     },
     setup=big_setup, change=big_change)

case("read_subprocess_script", "reads",
     "a test runs a project script with python3 (scripts/convert.py); the script changes",
     {
         "conftest.py": ROOT_CONFTEST,
         "scripts/convert.py": D('''
             import sys


             def main(argv):
                 print(int(argv[1]) * 100)


             if __name__ == "__main__":
                 main(sys.argv)
             '''),
         "tests/test_cli.py": D('''
             import os
             import subprocess
             import sys

             ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


             def test_convert_cli():
                 p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "convert.py"), "3"],
                                    capture_output=True, text=True, check=True)
                 assert p.stdout.strip() == "300"
             '''),
     },
     change=lambda ctx: edit(ctx, "scripts/convert.py", "* 100", "* 1000"))

case("read_subprocess_python_c", "reads",
     "a test runs python3 -c 'from app.cli import main; ...'; app/cli.py changes",
     {
         "conftest.py": ROOT_CONFTEST,
         "app/__init__.py": "",
         "app/cli.py": D('''
             def main():
                 return "version 1"
             '''),
         "tests/test_version.py": D('''
             import os
             import subprocess
             import sys

             ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


             def test_version():
                 p = subprocess.run([sys.executable, "-c", "from app.cli import main; print(main())"],
                                    cwd=ROOT, capture_output=True, text=True, check=True)
                 assert p.stdout.strip() == "version 1"
             '''),
     },
     change=lambda ctx: edit(ctx, "app/cli.py", "version 1", "version 2"))

case("read_multiprocessing_pool", "reads",
     "a function run in a multiprocessing Pool's workers imports and calls a module "
     "the parent never imports",
     {
         "conftest.py": ROOT_CONFTEST,
         "app/__init__.py": "",
         "app/par.py": D('''
             import multiprocessing


             def _work(x):
                 from app import kernels
                 return kernels.weight(x)


             def weigh_all(xs):
                 with multiprocessing.Pool(2) as pool:
                     return pool.map(_work, xs)
             '''),
         "app/kernels.py": D('''
             def weight(x):
                 return x * 2
             '''),
         "tests/test_par.py": D('''
             from app.par import weigh_all


             def test_weights():
                 assert weigh_all([1, 2, 3]) == [2, 4, 6]
             '''),
     },
     change=lambda ctx: edit(ctx, "app/kernels.py", "x * 2", "x * 3"))

case("read_subprocess_cat", "reads",
     "a test reads a data file with `cat` in a subprocess",
     {
         "conftest.py": ROOT_CONFTEST,
         "app/__init__.py": "",
         "app/greet.py": D('''
             def greeting():
                 return "hello"
             '''),
         "tests/data/expected.txt": "hello\n",
         "tests/test_greet.py": D('''
             import os
             import subprocess

             from app.greet import greeting

             EXPECTED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "expected.txt")


             def test_greeting():
                 out = subprocess.run(["cat", EXPECTED], capture_output=True, text=True, check=True).stdout
                 assert out == greeting() + "\\n"
             '''),
     },
     change=lambda ctx: write(ctx, "tests/data/expected.txt", "hullo\n"))


# --- new tests ---------------------------------------------------------------

case("new_test_in_unaffected_file", "new tests",
     "a new (failing) test in a file whose other tests nothing affects",
     {
         "conftest.py": ROOT_CONFTEST,
         "app/__init__.py": "",
         "app/mathx.py": D('''
             def add(a, b):
                 return a + b


             def sub(a, b):
                 return a - b
             '''),
         "tests/test_mathx.py": D('''
             from app.mathx import add, sub


             def test_add():
                 assert add(1, 2) == 3


             def test_sub():
                 assert sub(3, 2) == 1
             '''),
     },
     change=lambda ctx: append(ctx, "tests/test_mathx.py", D('''


         def test_mul():
             from app.mathx import mul
             assert mul(2, 3) == 6
         ''')))

case("new_parametrize_case_from_data", "new tests",
     "a new parametrize case from a data file read at collection",
     {
         "conftest.py": ROOT_CONFTEST,
         "app/__init__.py": "",
         "app/inc.py": D('''
             def inc(x):
                 return x + 1
             '''),
         "tests/cases.json": "[[1, 2], [2, 3]]\n",
         "tests/test_inc.py": D('''
             import json
             import os

             import pytest

             from app.inc import inc

             with open(os.path.join(os.path.dirname(__file__), "cases.json")) as f:
                 CASES = json.load(f)


             @pytest.mark.parametrize("x,want", CASES)
             def test_inc(x, want):
                 assert inc(x) == want
             '''),
     },
     change=lambda ctx: write(ctx, "tests/cases.json", "[[1, 2], [2, 3], [5, 7]]\n"))


# --- time --------------------------------------------------------------------

def marker_on(ctx):
    with open(os.path.join(ctx.work, "editor-saves"), "w") as f:
        f.write("on\n")


def marker_off(ctx):
    os.remove(os.path.join(ctx.work, "editor-saves"))


case("time_file_saved_during_run", "time",
     "a file is saved while the suite runs, after the test that reads it passed: "
     "the next selecting run must run that test",
     {
         "conftest.py": D('''
             import os

             # The case's switch (outside the project): on during the recording run only.
             _EDITOR = "@WORK@/editor-saves"


             def pytest_sessionfinish(session):
                 # someone saves the file while the suite still runs (half-way through an edit)
                 if os.path.exists(_EDITOR):
                     path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests",
                                         "data", "golden.txt")
                     with open(path, "w") as f:
                         f.write("v2 (half-")
             '''),
         "tests/data/golden.txt": "v1\n",
         "tests/test_golden.py": D('''
             import os

             GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "golden.txt")


             def test_golden():
                 with open(GOLDEN) as f:
                     assert f.read() == "v1\\n"


             def test_other():
                 assert "v1".startswith("v")
             '''),
     },
     before_record=marker_on, after_record=marker_off)


# --- place -------------------------------------------------------------------

def second_checkout(ctx):
    """The project copied (as `cp -a` would: times kept) to another folder;
    there, a change of the same size whose file keeps its time."""
    other = os.path.join(ctx.work, "checkout2")
    shutil.copytree(ctx.proj, other, symlinks=True)
    path = os.path.join(other, "app", "core.py")
    st = os.stat(path)
    edit(ctx, "app/core.py", "return 42", "return 41", folder=other)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    return other


case("place_second_checkout", "place",
     "a second checkout of the project (copied, times kept) sharing the state folder; "
     "a same-size change only there",
     {
         "conftest.py": ROOT_CONFTEST,
         "app/__init__.py": "",
         "app/core.py": D('''
             def answer():
                 return 42
             '''),
         "app/other.py": D('''
             def other():
                 return 1
             '''),
         "tests/test_core.py": D('''
             from app.core import answer


             def test_answer():
                 assert answer() == 42
             '''),
         "tests/test_other.py": D('''
             from app.other import other


             def test_other():
                 assert other() == 1
             '''),
     },
     change=second_checkout)


# --- results cache ---------------------------------------------------------

def cache_runner(ctx, case, res):
    """A selecting run with the results cache on leaves every test out (and
    its pass is stored); then something neither the cache's key nor the
    selection sees breaks a test (a file outside the project). A plain
    `tpuci run --no-select` with the cache on must run the tests: not take
    the pass of the run that ran none of them."""
    prepare(ctx, case)
    state = os.path.join(ctx.work, "state")
    rec = record(ctx, case, res, state)
    sel = tpuci(ctx, ctx.proj, state, cache=True, what="selecting run, cache on")
    premise = "selecting run (cache on) left %d of %d out%s" % (
        sel.total - len(sel.ran), sel.total,
        "" if not sel.ran else ": PREMISE NOT MET, the cache check means little")
    if ctx.commit:
        commit(ctx.proj, "change")
    truth_state = os.path.join(ctx.work, "state-truth")
    copy_state(state, truth_state)
    with open(os.path.join(ctx.work, "external.txt"), "w") as f:
        f.write("off\n")
    full = tpuci(ctx, ctx.proj, state, "--no-select", cache=True,
                 what="run with --no-select, cache on")
    truth = tpuci(ctx, ctx.proj, truth_state, "--no-select", what="run with --no-select")
    pt = plain(ctx, ctx.proj, "plain pytest of the change")
    judge(res, rec, full, truth, pt)
    cached = full.instance.get("outcome") == "cached" or \
        (full.instance.get("cache") or {}).get("hit")
    not_run = sorted(t for t in full.outcomes if t not in full.ran)
    res.info = "%s; --no-select: %s, %d of %d tests run" % (
        premise, "a cached pass" if cached else "ran", len(full.ran), full.total)
    if cached or not_run:
        res.missed = sorted(set(res.missed) | (truth.failed - full.ran))
        if not res.missed:
            res.error = "--no-select with the cache on did not run every test: %s" % not_run


case("cache_no_select_after_all_unaffected", "results cache",
     "a cached pass of a run that left every test out must not stand for "
     "`tpuci run --no-select` (cache on)",
     {
         "conftest.py": ROOT_CONFTEST,
         "tests/test_external.py": D('''
             import os

             # A file outside the project: neither the results cache's key nor the selection sees it.
             EXTERNAL = "@WORK@/external.txt"


             def test_feature_flag():
                 if os.path.exists(EXTERNAL):
                     with open(EXTERNAL) as f:
                         assert f.read().strip() == "on"


             def test_plain():
                 assert abs(-3) == 3
             '''),
     },
     runner=cache_runner)


# --- false red: a daemon thread under the recorder ---------------------------

case("false_red_daemon_thread", "false red",
     "a session fixture's daemon thread calls Python functions in a loop while the "
     "tests run (the recorder's tracer must not break it); a separate change "
     "breaks one test",
     {
         "conftest.py": D('''
             import pytest


             @pytest.fixture(scope="session")
             def heartbeat():
                 from app.service import Heartbeat
                 hb = Heartbeat().start()
                 yield hb
                 hb.stop()
             '''),
         "app/__init__.py": "",
         "app/plain.py": D('''
             def value():
                 return 1
             '''),
         "app/service.py": D('''
             import threading
             import time


             def checksum(n):
                 return sum(range(n % 50))


             class Heartbeat:
                 def __init__(self):
                     self.beats = 0
                     self.errors = []
                     self._stop = False
                     self.thread = threading.Thread(target=self._loop, daemon=True)

                 def start(self):
                     self.thread.start()
                     return self

                 def stop(self):
                     self._stop = True

                 def _tick(self):
                     self.beats += 1
                     return checksum(self.beats)

                 def _loop(self):
                     while not self._stop:
                         try:
                             self._tick()
                         except Exception as e:  # a service logs and goes on
                             self.errors.append(repr(e))
                         time.sleep(0.0005)
             '''),
         "tests/test_service.py": D('''
             import time

             import pytest


             @pytest.mark.parametrize("i", range(12))
             def test_beats(heartbeat, i):
                 n = heartbeat.beats
                 deadline = time.time() + 10
                 while heartbeat.beats <= n + 2 and time.time() < deadline:
                     time.sleep(0.001)
                 assert heartbeat.beats > n + 2
                 assert heartbeat.errors == []
                 assert heartbeat.thread.is_alive()
             '''),
         "tests/test_zplain.py": D('''
             from app.plain import value


             def test_value():
                 assert value() == 1
             '''),
     },
     change=lambda ctx: edit(ctx, "app/plain.py", "return 1", "return 2"))


# --- threads -----------------------------------------------------------------

KERNELS = D('''
    def blend(a, b):
        return a + b
    ''')

# Jobs named by a string, as a task queue names them; their modules found
# by name when app/tasks.py is imported (at collection): no import of
# app.kernels in the project's source, and none while a test runs.
CALL_BY_NAME = D('''
    import importlib

    MODULES = {name: importlib.import_module("app." + name) for name in ("kernels",)}


    def call(name, *args):
        module, _, fn = name.partition(".")
        return getattr(MODULES[module], fn)(*args)
    ''')

case("thread_started_in_test", "threads",
     "a test's assertion depends on a function run in a thread it starts (a job "
     "named by a string, its module imported at collection)",
     {
         "conftest.py": ROOT_CONFTEST,
         "app/__init__.py": "",
         "app/kernels.py": KERNELS,
         "app/tasks.py": CALL_BY_NAME,
         "app/jobs.py": D('''
             import threading

             from app.tasks import call


             def run_in_thread(name, *args):
                 out = []
                 t = threading.Thread(target=lambda: out.append(call(name, *args)))
                 t.start()
                 t.join()
                 return out[0] if out else None
             '''),
         "tests/test_threads.py": D('''
             from app.jobs import run_in_thread


             def test_blend_in_thread():
                 assert run_in_thread("kernels.blend", 2, 3) == 5
             '''),
     },
     change=lambda ctx: edit(ctx, "app/kernels.py", "a + b", "a - b"))

case("thread_pool_started_at_import", "threads",
     "a ThreadPoolExecutor whose worker thread started at import (at collection, "
     "before any tracing) runs a test's job (named by a string)",
     {
         "conftest.py": ROOT_CONFTEST,
         "app/__init__.py": "",
         "app/kernels.py": KERNELS,
         "app/tasks.py": CALL_BY_NAME,
         "app/pool.py": D('''
             from concurrent.futures import ThreadPoolExecutor

             from app.tasks import call

             EXECUTOR = ThreadPoolExecutor(max_workers=1)
             EXECUTOR.submit(int).result()  # warm: the worker thread starts now, at import


             def submit(name, *args):
                 return EXECUTOR.submit(call, name, *args).result()
             '''),
         "tests/test_pool.py": D('''
             from app.pool import submit


             def test_blend_in_pool():
                 assert submit("kernels.blend", 2, 3) == 5
             '''),
     },
     change=lambda ctx: edit(ctx, "app/kernels.py", "a + b", "a - b"))


# --- function-level granularity (measurements) ------------------------------

def metrics_files():
    """A package whose __init__.py imports 20 modules (as pytorch-ignite's
    metrics), each a class of 3 methods; a test file of 5 tests each."""
    files = {
        "conftest.py": ROOT_CONFTEST,
        "metrics/base.py": D('''
            class Metric:
                def __init__(self):
                    self.reset()
            '''),
    }
    init = []
    for k in range(20):
        n = "%02d" % k
        init.append("from metrics.m%s import Metric%s  # noqa: F401\n" % (n, n))
        files["metrics/m%s.py" % n] = D('''
            from metrics.base import Metric

            SCALE_NN = KK


            class MetricNN(Metric):
                def reset(self):
                    self.total = 0
                    self.count = 0

                def update(self, x):
                    self.total += x * SCALE_NN
                    self.count += 1

                def compute(self):
                    if self.count == 0:
                        raise ValueError("MetricNN needs data")
                    return self.total / self.count
            ''').replace("NN", n).replace("KK", str(k + 1))
        files["tests/test_m%s.py" % n] = D('''
            import pytest

            from metrics import MetricNN


            def test_reset():
                assert MetricNN().count == 0


            def test_update_counts():
                m = MetricNN()
                m.update(1)
                assert m.count == 1


            def test_compute_one():
                m = MetricNN()
                m.update(2)
                assert m.compute() == 2 * KK


            def test_compute_mean():
                m = MetricNN()
                m.update(1)
                m.update(3)
                assert m.compute() == 2 * KK


            def test_compute_empty():
                with pytest.raises(ValueError):
                    MetricNN().compute()
            ''').replace("NN", n).replace("KK", str(k + 1))
    files["metrics/__init__.py"] = "".join(init)
    return files


def raise_in_compute(ctx):
    edit(ctx, "metrics/m07.py", "        if self.count == 0:\n",
         '        raise RuntimeError("a bug")\n        if self.count == 0:\n')


case("granularity_method_raise", "granularity",
     "20 modules imported by a package's __init__.py, 100 tests; a raise in one "
     "method (3 tests call it): the fraction run",
     metrics_files(), change=raise_in_compute, measure=True)

case("granularity_module_constant", "granularity",
     "the same package; a module-level constant of one module changes (read by "
     "one method): the fraction run",
     metrics_files(), change=lambda ctx: edit(ctx, "metrics/m07.py", "SCALE_07 = 8",
                                              "SCALE_07 = 9"), measure=True)


# --- mutants ---------------------------------------------------------------

MPROJ = {
    "conftest.py": D('''
        import pytest


        @pytest.fixture
        def defaults():
            from mproj.defaults import Defaults  # lazily: the first user imports it
            return Defaults
        '''),
    "mproj/__init__.py": "from mproj import table, units  # noqa: F401  (at import)\n",
    "mproj/units.py": D('''
        SCALE = 10


        def to_base(x):
            return x * SCALE
        '''),
    "mproj/table.py": D('''
        from mproj.units import to_base

        ROWS = [to_base(i) for i in range(1, 4)]  # computed at import, by another module


        def total():
            return sum(ROWS)


        def lookup(i):
            return ROWS[i]
        '''),
    "mproj/kernels.py": D('''
        def square(x):
            return x * x


        def offset(x):
            return x + 1
        '''),
    "mproj/workers.py": D('''
        import threading


        def map_threads(fn, xs):
            out = [None] * len(xs)

            def run(i):
                out[i] = fn(xs[i])

            ts = [threading.Thread(target=run, args=(i,)) for i in range(len(xs))]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            return out


        def squares(xs):
            from mproj import kernels
            return map_threads(kernels.square, xs)
        '''),
    "mproj/fmt.py": D('''
        def fmt(v):
            return "v=%d" % v
        '''),
    "mproj/cli.py": D('''
        import sys


        def main(argv):
            from mproj import table
            from mproj.fmt import fmt
            print(fmt(table.total() + int(argv[0])))


        if __name__ == "__main__":
            main(sys.argv[1:])
        '''),
    "mproj/defaults.py": D('''
        LIMIT = 5


        class Defaults:
            limit = LIMIT

            def describe(self):
                return "limit=%d" % self.limit
        '''),
    "tests/data/expected.txt": "v=64\n",
    "tests/test_table.py": D('''
        import mproj


        def test_total():
            assert mproj.table.total() == 60


        def test_lookup():
            assert mproj.table.lookup(1) == 20


        def test_units():
            assert mproj.units.to_base(2) == 20
        '''),
    "tests/test_workers.py": D('''
        from mproj.workers import map_threads, squares


        def test_squares():
            assert squares([1, 2, 3]) == [1, 4, 9]


        def test_offsets():
            from mproj import kernels
            assert map_threads(kernels.offset, [1, 2]) == [2, 3]
        '''),
    "tests/test_cli.py": D('''
        import os
        import subprocess
        import sys

        ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


        def test_cli():
            out = subprocess.run([sys.executable, "-m", "mproj.cli", "4"], cwd=ROOT,
                                 capture_output=True, text=True).stdout
            want = subprocess.run(["cat", os.path.join(ROOT, "tests", "data", "expected.txt")],
                                  capture_output=True, text=True).stdout
            assert out == want
        '''),
    "tests/test_defaults.py": D('''
        def test_a_describe(defaults):
            assert defaults().describe() == "limit=5"


        def test_b_limit(defaults):
            assert defaults.limit == 5
        '''),
}


def mutation_runner(ctx, case, res):
    """mutation.py's mutants (each function raising, each constant changed,
    conftest.py's fixture raising, the data file changed) of a project with
    import-time cross-module code, a lazily importing fixture, a
    subprocess and threads: each from the same record."""
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    sys.path.insert(0, HERE)
    import mutation  # tests/pytest/mutation.py
    prepare(ctx, case)
    rec_state = os.path.join(ctx.work, "state-rec")
    rec = record(ctx, case, res, rec_state)
    sel_state, truth_state = os.path.join(ctx.work, "state-sel"), os.path.join(ctx.work,
                                                                                 "state-truth")
    vacuous, total = [], rec.total
    for name, path, text in mutation.mutants(ctx.proj, "mproj"):
        with open(path) as f:
            orig = f.read()
        with open(path, "w") as f:
            f.write(text)
        copy_state(rec_state, sel_state)
        copy_state(rec_state, truth_state)
        sel = tpuci(ctx, ctx.proj, sel_state, what="selecting run (%s)" % name)
        truth = tpuci(ctx, ctx.proj, truth_state, "--no-select", what="--no-select (%s)" % name)
        missed = left_out(truth, sel)
        passing = {t for t, o in truth.outcomes.items() if o not in FAILING}
        res.false_red += ["%s: %s (selecting run)" % (name, t)
                          for t in sorted(sel.failed & passing)]
        res.rows.append((name, len(truth.failed), len(sel.ran), sel.total, missed))
        res.missed += ["%s: %s" % (name, t) for t in missed]
        res.truth |= {"%s: %s" % (name, t) for t in truth.failed}
        res.ran |= {"%s: %s" % (name, t) for t in sel.ran}
        if not truth.failed:
            vacuous.append(name)
        with open(path, "w") as f:
            f.write(orig)
    res.total = total
    res.vacuous = bool(vacuous) or not res.rows
    fr = [r[2] / r[3] for r in res.rows if r[3]]
    res.fraction = sum(fr) / len(fr) if fr else None
    res.info = "%d mutants, %d missed a failing test%s" % (
        len(res.rows), sum(1 for r in res.rows if r[4]),
        "; vacuous: %s" % vacuous if vacuous else "")


case("mutation_project", "mutants",
     "mutation.py's mutants of a project with import-time cross-module code, a "
     "lazily importing fixture, a subprocess and threads",
     MPROJ, runner=mutation_runner)


# --- the driver --------------------------------------------------------------

def run_case(tpuci_bin, case, commit_changes, keep):
    res = Result(case.name)
    work = tempfile.mkdtemp(prefix="tpuci-select-%s." % case.name)
    ctx = Ctx(tpuci_bin, work, commit_changes)
    t0 = time.monotonic()
    try:
        (case.runner or standard)(ctx, case, res)
    except RecordFailed:
        pass
    except (RunError, RuntimeError, OSError, subprocess.CalledProcessError) as e:
        res.error = str(e)
    res.seconds = time.monotonic() - t0
    if res.bad() and (keep or res.error):
        with open(os.path.join(work, "log.txt"), "w") as f:
            f.write("\n".join(ctx.log))
    if keep:
        res.info = (res.info + "; " if res.info else "") + "kept in " + work
    else:
        shutil.rmtree(work, ignore_errors=True)
    return res


def line(case, res, verbose):
    nran, total = len(res.ran), res.total
    if res.rows:  # the mutants': summed
        nran, total = sum(r[2] for r in res.rows), sum(r[3] for r in res.rows)
    out = "%-38s truth %3d failing   ran %4d/%-4d  missed %d" % (
        res.name, len(res.truth), nran, total, len(res.missed))
    if res.fraction is not None:
        out += "   (%s %.0f%% of the suite%s)" % (
            "mean" if case.runner else "ran", 100 * res.fraction,
            "; target <= 10%" if case.name == "granularity_method_raise" else "")
    out += "   %.0fs" % res.seconds
    if res.missed and not res.rows:
        out += "\n    MISSED: %s" % ", ".join(res.missed[:12])
        if len(res.missed) > 12:
            out += " (and %d more)" % (len(res.missed) - 12)
    if res.false_red:
        out += "\n    FALSE RED: %s" % ", ".join(res.false_red[:12])
    if res.vacuous:
        out += "\n    VACUOUS: the change made no test fail"
    if res.error:
        out += "\n    ERROR: %s" % res.error.strip().replace("\n", "\n      ")
    for name, nfail, nran, tot, missed in res.rows:
        if verbose or missed:
            out += "\n    %-44s %2d failing, %2d of %2d run%s" % (
                name, nfail, nran, tot, "  MISSED %s" % missed if missed else "")
    if res.info:
        out += "\n    (%s)" % res.info
    if res.note and verbose:
        out += "\n    (%s)" % res.note
    return out


def main(argv):
    args = argv[1:]
    commit_changes = keep = verbose = False
    jobs = 2
    if args[:1] == ["--list"]:
        for c in CASES:
            print("%-38s %-24s %s" % (c.name, c.group, c.doc))
        return 0
    while args and args[0].startswith("-"):
        a = args.pop(0)
        if a == "--commit":
            commit_changes = True
        elif a == "--keep":
            keep = True
        elif a == "-v":
            verbose = True
        elif a == "--jobs" and args:
            jobs = max(1, int(args.pop(0)))
        else:
            print(__doc__, file=sys.stderr)
            return 2
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    tpuci_bin = os.path.abspath(args[0])
    names = args[1:]
    chosen = [c for c in CASES if not names or any(c.name == n or c.name.startswith(n)
                                                   for n in names)]
    unknown = [n for n in names if not any(c.name == n or c.name.startswith(n) for c in CASES)]
    if unknown or not chosen:
        print("no such case: %s (--list names them)" % ", ".join(unknown or names),
              file=sys.stderr)
        return 2
    # The long ones first: the pool ends sooner.
    order = sorted(chosen, key=lambda c: 0 if c.runner is mutation_runner else
                   1 if c.measure else 2)
    t0 = time.monotonic()
    results = {}
    lock = threading.Lock()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_case, tpuci_bin, c, commit_changes, keep): c for c in order}
        for fut in concurrent.futures.as_completed(futures):
            c = futures[fut]
            res = fut.result()
            results[c.name] = res
            with lock:
                print(line(c, res, verbose), flush=True)
    wall = time.monotonic() - t0
    left = sum(r.total - len(r.ran) for r in results.values() if not r.rows and r.total) + \
        sum(row[3] - row[2] for r in results.values() for row in r.rows)
    if not left and any(r.total for r in results.values()):
        print("WARNING: no selecting run left a test out: the cases prove nothing about what "
              "the selection leaves out (is the record read? -v shows each run's reason)")
    bad = [r for r in results.values() if r.bad()]
    print("cases: %d; missed a failing test: %d (%s); false red: %d; vacuous: %d; errors: %d; "
          "wall time %.0fs" % (
              len(results), sum(1 for r in results.values() if r.missed),
              ", ".join(r.name for r in results.values() if r.missed) or "none",
              sum(1 for r in results.values() if r.false_red),
              sum(1 for r in results.values() if r.vacuous),
              sum(1 for r in results.values() if r.error), wall))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
