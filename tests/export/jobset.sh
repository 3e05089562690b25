#!/usr/bin/env bash
# `tpuci export kubernetes --jobset` validated against the JobSet CRD's
# published schema and the Kubernetes API types (jobset_check.py says
# what is checked). Skips (exit 77) only when no python3 can import
# kubernetes, yaml and jsonschema (Debian python3-kubernetes,
# python3-yaml, python3-jsonschema; tests/deps.sh installs them).
. "$TESTS/e2e/lib.sh"
PY=$(python_with kubernetes yaml jsonschema)
if [ -z "$PY" ]; then
  echo "SKIP: no python3 with the kubernetes, yaml and jsonschema modules" >&2
  exit 77
fi
"$PY" "$TESTS/export/jobset_check.py" "$TPUCI" "$WORK" "$TESTS/export/jobset/jobset.x-k8s.io_jobsets.yaml"
