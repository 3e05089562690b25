#!/usr/bin/env bash
# Every container's log is complete: 100 containers at -j 8, with and
# without a trailing newline, on stdout and on stderr, small and large.
# Docker 20.10 can end a followed logs stream before the container's last
# lines (moby#43860); reading the output through an attach made before
# the container starts must not lose a byte.
. "$TESTS/docker/lib.sh"

cat > spec.lua <<'EOF'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
local ids = {}
for i = 1, 20 do ids[i] = i end
local function j(name, run)
  job(name) { image = "bb", network = "none", run = run, matrix = { i = ids } }
end
j("lines",    "seq 1 20000")                        -- 108,894 bytes, newline at the end
j("open",     "seq 1 20000; printf 'last line, no newline'")
j("stderr",   "seq 1 20000 >&2; printf tail >&2")
j("tiny",     "printf x")
j("large",    "seq 1 300000")                       -- about 2 MB
EOF

tpuci_run run -j 8 --plain spec.lua
expect_code 0 "100 containers"

# Each log against what the command prints, byte for byte.
report=$(python3 - "$WORK/.tpuci/runs/latest/summary.json" <<'EOF'
import json, sys
def seq(n):
    return "".join("%d\n" % k for k in range(1, n + 1)).encode()
want = {
    "lines": seq(20000),
    "open": seq(20000) + b"last line, no newline",
    "stderr": seq(20000) + b"tail",
    "tiny": b"x",
    "large": seq(300000),
}
s = json.load(open(sys.argv[1]))
total = complete = 0
bad = []
for inst in s["instances"]:
    job = inst["job"]
    for a in inst["attempts"]:
        total += 1
        got = open(a["log"], "rb").read()
        if got == want[job]:
            complete += 1
        else:
            bad.append("%s: %d bytes, want %d; ends %r" % (inst["name"], len(got), len(want[job]), got[-20:]))
print("%d/%d" % (complete, total))
for b in bad[:10]:
    print(b)
EOF
)
echo "logs complete: $report"
case "$report" in
  "100/100") pass ;;
  *) fail "incomplete logs: $report" ;;
esac
expect_no_leftovers "$(latest_run_id)" "$tp" "after the run"
finish
