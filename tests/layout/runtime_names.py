#!/usr/bin/env python3
"""No file of core/ outside core/runtime/ tests a runtime by its name
(docs/architecture.md, "Adding a runtime driver"): what a caller needs to
know of a runtime is a property of its row in core/runtime/props.c, so a
new runtime is a folder, a row and its docs, not a hunt through the core.

    runtime_names.py [CORE_DIR]   prints each offence as file:line: and
                                  exits 1 if any
    runtime_names.py --self-test  plants offences in a copy of the tree
                                  and fails unless each is reported

An offence is a runtime's enum constant (TPUCI__RUNTIME_DOCKER, ...;
TPUCI__RUNTIME__COUNT and _DEFAULT are not names of one) or a comparison
of a string with a runtime's name (strcmp(x, "swarm")).
"""
import os
import re
import shutil
import sys
import tempfile

NAMES = ("local", "docker", "podman", "swarm", "ssh")
ENUM = re.compile(r"\bTPUCI__RUNTIME_(?!_COUNT\b|DEFAULT\b)[A-Z]+\b")
STRCMP = re.compile(r"\bstrn?(?:case)?cmp\s*\([^;]*\"(%s)\"" % "|".join(NAMES))
COMMENT = re.compile(r"/\*.*?\*/", re.S)


def strip_comments(text):
    # Keeps the line count: a comment becomes as many newlines as it had.
    return COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def check(core):
    offences = []
    for dirpath, _, files in os.walk(core):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, core)
            if rel.startswith("runtime/"):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = strip_comments(f.read()).split("\n")
            for n, line in enumerate(lines, 1):
                m = ENUM.search(line) or STRCMP.search(line)
                if m:
                    offences.append("%s:%d: tests a runtime by name (%s): ask its property "
                                    "(runtime/props.h)" % (rel, n, m.group(0)))
    return offences


def self_test(core):
    tmp = tempfile.mkdtemp()
    try:
        copy = os.path.join(tmp, "core")
        shutil.copytree(core, copy)
        bad = [
            ("plan/plan.c", "static int x(int k) { return k == TPUCI__RUNTIME_SSH; }"),
            ("api/run.c", 'static int y(const char *s) { return strcmp(s, "docker") == 0; }'),
            ("export/github.c", 'static int z(const char *s) { return !strncmp(s, "swarm", 5); }'),
        ]
        for f, line in bad:
            with open(os.path.join(copy, f), "a") as fh:
                fh.write("\n" + line + "\n")
        # Not offences: a comment, the count, and a runtime's own folder.
        with open(os.path.join(copy, "sched/scheduler.c"), "a") as fh:
            fh.write("\n/* TPUCI__RUNTIME_DOCKER */\nint n = TPUCI__RUNTIME__COUNT;\n")
        found = check(copy)
        missed = [f for f, _ in bad if not any(o.startswith(f + ":") for o in found)]
        wrong = [o for o in found if o.startswith("sched/scheduler.c:")]
        if missed or wrong:
            print("self-test: not reported in %s; wrongly reported: %s" % (missed, wrong))
            return 1
        print("self-test: all %d offences reported, none else" % len(bad))
        return 0
    finally:
        shutil.rmtree(tmp)


def main():
    args = sys.argv[1:]
    here = os.path.dirname(os.path.abspath(__file__))
    core = os.path.join(here, "..", "..", "core")
    if args and args[0] == "--self-test":
        if len(args) > 1:
            core = args[1]
        if check(core):
            print("self-test: the tree itself has offences; run without --self-test")
            return 1
        return self_test(core)
    if args:
        core = args[0]
    offences = check(core)
    for o in offences:
        print(o)
    if offences:
        print("%d place(s) outside core/runtime/ test a runtime by name" % len(offences))
        return 1
    print("runtime names: none tested outside core/runtime/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
