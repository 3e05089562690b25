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

# The Debian mirror apt uses: the first "deb" line of sources.list, or the
# first URIs: of a deb822 .sources file.
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
    echo "build-python: installing debootstrap" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y debootstrap >&2 ||
      { apt-get update >&2 && apt-get install -y debootstrap >&2; }
  fi
  m=$(mirror)
  mkdir -p "$cache"
  root=$(mktemp -d /var/tmp/tpuci-python.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  echo "build-python: debootstrap bookworm from $m (about a minute)" >&2
  debootstrap --variant=minbase --include=python3,python3-pytest \
    bookworm "$root" "$m" >"$cache/debootstrap.log" 2>&1 || {
    echo "build-python: debootstrap failed; last lines of $cache/debootstrap.log:" >&2
    tail -n 20 "$cache/debootstrap.log" >&2
    exit 1
  }
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  mkdir -p "$root/out" "$root/work"
  tar -C "$root" -cf "$tarball.tmp" .
  mv "$tarball.tmp" "$tarball"
fi

docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["/usr/bin/python3"]' \
  "$tarball" "$image" >/dev/null
echo "build-python: built $image" >&2
