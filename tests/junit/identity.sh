#!/usr/bin/env bash
# Test case identities in the merged JUnit (docs/pytest.md, "Test case
# identities"; issue 24.3): one pytest job in two matrix instances, in
# real containers of the Python test image, run from /src and from
# /src/tests (pytest's rootdir and node ids change). Read back as Maven
# Surefire's parser reads a report (check_identity.py): every test case
# has its own identity (classname INSTANCE.MODULE.CLASS, the same from
# both workdirs), its failure's type is the exception's class, and with
# --junit-file-line it has file and line (where it failed in the
# project). The reports without that option validate against Jenkins'
# schema and Surefire's rules; with it, against neither (they have no
# file or line). Skips (exit 77) without an engine or the image, or when
# npm cannot reach the registry for Jenkins' schema.
. "$TESTS/e2e/lib.sh"
image=${TPUCI_PYTEST_IMAGE:-tpuci-test/python:1}
need_python_image "$image"
command -v xmllint >/dev/null || { fail "xmllint is missing (Debian package libxml2-utils; tests/deps.sh)"; finish; }
. "$TESTS/junit/jenkins_xsd.sh"

# The project in a git repository of its own: its folder is the project's.
cp -r "$TESTS/junit/identity" proj
git init -q proj || fail "git init"
cd proj || exit 1
TPUCI_PYTEST_IMAGE=$image run_tpuci run --junit "$WORK/src.xml" spec.lua
expect_code 1 "the run from /src"
expect_out "edge[py=a,b]: 4 tests, 3 failed"
TPUCI_PYTEST_IMAGE=$image TPUCI_WORKDIR=/src/tests run_tpuci run --junit-file-line \
  --junit "$WORK/tests.xml" spec.lua
expect_code 1 "the run from /src/tests"
grep -q "rootdir: /src/tests" .tpuci/runs/latest/*/attempt-1.log && pass ||
  fail "pytest's rootdir did not move with the workdir"
cd "$WORK" || exit 1
msg=$(/usr/bin/python3 "$TESTS/junit/check_identity.py" src.xml tests.xml tests 2>&1)
[ "$msg" = ok ] && pass || fail "identities: $msg"

for s in "$jenkins" "$TESTS/junit/xsd/testsuites.xsd"; do
  if msg=$(xmllint --noout --schema "$s" src.xml 2>&1); then pass
  else fail "src.xml against $(basename "$s"): $msg"; fi
  xmllint --noout --schema "$s" tests.xml > /dev/null 2>&1 &&
    fail "tests.xml (file and line) is valid against $(basename "$s")" || pass
done
finish
