"""A suite with every outcome tpuci must report exactly."""
import os
import time

import pytest


def test_passes():
    assert 1 + 1 == 2


def test_fails():
    assert 2 + 2 == 5, "arithmetic is broken"


@pytest.fixture
def broken_fixture():
    raise RuntimeError("fixture exploded")


def test_fixture_error(broken_fixture):
    pass


def test_skipped():
    pytest.skip("not on this platform")


@pytest.mark.xfail(reason="known bug")
def test_expected_failure():
    assert False


@pytest.mark.tpu
def test_tpu_marked():
    assert os.environ.get("PYTHONDONTWRITEBYTECODE") == "1"


@pytest.mark.slow
def test_slow_deselected_by_markers():
    time.sleep(0.1)


def test_flaky_first_attempt():
    """Fails on the first attempt only: a marker file in a writable folder."""
    marker = os.path.join(os.environ["FLAKY_DIR"], "flaky-marker")
    if not os.path.exists(marker):
        open(marker, "w").close()
        assert False, "first attempt fails"


@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n in (1, 2)
