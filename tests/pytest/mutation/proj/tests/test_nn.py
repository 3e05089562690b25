from mylib import nn


def test_relu():
    assert nn.relu(-1) == 0 and nn.relu(2) == 2


def test_linear(model):
    assert model(2) == 7


def test_params(model):
    assert model.params() == [3, 1]


def test_fresh_layer():
    assert nn.Linear(1, 0)(5) == 5
