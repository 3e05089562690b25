#!/usr/bin/env bash
# How a pytest attempt ends (issue 23.4): once pytest is done, the
# bootstrap runs the atexit functions and ends the process without the
# interpreter's own teardown (seconds with torch imported), so a retry
# starts sooner, and a thread a test left running no longer holds the
# attempt until its timeout.
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }

mkdir tests
cat > tests/conftest.py <<'PY'
import atexit
import os


def _ran():
    with open(os.path.join(os.path.dirname(__file__), "..", "atexit-ran"), "w") as f:
        f.write("yes\n")


atexit.register(_ran)
PY
cat > tests/test_thread.py <<'PY'
import threading
import time


def test_leaves_a_thread():
    threading.Thread(target=time.sleep, args=(3600,)).start()
PY
cat > spec.lua <<'LUA'
job "suite" {
  workdir = tpuci.spec_dir, timeout = "60s",
  pytest = { python = "/usr/bin/python3", args = { "tests/" } },
}
LUA
run_tpuci run spec.lua
expect_code 0 "a test that leaves a thread"
expect_json '[a["outcome"] for i in s["instances"] for a in i["attempts"]]' "['passed']"
[ "$(cat atexit-ran 2>/dev/null)" = yes ] && pass || fail "the atexit function did not run"
finish
