#!/usr/bin/env python3
"""Every path docs/architecture.md names exists (ctest docs_paths).

A path is a `backticked` word that names a file or folder of the tree: it
has a '/' or ends in a source file's extension. One with a '/' must exist
from the repository's root, from core/ or from core/runtime/ (the page
names driver files as `engine/erun.h`); a bare file name (`attempt.c`,
said in a folder's row) must be some file's name in the repository.
`name.{h,c}` stands for both. A folder (`docker/`) must be a folder of the
tree. The files tpuci writes as it runs (`summary.json`, ...) are not the
tree's: WRITTEN lists them.

usage: paths.py REPO [DOC]
"""
import os
import re
import subprocess
import sys

EXT = (".c", ".h", ".py", ".sh", ".md", ".lua", ".yaml", ".json", ".css", ".cmake", ".txt",
       ".html", ".js")
WRITTEN = {"summary.json", "attempts.jsonl", "progress.jsonl", "history.jsonl", "timings.json",
           "collections.json", "junit.xml", "stacks.txt"}
WORD = re.compile(r"`([A-Za-z0-9_./{},*-]+)`")


def candidates(word):
    m = re.match(r"^(.*)\.\{([a-z,]+)\}$", word)
    if m:
        return [m.group(1) + "." + e for e in m.group(2).split(",")]
    return [word]


def main(repo, doc):
    files = subprocess.run(["git", "-C", repo, "ls-files"], capture_output=True, text=True,
                           check=True).stdout.split()
    names = {os.path.basename(f) for f in files}
    dirs = set()
    for f in files:
        d = os.path.dirname(f)
        while d:
            dirs.add(d)
            d = os.path.dirname(d)
    dir_names = {os.path.basename(d) for d in dirs}
    text = open(os.path.join(repo, doc)).read()
    missing = []
    seen = 0
    for word in sorted(set(WORD.findall(text))):
        if "*" in word or word.startswith(("-", ".", "/")) or "://" in word:
            continue
        if "/" not in word and not word.endswith(EXT) and not re.search(r"\.\{", word):
            continue
        for path in candidates(word):
            seen += 1
            p = path.rstrip("/")
            if path in WRITTEN:
                ok = True
            elif path.endswith("/"):
                ok = p in dirs or p in dir_names or any(
                    os.path.isdir(os.path.join(repo, base, p)) for base in ("core", "core/runtime"))
            elif "/" in p:
                ok = any(os.path.exists(os.path.join(repo, base, p))
                         for base in ("", "core", "core/runtime"))
            else:
                ok = p in names
            if not ok:
                missing.append(path)
    for path in missing:
        print("%s: names %s, which is not in the tree" % (doc, path))
    if missing:
        return 1
    print("%s: all %d paths it names exist" % (doc, seen))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "docs/architecture.md"))
