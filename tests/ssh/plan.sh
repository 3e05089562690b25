#!/usr/bin/env bash
# `hosts` jobs through the binary: `tpuci plan` (text and JSON) shows the
# workers, the gcloud file's in its order; a count mismatch is exit 2
# naming file:line, the job and both counts; a key only containers have
# is a warning, and `--engine swarm` leaves it an ssh job.
. "$TESTS/e2e/lib.sh"

mkdir -p ci
cat > tpu.json <<'JSON'
{"name": "t", "networkEndpoints": [{"ipAddress": "10.130.0.7", "port": 8470},
                                   {"ipAddress": "10.130.0.5", "port": 8470}]}
JSON
cat > spec.lua <<'LUA'
hosts "slice" { "root@10.0.0.2", "root@10.0.0.3:2222", ssh_config = "ci/ssh_config" }
hosts "tpu" { gcloud = "tpu.json", user = "me" }
topology "v4-16" { emulate = "none" }
job "train" { topology = "v4-16", hosts = "slice", run = "true" }
job "g" { topology = "v4-16", hosts = "tpu", run = "true" }
job "here" { run = "true" }
LUA

run_tpuci plan spec.lua
expect_code 0 "plan"
expect_out "  runtime:  ssh"
expect_out "  ssh -F:   $WORK/ci/ssh_config"
expect_out "  worker:   worker-1 on root@10.0.0.3:2222"
expect_out "  ssh:      hosts 'tpu' (spec.lua:2), read from $WORK/tpu.json"
expect_out "  worker:   worker-0 on me@10.130.0.7"

"$TPUCI" plan --engine swarm --json spec.lua > plan.json 2>/dev/null
code=$?
expect_code 0 "plan --json"
check=$(/usr/bin/python3 - plan.json <<'PY' 2>&1
import json, sys
p = json.load(open(sys.argv[1]))
i = {x["name"]: x for x in p["instances"]}
assert i["train"]["runtime"] == "ssh" and i["g"]["runtime"] == "ssh", i["train"]["runtime"]
assert i["here"]["runtime"] == "local" and i["here"]["ssh"] is None
w = [x["target"] for x in i["g"]["ssh"]["workers"]]
assert w == ["me@10.130.0.7", "me@10.130.0.5"], w
assert [h["name"] for h in i["train"]["hosts"]] == ["worker-0", "worker-1"]
PY
)
if [ -z "$check" ]; then pass; else fail "plan --json: $check"; fi

cat > mounts.lua <<'LUA'
hosts "one" { "10.0.0.9" }
job "m" { hosts = "one", mounts = { ["."] = "/src" }, run = "true" }
LUA
run_tpuci plan mounts.lua
expect_code 0 "plan of an ssh job with mounts"
expect_out "mounts.lua:2: job 'm': mounts: ignored by runtime 'ssh'"
run_tpuci run -j 2 --only here spec.lua
expect_code 0 "run of the other job"

cat > count.lua <<'LUA'
hosts "slice" { "a", "b" }

job "wide" { topology = "v4-32", hosts = "slice", run = "true" }
LUA
run_tpuci plan count.lua
expect_code 2 "count mismatch"
expect_out "count.lua:3: job 'wide': hosts 'slice' (count.lua:1) has 2 hosts, but topology 'v4-32' has 4"
finish
