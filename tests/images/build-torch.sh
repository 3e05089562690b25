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

# The Debian mirror apt uses: the first "deb" line of sources.list, or the
# first URIs: of a deb822 .sources file (as build-python.sh).
mirror() {
  local f m
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    m=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' "$f")
    if [ -n "$m" ] && [[ $m != *security* ]]; then echo "$m"; return; fi
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    m=$(awk 'tolower($1) == "uris:" && $2 !~ /security/ { print $2; exit }' "$f")
    if [ -n "$m" ]; then echo "$m"; return; fi
  done
  echo http://deb.debian.org/debian
}

if ! [ -s "$tarball" ]; then
  if ! command -v debootstrap >/dev/null 2>&1; then
    echo "build-torch: installing debootstrap" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y debootstrap >&2 ||
      { apt-get update >&2 && apt-get install -y debootstrap >&2; }
  fi
  m=$(mirror)
  root=$(mktemp -d /var/tmp/tpuci-torch.XXXXXX)
  trap 'rm -rf "$root" "$tarball.tmp"' EXIT
  echo "build-torch: debootstrap bookworm with python3-torch from $m (about 2.5 minutes, 2.4 GB)" >&2
  start=$(date +%s)
  debootstrap --variant=minbase --include=python3,python3-pytest,python3-torch \
    bookworm "$root" "$m" >"$log" 2>&1 || {
    echo "build-torch: debootstrap failed; last lines of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
  }
  # Check what the tests rely on before caching it.
  if ! chroot "$root" /usr/bin/python3 -c 'import torch, torch.distributed as d; assert d.is_available() and d.is_gloo_available()' >>"$log" 2>&1; then
    echo "build-torch: the root's torch has no torch.distributed with gloo; see $log" >&2
    exit 1
  fi
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  mkdir -p "$root/out" "$root/work"
  tar -C "$root" -cf "$tarball.tmp" .
  mv "$tarball.tmp" "$tarball"
  echo "build-torch: root built in $(( $(date +%s) - start )) s, cached as $tarball" >&2
fi

docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["/usr/bin/python3"]' \
  "$tarball" "$image" >/dev/null
echo "build-torch: built $image" >&2
