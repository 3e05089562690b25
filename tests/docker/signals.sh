#!/usr/bin/env bash
# Ctrl-C and SIGTERM are honoured before anything runs, too: while tpuci
# checks an engine that does not answer (a proxy that holds GET /version)
# and while the engine pulls an image from a registry that never answers.
# Each time tpuci exits 130 soon after the signal (bounded at 5 s here, far
# below the 30 s a hung check or the minutes a hung pull would take), and
# a cancelled pull is cancelled in the engine too: its connection to the
# registry closes.
. "$TESTS/docker/lib.sh"

engine_sock=${DOCKER_HOST#unix://}
case "$DOCKER_HOST" in
  unix://*) ;;
  *) echo "SKIP: needs a unix socket engine"; exit 77 ;;
esac

cat > spec.lua <<'EOF'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "j" { image = "bb", network = "none", run = "true" }
EOF

# signal_run SIG COUNT WHAT ENV...: starts tpuci run, waits for $ready
# (a command) to succeed, sends SIG COUNT times, and checks exit 130
# within 5 s of the first signal.
signal_run() {
  local sig=$1 count=$2 what=$3 spec=$4 t0 t1 i
  shift 4
  env "$@" "$TPUCI" run --plain "$spec" > "$WORK/run.out" 2>&1 &
  tp=$!
  for i in $(seq 1 100); do
    if eval "$ready"; then break; fi
    sleep 0.1
  done
  eval "$ready" || fail "$what: never got to the phase under test"
  t0=$(date +%s%N)
  for i in $(seq 1 "$count"); do kill -"$sig" "$tp" 2>/dev/null; sleep 0.05; done
  for i in $(seq 1 100); do
    kill -0 "$tp" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$tp" 2>/dev/null; then
    fail "$what: still running 5 s after SIG$sig"
    kill -KILL "$tp"
  fi
  wait "$tp"
  code=$?
  t1=$(date +%s%N)
  out=$(cat "$WORK/run.out")
  echo "$what: exit $code $(( (t1 - t0) / 1000000 )) ms after the first SIG$sig"
  expect_code 130 "$what"
}

# 1. The engine check: GET /version never answered.
python3 "$TESTS/docker/faultproxy.py" "$WORK/hang.sock" "$engine_sock" 'hang*:GET:^/version' \
  2> "$WORK/proxy.log" &
proxy=$!
trap 'kill $proxy $registry 2>/dev/null; rm -rf "$WORK"' EXIT
for i in $(seq 1 50); do [ -S "$WORK/hang.sock" ] && break; sleep 0.1; done
ready='grep -q "GET /version -> hang" "$WORK/proxy.log"'
signal_run INT 1 "SIGINT during the engine check" spec.lua DOCKER_HOST="unix://$WORK/hang.sock"
expect_out "interrupted" "SIGINT during the engine check"
: > "$WORK/proxy.log"
signal_run TERM 1 "SIGTERM during the engine check" spec.lua DOCKER_HOST="unix://$WORK/hang.sock"
: > "$WORK/proxy.log"
signal_run INT 2 "two SIGINTs during the engine check" spec.lua DOCKER_HOST="unix://$WORK/hang.sock"
grep -q "GET /version -> the client went away" "$WORK/proxy.log" && pass ||
  fail "the hung check's connection was not closed"

# 2. An image pull from a registry that accepts connections and never
# answers (the engine treats 127.0.0.1 registries as insecure, so it
# connects to it directly).
python3 - "$WORK/registry.log" "$WORK/registry.port" <<'EOF' &
import socket, sys, threading
log = open(sys.argv[1], "a", buffering=1)
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(16)
open(sys.argv[2], "w").write(str(srv.getsockname()[1]))
def hold(c, n):
    try:
        while c.recv(4096):
            pass
    except OSError:
        pass
    log.write("closed %d\n" % n)
n = 0
while True:
    c, _ = srv.accept()
    n += 1
    log.write("accepted %d\n" % n)
    threading.Thread(target=hold, args=(c, n), daemon=True).start()
EOF
registry=$!
for i in $(seq 1 50); do [ -s "$WORK/registry.port" ] && break; sleep 0.1; done
port=$(cat "$WORK/registry.port")
cat > pull.lua <<EOF
image "never" { ref = "127.0.0.1:$port/tpuci-test/never:1", pull = "always" }
job "j" { image = "never", network = "none", run = "true" }
EOF
ready='grep -q accepted "$WORK/registry.log"'
signal_run INT 1 "SIGINT during an image pull" pull.lua
expect_out "pulling image" "SIGINT during an image pull"
# The engine gives up the pull: every connection to the registry closes.
for i in $(seq 1 100); do
  a=$(grep -c accepted "$WORK/registry.log"); c=$(grep -c closed "$WORK/registry.log")
  [ "$a" = "$c" ] && break
  sleep 0.1
done
[ "$a" = "$c" ] && pass || fail "the engine still pulls: $a connections to the registry, $c closed"
: > "$WORK/registry.log"
signal_run TERM 1 "SIGTERM during an image pull" pull.lua
expect_no_leftovers "$(latest_run_id)" "$tp" "after the cancelled pulls"
finish
