from mylib.consts import EPS, FACTOR


def test_factor():
    assert FACTOR == 2


def test_eps():
    assert 0 < EPS < 1e-3
