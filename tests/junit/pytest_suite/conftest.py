# A small pytest suite whose --junitxml output is a test fixture of
# tpuci's JUnit parser (see ../gen_pytest_fixtures.sh). Some of its tests
# fail on purpose, so it only runs when that script asks for it.
import os

import pytest

if os.environ.get("TPUCI_JUNIT_SAMPLE") != "1":
    collect_ignore_glob = ["*"]


@pytest.fixture
def broken_db():
    raise RuntimeError("database is down")


@pytest.fixture
def bad_teardown():
    yield 1
    raise ValueError("teardown exploded")
