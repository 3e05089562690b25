"""Arithmetic the other modules build on."""
from mylib import consts


def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def scale(x):
    return mul(x, consts.FACTOR)


def close(a, b):
    return abs(a - b) < consts.EPS
