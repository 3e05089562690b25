from mylib import data


def test_load(rows):
    assert rows == [[1.0, 2.0], [3.0, 4.0]]


def test_normalize(rows):
    assert data.normalize(rows)[0] == [2.0, 4.0]


def test_column():
    assert data.column([[1, 2], [3, 4]], 1) == [2, 4]
