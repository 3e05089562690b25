from t import state


def test_other():
    pass


def test_victim():
    assert state.value == "clean", "the polluter ran before me"
