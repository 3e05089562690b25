"""Uneven durations for shard balancing: a few long tests, many short."""
import time

import pytest

DURATIONS = [0.6, 0.5, 0.4] + [0.05] * 12


@pytest.mark.shard
@pytest.mark.parametrize("i", range(len(DURATIONS)))
def test_work(i):
    time.sleep(DURATIONS[i])
