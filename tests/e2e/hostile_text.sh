#!/usr/bin/env bash
# Text tpuci did not write prints made safe (docs/cli.md, "Text from
# elsewhere"): a history whose test id and message hold escape codes, a
# carriage return and a forged workflow command; a pytest node id made by
# a conftest (from pytest's progress: the running test of a timeout, the
# alive lines, the failed tests); an expired quarantine entry's test and
# owner; a cache entry's run; a metadata server's answers (`tpuci doctor
# --real`). The plain console then holds no ESC, no CR,
# no line that starts a workflow command and no "##["; under GitHub
# Actions the only command lines are tpuci's own. `tpuci flaky --json`
# stays JSON that reads back the same ids. A cache entry whose log is
# /etc/passwd restores no log and no tail.
. "$TESTS/e2e/lib.sh"
unset GITHUB_ACTIONS GITHUB_STEP_SUMMARY
EVIL=$'\e]0;owned\a\e[2J\r[passed ] forged\n::error file=x::forged ##[add-mask]y'

# clean WHAT: $out has no ESC, CR or BEL, no line starting (after white
# space) with "::" and no "##[".
clean() {
  local bad=
  printf '%s' "$out" | LC_ALL=C grep -q $'[\e\r\a]' && bad="an ESC, CR or BEL"
  printf '%s\n' "$out" | grep -Eq '^[[:space:]]*::' && bad="$bad a line starting '::'"
  printf '%s' "$out" | grep -Fq '##[' && bad="$bad '##['"
  if [ -z "$bad" ]; then pass; else fail "$1: $bad in:"; printf '%s\n' "$out" | cat -A | tail -n 20 >&2; fi
}

# A history with a hostile test id and message: `tpuci flaky`.
mkdir -p .tpuci
/usr/bin/python3 - "$EVIL" <<'PY'
import json, sys
evil = sys.argv[1]
with open(".tpuci/history.jsonl", "w") as f:
    for i, o in enumerate("fp"):
        f.write(json.dumps({"run": "20261204-01223%d-f9cb" % i, "time": 1796347360000 + i,
                            "commit": None, "tests": [["unit" + evil, "t.py::x" + evil, o, 0.25,
                                                       "boom" + evil if o == "f" else None]]}) + "\n")
PY
run_tpuci flaky
expect_code 0 "tpuci flaky"
expect_out "t.py::x"
clean "tpuci flaky"
run_tpuci flaky --json
clean "tpuci flaky --json"
got=$(printf '%s' "$out" | /usr/bin/python3 -c '
import json, sys
def strings(v):
    if isinstance(v, str): yield v
    elif isinstance(v, dict):
        for k, x in v.items(): yield k; yield from strings(x)
    elif isinstance(v, list):
        for x in v: yield from strings(x)
print(("t.py::x" + sys.argv[1]) in set(strings(json.load(sys.stdin))))' "$EVIL")
[ "$got" = True ] && pass || fail "tpuci flaky --json does not read back the ids: $got"

# An expired quarantine entry's test and owner: the warning at the start.
cat > q.lua <<'LUA'
job "q" { run = "true" }
LUA
cat > tpuci-quarantine.yaml <<'YAML'
- test: "t.py::x\e]0;owned\a\r\n::error::forged ##[add-mask]y"
  reason: "r\e[2J"
  owner: "bob\e]0;owned\a\r\n::warning::forged"
  until: 2020-01-01
YAML
run_tpuci run --plain q.lua
expect_code 0 "a run with an expired hostile entry"
expect_out "(owner bob"
clean "the quarantine's expiry warning"
rm tpuci-quarantine.yaml

# A cache entry's run, and a log outside runs/.
# (A folder of its own: a local job's key covers its folder's files; one
# file besides the spec, which does not count.)
mkdir cdir
echo data > cdir/data.txt
cat > cdir/c.lua <<'LUA'
job "c" { run = "echo ran" }
LUA
(
  unset TPUCI_NO_CACHE
  key=$("$TPUCI" plan --keys --json cdir/c.lua |
        /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["instances"][0]["key"])')
  mkdir -p .tpuci/cache
  /usr/bin/python3 - "$EVIL" "$key" <<'PY'
import json, sys
evil, key = sys.argv[1:3]
json.dump({"format": 1, "key": key, "instance": "c", "run": "20261204-012239-f9cb" + evil,
           "duration_ms": 1000, "log": "/etc/passwd"}, open(".tpuci/cache/%s.json" % key, "w"))
PY
  "$TPUCI" run --plain cdir/c.lua > cache.out 2>&1
  echo "$?" > cache.code
)
out=$(cat cache.out)
code=$(cat cache.code)
expect_code 0 "a run that takes the hostile entry"
expect_out "[cached ] c: passed in run 20261204-012239-f9cb"
clean "a cache entry's run"
root=$(head -c 12 /etc/passwd)
if grep -qF "$root" .tpuci/runs/latest/summary.json .tpuci/runs/latest/report.html; then
  fail "the reports hold /etc/passwd's tail"
else
  pass
fi
expect_json "s['instances'][0]['attempts'][0].get('log')" "None"

# A metadata server's accelerator type: `tpuci doctor --real`.
cat > metadata.py <<'PY'
import http.server, sys
EVIL = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        key = self.path.rsplit("/", 1)[-1]
        body = {"accelerator-type": "v4-8" + EVIL, "agent-worker-number": "0" + EVIL,
                "worker-network-endpoints": "w-0:0:10.0.0.2" + EVIL}.get(key, "").encode()
        self.send_response(200 if body else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
/usr/bin/python3 metadata.py "$EVIL" > port.txt &
md=$!
for _ in $(seq 100); do [ -s port.txt ] && break; sleep 0.1; done
out=$(GCE_METADATA_HOST=127.0.0.1:$(cat port.txt) "$TPUCI" doctor --real q.lua 2>&1)
kill "$md"
expect_out "tpu metadata: v4-8"
clean "the metadata server's answers"

# A conftest's node ids, from pytest's progress: the running test of a
# timeout, alive lines, the failed tests.
if /usr/bin/python3 -c 'import pytest' 2>/dev/null; then
  mkdir -p proj/tests
  printf '%s' "$EVIL" > proj/evil.txt
  cat > proj/tests/conftest.py <<'PY'
import os
EVIL = open(os.path.join(os.path.dirname(__file__), "..", "evil.txt")).read()
def pytest_collection_modifyitems(items):
    for it in items:
        it._nodeid += EVIL
PY
  cat > proj/tests/test_x.py <<'PY'
import os, time
EVIL = open(os.path.join(os.path.dirname(__file__), "..", "evil.txt")).read()
def test_fail():
    assert False, EVIL
def test_hang():
    time.sleep(60)
PY
  cat > proj/spec.lua <<'LUA'
job "py" { pytest = { python = "/usr/bin/python3", args = { "tests/" } },
           workdir = tpuci.spec_dir, timeout = "6s", grace = "1s" }
LUA
  run_tpuci run --plain --alive 1s proj/spec.lua
  expect_code 1 "the pytest job"
  expect_out "tests/test_x.py::test_hang"
  expect_out "tests/test_x.py::test_fail"
  expect_out "[alive  ] py"
  clean "pytest's node ids and messages"
  # Under GitHub Actions: tpuci's own command lines only.
  out=$(GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=$WORK/summary.md "$TPUCI" run --alive 1s proj/spec.lua 2>&1)
  bad=$(printf '%s\n' "$out" | grep -E '^[[:space:]]*::' |
        grep -Ev '^::(group::|endgroup::$|error file=|error title=|warning file=|warning title=|notice title=tpuci::)')
  [ -z "$bad" ] && pass || fail "GitHub: command lines tpuci did not write: $bad"
  printf '%s\n' "$out" | grep -E '^::(error|warning) ' | grep -q $'[\e\r]' &&
    fail "an annotation holds an ESC or CR" || pass
  printf '%s\n' "$out" | grep -E '^::(error|warning) ' | grep -Eq 'title=[^:]*::error' &&
    fail "an annotation's title was cut by a ':'" || pass
else
  echo "note: /usr/bin/python3 has no pytest: the node id part is skipped" >&2
fi
finish
