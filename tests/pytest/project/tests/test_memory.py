import pytest


@pytest.mark.memory
def test_allocates_past_the_limit():
    """Run only under a memory limit (the oom job): 1 GiB, touched."""
    blocks = []
    for _ in range(64):
        blocks.append(bytearray(16 * 1024 * 1024))
    assert len(blocks) == 64
