#!/usr/bin/env bash
# Installs what building and testing tpuci needs on Debian 12, as root.
# Packages already present are left alone; nothing else is touched.
# podman: tests/podman/ (with catatonit, the init binary its containers
# need, and netavark with aardvark-dns named, as recommends are not
# installed). docker-registry and apache2-utils (htpasswd):
# tests/docker/registry.sh's private registry with logins.
# python3-pyflakes: the syntax check of the embedded Python
# (tests/pytest/plugin/check_syntax.py).
# python3-ruamel.yaml: tests/export/hostile.sh reads exports back as a
# YAML 1.2 reader does.
# openssh-server, openssh-client, iproute2: tests/ssh/'s workers (sshds in
# network namespaces); python3-torch: their gloo all_reduce gangs.
# hyperfine (and parallel): the benchmarks' smoke runs (tests/bench/).
set -euo pipefail

pkgs=(build-essential cmake pkg-config git ca-certificates curl python3
      liblua5.4-dev libuv1-dev libyaml-dev libcurl4-openssl-dev libjansson-dev
      libexpat1-dev libssl-dev libcmocka-dev parallel busybox-static debootstrap docker.io
      python3-yaml python3-jsonschema python3-pytest python3-pyflakes chromium groff-base zsh
      python3-kubernetes kubernetes-client podman catatonit netavark aardvark-dns
      clang libclang-rt-14-dev libxml2-utils cmark-gfm jq npm
      docker-registry apache2-utils python3-ruamel.yaml
      openssh-server openssh-client iproute2 python3-torch hyperfine)
missing=()
for p in "${pkgs[@]}"; do
  # kubernetes-client ships /usr/bin/kubectl; where another package has
  # it already (the Google Cloud SDK's kubectl), installing would clash.
  if [ "$p" = kubernetes-client ] && command -v kubectl > /dev/null; then continue; fi
  # npm fetches the schemas and validators some tests use
  # (tests/junit/schemas.sh, tests/export/validator.sh); a Node.js from
  # elsewhere that brings its own npm would clash with Debian's.
  if [ "$p" = npm ] && command -v npm > /dev/null; then continue; fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#pkgs[@]} packages present" >&2
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
