def test_1():
    pass


def test_2():
    pass


def test_3():
    pass
