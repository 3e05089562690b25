#!/usr/bin/env bash
# tpuci rerun --failed never says "every instance passed" about a run whose
# summary says something failed: a summary it cannot match is an error
# (exit 2, one line naming the summary file), and nothing runs.
. "$TESTS/e2e/lib.sh"

cat > spec.lua <<'EOF'
job "ok" { run = "true" }
job "bad" { run = "exit 1", matrix = { v = { "a", "b" } } }
EOF
run_tpuci run spec.lua
expect_code 1 "the first run"
summary=.tpuci/runs/latest/summary.json
[ -f "$summary" ] && pass || fail "no summary.json"
cp "$summary" good.json
ls .tpuci/runs | sort > runs.before

# edit PYTHON: rewrites the latest summary.json (bound to `s`) from a copy
# of the real one.
edit() {
  /usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); exec(sys.argv[3]); json.dump(s, open(sys.argv[2], "w"))' \
    good.json "$summary" "$1"
}

# refused WHAT TEXT: rerun --failed exits 2 with one line that names the
# summary and contains TEXT, and runs nothing.
refused() {
  run_tpuci rerun --failed
  expect_code 2 "$1"
  expect_out "tpuci: $summary: " "$1"
  expect_out "$2" "$1"
  expect_not_out "nothing to run again" "$1"
  expect_not_out "every instance passed" "$1"
  [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && pass || fail "$1: not one line: $out"
  ls .tpuci/runs | sort | cmp -s - runs.before && pass || fail "$1: a run was started"
}

# The instance's name is missing (what a name that is not UTF-8 did).
edit 'del s["instances"][1]["name"]'
refused "a failed record without a name" "instance record 2 (failed) has no name"
# A failed instance the spec no longer has.
edit 's["instances"][2]["name"] = "bad[v=c]"'
refused "an unknown instance" "instance 'bad[v=c]' did not pass (failed), but spec.lua has no instance of that name"
# Counts of failures with no record naming them.
edit 's["instances"] = [i for i in s["instances"] if i["outcome"] == "passed"]'
refused "failed counts, passing records" "its counts say 2 instances did not pass, but 0 instance records say which"
edit 's["instances"] = []'
refused "failed counts, no records" "its counts say 2 instances did not pass, but 0 instance records say which"
# A failed run and no counts at all.
edit 'del s["counts"]; s["instances"] = [i for i in s["instances"] if i["outcome"] == "passed"]'
refused "a failed exit code, passing records" "the run failed (exit 1) but no instance record says which did not pass"

# The real summary still works: the two failed instances run again.
cp good.json "$summary"
run_tpuci rerun --failed
expect_code 1 "rerun of the real summary"
expect_out "2 instances did not pass; running them again"
expect_json '[i["name"] for i in s["instances"]]' "['bad[v=a]', 'bad[v=b]']"
# And a run where everything passed has nothing to run again.
cat > spec.lua <<'EOF'
job "ok" { run = "true" }
job "bad" { run = "true", matrix = { v = { "a", "b" } } }
EOF
run_tpuci run spec.lua
run_tpuci rerun --failed
expect_code 0 "nothing failed"
expect_out "nothing to run again: every instance passed in run latest"
finish
