#!/usr/bin/env bash
# The tests of the Python tpuci builds in (core/kind/pytest/plugin/: the pytest
# bootstrap and plugin, the Kubernetes export's prelude) with Debian's
# python3-pytest: pytest's own pytester runs real sessions of the
# plugin's hooks and of the command tpuci runs. Skips (exit 77) without
# it. tests/pytest/plugin_image.sh runs the same tests in the test image.
set -u
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
"$py" -c 'import pytest' 2> /dev/null ||
  { echo "SKIP: $py has no pytest (apt-get install python3-pytest)"; exit 77; }
# Nothing written beside the sources: no __pycache__, no .pytest_cache.
export PYTHONDONTWRITEBYTECODE=1
unset PYTEST_ADDOPTS TPUCI_PLUGIN_DIR
exec "$py" -m pytest -p pytester -p no:cacheprovider -q "$here"
