#!/usr/bin/env bash
# The accelerator options on each engine (engine.sh; docs/spec.md,
# "Accelerators"): shm_size, cap_add, cap_drop, ulimits and sysctls read
# back from inside the job and from what the engine recorded (the kept
# container's HostConfig, the kept service's ContainerSpec: shm_size is a
# tmpfs at /dev/shm there). Where the engine has them (not swarm:
# ENGINE_HOST_DEVICES), ipc, devices (a device under another name, and
# globs), privileged, a device glob that matches nothing (infra before
# anything is made), and gpus = "all" on a machine without GPUs, which
# each engine answers in its own way (ENGINE_GPUS_*).
# The ulimits stay under this machine's hard limits: raising one needs
# CAP_SYS_RESOURCE where the engine runs, which the test machines lack.
. "$TESTS/engines/engine.sh"

hostopts= hostrun=
if [ "$ENGINE_HOST_DEVICES" = 1 ]; then
  hostopts='ipc = "shareable", devices = { "/dev/null:/dev/accel0:rwm", "/dev/[nz][ue][lr][lo]:rw" },'
  hostrun='ls -l /dev/accel0 | awk '"'"'{ print "accel0", substr($1, 1, 1), $5, $6 }'"'"
fi
spec accel.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
-- The check job fails (exit 3), so that --keep-failed keeps what the
-- engine made of it.
job "acc" {
  image = "bb", @NONET@
  shm_size = "1g", @HOSTOPTS@
  cap_add = { "NET_ADMIN" }, cap_drop = { "net_raw", "CAP_MKNOD" },
  ulimits = { memlock = { soft = 4096, hard = 8192 }, nofile = 1000 },
  sysctls = { ["net.core.somaxconn"] = 1024 },
  run = [[
    echo "shm $(df -k /dev/shm | awk 'NR == 2 { print $2 }')"
    @HOSTRUN@
    echo "memlock $(ulimit -l) nofile $(ulimit -n)"
    echo "somaxconn $(cat /proc/sys/net/core/somaxconn)"
    c=$(awk '/^CapEff/ { print $2 }' /proc/self/status)
    echo "net_admin $(( (0x$c >> 12) & 1 )) net_raw $(( (0x$c >> 13) & 1 )) mknod $(( (0x$c >> 27) & 1 ))"
    exit 3
  ]],
}
LUA
HOSTOPTS=$hostopts HOSTRUN=$hostrun python3 -c '
import os
t = open("accel.lua").read()
open("accel.lua", "w").write(t.replace("@HOSTOPTS@", os.environ["HOSTOPTS"]).replace("@HOSTRUN@", os.environ["HOSTRUN"]))'
if [ "$ENGINE_HOST_DEVICES" = 1 ]; then
  cat >> accel.lua <<'LUA'
job "priv" {
  image = "bb", network = "none", privileged = true,
  run = [[
    c=$(awk '/^CapEff/ { print $2 }' /proc/self/status)
    echo "sys_admin $(( (0x$c >> 21) & 1 )) sys_module $(( (0x$c >> 16) & 1 ))"
    exit 3
  ]],
}
-- A glob that matches nothing fails the attempt before anything is made.
job "noaccel" { image = "bb", network = "none", devices = { "/dev/tpuci-no-accel*" },
                run = "true" }
LUA
fi
engine_run run --keep-failed -j 3 accel.lua
expect_code 1 "the check jobs fail"
run_id=$(latest_run_id)
expect_json 's["instances"][0]["outcome"]' failed

# From inside.
out=$(cat "$WORK/.tpuci/runs/latest/acc/attempt-1.log" 2>/dev/null)
expect_out "shm 1048576" "shm_size = 1g is /dev/shm's size (df)"
expect_out "memlock 4 nofile 1000" "ulimits (memlock in KiB)"
expect_out "somaxconn 1024" "sysctls"
expect_out "net_admin 1 net_raw 0 mknod 0" "cap_add and cap_drop"
[ "$ENGINE_HOST_DEVICES" = 1 ] && expect_out "accel0 c 1, 3" "/dev/null at /dev/accel0"

# From the engine.
view=$(engine_opts_view "tpuci-$run_id-acc-1")
want=""
for k in $ENGINE_VIEW_KEYS; do
  case $k in
    shm) want+="shm 1073741824"$'\n' ;;
    capadd) want+="capadd ['NET_ADMIN']"$'\n' ;;
    capdrop) want+="capdrop ['MKNOD', 'NET_RAW']"$'\n' ;;
    ulimits) want+="ulimits [('memlock', 4096, 8192), ('nofile', 1000, 1000)]"$'\n' ;;
    sysctls) want+="sysctls {'net.core.somaxconn': '1024'}"$'\n' ;;
  esac
done
[ "$view"$'\n' = "$want" ] && pass || fail "what the engine recorded: '$view', want '$want'"

if [ "$ENGINE_HOST_DEVICES" = 1 ]; then
  acc="tpuci-$run_id-acc-1" priv="tpuci-$run_id-priv-1"
  h=$(api "/containers/$acc/json" | python3 -c '
import json, sys
h = json.load(sys.stdin)["HostConfig"]
print(h["IpcMode"], h["Privileged"], sorted((d["PathOnHost"], d["PathInContainer"]) for d in h["Devices"]))')
  [ "$h" = "shareable False [('/dev/null', '/dev/accel0'), ('/dev/null', '/dev/null'), ('/dev/zero', '/dev/zero')]" ] &&
    pass || fail "ipc and devices in the HostConfig: '$h'"
  # An engine that runs in a container of its own (as on the test
  # machines) may lack the capabilities a privileged container gets: runc
  # then fails to apply them, which only a privileged container asks for.
  if [ "$(json '[i for i in s["instances"] if i["name"] == "priv"][0]["outcome"]')" = failed ]; then
    out=$(cat "$WORK/.tpuci/runs/latest/priv/attempt-1.log" 2>/dev/null)
    expect_out "sys_admin 1 sys_module 1" "privileged has every capability"
    p=$(api "/containers/$priv/json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["HostConfig"]["Privileged"])')
    [ "$p" = True ] && pass || fail "priv: HostConfig.Privileged is $p"
  else
    expect_json '[(a["outcome"], "unable to apply caps" in a["cause"]) for a in [i for i in s["instances"] if i["name"] == "priv"][0]["attempts"]]' "[('infra', True)]"
  fi
  # The unmatched glob names the spec's line, the job and the pattern.
  WANT="job 'noaccel': devices: '/dev/tpuci-no-accel*' matches no device on this machine" \
    expect_json '[(c.startswith("accel.lua:"), __import__("os").environ["WANT"] in c) for c in [[i for i in s["instances"] if i["name"] == "noaccel"][0]["attempts"][0]["cause"]]][0]' "(True, True)"
  [ "$(count_objects containers "tpuci.run=$run_id" "tpuci.job=noaccel")" = 0 ] && pass ||
    fail "an attempt whose glob matched nothing made a container"
fi
run_tpuci gc
expect_out "removed $ENGINE_UNIT tpuci-$run_id-acc-1"
expect_gone "$run_id" "$tp" "after removing the kept ${ENGINE_UNIT}s"

# gpus = "all" where there is no GPU: each engine's answer.
if [ "$ENGINE_HOST_DEVICES" = 1 ]; then
  cat > gpus.lua <<'LUA'
job "gpu" { image = "tpuci-test/busybox:1", network = "none", gpus = "all", run = "true" }
LUA
  engine_run run gpus.lua
  expect_code "$ENGINE_GPUS_CODE" "gpus = \"all\""
  expect_out "$ENGINE_GPUS_SAYS" "gpus = \"all\""
  expect_gone "$(latest_run_id)" "$tp" "after the gpus job"
fi
finish
