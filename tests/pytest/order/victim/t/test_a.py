# A polluter that passes, before its victim in pytest's order: the victim
# fails in its attempt and passes in its retry (alone).
from t import state


def test_polluter():
    state.value = "dirty"


def test_bystander():
    pass
