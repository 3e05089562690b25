# A gang's host 0 starts its tests only once host 1's pytest has ended,
# then 2 s more, so tpuci sees host 1's exit while host 0 still runs (its
# tests must still run to their end). GANG_SYNC names a folder both hosts
# share; without it, nothing is held. (tests/pytest/gang.sh, tests/ssh/gang.sh)
import os
import time

SYNC = os.environ.get("GANG_SYNC")


def pytest_configure(config):
    if SYNC and os.environ.get("TPUCI_HOST") == "0":
        done = os.path.join(SYNC, "host1-done")
        for _ in range(600):
            if os.path.exists(done):
                break
            time.sleep(0.1)
        time.sleep(2)


def pytest_unconfigure(config):
    # After pytest's summary line: host 1 has said all it will say.
    if SYNC and os.environ.get("TPUCI_HOST") == "1":
        open(os.path.join(SYNC, "host1-done"), "w").close()
