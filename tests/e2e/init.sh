#!/usr/bin/env bash
# `tpuci init` (docs/cli.md): in the guide's project (specs/guide) it
# writes a spec whose plan, clean, has a job per marker family; it reads
# markers registered in pyproject.toml (among another tool's strings
# that look like pytest's table), and each file pytest reads, in pytest's
# order; it refuses to overwrite (exit 2, one line) unless --force;
# --output names the project from the spec's folder, --stdout writes no
# file; a configuration it cannot read is one line naming file and line.
. "$TESTS/e2e/lib.sh"
src=$(cd "$TESTS/.." && pwd)

# jobs SPEC: "job topology -m" per instance of `tpuci plan --json`, after
# checking that the plan loads without a warning.
jobs() {
  "$TPUCI" plan --json "$1" > plan.json 2> plan.err || { echo "plan failed: $(cat plan.err)"; return; }
  [ -s plan.err ] && { echo "plan says: $(cat plan.err)"; return; }
  /usr/bin/python3 - plan.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
if d["warnings"]:
    print("warnings:", d["warnings"])
for i in d["instances"]:
    argv = i["argv"][5:]          # after python3 -m pytest -p no:cacheprovider
    m = argv[argv.index("-m") + 1] if "-m" in argv else "-"
    args = [a for a in argv if a not in ("-m", m)]
    print("%s %s %s%s" % (i["name"], i["topology"] or "-", m, (" " + " ".join(args)) if args else ""))
PY
}

# 1. The guide's project: a job per family (tpu, multihost, slow) and the
#    unmarked rest; JAX named by its tests, so both slices emulate it.
cp -r "$src/specs/guide" guide
cd guide || exit 1
run_tpuci init
expect_code 0 "init in specs/guide"
expect_out "tpuci init: wrote tpuci.lua from pytest.ini ([pytest]): 3 markers and no test paths, 4 jobs: unmarked, slow, tpu on a v4-8, multihost on a v4-16"
want="unmarked - not multihost and not tpu and not slow
slow - slow and not multihost and not tpu
tpu v4-8 tpu and not multihost
multihost v4-16 multihost"
got=$(jobs tpuci.lua)
[ "$got" = "$want" ] && pass || fail "the guide's plan:"$'\n'"$got"$'\n'"want:"$'\n'"$want"
grep -q 'topology "v4-16" { emulate = "jax" }' tpuci.lua && pass || fail "the gang does not emulate jax"
grep -q "mounts  = { \[\".\"\] = { target = \"/src\", readonly = true } }" tpuci.lua && pass ||
  fail "the project is not mounted at /src"
# Every line a comment, blank or Lua of the spec's own: no marker text
# outside a comment.
grep -q 'needs a slice of more than one host' tpuci.lua && pass || fail "no marker's description"

# 2. Never over a file: exit 2 and one line, the file as it was.
echo '-- mine' > tpuci.lua
run_tpuci init
expect_code 2 "init over tpuci.lua"
[ "$out" = "tpuci init: tpuci.lua exists; --force overwrites it, --output FILE writes another file, --stdout prints the spec" ] &&
  pass || fail "the refusal is not the one line: $out"
[ "$(cat tpuci.lua)" = "-- mine" ] && pass || fail "tpuci.lua was changed"
ln -s /nonexistent dangling.lua
run_tpuci init --output dangling.lua
expect_code 2 "init over a dangling link"
run_tpuci init --force
expect_code 0 "init --force"
[ "$(head -c 11 tpuci.lua)" = "-- tpuci.lu" ] && pass || fail "--force did not overwrite"
ls tpuci.lua.*.tmp > /dev/null 2>&1 && fail "a temporary file is left" || pass
# --stdout: the same spec, no file.
rm tpuci.lua
"$TPUCI" init --stdout > printed.lua 2> err && pass || fail "init --stdout: $(cat err)"
[ ! -e tpuci.lua ] && pass || fail "--stdout wrote tpuci.lua"
grep -q '^job "multihost"' printed.lua && pass || fail "--stdout printed no spec"
grep -q "^tpuci init: a spec from pytest.ini" err && pass || fail "--stdout said: $(cat err)"
run_tpuci init --stdout --force
expect_code 2 "--stdout with --force"
# --output in a subfolder: the mounts name the project from there.
mkdir ci
run_tpuci init --output ci/tpu.lua
expect_code 0 "init --output ci/tpu.lua"
grep -q "mounts  = { \[\"..\"\] = " ci/tpu.lua && pass || fail "ci/tpu.lua does not mount .."
"$TPUCI" plan --json ci/tpu.lua | /usr/bin/python3 -c '
import json, sys
m = json.load(sys.stdin)["instances"][0]["mounts"][0]
sys.exit(m["source"] != sys.argv[1])' "$PWD" && pass || fail "ci/tpu.lua mounts another folder"
run_tpuci init --output nowhere/x.lua
expect_code 2 "--output into a missing folder"
cd .. || exit 1

# 3. Markers registered in pyproject.toml, testpaths as pytest's
#    arguments; another table's strings are not pytest's.
mkdir proj && cd proj || exit 1
cat > pyproject.toml <<'TOML'
[project]
name = "mylib"
dependencies = ["torch", "numpy>=1.26"]
description = """
[tool.pytest.ini_options]
markers = ["decoy: not a marker"]
"""

[tool.pytest.ini_options]
minversion = "7.0"
addopts = "-ra"
testpaths = ["tests", "integration tests"]
markers = [
    "tpu: needs a TPU",          # TPU tests
    'distributed: torch.distributed over hosts',
    "slow: takes a while",
    "skip: pytest's own",
]
TOML
run_tpuci init
expect_code 0 "init with pyproject.toml"
expect_out "from pyproject.toml ([tool.pytest.ini_options]): 3 markers and 2 test paths, 4 jobs"
want="unmarked - not distributed and not tpu and not slow tests integration tests
slow - slow and not distributed and not tpu tests integration tests
tpu v4-8 tpu and not distributed tests integration tests
distributed v4-16 distributed tests integration tests"
got=$(jobs tpuci.lua)
[ "$got" = "$want" ] && pass || fail "pyproject.toml's plan:"$'\n'"$got"$'\n'"want:"$'\n'"$want"
grep -q decoy tpuci.lua && fail "another table's string was read as markers" || pass
grep -q 'topology "v4-16" { emulate = "none" }' tpuci.lua && pass || fail "no torch gang without an emulation"
# A file it cannot read: one line naming the file and line, no spec.
rm tpuci.lua
printf '[tool.pytest.ini_options]\nmarkers = [\n  "a",\n  "b"\n' > pyproject.toml
run_tpuci init
expect_code 2 "a pyproject.toml that does not parse"
[ "$out" = "tpuci init: pyproject.toml:5: ',' or ']' was expected in an array" ] && pass ||
  fail "the parse error: $out"
[ ! -e tpuci.lua ] && pass || fail "a spec was written from a broken file"
cd .. || exit 1

# 4. Each file pytest reads, and pytest's order: the first that has its
#    section wins (pytest.ini whatever it holds).
config() { # config DIR FILE TEXT
  mkdir -p "$1" && printf '%b' "$3" > "$1/$2"
}
config ini pytest.ini '[pytest]\nmarkers =\n  gpu: one\n'
config dotini .pytest.ini '[pytest]\nmarkers = gpu\n'
config toml pyproject.toml '[tool.pytest.ini_options]\nmarkers = ["gpu"]\n'
config tox tox.ini '[tox]\nenvlist = py3\n[pytest]\nmarkers =\n    gpu: one\n'
config cfg setup.cfg '[metadata]\nname = x\n[tool:pytest]\nmarkers = gpu\n'
config order pytest.ini '[other]\n'
config order pyproject.toml '[tool.pytest.ini_options]\nmarkers = ["gpu"]\n'
config order2 tox.ini '[tox]\n'
config order2 setup.cfg '[tool:pytest]\nmarkers = gpu\n'
for d in ini:pytest.ini dotini:.pytest.ini toml:pyproject.toml tox:tox.ini cfg:setup.cfg order:pytest.ini order2:setup.cfg; do
  (cd "${d%%:*}" && "$TPUCI" init > ../out 2>&1) || fail "init in ${d%%:*}: $(cat out)"
  grep -q "wrote tpuci.lua from ${d#*:} (" out && pass || fail "${d%%:*} read: $(cat out)"
  case ${d%%:*} in order) want="tests -" ;; *) want="unmarked -
gpu -" ;; esac
  got=$(cd "${d%%:*}" && jobs tpuci.lua | cut -d' ' -f1-2)
  [ "$got" = "$want" ] && pass || fail "${d%%:*}'s jobs: $got"
done
# No configuration at all: one job for every test.
mkdir none && (cd none && "$TPUCI" init > ../out 2>&1)
grep -q "wrote tpuci.lua without a pytest configuration, 1 job: tests" out && pass ||
  fail "init without a configuration: $(cat out)"
[ "$(cd none && jobs tpuci.lua)" = "tests - -" ] && pass || fail "the job for every test"

# A src layout without a Dockerfile (issue 42.1): the proposed image does
# not copy the project in, PYTHONPATH points at src/, and inputs count the
# project but its README and docs/ (and the spec itself).
mkdir -p srcl/src/pkg srcl/tests srcl/docs
touch srcl/src/pkg/__init__.py srcl/tests/test_x.py srcl/README.md srcl/docs/index.md srcl/setup.cfg
(cd srcl && "$TPUCI" init > ../out 2>&1) || fail "init in a src layout: $(cat out)"
if grep -q 'COPY' srcl/tpuci.lua; then fail "the proposed Dockerfile copies the project"; else pass; fi
grep -q '  t.env     = t.env or { PYTHONPATH = "src" }' srcl/tpuci.lua && pass ||
  fail "no PYTHONPATH for the src layout"
grep -q '  t.inputs  = t.inputs or { "setup.cfg", "src", "tests" }' srcl/tpuci.lua && pass ||
  fail "the inputs: $(grep 't.inputs' srcl/tpuci.lua)"
(cd srcl && "$TPUCI" plan tpuci.lua > ../out 2>&1) && pass || fail "the src layout's spec: $(cat out)"
# The same with --output in a subfolder: inputs are the spec folder's
# paths to the project's entries, and the plan takes them.
mkdir srcl/ci && rm srcl/tpuci.lua
(cd srcl && "$TPUCI" init --output ci/tpuci.lua > ../out 2>&1) || fail "init --output ci/: $(cat out)"
grep -q '  t.inputs  = t.inputs or { "../ci", "../setup.cfg", "../src", "../tests" }' srcl/ci/tpuci.lua &&
  pass || fail "the inputs from ci/: $(grep 't.inputs' srcl/ci/tpuci.lua)"
(cd srcl && "$TPUCI" plan ci/tpuci.lua > ../out 2>&1) && grep -q 'inputs:   ../ci, ../setup.cfg, ../src, ../tests' out &&
  pass || fail "the plan of ci/tpuci.lua: $(cat out)"

# 5. Help and completion know it.
run_tpuci --help
expect_out "  init           write a starting spec (tpuci.lua) for the project here"
run_tpuci help init
expect_out "--output FILE"
finish
