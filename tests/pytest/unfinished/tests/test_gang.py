# Run on every host of a 2-host gang; test_g_b hangs on worker-1 only, on
# attempt 1.
import os
import time


def test_g_a():
    pass


def test_g_b():
    if os.environ.get("TPU_WORKER_ID") == "1" and os.environ.get("TPUCI_ATTEMPT") == "1":
        time.sleep(300)


def test_g_c():
    pass
