#!/usr/bin/env bash
# The build's check of the TPU catalogue (cmake/check_catalogue.c, run on
# core/plan/topology_catalogue.yaml by every build): the file reads, and a
# broken copy makes the check fail with the file, line and column, which
# is what fails the build.
. "$TESTS/e2e/lib.sh"
: "${TPUCI_BUILD:?TPUCI_BUILD must name the build folder}"
CHECK="$TPUCI_BUILD/check_catalogue"
YAML="$TESTS/../core/plan/topology_catalogue.yaml"

check() { out=$("$CHECK" "$@" 2>&1); code=$?; }

check "$YAML"
expect_code 0 "the built-in catalogue"

# v4-16 with the topology of v4-32: refused where it stands.
line=$(grep -n "{type: v4-16," "$YAML" | cut -d: -f1)
sed 's/{type: v4-16,  layout: 2x4,  topology: 2x2x2,/{type: v4-16,  layout: 2x4,  topology: 2x2x4,/' \
  "$YAML" > broken.yaml
check broken.yaml
expect_code 1 "a topology that is not host bounds x chips per host bounds"
expect_out "broken.yaml:$line:46: v4-16: topology 2x2x4 is not host bounds 1,1,2 x chips per host bounds 2,2,1"

# A generation without the source of one of its values.
grep -v "^    name_counts: 4a (v5p-8 is 4 chips)$" "$YAML" > nosource.yaml
check nosource.yaml
expect_code 1 "a value without a source"
expect_out "v5p-8: no source for 'name_counts'"

printf 'x: [\n' > notyaml.yaml
check notyaml.yaml
expect_code 1 "not YAML"
expect_out "notyaml.yaml:2:1: "

check "$WORK/missing.yaml"
expect_code 2 "a missing file"
expect_out "missing.yaml: "

check
expect_code 2 "no argument"
expect_out "usage: check_catalogue FILE"

finish
