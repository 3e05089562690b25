#!/usr/bin/env bash
# Workflows exported from real specs (through the tpuci-export-github
# driver, which loads a spec as `tpuci plan` does), read back by PyYAML, a
# YAML 1.1 reader: `on` must stay a string key, names and versions must
# stay strings, the matrix must list the spec's jobs (and shards), the
# build and the recorded durations must be cached; each shard entry's
# --only must select its shard; the timings-save job's merge (jq) must
# keep each test's newest duration, its history merge must make the
# entries' runs one run of the history; and a spec with 300 jobs must fail
# per-job export with one clear line. Skips (exit 77)
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
  if (cd "$ROOT" && "$DRIVER" "${GH_SOURCE[@]}" $flag "$spec") > "$WORK/wf.yml" 2> "$WORK/err"; then pass
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
want(wf.get("on") == ["push", "pull_request", "workflow_dispatch"], "on: %r" % wf.get("on"))
want(wf.get("permissions", {}).get("contents") == "read", "permissions: %r" % wf.get("permissions"))
jobs = wf["jobs"]
pytest = any(i.get("pytest") for i in plan["instances"])
per_job_timings = mode == "per-job" and pytest
want(list(jobs) == (["timings", "tpuci", "timings-save"] if per_job_timings else ["tpuci"]) +
     (["report"] if mode == "per-job" else []), "jobs: %r" % list(jobs))
if mode == "per-job":
    # The last job merges every entry's run (tpuci merge) whatever the
    # entries did; its download takes the entries' artifacts (tpuci-SLUG)
    # and neither the durations' (tpuci.timings.SLUG) nor its own.
    import fnmatch
    rep = jobs["report"]
    want(rep["needs"] == ["tpuci"] and rep["if"] == "always()", "report job: %r" % rep)
    rsteps = {s["name"]: s for s in rep["steps"]}
    dl = rsteps["Download every entry's run folder"]["with"]
    pattern = dl["pattern"]
    slugs = [e["slug"] for e in jobs["tpuci"]["strategy"]["matrix"]["include"]]
    want(all(fnmatch.fnmatchcase("tpuci-" + s, pattern) for s in slugs), "download pattern %r" % pattern)
    want(not any(fnmatch.fnmatchcase(n, pattern) for n in ["tpuci.timings." + s for s in slugs] +
                 ["tpuci.report"]), "download pattern %r takes other artifacts" % pattern)
    merge = rsteps["Merge the entries' runs"]
    want("tpuci merge " in merge["run"] and merge["env"]["TPUCI_ENTRIES"] == str(len(slugs)),
         "merge step: %r" % merge)
    want(rsteps["Upload the merged report"]["with"]["name"] == "tpuci.report", "report artifact")
    want("Restore the tpuci build" in rsteps, "the report job builds or restores tpuci")
job = jobs["tpuci"]
want(job["runs-on"] == "ubuntu-latest", "runs-on")
steps = {s["name"]: s for s in job["steps"]}
order = [s["name"] for s in job["steps"]]
want(job["steps"][0].get("uses") == "actions/checkout@v4", "checkout step")
want("apt-get install" in steps["Install tpuci's build dependencies"]["run"], "apt-get step")
build = steps["Build and install tpuci"]
want("cmake -S tpuci -B tpuci/build" in build["run"] and
     'cmake --install tpuci/build --prefix "$RUNNER_TEMP/tpuci-install"' in build["run"], "build step")
# The build is cached by the key the commit step makes (runner, image,
# tpuci's commit), restored before and saved after.
key = "${{ steps.tpuci-commit.outputs.key }}"
want(steps["Restore the tpuci build"]["with"]["key"] == key, "build cache key")
want(steps["Save the tpuci build"]["with"]["key"] == key, "build cache save key")
want(build["if"] == "steps.tpuci-build.outputs.cache-hit != 'true'", "build only on a cache miss")
want(order.index("Restore the tpuci build") < order.index("Build and install tpuci") <
     order.index("Save the tpuci build") < order.index("Run the spec"), "order %r" % order)
run = steps["Run the spec"]
want(run["env"]["TPUCI_SPEC"] == spec, "TPUCI_SPEC = %r" % run["env"]["TPUCI_SPEC"])
want("--report-json tpuci-report.json --report-yaml tpuci-report.yaml --report-html "
     "tpuci-report.html --junit tpuci-junit.xml" in run["run"], "the run line: %r" % run["run"])
up = steps["Upload the reports and the run folder"]
want(up.get("uses") == "actions/upload-artifact@v4" and up.get("if") == "always()", "upload step")
want(up["with"].get("include-hidden-files") is True, "include-hidden-files")
want(".tpuci/runs/" in up["with"]["path"].split("\n"), "upload path")
# The results cache: restored before the run, saved after it.
want(order.index("Restore the results cache") < order.index("Run the spec") <
     order.index("Save the results cache"), "results cache order")
want(steps["Restore the results cache"]["with"]["restore-keys"].startswith("tpuci-results-"),
     "results cache restore-keys")
# The recorded durations: restored before the run, saved after it.
if pytest:
    r = steps["Restore the recorded test durations"]
    want(r["with"]["path"].split() == [".tpuci/timings.json", ".tpuci/history.jsonl"], "timings and history path")
    want(order.index("Restore the recorded test durations") < order.index("Run the spec"), "timings order")
    if mode == "per-job":
        want(job["needs"] == "timings", "needs timings")
        want(r["with"]["key"] == "${{ needs.timings.outputs.key || 'tpuci-timings-none' }}", "entry key")
        want("restore-keys" not in r["with"], "entries restore exactly the key the timings job found")
        want(jobs["timings"]["outputs"]["key"] == "${{ steps.find.outputs.cache-matched-key }}", "timings output")
        want(jobs["timings-save"]["needs"] == ["timings", "tpuci"] and jobs["timings-save"]["if"] == "always()", "timings-save")
    else:
        want(r["with"]["restore-keys"] == "tpuci-timings-", "restore-keys")
        save = steps["Save the recorded test durations"]
        want(save["if"].startswith("always()") and save["uses"] == "actions/cache/save@v4", "timings save")
else:
    want("Restore the recorded test durations" not in steps, "timings without pytest jobs")
names = []
for inst in plan["instances"]:
    key = inst["job"]
    sh = (inst.get("pytest") or {}).get("shard")
    if mode == "per-job" and sh:
        key = "%s (shard %s/%s)" % (inst["job"], sh, inst["pytest"]["shards"])
    if key not in names:
        names.append(key)
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
check tests/pytest/spec.lua single
check tests/pytest/spec.lua per-job

# Per job, each shard of a sharded pytest job is an entry whose --only
# selects exactly that shard's instances, as tpuci plan sees them.
(cd "$ROOT" && "$TPUCI" export github "${GH_SOURCE[@]}" --per-job tests/pytest/spec.lua) > "$WORK/shards.yml"
python3 -c 'import sys, yaml
for e in yaml.safe_load(open(sys.argv[1]))["jobs"]["tpuci"]["strategy"]["matrix"]["include"]:
    print(e["job"] + "\t" + e["only"])' "$WORK/shards.yml" > "$WORK/entries.tsv"
while IFS=$'\t' read -r job only; do
  case "$job" in *"(shard "*) ;; *) continue ;; esac
  n=${job##*(shard }; n=${n%)}
  got=$(cd "$ROOT" && "$TPUCI" plan --json --only "$only" tests/pytest/spec.lua |
        python3 -c 'import json,sys; print(" ".join(i["name"] for i in json.load(sys.stdin)["instances"]))')
  [ "$got" = "sharded[shard=$n]" ] && pass || fail "entry '$job' (--only '$only') selects '$got'"
done < "$WORK/entries.tsv"

# The merge of the timings-save job, run as GitHub would run it (jq is on
# GitHub's runners): per test, the entry that ran it wins over the ones
# that only restored it.
if command -v jq > /dev/null; then
  python3 -c 'import sys, yaml
for s in yaml.safe_load(open(sys.argv[1]))["jobs"]["timings-save"]["steps"]:
    if s["name"] == "Merge the recorded durations": print(s["run"], end="")' "$WORK/shards.yml" > "$WORK/merge.sh"
  mkdir -p "$WORK/m/timings/a" "$WORK/m/timings/b"
  echo '{"tests": {"t::x": {"avg": 1.0, "last": 1.0, "runs": 2}, "t::y": {"avg": 5.0, "last": 5.0, "runs": 1}}, "version": 1}' > "$WORK/m/timings/a/timings.json"
  echo '{"tests": {"t::x": {"avg": 9.0, "last": 9.0, "runs": 1}, "t::y": {"avg": 2.0, "last": 2.0, "runs": 2}, "t::z": {"avg": 3.0, "last": 3.0, "runs": 1}}, "version": 1}' > "$WORK/m/timings/b/timings.json"
  (cd "$WORK/m" && bash -e "$WORK/merge.sh" > /dev/null)
  got=$(python3 -c 'import json,sys; t = json.load(open(sys.argv[1]))["tests"]; print(*(float(t[k]["avg"]) for k in ("t::x", "t::y", "t::z")))' "$WORK/m/.tpuci/timings.json" 2>&1)
  [ "$got" = "1.0 2.0 3.0" ] && pass || fail "merged durations: $got"
  # tpuci reads the merged file back.
  mkdir -p "$WORK/m/s" && cp -r "$WORK/m/.tpuci" "$WORK/m/s/" && cat > "$WORK/m/s/spec.lua" <<'LUA'
job "j" { run = "true" }
LUA
  (cd "$WORK/m/s" && "$TPUCI" run spec.lua > run.out 2>&1) && ! grep -q "timings" "$WORK/m/s/run.out" && pass ||
    fail "tpuci does not read the merged timings.json: $(cat "$WORK/m/s/run.out")"
  # The histories: the base the entries restored, plus one run made of
  # every entry's own (the lines they appended), which tpuci flaky reads.
  python3 -c 'import sys, yaml
for s in yaml.safe_load(open(sys.argv[1]))["jobs"]["timings-save"]["steps"]:
    if s["name"] == "Merge the recorded histories": print(s["run"], end="")' "$WORK/shards.yml" > "$WORK/merge-h.sh"
  mkdir -p "$WORK/h/.tpuci" "$WORK/h/timings/a" "$WORK/h/timings/b" "$WORK/h/timings/c"
  base='{"run":"r0","time":1,"commit":null,"tests":[["u[shard=1/2]","t::x","p",0.1,null]]}'
  echo "$base" > "$WORK/h/.tpuci/history.jsonl"
  { echo "$base"; echo '{"run":"ra","time":5,"commit":"ab","tree":"ab:00ff","tests":[["u[shard=1/2]","t::x","f",0.1,"boom"]]}'; } > "$WORK/h/timings/a/history.jsonl"
  { echo "$base"; echo '{"run":"rb","time":4,"commit":"ab","tree":"ab:00ff","tests":[["u[shard=2/2]","t::y","p",0.2,null]]}'; } > "$WORK/h/timings/b/history.jsonl"
  echo "$base" > "$WORK/h/timings/c/history.jsonl"   # an entry without pytest results
  (cd "$WORK/h" && bash -e -o pipefail "$WORK/merge-h.sh" > /dev/null)
  got=$(python3 -c 'import json,sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(len(rows), rows[0]["run"], rows[1]["run"], rows[1]["time"], rows[1]["tree"], sorted(t[1] + ":" + t[2] for t in rows[1]["tests"]))' "$WORK/h/.tpuci/history.jsonl" 2>&1)
  [ "$got" = "2 r0 ra 4 ab:00ff ['t::x:f', 't::y:p']" ] && pass || fail "merged history: $got"
  (cd "$WORK/h" && "$TPUCI" flaky --json > flaky.out 2>&1) &&
    python3 -c 'import json,sys; r = json.load(open(sys.argv[1])); assert r["runs"] == ["r0", "ra"] and r["tests"][0]["outcomes"] == "pf", r' "$WORK/h/flaky.out" &&
    pass || fail "tpuci flaky does not read the merged history: $(cat "$WORK/h/flaky.out")"
else
  fail "jq is missing (Debian package jq; tests/deps.sh)"
fi

# The build cache's key, as the "Find tpuci's commit" step makes it on a
# runner (bash, as GitHub runs steps): the OS, the CPU architecture, the
# hosted runner's image and version (else /etc/os-release) and the
# commit ls-remote finds, so an ARM64 runner or a new image never
# restores another one's build (issue 24.5).
python3 -c 'import sys, yaml
for s in yaml.safe_load(open(sys.argv[1]))["jobs"]["tpuci"]["steps"]:
    if s["name"] == "Find tpuci'"'"'s commit": print(s["run"], end="")' "$WORK/shards.yml" > "$WORK/commit.sh"
git init -q "$WORK/src" && git -C "$WORK/src" -c user.name=t -c user.email=t@t commit -q --allow-empty -m x &&
  sha=$(git -C "$WORK/src" rev-parse HEAD) || fail "cannot make a repository for ls-remote"
os_image=$( (. /etc/os-release && echo "${ID:-unknown}-${VERSION_ID:-}") 2> /dev/null || echo unknown)
build_key() { # ARCH IMAGEOS IMAGEVERSION: the key the step writes
  : > "$WORK/gh_output"
  (cd "$WORK" && env -u ImageOS -u ImageVersion TPUCI_SOURCE="$WORK/src" TPUCI_REF=HEAD \
     RUNNER_OS=Linux RUNNER_ARCH="$1" ${2:+ImageOS=$2} ${3:+ImageVersion=$3} \
     GITHUB_OUTPUT="$WORK/gh_output" bash --noprofile --norc -eo pipefail "$WORK/commit.sh") &&
    sed -n 's/^key=//p' "$WORK/gh_output"
}
got=$(build_key X64 ubuntu24 20251208.1.0)
[ "$got" = "tpuci-Linux-X64-ubuntu24-20251208.1.0-$sha" ] && pass || fail "hosted runner's key: '$got'"
got=$(build_key ARM64 ubuntu24 20251208.1.0)
[ "$got" = "tpuci-Linux-ARM64-ubuntu24-20251208.1.0-$sha" ] && pass || fail "ARM64 runner's key: '$got'"
got=$(build_key X64 ubuntu22 20251208.1.0)
[ "$got" = "tpuci-Linux-X64-ubuntu22-20251208.1.0-$sha" ] && pass || fail "another image's key: '$got'"
got=$(build_key X64 "" "")
[ "$got" = "tpuci-Linux-X64-$os_image-$sha" ] && pass || fail "self-hosted runner's key: '$got', want the OS release $os_image"
grep -q "^sha=$sha\$" "$WORK/gh_output" && pass || fail "the step's sha output: $(cat "$WORK/gh_output")"

# --schedule: `on` becomes a mapping (push, pull_request and
# workflow_dispatch, then the schedule), read back by a YAML 1.1 reader
# with `on` still a string and the cron entry as given.
(cd "$ROOT" && "$TPUCI" export github "${GH_SOURCE[@]}" --schedule '0 3 * * 1' tests/e2e/specs/basic.lua) > "$WORK/sched.yml"
got=$(python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); print(sorted(d["on"]), d["on"]["schedule"])' "$WORK/sched.yml" 2>&1)
[ "$got" = "['pull_request', 'push', 'schedule', 'workflow_dispatch'] [{'cron': '0 3 * * 1'}]" ] && pass ||
  fail "--schedule's triggers: $got"
out=$(cd "$ROOT" && "$TPUCI" export github "${GH_SOURCE[@]}" --schedule '0 3 * * 8' tests/e2e/specs/basic.lua 2>&1); code=$?
expect_code 2 "a bad schedule"
expect_out "tpuci: the workflow's schedule: the day of the week '8' is not 0-6 (or SUN-SAT)"

# A job called "on" and one called "3.10" keep their names.
cat > "$WORK/names.lua" <<'LUA'
job "on" { run = "true" }
job "3.10" { run = "true" }
job "yes" { matrix = { v = { "1", "2" } }, run = "true" }
job "a/b:c+d@e" { run = "true" }
LUA
(cd "$WORK" && "$DRIVER" "${GH_SOURCE[@]}" --per-job names.lua) > "$WORK/names.yml"
got=$(python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); print([e["job"] for e in d["jobs"]["tpuci"]["strategy"]["matrix"]["include"]])' "$WORK/names.yml")
if [ "$got" = "['on', '3.10', 'yes', 'a/b:c+d@e']" ]; then pass; else fail "names read back as $got"; fi

# 300 jobs: one line naming the count and the limit.
for i in $(seq 1 300); do echo "job \"j$i\" { run = \"true\" }"; done > "$WORK/spec.lua"
(cd "$WORK" && "$DRIVER" "${GH_SOURCE[@]}" --per-job spec.lua) > /dev/null 2> "$WORK/err"
code=$?
out=$(cat "$WORK/err")
expect_code 1 "300 jobs per-job"
expect_out "tpuci-export-github: spec.lua: 300 jobs exceed GitHub's limit of 256 matrix entries per workflow job; "
if [ "$(wc -l < "$WORK/err")" = 1 ]; then pass; else fail "the error is not one line"; fi
(cd "$WORK" && "$DRIVER" "${GH_SOURCE[@]}" spec.lua) > /dev/null 2>&1
code=$?
expect_code 0 "300 jobs in one workflow job"
finish
