# Fails in the runs whose HISTORY_RUN is odd (1, 3, 5: fpfpf).
import os

import pytest


def test_flip():
    assert int(os.environ["HISTORY_RUN"]) % 2 == 0, "fails on odd runs"


@pytest.mark.parametrize("n", range(3))
def test_other(n):
    pass
