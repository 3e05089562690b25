"""The device check (check_devices(), DEVICES): with the stand-in jax and
torch_xla of standin/ on PYTHONPATH, a framework
that does not see the topology's devices ends the process before any
test, with devices.json and the numbers; one that does runs the tests.
A command job's attempt (tpuci_command.py) checks the same way before
its command, which runs only after a match."""
import json
import os
import signal
import sys

import pytest

import tpuci_devices
from conftest import source

STANDIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "standin")


@pytest.fixture
def standin(monkeypatch):
    monkeypatch.syspath_prepend(STANDIN)
    monkeypatch.setenv("PYTHONPATH", STANDIN)
    for k in ("STANDIN_JAX_DEVICES", "STANDIN_JAX_PLATFORM", "STANDIN_XLA_DEVICES",
              "JAX_PLATFORMS", "JAX_NUM_CPU_DEVICES", "CPU_NUM_DEVICES", "PJRT_DEVICE",
              "TPUCI_CHIP", "STANDIN_JAX_FAILS"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("TPUCI_HOST", "1")
    # A TPU VM's device nodes, for the checks made in this process.
    monkeypatch.setattr(tpuci_devices, "tpu_nodes", lambda: True)

    def setenv(values):
        for k, v in values.items():
            monkeypatch.setenv(k, v)
    return setenv


def test_the_numbers(standin):
    standin({"TPUCI_HOST": "0", "STANDIN_JAX_DEVICES": "8", "STANDIN_JAX_PLATFORM": "cpu"})
    lines, seen, bad = tpuci_devices.check_devices("jax?,torch_xla? tpu 4 4")
    assert bad == "jax sees 8 cpu devices, expected 4 TPU chips on worker-0"
    assert seen == {"jax": [8, "cpu"]}


def test_devices_and_chips_differ(standin):
    standin({"STANDIN_JAX_DEVICES": "4"})
    _, _, bad = tpuci_devices.check_devices("jax tpu 8 4")
    assert bad == "jax sees 4 tpu devices, expected 8 TPU devices (4 chips) on worker-1"


def test_both_asked_both_right(standin):
    standin({"STANDIN_JAX_DEVICES": "4", "STANDIN_XLA_DEVICES": "4"})
    lines, seen, bad = tpuci_devices.check_devices("jax?,torch_xla? tpu 4 4")
    assert bad is None
    assert seen == {"jax": [4, "tpu"], "torch_xla": [4, "tpu"]}
    assert lines[1] == "tpuci: device check: torch_xla sees 4 tpu devices on worker-1, as expected"


def test_torch_xla_emulated_per_chip(standin):
    standin({"CPU_NUM_DEVICES": "2", "PJRT_DEVICE": "CPU", "TPUCI_CHIP": "3"})
    _, _, bad = tpuci_devices.check_devices("torch_xla? cpu 1 1")
    assert bad == ("torch_xla sees 2 cpu devices, expected 1 cpu device (emulated) "
                   "on worker-1 (chip 3)")


def test_real_hardware_needs_its_device_nodes(standin, monkeypatch):
    """On real hardware (platform tpu) no /dev/accel* and no /dev/vfio/N is
    the mismatch, before any framework is asked (issue 42.4)."""
    standin({"TPUCI_HOST": "0", "STANDIN_JAX_DEVICES": "4"})
    monkeypatch.setattr(tpuci_devices, "tpu_nodes", lambda: False)
    _, seen, bad = tpuci_devices.check_devices("jax?,torch_xla? tpu 4 4")
    assert bad == ("no TPU device node (/dev/accel*, /dev/vfio/<group>) on worker-0, "
                   "expected 4 TPU chips: this is not a TPU VM, or its TPU is not passed "
                   "to the container (tpuci doctor --real)")
    assert seen == {}
    # Emulated: no device node is wanted.
    standin({"JAX_NUM_CPU_DEVICES": "4", "JAX_PLATFORMS": "cpu"})
    _, _, bad = tpuci_devices.check_devices("jax? cpu 4 4")
    assert bad is None


def test_named_one_must_import(monkeypatch):
    monkeypatch.setattr(tpuci_devices, "importable", lambda name: False)
    monkeypatch.setattr(tpuci_devices, "tpu_nodes", lambda: True)
    _, _, bad = tpuci_devices.check_devices("jax cpu 4 4", {"TPUCI_HOST": "0"})
    assert bad == "jax does not import, expected 4 cpu devices (emulated) on worker-0"
    lines, _, bad = tpuci_devices.check_devices("jax?,torch_xla? tpu 4 4", {})
    assert bad is None
    assert lines == ["tpuci: device check: neither jax nor torch_xla imports here: "
                     "nothing to check"]


def test_a_mismatch_runs_no_test(attempt, standin):
    attempt.pytester.makepyfile(test_a="def test_a():\n    pass\n")
    standin({"STANDIN_JAX_DEVICES": "8", "JAX_PLATFORMS": "cpu"})
    result = attempt.run(devices="jax? cpu 4 4")
    assert result.ret == tpuci_devices.DEVICES_EXIT
    said = json.loads((attempt.results / "devices.json").read_text())
    assert said["mismatch"] == "jax sees 8 cpu devices, expected 4 cpu devices (emulated) on worker-1"
    assert not attempt.junit.exists()
    assert not [r for r in attempt.records() if "start" in r]


def test_a_match_runs_the_tests(attempt, standin):
    attempt.pytester.makepyfile(test_a="def test_a():\n    pass\n")
    standin({"JAX_NUM_CPU_DEVICES": "4", "JAX_PLATFORMS": "cpu"})
    result = attempt.run(devices="jax? cpu 4 4")
    assert result.ret == 0
    assert json.loads((attempt.results / "devices.json").read_text())["mismatch"] is None
    assert [r["start"] for r in attempt.records() if "start" in r] == ["test_a.py::test_a"]


# A command job's attempt (core/kind/devices.c): the check in a child
# process, then the command, which this process becomes.


def command_run(pytester, devices, *command):
    """PYTHON -c <tpuci_devices.py><tpuci_command.py> DEVICES RESULTS
    COMMAND..., as tpuci runs it; pytester's RunResult and the results
    folder."""
    results = pytester.path / "results"
    results.mkdir(exist_ok=True)
    code = source("tpuci_devices.py") + source("tpuci_command.py")
    return pytester.run(sys.executable, "-c", code, devices, str(results), *command,
                        timeout=120), results


def test_command_runs_after_a_match(pytester, standin):
    standin({"JAX_NUM_CPU_DEVICES": "4", "JAX_PLATFORMS": "cpu"})
    result, results = command_run(pytester, "jax cpu 4 4", "sh", "-c", "echo ran; exit 3")
    assert result.ret == 3
    assert result.outlines == [
        "tpuci: device check: jax sees 4 cpu devices on worker-1, as expected", "ran"]
    assert json.loads((results / "devices.json").read_text())["mismatch"] is None


def test_command_becomes_the_process(pytester, standin):
    """exec: the command's signal is the attempt's, and it does not
    inherit the SIGPIPE and SIGXFSZ Python ignores."""
    standin({"JAX_NUM_CPU_DEVICES": "4", "JAX_PLATFORMS": "cpu"})
    result, _ = command_run(pytester, "jax? cpu 4 4", "grep", "SigIgn", "/proc/self/status")
    assert result.ret == 0
    ignored = int(result.outlines[-1].split()[1], 16)
    assert ignored & (1 << (signal.SIGPIPE - 1)) == 0
    assert ignored & (1 << (signal.SIGXFSZ - 1)) == 0
    result, _ = command_run(pytester, "jax? cpu 4 4", "sh", "-c", "kill -TERM $$")
    assert result.ret == -signal.SIGTERM


def test_command_does_not_run_after_a_mismatch(pytester, standin):
    standin({"STANDIN_JAX_DEVICES": "8", "JAX_PLATFORMS": "cpu", "TPUCI_HOST": "0"})
    result, results = command_run(pytester, "jax cpu 4 4", "touch", "marker")
    assert result.ret == tpuci_devices.DEVICES_EXIT
    want = "jax sees 8 cpu devices, expected 4 cpu devices (emulated) on worker-0"
    assert json.loads((results / "devices.json").read_text())["mismatch"] == want
    assert result.outlines == ["tpuci: device check: %s: the command does not run" % want]
    assert not (pytester.path / "marker").exists()


def test_command_named_framework_must_import(pytester, standin, monkeypatch):
    monkeypatch.delenv("PYTHONPATH")
    result, results = command_run(pytester, "torch_xla cpu 4 4", "touch", "marker")
    assert result.ret == tpuci_devices.DEVICES_EXIT
    assert json.loads((results / "devices.json").read_text())["mismatch"] == (
        "torch_xla does not import, expected 4 cpu devices (emulated) on worker-1")
    assert not (pytester.path / "marker").exists()


def test_command_runs_when_nothing_imports(pytester, standin, monkeypatch):
    monkeypatch.delenv("PYTHONPATH")
    result, _ = command_run(pytester, "jax?,torch_xla? cpu 4 4", "touch", "marker")
    assert result.ret == 0
    assert result.outlines == [
        "tpuci: device check: neither jax nor torch_xla imports here: nothing to check"]
    assert (pytester.path / "marker").exists()


def test_command_check_that_crashes(pytester, standin):
    """A framework that kills the process listing its devices: the check
    could not tell, and the command does not run."""
    standin({"STANDIN_JAX_CRASH": "1"})
    result, results = command_run(pytester, "jax cpu 4 4", "touch", "marker")
    assert result.ret == tpuci_devices.DEVICES_EXIT
    assert json.loads((results / "devices.json").read_text())["mismatch"] == (
        "the check was killed by signal %d on worker-1" % signal.SIGSEGV)
    assert not (pytester.path / "marker").exists()


def test_command_not_found(pytester, standin):
    standin({"JAX_NUM_CPU_DEVICES": "4", "JAX_PLATFORMS": "cpu"})
    result, _ = command_run(pytester, "jax cpu 4 4", "no-such-command-tpuci")
    assert result.ret == 127
    assert "tpuci: cannot run no-such-command-tpuci: No such file or directory" in result.errlines
