from mylib import metrics


def test_mean():
    assert metrics.mean([1, 2, 3]) == 2


def test_accuracy():
    assert metrics.accuracy([1, 0, 1], [1, 1, 1]) == 2 / 3
