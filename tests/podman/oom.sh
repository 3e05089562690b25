#!/usr/bin/env bash
# Podman and memory limits. The kernel enforces a job's memory limit
# (cgroup v1 memory controller, cgroupfs manager) and kills the job, but
# podman before 5.0 never sets State.OOMKilled: its conmon records the
# kill in a file "oom" in its working directory, where podman does not
# look (containers/podman#13102, containers/conmon#504). So on podman 4
# the outcome is failed with exit 137, and tpuci's cause says what that
# probably is; on podman 5 and later it must be oom, as on Docker.
. "$TESTS/podman/lib.sh"

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "hungry" { image = "bb", network = "none", memory = "16m",
  run = "head -c 64m /dev/zero | tail" }
job "modest" { image = "bb", network = "none", memory = "16m",
  run = "head -c 4m /dev/zero | tail | wc -c" }
topology "duo" { hosts = 2 }
job "ganghungry" { image = "bb", topology = "duo", memory = "16m",
  run = "if [ $TPUCI_HOST = 1 ]; then head -c 64m /dev/zero | tail; exit $?; fi; sleep 30" }
LUA
version=$(podman_version)
major=${version%%.*}
tpuci_run run -j 3 spec.lua
expect_code 1 "the memory kill fails the run"
if [ "$major" -ge 5 ]; then
  expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'hungry': 'oom', 'modest': 'passed', 'ganghungry': 'oom'}"
else
  expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'hungry': 'failed', 'modest': 'passed', 'ganghungry': 'failed'}"
  expect_json 's["instances"][0]["attempts"][0]["exit_code"]' 137
  expect_json 's["instances"][0]["attempts"][0]["cause"]' "exit 137 (SIGKILL under a memory limit of 16 MiB: probably out of memory, but podman $version does not report OOM kills)"
  expect_json 's["instances"][2]["attempts"][0]["cause"].startswith("worker-1: exit 137 (SIGKILL under a memory limit of 16 MiB")' True
  # The limit was enforced: the kernel killed the job, and conmon saw it.
  [ -e "$PM/oom" ] && pass || fail "no $PM/oom: conmon saw no OOM kill (did podman change?)"
  # No second look for an OOMKilled that never comes (Docker: up to 1 s).
  expect_json 's["instances"][0]["attempts"][0]["duration_ms"] < 5000' True
fi
expect_json 's["instances"][1]["attempts"][0]["exit_code"]' 0
expect_no_leftovers "$(latest_run_id)" "$tp" "after an OOM kill"
finish
