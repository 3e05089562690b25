# A brittle test: it passes only after the test that sets up what it
# needs (pytest's order), and fails alone (the failing-first process).
import os

from t import state


def test_setter():
    state.value = "ready"


def test_needs():
    assert not os.path.exists(os.environ["ORDER_FAIL_ONCE"]), "made to fail in the first run"
    assert state.value == "ready", "nothing set me up"
