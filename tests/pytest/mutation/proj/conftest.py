import pytest

from mylib import data, nn


@pytest.fixture(scope="session")
def model():
    return nn.Linear(3, 1)


@pytest.fixture
def rows():
    return data.load_rows("tests/fixtures/rows.csv")
