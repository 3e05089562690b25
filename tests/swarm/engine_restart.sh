#!/usr/bin/env bash
# The swarm manager's engine crashes (SIGKILL of dockerd alone) while
# tasks run, and comes back. On a single-node swarm of the test's own (a
# dockerd in a network namespace, netns.sh; the engine at DOCKER_HOST is
# never touched):
#
# - "quiet" prints a line, then, while the engine is gone, prints more
#   and exits 0. The engine logs a container's output only while it runs
#   itself, so those lines are lost: the attempt passes, but says that
#   its log is incomplete (a message naming the service, and
#   "; log incomplete: the engine went away while service ... ran" in
#   its cause) instead of passing with a silently cut log.
# - "long" still runs when the engine is back, which stops it (exit 143,
#   a SIGTERM tpuci did not send): the attempt is infra, as with the
#   docker runtime, and its retry passes.
#
# Nothing is left. The jobs wait on files of a bind-mounted folder, so
# the test decides when each line is printed, not a clock.
set -u
: "${TESTS:?}" "${TPUCI:?}"
. "$TESTS/swarm/netns.sh"
. "$TESTS/e2e/lib.sh"

n=ter$$
nodes=$(mktemp -d /var/tmp/tpuci-restart.XXXXXX)
mkdir -p "$nodes/tmp"
export TMPDIR=$nodes/tmp
cleanup() {
  node_down "$nodes" "$n"
  rm -rf "$nodes" "$WORK"
}
trap cleanup EXIT

node_up "$nodes" "$n" || { fail "the private dockerd did not answer"; finish; }
export DOCKER_HOST=$NODE_HOST
bash "$TESTS/../.ci/swarm-up.sh" >/dev/null 2>&1 || { fail "swarm init on the private engine"; finish; }
bash "$TESTS/images/build-busybox.sh" >/dev/null 2>&1 || { fail "the busybox image"; finish; }

mkdir -p "$WORK/flags"
cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
local flags = { ["flags"] = "/flags" }
job "quiet" { image = "bb", runtime = "swarm", mounts = flags, run = [[
  echo before the crash
  while [ ! -e /flags/go ]; do sleep 0.1; done
  echo printed while the engine was gone
  touch /flags/quiet-done ]] }
job "long" { image = "bb", runtime = "swarm", mounts = flags,
  retries = { attempts = 2, on = { "infra" }, backoff = "1s" }, run = [[
  [ "$TPUCI_ATTEMPT" -ge 2 ] && { echo second attempt; exit 0; }
  echo long is up
  while :; do sleep 0.1; done ]] }
LUA

"$TPUCI" run --plain -j 2 spec.lua > "$WORK/tpuci.out" 2>&1 &
tp=$!
for _ in $(seq 300); do
  l=$(cat .tpuci/runs/latest/*/attempt-1.log 2>/dev/null | grep -c -e '^before the crash$' -e '^long is up$')
  [ "$l" = 2 ] && break
  sleep 0.1
done
[ "$l" = 2 ] && pass || fail "both jobs should have printed their first line, $l did"
node_crash "$nodes" "$n" || fail "dockerd did not die"
touch "$WORK/flags/go"
for _ in $(seq 100); do
  [ -e "$WORK/flags/quiet-done" ] && break
  sleep 0.1
done
[ -e "$WORK/flags/quiet-done" ] && pass || fail "quiet did not end while the engine was gone"
node_up "$nodes" "$n" || fail "the engine did not come back"
wait "$tp"
code=$?
out=$(cat "$WORK/tpuci.out")
expect_code 0 "both jobs pass in the end"
attempts() { # INSTANCE: "outcome|cause" of each attempt
  json "'\n'.join('%s|%s' % (a['outcome'], a['cause']) for i in s['instances'] if i['name'] == '$1' for a in i['attempts'])"
}
q=$(attempts quiet)
case "$q" in
  "passed|exit 0; log incomplete: the engine went away while service tpuci-"*"-quiet-1 ran") pass ;;
  *) fail "quiet: '$q', want passed with its log marked incomplete" ;;
esac
expect_out "-quiet-1 may be incomplete: the swarm manager's engine went away while its task ran"
log=$(json "[i for i in s['instances'] if i['name'] == 'quiet'][0]['attempts'][0]['log']")
grep -qx 'before the crash' "$log" && pass || fail "quiet's log lost the line the engine had logged"
l=$(attempts long)
case "$l" in
  "infra|swarm: the task of service tpuci-"*"-long-1 ended by signal 15 (exit 143) after the manager's engine went away while it ran"*"passed|exit 0") pass ;;
  *) fail "long: '$l', want infra (stopped by the restarted engine), then passed" ;;
esac
# Nothing of the run is left on the engine.
left() {
  curl -sf --unix-socket "${DOCKER_HOST#unix://}" "http://localhost/v1.41/$1?all=1&filters=$(
    python3 -c 'import json,sys,urllib.parse; print(urllib.parse.quote(json.dumps({"label":sys.argv[1:]})))' "tpuci.pid=$tp")" |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'
}
for _ in $(seq 50); do
  l="$(left services) $(left networks) $(left containers/json)"
  [ "$l" = "0 0 0" ] && break
  sleep 0.2
done
[ "$l" = "0 0 0" ] && pass || fail "left behind (services, networks, containers): $l"
finish
