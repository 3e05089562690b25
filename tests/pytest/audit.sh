#!/usr/bin/env bash
# The audit (issue 41; docs/pytest.md, "The audit"): a miss planted where
# the recorder cannot see, and select.audit catching it. test_seen reads
# data/d.txt through Python's open(); test_native reads the same file
# through libc's fopen (ctypes), which no audit event shows. A change to
# data/d.txt reruns test_seen and leaves test_native out: a real miss. With
# select = { mode = "affected", audit = 1 }, every test left out runs after
# the selected ones: test_native fails, the console says it was missed by
# the selection, summary.json marks it "missed", the run fails, and
# `tpuci select --stats` counts it. Without the audit, the same change
# leaves it out (the miss is real, so the audit is what found it).
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest"; exit 77; }

mkdir -p proj/tests proj/data && cd proj || exit 1
echo ok > data/d.txt
cat > tests/test_seen.py <<'PY'
def test_seen():
    with open("data/d.txt") as f:
        assert f.read().strip() in ("ok", "changed")
PY
cat > tests/test_native.py <<'PY'
import ctypes


def read_natively(path):
    libc = ctypes.CDLL(None)
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.fgets.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    f = libc.fopen(path.encode(), b"r")
    buf = ctypes.create_string_buffer(64)
    libc.fgets(buf, 64, f)
    libc.fclose(f)
    return buf.value.decode().strip()


def test_native():
    assert read_natively("data/d.txt") == "ok"


def test_other():
    assert 1 + 1 == 2
PY
spec() { # AUDIT
  printf 'job "p" { pytest = { python = "/usr/bin/python3", args = { "tests" }, select = { mode = "affected", audit = %s } } }\n' "$1" > spec.lua
}
WORK=$PWD

# 1. No audit: the record, then the change, and the miss is real.
spec 0
run_tpuci run --plain spec.lua
expect_code 0 "the recording run"
cp -r .tpuci ../state-before
echo changed > data/d.txt
run_tpuci run --plain spec.lua
expect_code 0 "a selection that misses (no audit)"
[ "$(json '[t["outcome"] for t in s["instances"][0]["tests"] if t["id"].endswith("test_native")][0]')" = unaffected ] &&
  pass || fail "test_native was not left out: the planted miss is not one"

# 2. The audit runs every test left out, after the selected ones.
rm -rf .tpuci && cp -r ../state-before .tpuci
spec 1
run_tpuci run --plain spec.lua
expect_code 1 "the audit found a miss: the run fails"
expect_out "left out but run as the audit"
expect_out "p: missed by the selection: tests/test_native.py::test_native"
[ "$(json '[t.get("missed") for t in s["instances"][0]["tests"] if t["id"].endswith("test_native")][0]')" = True ] &&
  pass || fail "summary.json: test_native is not marked missed"
[ "$(json '[t.get("missed", False) for t in s["instances"][0]["tests"] if t["id"].endswith("test_other")][0]')" = False ] &&
  pass || fail "summary.json: test_other (audited, passed) is marked missed"
run_tpuci select --stats
expect_code 0 "select --stats"
expect_out "1 missed (miss rate"
run_tpuci select --stats --json
expect_out '"missed": 1'

# 3. No selecting run recorded: exit 2, one line.
run_tpuci select --stats --state-dir "$WORK/nowhere"
expect_code 2 "select --stats without a record"
expect_out "no selecting run yet"
finish
