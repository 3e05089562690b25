# tests/pytest/quarantine.sh: MODE (a string of letters) decides which
# tests pass: "q" test_quar, "e" test_expired; test_ok always passes.
import os


def test_ok():
    pass


def test_quar():
    assert "q" in os.environ.get("MODE", ""), "quarantined and failing"


def test_expired():
    assert "e" in os.environ.get("MODE", ""), "its quarantine expired"
