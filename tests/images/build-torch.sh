#!/usr/bin/env bash
# Builds the test image tpuci-test/torch:1: Debian bookworm (minbase) with
# python3, pytest and Debian's python3-torch (CPU, with torch.distributed
# and gloo), made with debootstrap from the mirror apt is set up with
# (there is no registry to pull from), imported with `docker import`.
# About 2.5 minutes and 2.4 GB the first time. The root tarball is cached
# in $TPUCI_CACHE (default /var/tmp/tpuci-cache), so rebuilding the image
# after an engine reset only re-imports it. Does nothing when the image
# exists already. Concurrent runs wait for each other (flock).
set -euo pipefail

image=${TPUCI_TORCH_IMAGE:-tpuci-test/torch:1}
cache=${TPUCI_CACHE:-/var/tmp/tpuci-cache}
tarball=$cache/torch-bookworm-1.tar
log=$cache/debootstrap-torch.log

have_image() { docker image inspect "$image" >/dev/null 2>&1; }

if have_image; then
  echo "build-torch: $image exists" >&2
  exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/torch.lock"
flock 9
if have_image; then
  echo "build-torch: $image exists (built by a concurrent run)" >&2
  exit 0
fi

. "$(dirname "$0")/debian-root.sh"

if ! [ -s "$tarball" ]; then
  root=$(mktemp -d /var/tmp/tpuci-torch.XXXXXX)
  trap 'rm -rf "$root" "$tarball.tmp"' EXIT
  start=$(date +%s)
  debian_root build-torch "$root" "$log" python3,python3-pytest,python3-torch
  # Check what the tests rely on before caching it.
  if ! chroot "$root" /usr/bin/python3 -c 'import torch, torch.distributed as d; assert d.is_available() and d.is_gloo_available()' >>"$log" 2>&1; then
    echo "build-torch: the root's torch has no torch.distributed with gloo; see $log" >&2
    exit 1
  fi
  pack_root "$root" "$tarball"
  echo "build-torch: root built in $(( $(date +%s) - start )) s, cached as $tarball" >&2
fi

import_root "$tarball" "$image"
echo "build-torch: built $image" >&2
