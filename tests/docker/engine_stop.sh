#!/usr/bin/env bash
# An engine stopped gracefully while a container runs (dockerd sends it
# SIGTERM, it exits 143) is the engine's failure, not the test's: the
# attempt is infra, so `on = { "infra" }` retries it, and the retry runs
# once the engine is back. Nothing is left after `tpuci gc`.
. "$TESTS/docker/lib.sh"

edir=$WORK/engine
trap 'private_engine_down "$edir" TERM; private_engine_gone "$edir"; rm -rf "$WORK"' EXIT
private_engine_up "$edir" || { fail "cannot start a private engine"; finish; }

cat > spec.lua <<'EOF'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "sleepy" {
  image = "bb", network = "none",
  -- The first attempt waits for the engine to go away; the retry passes.
  run = [[ [ "$TPUCI_ATTEMPT" = 2 ] && exit 0; echo waiting; sleep 120 ]],
  -- The backoff leaves a loaded machine room to bring the engine back.
  retries = { attempts = 2, on = { "infra" }, backoff = "20s" },
}
EOF

DOCKER_HOST=$PRIVATE_HOST "$TPUCI" run --plain spec.lua > "$WORK/run.out" 2>&1 &
tp=$!
for i in $(seq 1 150); do
  grep -q waiting .tpuci/runs/latest/*/attempt-1.log 2>/dev/null && break
  sleep 0.1
done
grep -q waiting .tpuci/runs/latest/*/attempt-1.log 2>/dev/null && pass || fail "the container never ran"
# A graceful stop, then the engine comes back (as systemd would restart it).
private_engine_down "$edir" TERM
private_engine_up "$edir" || fail "the engine did not come back"
wait "$tp"
code=$?
out=$(cat "$WORK/run.out")
expect_code 0 "the retry after the engine came back"
first=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["outcome"])' \
  .tpuci/runs/latest/attempts.jsonl)
[ "$first" = infra ] && pass || fail "the attempt the engine stopped is '$first', want infra"
expect_out "it stopped while container" "the cause names the engine stopping"
expect_not_out "failed: exit 143" "no test failure with exit 143"

# What the stopped engine could not remove, gc removes.
DOCKER_HOST=$PRIVATE_HOST run_tpuci gc
expect_code 0 "gc"
left=$(DOCKER_HOST=$PRIVATE_HOST "$TPUCI" gc --dry-run 2>&1)
case "$left" in
  *"nothing to remove"*) pass ;;
  *) fail "gc left something: $left" ;;
esac
finish
