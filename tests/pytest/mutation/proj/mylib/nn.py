"""A layer built on ops."""
from mylib import ops


def relu(x):
    return x if x > 0 else 0


class Linear:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def __call__(self, x):
        return ops.add(ops.mul(self.w, x), self.b)

    def params(self):
        return [self.w, self.b]
