import os
import time

import pytest


@pytest.mark.hang
def test_finishes_first():
    pass


@pytest.mark.hang
def test_sleeps_past_timeout():
    time.sleep(float(os.environ.get("SLEEP", "600")))
