import os


def test_ok():
    assert os.environ["TPUCI_HOSTS"] == "2"


def test_fails():
    assert os.environ.get("NOPE") == "yes"


def test_host():
    assert os.environ["TPUCI_HOST"] in ("0", "1")
