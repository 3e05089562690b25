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
                              of core/sched/) is reported, and a planted
                              circle between two files of a driver, a
                              call of the attempt core into a driver, and
                              one of the HTTP client into the engine client

Inside a driver's folder (and the attempt core's, core/runtime/unit/)
the calls between files form no circle: each file calls only files
below it. The attempt core calls no driver (a driver fills its table of
operations). The HTTP client (core/runtime/http/) calls neither a driver
nor the engine client (core/runtime/engine/): what a server needs is
passed in.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from includes import (ALLOWED, DRIVERS, ENGINE, HTTP, KINDS, KIND_TABLE, KIND_USERS,  # noqa: E402
                      LEAVES, UNIT)

# The files of core/api/ call each other without a circle too.
API = "api"


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
            if not os.path.exists(os.path.join(CORE, rel)):
                continue
            # A leaf's functions may be called from the folders that may
            # include its header (includes.py, LEAVES).
            leaf = rel[:-2] + ".h"
            kind = [k for k in KINDS if rel.startswith(k + "/")]
            yield (leaf if leaf in LEAVES else kind[0] if kind else rel.split("/", 1)[0]), path


def files(build):
    """(source path under core/, object path) of the library's objects."""
    root = os.path.join(build, "CMakeFiles", "tpuci_objs.dir", "core")
    for dirpath, _, names in os.walk(root):
        for f in sorted(names):
            if not f.endswith(".c.o"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)[:-2]
            if os.path.exists(os.path.join(CORE, rel)):
                yield rel, path


def check_files(table):
    """table: (source, defined, undefined) per object. The circles between
    the files of one driver folder (or the attempt core's), and the
    attempt core's calls into a driver."""
    where = {}
    for rel, d, _ in table:
        for s in d:
            where[s] = rel
    # core/api/ too: one orchestrator (run.c) calls steps (run_cache.c,
    # run_quarantine.c, run_probe.c, run_state.c) that never call back.
    folders = tuple(DRIVERS) + (UNIT, API)
    edges = {}
    offences = []
    for rel, _, u in table:
        folder = os.path.dirname(rel)
        for s in sorted(u):
            t = where.get(s)
            if t is None or t == rel:
                continue
            if folder == UNIT and any(t.startswith(d + "/") for d in DRIVERS):
                offences.append("%s: calls %s of %s: the attempt core calls no driver"
                                % (rel, s, t))
            if folder == HTTP and any(t.startswith(d + "/") for d in DRIVERS + (ENGINE,)):
                offences.append("%s: calls %s of %s: the HTTP client calls no driver and "
                                "not the engine client" % (rel, s, t))
            if folder in folders and os.path.dirname(t) == folder:
                edges.setdefault(rel, {}).setdefault(t, s)
    # A circle: a file reached again from itself.
    state = {}

    def visit(f, stack):
        state[f] = 1
        stack.append(f)
        for t in sorted(edges.get(f, {})):
            if state.get(t) == 1:
                ring = stack[stack.index(t):] + [t]
                calls = ", ".join(edges[a][b] for a, b in zip(ring, ring[1:]))
                offences.append("%s: a circle of calls between files (%s): "
                                "split out what both use" % (" -> ".join(ring), calls))
            elif t not in state:
                visit(t, stack)
        stack.pop()
        state[f] = 2

    for f in sorted(edges):
        if f not in state:
            visit(f, [])
    return offences


def parse_nm(lines):
    """(defined, undefined) of nm's lines of one object."""
    defined, undefined = set(), set()
    for line in lines:
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBR":
            defined.add(parts[2])
    return defined, undefined


def nm_all(paths):
    """{path: (defined, undefined)}: one nm for every object (nm -A puts
    the object's path and a colon before each of its lines)."""
    paths = sorted(set(paths))
    if not paths:
        return {}
    out = subprocess.run(["nm", "-A"] + paths, capture_output=True, text=True,
                         check=True).stdout
    lines = dict((p, []) for p in paths)
    for line in out.splitlines():
        path, sep, rest = line.partition(":")
        if sep and path in lines:
            lines[path].append(rest)
    return dict((p, parse_nm(ls)) for p, ls in lines.items())


def check(objs, syms, extra=()):
    where = {}
    table = []
    for folder, path in objs:
        d, u = syms[path]
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
            if g is None or g == folder:
                continue
            # A kind's own folder is reached through kind/kinds.c's table
            # and from the folders after the scheduler only.
            if g in KINDS:
                if folder in KIND_USERS or path.endswith(KIND_TABLE + ".o"):
                    continue
                offences.append("%s: calls %s of core/%s/, a kind's own folder: reach it "
                                "through kind/kinds.h" % (os.path.basename(path), s, g))
                continue
            if g in ALLOWED.get(folder.split("/")[0], []) or g == folder.split("/")[0]:
                continue
            top = folder.split("/")[0]
            if g in LEAVES and (top in LEAVES[g] or g.split("/")[0] == top
                                or g.split("/")[0] in ALLOWED.get(top, [])):
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
    pairs = list(files(args[0]))
    syms = nm_all([path for _, path in objs] + [path for _, path in pairs])
    table = [(rel,) + syms[path] for rel, path in pairs]
    offences = check(objs, syms) + check_files(table)
    if self_test:
        if offences:
            print("self-test: the build itself has offences; run without --self-test")
            return 1
        # A runtime object that calls the scheduler, as a driver that
        # called tpuci__sched_start by name would be.
        planted = check(objs, syms, extra=[("runtime", "planted.o", {"tpuci__sched_start"})])
        if not any("tpuci__sched_start" in o for o in planted):
            print("self-test: the planted call was not reported")
            return 1
        # The scheduler calling the pytest kind by name.
        planted = check(objs, syms, extra=[("sched", "planted.o", {"tpuci__pytest_kind_new"})])
        if not any("tpuci__pytest_kind_new" in o for o in planted):
            print("self-test: the scheduler's planted call into kind/pytest/ was not reported")
            return 1
        # A circle in the docker driver: its shared parts calling the
        # attempt's operations, which call those parts; and the attempt
        # core calling a driver.
        planted = []
        for rel, d, u in table:
            if rel == "runtime/docker/objects.c" or rel == UNIT + "/attempt.c":
                u = set(u) | {"tpuci__dk_ops"}
            if rel == HTTP + "/http.c":
                u = set(u) | {"tpuci__docker_host_free"}
            planted.append((rel, d, u))
        found = check_files(planted)
        if not any("objects.c" in o and "circle" in o for o in found):
            print("self-test: the planted circle in runtime/docker/ was not reported")
            return 1
        if not any(o.startswith(UNIT + "/attempt.c: calls tpuci__dk_ops") for o in found):
            print("self-test: the attempt core's planted call into a driver was not reported")
            return 1
        if not any(o.startswith(HTTP + "/http.c: calls tpuci__docker_host_free") for o in found):
            print("self-test: the HTTP client's planted call into the engine client was not "
                  "reported")
            return 1
        print("self-test: a runtime object calling tpuci__sched_start, a circle "
              "between a driver's files, the attempt core calling a driver and "
              "the HTTP client calling the engine client are reported")
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
