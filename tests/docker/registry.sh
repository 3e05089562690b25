#!/usr/bin/env bash
# Private registries (docs/docker.md, "Private registries"), on an engine
# of the test's own that trusts a registry of the test's own: Debian's
# docker-registry (distribution 2.8) on 127.0.0.1, with htpasswd (bcrypt)
# logins over plain HTTP (the engine runs with --insecure-registry).
#
# The busybox test image is pushed there and removed from the engine;
# then `tpuci run` of a job on 127.0.0.1:PORT/busybox:1:
# - without credentials, and with wrong ones: exit 3, one line naming
#   the image and the registry and whether credentials were sent;
# - with them in $DOCKER_CONFIG/config.json ("auths"): it pulls and runs,
#   and says it pulled (a plain line; on a pty, the board's pull line);
# - with a docker-credential-<name> helper on PATH ("credHelpers"): too;
# and the password (or its base64) appears nowhere in tpuci's output nor
# in the run folder.
PRIVATE_ENGINE_ONLY=1
. "$TESTS/docker/lib.sh"

for tool in docker-registry htpasswd; do
  command -v $tool >/dev/null || { echo "SKIP: no $tool (tests/deps.sh installs it)"; exit 77; }
done

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
reg=127.0.0.1:$port
ref=$reg/busybox:1
user=alice
password='Pw-s3cret-tpuci-9f2c'
b64=$(printf '%s:%s' "$user" "$password" | base64 -w0)
edir=$WORK/engine
rdir=$WORK/registry
mkdir -p "$rdir/data"
trap 'kill "$(cat "$rdir/pid" 2>/dev/null)" 2>/dev/null; private_engine_down "$edir"; private_engine_gone "$edir"; rm -rf "$WORK"' EXIT

htpasswd -Bbn "$user" "$password" > "$rdir/htpasswd"
cat > "$rdir/config.yml" <<EOF
version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: $rdir/data
http:
  addr: $reg
auth:
  htpasswd:
    realm: tpuci-test
    path: $rdir/htpasswd
EOF
docker-registry serve "$rdir/config.yml" > "$rdir/log" 2>&1 &
echo $! > "$rdir/pid"
for i in $(seq 1 100); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://$reg/v2/")" = 401 ] && break
  sleep 0.1
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$reg/v2/")" = 401 ] ||
  { fail "the registry does not answer 401 at $reg: $(cat "$rdir/log")"; finish; }

PRIVATE_ENGINE_ARGS="--insecure-registry $reg" private_engine_up "$edir" ||
  { fail "cannot start a private engine"; finish; }
export DOCKER_HOST=$PRIVATE_HOST
sock=${PRIVATE_HOST#unix://}

# eapi METHOD PATH [CURL ARGS...]: the private engine's API.
eapi() {
  local m=$1 p=$2
  shift 2
  curl -s --max-time 120 --unix-socket "$sock" -X "$m" "$@" "http://localhost/v1.41$p"
}
xauth=$(printf '{"username":"%s","password":"%s","serveraddress":"%s"}' "$user" "$password" "$reg" |
  base64 -w0 | tr '+/' '-_')

# Push the test image with the Engine API, then forget it on the engine.
eapi POST "/images/tpuci-test/busybox:1/tag?repo=$reg/busybox&tag=1" -o /dev/null
pushed=$(eapi POST "/images/$reg/busybox/push?tag=1" -H "X-Registry-Auth: $xauth")
case "$pushed" in
  *'"error"'*|'') fail "push to $reg: $pushed"; finish ;;
esac
# Both names go, so that the layer goes too and a pull downloads it.
forget() {
  eapi DELETE "/images/$ref?force=1" -o /dev/null
  eapi DELETE "/images/tpuci-test/busybox:1?force=1" -o /dev/null
}
present() { [ "$(eapi GET "/images/$ref/json" -o /dev/null -w '%{http_code}')" = 200 ]; }
forget
present && { fail "$ref is still on the engine"; finish; }

cat > spec.lua <<LUA
image "priv" { ref = "$ref", pull = "always" }
job "hello" { image = "priv", network = "none", run = "echo hello from the private image" }
LUA

# no_secret WHAT: neither the password nor user:password in base64 in
# tpuci's output or anywhere in the state folder.
no_secret() {
  if printf '%s' "$out" | grep -qF -e "$password" -e "$b64" -e "$xauth"; then
    fail "$1: a secret in tpuci's output"
  elif grep -rqF -e "$password" -e "$b64" .tpuci 2>/dev/null; then
    fail "$1: a secret in the run folder: $(grep -rlF -e "$password" -e "$b64" .tpuci)"
  else
    pass
  fi
}

# Without credentials.
mkdir -p none
DOCKER_CONFIG=$WORK/none run_tpuci run spec.lua
expect_code 3 "no credentials"
expect_out "image '$ref' is not present and could not be pulled: registry $reg refused access (no credentials were sent: $WORK/none/config.json has none for $reg"
expect_not_out "hello from the private image" "no credentials: the job ran"
no_secret "no credentials"

# Wrong ones.
mkdir -p wrong
printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$reg" "$(printf '%s:nope' "$user" | base64 -w0)" > wrong/config.json
DOCKER_CONFIG=$WORK/wrong run_tpuci run spec.lua
expect_code 3 "wrong credentials"
expect_out "registry $reg refused access (credentials from $WORK/wrong/config.json (auths) were sent"
no_secret "wrong credentials"

# The right ones, "auths" (the key with a scheme, as docker login may
# write it): pulled, said, and the job runs.
mkdir -p good
printf '{"auths": {"http://%s": {"auth": "%s"}}}\n' "$reg" "$b64" > good/config.json
DOCKER_CONFIG=$WORK/good run_tpuci run spec.lua
expect_code 0 "credentials in auths"
expect_out "tpuci: pulling image '$ref'"
expect_out "tpuci: pulled image '$ref' in "
expect_out " MB, 1 layer" "the pulled line's size"
expect_out "hello from the private image"
present && pass || fail "auths: $ref not on the engine after the run"
no_secret "auths"

# A credential helper, from credHelpers, found on PATH.
forget
mkdir -p bin helper
cat > bin/docker-credential-tpucifake <<EOF
#!/bin/sh
[ "\$1" = get ] || exit 2
read -r server
echo "\$server" > "$WORK/helper/asked"
printf '{"ServerURL":"%s","Username":"%s","Secret":"%s"}\n' "\$server" "$user" "$password"
EOF
chmod +x bin/docker-credential-tpucifake
printf '{"auths": {"%s": {}}, "credHelpers": {"%s": "tpucifake"}}\n' "$reg" "$reg" > helper/config.json
PATH=$WORK/bin:$PATH DOCKER_CONFIG=$WORK/helper run_tpuci run spec.lua
expect_code 0 "credHelpers"
expect_out "hello from the private image"
[ "$(cat helper/asked 2>/dev/null)" = "$reg" ] && pass || fail "the helper was asked for '$(cat helper/asked 2>/dev/null)', want $reg"
no_secret "credHelpers"

# On a terminal, the board shows the pull.
if command -v script >/dev/null; then
  forget
  env -u CI -u GITHUB_ACTIONS DOCKER_CONFIG="$WORK/good" \
    script -qec "'$TPUCI' run spec.lua" /dev/null > tty.out 2>&1 < /dev/null
  out=$(cat tty.out)
  expect_out "pulling $ref: " "the board's pull line"
  expect_out $'\033[' "cursor movement"
  expect_out "verdict: PASSED"
  no_secret "board"
fi

finish
