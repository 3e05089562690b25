"""Rows from a file, normalised."""
from mylib import ops


def load_rows(path):
    with open(path) as f:
        return [[float(v) for v in line.split(",")] for line in f if line.strip()]


def normalize(rows):
    return [[ops.scale(v) for v in row] for row in rows]


def column(rows, k):
    return [row[k] for row in rows]
