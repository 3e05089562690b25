# tests/pytest/first.sh: forty tests that pass and one at the end that
# fails, for failing first.
import pytest


@pytest.mark.parametrize("n", range(40))
def test_pass(n):
    pass


def test_zz_fails_at_the_end():
    assert False, "still broken"
