#!/usr/bin/env bash
# A cached pass must mean the job would pass (issue 30): each case changes
# one input that the job sees and that the key used to miss, and checks
# that the next run runs the job instead of reporting a stored pass.
# Local jobs (no engine) and, where an engine answers, containers that
# mount a folder outside the spec's, a sibling folder and a symbolic link.
. "$TESTS/e2e/lib.sh"
unset TPUCI_NO_CACHE
command -v git > /dev/null || { echo "SKIP: no git"; exit 77; }
gitc() { git -c user.email=t@t -c user.name=t "$@"; }

# outcome [DIR]: the one instance's outcome in DIR's (default .) latest
# summary.
outcome() {
  /usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1]));
print(" ".join(i["outcome"] for i in s["instances"]))' "${1:-.}/.tpuci/runs/latest/summary.json"
}
# expect_outcome WHAT WANT [DIR]
expect_outcome() {
  local got
  got=$(outcome "${3:-.}")
  if [ "$got" = "$2" ]; then pass; else fail "$1: outcome '$got', want '$2'"; printf '%s\n' "$out" | tail -n 15 >&2; fi
}

# 1. A local job inherits tpuci's whole environment: every variable it
#    can read is in its key, but for the volatile ones.
mkdir -p "$WORK/env" && cd "$WORK/env" || exit 1
cat > spec.lua <<'EOF'
job "j" { run = [[test "$MODE" = good]] }
EOF
MODE=good run_tpuci run spec.lua
expect_code 0 "env: MODE=good"
MODE=bad run_tpuci run spec.lua
expect_code 1 "env: MODE=bad after a pass with MODE=good"
expect_outcome "env: MODE=bad" failed
MODE=good run_tpuci run spec.lua
expect_outcome "env: MODE=good again" cached
# Terminal and session variables do not count.
MODE=good TERM=xterm-other COLUMNS=31 SHLVL=9 OLDPWD=/nowhere GITHUB_RUN_ID=77 \
  TPUCI_NO_CACHE=0 run_tpuci run spec.lua
expect_outcome "env: volatile variables changed" cached
# The key shows names, never values (a token in the environment).
MODE=good SECRET_TOKEN=hunter2-value run_tpuci plan --keys --json spec.lua
expect_not_out "hunter2-value" "plan --keys --json"
printf '%s' "$out" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
env = d["instances"][0]["inputs"]["env"]
assert "SECRET_TOKEN" in env and "MODE" in env and "TERM" not in env, env
' && pass || fail "plan --keys --json: env names"

# A local pytest job: PYTEST_ADDOPTS selects tests, so it is an input.
if /usr/bin/python3 -c 'import pytest' 2> /dev/null; then
  mkdir -p "$WORK/addopts/t" && cd "$WORK/addopts" || exit 1
  printf 'def test_a():\n    pass\n\ndef test_b():\n    assert False\n' > t/test_x.py
  cat > spec.lua <<'EOF'
job "p" { pytest = { args = { "t" } } }
EOF
  PYTEST_ADDOPTS="-k test_a" run_tpuci run spec.lua
  expect_code 0 "PYTEST_ADDOPTS=-k test_a"
  run_tpuci run spec.lua
  expect_code 1 "pytest without PYTEST_ADDOPTS after a pass with it"
  expect_outcome "pytest: PYTEST_ADDOPTS gone" failed
fi

# 2. inputs relative to the spec's folder reach mounts and folders
#    outside it (a spec in ci/, the checkout as ..).
mkdir -p "$WORK/up/ci" "$WORK/up/src" "$WORK/up/data" && cd "$WORK/up" || exit 1
git init -q
echo good > src/m.txt
echo 1 > data/d.csv
echo readme > README
cat > ci/spec.lua <<'EOF'
job "local" { workdir = "..", inputs = { "../src/**" }, run = "grep -q good src/m.txt" }
EOF
gitc add . && gitc commit -qm init
run_tpuci plan --keys ci/spec.lua
expect_not_out "matches no file" "plan --keys: ../src/** matches"
expect_out "1 files" "plan --keys: the folder counts src/m.txt"
run_tpuci run --state-dir ci/.tpuci ci/spec.lua
expect_code 0 "workdir ..: first run"
echo other >> README
run_tpuci run --state-dir ci/.tpuci ci/spec.lua
expect_outcome "workdir ..: README is not an input" cached ci
echo bad > src/m.txt
run_tpuci run --state-dir ci/.tpuci ci/spec.lua
expect_code 1 "workdir ..: src/m.txt changed"
expect_outcome "workdir ..: src/m.txt changed" failed ci

# 3. A symbolic link among a local job's files that points outside its
#    folder: what the job reads is the target.
mkdir -p "$WORK/link/job" "$WORK/link/elsewhere" && cd "$WORK/link/job" || exit 1
echo good > ../elsewhere/conf.txt
ln -s ../elsewhere/conf.txt conf.txt
cat > spec.lua <<'EOF'
job "j" { run = "grep -q good conf.txt" }
EOF
run_tpuci run spec.lua
expect_code 0 "link: first run"
echo bad > ../elsewhere/conf.txt
run_tpuci run spec.lua
expect_code 1 "link: the target changed"
expect_outcome "link: the target changed" failed

# 4. The tpuci build is in the key: its build id, and another build
#    (the same binary with another build id) misses.
cd "$WORK/env" || exit 1
MODE=good run_tpuci plan --keys --json spec.lua
build=$(printf '%s' "$out" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["instances"][0]["inputs"].get("build"))')
want=$(readelf -n "$TPUCI" 2> /dev/null | sed -n 's/.*Build ID: *//p' | head -n 1)
if [ -n "$want" ]; then
  [ "$build" = "gnu:$want" ] && pass || fail "build: key has '$build', want gnu:$want"
  cp "$TPUCI" "$WORK/tpuci-other"
  /usr/bin/python3 - "$WORK/tpuci-other" "$want" <<'EOF'
import sys
path, hexid = sys.argv[1], sys.argv[2]
data = bytearray(open(path, "rb").read())
raw = bytes.fromhex(hexid)
at = data.find(raw)
assert at >= 0, "build id not found"
data[at] ^= 0xFF
open(path, "wb").write(data)
EOF
  out=$(MODE=good "$WORK/tpuci-other" run spec.lua 2>&1)
  code=$?
  expect_code 0 "build: another build runs"
  expect_outcome "build: another build" passed
fi

# 5a. core.fileMode=false: a tracked script's executable bit still counts.
mkdir -p "$WORK/mode" && cd "$WORK/mode" || exit 1
git init -q && git config core.fileMode false
printf '#!/bin/sh\nexit 0\n' > s.sh && chmod +x s.sh
git update-index --add --chmod=+x s.sh 2> /dev/null || gitc add s.sh
echo 'job "j" { run = "./s.sh" }' > spec.lua
gitc add . && gitc commit -qm init
run_tpuci run spec.lua
expect_code 0 "fileMode: first run"
chmod -x s.sh
run_tpuci run spec.lua
expect_code 1 "fileMode=false: chmod -x"
expect_outcome "fileMode=false: chmod -x" failed

# 5b. A plain folder: an empty folder and a FIFO count.
mkdir -p "$WORK/plain" && cd "$WORK/plain" || exit 1
echo 'job "j" { run = "test ! -e d && test ! -e p" }' > spec.lua
run_tpuci run spec.lua
expect_code 0 "plain: first run"
mkdir d
run_tpuci run spec.lua
expect_code 1 "plain: an empty folder added"
rmdir d
run_tpuci run spec.lua
expect_outcome "plain: the empty folder gone" cached
mkfifo p
run_tpuci run spec.lua
expect_code 1 "plain: a FIFO added"
rm -f p

# 5c. The installed packages of a venv (VIRTUAL_ENV) count.
venv=$WORK/venv
sp=$venv/lib/python3.11/site-packages
mkdir -p "$sp/mod-1.0.dist-info" "$WORK/pkg" && cd "$WORK/pkg" || exit 1
echo 'X = 1' > "$sp/mod.py"
printf 'mod.py,sha256=one,6\n' > "$sp/mod-1.0.dist-info/RECORD"
cat > spec.lua <<EOF
job "j" { run = "PYTHONPATH=$sp /usr/bin/python3 -c 'import mod; assert mod.X == 1'" }
EOF
VIRTUAL_ENV=$venv run_tpuci run spec.lua
expect_code 0 "venv: first run"
# pip install -U mod: another version and another RECORD.
echo 'X = 2' > "$sp/mod.py"
mv "$sp/mod-1.0.dist-info" "$sp/mod-2.0.dist-info"
printf 'mod.py,sha256=two,6\n' > "$sp/mod-2.0.dist-info/RECORD"
VIRTUAL_ENV=$venv run_tpuci run spec.lua
expect_code 1 "venv: a package upgraded"
expect_outcome "venv: a package upgraded" failed

# 5d. A mounted folder whose files git ignores (a dataset with a
#     .gitkeep) is said; naming it in inputs makes its files count.
mkdir -p "$WORK/ign/data" && cd "$WORK/ign" || exit 1
git init -q
printf 'data/*\n!data/.gitkeep\n' > .gitignore
: > data/.gitkeep
echo 1 > data/x.csv
cat > spec.lua <<'EOF'
job "said" { workdir = "data", run = "true" }
job "named" { workdir = ".", inputs = { "data/**" }, run = "grep -q 1 data/x.csv" }
EOF
gitc add . && gitc commit -qm init
run_tpuci plan --keys spec.lua
expect_out "git ignores" "plan --keys: the ignored dataset is said"
run_tpuci run --only named spec.lua
expect_code 0 "ignored but named: first run"
echo 2 > data/x.csv
run_tpuci run --only named spec.lua
expect_code 1 "ignored but named in inputs: changed"

# 6. A failure under a key takes its stored pass away: --no-cache,
#    TPUCI_NO_CACHE, rerun --failed, a flaky attempt.
flag=$WORK/evict-flag
mkdir -p "$WORK/evict" && cd "$WORK/evict" || exit 1
cat > spec.lua <<EOF
job "j" { run = "test -f '$flag'" }
EOF
touch "$flag"
run_tpuci run spec.lua
expect_code 0 "evict: first run"
rm -f "$flag"
run_tpuci run --no-cache spec.lua
expect_code 1 "evict: --no-cache fails"
run_tpuci rerun --failed
expect_code 1 "evict: rerun --failed runs the instance"
expect_not_out "[cached ]" "evict: rerun --failed"
run_tpuci run spec.lua
expect_outcome "evict: a plain run after" failed
touch "$flag"
run_tpuci run spec.lua
expect_code 0 "evict: stored again"
rm -f "$flag"
TPUCI_NO_CACHE=1 run_tpuci run spec.lua
expect_code 1 "evict: TPUCI_NO_CACHE=1 fails"
run_tpuci run spec.lua
expect_outcome "evict: after TPUCI_NO_CACHE=1" failed
# A flaky attempt (failed, then passed) under the key.
mark=$WORK/flaky-mark
cat > spec.lua <<EOF
job "j" { run = "test -f '$flag' || { test -f '$mark' && rm -f '$mark'; } || { touch '$mark'; exit 1; }",
          retries = { attempts = 2, on = { "failed" } } }
EOF
touch "$flag"
run_tpuci run spec.lua
expect_code 0 "evict flaky: first run"
rm -f "$flag"
run_tpuci run --no-cache spec.lua
expect_outcome "evict flaky: --no-cache" flaky
run_tpuci run spec.lua
expect_not_out "[cached ]" "evict flaky: the next run"

# Containers: a mount outside the spec's folder, a sibling mount, a
# mounted file that is a symbolic link.
sock=${DOCKER_HOST:-unix:///var/run/docker.sock}
if curl -sf --max-time 3 --unix-socket "${sock#unix://}" http://localhost/_ping > /dev/null 2>&1 &&
  docker image inspect tpuci-test/busybox:1 > /dev/null 2>&1; then
  cd "$WORK/up" || exit 1
  echo good > src/m.txt
  mkdir -p "$WORK/up/real"
  echo good > real/conf.txt
  ln -sfn ../real/conf.txt ci/conf.txt
  cat > ci/spec.lua <<'EOF'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "up" { image = "bb", mounts = { [".."] = { target = "/src", readonly = true } },
           inputs = { "../src/**" }, run = "grep -q good /src/src/m.txt" }
job "sib" { image = "bb", mounts = { ["../data"] = { target = "/data", readonly = true } },
            inputs = { "../data/**" }, run = "grep -q 1 /data/d.csv" }
job "file" { image = "bb", mounts = { ["conf.txt"] = { target = "/c.txt", readonly = true } },
             run = "grep -q good /c.txt" }
EOF
  rm -rf ci/.tpuci
  run_tpuci plan --keys ci/spec.lua
  expect_not_out "matches no file" "containers: plan --keys"
  run_tpuci run --state-dir ci/.tpuci ci/spec.lua
  expect_code 0 "containers: first run"
  echo bad > src/m.txt
  echo 2 > data/d.csv
  echo bad > real/conf.txt
  run_tpuci run --state-dir ci/.tpuci ci/spec.lua
  expect_code 1 "containers: every input changed"
  expect_outcome "containers: every input changed" "failed failed failed" ci
fi

finish
