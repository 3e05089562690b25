from mylib import ops


def test_add():
    assert ops.add(2, 3) == 5


def test_mul():
    assert ops.mul(2, 3) == 6


def test_scale():
    assert ops.scale(4) == 8


def test_close():
    assert ops.close(1.0, 1.0 + 1e-9)
