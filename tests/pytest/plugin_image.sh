#!/usr/bin/env bash
# The tests of core/kind/pytest/plugin/ (tests/pytest/plugin/, as run.sh there
# runs them with this machine's python3) inside the test image
# tpuci-test/python:1, where tpuci's pytest attempts run them: its
# python3 and pytest 7.2, the sources and tests mounted read-only, no
# network. Skips (exit 77) without an engine or the image.
. "$TESTS/e2e/lib.sh"
IMAGE=tpuci-test/python:1
need_python_image "$IMAGE"

ROOT=$(cd "$TESTS/.." && pwd)
out=$(docker run --rm --network none \
  -v "$ROOT/core/kind/pytest/plugin:/tpuci/plugin:ro" -v "$TESTS/pytest/plugin:/tpuci/tests:ro" \
  -e TPUCI_PLUGIN_DIR=/tpuci/plugin -e PYTHONDONTWRITEBYTECODE=1 -w /tmp \
  "$IMAGE" python3 -m pytest -p pytester -p no:cacheprovider -q /tpuci/tests 2>&1)
code=$?
expect_code 0 "the plugin's tests in $IMAGE"
expect_out " passed" "the plugin's tests in $IMAGE"
expect_not_out " skipped" "the plugin's tests in $IMAGE"
printf "%s\n" "$out" | tail -n 1
finish
