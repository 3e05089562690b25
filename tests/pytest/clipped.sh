#!/usr/bin/env bash
# A failed test's message when the attempt left no JUnit file (a crash
# after it): progress.jsonl keeps the traceback's last 4000 bytes, whose
# first line is any line of a frame; the message is the exception's line
# (pytest's crash line; else the tail's last "E" lines), in the console,
# the merged JUnit and summary.json, and the tail is the failure's text.
# Local runtime, Debian's python3-pytest.
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }

mkdir -p proj/tests
cat > proj/tests/test_clip.py <<'PY'
import os


def deep(n, value):
    # A traceback of many frames, each with a long line: far over 4000 bytes.
    if n == 0:
        assert value == 3, "the sum is wrong"
    return deep(n - 1, value)  # ............................................................................................................


def test_long_traceback():
    deep(60, 2)


def test_crash():
    os.abort()
PY
cat > spec.lua <<'LUA'
job "clip" { workdir = tpuci.spec_dir .. "/proj", pytest = { python = "/usr/bin/python3", args = { "-p", "no:cacheprovider", "tests/" } } }
LUA
run_tpuci run --junit merged.xml spec.lua
expect_code 1 "a run whose attempt crashed"
expect_out "failed tests/test_clip.py::test_long_traceback: AssertionError: the sum is wrong" "the console's message is the exception's line"
run=$(readlink -f .tpuci/runs/latest)
check=$(/usr/bin/python3 - merged.xml "$run/summary.json" <<'PY'
import json, sys, xml.etree.ElementTree as ET
want = "AssertionError: the sum is wrong"
for case in ET.parse(sys.argv[1]).iter("testcase"):
    if case.get("name") == "test_long_traceback":
        f = case.find("failure")
        if f is None:
            print("no <failure>"); sys.exit()
        if not f.get("message", "").startswith(want):
            print("JUnit message: %r" % f.get("message")[:200]); sys.exit()
        if "deep(n - 1, value)" not in (f.text or ""):
            print("JUnit text has no traceback: %r" % (f.text or "")[:200]); sys.exit()
        break
else:
    print("no test_long_traceback in the JUnit file"); sys.exit()
text = open(sys.argv[2]).read()
if want not in text:
    print("summary.json lacks the message")
    sys.exit()
print("ok")
PY
)
[ "$check" = ok ] && pass || fail "reports: $check"
finish
