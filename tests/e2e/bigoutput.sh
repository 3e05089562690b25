#!/usr/bin/env bash
# A job that prints 2 GiB (local runtime; tests/docker/bigoutput.sh does
# the same in a container): tpuci's memory stays bounded (peak RSS, from
# /usr/bin/time), the attempt's log is complete (byte count and SHA-256
# of what the job printed), and the console shows only the tail and names
# the log. Skipped (77) with less than 5 GiB free for the run folder.
. "$TESTS/e2e/lib.sh"
. "$TESTS/e2e/bigoutput_lib.sh"

big_output_setup
cat > big.lua <<LUA
job "big" { run = "yes $line | head -c $size" }
LUA
big_output_run local
grep -qF "bytes left out; the whole log: ${log#"$(pwd -P)"/})" out.txt && pass || fail "the console does not name the whole log"
rm -rf .tpuci
finish
