#!/usr/bin/env bash
# Issue 42.6: a flip is a flip on one tree. Every run records its tree
# (the commit and the files of the work tree); a change of result counts
# as a flip only between runs of one tree. test_fixed fails on commit A
# twice, its bug is fixed and committed as B, and it passes: `tpuci flaky
# --propose` does not propose it; test_flip flips on A and on B: it is
# proposed, with the runs of each tree it rests on. An uncommitted edit
# makes a tree of its own; outside git, where no tree is known, a change
# of result counts only between runs from the same inputs.
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }

mkdir -p proj/tests
cd proj || exit 1
git init -q .
cat > spec.lua <<'LUA'
job "t" { pytest = { python = "/usr/bin/python3", args = { "tests/" } },
          workdir = tpuci.spec_dir,
          env = { RUN_FILE = tpuci.env("RUN_FILE", "/nonexistent") } }
LUA
printf 'def add(a, b):\n    return a - b\n' > tests/calc.py
cat > tests/test_t.py <<'PY'
import os

from calc import add


def test_fixed():
    assert add(2, 2) == 4, "add is wrong"


def test_flip():
    assert int(open(os.environ["RUN_FILE"]).read()) % 2 == 1, "fails on even runs"


def test_ok():
    pass
PY
commit() { git add -A && git -c user.email=t@t -c user.name=t commit -qm "$1"; }
# run N: tpuci run with RUN_FILE saying N; its output outside the project.
run() {
  echo "$1" > "$WORK/run.txt"
  RUN_FILE=$WORK/run.txt "$TPUCI" run -q --no-cache spec.lua > "$WORK/run$1.out" 2>&1
}
# The id and the tree of run N (1-based) of the history.
field() {
  /usr/bin/python3 -c 'import json, sys
print(json.loads(open(".tpuci/history.jsonl").read().splitlines()[int(sys.argv[1]) - 1])[sys.argv[2]])' "$1" "$2"
}
short() { printf '%s:%s' "$(printf '%s' "${1%%:*}" | cut -c1-7)" "$(printf '%s' "${1#*:}" | cut -c1-8)"; }

commit A
run 1
run 2
printf 'def add(a, b):\n    return a + b\n' > tests/calc.py
commit "B: the fix"
run 3
run 4
run 5

# Each run's tree: the commit (as the line's commit says) and the files;
# the state folder (.tpuci, inside the project here) is not of it.
a=$(git rev-parse HEAD~1)
b=$(git rev-parse HEAD)
t1=$(field 1 tree) t2=$(field 2 tree) t3=$(field 3 tree) t5=$(field 5 tree)
case "$t1" in "$a":*) pass ;; *) fail "run 1's tree is not of commit A: $t1" ;; esac
case "$t3" in "$b":*) pass ;; *) fail "run 3's tree is not of commit B: $t3" ;; esac
[ "$t1" = "$t2" ] && pass || fail "runs 1 and 2 are of two trees: $t1, $t2"
[ "$t3" = "$t5" ] && pass || fail "runs 3 and 5 are of two trees: $t3, $t5"
[ "$(field 3 commit)" = "$b" ] && pass || fail "run 3's commit: $(field 3 commit)"

run_tpuci flaky --json
expect_code 0 "flaky --json"
got=$(printf '%s' "$out" | /usr/bin/python3 -c 'import json, sys
r = json.load(sys.stdin)
print(len(set(r["trees"])), sorted((t["id"].split("::")[1], t["outcomes"], t["flips"], len(t["flip_runs"])) for t in r["tests"]))')
want="2 [('test_fixed', 'ffppp', 0, 0), ('test_flip', 'pfpfp', 3, 5)]"
[ "$got" = "$want" ] && pass || fail "flaky --json: $got, want $want"

run_tpuci flaky --propose
expect_code 0 "--propose"
expect_out "# tpuci flaky --propose: 1 test flipped in at least 10% of its runs in the last 5 runs"
expect_not_out "test_fixed" "a fixed test is not proposed"
expect_out "- test: \"tests/test_t.py::test_flip\"
  # tree $(short "$t1"): run $(field 1 run) p, run $(field 2 run) f
  # tree $(short "$t3"): run $(field 3 run) p, run $(field 4 run) f, run $(field 5 run) p
  reason: \"flaky: flip rate 0.60 (3 flips in 5 runs of t), last failed in run $(field 4 run): AssertionError: fails on even runs"

# An uncommitted edit: the same commit, another tree. Run 6 fails
# test_flip after run 5's pass, on a tree of its own: no flip.
printf '# not committed\n' >> tests/calc.py
run 6
t6=$(field 6 tree)
case "$t6" in "$b":*) pass ;; *) fail "run 6's tree is not of commit B: $t6" ;; esac
[ "$t6" != "$t5" ] && pass || fail "an uncommitted edit left the tree as it was: $t6"
run_tpuci flaky --json
got=$(printf '%s' "$out" | /usr/bin/python3 -c 'import json, sys
print([(t["outcomes"], t["flips"]) for t in json.load(sys.stdin)["tests"] if t["id"].endswith("test_flip")])')
[ "$got" = "[('pfpfpf', 3)]" ] && pass || fail "a change across an uncommitted edit counted: $got"

# Outside git: no tree is recorded, but each run says what its instance
# ran from (the results cache's input key): two runs from the same inputs
# whose results differ are a flip (test_flip); a change of the files
# between two runs makes any change of result none (test_fixed broken by
# an edit is no flip, and test_flip's pass after it is none either).
cd "$WORK" && mkdir plain && cp -r proj/spec.lua proj/tests plain/ && cd plain || exit 1
run 1
run 2
[ "$(field 1 tree)" = None ] && pass || fail "a run outside git has a tree: $(field 1 tree)"
[ "$(field 1 inputs)" = "$(field 2 inputs)" ] && pass ||
  fail "two runs of one folder recorded other inputs: $(field 1 inputs), $(field 2 inputs)"
printf 'def add(a, b):\n    return a * b + 1\n' > tests/calc.py
run 3
[ "$(field 2 inputs)" != "$(field 3 inputs)" ] && pass || fail "an edit left the inputs as they were"
run_tpuci flaky --json
got=$(printf '%s' "$out" | /usr/bin/python3 -c 'import json, sys
r = json.load(sys.stdin)
print(sorted((t["id"].split("::")[1], t["outcomes"], t["flips"]) for t in r["tests"]))')
want="[('test_fixed', 'ppf', 0), ('test_flip', 'pfp', 1)]"
[ "$got" = "$want" ] && pass || fail "flaky --json outside git: $got, want $want"
run_tpuci flaky --propose
expect_out "- test: \"tests/test_t.py::test_flip\""
expect_not_out "test_fixed" "a test an edit broke is not proposed"
finish
