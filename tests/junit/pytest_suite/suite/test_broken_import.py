import not_a_real_module  # noqa: F401  (a collection error on purpose)


def test_never():
    pass
