# Shared by build-python.sh and build-torch.sh (source it): making a
# Debian bookworm root with debootstrap from the mirror apt is set up
# with, and importing a root tarball as an image.

# The Debian mirror apt uses: the first "deb" line of a sources.list, or
# the first URIs: of a deb822 .sources file. Fails when there is none:
# there is no other place to fetch packages from.
apt_mirror() {
  local f m
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    m=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' "$f")
    if [ -n "$m" ] && [[ $m != *security* ]]; then echo "$m"; return 0; fi
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    m=$(awk 'tolower($1) == "uris:" && $2 !~ /security/ { print $2; exit }' "$f")
    if [ -n "$m" ]; then echo "$m"; return 0; fi
  done
  echo "no Debian mirror in /etc/apt/sources.list or /etc/apt/sources.list.d" >&2
  return 1
}

ensure_debootstrap() {
  command -v debootstrap >/dev/null 2>&1 && return 0
  echo "$1: installing debootstrap" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y debootstrap >&2 ||
    { apt-get update >&2 && apt-get install -y debootstrap >&2; }
}

# debian_root NAME ROOT LOG PACKAGES: debootstrap bookworm into ROOT.
debian_root() {
  local name=$1 root=$2 log=$3 packages=$4 m
  ensure_debootstrap "$name"
  m=$(apt_mirror)
  echo "$name: debootstrap bookworm with $packages from $m" >&2
  debootstrap --variant=minbase --include="$packages" bookworm "$root" "$m" >"$log" 2>&1 || {
    echo "$name: debootstrap failed; last lines of $log:" >&2
    tail -n 20 "$log" >&2
    return 1
  }
}

# pack_root ROOT TARBALL: trims the root and writes it as a tarball.
pack_root() {
  rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*
  mkdir -p "$1/out" "$1/work"
  tar -C "$1" -cf "$2.tmp" .
  mv "$2.tmp" "$2"
}

# import_root TARBALL IMAGE: a Python image from a root tarball.
import_root() {
  docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["/usr/bin/python3"]' \
    "$1" "$2" >/dev/null
}
