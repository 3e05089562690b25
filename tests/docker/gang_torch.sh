#!/usr/bin/env bash
# A real torch.distributed gloo all_reduce across the 2 containers of an
# emulated v4-16 gang (Debian's python3-torch in tpuci-test/torch:1), as
# the example specs/v4-16-torch.lua runs it (pytest), and as a plain
# script whose sums the test reads from each host's log.
. "$TESTS/docker/lib.sh"

TORCH=tpuci-test/torch:1
if ! api "/images/$TORCH/json" >/dev/null 2>&1; then
  echo "building $TORCH (tests/images/build-torch.sh, about 2.5 minutes)" >&2
  if ! bash "$TESTS/images/build-torch.sh" >&2; then
    echo "SKIP: $TORCH is missing and tests/images/build-torch.sh could not build it (no Debian mirror?)"
    exit 77
  fi
fi

cp -r "$TESTS/../specs/v4-16-torch.lua" "$TESTS/../specs/v4-16-torch" .
cat > plain.lua <<'LUA'
image "torch" { ref = "tpuci-test/torch:1", pull = "never" }
topology "v4-16" { emulate = "none" }
job "allreduce" {
  image = "torch", topology = "v4-16", timeout = "6m",
  cmd = { "python3", "-c", [[
import datetime, os, torch, torch.distributed as dist
dist.init_process_group("gloo", init_method="env://", timeout=datetime.timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
assert (rank, world) == (int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])) == (int(os.environ["TPU_WORKER_ID"]), 2)
t = torch.arange(3, dtype=torch.float32) + 10 * (rank + 1)
dist.all_reduce(t)
print("rank", rank, "sum", t.tolist(), flush=True)
assert t.tolist() == [30.0, 32.0, 34.0], t
dist.destroy_process_group()
]] },
}
LUA
start=$(date +%s)
tpuci_run run plain.lua
echo "plain all_reduce gang: $(( $(date +%s) - start )) s" >&2
expect_code 0 "the all_reduce gang passes"
log=$WORK/.tpuci/runs/latest/allreduce/attempt-1.log
for r in 0 1; do
  grep -qx "\[worker-$r\] rank $r sum \[30.0, 32.0, 34.0\]" "$log" && pass || fail "worker-$r did not report the sum; log: $(tail -n 20 "$log")"
  grep -qx "rank $r sum \[30.0, 32.0, 34.0\]" "$WORK/.tpuci/runs/latest/allreduce/attempt-1.worker-$r.log" && pass || fail "worker-$r's own log lacks its sum"
done
expect_no_leftovers "$(latest_run_id)" "$tp" "after the plain all_reduce"

# The example spec: pytest in both hosts, JUnit from each host's own
# results folder.
start=$(date +%s)
tpuci_run run v4-16-torch.lua
echo "example v4-16 torch gang: $(( $(date +%s) - start )) s" >&2
expect_code 0 "specs/v4-16-torch.lua passes"
expect_out "[worker-0] test_allreduce.py::test_gloo_all_reduce PASSED"
expect_out "[worker-1] test_allreduce.py::test_gloo_all_reduce PASSED"
dir=$WORK/.tpuci/runs/latest/allreduce
for r in 0 1; do
  [ -s "$dir/results-1/worker-$r/junit.xml" ] && pass || fail "no JUnit XML from worker-$r in $dir/results-1/worker-$r"
done
expect_no_leftovers "$(latest_run_id)" "$tp" "after the example"
finish
