# tests/pytest/failnow.sh: a test that fails at once, then one that waits
# for FAILNOW_RELEASE (a file) so that its shard is still running when
# the failure is said.
import os
import time


def test_fails_early():
    assert False, "broken from the start"


def test_waits_for_release():
    deadline = time.time() + 120
    while not os.path.exists(os.environ["FAILNOW_RELEASE"]) and time.time() < deadline:
        time.sleep(0.05)
