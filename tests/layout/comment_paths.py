#!/usr/bin/env python3
"""Every path of the tree that a comment of core/ or include/ names exists
(ctest layout_comment_paths), so that a file moved leaves no comment
pointing at where it was.

A path counts when it is the tree's by its first folder: core/, include/,
lua/, a folder of core/ ("pytest/kind.c", from core/) or of
core/runtime/ ("engine/erun.h"), or tests/ and one of its folders.
Anything else is an example of a user's path ("tests/test_a.py",
"src/a.py") and is not checked.

usage: comment_paths.py REPO
"""
import os
import re
import subprocess
import sys

COMMENT = re.compile(r"/\*.*?\*/", re.S)
PATH = re.compile(r"(?<![\w./-])((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+\.(?:c|h|md|py|sh|lua|yaml|css))\b")


def main(repo):
    files = subprocess.run(["git", "-C", repo, "ls-files"], capture_output=True, text=True,
                           check=True).stdout.split()
    tracked = set(files)
    core = {f.split("/")[1] for f in files if f.startswith("core/") and f.count("/") >= 2}
    runtime = {f.split("/")[2] for f in files
               if f.startswith("core/runtime/") and f.count("/") >= 3}
    tests = {f.split("/")[1] for f in files if f.startswith("tests/") and f.count("/") >= 2}
    bad = []
    for f in files:
        if not f.startswith(("core/", "include/")) or not f.endswith((".c", ".h")):
            continue
        with open(os.path.join(repo, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for m in COMMENT.finditer(text):
            for p in PATH.findall(m.group(0)):
                parts = p.split("/")
                if parts[0] in ("core", "include", "lua"):
                    where = [p]
                elif parts[0] == "tests" and parts[1] in tests:
                    where = [p]
                elif parts[0] in core or parts[0] in runtime:
                    where = ["core/" + p, "core/runtime/" + p]
                else:
                    continue
                if not any(w in tracked for w in where):
                    bad.append("%s:%d: names %s, which is not in the tree" %
                               (f, text.count("\n", 0, m.start()) + 1, p))
    for b in bad:
        print(b)
    if bad:
        print("comment_paths: %d stale path(s)" % len(bad))
        return 1
    print("comment_paths: every path a comment of core/ and include/ names is in the tree")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
