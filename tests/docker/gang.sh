#!/usr/bin/env bash
# A 4-host gang (v4-32) of busybox containers: every host checks its own
# environment (the TPU VM variables of its worker id, the rendezvous, the
# job's env winning over generated values) and reaches every other host by
# name on the gang's private network, which is internal. The output
# is kept per host and prefixed per line in the attempt's log; tpuci plan
# shows the hosts; nothing is left afterwards.
. "$TESTS/docker/lib.sh"

mkdir out
cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "v4-32" {}
job "gang" {
  image = "bb", topology = "v4-32", timeout = "60s", mounts = { ["out"] = "/out" },
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
        if [ $n -ge 30 ]; then echo "CHECK FAILED on worker-$i: cannot reach worker-$j"; bad=1; break; fi
        sleep 0.2
      done
      [ $n -lt 30 ] && echo "worker-$i reached worker-$j"
    done
    printf 'partial line of worker-%s' "$i"; sleep 0.1; echo ' completed'
    echo "to stderr from worker-$i" >&2
    # Stay reachable while the others look for this host, and until the
    # test has looked at the running gang (at most 20 s).
    n=0
    until [ -e /out/release ] || [ $n -ge 100 ]; do sleep 0.2; n=$((n + 1)); done
    exit $bad
  ]],
}
LUA

# The plan shows the hosts and what each gets.
run_tpuci plan spec.lua
expect_code 0 "plan"
expect_out "gang:     4 hosts worker-0..worker-3" "plan: the gang"
expect_out "env of worker-2: TPU_WORKER_ID=2" "plan: a host's own variables"
expect_out 'emulate = "pjrt" with 4 hosts' "plan: the pjrt warning"
"$TPUCI" plan --json spec.lua > plan.json 2>/dev/null
got=$(python3 -c 'import json; i=json.load(open("plan.json"))["instances"][0]; print([h["name"] for h in i["hosts"]], i["hosts"][3]["env"]["TPU_WORKER_ID"], "MASTER_PORT" in i["hosts"][0]["env"])')
[ "$got" = "['worker-0', 'worker-1', 'worker-2', 'worker-3'] 3 False" ] && pass || fail "plan --json hosts: $got"

start=$(date +%s)
"$TPUCI" run -j 4 spec.lua > "$WORK/tpuci.out" 2>&1 &
tp=$!
# While it runs: one network of the attempt, internal, labelled, with the
# 4 hosts on it under their aliases.
netinfo=""
for _ in $(seq 100); do
  netinfo=$(api "/networks?filters=$(python3 -c 'import json,sys,urllib.parse; print(urllib.parse.quote(json.dumps({"label":["tpuci.pid="+sys.argv[1]]})))' "$tp")" |
    python3 -c '
import json, sys
nets = json.load(sys.stdin)
if len(nets) == 1:
    print(nets[0]["Id"], nets[0]["Internal"], nets[0]["Labels"].get("tpuci.instance"), nets[0]["Labels"].get("tpuci.attempt"))' 2>/dev/null)
  if [ -n "$netinfo" ]; then
    set -- $netinfo
    n=$(api "/networks/$1" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["Containers"] or {}))' 2>/dev/null)
    [ "$n" = 4 ] && break
  fi
  sleep 0.1
done
[ "${netinfo#* }" = "True gang 1" ] && pass || fail "the gang's network: '$netinfo' (want id, Internal True, instance gang, attempt 1)"
[ "${n:-0}" = 4 ] && pass || fail "${n:-0} containers on the gang's network, want 4"
# Each host's container answers to its alias on that network (asked
# again for a few seconds: the engine's lists lag under load).
for _ in $(seq 50); do
aliases=$(for id in $(api "/containers/json?filters=$(python3 -c 'import json,sys,urllib.parse; print(urllib.parse.quote(json.dumps({"label":["tpuci.pid="+sys.argv[1]]})))' "$tp")" |
                   python3 -c 'import json,sys; print(" ".join(c["Id"] for c in json.load(sys.stdin)))'); do
  api "/containers/$id/json" | python3 -c '
import json, sys
c = json.load(sys.stdin)
nets = c["NetworkSettings"]["Networks"]
name = c["Config"]["Hostname"]
print(name if len(nets) == 1 and name in list(nets.values())[0]["Aliases"] else "bad:" + name)'
done | sort | tr '\n' ' ')
[ "$aliases" = "worker-0 worker-1 worker-2 worker-3 " ] && break
sleep 0.1
done
[ "$aliases" = "worker-0 worker-1 worker-2 worker-3 " ] && pass || fail "hosts and aliases: '$aliases'"
touch out/release
wait "$tp"
code=$?
out=$(cat "$WORK/tpuci.out")
expect_code 0 "the 4-host gang passes"
expect_out 'emulate = "pjrt" with 4 hosts' "run: the pjrt warning reaches the user"
expect_not_out "CHECK FAILED"
expect_json 's["instances"][0]["outcome"]' passed
echo "4-host gang: $(( $(date +%s) - start )) s" >&2
dir=$WORK/.tpuci/runs/latest/gang
log=$dir/attempt-1.log
for i in 0 1 2 3; do
  for j in 0 1 2 3; do
    grep -qx "\[worker-$i\] worker-$i reached worker-$j" "$log" && pass || fail "worker-$i did not reach worker-$j (or its line is not prefixed)"
  done
  # Lines are whole, prefixed once, across chunks.
  grep -qx "\[worker-$i\] partial line of worker-$i completed" "$log" && pass || fail "worker-$i: the partial line was split or not prefixed"
  grep -qx "\[worker-$i\] to stderr from worker-$i" "$log" && pass || fail "worker-$i: stderr not in the log"
  # Each host's raw output, unprefixed, in a file of its own.
  f=$dir/attempt-1.worker-$i.log
  if [ -f "$f" ]; then
    grep -qx "worker-$i reached worker-0" "$f" && pass || fail "$f: no raw line"
    grep -q '^\[worker' "$f" && fail "$f holds prefixed lines" || pass
    grep -q "worker-$(( (i + 1) % 4 )) reached" "$f" && fail "$f holds another host's lines" || pass
  else
    fail "no per-host log $f"
  fi
done
expect_no_leftovers "$(latest_run_id)" "$tp" "after the gang"
finish
