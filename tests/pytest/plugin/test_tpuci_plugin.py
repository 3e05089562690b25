"""tpuci's pytest bootstrap and plugin (core/pytest/plugin/tpuci_plugin.py)
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


def in_process(pytester, *args, limit=0, only=(), part=None):
    """pytest in this process with a TpuciProgress; (result, plugin,
    progress.jsonl's records)."""
    pytester.makeini("[pytest]\n")
    progress = pytester.path / "progress.jsonl"
    plugin = tpuci_plugin.TpuciProgress(str(progress), limit, set(only), part)
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
