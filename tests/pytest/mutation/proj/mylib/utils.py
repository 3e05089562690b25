"""Helpers of their own."""


def chunk(xs, n):
    return [xs[i:i + n] for i in range(0, len(xs), n)]


def flatten(xss):
    return [x for xs in xss for x in xs]
