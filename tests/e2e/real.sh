#!/usr/bin/env bash
# Real TPU hardware (--real, emulate = "real"): the same spec, emulated by
# default and real with one flag. Real hosts get no emulation variables,
# this process's TPU environment instead, and the gang's rendezvous
# variables; a real gang on the docker runtime is refused; `tpuci doctor
# --real` fails on this machine (no TPU) and passes on a machine made to
# look like a TPU VM: /dev/accel0 in a mount namespace of the test's own,
# and a metadata server on loopback (GCE_METADATA_HOST).
. "$TESTS/e2e/lib.sh"

cat > real.lua <<'LUA'
topology "v4-8" {}
topology "v4-16" {}
job "one" { topology = "v4-8", run = "env | sort > env-${TPUCI_HOST}.txt" }
job "wide" { topology = "v4-16", run = "true" }
LUA
cat > gang.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "v4-16" {}
job "gang" { image = "bb", topology = "v4-16", run = "true" }
LUA

# The plan: emulated by default, real with --real; the spec's own
# emulate value is still checked.
"$TPUCI" plan --json real.lua > emulated.json 2>/dev/null
code=$?
expect_code 0 "plan"
TPU_NAME=mine PJRT_DEVICE=TPU LIBTPU_INIT_ARGS=--x "$TPUCI" plan --real --json real.lua > real.json
code=$?
expect_code 0 "plan --real"
check=$(/usr/bin/python3 - emulated.json real.json <<'PY' 2>&1
import json, sys
emu, real = (json.load(open(p)) for p in sys.argv[1:3])
e = emu["instances"][0]["hosts"][0]["env"]
r = real["instances"][0]["hosts"][0]["env"]
assert [t["emulate"] for t in emu["topologies"]] == ["pjrt", "pjrt"], emu["topologies"]
assert [t["emulate"] for t in real["topologies"]] == ["real", "real"], real["topologies"]
assert e["PJRT_DEVICE"] == "CPU" and e["TPU_ACCELERATOR_TYPE"] == "v4-8", e
made_up = [k for k in r if k.startswith("TPU_") and k != "TPU_NAME"] + \
          [k for k in ("CPU_NUM_DEVICES", "CLOUD_TPU_TASK_ID", "XRT_WORKERS", "JAX_PLATFORMS") if k in r]
assert not made_up, made_up
assert r["PJRT_DEVICE"] == "TPU" and r["TPU_NAME"] == "mine" and r["LIBTPU_INIT_ARGS"] == "--x", r
assert r["MASTER_ADDR"] == "localhost" and r["WORLD_SIZE"] == "1" and r["RANK"] == "0", r
print("ok")
PY
)
[ "$check" = ok ] && pass || fail "plan --real: $check"
run_tpuci plan --real real.lua
expect_not_out "emulate = \"pjrt\" with" "a pjrt warning for real hardware"
sed 's/topology "v4-8" {}/topology "v4-8" { emulate = "cpu" }/' real.lua > badmode.lua
run_tpuci plan --real badmode.lua
expect_code 2 "a bad emulate with --real"
expect_out "emulate: unknown value 'cpu' (use 'pjrt', 'xrt', 'jax', 'none' or 'real')"
sed 's/topology "v4-8" {}/topology "v4-8" { emulate = "real" }/' real.lua > inspec.lua
got=$("$TPUCI" plan --json inspec.lua 2>/dev/null | /usr/bin/python3 -c '
import json, sys
i = json.load(sys.stdin)["instances"][0]
print(i["name"], sorted(k for k in i["hosts"][0]["env"] if k.startswith(("TPU_", "PJRT_"))))')
[ "$got" = "one []" ] && pass || fail "emulate = \"real\" in the spec: $got"

# A run: what the job saw.
TPU_NAME=mine run_tpuci run --real --only one real.lua
expect_code 0 "run --real"
grep -q '^TPU_NAME=mine$' env-0.txt && ! grep -q '^PJRT_DEVICE=CPU$' env-0.txt &&
  ! grep -q '^TPU_ACCELERATOR_TYPE=' env-0.txt && grep -q '^MASTER_ADDR=localhost$' env-0.txt &&
  pass || fail "the job's environment under --real: $(cat env-0.txt)"
run_tpuci run --only one real.lua
grep -q '^PJRT_DEVICE=CPU$' env-0.txt && pass || fail "emulated again without --real"

# A real gang needs a machine per host.
run_tpuci run --real gang.lua
expect_code 2 "a real gang on the docker runtime"
expect_out "'gang' is a gang of 2 hosts on real TPU hardware"

# The GitHub export runs what was exported: --real gives `tpuci run --real`.
"$TPUCI" export github "${GH_SOURCE[@]}" --real --runs-on self-hosted --runs-on tpu-v4-8 real.lua > real.yml 2>/dev/null
"$TPUCI" export github "${GH_SOURCE[@]}" real.lua > emulated.yml 2>/dev/null
check=$(/usr/bin/python3 - real.yml emulated.yml <<'PY' 2>&1
import sys, yaml
real, emu = (yaml.safe_load(open(p)) for p in sys.argv[1:3])
job = real["jobs"]["tpuci"]
run = [s["run"] for s in job["steps"] if s.get("name") == "Run the spec"][0]
assert job["runs-on"] == ["self-hosted", "tpu-v4-8"], job["runs-on"]
assert run.startswith("tpuci run --real "), run
erun = [s["run"] for s in emu["jobs"]["tpuci"]["steps"] if s.get("name") == "Run the spec"][0]
assert "--real" not in erun, erun
print("ok")
PY
)
[ "$check" = ok ] && pass || fail "export github --real: $check"
run_tpuci export kubernetes --real real.lua
expect_code 2 "export kubernetes --real"

# doctor --real: this machine is no TPU VM.
GCE_METADATA_HOST=127.0.0.1:9 run_tpuci doctor --real real.lua
expect_code 3 "doctor --real here"
expect_out "FAIL tpu devices: no /dev/accel*"
expect_out "FAIL tpu metadata: no metadata server at 127.0.0.1:9"

# ... and a machine that looks like one: a v4-8's metadata server, and a
# TPU device node in a mount namespace of our own.
if ! unshare -m true 2>/dev/null; then
  echo "note: no mount namespaces here (unshare -m): the TPU VM half is skipped" >&2
  finish
fi
# metadata.py VALUES.json: a metadata server answering the paths under
# computeMetadata/v1/instance/ that VALUES names, 404 for the others.
cat > metadata.py <<'PY'
import http.server, json, sys
VALUES = json.load(open(sys.argv[1]))
PREFIX = "/computeMetadata/v1/instance/"
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        key = self.path[len(PREFIX):]
        ok = self.headers.get("Metadata-Flavor") == "Google" and \
            self.path.startswith(PREFIX) and key in VALUES
        body = VALUES[key].encode() if ok else b"not found"
        self.send_response(200 if ok else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
# doctor_on VALUES.json SPEC [VAR=value...]: `tpuci doctor --real SPEC` with
# that metadata server and /dev/accel0; sets out, code and port (the exit
# code also says whether the engine answered: only the lines are checked).
doctor_on() {
  local values=$1 spec=$2 md
  shift 2
  rm -f port.txt
  /usr/bin/python3 metadata.py "$values" > port.txt &
  md=$!
  for _ in $(seq 50); do [ -s port.txt ] && break; sleep 0.1; done
  port=$(cat port.txt)
  out=$(env "$@" GCE_METADATA_HOST="127.0.0.1:$port" unshare -m sh -c '
    mount -t tmpfs tpuci-dev /dev && mknod /dev/null c 1 3 && mknod /dev/accel0 c 1 3 &&
    exec "$0" doctor --real "$1"' "$TPUCI" "$WORK/$spec" 2>&1)
  code=$?
  kill "$md"
  wait "$md" 2>/dev/null
}

# A Cloud TPU VM (a v4-8).
cat > v4.json <<'JSON'
{"attributes/accelerator-type": "v4-8", "attributes/agent-worker-number": "0",
 "attributes/worker-network-endpoints": "w-0:0:10.0.0.2"}
JSON
doctor_on v4.json real.lua
expect_out "ok   tpu devices: /dev/accel0"
expect_out "ok   tpu metadata: v4-8, worker 0 (127.0.0.1:$port)"
expect_out "ok   tpu workers: w-0:0:10.0.0.2"
expect_out "ok   tpu topology 'v4-8': this machine is a v4-8"
expect_out "warn tpu topology 'v4-16'"
expect_not_out "FAIL tpu" "a TPU VM failing the TPU checks"

# One whose type is only in tpu-env (as JAX reads it).
cat > tpuenv.json <<'JSON'
{"attributes/tpu-env": "ACCELERATOR_TYPE: 'v4-16'\nHOST_BOUNDS: '1,1,2'\nWORKER_ID: '1'\n"}
JSON
doctor_on tpuenv.json real.lua
expect_out "ok   tpu metadata: v4-16, worker 1 (127.0.0.1:$port)"
expect_out "ok   tpu topology 'v4-16': this machine is a v4-16"

# A TPU7x worker: a Compute Engine instance of a managed instance group,
# no Cloud TPU API node (no accelerator-type).
cat > tpu7x.lua <<'LUA'
topology "tpu7x-16" {}
topology "v6e-16" {}
job "one" { topology = "tpu7x-16", run = "true" }
job "two" { topology = "v6e-16", run = "true" }
LUA
cat > tpu7x.json <<'JSON'
{"machine-type": "projects/1234/machineTypes/tpu7x-standard-4t", "name": "ci-tpu7x-w1",
 "attributes/created-by": "projects/1234/zones/us-central1-c/instanceGroupManagers/ci-tpu7x"}
JSON
doctor_on tpu7x.json tpu7x.lua
expect_out "ok   tpu metadata: Compute Engine instance ci-tpu7x-w1, a tpu7x-standard-4t (tpu7x, 4 chips a VM) of instance group ci-tpu7x (127.0.0.1:$port)"
expect_out "ok   tpu topology 'tpu7x-16': its hosts are tpu7x-standard-4t VMs, as this one is"
expect_out "tpu7x.lua:2): its hosts are ct6e-standard-4t; this machine is a tpu7x-standard-4t"
expect_not_out "FAIL tpu" "a TPU7x instance failing the TPU checks"
# ... with TPU_ACCELERATOR_TYPE saying the slice's size.
doctor_on tpu7x.json tpu7x.lua TPU_ACCELERATOR_TYPE=tpu7x-16
expect_out "ok   tpu environment: TPU_ACCELERATOR_TYPE=tpu7x-16"
expect_out "ok   tpu topology 'tpu7x-16': this machine is a tpu7x-16"
doctor_on tpu7x.json tpu7x.lua TPU_ACCELERATOR_TYPE=v6e-16
expect_out "warn tpu environment: TPU_ACCELERATOR_TYPE=v6e-16 runs on ct6e-standard-4t VMs, this one is a tpu7x-standard-4t"

# A Compute Engine instance of no TPU machine type.
cat > n2.json <<'JSON'
{"machine-type": "projects/1234/machineTypes/n2-standard-8", "name": "builder"}
JSON
doctor_on n2.json tpu7x.lua
expect_out "FAIL tpu metadata: this is a Compute Engine n2-standard-8 instance, no TPU machine type (127.0.0.1:$port)"
finish
