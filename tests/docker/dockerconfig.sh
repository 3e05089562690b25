#!/usr/bin/env bash
# What tpuci reads of the Docker config, going wrong (docs/docker.md,
# "Private registries" and "Where the engine is"), against the engine at
# DOCKER_HOST, and against it as a swarm manager when it is one.
#
# 1. No secret anywhere: credential helpers that fail in every way (exit
#    codes, a signal, the secret on stdout, on stderr, in base64, in part,
#    not JSON, no Secret, "credentials not found"), credentials that work
#    but the pull does not (no registry at the port), bad "auths" entries,
#    a config.json cut off in the middle of a secret. For each case, on
#    the docker runtime and on the swarm one, neither the secret, nor its
#    base64 forms, nor its first 8 characters appear in tpuci's output, in
#    the run folder (summary.json, junit.xml, report.html, logs) or in any
#    --report-json/--report-yaml/--report-html/--junit file; and the
#    message says what happened.
# 2. A helper whose child (sleep 301) keeps stdout open: tpuci ends at the
#    20 s cap with exit 3, and the child is gone; SIGINT and SIGTERM while
#    it waits end tpuci at once with exit 130, child gone (SIGINT on the
#    swarm runtime too).
# 3. config.json as a FIFO (both readers: the context lookup and the
#    credentials), and a Docker context whose endpoint has no Host: exit 3
#    with a message that says so.
. "$TESTS/docker/lib.sh"

swarm=0
[ "$(api /info | python3 -c 'import json,sys; s=json.load(sys.stdin)["Swarm"]; print(s.get("LocalNodeState"), s.get("ControlAvailable"))' 2>/dev/null)" = "active True" ] && swarm=1
[ "$swarm" = 1 ] || echo "note: the engine is not a swarm manager; the swarm runtime's cases are not run" >&2

secret='hunter2-S3CRET-9f2c'
user=ci
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Nothing listens at $reg; a registry that refuses every login at $reg401.
reg=127.0.0.1:$(free_port)
reg401=127.0.0.1:$(free_port)
python3 -c '
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def answer(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", "Basic realm=\"tpuci-test\"")
        self.send_header("Docker-Distribution-API-Version", "registry/2.0")
        self.send_header("Content-Type", "application/json")
        body = b"{\"errors\":[{\"code\":\"UNAUTHORIZED\",\"message\":\"authentication required\"}]}"
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_GET = do_HEAD = do_POST = answer
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
' "${reg401#*:}" &
regpid=$!
trap 'kill "$regpid" 2>/dev/null; rm -rf "$WORK"' EXIT
# Every form the secret could leak in.
forms=$(python3 - "$user" "$secret" "$reg" <<'EOF'
import base64, json, sys
user, secret, reg = sys.argv[1:]
b = lambda s: base64.b64encode(s.encode()).decode()
u = lambda s: base64.urlsafe_b64encode(s.encode()).decode()
hdr = json.dumps({"username": user, "password": secret, "serveraddress": reg}, separators=(",", ":"))
for f in (secret, secret[:8], b(secret), u(secret), b(user + ":" + secret), u(hdr), b(hdr)):
    print(f.rstrip("="))
EOF
)
grep_args=()
while IFS= read -r f; do grep_args+=(-e "$f"); done <<< "$forms"

H=$WORK/h   # helpers and configs: they hold the secret, nothing else may
mkdir -p "$H/bin"
export PATH=$H/bin:$PATH

# spec REGISTRY: a spec whose image must be pulled from there.
spec() {
  printf 'image "priv" { ref = "%s/app:1", pull = "always" }\n' "$1"
  printf 'job "hello" { image = "priv", run = "echo never" }\n'
}
spec "$reg" > "$WORK/spec.lua"

# helper NAME BODY: docker-credential-NAME, reading the server first.
helper() {
  printf '#!/bin/sh\nread -r server\n%s\n' "$2" > "$H/bin/docker-credential-$1"
  chmod +x "$H/bin/docker-credential-$1"
}
# config NAME JSON: a Docker config folder $H/NAME.
config() {
  mkdir -p "$H/$1"
  printf '%s' "$2" > "$H/$1/config.json"
}

json_answer="printf '{\"ServerURL\":\"%s\",\"Username\":\"$user\",\"Secret\":\"$secret\"}\\n' \"\$server\""
b64_secret=$(printf %s "$secret" | base64 -w0)
b64_user=$(printf %s "$user:$secret" | base64 -w0)

helper exit1 "$json_answer
exit 1"
helper exit1err "$json_answer
echo \"error: $secret was refused\" >&2
exit 1"
helper exit2 "$json_answer
echo \"wrong password $secret for $user\" >&2
exit 2"
helper exit127 "$json_answer
exit 127"
helper plain "echo '$secret'
exit 1"
helper stderr "echo 'token $secret expired' >&2
exit 1"
helper b64 "echo 'auth $b64_secret' >&2
exit 1"
helper b64user "echo '$b64_user' >&2
exit 1"
helper prefix "$json_answer
echo 'bad: ${secret:0:8}' >&2
exit 1"
helper signal "$json_answer
kill -9 \$\$"
helper nosecret "echo '{\"Username\":\"$user\",\"Password\":\"$secret\"}'"
helper garbage "echo 'Secret=$secret'"
helper works "$json_answer"
helper notfound "$json_answer
echo 'credentials not found in native keychain ($secret)' >&2
exit 1"

# case NAME WANT CONFIG: the config JSON, and a part of the message.
cases=(
  "exit1|docker-credential-exit1 get: exit 1|{\"credHelpers\": {\"$reg\": \"exit1\"}}"
  "exit1err|docker-credential-exit1err get: exit 1 (stderr: error: *** was refused)|{\"credHelpers\": {\"$reg\": \"exit1err\"}}"
  "exit2|docker-credential-exit2 get: exit 2 (stderr: wrong password *** for $user)|{\"credHelpers\": {\"$reg\": \"exit2\"}}"
  "exit127|docker-credential-exit127 get: exit 127|{\"credHelpers\": {\"$reg\": \"exit127\"}}"
  "plain|docker-credential-plain get: exit 1|{\"credHelpers\": {\"$reg\": \"plain\"}}"
  "stderr|docker-credential-stderr get: exit 1 (stderr: token *** expired)|{\"credHelpers\": {\"$reg\": \"stderr\"}}"
  "b64|docker-credential-b64 get: exit 1 (stderr: auth ***|{\"credHelpers\": {\"$reg\": \"b64\"}}"
  "b64user|docker-credential-b64user get: exit 1|{\"credHelpers\": {\"$reg\": \"b64user\"}}"
  "prefix|docker-credential-prefix get: exit 1 (stderr: bad: ***)|{\"credHelpers\": {\"$reg\": \"prefix\"}}"
  "signal|docker-credential-signal get: killed by signal 9|{\"credHelpers\": {\"$reg\": \"signal\"}}"
  "nosecret|docker-credential-nosecret get: for $reg it printed no Secret|{\"credHelpers\": {\"$reg\": \"nosecret\"}}"
  "garbage|docker-credential-garbage get: for $reg it printed no Secret|{\"credHelpers\": {\"$reg\": \"garbage\"}}"
  "store|docker-credential-exit1err get: exit 1 (stderr: error: *** was refused)|{\"credsStore\": \"exit1err\"}"
  "works|could not be pulled|{\"credHelpers\": {\"$reg\": \"works\"}}"
  "notfound|could not be pulled (Get|{\"credHelpers\": {\"$reg\": \"notfound\"}}"
  "refused|registry $reg401 refused access (credentials from docker-credential-works (credHelpers in|{\"credHelpers\": {\"$reg401\": \"works\"}}"
  "refusedauths|registry $reg401 refused access (credentials from|{\"auths\": {\"$reg401\": {\"auth\": \"$b64_user\"}}}"
  "auths|could not be pulled|{\"auths\": {\"$reg\": {\"auth\": \"$b64_user\"}}}"
  "userpass|could not be pulled|{\"auths\": {\"$reg\": {\"username\": \"$user\", \"password\": \"$secret\"}}}"
  "token|could not be pulled|{\"auths\": {\"$reg\": {\"identitytoken\": \"$secret\"}}}"
  "nocolon|auths[\"$reg\"].auth is not base64 of user:password|{\"auths\": {\"$reg\": {\"auth\": \"$b64_secret\"}}}"
  "cut|not a JSON object (line 1, column |{\"auths\": {\"$reg\": {\"auth\": \"$b64_user"
  "cutpass|not a JSON object (line 1, column |{\"auths\": {\"$reg\": {\"username\": \"$user\", \"password\": \"$secret"
)

# no_secret WHERE DIR: tpuci's output ($out) and every file under DIR.
no_secret() {
  if printf '%s' "$out" | grep -qF "${grep_args[@]}"; then
    fail "$1: the secret in tpuci's output: $(printf '%s' "$out" | grep -F "${grep_args[@]}" | head -n 3)"
  elif grep -rqF "${grep_args[@]}" "$2"; then
    fail "$1: the secret in $(grep -rlF "${grep_args[@]}" "$2" | tr '\n' ' ')"
  else
    pass
  fi
}

n=0
for c in "${cases[@]}"; do
  IFS='|' read -r name want cfg <<< "$c"
  config "$name" "$cfg"
  for engine in docker swarm; do
    [ "$engine" = swarm ] && [ "$swarm" = 0 ] && continue
    d=$WORK/run-$name-$engine
    mkdir -p "$d"
    case $name in refused*) spec "$reg401" ;; *) spec "$reg" ;; esac > "$d/spec.lua"
    out=$(cd "$d" && DOCKER_CONFIG=$H/$name "$TPUCI" run --plain --engine "$engine" \
            --report-json r.json --report-yaml r.yaml --report-html r.html --junit j.xml spec.lua 2>&1)
    code=$?
    expect_code 3 "$name ($engine)"
    expect_out "$want" "$name ($engine)"
    # The records were written: the grep below looks at something.
    for f in r.json r.yaml r.html j.xml .tpuci/runs/latest/summary.json .tpuci/runs/latest/junit.xml \
             .tpuci/runs/latest/report.html; do
      [ -s "$d/$f" ] || fail "$name ($engine): no $f"
    done
    no_secret "$name ($engine)" "$d"
    n=$((n + 1))
  done
done
echo "$n credential cases checked" >&2
[ "$swarm" = 0 ] || [ "$n" -ge 30 ] && pass || fail "only $n credential cases"

# The message reaches the reports: where a leak would have gone.
grep -q "docker-credential-exit1err get: exit 1" "$WORK/run-exit1err-docker/r.json" && pass ||
  fail "the helper's message is not in the JSON report"

# 2. A helper whose child keeps stdout open.
helper hang "$json_answer
sleep 301 &
echo \$! > '$H/child.pid'
wait"
config hang "{\"credHelpers\": {\"$reg\": \"hang\"}}"

# child_gone WHAT: the helper's child is no longer running (a zombie
# waiting for its new parent counts as gone: it was killed).
child_gone() {
  local pid st i
  pid=$(cat "$H/child.pid" 2>/dev/null)
  [ -n "$pid" ] || { fail "$1: the helper's child never started"; return; }
  for i in $(seq 1 50); do
    st=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)
    [ -z "$st" ] || [ "$st" = Z ] && break
    sleep 0.1
  done
  if [ -z "$st" ] || [ "$st" = Z ]; then pass; else fail "$1: the helper's child $pid is still running ($st)"; kill -9 "$pid"; fi
  rm -f "$H/child.pid"
}

d=$WORK/run-hang
mkdir -p "$d"
cp "$WORK/spec.lua" "$d/"
# The cap is 20 s: tpuci must end on its own long before the child would.
out=$(cd "$d" && DOCKER_CONFIG=$H/hang timeout 120 "$TPUCI" run --plain spec.lua 2>&1)
code=$?
expect_code 3 "a helper that never answers"
expect_out "docker-credential-hang get: no answer within 20s; killed" "the cap"
child_gone "at the cap"
no_secret "the cap" "$d"

for what in INT:docker TERM:docker INT:swarm; do
  sig=${what%:*} engine=${what#*:}
  [ "$engine" = swarm ] && [ "$swarm" = 0 ] && continue
  d=$WORK/run-hang-$sig-$engine
  mkdir -p "$d"
  cp "$WORK/spec.lua" "$d/"
  (cd "$d" && DOCKER_CONFIG=$H/hang exec "$TPUCI" run --plain --engine "$engine" spec.lua > "$d/out" 2>&1) &
  tp=$!
  for i in $(seq 1 100); do [ -s "$H/child.pid" ] && break; sleep 0.1; done
  [ -s "$H/child.pid" ] || fail "SIG$sig ($engine): the helper did not start"
  kill -"$sig" "$tp"
  # At once: well before the 20 s cap would end it.
  for i in $(seq 1 100); do kill -0 "$tp" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$tp" 2>/dev/null; then
    fail "SIG$sig ($engine) during the helper: tpuci still runs after 10 s"
    kill -KILL "$tp"
  fi
  wait "$tp"
  code=$?
  out=$(cat "$d/out")
  expect_code 130 "SIG$sig ($engine) during the helper"
  expect_not_out "no answer within" "SIG$sig ($engine): not ended by the cap"
  child_gone "SIG$sig ($engine)"
  rm -f "$d/out"
  no_secret "SIG$sig ($engine)" "$d"
done

# 3. config.json as a FIFO, read for the context and for credentials.
mkdir -p "$H/fifo"
mkfifo "$H/fifo/config.json"
out=$(DOCKER_CONFIG=$H/fifo timeout 60 "$TPUCI" run --plain spec.lua 2>&1)
code=$?
expect_code 3 "a FIFO config.json (credentials)"
expect_out "cannot read the Docker config $H/fifo/config.json: it is a FIFO, not a regular file"
expect_not_out "Unknown error"
out=$(env -u DOCKER_HOST DOCKER_CONFIG=$H/fifo timeout 60 "$TPUCI" run --plain spec.lua 2>&1)
code=$?
expect_code 3 "a FIFO config.json (contexts)"
expect_out "cannot read $H/fifo/config.json: it is a FIFO, not a regular file"
# A syntax error read for the context: where, not what.
config cutctx "{\"currentContext\": \"x\", \"auths\": {\"$reg\": {\"password\": \"$secret"
out=$(env -u DOCKER_HOST DOCKER_CONFIG=$H/cutctx "$TPUCI" run --plain spec.lua 2>&1)
code=$?
expect_code 3 "a broken config.json (contexts)"
expect_out "$H/cutctx/config.json: not valid JSON (line 1, column "
no_secret "a broken config.json (contexts)" "$WORK/.tpuci"

# A context with no Host.
sha=$(printf %s nohost | sha256sum | cut -d' ' -f1)
mkdir -p "$H/ctx/contexts/meta/$sha"
printf '{"Name":"nohost","Metadata":{},"Endpoints":{"docker":{"SkipTLSVerify":false}}}' \
  > "$H/ctx/contexts/meta/$sha/meta.json"
out=$(env -u DOCKER_HOST DOCKER_CONFIG=$H/ctx DOCKER_CONTEXT=nohost "$TPUCI" run --plain spec.lua 2>&1)
code=$?
expect_code 3 "a context without Host"
expect_out "Docker context 'nohost': $H/ctx/contexts/meta/$sha/meta.json has no Endpoints.docker.Host, so it names no engine"
finish
