#!/usr/bin/env bash
# The results cache against the real engine, real pytest in the
# tpuci-test/python:1 image and a mounted git checkout (docs/cache.md):
# with nothing changed every pass is taken, and changing one byte of a
# mounted source, the image (a rebuilt image under the same tag), an env
# value or the spec reruns exactly the instances it affects; an untracked
# file inside a mount counts, a .gitignored one does not; failed, flaky,
# timeout and infra results are never taken; --no-cache and cache = false
# turn it off; the merged JUnit keeps a cached instance's test cases.
. "$TESTS/e2e/lib.sh"
unset TPUCI_NO_CACHE
need_python_image tpuci-test/python:1
command -v git > /dev/null || { echo "SKIP: no git"; exit 77; }

tag="tpuci-cache-test/python:$$"
cleanup() { docker rmi -f "$tag" > /dev/null 2>&1; rm -rf "$WORK"; }
trap cleanup EXIT
# An image of our own under one tag: FROM the test image, with a label
# that changes its id.
build_image() {
  printf 'FROM tpuci-test/python:1\nLABEL tpuci.cache.test="%s"\n' "$1" |
    DOCKER_BUILDKIT=0 docker build -q -t "$tag" - > /dev/null 2>&1 || { echo "FAIL: docker build"; exit 1; }
}
build_image one

repo=$WORK/repo
# The summary of the checkout's own state folder.
json() {
  /usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
    "$repo/.tpuci/runs/latest/summary.json" "$1"
}
flag=$WORK/flaky-flag
mkdir -p "$repo/tests/a" "$repo/tests/b" "$repo/docs"
cd "$repo" || exit 1
git init -q
printf 'def test_a1():\n    pass\n\ndef test_a2():\n    pass\n' > tests/a/test_a.py
printf 'def test_b():\n    assert 1 + 1 == 2\n' > tests/b/test_b.py
echo "readme" > README.md
echo "guide" > docs/guide.md
printf '.tpuci/\n*.log\n' > .gitignore
cat > spec.lua <<EOF
image "py" { ref = "tpuci-test/python:1", pull = "never" }
image "own" { ref = "$tag", pull = "never" }
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
local ro = function(t) return { target = t, readonly = true } end
job "all" { image = "py", mounts = { ["."] = ro("/src") }, workdir = "/src",
            pytest = { args = { "tests/" } } }
job "a" { image = "py", mounts = { ["tests/a"] = ro("/src/tests/a") }, workdir = "/src",
          pytest = { args = { "tests/a" } } }
job "b" { image = "py", mounts = { ["tests/b"] = ro("/src/tests/b") }, workdir = "/src",
          pytest = { args = { "tests/b" } }, timeout = "5m" }
job "env" { image = "py", mounts = { ["tests/b"] = ro("/src/tests/b") }, workdir = "/src",
            env = { MODE = tpuci.env("CACHE_MODE", "one") }, pytest = { args = { "tests/b" } } }
job "img" { image = "own", mounts = { ["tests/b"] = ro("/src/tests/b") }, workdir = "/src",
            pytest = { args = { "tests/b" } } }
job "src" { image = "py", mounts = { ["."] = ro("/src") }, workdir = "/src",
            inputs = { "tests/**" }, pytest = { args = { "tests/b" } } }
job "nocache" { image = "bb", run = "true", cache = false }
job "local" { workdir = "tests/a", run = "test -f test_a.py" }
job "fail" { image = "bb", run = "exit 3" }
job "timeout" { image = "bb", run = "sleep 30", timeout = "1s", grace = "1s" }
job "infra" { image = "bb", run = "true", network = "tpuci-cache-no-such-network" }
job "flaky" { workdir = "docs", run = "if [ -f '$flag' ]; then rm -f '$flag'; exit 0; fi; touch '$flag'; exit 1",
              retries = { attempts = 2, on = { "failed" } } }
EOF
git add . && git -c user.email=t@t -c user.name=t commit -qm init
all_names="all a b env img src nocache local fail timeout infra flaky"

# run_cache [ARGS...]: a run; $outcomes becomes "name=outcome ..." of
# the summary.
run_cache() {
  run_tpuci run -j 4 "$@" spec.lua
  outcomes=$(/usr/bin/python3 -c 'import json; s=json.load(open(".tpuci/runs/latest/summary.json"));
print(" ".join("%s=%s" % (i["name"], i["outcome"]) for i in s["instances"]))')
}
# cached_set: the names whose outcome is cached, sorted.
cached_set() { printf '%s\n' $outcomes | sed -n 's/=cached$//p' | sort | tr '\n' ' ' | sed 's/ $//'; }
# expect_cached WHAT NAMES...: exactly these instances are cached.
expect_cached() {
  local what=$1 want got
  shift
  want=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//')
  got=$(cached_set)
  if [ "$got" = "$want" ]; then pass; else fail "$what: cached '$got', want '$want' ($outcomes)"; fi
  # Whatever did not pass is never reported as cached.
  for n in fail timeout infra flaky nocache; do
    case " $outcomes " in *" $n=cached "*) fail "$what: $n reported as cached" ;; *) pass ;; esac
  done
}
passing="all a b env img src local"

# 1. The first run runs everything; what did not pass is not stored.
run_cache
expect_code 1 "first run"
expect_cached "first run"
for want in all=passed a=passed local=passed fail=failed timeout=timeout infra=infra flaky=flaky nocache=passed; do
  case " $outcomes " in *" $want "*) pass ;; *) fail "first run: want $want in $outcomes" ;; esac
done
n=$(ls .tpuci/cache/*.json 2> /dev/null | wc -l)
[ "$n" = 7 ] && pass || fail "first run stored $n entries, want 7 (the passes)"

# 2. Nothing changed: every pass is taken; the rest runs again.
run_cache
expect_cached "unchanged" $passing
expect_json 's["cache"]["hits"]' 7
expect_out "[cached ] all: passed in run"
# show says cached; rerun --failed takes cached as passed.
run_tpuci show
expect_out "cached"
run_tpuci rerun --failed
expect_out "tpuci rerun: 3 instances did not pass"
# The cached pytest instance keeps its test cases, marked.
run_tpuci run --junit "$WORK/j.xml" --only all --only b spec.lua
expect_code 0 "cached only"
grep -q 'name="tpuci.cached"' "$WORK/j.xml" && pass || fail "junit: no tpuci.cached property"
# (named INSTANCE.MODULE as every pytest test case: docs/pytest.md)
grep -q 'testcase classname="all.tests.a.test_a" name="test_a2"' "$WORK/j.xml" && pass ||
  fail "junit: the cached instance lost its test cases: $(grep -o '<testcase [^>]*>' "$WORK/j.xml" | head -3)"
expect_json '[t["outcome"] for t in s["instances"][0]["tests"]]' "['passed', 'passed', 'passed']"
# Under GitHub Actions: no annotation for a cached pass; the step summary
# lists and counts it.
GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$WORK/step.md" run_tpuci run --only all --only b spec.lua
expect_code 0 "cached under GitHub Actions"
expect_not_out "::error"
expect_not_out "::warning"
grep -q '| cached | 1 |' "$WORK/step.md" && pass || fail "step summary: no cached row"
grep -q '0 passed, 2 cached,' "$WORK/step.md" && pass || fail "step summary: no cached count"

# 3. One byte of a mounted source: the instances that mount it.
sed -i 's/1 + 1 == 2/1 + 1 == 3/' tests/b/test_b.py
sed -i 's/1 + 1 == 3/1 + 1 == 2/' tests/b/test_b.py   # back: same content
run_cache
expect_cached "same content after edits" $passing
sed -i 's/== 2/== 2 /' tests/b/test_b.py
run_cache
expect_cached "tests/b changed" a local

# 4. An untracked file inside a mount counts; a .gitignored one does not.
run_cache   # stores the new keys
echo "data" > tests/a/untracked.txt
run_cache
expect_cached "untracked file in tests/a" b env img
run_cache
echo "noise" > tests/a/debug.log
run_cache
expect_cached "ignored file in tests/a" $passing

# 5. A docs change: only what mounts the whole checkout without inputs.
echo "more" >> docs/guide.md
run_cache
expect_cached "docs changed" a b env img src local

# 6. An env value: the job that has it, and the local job, which
# inherits every variable of tpuci's environment (issue 30).
CACHE_MODE=two run_cache
expect_cached "env value" all a b img src
CACHE_MODE=two run_cache
expect_cached "same env value again" $passing

# 7. The image: a rebuilt image under the same tag.
build_image two
CACHE_MODE=two run_cache
expect_cached "image rebuilt" all a b env src local

# 8. The spec: a job's entry changed reruns that job only; a comment
# (line numbers move) reruns nothing.
sed -i 's/timeout = "5m"/timeout = "6m"/' spec.lua
CACHE_MODE=two run_cache
expect_cached "spec: b's timeout" all a env img src local
sed -i '1i -- a comment: every job moves down a line' spec.lua
CACHE_MODE=two run_cache
expect_cached "spec: a comment" $passing

# 9. --no-cache runs everything and stores nothing new.
CACHE_MODE=two run_cache --no-cache
expect_cached "--no-cache"
expect_json 's["cache"]["enabled"]' False

# 10. plan --keys says what each key is made of, and why not.
run_tpuci plan --keys spec.lua
expect_code 0 "plan --keys"
expect_out "not cached: cache = false"
expect_out "mount:   $repo -> /src: git"
run_tpuci plan --keys --json spec.lua
expect_code 0 "plan --keys --json"
printf '%s' "$out" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
by = {i["name"]: i for i in d["instances"]}
assert by["nocache"]["key"] is None and by["nocache"]["why"] == "cache = false", by["nocache"]
assert by["img"]["inputs"]["image"].startswith("sha256:"), by["img"]
assert by["src"]["inputs"]["mounts"][0]["how"] == "git", by["src"]
' && pass || fail "plan --keys --json"

# 11. A corrupt entry is a miss with a warning, never an error.
for f in .tpuci/cache/*.json; do printf '{"format": 1, "trunc' > "$f"; done
CACHE_MODE=two run_cache
expect_out "warning: ignoring a cache entry"
expect_cached "corrupt entries"
CACHE_MODE=two run_cache
expect_cached "entries written again" $passing

finish
