#!/usr/bin/env python3
"""Writes the synthetic suite of bench/pytest/xdist.sh into DIR/tests:
the shape of a real ML library's suite (issue 23.4): MODULES modules that
each import torch at module level and do a little tensor work in every
test, TESTS tests in all (plain functions, parametrized ones and test
classes), mixed durations (most a few tens of milliseconds, a few of
seconds) and FAILING tests that always fail. Durations are a sleep on
top of the tensor work, so the suite's test time is about the same on a
busy machine and a quiet one; SCALE multiplies them. Deterministic: the
same arguments write the same files.

usage: torch_suite.py DIR [--tests 1100] [--modules 36] [--failing 8]
                          [--scale 1.0]"""
import argparse
import os
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--tests", type=int, default=1100)
    ap.add_argument("--modules", type=int, default=36)
    ap.add_argument("--failing", type=int, default=8)
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    rnd = random.Random(23)
    tests = os.path.join(a.dir, "tests")
    os.makedirs(tests, exist_ok=True)
    with open(os.path.join(tests, "conftest.py"), "w") as f:
        f.write("import pytest\nimport torch\n\n\n"
                "@pytest.fixture(scope='session')\n"
                "def base():\n    return torch.arange(64, dtype=torch.float32)\n")
    # Durations: most tests short, a few long (as a real suite's
    # integration tests), one module much longer than the others.
    durs = [round(rnd.uniform(0.005, 0.06), 3) for _ in range(a.tests)]
    for i in rnd.sample(range(a.tests), 12):
        durs[i] = round(rnd.uniform(0.8, 3.0), 2)
    fails = set(rnd.sample(range(a.tests), a.failing))
    per = [a.tests // a.modules + (1 if m < a.tests % a.modules else 0)
           for m in range(a.modules)]
    at = 0
    for m in range(a.modules):
        n = per[m]
        d = [round(x * a.scale, 4) for x in durs[at:at + n]]
        bad = sorted(i - at for i in fails if at <= i < at + n)
        at += n
        third = n // 3
        with open(os.path.join(tests, "test_mod%02d.py" % m), "w") as f:
            f.write("import time\n\nimport pytest\nimport torch\n\n")
            f.write("D = %r\nFAIL = %r\n\n\n" % (d, bad))
            f.write("def work(i, base):\n"
                    "    x = torch.rand(32, 32) @ torch.rand(32, 32)\n"
                    "    y = (x.sum() + base[:8].sum()).item()\n"
                    "    time.sleep(D[i])\n"
                    "    assert i not in FAIL, 'case %d of this module always fails' % i\n"
                    "    return y\n\n\n")
            # A third plain functions, a third parametrized, a third in a class.
            for i in range(third):
                f.write("def test_plain_%d(base):\n    work(%d, base)\n\n\n" % (i, i))
            f.write("@pytest.mark.parametrize('i', range(%d, %d))\n"
                    "def test_param(i, base):\n    work(i, base)\n\n\n" % (third, 2 * third))
            f.write("class TestOps:\n")
            for i in range(2 * third, n):
                f.write("    def test_op_%d(self, base):\n        work(%d, base)\n\n" % (i, i))


if __name__ == "__main__":
    main()
