# tests/pytest/rerun.sh: a test that fails every time, one that hangs on
# the first attempt only, and one after it.
import os
import time


def test_a_fails():
    assert False, "always broken"


def test_b_hangs_once():
    if os.environ.get("TPUCI_ATTEMPT") == "1":
        time.sleep(120)


def test_c_after():
    pass
