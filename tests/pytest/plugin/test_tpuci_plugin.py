"""tpuci's pytest bootstrap and plugin (core/kind/pytest/plugin/tpuci_plugin.py)
in real pytest sessions: its hooks in-process with pytester, and the whole
command in a subprocess, as tpuci runs it (conftest.Attempt)."""
import base64
import binascii
import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
import zlib

import pytest

import tpuci_plugin
from conftest import records

SUITE = """
    import pytest

    def test_passes():
        pass

    def test_fails():
        assert 1 == 2, "arithmetic is broken"

    def test_skips():
        pytest.skip("no accelerator")

    @pytest.mark.xfail(reason="known")
    def test_xfails():
        assert False

    def test_long_failure():
        raise ValueError("x" * 9000)
"""


def in_process(pytester, *args, limit=0, only=(), part=None, deps=None):
    """pytest in this process with a TpuciProgress (`deps`: DEPS's lines,
    recording aside); (result, plugin, progress.jsonl's records)."""
    pytester.makeini("[pytest]\n")
    progress = pytester.path / "progress.jsonl"
    if deps is not None:
        deps = tpuci_plugin.TpuciDeps(deps, str(progress))
    plugin = tpuci_plugin.TpuciProgress(str(progress), limit, set(only), part, deps)
    result = pytester.runpytest("-p", "no:cacheprovider", *args, plugins=[plugin])
    plugin.out.close()
    return result, plugin, records(progress)


def reports(recs, nodeid):
    """The test reports of `nodeid`, by phase."""
    return {r["when"]: r for r in recs if r.get("id") == nodeid}


def test_progress_records_the_session_as_it_goes(pytester):
    pytester.makepyfile(test_a=SUITE)
    result, _, recs = in_process(pytester)
    assert result.ret == 1
    ids = ["test_a.py::test_passes", "test_a.py::test_fails", "test_a.py::test_skips",
           "test_a.py::test_xfails", "test_a.py::test_long_failure"]
    # The rootdir and the collection come before the first test.
    assert recs[0] == {"rootdir": str(pytester.path)}
    assert recs[1] == {"collected": ids}
    # Each test: its start, then its phases' reports, in order.
    at = 2
    for nodeid in ids:
        assert recs[at]["start"] == nodeid and isinstance(recs[at]["t"], float)
        phases = [r["when"] for r in recs[at + 1:at + 4]]
        assert phases == ["setup", "call", "teardown"], recs[at:at + 4]
        at += 4
    assert at == len(recs)

    passed = reports(recs, "test_a.py::test_passes")["call"]
    assert passed["outcome"] == "passed" and passed["message"] is None
    lines = (pytester.path / "test_a.py").read_text().splitlines()
    assert passed["file"] == "test_a.py"
    assert passed["line"] == lines.index("def test_passes():")
    assert passed["xfail"] is False and passed["duration"] >= 0

    failed = reports(recs, "test_a.py::test_fails")["call"]
    assert failed["outcome"] == "failed"
    assert "arithmetic is broken" in failed["message"]
    assert failed["crash"].startswith("AssertionError: arithmetic is broken")

    skipped = reports(recs, "test_a.py::test_skips")["call"]
    assert skipped["outcome"] == "skipped" and skipped["message"] == "Skipped: no accelerator"

    xfailed = reports(recs, "test_a.py::test_xfails")["call"]
    assert xfailed["outcome"] == "skipped" and xfailed["xfail"] is True

    # A failure keeps the last 4000 characters of its traceback.
    long = reports(recs, "test_a.py::test_long_failure")["call"]
    assert len(long["message"]) == 4000 and long["message"].endswith("ValueError")
    assert long["crash"].startswith("ValueError: xxx")


def test_collected_is_what_runs_after_deselection_and_reordering(pytester):
    pytester.makeconftest("""
        def pytest_collection_modifyitems(items):
            items.reverse()
    """)
    pytester.makepyfile(test_a="""
        def test_1(): pass
        def test_2_slow(): pass
        def test_3(): pass
    """)
    result, _, recs = in_process(pytester, "-k", "not slow")
    assert result.ret == 0
    assert recs[1] == {"collected": ["test_a.py::test_3", "test_a.py::test_1"]}
    started = [r["start"] for r in recs if "start" in r]
    assert started == ["test_a.py::test_3", "test_a.py::test_1"]


def test_only_keeps_those_tests_in_pytests_order(pytester):
    pytester.makepyfile(test_a="""
        import pytest
        def test_1(): pass
        def test_2(): pass
        @pytest.mark.parametrize("x", ["a", "b"])
        def test_3(x): pass
    """)
    only = ["test_a.py::test_3[b]", "test_a.py::test_1", "test_a.py::test_gone"]
    result, plugin, recs = in_process(pytester, only=only)
    assert result.ret == 0
    assert recs[1] == {"collected": ["test_a.py::test_1", "test_a.py::test_3[b]"]}
    assert result.parseoutcomes()["deselected"] == 2
    assert (plugin.only_kept, plugin.only_dropped) == (2, 2)
    assert tpuci_plugin.settle(result.ret, plugin) == 0


def test_only_with_none_collected_is_no_failure(pytester, capsys):
    pytester.makepyfile(test_a="def test_1(): pass\n")
    result, plugin, recs = in_process(pytester, only=["test_a.py::test_gone"])
    assert result.ret == 5
    assert recs[1] == {"collected": []}
    capsys.readouterr()
    assert tpuci_plugin.settle(result.ret, plugin) == 0
    assert capsys.readouterr().out == (
        "tpuci: the test this process was to run is not collected "
        "(gone since it was recorded)\n")
    # Two: "none of the 2 tests".
    result, plugin, recs = in_process(pytester, only=["test_a.py::test_gone", "test_a.py::test_x"])
    capsys.readouterr()
    assert tpuci_plugin.settle(result.ret, plugin) == 0
    assert capsys.readouterr().out == (
        "tpuci: none of the 2 tests this process was to run is collected "
        "(gone since they were recorded)\n")
    # Nothing selected at all is pytest's exit 5, for tpuci to judge.
    empty = tpuci_plugin.TpuciProgress(os.devnull)
    assert tpuci_plugin.settle(5, empty) == 5


@pytest.mark.parametrize("by,nodeid,unit", [
    ("file", "tests/t.py::TestC::test_x[a::b]", "tests/t.py"),
    ("class", "tests/t.py::TestC::test_x[a::b]", "tests/t.py::TestC"),
    ("class", "tests/t.py::test_free[1]", "tests/t.py::test_free[1]"),
    ("test", "tests/t.py::TestC::test_x[a::b]", "tests/t.py::TestC::test_x[a::b]"),
])
def test_part_units_are_shard_unit_len(by, nodeid, unit):
    """The unit a shard keeps whole, as tpuci__shard_unit_len() cuts it."""
    part = tpuci_plugin.TpuciPart(["%s 1 1" % by])
    assert part.unit(nodeid) == unit


def test_part_keeps_recorded_units_and_deals_new_ones_by_crc32():
    part = tpuci_plugin.TpuciPart(["file 2 1,2,3", "1\ttests/a.py", "2\ttests/b.py"])
    assert part.mine("tests/b.py::test_x") and not part.mine("tests/a.py::test_x")
    new = "tests/new.py"
    owner = [1, 2, 3][zlib.crc32(new.encode()) % 3]
    assert part.mine(new + "::test_y") == (owner == 2)
    # Without a shard that has tests, a new unit goes nowhere.
    assert not tpuci_plugin.TpuciPart(["test 1 ", "2\tt.py::test_a"]).mine("t.py::test_b")


def test_shard_writes_the_suite_and_keeps_its_part(pytester):
    pytester.makepyfile(test_a="""
        class TestC:
            def test_1(self): pass
            def test_2(self): pass
        def test_3(): pass
        def test_slow(): pass
    """, test_b="def test_4(): pass\n")
    part = tpuci_plugin.TpuciPart(["class 2 1,2", "1\ttest_a.py::TestC", "2\ttest_a.py::test_3",
                                   "1\ttest_b.py::test_4"])
    result, _, recs = in_process(pytester, "-k", "not slow", part=part)
    assert result.ret == 0
    # What it collected after -k (test_slow is no shard's), sorted.
    ids = sorted(["test_a.py::TestC::test_1", "test_a.py::TestC::test_2", "test_a.py::test_3",
                  "test_b.py::test_4"])
    assert recs[1] == {"suite": [4, zlib.crc32("\n".join(ids).encode())]}
    assert recs[2] == {"collected": ["test_a.py::test_3"]}
    assert (part.kept, part.dropped) == (1, 3)
    assert result.parseoutcomes()["deselected"] == 4


def test_shard_left_with_nothing_is_no_failure(pytester, capsys):
    pytester.makepyfile(test_a="def test_1(): pass\ndef test_2(): pass\n")
    part = tpuci_plugin.TpuciPart(["test 2 1,2", "1\ttest_a.py::test_1", "1\ttest_a.py::test_2"])
    result, plugin, _ = in_process(pytester, part=part)
    assert result.ret == 5 and (part.kept, part.dropped) == (0, 2)
    capsys.readouterr()
    assert tpuci_plugin.settle(result.ret, plugin) == 0
    assert "no test is left for this shard" in capsys.readouterr().out
    # A shard of a suite that collects nothing keeps pytest's 5.
    none = tpuci_plugin.TpuciProgress(os.devnull, part=tpuci_plugin.TpuciPart(["test 1 1"]))
    assert tpuci_plugin.settle(5, none) == 5


def test_test_timeout_fails_the_test_and_goes_on(pytester):
    pytester.makepyfile(test_a="""
        import time
        def test_hangs():
            for _ in range(1200):
                time.sleep(0.1)
        def test_next():
            pass
    """)
    result, _, recs = in_process(pytester, limit=0.25)
    assert result.ret == 1
    hung = reports(recs, "test_a.py::test_hangs")["call"]
    assert hung["outcome"] == "failed"
    assert hung["crash"].startswith(
        "Failed: test_timeout: longer than 0.25s (tpuci); the stacks of its threads:")
    assert "in test_hangs\n" in hung["crash"]
    assert reports(recs, "test_a.py::test_next")["call"]["outcome"] == "passed"
    # The timer is off once the test is over.
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_the_command_as_tpuci_runs_it(attempt):
    attempt.pytester.makepyfile(test_a=SUITE)
    result = attempt.run("test_a.py")
    assert result.ret == 1
    assert attempt.junit.exists()
    recs = attempt.records()
    assert recs[0] == {"rootdir": str(attempt.pytester.path)}
    assert len(recs[1]["collected"]) == 5
    # Nothing stopped it: stacks.txt is there, empty.
    assert (attempt.results / "stacks.txt").read_text() == ""
    assert sorted(os.listdir(str(attempt.results))) == ["junit.xml", "progress.jsonl",
                                                        "stacks.txt"]


def test_the_command_with_only_gone_exits_0(attempt):
    attempt.pytester.makepyfile(test_a="def test_1(): pass\n")
    result = attempt.run(only=["test_a.py::test_gone"])
    assert result.ret == 0
    result.stdout.fnmatch_lines(["tpuci: the test this process was to run is not collected*"])


def test_the_process_ends_without_waiting_for_threads(attempt):
    """atexit functions run; a non-daemon thread a test left does not keep
    the process (os._exit)."""
    marker = attempt.pytester.path / "atexit-ran"
    attempt.pytester.makepyfile(test_a="""
        import atexit, threading
        def test_leaves_a_thread():
            threading.Thread(target=threading.Event().wait).start()
            atexit.register(lambda: open(%r, "w").close())
    """ % str(marker))
    result = attempt.run()
    assert result.ret == 0
    assert marker.exists()


def read_until(proc, want, seconds=60):
    """Reads proc's stdout until a line holds `want`, for at most `seconds`
    (a bounded wait, not a timing assertion); returns what it read."""
    got, end = b"", time.monotonic() + seconds
    while want not in got:
        left = end - time.monotonic()
        if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
            raise AssertionError("no %r in %d s; read %r" % (want, seconds, got[-2000:]))
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            raise AssertionError("stdout ended before %r; read %r" % (want, got[-2000:]))
        got += chunk
    return got


def wait_for_file(path, seconds=60):
    end = time.monotonic() + seconds
    while not os.path.exists(str(path)) or os.path.getsize(str(path)) == 0:
        assert time.monotonic() < end, "%s: not written in %d s" % (path, seconds)
        time.sleep(0.05)


def test_sigterm_writes_every_threads_stack(attempt):
    started = attempt.pytester.path / "started"
    attempt.pytester.makepyfile(test_hang="""
        import time
        def test_hangs():
            open(%r, "w").write("yes")
            while True:
                time.sleep(0.1)
    """ % str(started))
    proc = subprocess.Popen(attempt.argv(), cwd=str(attempt.pytester.path),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_file(started)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == -signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
    stacks = (attempt.results / "stacks.txt").read_text()
    assert 'test_hang.py", line ' in stacks and " in test_hangs\n" in stacks
    # It was in the test's call when it ended.
    recs = attempt.records()
    assert [r["start"] for r in recs if "start" in r] == ["test_hang.py::test_hangs"]
    assert [r["when"] for r in recs if "when" in r] == ["setup"]


def results_blocks(out, key):
    """The blocks of results-folder lines in `out` (logres.h): a list of
    (how, {name: bytes}), after checking each file's size and CRC-32 and
    that every line is at most 3 KB."""
    lines = []
    for line in out.split(b"\n"):
        # A results block may follow a line left without its newline
        # (output.h: "KEY results " starts a line within one too).
        at = line.find(key + b" results ")
        if line.startswith(key + b" ") or at > 0:
            lines.append(line[max(at, 0):] if not line.startswith(key + b" ") else line)
    assert lines[0] == key + b" results on"
    blocks, files, name, data = [], None, None, b""
    for line in lines[1:]:
        assert len(line) + 1 <= 3 * 1024
        words = line[len(key) + 1:].split(b" ")
        if words[0] == b"results" and words[1] in (b"begin", b"snapshot"):
            files, how, count = {}, words[1].decode(), int(words[2])
        elif words[0] == b"file":
            name, size, crc, data = words[1].decode(), int(words[2]), int(words[3]), b""
        elif words[0] == b"d":
            data += base64.b64decode(words[1])
        elif words[0] == b"end":
            assert (len(data), binascii.crc32(data)) == (size, crc)
            files[name] = data
        elif words[:2] == [b"results", b"end"]:
            assert int(words[2]) == count == len(files)
            blocks.append((how, files))
    return blocks


def test_a_swarm_task_prints_its_results_folder(attempt, monkeypatch):
    monkeypatch.setenv("TPUCI_RESULTS_LOG", "#tpuci-0a0b")
    attempt.pytester.makepyfile(test_a=SUITE)
    result = attempt.run()
    assert result.ret == 1
    blocks = results_blocks("\n".join(result.outlines).encode(), b"#tpuci-0a0b")
    assert [how for how, _ in blocks] == ["begin"]
    files = blocks[0][1]
    assert sorted(files) == ["junit.xml", "progress.jsonl", "stacks.txt"]
    for name, data in files.items():
        assert data == (attempt.results / name).read_bytes()
    assert len(files["progress.jsonl"]) > 2250  # in several pieces


def test_a_swarm_task_outlived_sigterm_sends_a_snapshot(attempt, monkeypatch):
    monkeypatch.setenv("TPUCI_RESULTS_LOG", "#tpuci-0a0b")
    pidfile = attempt.pytester.path / "pid"
    attempt.pytester.makepyfile(test_stubborn="""
        import os, signal, time
        def test_ignores_sigterm():
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            open(%r, "w").write(str(os.getpid()))
            while True:
                time.sleep(0.1)
    """ % str(pidfile))
    proc = subprocess.Popen(attempt.argv(), cwd=str(attempt.pytester.path),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        wait_for_file(pidfile)
        proc.send_signal(signal.SIGTERM)
        out = read_until(proc, b"#tpuci-0a0b results end")
        os.kill(int(pidfile.read_text()), signal.SIGKILL)
        rest, _ = proc.communicate(timeout=60)
        # The parent ends as pytest's process did.
        assert proc.returncode == -signal.SIGKILL
    finally:
        proc.kill()
        proc.wait()
    blocks = results_blocks(out + rest, b"#tpuci-0a0b")
    assert [how for how, _ in blocks] == ["snapshot", "begin"]
    snapshot = blocks[0][1]
    progress = [json.loads(line) for line in snapshot["progress.jsonl"].splitlines()]
    assert [r["start"] for r in progress if "start" in r] == [
        "test_stubborn.py::test_ignores_sigterm"]


def test_importing_it_does_nothing(pytester):
    """Its tests import it: only `python -c` runs it."""
    result = pytester.run(
        sys.executable, "-c",
        "import sys; sys.path.insert(0, %r); import tpuci_plugin; print('imported')"
        % os.path.dirname(tpuci_plugin.__file__), "nothing", "0", "", "", "")
    assert result.ret == 0 and result.outlines == ["imported"]
    # Run, it would have made stacks.txt and the progress file "nothing".
    assert not (pytester.path / "stacks.txt").exists()
    assert not (pytester.path / "nothing").exists()


# What each test needs (TpuciDeps): DEPS's skip and audit lines in this
# process; the record, deps.jsonl, in the command as tpuci runs it.

def test_deps_skip_leaves_out_node_ids_only(pytester):
    """A file named alone leaves nothing out: a test new in it must run."""
    pytester.makepyfile(test_a="def test_1(): pass\ndef test_2(): pass\n",
                        test_b="def test_1(): pass\ndef test_2(): pass\n")
    deps = ["skip test_a.py", "skip test_b.py::test_1", "skip", "bogus test_b.py::test_2"]
    result, plugin, recs = in_process(pytester, deps=deps)
    assert result.ret == 0
    assert recs[1] == {"unaffected": ["test_b.py::test_1"]}
    assert recs[2] == {"collected": ["test_a.py::test_1", "test_a.py::test_2",
                                     "test_b.py::test_2"]}
    assert plugin.unaffected == 1 and result.parseoutcomes()["deselected"] == 1
    assert not (pytester.path / "deps.jsonl").exists()


def test_deps_audit_runs_the_test_last(pytester):
    pytester.makepyfile(test_a="""
        def test_1(): pass
        def test_2(): pass
        def test_3(): pass
        def test_4(): pass
        def test_5(): pass
    """)
    deps = ["audit test_a.py::test_1", "audit test_a.py::test_gone", "skip test_a.py::test_3",
            "skip test_a.py::test_4", "audit test_a.py::test_4"]
    result, _, recs = in_process(pytester, deps=deps)
    assert result.ret == 0
    # Left out, then audited (what is collected of them), then the rest
    # in pytest's order and the audited ones after.
    assert recs[1:4] == [{"unaffected": ["test_a.py::test_3"]},
                         {"audit": ["test_a.py::test_1", "test_a.py::test_4"]},
                         {"collected": ["test_a.py::test_2", "test_a.py::test_5",
                                        "test_a.py::test_1", "test_a.py::test_4"]}]
    started = [r["start"] for r in recs if "start" in r]
    assert started == recs[3]["collected"]
    assert reports(recs, "test_a.py::test_1")["call"]["outcome"] == "passed"
    # ONLY still applies after.
    (pytester.path / "progress.jsonl").unlink()
    result, _, recs = in_process(pytester, only=["test_a.py::test_1", "test_a.py::test_2"],
                                 deps=["audit test_a.py::test_1"])
    assert recs[1:3] == [{"audit": ["test_a.py::test_1"]},
                         {"collected": ["test_a.py::test_2", "test_a.py::test_1"]}]


def write(pytester, name, text):
    """Writes the file `name` of the project (its folders made), dedented."""
    path = pytester.path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))


def at(pytester, name, start):
    """[name, the number of its first line that starts with `start`]: a
    function's code object in deps.jsonl."""
    lines = (pytester.path / name).read_text().splitlines()
    return [name, [i for i, line in enumerate(lines) if line.startswith(start)][0] + 1]


def recorded(attempt, *args, **kw):
    """Runs the attempt with DEPS "record": (result, {node id: its line of
    deps.jsonl}, the session's line, which comes last)."""
    result = attempt.run(*args, deps="record", **kw)
    lines = records(attempt.results / "deps.jsonl")
    assert lines and lines[-1].get("session") is True, lines
    assert [sorted(line) for line in lines[:-1]] == [sorted(TEST_KEYS)] * (len(lines) - 1)
    assert sorted(lines[-1]) == sorted(SESSION_KEYS)
    return result, {line["t"]: line for line in lines[:-1]}, lines[-1]


TEST_KEYS = ("t", "code", "mods", "read", "list", "probe", "wrote", "why")
SESSION_KEYS = ("session", "code", "mods", "read", "list", "probe", "why", "python_files", "ini",
                "imported")
MONITORING = sys.version_info >= (3, 12)


def test_deps_an_import_counts_for_every_test_that_uses_the_module(attempt):
    """A module runs its top level once a process: what it ran and read
    then is in the record of each test that uses it, not only the first."""
    p = attempt.pytester
    write(p, "lazy.py", """
        import os


        def setup_table():
            return 3


        with open(os.path.join(os.path.dirname(__file__), "lazy.cfg")) as f:
            CFG = f.read()
        VALUE = setup_table()


        def value():
            return VALUE
    """)
    write(p, "lazy.cfg", "x\n")
    # By a name the test module's source does not import (its imports
    # count for it, wherever they are).
    for name in ("a", "b"):
        write(p, "test_%s.py" % name, """
            import importlib


            def test_%s():
                assert importlib.import_module("lazy").value() == 3
        """ % name)
    result, tests, _ = recorded(attempt)
    assert result.ret == 0
    for nodeid in ("test_a.py::test_a", "test_b.py::test_b"):
        rec = tests[nodeid]
        assert at(p, "lazy.py", "def setup_table") in rec["code"], rec
        assert ["lazy.py", 0] in rec["code"]  # its top level ("<module>": line 0)
        assert at(p, "lazy.py", "def value") in rec["code"], rec
        assert "lazy.py" in rec["mods"] and rec["read"] == ["lazy.cfg"], rec
        assert rec["why"] is None
    # Each has its own test function, not the other's.
    assert at(p, "test_a.py", "def test_a") in tests["test_a.py::test_a"]["code"]
    assert at(p, "test_b.py", "def test_b") not in tests["test_a.py::test_a"]["code"]


def test_deps_a_submodule_needs_its_package_imported_before(attempt):
    p = attempt.pytester
    write(p, "conftest.py", "import pkg\n")
    write(p, "pkg/__init__.py", """
        REGISTRY = []


        def register(name):
            REGISTRY.append(name)


        register("base")
    """)
    write(p, "pkg/sub.py", """
        def work():
            return 2
    """)
    write(p, "test_sub.py", """
        import importlib


        def test_sub():
            assert importlib.import_module("pkg.sub").work() == 2
    """)
    result, tests, session = recorded(attempt)
    assert result.ret == 0
    rec = tests["test_sub.py::test_sub"]
    assert {"pkg/__init__.py", "pkg/sub.py", "test_sub.py"} <= set(rec["mods"]), rec
    assert at(p, "pkg/__init__.py", "def register") in rec["code"]
    assert at(p, "pkg/sub.py", "def work") in rec["code"]
    assert "conftest.py" not in rec["mods"]
    assert {"conftest.py", "pkg/__init__.py"} <= set(session["mods"])
    # A test module's import counts for its tests, not for the session.
    assert "test_sub.py" not in session["mods"]


def test_deps_the_collection_is_the_sessions(attempt):
    """A hook of conftest.py and the ini file are the session's; parametrize
    data made at a test module's import by a project function from a file
    it reads are its tests' (a change there reruns them, not the whole
    session)."""
    p = attempt.pytester
    p.makeini("[pytest]\npython_files = test_*.py check_*.py\n")
    write(p, "cases.py", """
        import os

        with open(os.path.join(os.path.dirname(__file__), "cases.cfg")) as f:
            COUNT = int(f.read())


        def make_cases():
            return list(range(COUNT))
    """)
    write(p, "cases.cfg", "2\n")
    write(p, "conftest.py", """
        def pytest_collection_modifyitems(items):
            items.sort(key=lambda i: i.nodeid)
    """)
    write(p, "check_p.py", """
        import pytest
        from cases import make_cases


        @pytest.mark.parametrize("x", make_cases())
        def test_p(x):
            pass
    """)
    result, tests, session = recorded(attempt)
    assert result.ret == 0
    assert sorted(tests) == ["check_p.py::test_p[0]", "check_p.py::test_p[1]"]
    assert at(p, "conftest.py", "def pytest_collection_modifyitems") in session["code"], session
    assert "tox.ini" in session["read"] and "conftest.py" in session["mods"]
    for mine in ("cases.py", "check_p.py"):
        assert mine not in session["mods"], session
        assert not [c for c in session["code"] if c[0] == mine], session
    assert "cases.cfg" not in session["read"]
    assert session["python_files"] == ["test_*.py", "check_*.py"]
    assert session["ini"] == "tox.ini"
    assert {"cases.py", "check_p.py", "conftest.py"} <= set(session["imported"])
    assert session["why"] is None
    # pytest reads a test module to rewrite its asserts: an import, no read.
    assert "check_p.py" not in session["read"]
    # The test needs its module's import too.
    for nodeid in ("check_p.py::test_p[0]", "check_p.py::test_p[1]"):
        rec = tests[nodeid]
        assert at(p, "cases.py", "def make_cases") in rec["code"] and "cases.cfg" in rec["read"]
        assert {"cases.py", "check_p.py"} <= set(rec["mods"])


def test_deps_files_read_listed_probed_written_where_they_were(attempt):
    p = attempt.pytester
    write(p, "sub/data.txt", "d\n")
    write(p, "other/x.txt", "x\n")
    write(p, "byfd/y.txt", "y\n")
    write(p, "test_files.py", """
        import glob
        import os
        import pathlib


        def test_files(monkeypatch):
            monkeypatch.chdir("sub")
            with open("data.txt") as f:
                f.read()
            os.listdir(".")
            glob.glob("../other/*.txt")
            list(pathlib.Path("../other").iterdir())
            fd = os.open("../byfd", os.O_RDONLY)
            os.listdir(fd)
            os.close(fd)
            assert not os.path.exists("nothere.txt")
            assert not pathlib.Path("gone").exists()
            assert os.path.isdir(b"..")
            with open("../out.txt", "w") as f:
                f.write("x")
    """)
    result, tests, _ = recorded(attempt)
    assert result.ret == 0
    rec = tests["test_files.py::test_files"]
    assert rec["read"] == ["sub/data.txt"], rec
    assert {"sub", "other", "byfd"} <= set(rec["list"]), rec
    assert {"sub/nothere.txt", "sub/gone", "."} <= set(rec["probe"]), rec
    assert rec["wrote"] == ["out.txt"] and rec["why"] is None


def test_deps_probes_stay_transparent(attempt):
    """The wrappers of os.stat and the others return and raise as the
    functions do, take fds and keywords, and are gone after the session."""
    p = attempt.pytester
    write(p, "conftest.py", """
        import os
        import posix


        def pytest_unconfigure():
            with open("unwrapped", "w") as f:
                f.write(str(os.stat is posix.stat and os.path.exists(".")))
    """)
    write(p, "test_probe.py", """
        import os
        import posix

        import pytest


        def test_probe():
            assert os.stat is not posix.stat
            fd = os.open(".", os.O_RDONLY)
            try:
                assert os.stat(fd).st_ino == os.stat(path=".").st_ino
                assert os.path.exists(fd) and os.access(".", os.R_OK)
                with pytest.raises(FileNotFoundError):
                    os.stat("relative", dir_fd=fd)
                assert os.stat(".", dir_fd=fd, follow_symlinks=False)
                assert os.lstat(".", dir_fd=fd)
            finally:
                os.close(fd)
            with pytest.raises(FileNotFoundError):
                os.stat("missing")
            assert os.stat.__name__ == "stat" and os.path.isfile.__name__ == "isfile"
            assert os.stat in os.supports_dir_fd and os.stat in os.supports_follow_symlinks
    """)
    result, tests, _ = recorded(attempt)
    assert result.ret == 0, result.outlines
    rec = tests["test_probe.py::test_probe"]
    assert "missing" in rec["probe"] and "relative" not in rec["probe"], rec
    assert (p.path / "unwrapped").read_text() == "True"


def test_deps_a_process_makes_the_record_incomplete(attempt):
    p = attempt.pytester
    write(p, "conftest.py", """
        import subprocess

        subprocess.run(["true"])
    """)
    write(p, "test_proc.py", """
        import os
        import subprocess


        def test_popen():
            subprocess.run(["echo", "hello"], stdout=subprocess.DEVNULL)


        def test_system():
            os.system("true")


        def test_none():
            pass
    """)
    result, tests, session = recorded(attempt)
    assert result.ret == 0
    assert tests["test_proc.py::test_popen"]["why"] == (
        "started a process (subprocess.Popen: echo hello)")
    assert tests["test_proc.py::test_system"]["why"] == "started a process (os.system: true)"
    assert tests["test_proc.py::test_none"]["why"] is None
    # At collection: the session's.
    assert session["why"] == "started a process (subprocess.Popen: true)"


def test_deps_threads_are_traced_and_a_busy_one_is_no_failure(attempt):
    """A thread a test starts runs code the test needs; a session thread
    calling functions between tests (the stack is never empty) raises
    nothing (an IndexError there was a test failure's red)."""
    p = attempt.pytester
    write(p, "worker.py", """
        import time


        def work():
            return 5


        def spin(stop):
            while not stop.is_set():
                work()
                time.sleep(0.001)
    """)
    write(p, "conftest.py", """
        import threading

        import pytest

        import worker


        @pytest.fixture(scope="session", autouse=True)
        def background():
            stop = threading.Event()
            t = threading.Thread(target=worker.spin, args=(stop,), daemon=True)
            t.start()
            yield
            stop.set()
            t.join()
    """)
    write(p, "test_threads.py", """
        import threading
        import time

        import pytest


        def helper():
            return 1


        def test_thread():
            t = threading.Thread(target=helper)
            t.start()
            t.join()


        @pytest.mark.parametrize("i", range(20))
        def test_many(i):
            time.sleep(0.01)
    """)
    result, tests, session = recorded(
        attempt, "-W", "error::pytest.PytestUnhandledThreadExceptionWarning")
    out = "\n".join(result.outlines + result.errlines)
    assert result.ret == 0 and "Error" not in out and "Exception in thread" not in out, out
    assert len(tests) == 21
    helper = at(p, "test_threads.py", "def helper")
    assert helper in tests["test_threads.py::test_thread"]["code"]
    assert helper not in tests["test_threads.py::test_many[0]"]["code"]
    assert at(p, "worker.py", "def work") in tests["test_threads.py::test_many[19]"]["code"]
    assert all(rec["why"] is None for rec in tests.values())
    assert session["why"] is None


def test_deps_an_untraced_thread_makes_the_record_incomplete(attempt):
    """A thread started without threading (no threading.settrace) runs code
    the tracer does not see (before 3.12; sys.monitoring sees all)."""
    p = attempt.pytester
    write(p, "test_raw.py", """
        import _thread
        import sys
        import time

        STATE = {}


        def loop():
            STATE["ident"] = _thread.get_ident()
            while "stop" not in STATE:
                time.sleep(0.005)


        def wait(cond):
            end = time.monotonic() + 60
            while not cond():
                assert time.monotonic() < end, "the raw thread did not move"
                time.sleep(0.005)


        def test_raw():
            # Runs until the thread does: a loaded machine may start it late.
            _thread.start_new_thread(loop, ())
            wait(lambda: "ident" in STATE)


        def test_stops():
            # Returns once the thread has no frame left: the next test's
            # check must not see it.
            STATE["stop"] = True
            wait(lambda: STATE["ident"] not in sys._current_frames())


        def test_later():
            pass
    """)
    result, tests, _ = recorded(attempt)
    assert result.ret == 0
    why = None if MONITORING else "a thread the recorder could not trace was running"
    assert tests["test_raw.py::test_raw"]["why"] == why
    assert tests["test_raw.py::test_later"]["why"] is None


def test_deps_the_import_system_reads_no_file_of_the_test(attempt):
    """importlib's read of a module's source makes it a module of the test
    (mods), not a file it read; a data file read through a loader is one."""
    p = attempt.pytester
    write(p, "pkgdata/__init__.py", "")
    write(p, "pkgdata/mod.py", "X = 1\n")
    write(p, "pkgdata/table.csv", "a,b\n")
    write(p, "test_imp.py", """
        import importlib
        import pkgutil


        def test_imp():
            assert importlib.import_module("pkgdata.mod").X == 1
            assert pkgutil.get_data("pkgdata", "table.csv") == b"a,b\\n"
    """)
    result, tests, _ = recorded(attempt)
    assert result.ret == 0
    rec = tests["test_imp.py::test_imp"]
    assert {"pkgdata/__init__.py", "pkgdata/mod.py"} <= set(rec["mods"]), rec
    assert rec["read"] == ["pkgdata/table.csv"], rec


def test_deps_a_read_outside_the_project_makes_the_record_incomplete(attempt, monkeypatch):
    p = attempt.pytester
    # The temporary folder is allowed: here it is not the one that holds
    # the project's folder.
    (p.path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(p.path / "tmp"))
    outside = p.path.parent / ("outside-%s.txt" % p.path.name)
    outside.write_text("o\n")
    mine = p.path.parent / ("mine-%s.txt" % p.path.name)
    write(p, "test_out.py", """
        import os


        def test_outside():
            open(%r).read()


        def test_wrote_it():
            with open(%r, "w") as f:
                f.write("x")
            open(%r).read()


        def test_the_interpreters():
            open(os.__file__).read()
    """ % (str(outside), str(mine), str(mine)))
    result, tests, _ = recorded(attempt)
    assert result.ret == 0
    assert tests["test_out.py::test_outside"]["why"] == "read %s outside the project" % outside
    assert tests["test_out.py::test_wrote_it"]["why"] is None
    assert tests["test_out.py::test_wrote_it"]["wrote"] == []
    assert tests["test_out.py::test_the_interpreters"]["why"] is None


def test_deps_a_replaced_tracer_makes_the_record_incomplete(attempt):
    p = attempt.pytester
    write(p, "helper.py", """
        def f():
            return 1
    """)
    write(p, "test_tracer.py", """
        import sys


        def test_replaces():
            sys.settrace(None)


        def test_next():
            import helper
            assert helper.f() == 1
    """)
    result, tests, _ = recorded(attempt)
    assert result.ret == 0
    why = None if MONITORING else "the tracer was replaced during the test"
    assert tests["test_tracer.py::test_replaces"]["why"] == why
    # Put back for the next test.
    rec = tests["test_tracer.py::test_next"]
    assert rec["why"] is None and at(p, "helper.py", "def f") in rec["code"]


def test_deps_a_tracer_already_on_records_nothing(attempt, monkeypatch):
    p = attempt.pytester
    write(p, "site/sitecustomize.py", """
        import sys

        sys.settrace(lambda frame, event, arg: None)
    """)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        filter(None, [str(p.path / "site"), os.environ.get("PYTHONPATH")])))
    write(p, "test_a.py", "def test_a():\n    pass\n")
    result = attempt.run(deps="record")
    assert result.ret == 0
    lines = records(attempt.results / "deps.jsonl")
    if MONITORING:
        assert lines[-1]["session"] is True
    else:
        assert lines == [{"off": "a tracer (a debugger, coverage) is already on"}]


def test_deps_a_wider_fixture_counts_for_each_test_that_uses_it(attempt):
    p = attempt.pytester
    write(p, "data.py", """
        def load():
            return [1, 2, 3]
    """)
    write(p, "conftest.py", """
        import pytest

        import data


        @pytest.fixture(scope="session")
        def table():
            return data.load()
    """)
    write(p, "test_fx.py", """
        def test_1(table):
            assert table


        def test_2(table):
            assert table


        def test_3(request):
            assert request.getfixturevalue("table")


        def test_4():
            pass
    """)
    result, tests, _ = recorded(attempt)
    assert result.ret == 0
    load = at(p, "data.py", "def load")
    for n in (1, 2, 3):
        assert load in tests["test_fx.py::test_%d" % n]["code"], n
    assert load not in tests["test_fx.py::test_4"]["code"]
    assert "data.py" not in tests["test_fx.py::test_4"]["mods"]


def test_deps_a_project_module_imported_before_recording_is_the_sessions_why(attempt, monkeypatch):
    """Its import was not seen (sitecustomize, a .pth file): the session's
    record is incomplete."""
    p = attempt.pytester
    write(p, "site/sitecustomize.py", "import early\n")
    write(p, "early.py", "X = 1\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        filter(None, [str(p.path / "site"), str(p.path), os.environ.get("PYTHONPATH")])))
    write(p, "test_a.py", "def test_a():\n    pass\n")
    result, tests, session = recorded(attempt)
    assert result.ret == 0
    assert session["why"] == "early.py was imported before the recorder started"
    assert tests["test_a.py::test_a"]["why"] is None


def _package(root, files):
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return str(root)


def test_same_sources_compares_code_extensions_and_shared_data(tmp_path):
    tree = {"pkg/__init__.py": b"x = 1\n", "pkg/_fast.so": b"\x7fELF-1", "pkg/table.txt": b"a"}
    mine = _package(tmp_path / "tree", tree)
    # An identical installed copy is the tree.
    assert tpuci_plugin.same_sources(mine + "/pkg", _package(tmp_path / "same", tree) + "/pkg")
    # A stale extension module with the same .py files is not.
    stale = dict(tree, **{"pkg/_fast.so": b"\x7fELF-0"})
    assert not tpuci_plugin.same_sources(mine + "/pkg", _package(tmp_path / "so", stale) + "/pkg")
    # Nor is a missing one.
    gone = {k: v for k, v in tree.items() if not k.endswith(".so")}
    assert not tpuci_plugin.same_sources(mine + "/pkg", _package(tmp_path / "noso", gone) + "/pkg")
    # Package data the copy also has must match; data it lacks is no
    # difference (not installed: a test that reads it fails by itself).
    data = dict(tree, **{"pkg/table.txt": b"b"})
    assert not tpuci_plugin.same_sources(mine + "/pkg", _package(tmp_path / "data", data) + "/pkg")
    nodata = {k: v for k, v in tree.items() if not k.endswith(".txt")}
    assert tpuci_plugin.same_sources(mine + "/pkg", _package(tmp_path / "nodata", nodata) + "/pkg")
    # Byte caches are never compared.
    (tmp_path / "tree" / "pkg" / "__init__.cpython-311.pyc").write_bytes(b"junk")
    assert tpuci_plugin.same_sources(mine + "/pkg", tmp_path.as_posix() + "/same/pkg")
