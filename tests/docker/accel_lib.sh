# The accelerator options (shm_size, ipc, privileged, devices, cap_add,
# cap_drop, ulimits, gpus, sysctls) against a real engine, read back from
# inside each container and from its inspect (HostConfig). Shared by
# tests/docker/accel.sh and tests/podman/accel.sh: source the engine's
# lib.sh first (api, tpuci_run, count_objects, $BUSYBOX), then this, then
# call accel_checks, then accel_gpus with what the engine does with gpus.
# DOCKER_HOST must be a unix socket. PODMAN=1: podman's inspect names
# limits RLIMIT_*, and shows neither the devices' permissions nor the
# sysctls (the container's own view is checked all the same).
#
# The ulimits stay under this machine's hard limits: raising one needs
# CAP_SYS_RESOURCE where the engine runs, which the test machines lack
# (docs/spec.md, "Accelerators").

# ctr_delete NAME: removes a container the test kept.
ctr_delete() {
  curl -sf --max-time 30 --unix-socket "${DOCKER_HOST#unix://}" -X DELETE \
    "http://localhost/containers/$1?force=1" > /dev/null
}

# hc NAME EXPR: a Python expression over the container's HostConfig (h),
# as keep_inspect saved it.
hc() {
  /usr/bin/python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["HostConfig"]; print(eval(sys.argv[2]))' \
    "$WORK/$1.inspect.json" "$2"
}

# keep_inspect NAME...: saves the containers' inspects at once (a `tpuci
# gc` of another test's may remove a kept container of a dead run).
keep_inspect() {
  local c
  for c in "$@"; do api "/containers/$c/json" > "$WORK/$c.inspect.json"; done
}

# expect_hc NAME EXPR WANT
expect_hc() {
  local got
  got=$(hc "$1" "$2" 2>&1)
  if [ "$got" = "$3" ]; then pass; else fail "$1: HostConfig: $2 = '$got', want '$3'"; fi
}

# log_of JOB: the attempt's output.
log_of() {
  cat "$WORK/.tpuci/runs/latest/$1/attempt-1.log" 2>/dev/null
}

accel_checks() {
  local run_id acc priv
  cat > accel.lua <<LUA
image "bb" { ref = "$BUSYBOX", pull = "never" }
-- Each check job fails (exit 3), so that --keep-failed keeps its
-- container for the inspect.
job "acc" {
  image = "bb", network = "none",
  shm_size = "1g", ipc = "shareable",
  devices = { "/dev/null:/dev/accel0:rwm", "/dev/[nz][ue][lr][lo]:rw" },
  cap_add = { "NET_ADMIN" }, cap_drop = { "net_raw", "CAP_MKNOD" },
  ulimits = { memlock = { soft = 4096, hard = 8192 }, nofile = 1000 },
  sysctls = { ["net.core.somaxconn"] = 1024 },
  run = [[
    echo "shm \$(df -k /dev/shm | awk 'NR == 2 { print \$2 }')"
    ls -l /dev/accel0 | awk '{ print "accel0", substr(\$1, 1, 1), \$5, \$6 }'
    echo "memlock \$(ulimit -l) nofile \$(ulimit -n)"
    echo "somaxconn \$(cat /proc/sys/net/core/somaxconn)"
    c=\$(awk '/^CapEff/ { print \$2 }' /proc/self/status)
    echo "net_admin \$(( (0x\$c >> 12) & 1 )) net_raw \$(( (0x\$c >> 13) & 1 )) mknod \$(( (0x\$c >> 27) & 1 ))"
    exit 3
  ]],
}
job "priv" {
  image = "bb", network = "none", privileged = true,
  run = [[
    c=\$(awk '/^CapEff/ { print \$2 }' /proc/self/status)
    echo "sys_admin \$(( (0x\$c >> 21) & 1 )) sys_module \$(( (0x\$c >> 16) & 1 ))"
    exit 3
  ]],
}
-- A glob that matches nothing fails the attempt before anything is made.
job "noaccel" { image = "bb", network = "none", devices = { "/dev/tpuci-no-accel*" },
                run = "true" }
LUA
  tpuci_run run --keep-failed -j 3 accel.lua
  expect_code 1 "the check jobs fail"
  run_id=$(latest_run_id)
  acc="tpuci-$run_id-acc-1"
  priv="tpuci-$run_id-priv-1"
  keep_inspect "$acc" "$priv"
  expect_json '{i["name"]: i["outcome"] for i in s["instances"] if i["name"] != "priv"}' \
    "{'acc': 'failed', 'noaccel': 'infra'}"

  # From inside.
  out=$(log_of acc)
  expect_out "shm 1048576" "shm_size = 1g is /dev/shm's size (df)"
  expect_out "accel0 c 1, 3" "/dev/null at /dev/accel0"
  expect_out "memlock 4 nofile 1000" "ulimits (memlock in KiB)"
  expect_out "somaxconn 1024" "sysctls"
  expect_out "net_admin 1 net_raw 0 mknod 0" "cap_add and cap_drop"
  # An engine that runs in a container of its own (as on the test
  # machines) may lack the capabilities a privileged container gets: runc
  # then fails to apply them, which only a privileged container asks for.
  if [ "$(json '[i for i in s["instances"] if i["name"] == "priv"][0]["outcome"]')" = failed ]; then
    out=$(log_of priv)
    expect_out "sys_admin 1 sys_module 1" "privileged has every capability"
    expect_hc "$priv" 'h["Privileged"]' True
  else
    expect_json '[(a["outcome"], "unable to apply caps" in a["cause"]) for a in [i for i in s["instances"] if i["name"] == "priv"][0]["attempts"]]' "[('infra', True)]"
  fi

  # From the engine.
  expect_hc "$acc" 'h["ShmSize"]' 1073741824
  expect_hc "$acc" 'h["IpcMode"]' shareable
  expect_hc "$acc" 'h["Privileged"]' False
  if [ -z "${PODMAN:-}" ]; then
    expect_hc "$acc" '[(d["PathOnHost"], d["PathInContainer"], d["CgroupPermissions"]) for d in h["Devices"]]' \
      "[('/dev/null', '/dev/accel0', 'rwm'), ('/dev/null', '/dev/null', 'rw'), ('/dev/zero', '/dev/zero', 'rw')]"
    expect_hc "$acc" 'h["Sysctls"]' "{'net.core.somaxconn': '1024'}"
  else
    expect_hc "$acc" '[(d["PathOnHost"], d["PathInContainer"]) for d in h["Devices"]]' \
      "[('/dev/null', '/dev/accel0'), ('/dev/null', '/dev/null'), ('/dev/zero', '/dev/zero')]"
  fi
  expect_hc "$acc" 'sorted(c.upper().replace("CAP_", "") for c in h["CapAdd"])' "['NET_ADMIN']"
  expect_hc "$acc" 'sorted(c.upper().replace("CAP_", "") for c in h["CapDrop"])' "['MKNOD', 'NET_RAW']"
  # (podman adds nproc of its own: tests/engines/basic.sh.)
  expect_hc "$acc" 'sorted((u["Name"].lower().replace("rlimit_", ""), u["Soft"], u["Hard"]) for u in h["Ulimits"] if "nproc" not in u["Name"].lower())' \
    "[('memlock', 4096, 8192), ('nofile', 1000, 1000)]"

  # The unmatched glob names the spec's line, the job and the pattern.
  WANT="job 'noaccel': devices: '/dev/tpuci-no-accel*' matches no device on this machine" \
    expect_json '[(c.startswith("accel.lua:"), __import__("os").environ["WANT"] in c) for c in [[i for i in s["instances"] if i["name"] == "noaccel"][0]["attempts"][0]["cause"]]][0]' "(True, True)"
  [ "$(count_objects containers "tpuci.run=$run_id" "tpuci.pid=$tp" "tpuci.job=noaccel")" = 0 ] && pass ||
    fail "an attempt whose glob matched nothing made a container"

  for c in $(api "/containers/json?all=1&filters=$(python3 -c 'import json,sys,urllib.parse; print(urllib.parse.quote(json.dumps({"label":sys.argv[1:]})))' "tpuci.run=$run_id" "tpuci.pid=$tp")" |
      python3 -c 'import json,sys; print(" ".join(c["Id"] for c in json.load(sys.stdin)))'); do
    ctr_delete "$c"
  done
  expect_no_leftovers "$run_id" "$tp" "after removing the kept containers"
}

# accel_gpus CODE TEXT: a job with gpus = "all" ends the run with exit
# CODE and TEXT in tpuci's output (no GPU here: what the engine makes of
# the device request).
accel_gpus() {
  cat > gpus.lua <<LUA
job "gpu" { image = "$BUSYBOX", network = "none", gpus = "all", run = "true" }
LUA
  tpuci_run run gpus.lua
  expect_code "$1" "gpus = \"all\""
  expect_out "$2" "gpus = \"all\""
  expect_no_leftovers "$(latest_run_id)" "$tp" "after the gpus job"
}
