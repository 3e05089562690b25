#!/usr/bin/env bash
# From a fresh Debian 12 machine (as root) to a finished example run:
# installs what building and running tpuci needs (specs/deps.sh: nothing
# of the test suite's), builds tpuci into build/, starts a private Docker
# Engine if none answers, builds the small example image, and runs
# specs/example.lua in real containers. Leaves the engine running so you
# can go on (stop it with .ci/engine-down.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

bash specs/deps.sh
echo "quickstart: building tpuci into build/" >&2
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" >/dev/null

sock=${DOCKER_HOST:-unix:///var/run/docker.sock}
if ! curl -sf --max-time 2 --unix-socket "${sock#unix://}" http://localhost/_ping >/dev/null 2>&1; then
  TPUCI_ENGINE_STARTED=0
  eval "$(bash .ci/engine-up.sh)"
  if [ "$TPUCI_ENGINE_STARTED" = 1 ]; then what="started a"; else what="reusing the"; fi
  echo "quickstart: $what private Docker Engine; in your shell: export DOCKER_HOST=$DOCKER_HOST" >&2
else
  export DOCKER_HOST=$sock
fi
bash tests/images/build-busybox.sh
./build/tpuci doctor specs/example.lua
exec ./build/tpuci run specs/example.lua
