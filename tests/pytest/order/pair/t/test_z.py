from t import state


def test_polluter():
    state.value = "dirty"
    assert False, "the polluter fails"
