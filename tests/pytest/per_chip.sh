#!/usr/bin/env bash
# One pytest process per chip (pytest = { per_chip = true }, docs/pytest.md
# "One process per chip") in real containers of the Python test image:
# an emulated v5litepod-4 gives 4 processes, each its own container and
# chip (TPU_VISIBLE_CHIPS, CLOUD_TPU_TASK_ID, TPU_PROCESS_PORT of its
# chip, the same TPU_PROCESS_ADDRESSES) and one chip's share of the CPU
# devices; together they run each test once, into one report. A failing
# test is retried in its own chip's process.
. "$TESTS/e2e/lib.sh"
image=${TPUCI_PYTEST_IMAGE:-tpuci-test/python:1}
need_python_image "$image"

mkdir -p project/tests out
chmod 777 out
for i in 0 1 2 3 4 5 6 7; do
  cat > "project/tests/test_c$i.py" <<PY
import os


def test_env_$i():
    e = os.environ
    chip = e["TPUCI_CHIP"]
    with open("/out/test_env_$i", "w") as f:
        f.write(" ".join(e.get(k, "-") for k in (
            "TPUCI_CHIP", "TPUCI_CHIPS", "TPU_VISIBLE_CHIPS", "CLOUD_TPU_TASK_ID",
            "TPU_PROCESS_PORT", "TPU_CHIPS_PER_PROCESS_BOUNDS", "TPU_PROCESS_BOUNDS",
            "CPU_NUM_DEVICES", "ALLOW_MULTIPLE_LIBTPU_LOAD", "HOSTNAME")) + "\n")
    assert e["TPU_PROCESS_ADDRESSES"] == ",".join("localhost:%d" % (8476 + c) for c in range(4))
    assert e["TPU_VISIBLE_CHIPS"] == chip
PY
done
# A test that fails the first time it runs only (its marker in /out).
cat > project/tests/test_flaky.py <<'PY'
import os


def test_flaky():
    mark = "/out/flaky-ran"
    first = not os.path.exists(mark)
    open(mark, "a").write(os.environ["TPUCI_CHIP"] + "\n")
    assert not first
PY
cat > spec.lua <<LUA
image "py" { ref = "$image", pull = "never" }
job "chips" {
  image = "py", topology = "v5litepod-4", timeout = "120s",
  mounts = { [tpuci.spec_dir .. "/project"] = { target = "/src", readonly = true },
             [tpuci.spec_dir .. "/out"] = "/out" },
  workdir = "/src", retries = { attempts = 2 },
  pytest = { python = "python3", per_chip = true, args = { "-p", "no:cacheprovider", "tests/" } },
}
LUA

# The plan: 4 processes, one a chip.
"$TPUCI" plan --json spec.lua > plan.json
code=$?
expect_code 0 "plan"
check=$(/usr/bin/python3 - <<'PY' 2>&1
import json
p = json.load(open("plan.json"))
insts = [i for i in p["instances"] if i["job"] == "chips"]
chips = sorted(i["hosts"][0]["env"]["TPU_VISIBLE_CHIPS"] for i in insts)
assert chips == ["0", "1", "2", "3"], chips
print("ok")
PY
)
[ "$check" = ok ] && pass || fail "plan of a per-chip job: $check"

run_tpuci run -j 4 spec.lua
expect_code 0 "per-chip run"
expect_out "instances: passed 3, flaky 1, failed 0, timeout 0, oom 0, infra 0, cancelled 0 (of 4)"
check=$(/usr/bin/python3 - <<'PY' 2>&1
import glob, os
rows = {os.path.basename(p): open(p).read().split() for p in glob.glob("out/test_env_*")}
assert sorted(rows) == ["test_env_%d" % i for i in range(8)], sorted(rows)
chips = set()
for name, r in rows.items():
    chip, n, visible, task, port, cpb, pb, cpus, allow, host = r
    assert n == "4" and visible == chip and task == chip, (name, r)
    assert port == str(8476 + int(chip)), (name, r)
    assert (cpb, pb, cpus, allow) == ("1,1,1", "2,2,1", "1", "1"), (name, r)
    chips.add((chip, host))
# 8 tests over 4 processes, each its own container: 4 chips, 4 hosts.
assert len({c for c, _ in chips}) == 4 and len({h for _, h in chips}) == 4, chips
flaky = open("out/flaky-ran").read().split()
# Its retry (and the order check of a test that failed, then passed)
# ran on its chip.
assert len(flaky) >= 2 and len(set(flaky)) == 1, flaky
print("ok")
PY
)
[ "$check" = ok ] && pass || fail "per-chip processes: $check"
# One merged report: each test once.
expect_json 'sorted(t["id"].split("::")[1] for i in s["instances"] for t in i.get("tests", []))' \
  "['test_env_0', 'test_env_1', 'test_env_2', 'test_env_3', 'test_env_4', 'test_env_5', 'test_env_6', 'test_env_7', 'test_flaky']"
finish
