# Order-dependent on purpose, as real suites are: test_1 leaves a global
# that the next tests of the file read.
state = {}


def test_1():
    state["ready"] = True


def test_2():
    assert state.get("ready"), "test_1 did not run before me in this process"


def test_3():
    assert state.get("ready"), "test_1 did not run before me in this process"
