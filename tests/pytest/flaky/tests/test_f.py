# tests/pytest/flaky_history.sh: run N (the file RUN_FILE counts the runs)
# decides test_flip; test_broken always fails, test_ok always passes.
import os


def run_number():
    return int(open(os.environ["RUN_FILE"]).read())


def test_ok():
    pass


def test_flip():
    assert run_number() % 2 == 1, "fails on even runs"


def test_broken():
    assert False, "always broken"
