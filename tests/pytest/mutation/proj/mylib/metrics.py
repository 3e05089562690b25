"""Metrics over lists."""
from mylib import ops


def mean(xs):
    total = 0
    for x in xs:
        total = ops.add(total, x)
    return total / len(xs)


def accuracy(pred, gold):
    return sum(1 for p, g in zip(pred, gold) if p == g) / len(gold)
