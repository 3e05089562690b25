#!/usr/bin/env python3
"""The miss rate of select = "affected" (issue 35; docs/pytest.md):
mutants of a project, each run twice by tpuci from the same record, with
the selection and with every test, so that no failure the selection left
out goes unseen.

For a project (a folder with a pytest suite and its package): the record
is made once (every test runs and passes). Then for each mutant (a
function of the package with `raise RuntimeError` as its first statement;
a data file a test opens, changed; conftest.py's fixtures made to raise;
a module constant changed), from a copy of the state folder as the record
left it:
  - tpuci run with select = "affected": the tests that ran;
  - tpuci run --no-select in a state folder of its own: the tests that
    fail (the truth);
a miss is a failing test the selection left out. Prints, per project, the
mutants, the misses (must be 0) and the fraction of the tests each
selection ran (median, mean), and exits 1 on a miss.

usage: mutation.py TPUCI PROJECT [PROJECT...]   (each PROJECT a folder,
       copied: with a tests/ folder, a package, optionally a file named
       .pytest-args with pytest's arguments, one a line)
"""
import ast
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

PYTHON = "/usr/bin/python3"


def spec(folder, args):
    with open(os.path.join(folder, "spec.lua"), "w") as f:
        f.write('job "p" { pytest = { python = "%s", args = { %s }, select = "affected" } }\n'
                % (PYTHON, ", ".join('"%s"' % a for a in args)))


def run(tpuci, folder, state, *extra):
    p = subprocess.run([tpuci, "run", "--plain", "--no-cache", "--state-dir", state] +
                       list(extra) + ["spec.lua"], cwd=folder, capture_output=True, text=True)
    path = os.path.join(folder, state, "runs", "latest", "summary.json")
    with open(path) as f:
        s = json.load(f)
    tests = s["instances"][0].get("tests", [])
    ran = {t["id"] for t in tests if t["outcome"] != "unaffected"}
    failed = {t["id"] for t in tests if t["outcome"] in ("failed", "error", "not-run")}
    return p, ran, failed, len(tests)


def functions(path):
    """(line, indent) of the first statement of each function of `path`,
    after its docstring."""
    with open(path) as f:
        tree = ast.parse(f.read())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            first = body[1] if (len(body) > 1 and isinstance(body[0], ast.Expr) and
                                isinstance(getattr(body[0], "value", None), ast.Constant) and
                                isinstance(body[0].value.value, str)) else body[0]
            out.append((node.name, first.lineno, first.col_offset))
    return out


def mutants(folder, package):
    """Each mutant: (name, path, new text)."""
    out = []
    for root, _, files in os.walk(os.path.join(folder, package)):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            with open(path) as f:
                lines = f.read().split("\n")
            for fn, line, col in functions(path):
                new = list(lines)
                new.insert(line - 1, " " * col + 'raise RuntimeError("mutant")')
                out.append(("%s:%s" % (os.path.relpath(path, folder), fn), path, "\n".join(new)))
            for i, text in enumerate(lines):
                if text and text[0].isupper() and " = " in text and text.split(" = ")[1][:1].isdigit():
                    new = list(lines)
                    new[i] = text + " + 1"
                    out.append(("%s:%s (a constant)" % (os.path.relpath(path, folder),
                                                        text.split(" = ")[0]), path,
                                "\n".join(new)))
    conftest = os.path.join(folder, "conftest.py")
    if os.path.exists(conftest):
        with open(conftest) as f:
            text = f.read()
        lines = text.split("\n")
        for fn, line, col in functions(conftest):
            new = list(lines)
            new.insert(line - 1, " " * col + 'raise RuntimeError("mutant")')
            out.append(("conftest.py:%s (a fixture)" % fn, conftest, "\n".join(new)))
    for root, _, files in os.walk(os.path.join(folder, "tests")):
        for name in sorted(files):
            if name.endswith((".csv", ".txt", ".json")):
                path = os.path.join(root, name)
                with open(path) as f:
                    text = f.read()
                out.append(("%s (a data file)" % os.path.relpath(path, folder), path,
                            text.replace("1", "7", 1) if "1" in text else text + "x\n"))
    return out


def check(tpuci, project):
    work = tempfile.mkdtemp(prefix="tpuci-mutation.")
    folder = os.path.join(work, "proj")
    shutil.copytree(project, folder, ignore=shutil.ignore_patterns(".tpuci", "__pycache__"))
    args = ["tests"]
    argfile = os.path.join(folder, ".pytest-args")
    if os.path.exists(argfile):
        with open(argfile) as f:
            args = [a for a in f.read().split("\n") if a]
    package = next(n for n in sorted(os.listdir(folder))
                   if os.path.isfile(os.path.join(folder, n, "__init__.py")))
    spec(folder, args)
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    subprocess.run(["git", "-c", "user.email=m@m", "-c", "user.name=m", "add", "."], cwd=folder,
                   check=True)
    subprocess.run(["git", "-c", "user.email=m@m", "-c", "user.name=m", "commit", "-qm", "base"],
                   cwd=folder, check=True)
    p, ran, failed, total = run(tpuci, folder, "base")
    if failed or not ran:
        print("%s: the record run failed (%s)\n%s" % (project, sorted(failed), p.stdout[-2000:]))
        return None
    rows, misses = [], 0
    for name, path, text in mutants(folder, package):
        with open(path) as f:
            orig = f.read()
        with open(path, "w") as f:
            f.write(text)
        shutil.rmtree(os.path.join(folder, "sel"), ignore_errors=True)
        shutil.copytree(os.path.join(folder, "base"), os.path.join(folder, "sel"), symlinks=True)
        _, ran, _, _ = run(tpuci, folder, "sel")
        shutil.rmtree(os.path.join(folder, "truth"), ignore_errors=True)
        _, _, truth, _ = run(tpuci, folder, "truth", "--no-select")
        missed = truth - ran
        misses += len(missed)
        rows.append((name, len(truth), len(ran), total, sorted(missed)))
        with open(path, "w") as f:
            f.write(orig)
    shutil.rmtree(work, ignore_errors=True)
    return rows, misses, total


def main(argv):
    status = 0
    for project in argv[2:]:
        got = check(argv[1], project)
        if got is None:
            status = 1
            continue
        rows, misses, total = got
        fractions = [r[2] / r[3] for r in rows]
        print("%s: %d tests, %d mutants" % (os.path.basename(os.path.normpath(project)), total,
                                           len(rows)))
        for name, nfail, nran, tot, missed in rows:
            print("  %-48s %2d failing, %2d of %2d run%s" % (name, nfail, nran, tot,
                                                            "  MISSED %s" % missed if missed else ""))
        print("  misses: %d; tests run: median %.0f%%, mean %.0f%% of the suite"
              % (misses, 100 * statistics.median(fractions), 100 * statistics.mean(fractions)))
        if misses:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
