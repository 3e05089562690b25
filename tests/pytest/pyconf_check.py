#!/usr/bin/env python3
"""What core/kind/pytest/pyconf_ini.c reads of tricky INI files, against
iniconfig, which pytest reads pytest.ini, tox.ini and setup.cfg with.

    pyconf_check.py DUMP

DUMP is the pyconf_dump helper (tests/pytest/pyconf_dump.c). Each case
below is written to a file, read by DUMP (section "pytest") and by
iniconfig.IniConfig, then compared as pytest would use it: whether the
section is there, markers as pytest's "linelist" (a stripped line each,
blank ones left out), testpaths and python_files as its "args"
(shlex.split); or, for a file iniconfig refuses, the line of the error.
A value shlex cannot split is an error to both (pytest fails on it when
it reads the option; tpuci names the key's line). Prints each mismatch;
exit status 1 when there is one, 77 when iniconfig is not installed
(python3-iniconfig, which python3-pytest brings).

The cases are the places where libinih, which the reader is built on,
reads a file otherwise than iniconfig does: inline ';' comments, a key
given twice (inih calls its handler as for a continuation), a section
given twice (inih merges them), an indented line after a section header
(a key to inih), lines longer than inih's 200-byte buffer, a UTF-8 BOM
(inih skips it), "[pytest]]" (inih's section "pytest"), an empty key
(inih reads its continuation lines as keys). Where tpuci
differs from pytest on purpose, the case is in DIFFERS, with why.
"""
import os
import shlex
import subprocess
import sys
import tempfile

try:
    import iniconfig
except ImportError:
    print("SKIP: no iniconfig (apt-get install python3-iniconfig)")
    sys.exit(77)

LONG = "w" * 190
CASES = {
    "inline_comments": "[pytest]\naddopts = -x ; not a comment\n"
                       "testpaths = a ;b c#d\nmarkers =\n  m1: x ; y\n  m2 # z\n",
    "semicolon_key": "[pytest]\na;b = 1\nmarkers = a\n",
    "continuations": "# c\n[pytest]\nmarkers =\n    tpu: a TPU\n    ; not one\n\n"
                     "\tslow(r): slow\n  # nor this\ntestpaths =\n  tests\n  'b c'\n",
    "empty_then_more": "[pytest]\nmarkers =\n\n  a\n",
    "no_equals": "[pytest]\nmarkers = a\njust words\n",
    "key_first": "markers = a\n[pytest]\n",
    "indented_after_header": "[pytest]\n  markers = a\n",
    "indented_first": "  x\n[pytest]\n",
    "section_twice": "[pytest]\nmarkers = a\n[x]\n[pytest]\n",
    "key_twice": "[pytest]\nmarkers = a\nmarkers = b\n",
    "key_twice_apart": "[pytest]\nmarkers = a\n  b\naddopts = -x\nmarkers = c\n",
    "bracket_bracket": "[pytest]]\nmarkers = a\n",
    "spaced_section": "[ pytest ]\nmarkers = a\n",
    "header_comment": "[pytest] ; here\nmarkers = a\n",
    "header_hash": "[pytest] # here\nmarkers = a\n",
    "empty_section": "[tox]\nenvlist = py3\n[pytest]\n",
    "colon": "[pytest]\nmarkers: a: b\nurl: http://x=y\npython_files=x:y\n",
    "crlf": "[pytest]\r\nmarkers =\r\n  a\r\n  b \r\n",
    "bom": "\ufeff[pytest]\nmarkers = a\n",
    "bom_key": "[pytest]\n\ufeffmarkers = a\n",
    # (an item of at most TPUCI__PYCONF_MAX_VALUE bytes, 4096)
    "long_marker": "[pytest]\nmarkers =\n  long: " + " ".join(["x" * 37] * 100) + "\n  short\n",
    "long_first_line": "[pytest]\nmarkers = " + LONG + "  " + LONG + " ; " + LONG + "\n",
    "long_testpaths": "[pytest]\ntestpaths = " + " ".join("dir%03d" % i for i in range(200)) + "\n",
    "long_blanks_at_cut": "[pytest]\ntestpaths = " + "".join(
        "a" * k + " " * 7 for k in range(1, 60)) + "\n",
    "long_key": "[pytest]\n" + "k" * 300 + " = " + LONG + "\n  more\nmarkers = a\n",
    "long_header": "[" + "s" * 400 + "]\nmarkers = x\n[pytest]\nmarkers = a\n",
    "long_comment": "[pytest]\n# " + LONG * 3 + "\nmarkers = a\n; " + LONG * 3 + "\n  b\n",
    "long_no_equals": "[pytest]\n" + LONG * 2 + "\n",
    "empty_key": "[o]\n: z\n  more = 1\n[pytest]\n= x\n  [y\nmarkers = a\n",
    "open_quote": "[pytest]\ntestpaths = 'a b\n",
    "other_sections": "[tox]\nmarkers = no\n  x\n[testenv]\ncommands = pytest\n"
                      "[pytest]\npython_files = t_*.py\n[flake8]\nmax = 1\n",
}

# Where tpuci differs from pytest on purpose; the case must still differ.
DIFFERS = {
    # iniconfig takes a header that does not end with ']' (after its
    # comment) for a continuation line; tpuci refuses it.
    "broken_header": ("[pytest]\nmarkers = a\n[b]c\n",
                      "pytest reads '[b]c' as a line of markers"),
    # A control character stands for a marker of the pre-processing in
    # what inih reads; no configuration needs one.
    "control_char": ("[pytest]\nmarkers = a\x03b\n", "tpuci refuses control characters"),
}


def expected(path):
    """What pytest makes of the file, in pyconf_dump's format."""
    with open(path, encoding="utf-8") as f:
        data = f.read()
    try:
        cfg = iniconfig.IniConfig(path, data)
    except iniconfig.ParseError as e:
        return ["error %d" % (e.lineno + 1)]
    out = ["found %d" % ("pytest" in cfg)]
    if "pytest" not in cfg:
        return out
    sec = cfg["pytest"]
    for key in ("markers", "testpaths", "python_files"):
        value = sec.get(key)
        if value is None:
            continue
        if key == "markers":
            items = [t for t in (x.strip() for x in value.split("\n")) if t]
        else:
            try:
                items = shlex.split(value)
            except ValueError:
                return ["error %d" % cfg.lineof("pytest", key)]
        out += ["%s\t%s" % (key, i) for i in items]
    return out


def main():
    dump = sys.argv[1]
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        cases = dict(CASES)
        cases.update({k: v[0] for k, v in DIFFERS.items()})
        paths = {}
        for name, text in cases.items():
            paths[name] = os.path.join(tmp, name + ".ini")
            with open(paths[name], "w", encoding="utf-8", newline="") as f:
                f.write(text)
        res = subprocess.run([dump, "pytest"] + [paths[n] for n in cases],
                             capture_output=True, text=True, check=True)
        got, cur = {}, None
        for line in res.stdout.split("\n"):
            if line.startswith("file "):
                cur = os.path.basename(line[5:])[:-4]
                got[cur] = []
            elif line:
                got[cur].append(line)
        for name in cases:
            want = expected(paths[name])
            if name in DIFFERS:
                if got[name] == want:
                    print("%s: reads as pytest does now; take it out of DIFFERS" % name)
                    bad += 1
                continue
            if got[name] != want:
                print("%s: tpuci %.300r, pytest %.300r" % (name, got[name], want))
                bad += 1
    print("pyconf_check: %d cases, %d as pytest reads them, %d known differences, %d mismatches"
          % (len(CASES) + len(DIFFERS), len(CASES) - bad, len(DIFFERS), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
