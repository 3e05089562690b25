#!/usr/bin/env python3
"""The layout's rule at link level (docs/architecture.md): a function of
core/<folder>/ calls only functions defined in its own folder or in the
folders it may use (includes.py's ALLOWED). An include can be avoided
with a declaration typed by hand; a call cannot, so this reads the
object files: for each one, its undefined tpuci symbols and the folder
that defines each.

    symbols.py BUILD_DIR      checks the objects of the tpuci library
                              built in BUILD_DIR, prints each offence
    symbols.py --self-test BUILD_DIR
                              fails unless a planted backwards call (an
                              object of core/runtime/ using a function
                              of core/sched/) is reported
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from includes import ALLOWED  # noqa: E402


CORE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "core")


def objects(build):
    """The library's objects whose source still exists (a build folder
    keeps objects of files that moved away)."""
    root = os.path.join(build, "CMakeFiles", "tpuci_objs.dir", "core")
    if not os.path.isdir(root):
        sys.exit("symbols.py: no objects under %s (build tpuci first)" % root)
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if not f.endswith(".c.o"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)[:-2]
            if os.path.exists(os.path.join(CORE, rel)):
                yield rel.split("/", 1)[0], path


def nm(path):
    out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBR":
            defined.add(parts[2])
    return defined, undefined


def check(objs, extra=()):
    where = {}
    table = []
    for folder, path in objs:
        d, u = nm(path)
        for s in d:
            where[s] = folder
        table.append((folder, path, u))
    table.extend(extra)
    offences = []
    for folder, path, undefined in table:
        for s in sorted(undefined):
            if not s.startswith("tpuci"):
                continue
            g = where.get(s)
            if g is None or g == folder or g in ALLOWED.get(folder, []):
                continue
            offences.append("%s: calls %s of core/%s/, which core/%s/ may not use"
                            % (os.path.basename(path), s, g, folder))
    return offences


def main():
    args = sys.argv[1:]
    self_test = args and args[0] == "--self-test"
    if self_test:
        args = args[1:]
    if len(args) != 1:
        sys.exit(__doc__)
    objs = list(objects(args[0]))
    offences = check(objs)
    if self_test:
        if offences:
            print("self-test: the build itself has offences; run without --self-test")
            return 1
        # A runtime object that calls the scheduler, as a driver that
        # called tpuci__sched_start by name would be.
        planted = check(objs, extra=[("runtime", "planted.o", {"tpuci__sched_start"})])
        if not any("tpuci__sched_start" in o for o in planted):
            print("self-test: the planted call was not reported")
            return 1
        print("self-test: a runtime object calling tpuci__sched_start is reported")
        return 0
    for o in offences:
        print(o)
    if offences:
        print("%d call(s) break the layout (docs/architecture.md)" % len(offences))
        return 1
    print("symbols: every call between folders of core/ goes down the pipeline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
