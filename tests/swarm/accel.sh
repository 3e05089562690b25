#!/usr/bin/env bash
# The accelerator options a Swarm service can carry (shm_size as a tmpfs at
# /dev/shm, cap_add, cap_drop, ulimits, sysctls: docs/spec.md,
# "Accelerators"), read back from inside the task's container and from
# the service's ContainerSpec while it runs. The options the swarm refuses
# are tests/swarm/errors.sh's.
. "$TESTS/swarm/lib.sh"

cat > accel.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "acc" {
  image = "bb",
  shm_size = "1g",
  cap_add = { "NET_ADMIN" }, cap_drop = { "net_raw", "CAP_MKNOD" },
  ulimits = { memlock = { soft = 4096, hard = 8192 }, nofile = 1000 },
  sysctls = { ["net.core.somaxconn"] = 1024 },
  run = [[
    echo "shm $(df -k /dev/shm | awk 'NR == 2 { print $2 }')"
    echo "memlock $(ulimit -l) nofile $(ulimit -n)"
    echo "somaxconn $(cat /proc/sys/net/core/somaxconn)"
    c=$(awk '/^CapEff/ { print $2 }' /proc/self/status)
    echo "net_admin $(( (0x$c >> 12) & 1 )) net_raw $(( (0x$c >> 13) & 1 )) mknod $(( (0x$c >> 27) & 1 ))"
    sleep 2
  ]],
}
LUA

"$TPUCI" run --engine swarm accel.lua > "$WORK/tpuci.out" 2>&1 &
tp=$!
cs=""
for _ in $(seq 150); do
  cs=$(api "/services?filters=$(q "tpuci.pid=$tp" "tpuci.instance=acc")" | python3 -c '
import json, sys
s = json.load(sys.stdin)
if s:
    c = s[0]["Spec"]["TaskTemplate"]["ContainerSpec"]
    print(sorted(c.get("CapabilityAdd") or []), sorted(c.get("CapabilityDrop") or []),
          sorted((u["Name"], u["Soft"], u["Hard"]) for u in c.get("Ulimits") or []),
          c.get("Sysctls"),
          [(m["Type"], m["Target"], m.get("TmpfsOptions", {}).get("SizeBytes")) for m in c.get("Mounts") or []])' 2>/dev/null)
  [ -n "$cs" ] && break
  sleep 0.1
done
want="['CAP_NET_ADMIN'] ['CAP_MKNOD', 'CAP_NET_RAW'] [('memlock', 4096, 8192), ('nofile', 1000, 1000)] {'net.core.somaxconn': '1024'} [('tmpfs', '/dev/shm', 1073741824)]"
[ "$cs" = "$want" ] && pass || fail "the service's ContainerSpec: '$cs', want '$want'"
wait "$tp"
code=$?
out=$(cat "$WORK/tpuci.out")
expect_code 0 "the accelerator options on the swarm"
out=$(cat "$WORK/.tpuci/runs/latest/acc/attempt-1.log" 2>/dev/null)
expect_out "shm 1048576" "shm_size = 1g is /dev/shm's size (df)"
expect_out "memlock 4 nofile 1000" "ulimits (memlock in KiB)"
expect_out "somaxconn 1024" "sysctls"
expect_out "net_admin 1 net_raw 0 mknod 0" "cap_add and cap_drop"
expect_no_swarm_leftovers "$(latest_run_id)" "$tp" "the accelerator job"
finish
