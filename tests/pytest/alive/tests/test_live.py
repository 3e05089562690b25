# tests/pytest/alive.sh: a test long enough for a few alive lines and
# board redraws while it runs (on every host of a gang).
import time


def test_quick():
    pass


def test_slow():
    time.sleep(4)
