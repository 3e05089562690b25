#!/usr/bin/env python3
"""The syntax check of the Python files tpuci builds in (CMakeLists.txt's
tpuci_embedded_py: core/kind/pytest/plugin/*.py).

    check_syntax.py FILE...          checks each FILE, prints each problem
    check_syntax.py --self-test      fails unless planted problems are caught

Each file must byte-compile (py_compile), parse as Python 3.5 (they run
in users' containers, on whatever Python is there: no f-strings, no
variable annotations, no `:=`) and, when pyflakes is installed (Debian's
python3-pyflakes; tests/deps.sh), pass it: an undefined name is found
here, not in a user's pytest run. Exit 1 when there is a problem.
"""
import ast
import importlib.util
import os
import py_compile
import subprocess
import sys
import tempfile

# The oldest Python whose syntax the files keep to.
OLDEST = (3, 5)


def have_pyflakes():
    return importlib.util.find_spec("pyflakes") is not None


def problems(paths, tmp):
    """What is wrong with the files at `paths`, one line each."""
    out = []
    for path in paths:
        try:
            py_compile.compile(path, cfile=os.path.join(tmp, "compiled.pyc"), doraise=True)
        except py_compile.PyCompileError as e:
            out.append("%s: does not compile: %s" % (path, e.msg.strip()))
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            ast.parse(text, path, feature_version=OLDEST)
        except SyntaxError as e:
            out.append("%s:%s: not Python %d.%d: %s" % (path, e.lineno, OLDEST[0], OLDEST[1],
                                                          e.msg))
    if have_pyflakes():
        p = subprocess.run([sys.executable, "-m", "pyflakes"] + list(paths),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        out += ["pyflakes: " + line for line in p.stdout.splitlines()]
    return out


def self_test(tmp):
    """Plants a file with each problem; each must be reported."""
    planted = {
        "broken.py": ("def f(:\n    pass\n", "does not compile"),
        "new.py": ("x = 1\nprint(f'{x}')\n", "not Python 3.5"),
    }
    if have_pyflakes():
        planted["typo.py"] = ("import os\nprint(os.getcwdd, sys.argv)\n", "undefined name 'sys'")
    else:
        print("note: no pyflakes here (python3-pyflakes): that part is not checked")
    failed = 0
    for name, (text, want) in sorted(planted.items()):
        path = os.path.join(tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        got = problems([path], tmp)
        if not any(want in line for line in got):
            print("self-test: %s: no %r among %r" % (name, want, got))
            failed = 1
    return failed


def main(argv):
    with tempfile.TemporaryDirectory() as tmp:
        if argv[1:] == ["--self-test"]:
            return self_test(tmp)
        if len(argv) < 2:
            print(__doc__)
            return 2
        if not have_pyflakes():
            print("note: no pyflakes here (python3-pyflakes): only compiled and parsed")
        found = problems(argv[1:], tmp)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
