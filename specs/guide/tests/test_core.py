import pytest

from mylib import global_batch, shard_sizes


@pytest.mark.parametrize("batch,devices,want", [
    (8, 4, [2, 2, 2, 2]),
    (10, 4, [3, 3, 2, 2]),
    (3, 4, [1, 1, 1, 0]),
    (0, 2, [0, 0]),
])
def test_shard_sizes(batch, devices, want):
    assert shard_sizes(batch, devices) == want


def test_no_devices():
    with pytest.raises(ValueError):
        shard_sizes(8, 0)


def test_global_batch():
    assert global_batch(16, 2, 4) == 128


@pytest.mark.slow
@pytest.mark.parametrize("n", range(6))
def test_many_batches(n):
    import time
    time.sleep(0.2 * (n + 1))
    assert sum(shard_sizes(1000 + n, 8)) == 1000 + n
