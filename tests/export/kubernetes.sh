#!/usr/bin/env bash
# `tpuci export kubernetes` read back by the Kubernetes Python client
# (k8s_check.py says what is checked). Skips (exit 77) only when no
# python3 can import kubernetes and yaml (Debian packages
# python3-kubernetes and python3-yaml; tests/deps.sh installs them).
. "$TESTS/e2e/lib.sh"
PY=$(python_with kubernetes yaml)
if [ -z "$PY" ]; then
  echo "SKIP: no python3 with the kubernetes and yaml modules (Debian package python3-kubernetes)" >&2
  exit 77
fi
# A python with pytest runs the exported pytest commands as a pod would.
PYTEST=$(python_with pytest)
"$PY" "$TESTS/export/k8s_check.py" "$TPUCI" "$WORK" $PYTEST
