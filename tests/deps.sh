#!/usr/bin/env bash
# Installs what testing tpuci needs on Debian 12, as root: what building
# and running it needs (specs/deps.sh, which this calls) and the test
# suite's own packages below. Packages already present are left alone;
# nothing else is touched.
# build-essential, libcmocka-dev: the unit tests (cmocka), the embedding
# example and tests/embed/'s C programs; dpkg-dev comes with
# build-essential (`cpack -G DEB` reads the libraries' packages with it).
# podman: tests/podman/ (with catatonit, the init binary its containers
# need, and netavark with aardvark-dns named, as recommends are not
# installed). docker-registry and apache2-utils (htpasswd):
# tests/docker/registry.sh's private registry with logins.
# python3-pyflakes: the syntax check of the embedded Python
# (tests/pytest/plugin/check_syntax.py). clang-format: tests/layout/format.sh,
# the check that core/ and include/ are formatted as .clang-format says.
# python3-ruamel.yaml: tests/export/hostile.sh reads exports back as a
# YAML 1.2 reader does.
# openssh-server, openssh-client, iproute2: tests/ssh/'s workers (sshds in
# network namespaces); python3-torch: their gloo all_reduce gangs.
# hyperfine (and parallel): the benchmarks' smoke runs (tests/bench/).
# debootstrap: the Python test images (tests/images/). ninja-build:
# tests/run-all.sh's builds (less CPU than make's generator).
set -euo pipefail

pkgs=(build-essential ca-certificates python3 libcmocka-dev parallel debootstrap
      python3-yaml python3-jsonschema python3-pytest python3-pyflakes chromium groff-base zsh
      python3-kubernetes kubernetes-client podman catatonit netavark aardvark-dns
      clang clang-format libclang-rt-14-dev libxml2-utils cmark-gfm jq npm
      docker-registry apache2-utils python3-ruamel.yaml
      openssh-server openssh-client iproute2 python3-torch hyperfine ninja-build)
wanted=()
for p in "${pkgs[@]}"; do
  # kubernetes-client ships /usr/bin/kubectl; where another package has
  # it already (the Google Cloud SDK's kubectl), installing would clash.
  if [ "$p" = kubernetes-client ] && command -v kubectl > /dev/null; then continue; fi
  # npm fetches the schemas and validators some tests use
  # (tests/junit/schemas.sh, tests/export/validator.sh); a Node.js from
  # elsewhere that brings its own npm would clash with Debian's.
  if [ "$p" = npm ] && command -v npm > /dev/null; then continue; fi
  wanted+=("$p")
done
exec bash "$(dirname "$0")/../specs/deps.sh" "${wanted[@]}"
