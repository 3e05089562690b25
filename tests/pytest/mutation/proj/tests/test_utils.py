from mylib.utils import chunk, flatten


def test_chunk():
    assert chunk([1, 2, 3], 2) == [[1, 2], [3]]


def test_flatten():
    assert flatten([[1], [2, 3]]) == [1, 2, 3]
