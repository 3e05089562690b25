import os
import time


def pytest_configure(config):
    # Host 0 starts late: host 1's pytest has ended (a test failed) by
    # the time host 0 collects. Its tests must still run to their end.
    if os.environ.get("TPUCI_HOST") == "0":
        time.sleep(float(os.environ.get("GANG_HOST0_DELAY", "4")))
