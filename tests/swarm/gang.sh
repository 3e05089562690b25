#!/usr/bin/env bash
# A 4-host gang (v4-32) as 4 swarm services on an overlay network of the
# attempt's own: every host checks its TPU environment and reaches every
# other host by name (worker-<i>, the services' aliases); the network is
# an internal, attachable overlay network with tpuci's labels; output is
# prefixed per host and kept per host. Then a gang whose worker-1 fails:
# the others are stopped and the cause names worker-1. Nothing is left.
. "$TESTS/swarm/lib.sh"

mkdir out
cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "v4-32" {}
job "gang" {
  image = "bb", topology = "v4-32", runtime = "swarm", timeout = "120s",
  mounts = { ["out"] = "/out" }, env = { MASTER_PORT = "1234" },
  run = [[
    i=$TPUCI_HOST bad=0
    check() { if [ "$2" != "$3" ]; then echo "CHECK FAILED on worker-$i: $1 is '$2', want '$3'"; bad=1; fi; }
    check hostname "$(hostname)" "worker-$i"
    check TPU_WORKER_ID "$TPU_WORKER_ID" "$i"
    check RANK "$RANK" "$i"
    check WORLD_SIZE "$WORLD_SIZE" 4
    check TPU_WORKER_HOSTNAMES "$TPU_WORKER_HOSTNAMES" worker-0,worker-1,worker-2,worker-3
    check TPU_ACCELERATOR_TYPE "$TPU_ACCELERATOR_TYPE" v4-32
    check PJRT_DEVICE "$PJRT_DEVICE" CPU
    check MASTER_ADDR "$MASTER_ADDR" worker-0
    check MASTER_PORT "$MASTER_PORT" 1234
    for j in 0 1 2 3; do
      n=0
      until ping -c1 -W1 worker-$j >/dev/null 2>&1; do
        n=$((n + 1))
        if [ $n -ge 60 ]; then echo "CHECK FAILED on worker-$i: cannot reach worker-$j"; bad=1; break; fi
        sleep 0.5
      done
      [ $n -lt 60 ] && echo "worker-$i reached worker-$j"
    done
    echo "to stderr from worker-$i" >&2
    # Stay reachable until every host has reached every other (a host
    # that ended is gone from the network's names).
    touch /out/reached-$i
    n=0
    until [ "$(ls /out | grep -c reached)" = 4 ] || [ $n -ge 300 ]; do sleep 0.2; n=$((n + 1)); done
    sleep 1
    exit $bad
  ]],
}
LUA

start=$(date +%s.%N)
"$TPUCI" run -j 4 spec.lua > "$WORK/tpuci.out" 2>&1 &
tp=$!
netinfo=""
for _ in $(seq 100); do
  netinfo=$(api "/networks?filters=$(q "tpuci.pid=$tp")" | python3 -c '
import json, sys
n = json.load(sys.stdin)
if len(n) == 1:
    n = n[0]
    print(n["Driver"], n["Scope"], n["Internal"], n["Attachable"], n["Labels"].get("tpuci.instance"))' 2>/dev/null)
  [ -n "$netinfo" ] && break
  sleep 0.1
done
[ "$netinfo" = "overlay swarm True True gang" ] && pass || fail "the gang's network: '$netinfo'"
for _ in $(seq 100); do
  aliases=$(api "/services?filters=$(q "tpuci.pid=$tp")" | python3 -c '
import json, sys
print(" ".join(sorted(s["Spec"]["TaskTemplate"]["Networks"][0]["Aliases"][0] for s in json.load(sys.stdin))))' 2>/dev/null)
  [ "$aliases" = "worker-0 worker-1 worker-2 worker-3" ] && break
  sleep 0.1
done
[ "$aliases" = "worker-0 worker-1 worker-2 worker-3" ] && pass || fail "the services' aliases: '$aliases'"
wait "$tp"
code=$?
out=$(cat "$WORK/tpuci.out")
echo "4-host swarm gang: $(echo "$(date +%s.%N) - $start" | bc) s" >&2
expect_code 0 "the 4-host gang passes"
expect_not_out "CHECK FAILED"
dir=$WORK/.tpuci/runs/latest/gang
for i in 0 1 2 3; do
  for j in 0 1 2 3; do
    grep -qx "\[worker-$i\] worker-$i reached worker-$j" "$dir/attempt-1.log" && pass || fail "worker-$i did not reach worker-$j (or its line is not prefixed)"
  done
  grep -qx "\[worker-$i\] to stderr from worker-$i" "$dir/attempt-1.log" && pass || fail "worker-$i: stderr"
  grep -qx "worker-$i reached worker-0" "$dir/attempt-1.worker-$i.log" && pass || fail "worker-$i: its own log"
done
expect_no_swarm_leftovers "$(latest_run_id)" "$tp" "the gang"

# worker-1 fails: the gang ends together, worker-1 is the cause.
cat > fail.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "v4-32" {}
job "g" { image = "bb", topology = "v4-32", runtime = "swarm", grace = "1s", timeout = "120s",
  run = [[ if [ "$TPUCI_HOST" = 1 ]; then sleep 2; echo "worker-1 gives up"; exit 5; fi; sleep 100 ]] }
LUA
start=$(date +%s)
tpuci_run run -j 4 fail.lua
took=$(( $(date +%s) - start ))
expect_code 1 "a failing gang"
expect_json 's["instances"][0]["attempts"][0]["cause"]' "worker-1: exit 5"
expect_json 's["instances"][0]["attempts"][0]["exit_code"]' 5
[ "$took" -lt 60 ] && pass || fail "the failing gang took ${took}s: the others were not stopped"
echo "failing gang: ${took} s" >&2
expect_no_swarm_leftovers "$(latest_run_id)" "$tp" "the failing gang"
finish
