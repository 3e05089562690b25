"""Tests of tests/junit/identity.sh: failures whose traceback ends in a
helper (the failing line is not the test's def line), exceptions of
several classes, and a test that passes."""
import os


class Oops(Exception):
    pass


def helper(x):
    assert x == 1, "x was %r" % x


def test_ok():
    pass


def test_edge():
    helper(2)


def test_oops():
    raise Oops("instance " + os.environ.get("TPUCI_INSTANCE", "?"))


class TestK:
    def test_err(self):
        raise ValueError("bad value")
