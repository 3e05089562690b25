import os


def test_ok():
    assert os.environ["TPUCI_HOSTS"] == "2"


def test_fails():
    assert os.environ.get("NOPE") == "yes"


def test_host():
    assert os.environ["TPUCI_HOST"] in ("0", "1")


def test_not_on_host1():
    # Fails on host 1 only: host 0's report (the gang's) has it passed,
    # and the attempt's cause names it.
    assert os.environ["TPUCI_HOST"] != "1"
