#!/usr/bin/env bash
# `tpuci export kubernetes` read back by the Kubernetes Python client
# (k8s_check.py says what is checked). Skips (exit 77) only when no
# python3 can import kubernetes and yaml (Debian packages
# python3-kubernetes and python3-yaml; tests/deps.sh installs them).
. "$TESTS/e2e/lib.sh"
PY=
for p in python3 /usr/bin/python3; do
  if command -v "$p" > /dev/null && "$p" -c 'import kubernetes, yaml' 2> /dev/null; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
  echo "SKIP: no python3 with the kubernetes and yaml modules (Debian package python3-kubernetes)" >&2
  exit 77
fi
# A python with pytest runs the exported pytest commands as a pod would.
PYTEST=
for p in python3 /usr/bin/python3; do
  if command -v "$p" > /dev/null && "$p" -c 'import pytest' 2> /dev/null; then PYTEST=$(command -v "$p"); break; fi
done
"$PY" "$TESTS/export/k8s_check.py" "$TPUCI" "$WORK" $PYTEST
