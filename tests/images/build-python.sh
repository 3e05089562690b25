#!/usr/bin/env bash
# Builds the test image tpuci-test/python:1: Debian bookworm (minbase) with
# python3 and pytest, made with debootstrap from the mirror apt is set up
# with (there is no registry to pull from), imported with `docker import`.
# The root tarball is cached in $TPUCI_CACHE (default /var/tmp/tpuci-cache)
# so rebuilding the image after an engine reset takes seconds.
# Does nothing when the image exists already.
set -euo pipefail

image=${TPUCI_PYTHON_IMAGE:-tpuci-test/python:1}
cache=${TPUCI_CACHE:-/var/tmp/tpuci-cache}
tarball=$cache/python-bookworm-1.tar

if docker image inspect "$image" >/dev/null 2>&1; then
  echo "build-python: $image exists" >&2
  exit 0
fi

. "$(dirname "$0")/debian-root.sh"

if ! [ -s "$tarball" ]; then
  mkdir -p "$cache"
  root=$(mktemp -d /var/tmp/tpuci-python.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  debian_root build-python "$root" "$cache/debootstrap.log" python3,python3-pytest
  pack_root "$root" "$tarball"
fi

import_root "$tarball" "$image"
echo "build-python: built $image" >&2
