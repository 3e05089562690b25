#!/usr/bin/env bash
# Ctrl-C during gangs: every host of every gang is stopped and removed,
# so are the gangs' networks, and a gang still creating its network or
# containers never starts; exit 130 and nothing with the run's label left.
. "$TESTS/docker/lib.sh"

mkdir out
cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "duo" { hosts = 2 }
topology "trio" { hosts = 3 }
job "a" { image = "bb", topology = "duo", mounts = { ["out"] = "/out" },
  run = "touch /out/a-$TPUCI_HOST; sleep 100" }
job "b" { image = "bb", topology = "trio", mounts = { ["out"] = "/out" }, grace = "2s",
  run = "touch /out/b-$TPUCI_HOST; trap '' TERM; sleep 100" }
job "queued" { image = "bb", topology = "duo", mounts = { ["out"] = "/out" },
  run = "touch /out/queued-$TPUCI_HOST" }
LUA
"$TPUCI" run -j 5 spec.lua > run.log 2>&1 &
tp=$!
want="a-0 a-1 b-0 b-1 b-2"
for _ in $(seq 1200); do
  ok=1
  for f in $want; do [ -e "out/$f" ] || ok=0; done
  [ $ok = 1 ] && break
  sleep 0.1
done
[ $ok = 1 ] && pass || fail "the gangs did not start: $(ls out)"
run_id=$(latest_run_id)
# The 5 hosts and each gang's go container (the start barrier's: the
# hosts started once it joined their network).
[ "$(count_objects containers "tpuci.run=$run_id" "tpuci.pid=$tp")" = 7 ] && pass || fail "not 7 containers of run $run_id while running"
[ "$(count_objects networks "tpuci.run=$run_id" "tpuci.pid=$tp")" = 2 ] && pass || fail "not 2 networks of run $run_id while running"
start=$(date +%s)
kill -INT "$tp"
wait "$tp"
code=$?
out=$(cat run.log)
expect_code 130 "SIGINT"
took=$(( $(date +%s) - start ))
[ "$took" -lt 15 ] && pass || fail "stopping took $took s"
expect_no_leftovers "$run_id" "$tp" "after SIGINT"
[ ! -e out/queued-0 ] && [ ! -e out/queued-1 ] && pass || fail "a queued gang started after SIGINT"
expect_json '[i["outcome"] for i in s["instances"]]' "['cancelled', 'cancelled', 'cancelled']"

# Ctrl-C while a gang is still being set up (its network or containers
# being created): what was made is removed. (The signal is sent once
# tpuci's network exists: a background job of a script ignores SIGINT
# until tpuci installs its handler.)
rm -f out/*
cat > early.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "wide" { hosts = 8, emulate = "none" }
job "w" { image = "bb", topology = "wide", mounts = { ["out"] = "/out" },
  run = "touch /out/w-$TPUCI_HOST; sleep 100" }
LUA
for what in networks containers; do
  "$TPUCI" run -j 8 early.lua > run.log 2>&1 &
  tp=$!
  for _ in $(seq 300); do
    [ "$(count_objects "$what" "tpuci.pid=$tp")" != 0 ] && break
    sleep 0.01
  done
  kill -INT "$tp"
  wait "$tp"
  code=$?
  out=$(cat run.log)
  expect_code 130 "SIGINT once the gang's $what appeared"
  before=$failures
  expect_no_leftovers "$(latest_run_id)" "$tp" "SIGINT once the gang's $what appeared"
  [ "$failures" = "$before" ] || { echo "tpuci's output:" >&2; cat run.log >&2; }
done
finish
