# tests/pytest/first.sh: made to fail once (FIRST_FAIL_ONCE, a file);
# then it hangs in the failing-first process only (TPUCI_ATTEMPT=0),
# for at most 120 s, and passes at once in its attempt.
import os
import time


def test_hangs_when_first():
    assert not os.path.exists(os.environ["FIRST_FAIL_ONCE"]), "made to fail once"
    deadline = time.time() + 120
    while os.environ.get("TPUCI_ATTEMPT") == "0" and time.time() < deadline:
        time.sleep(0.05)


def test_other():
    pass
