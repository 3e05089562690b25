#!/usr/bin/env bash
# Builds the bench-only image tpuci-bench/torch-xdist:1: the test image
# tpuci-test/torch:1 (Debian's python3-torch and pytest; built by
# tests/images/build-torch.sh when missing) with Debian's
# python3-pytest-xdist and python3-execnet added, so that pytest -n 2
# runs in the same image as tpuci's shards. Both packages are pure
# Python ("all"): their .debs are fetched on this machine with
# `apt-get download` and installed with dpkg in a `docker build` (no
# network inside). Does nothing when the image exists.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
image=${TPUCI_BENCH_IMAGE:-tpuci-bench/torch-xdist:1}
base=${TPUCI_TORCH_IMAGE:-tpuci-test/torch:1}

docker image inspect "$image" >/dev/null 2>&1 && exit 0
TPUCI_TORCH_IMAGE=$base bash "$here/../../tests/images/build-torch.sh"
ctx=$(mktemp -d /tmp/tpuci-bench-image.XXXXXX)
trap 'rm -rf "$ctx"' EXIT
chmod 777 "$ctx" # apt-get download runs as _apt where it can
(cd "$ctx" && apt-get download python3-pytest-xdist python3-execnet >/dev/null 2>&1) || {
  apt-get update >/dev/null && (cd "$ctx" && apt-get download python3-pytest-xdist python3-execnet >/dev/null)
}
cat > "$ctx/Dockerfile" <<EOF
FROM $base
COPY *.deb /tmp/debs/
RUN dpkg -i /tmp/debs/*.deb && rm -rf /tmp/debs && python3 -c 'import xdist'
EOF
# The legacy builder's deprecation notice goes to stderr: shown only on failure.
docker build -q -t "$image" "$ctx" >"$ctx/build.log" 2>&1 || { cat "$ctx/build.log" >&2; exit 1; }
echo "bench: built $image" >&2
