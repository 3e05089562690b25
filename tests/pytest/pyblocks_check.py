#!/usr/bin/env python3
"""The blocks core/kind/pytest/pyblocks.c finds, against Python's own parser.

    pyblocks_check.py DUMP [DIR...]

DUMP is the pyblocks_dump helper (tests/pytest/pyblocks_dump.c). Every
.py file under the folders (default: Debian's Python 3.11 library,
/usr/lib/python3.11, and pytest's package,
/usr/lib/python3/dist-packages/_pytest, those that exist) that `ast`
(this Python's) parses is scanned by DUMP and compared with what the
ast says. A block is a FunctionDef or AsyncFunctionDef with no function
around it, whose body is not on its header's logical line (after a
backslash that ends the header, it is):
  first  min(its decorators' lineno, its lineno)   must be equal
  last   its end_lineno                            must be equal
  name   its __qualname__ (classes only), "#2", "#3" on repeats
  body   at most its first statement's line, past its header's last line
A file the scanner refuses (-1) while ast parses it is a mismatch too.
Files ast cannot parse (or DUMP cannot read) are skipped. Prints the counts and each mismatch;
exit status 1 when there is one, 77 when no folder exists.
"""
import ast
import io
import os
import subprocess
import sys
import tokenize
import warnings

DEFAULT_DIRS = ["/usr/lib/python3.11", "/usr/lib/python3/dist-packages/_pytest"]


def one_line(node, lines):
    """Whether the def's body starts on its header's logical line: its
    first statement has code before it on its line, or a backslash joins
    its line to the header's (tokenized with `pass` for the body: one
    NEWLINE token then, the header's is missing)."""
    first = node.body[0]
    line = lines[first.lineno - 1]
    if line[: first.col_offset].strip() != b"":
        return True
    head = b"\n".join(lines[node.lineno - 1: first.lineno - 1]) + b"\n"
    if b"\\" not in head:
        return False
    text = head + line[: first.col_offset] + b"pass\n"
    if node.col_offset:
        text = b"if 1:\n" + text
    try:
        toks = list(tokenize.tokenize(io.BytesIO(text).readline))
    except (SyntaxError, tokenize.TokenError):
        return False
    return sum(t.type == tokenize.NEWLINE for t in toks) == 1 + (node.col_offset > 0)


def expected(tree, lines):
    """[(first, last, name, first statement's line)] as the ast says."""
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if not one_line(child, lines):
                    first = min([d.lineno for d in child.decorator_list] + [child.lineno])
                    found.append([first, child.end_lineno, prefix + child.name,
                                  child.body[0].lineno])
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    found.sort()
    seen = {}
    for b in found:
        seen[b[2]] = seen.get(b[2], 0) + 1
        if seen[b[2]] > 1:
            b[2] += "#%d" % seen[b[2]]
    return found


def files(dirs):
    for d in dirs:
        for root, subdirs, names in os.walk(d):
            subdirs.sort()
            for n in sorted(names):
                if n.endswith(".py"):
                    yield os.path.join(root, n)


def scanned(dump, paths):
    """{path: (rc, [(first, last, body, name)])} from DUMP."""
    out = subprocess.run([dump, "-"], input="\n".join(paths) + "\n", stdout=subprocess.PIPE,
                         text=True, errors="surrogateescape").stdout
    result, cur = {}, None
    for line in out.splitlines():
        if line.startswith("file "):
            path, rc = line[5:].rsplit(" ", 1)
            cur = result[path] = (int(rc), [])
        else:
            first, last, body, name = line.split(" ", 3)
            cur[1].append((int(first), int(last), int(body), name))
    return result


def compare(path, source, got):
    """The mismatches of one file, as lines to print."""
    rc, blocks = got
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    want = expected(tree, source.split(b"\n"))
    if rc != 0:
        return ["%s: refused, ast finds %d blocks" % (path, len(want))]
    bad = []
    for i in range(max(len(want), len(blocks))):
        w = want[i] if i < len(want) else None
        g = blocks[i] if i < len(blocks) else None
        if w is None or g is None:
            bad.append("%s: ast %s, scanner %s" % (path, w, g))
            break
        first, last, name, stmt = w
        gfirst, glast, gbody, gname = g
        if (first, last, name) != (gfirst, glast, gname) or not gfirst < gbody <= stmt:
            bad.append("%s: ast %d-%d %s (body at %d), scanner %d-%d %s (body at %d)"
                       % (path, first, last, name, stmt, gfirst, glast, gname, gbody))
    return bad


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    dump, dirs = argv[1], argv[2:] or DEFAULT_DIRS
    warnings.simplefilter("ignore")  # ast's SyntaxWarnings on odd escapes
    dirs = [d for d in dirs if os.path.isdir(d)]
    if not dirs:
        print("SKIP: none of the folders exists")
        return 77
    paths = list(files(dirs))
    got = scanned(dump, paths)
    nfiles = nblocks = skipped = 0
    bad = []
    for path in paths:
        with open(path, "rb") as f:
            source = f.read()
        res = compare(path, source, got[path]) if path in got else None
        if res is None:
            skipped += 1
            continue
        nfiles += 1
        nblocks += len(got[path][1])
        bad += res
    for line in bad:
        print(line)
    print("pyblocks_check: %d files, %d blocks checked in %s (%d files ast cannot parse "
          "skipped), %d mismatches" % (nfiles, nblocks, " ".join(dirs), skipped, len(bad)))
    return 1 if bad or nfiles == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
