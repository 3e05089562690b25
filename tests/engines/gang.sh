#!/usr/bin/env bash
# Gangs on each engine (engine.sh). A 4-host gang (v4-32): every host
# checks its own environment (the TPU VM variables of its worker id, the
# rendezvous, the job's env winning over generated values) and reaches
# every other host by name on the attempt's own internal network (a
# bridge on docker and podman, an attachable overlay on swarm), with
# tpuci's labels; the output is prefixed per line and host in the
# attempt's log (whole lines, across chunks) and kept raw per host;
# `tpuci plan` shows the hosts. Then a gang whose worker-1 fails: the
# others (which ignore SIGTERM) are stopped after the grace, not after
# their own end, and the cause names worker-1. Nothing is left.
. "$TESTS/engines/engine.sh"

mkdir out
spec spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "v4-32" {}
job "gang" {
  image = "bb", topology = "v4-32", timeout = "8m", @GANG_RETRY@ mounts = { ["out"] = "/out" },
  env = { MASTER_PORT = "1234", A = "from the job" },
  run = [[
    i=$TPUCI_HOST bad=0
    check() { if [ "$2" != "$3" ]; then echo "CHECK FAILED on worker-$i: $1 is '$2', want '$3'"; bad=1; fi; }
    check hostname "$(hostname)" "worker-$i"
    check TPU_WORKER_ID "$TPU_WORKER_ID" "$i"
    check CLOUD_TPU_TASK_ID "$CLOUD_TPU_TASK_ID" "$i"
    check RANK "$RANK" "$i"
    check NODE_RANK "$NODE_RANK" "$i"
    check TPUCI_HOSTS "$TPUCI_HOSTS" 4
    check WORLD_SIZE "$WORLD_SIZE" 4
    check TPU_WORKER_HOSTNAMES "$TPU_WORKER_HOSTNAMES" worker-0,worker-1,worker-2,worker-3
    check TPU_ACCELERATOR_TYPE "$TPU_ACCELERATOR_TYPE" v4-32
    check TPU_TOPOLOGY "$TPU_TOPOLOGY" 2x2x4
    check TPU_HOST_BOUNDS "$TPU_HOST_BOUNDS" 1,1,4
    check TPU_CHIPS_PER_HOST_BOUNDS "$TPU_CHIPS_PER_HOST_BOUNDS" 2,2,1
    check TPU_SKIP_MDS_QUERY "$TPU_SKIP_MDS_QUERY" true
    check PJRT_DEVICE "$PJRT_DEVICE" CPU
    check CPU_NUM_DEVICES "$CPU_NUM_DEVICES" 4
    check MASTER_ADDR "$MASTER_ADDR" worker-0
    check MASTER_PORT "$MASTER_PORT" 1234
    check "MASTER_PORT entries" "$(env | grep -c '^MASTER_PORT=')" 1
    check A "$A" "from the job"
    check TPUCI_INSTANCE "$TPUCI_INSTANCE" gang
    for j in 0 1 2 3; do
      n=0
      until ping -c1 -W1 worker-$j >/dev/null 2>&1; do
        n=$((n + 1))
        if [ $n -ge 60 ]; then echo "CHECK FAILED on worker-$i: cannot reach worker-$j"; bad=1; break; fi
        sleep 0.5
      done
      [ $n -lt 60 ] && echo "worker-$i reached worker-$j"
    done
    printf 'partial line of worker-%s' "$i"; sleep 0.1; echo ' completed'
    echo "to stderr from worker-$i" >&2
    # Stay reachable until every host has reached every other (a host
    # that ended is gone from the network's names) and the test has seen
    # the network (at most 60 s).
    touch /out/reached-$i
    n=0
    until { [ "$(ls /out | grep -c reached)" = 4 ] && [ -e /out/release ]; } || [ $n -ge 300 ]; do
      sleep 0.2; n=$((n + 1))
    done
    exit $bad
  ]],
}
LUA

# The plan shows the hosts and what each gets.
engine_run plan spec.lua
expect_code 0 "plan"
expect_out "gang:     4 hosts worker-0..worker-3" "plan: the gang"
expect_out "env of worker-2: TPU_WORKER_ID=2" "plan: a host's own variables"
expect_out 'emulate = "pjrt" with 4 hosts' "plan: the pjrt warning"
"$TPUCI" plan "${ENGINE_FLAG[@]}" --json spec.lua > plan.json 2>/dev/null
got=$(python3 -c 'import json; i=json.load(open("plan.json"))["instances"][0]; print([h["name"] for h in i["hosts"]], i["hosts"][3]["env"]["TPU_WORKER_ID"], "MASTER_PORT" in i["hosts"][0]["env"])')
[ "$got" = "['worker-0', 'worker-1', 'worker-2', 'worker-3'] 3 False" ] && pass || fail "plan --json hosts: $got"

want_net="bridge local True gang 1"
[ "$ENGINE" = swarm ] && want_net="overlay swarm True gang 1"
engine_start run -j 4 spec.lua
# While it runs: one network of the attempt, internal, labelled.
netinfo=""
for _ in $(seq 300); do
  netinfo=$(api "/networks?filters=$(python3 -c 'import json,sys,urllib.parse; print(urllib.parse.quote(json.dumps({"label":["tpuci.pid="+sys.argv[1]]})))' "$tp")" |
    python3 -c '
import json, sys
n = json.load(sys.stdin)
if len(n) == 1:
    n = n[0]
    print(n["Driver"], n["Scope"], n["Internal"], n["Labels"].get("tpuci.instance"), n["Labels"].get("tpuci.attempt"))' 2>/dev/null)
  [ -n "$netinfo" ] && break
  sleep 0.2
done
[ "$netinfo" = "$want_net" ] && pass || fail "the gang's network: '$netinfo', want '$want_net'"
touch out/release
engine_wait
expect_code 0 "the 4-host gang passes"
expect_out 'emulate = "pjrt" with 4 hosts' "run: the pjrt warning reaches the user"
expect_not_out "CHECK FAILED"
# Podman's gangs may come up late (engine.sh: ENGINE_GANG_RETRY).
if [ "$ENGINE" = podman ]; then
  expect_json 's["instances"][0]["outcome"] in ("passed", "flaky")' True
else
  expect_json 's["instances"][0]["outcome"]' passed
fi
dir=$WORK/.tpuci/runs/latest/gang
n=$(last_attempt gang)
log=$dir/attempt-$n.log
for i in 0 1 2 3; do
  for j in 0 1 2 3; do
    grep -qx "\[worker-$i\] worker-$i reached worker-$j" "$log" && pass || fail "worker-$i did not reach worker-$j (or its line is not prefixed)"
  done
  # Lines are whole, prefixed once, across chunks.
  grep -qx "\[worker-$i\] partial line of worker-$i completed" "$log" && pass || fail "worker-$i: the partial line was split or not prefixed"
  grep -qx "\[worker-$i\] to stderr from worker-$i" "$log" && pass || fail "worker-$i: stderr not in the log"
  # Each host's raw output, unprefixed, in a file of its own.
  f=$dir/attempt-$n.worker-$i.log
  if [ -f "$f" ]; then
    grep -qx "worker-$i reached worker-0" "$f" && pass || fail "$f: no raw line"
    grep -q '^\[worker' "$f" && fail "$f holds prefixed lines" || pass
    grep -q "worker-$(( (i + 1) % 4 )) reached" "$f" && fail "$f holds another host's lines" || pass
  else
    fail "no per-host log $f"
  fi
done
expect_gone "$(latest_run_id)" "$tp" "after the gang"

# worker-1 fails once worker-0 has started: the gang ends together,
# worker-1 is the cause, the others get SIGKILL after the 1 s grace.
rm -f out/*
spec fail.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "v4-32" {}
job "g" { image = "bb", topology = "v4-32", grace = "1s", timeout = "8m", @GANG_RETRY@
  mounts = { ["out"] = "/out" },
  run = [[
    trap '' TERM
    if [ "$TPUCI_HOST" = 1 ]; then
      n=0; until [ -e /out/w0 ] || [ $n -ge 300 ]; do sleep 0.2; n=$((n + 1)); done
      echo "worker-1 gives up"; exit 5
    fi
    touch /out/w$TPUCI_HOST; sleep 600 ]] }
LUA
engine_run run -j 4 fail.lua
expect_code 1 "a failing gang"
expect_json 's["instances"][0]["outcome"]' failed
last=$(( $(last_attempt g) - 1 ))
expect_json "s['instances'][0]['attempts'][$last]['cause']" "worker-1: exit 5"
expect_json "s['instances'][0]['attempts'][$last]['exit_code']" 5
grep -qx "\[worker-1\] worker-1 gives up" "$WORK/.tpuci/runs/latest/g/attempt-$((last + 1)).log" && pass || fail "worker-1's last words"
# Not the others' own end (sleep 600): they were stopped.
expect_json "s['instances'][0]['attempts'][$last]['duration_ms'] < 300000" True
expect_gone "$(latest_run_id)" "$tp" "after the failing gang"
finish
