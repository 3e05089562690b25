import os
import time


def _sync():
    return os.environ["GANG_SYNC"]


def pytest_configure(config):
    # Host 0 starts its tests only once host 1's pytest has ended (a test
    # failed), then 2 s more, so tpuci sees host 1's exit while host 0 is
    # still running. Its tests must still run to their end.
    if os.environ.get("TPUCI_HOST") == "0":
        done = os.path.join(_sync(), "host1-done")
        for _ in range(600):
            if os.path.exists(done):
                break
            time.sleep(0.1)
        time.sleep(2)


def pytest_unconfigure(config):
    # After pytest's summary line: host 1 has said all it will say.
    if os.environ.get("TPUCI_HOST") == "1":
        open(os.path.join(_sync(), "host1-done"), "w").close()
