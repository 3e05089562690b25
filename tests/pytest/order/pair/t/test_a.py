# issue 31's minimal pair: the victim passes when it runs first (pytest's
# order: test_a before test_z), fails after the polluter.
from t import state


def test_victim():
    assert state.value == "clean", "the polluter ran before me"
