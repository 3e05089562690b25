#!/usr/bin/env bash
# Workflows exported from real specs (through the tpuci-export-github
# driver, which loads a spec as `tpuci plan` does), read back by PyYAML, a
# YAML 1.1 reader: `on` must stay a string key, names and versions must
# stay strings, the matrix must list the spec's jobs; and a spec with 300
# jobs must fail per-job export with one clear line. Skips (exit 77)
# without python3's yaml module (Debian package python3-yaml).
if ! python3 -c 'import yaml' 2> /dev/null; then
  echo "SKIP: python3 with the yaml module (Debian package python3-yaml) is needed" >&2
  exit 77
fi
. "$TESTS/e2e/lib.sh"
DRIVER=${TPUCI_EXPORT_GITHUB:-${TPUCI_BUILD:+$TPUCI_BUILD/tests/export/tpuci-export-github}}
if [ -z "$DRIVER" ] || [ ! -x "$DRIVER" ]; then
  fail "the tpuci-export-github driver is missing (TPUCI_EXPORT_GITHUB='$DRIVER')"
  finish
fi
ROOT=$(cd "$TESTS/.." && pwd)

# check SPEC MODE: exports SPEC (a path from the repository's root) and
# checks the workflow against `tpuci plan --json`.
check() {
  local spec=$1 mode=$2 flag=""
  [ "$mode" = per-job ] && flag=--per-job
  if (cd "$ROOT" && "$DRIVER" $flag "$spec") > "$WORK/wf.yml" 2> "$WORK/err"; then pass
  else fail "export $spec $mode: $(cat "$WORK/err")"; return; fi
  (cd "$ROOT" && "$TPUCI" plan --json "$spec") > "$WORK/plan.json" || { fail "tpuci plan $spec"; return; }
  if python3 - "$WORK/wf.yml" "$WORK/plan.json" "$spec" "$mode" <<'PY'
import json, sys, yaml
wf = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
plan = json.load(open(sys.argv[2]))
spec, mode = sys.argv[3], sys.argv[4]
bad = []
def want(cond, what):
    if not cond: bad.append(what)
want(all(isinstance(k, str) for k in wf), "a top-level key is not a string: %r" % list(wf))
want(wf.get("on") == ["push", "pull_request"], "on: %r" % wf.get("on"))
want(wf.get("permissions") == {"contents": "read"}, "permissions: %r" % wf.get("permissions"))
jobs = wf["jobs"]
want(list(jobs) == ["tpuci"], "jobs: %r" % list(jobs))
job = jobs["tpuci"]
want(job["runs-on"] == "ubuntu-latest", "runs-on")
steps = job["steps"]
want(steps[0].get("uses") == "actions/checkout@v4", "checkout step")
want("apt-get install" in steps[1]["run"], "apt-get step")
want("cmake -S tpuci -B tpuci/build" in steps[2]["run"] and
     "sudo cmake --install tpuci/build" in steps[2]["run"], "build step")
run = steps[3]
want(run["env"]["TPUCI_SPEC"] == spec, "TPUCI_SPEC = %r" % run["env"]["TPUCI_SPEC"])
want("--report-json tpuci-report.json --report-yaml tpuci-report.yaml --junit tpuci-junit.xml"
     in run["run"], "the run line: %r" % run["run"])
up = steps[4]
want(up.get("uses") == "actions/upload-artifact@v4" and up.get("if") == "always()", "upload step")
want(up["with"].get("include-hidden-files") is True, "include-hidden-files")
want(".tpuci/runs/" in up["with"]["path"].split("\n"), "upload path")
names = []
for inst in plan["instances"]:
    if inst["job"] not in names:
        names.append(inst["job"])
if mode == "per-job":
    st = job["strategy"]
    want(st["fail-fast"] is False, "fail-fast")
    inc = st["matrix"]["include"]
    want([e["job"] for e in inc] == names, "matrix jobs %r, spec jobs %r" % ([e["job"] for e in inc], names))
    want(all(isinstance(e["job"], str) and isinstance(e["only"], str) for e in inc), "non-string entries")
    want(run["env"]["TPUCI_ONLY"] == "${{ matrix.only }}", "TPUCI_ONLY")
else:
    want("strategy" not in job, "a strategy without per-job")
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
  then pass; else fail "workflow of $spec ($mode), above"; fi
}

check tests/e2e/specs/basic.lua single
check tests/e2e/specs/basic.lua per-job
check tests/html/specs/mixed.lua per-job

# A job called "on" and one called "3.10" keep their names.
cat > "$WORK/names.lua" <<'LUA'
job "on" { run = "true" }
job "3.10" { run = "true" }
job "yes" { matrix = { v = { "1", "2" } }, run = "true" }
job "a/b:c+d@e" { run = "true" }
LUA
(cd "$WORK" && "$DRIVER" --per-job names.lua) > "$WORK/names.yml"
got=$(python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); print([e["job"] for e in d["jobs"]["tpuci"]["strategy"]["matrix"]["include"]])' "$WORK/names.yml")
if [ "$got" = "['on', '3.10', 'yes', 'a/b:c+d@e']" ]; then pass; else fail "names read back as $got"; fi

# 300 jobs: one line naming the count and the limit.
for i in $(seq 1 300); do echo "job \"j$i\" { run = \"true\" }"; done > "$WORK/spec.lua"
(cd "$WORK" && "$DRIVER" --per-job spec.lua) > /dev/null 2> "$WORK/err"
code=$?
out=$(cat "$WORK/err")
expect_code 1 "300 jobs per-job"
expect_out "tpuci-export-github: spec.lua: 300 jobs exceed GitHub's limit of 256 matrix entries per workflow job; "
if [ "$(wc -l < "$WORK/err")" = 1 ]; then pass; else fail "the error is not one line"; fi
(cd "$WORK" && "$DRIVER" spec.lua) > /dev/null 2>&1
code=$?
expect_code 0 "300 jobs in one workflow job"
finish
