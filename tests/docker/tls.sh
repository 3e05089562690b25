#!/usr/bin/env bash
# A remote engine over TLS: a private dockerd listening on
# tcp://127.0.0.1:<free port> with --tlsverify (a CA, server and client
# certificates made here with openssl). tpuci runs a spec there with
# DOCKER_HOST + DOCKER_TLS_VERIFY + DOCKER_CERT_PATH, and through a Docker
# context written into a DOCKER_CONFIG of the test's own; a wrong CA, a
# missing key and a key with a passphrase (never prompted for, even on a
# terminal), a client certificate signed by another CA (the engine's
# alert, not curl's "select/poll returned error") are exit 3 with a
# message that says so; a job with a bind
# mount gets the remote-mount warning at run and in doctor.
PRIVATE_ENGINE_ONLY=1
. "$TESTS/docker/lib.sh"

command -v openssl >/dev/null 2>&1 || { echo "SKIP: no openssl"; exit 77; }

edir=$WORK/engine
tls=$WORK/tls
trap 'private_engine_down "$edir" TERM; private_engine_gone "$edir"; rm -rf "$WORK"' EXIT
mkdir -p "$tls/client" "$tls/wrong" "$tls/nokey"

# ca NAME: a self-signed CA in $tls/NAME-ca.pem (key NAME-ca-key.pem).
ca() {
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=tpuci test $1 CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" \
    -keyout "$tls/$1-ca-key.pem" -out "$tls/$1-ca.pem" 2>/dev/null
}
# leaf NAME CA USAGE [SAN]: a key and a certificate signed by CA.
leaf() {
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$1" \
    -keyout "$tls/$1-key.pem" -out "$tls/$1.csr" 2>/dev/null || return 1
  { echo "extendedKeyUsage=$3"; [ -n "${4:-}" ] && echo "subjectAltName=$4"; } > "$tls/$1.ext"
  openssl x509 -req -in "$tls/$1.csr" -CA "$tls/$2-ca.pem" -CAkey "$tls/$2-ca-key.pem" \
    -CAcreateserial -days 2 -extfile "$tls/$1.ext" -out "$tls/$1-cert.pem" 2>/dev/null
}
{ ca good && ca other && leaf server good serverAuth IP:127.0.0.1 && leaf client good clientAuth &&
  leaf stranger other clientAuth; } ||
  { fail "openssl could not make the certificates"; finish; }
cp "$tls/good-ca.pem" "$tls/client/ca.pem"
cp "$tls/client-cert.pem" "$tls/client/cert.pem"
cp "$tls/client-key.pem" "$tls/client/key.pem"
# The same client, but the engine's certificate checked against another CA.
cp "$tls/client/cert.pem" "$tls/client/key.pem" "$tls/wrong/"
cp "$tls/other-ca.pem" "$tls/wrong/ca.pem"
cp "$tls/client/ca.pem" "$tls/client/cert.pem" "$tls/nokey/"
# The engine checked against the right CA, but a client certificate of
# another CA: the engine refuses it.
mkdir -p "$tls/stranger"
cp "$tls/client/ca.pem" "$tls/stranger/ca.pem"
cp "$tls/stranger-cert.pem" "$tls/stranger/cert.pem"
cp "$tls/stranger-key.pem" "$tls/stranger/key.pem"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PRIVATE_ENGINE_ARGS="--host tcp://127.0.0.1:$port --tlsverify --tlscacert $tls/good-ca.pem --tlscert $tls/server-cert.pem --tlskey $tls/server-key.pem"
private_engine_up "$edir" || { fail "cannot start a private engine"; finish; }
ep=tcp://127.0.0.1:$port
# The engine's plain socket is only for the checks below, never tpuci's.
unset DOCKER_HOST DOCKER_TLS_VERIFY DOCKER_CERT_PATH DOCKER_CONTEXT
export DOCKER_CONFIG=$WORK/dockercfg
mkdir -p "$DOCKER_CONFIG" src

cat > spec.lua <<'EOF'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "hello" { image = "bb", network = "none", run = "echo hello over TLS" }
EOF
cat > mounts.lua <<'EOF'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "sources" { image = "bb", network = "none", mounts = { ["src"] = "/src" }, run = "true" }
job "nomount" { image = "bb", network = "none", run = "true" }
EOF

# 1. DOCKER_HOST + DOCKER_TLS_VERIFY + DOCKER_CERT_PATH.
out=$(DOCKER_HOST=$ep DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$tls/client "$TPUCI" run --plain spec.lua 2>&1)
code=$?
expect_code 0 "a run over TLS"
grep -q "hello over TLS" .tpuci/runs/latest/*/attempt-1.log 2>/dev/null && pass || fail "the job's output is not in its log"
expect_not_out "warning: job" "no remote-mount warning without mounts"

out=$(DOCKER_HOST=$ep DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$tls/client "$TPUCI" doctor spec.lua 2>&1)
code=$?
expect_code 0 "doctor over TLS"
expect_out "at DOCKER_HOST=$ep with TLS" "doctor names the endpoint"
expect_out "ok   tls: the engine's certificate is checked against $tls/client/ca.pem" "doctor names the CA"

out=$(DOCKER_HOST=$ep DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$tls/client "$TPUCI" gc 2>&1)
code=$?
expect_code 0 "gc over TLS"

# 2. A wrong CA: the handshake fails, exit 3, and the message says TLS.
out=$(DOCKER_HOST=$ep DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$tls/wrong "$TPUCI" run --plain spec.lua 2>&1)
code=$?
expect_code 3 "a wrong CA"
expect_out "TLS handshake failed" "the wrong CA's message"
expect_out "DOCKER_HOST=$ep with TLS" "the wrong CA's message names the endpoint"
out=$(DOCKER_HOST=$ep DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$tls/wrong "$TPUCI" doctor 2>&1)
code=$?
expect_code 3 "doctor with a wrong CA"
expect_out "FAIL engine:" "doctor fails the engine"

# 2b. A client certificate the engine's CA did not sign: the handshake
# (TLS 1.3: the engine's alert after it) says the engine refused it.
out=$(DOCKER_HOST=$ep DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$tls/stranger "$TPUCI" run --plain spec.lua 2>&1)
code=$?
expect_code 3 "a client certificate of another CA"
expect_out "the TLS handshake refused our client certificate $tls/stranger/cert.pem" "the refused certificate is named"
expect_out "use a client certificate and key that CA signed" "what to do about it"
expect_not_out "select/poll" "not curl's poll error"
expect_not_out "start dockerd" "not the hint for an engine that is not running"
out=$(DOCKER_HOST=$ep DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$tls/stranger "$TPUCI" gc 2>&1)
code=$?
expect_code 3 "gc with a client certificate of another CA"
expect_out "refused our client certificate" "gc says it"

# 3. A missing key: one line naming the file, exit 3, nothing tried.
out=$(DOCKER_HOST=$ep DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$tls/nokey "$TPUCI" run --plain spec.lua 2>&1)
code=$?
expect_code 3 "a missing key"
expect_out "the TLS file $tls/nokey/key.pem is missing" "the missing key is named"

# 3b. A key with a passphrase: refused before any request, one line
# naming the file, exit 3; never OpenSSL's passphrase prompt, not even on
# a terminal (where it would wait for an answer that never comes).
mkdir -p "$tls/enc"
cp "$tls/client/ca.pem" "$tls/client/cert.pem" "$tls/enc/"
openssl pkey -in "$tls/client/key.pem" -aes256 -passout pass:tpuci-test -out "$tls/enc/key.pem" 2>/dev/null ||
  fail "openssl could not encrypt the key"
grep -q "ENCRYPTED" "$tls/enc/key.pem" && pass || fail "the key is not encrypted"
out=$(DOCKER_HOST=$ep DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$tls/enc timeout 60 "$TPUCI" run --plain spec.lua 2>&1 < /dev/null)
code=$?
expect_code 3 "an encrypted key"
expect_out "the TLS key $tls/enc/key.pem is encrypted with a passphrase, which tpuci does not ask for" "the encrypted key is named"
if command -v script >/dev/null; then
  out=$(DOCKER_HOST=$ep DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$tls/enc \
        timeout 60 script -qec "'$TPUCI' run --plain spec.lua" /dev/null < /dev/null 2>&1)
  code=$?
  expect_code 3 "an encrypted key on a terminal"
  expect_not_out "pass phrase" "no passphrase prompt on a terminal"
  expect_out "is encrypted with a passphrase" "the encrypted key on a terminal"
fi
# The same key in a context's TLS folder.
esha=$(printf %s tpuci-enc | sha256sum | cut -d' ' -f1)
mkdir -p "$DOCKER_CONFIG/contexts/meta/$esha" "$DOCKER_CONFIG/contexts/tls/$esha/docker"
printf '{"Name":"tpuci-enc","Metadata":{},"Endpoints":{"docker":{"Host":"%s","SkipTLSVerify":false}}}' "$ep" \
  > "$DOCKER_CONFIG/contexts/meta/$esha/meta.json"
cp "$tls/enc/ca.pem" "$tls/enc/cert.pem" "$tls/enc/key.pem" "$DOCKER_CONFIG/contexts/tls/$esha/docker/"
out=$(DOCKER_CONTEXT=tpuci-enc timeout 60 "$TPUCI" run --plain spec.lua 2>&1 < /dev/null)
code=$?
expect_code 3 "an encrypted key in a context"
expect_out "contexts/tls/$esha/docker/key.pem is encrypted with a passphrase" "the context's encrypted key is named"

# 4. Plain HTTP to a TLS engine fails too (exit 3), not a hang.
out=$(DOCKER_HOST=$ep "$TPUCI" run --plain spec.lua 2>&1)
code=$?
expect_code 3 "plain HTTP to a TLS port"

# 5. A Docker context in DOCKER_CONFIG (as `docker context create` writes it).
sha=$(printf %s tpuci-tls | sha256sum | cut -d' ' -f1)
mkdir -p "$DOCKER_CONFIG/contexts/meta/$sha" "$DOCKER_CONFIG/contexts/tls/$sha/docker"
printf '{"Name":"tpuci-tls","Metadata":{},"Endpoints":{"docker":{"Host":"%s","SkipTLSVerify":false}}}' "$ep" \
  > "$DOCKER_CONFIG/contexts/meta/$sha/meta.json"
cp "$tls/client/ca.pem" "$tls/client/cert.pem" "$tls/client/key.pem" "$DOCKER_CONFIG/contexts/tls/$sha/docker/"
out=$(DOCKER_CONTEXT=tpuci-tls "$TPUCI" run --plain spec.lua 2>&1)
code=$?
expect_code 0 "a run through DOCKER_CONTEXT"
out=$(DOCKER_CONTEXT=tpuci-tls "$TPUCI" doctor spec.lua 2>&1)
code=$?
expect_code 0 "doctor through DOCKER_CONTEXT"
expect_out "at DOCKER_CONTEXT=tpuci-tls at $ep with TLS" "doctor names the context"
# config.json's currentContext, when DOCKER_CONTEXT is unset.
echo '{"auths": {}, "currentContext": "tpuci-tls"}' > "$DOCKER_CONFIG/config.json"
out=$("$TPUCI" run --plain spec.lua 2>&1)
code=$?
expect_code 0 "a run through config.json's currentContext"
out=$("$TPUCI" doctor 2>&1)
expect_out "context tpuci-tls (config.json's currentContext) at $ep" "doctor names the current context"
rm "$DOCKER_CONFIG/config.json"
# An unknown context: exit 3, named with the folder looked in.
out=$(DOCKER_CONTEXT=nowhere "$TPUCI" run --plain spec.lua 2>&1)
code=$?
expect_code 3 "an unknown context"
expect_out "unknown Docker context 'nowhere' (from DOCKER_CONTEXT)" "the unknown context is named"
expect_out "$DOCKER_CONFIG/contexts/meta" "the folder looked in is named"

# 6. Bind mounts on a remote engine: one warning per job, at run and in doctor.
out=$(DOCKER_CONTEXT=tpuci-tls "$TPUCI" run --plain mounts.lua 2>&1)
code=$?
expect_code 0 "a run with a mount"
expect_out "warning: job 'sources': the engine (DOCKER_CONTEXT=tpuci-tls at $ep with TLS) is reached over TCP" "the mount warning at run"
expect_out "sources would be lost" "the warning says what is lost"
expect_not_out "job 'nomount'" "no warning for a job without mounts"
n=$(printf '%s\n' "$out" | grep -c "warning: job 'sources'")
[ "$n" = 1 ] && pass || fail "the warning came $n times, want once"
out=$(DOCKER_HOST=$ep DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$tls/client "$TPUCI" doctor mounts.lua 2>&1)
expect_out "warn mounts: job 'sources':" "the mount warning in doctor"
finish
