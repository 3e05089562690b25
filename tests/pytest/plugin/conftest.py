"""Shared by the tests of the Python tpuci builds in (core/kind/pytest/plugin/):
where those files are, and running them as tpuci does.

TPUCI_PLUGIN_DIR names the folder of tpuci_plugin.py (the image run
mounts it); by default it is core/kind/pytest/plugin/ of this checkout.
"""
import json
import os
import sys

import pytest

pytest_plugins = ("pytester",)

PLUGIN_DIR = os.environ.get("TPUCI_PLUGIN_DIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "core", "kind", "pytest", "plugin")
sys.path.insert(0, os.path.abspath(PLUGIN_DIR))


def source(name):
    """The text of core/kind/pytest/plugin/NAME: what tpuci passes with -c."""
    with open(os.path.join(PLUGIN_DIR, name), encoding="utf-8") as f:
        return f.read()


def bootstrap():
    """What tpuci passes with -c for a pytest attempt: the device check,
    then the bootstrap and plugin (core/kind/pytest/pytest_run.c)."""
    return source("tpuci_devices.py") + source("tpuci_plugin.py")


def records(path):
    """progress.jsonl's objects, in order."""
    with open(str(path), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


class Attempt:
    """One pytest attempt in a pytester folder, run as tpuci runs it:
    python -c CODE PROGRESS TIMEOUT_MS ONLY SHARD DEPS DEVICES -p no:cacheprovider
    --junitxml=... -o junit_family=xunit1 ARGS (core/kind/pytest/pytest_run.c),
    with its results folder at results/."""

    def __init__(self, pytester, code=None):
        self.pytester = pytester
        self.code = code if code is not None else bootstrap()
        self.results = pytester.path / "results"
        self.results.mkdir(exist_ok=True)
        self.progress = self.results / "progress.jsonl"
        self.junit = self.results / "junit.xml"

    def argv(self, *args, timeout_ms=0, only=(), shard="", deps="", devices=""):
        return [sys.executable, "-c", self.code, str(self.progress), str(timeout_ms),
                "\n".join(only), shard, deps, devices, "-p", "no:cacheprovider",
                "--junitxml=%s" % self.junit, "-o", "junit_family=xunit1"] + list(args)

    def run(self, *args, **kw):
        """Runs it to its end (at most two minutes); pytester's RunResult."""
        return self.pytester.run(*self.argv(*args, **kw), timeout=120)

    def records(self):
        return records(self.progress)


@pytest.fixture
def attempt(pytester):
    pytester.makeini("[pytest]\n")
    return Attempt(pytester)
