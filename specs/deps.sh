#!/usr/bin/env bash
# Installs what building and running tpuci needs on Debian 12, as root:
# a C compiler, make, CMake and pkg-config, the libraries tpuci links,
# git (the build records which commit of which remote it was built from,
# for `tpuci export github`), docker.io (the engine the example's
# containers run on), curl (the quickstart asks the engine whether it
# answers) and busybox-static (the example's image is made from it,
# tests/images/build-busybox.sh). specs/quickstart.sh runs it; nothing
# of the test suite is here (tests/deps.sh adds that).
#
#   bash specs/deps.sh [PACKAGE...]   also install these (tests/deps.sh)
#
# Packages already present are left alone; nothing else is touched.
set -euo pipefail

pkgs=(gcc libc6-dev make cmake pkg-config git curl
      liblua5.4-dev libuv1-dev libyaml-dev libcurl4-openssl-dev libjansson-dev
      libexpat1-dev libssl-dev zlib1g-dev libinih-dev
      docker.io busybox-static)
pkgs+=("$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#pkgs[@]} packages are installed" >&2
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "deps: missing ${missing[*]}; run as root (or install them)" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
