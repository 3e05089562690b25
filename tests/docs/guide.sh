#!/usr/bin/env bash
# docs/guide.md's example project (specs/guide/): its specs still load and
# expand to what the guide shows, the local jobs run, and every spec file
# the guide quotes exists.
. "$TESTS/e2e/lib.sh"
src=$(cd "$TESTS/.." && pwd)
guide="$src/docs/guide.md"
cp -r "$src/specs/guide" mylib
cd mylib || exit 1

for spec in ci.lua docker.lua pytest.lua compat.lua; do
  grep -q "^-- $spec:" "$guide" && pass || fail "the guide does not show $spec"
  run_tpuci plan "$spec"
  expect_code 0 "plan $spec"
done

# Each spec the guide quotes from its first line is quoted as the file
# begins.
report=$(/usr/bin/python3 - "$guide" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
for block in re.findall(r"```lua\n(.*?)```", text, re.S):
    m = re.match(r"-- (\w+\.lua):", block)
    if m and not open(m.group(1)).read().startswith(block):
        print("docs/guide.md quotes %s, but the file does not begin so" % m.group(1))
PY
)
[ -z "$report" ] && pass || fail "$report"

run_tpuci plan pytest.lua
for inst in 'unit[shard=1/3]' 'unit[shard=3/3]' 'tpu[shard=1/2]' 'tpu[shard=2/2]' tpu-pod; do
  expect_out "$inst  (pytest.lua:" "pytest.lua"
done
expect_out "gang:     2 hosts worker-0..worker-1" "the v4-16 gang"
run_tpuci plan compat.lua
expect_out "compat[numpy=2.1,python=3.12]" "the matrix from versions.yaml"
expect_not_out "compat[numpy=1.26,python=3.12]" "the excluded combination"

# The local jobs, where the host has pytest (Debian's python3-pytest).
if /usr/bin/python3 -m pytest --version >/dev/null 2>&1; then
  PATH=/usr/bin:$PATH run_tpuci run --only hello --only unit ci.lua
  expect_code 0 "ci.lua's local jobs"
  expect_out "6 passed, 6 deselected" "ci.lua unit"
  # The guide's merged JUnit has the attributes tpuci writes, no others.
  PATH=/usr/bin:$PATH run_tpuci run --only unit --junit merged.xml ci.lua
  report=$(/usr/bin/python3 - "$guide" merged.xml <<'PY'
import re, sys, xml.etree.ElementTree as ET
have = set()
for case in ET.parse(sys.argv[2]).iter("testcase"):
    have |= set(case.attrib)
shown = set()
for tag in re.findall(r"<testcase ([^>]*)>", open(sys.argv[1]).read()):
    shown |= set(re.findall(r'(\w+)="', tag))
if not have:
    print("no test case in merged.xml")
elif shown - have:
    print("docs/guide.md shows <testcase> attributes tpuci does not write: %s (it writes %s)"
          % (sorted(shown - have), sorted(have)))
PY
)
  [ -z "$report" ] && pass || fail "$report"
  rm -f .tried
  run_tpuci run -q --only flaky ci.lua
  expect_code 0 "flaky passes"
  expect_out "[flaky  ] flaky: passed on attempt 2 after failing" "flaky"
fi

# The README links the guide.
grep -q '(docs/guide.md)' "$src/README.md" && pass || fail "README.md does not link docs/guide.md"
finish
