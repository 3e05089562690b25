#!/usr/bin/env python3
"""Few parameters (issue 43): at most LIMIT_PERMILLE / 10 % of the
functions defined in core/ take more than MAX_PARAMS parameters; past
that, the parameters that travel together become a struct (a request,
an options struct, an entity). libuv has 0.4% such functions, Redis
0.7%.

A function definition is a parenthesised parameter list followed by a
body at file level. Comments, strings, character constants and
preprocessor lines are left out first, and of an #if only the first
branch is read, so braces stay balanced. Commas inside nested
parentheses (a function-pointer parameter's own parameters) are not
counted; `(void)` is no parameter, `...` is one.

    params.py [CORE_DIR]      counts, prints the figures and each
                              function over the limit, and exits 1 when
                              their share is over the limit
    params.py --self-test     checks the counting on a few snippets
"""
import os
import re
import sys

MAX_PARAMS = 6
LIMIT_PERMILLE = 7  # 0.7%

KEYWORDS = {"if", "while", "for", "switch", "return", "sizeof", "do", "else",
            "_Alignof", "_Generic", "_Static_assert", "defined"}
NOT_FUNCTIONS = ("struct", "union", "enum", "typedef")
DEFINITION = re.compile(r"([A-Za-z_]\w*)\s*\(\s*$")


def strip(text):
    """The code alone: comments, strings and character constants emptied,
    preprocessor lines dropped (of an #if, only its first branch kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    lines = []
    skip = 0  # nesting of the #if being skipped (0: reading)
    depth = 0
    logical = "".join(out).replace("\\\n", " \n").split("\n")
    for line in logical:
        s = line.strip()
        if not s.startswith("#"):
            lines.append("" if skip else line)
            continue
        word = s[1:].strip().split(" ")[0].split("(")[0]
        if word.startswith("if"):
            depth += 1
        elif word in ("else", "elif", "elifdef", "elifndef"):
            if not skip:
                skip = depth
        elif word == "endif":
            if skip == depth:
                skip = 0
            depth -= 1
        lines.append("")
    return "\n".join(lines)


def params_of(text):
    """The number of parameters of a parameter list's text."""
    t = text.strip()
    if t in ("", "void"):
        return 0
    count, depth = 1, 0
    for c in t:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            count += 1
    return count


def definitions(text):
    """(name, parameter count, line) of each function defined in `text`."""
    code = strip(text)
    found = []
    depth = 0
    head_start = 0
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                d = head(code, head_start, i)
                if d is not None:
                    found.append(d)
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                head_start = i + 1
        elif c == ";" and depth == 0:
            head_start = i + 1
    return found


def head(code, start, brace):
    """What the text before a file-level `{` defines, if a function."""
    h = code[start:brace].rstrip()
    if not h.endswith(")") or "=" in h:
        return None
    if h.lstrip().split(" ")[0].split("\n")[0] in NOT_FUNCTIONS:
        return None
    # The parameter list: the last parenthesised group.
    depth, j = 0, len(h) - 1
    while j >= 0:
        if h[j] == ")":
            depth += 1
        elif h[j] == "(":
            depth -= 1
            if depth == 0:
                break
        j -= 1
    m = DEFINITION.search(h[:j + 1])
    if j < 0 or m is None or m.group(1) in KEYWORDS:
        return None
    return m.group(1), params_of(h[j + 1:-1]), code.count("\n", 0, start + m.start(1)) + 1


def over_limit(total, nover):
    """Whether nover of total functions is over the share allowed."""
    return nover * 1000 > total * LIMIT_PERMILLE


def count(core):
    total, over = 0, []
    for dirpath, dirnames, filenames in os.walk(core):
        dirnames.sort()
        for f in sorted(filenames):
            if not f.endswith(".c"):
                continue
            path = os.path.join(dirpath, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                found = definitions(fh.read())
            total += len(found)
            rel = os.path.relpath(path, os.path.dirname(os.path.abspath(core)))
            over += [(n, "%s:%d" % (rel, line), name)
                     for name, n, line in found if n > MAX_PARAMS]
    return total, over


def self_test():
    snippet = r'''
#include <stdio.h>
#define MAC(a, b) { (a), (b) }
typedef struct { int a, b, c, d, e, f, g; } wide_t;
static const int table[] = {1, 2, 3};
struct s { int x; };
int proto(int a, int b, int c, int d, int e, int f, int g);
/* int commented(int a, int b, int c, int d, int e, int f, int g) { } */
static void XMLCALL seven(void *ud, const char *a, int b, const char *c, int d,
                          const char *e, const char *f) {
  if (ud) { puts("{(,,,,,,,)"); }
}
int none(void) { return '{'; }
int fp(void (*cb)(int a, int b, int c, int d, int e, int f, int g), void *data) {
#if X
  if (data) {
#else
  if (!data) {
#endif
    cb(1, 2, 3, 4, 5, 6, 7);
  }
  return 0;
}
void var(const char *fmt, ...) {}
void eight(int a, int b, int c, int d, int e, int f, int g, int h)
{
}
'''
    want = [("seven", 7), ("none", 0), ("fp", 2), ("var", 2), ("eight", 8)]
    got = [(name, n) for name, n, _ in definitions(snippet)]
    if got != want:
        print("self-test: counted %s, expected %s" % (got, want))
        return 1
    for total, nover, want_over in ((1000, 7, False), (1000, 8, True), (2280, 15, False),
                                    (2282, 16, True)):
        if over_limit(total, nover) != want_over:
            print("self-test: %d of %d judged %s" %
                  (nover, total, "over" if not want_over else "within"))
            return 1
    print("self-test: %d definitions counted as expected, the limit where it should be" %
          len(want))
    return 0


def main():
    args = sys.argv[1:]
    if args and args[0] == "--self-test":
        return self_test()
    core = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "..", "core")
    total, over = count(core)
    if total == 0:
        print("params: no function definitions found in %s" % core)
        return 1
    print("params: %d functions defined in core/, %d with more than %d parameters (%.3f%%; "
          "at most %.1f%%)" % (total, len(over), MAX_PARAMS, 100.0 * len(over) / total,
                                LIMIT_PERMILLE / 10.0))
    for n, where, name in sorted(over, key=lambda o: o[1]):
        print("  %s: %s takes %d" % (where, name, n))
    if over_limit(total, len(over)):
        print("params: over the limit: put the parameters that travel together in a struct "
              "(at most %d such functions of %d)" % (total * LIMIT_PERMILLE // 1000, total))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
