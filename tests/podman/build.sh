#!/usr/bin/env bash
# Images built from the spec on podman's Docker-compatible service (issue
# 42.2; docs/docker.md, "Images built from the spec"): the build endpoint
# takes tpuci's context, the job runs in what it built, an unchanged
# context builds the same id and the results cache takes the pass, and a
# failing step names the spec's image.
. "$TESTS/podman/lib.sh"

mkdir -p proj
printf 'FROM %s\nARG WORD=plain\nCOPY note.txt /note.txt\nRUN echo "$WORD" > /word\n' "$BUSYBOX" \
  > proj/Dockerfile
printf 'from the context\n' > proj/note.txt
cat > spec.lua <<'LUA'
image "built" { ref = "tpuci-test/podman-built:1", build = { context = "proj", args = { WORD = "mint" } } }
job "look" { image = "built", run = "cat /note.txt /word" }
LUA
tpuci_run run spec.lua
expect_code 0 "a build on podman"
expect_out "built image 'built' (tpuci-test/podman-built:1) from $WORK/proj: sha256:"
expect_out "from the context"
expect_out "mint"
id1=$(api /images/tpuci-test/podman-built:1/json | python3 -c 'import json,sys; print(json.load(sys.stdin)["Id"])')
tpuci_run run spec.lua
expect_code 0 "the same context again"
expect_json 's["instances"][0]["outcome"]' cached
id2=$(api /images/tpuci-test/podman-built:1/json | python3 -c 'import json,sys; print(json.load(sys.stdin)["Id"])')
[ -n "$id1" ] && [ "$id1" = "$id2" ] && pass || fail "an unchanged context built another id: $id1, $id2"

printf 'FROM %s\nRUN exit 9\n' "$BUSYBOX" > proj/Dockerfile.bad
cat > bad.lua <<'LUA'
image "broken" { ref = "tpuci-test/podman-bad:1", build = { context = "proj", dockerfile = "Dockerfile.bad" } }
job "never" { image = "broken", run = "true" }
LUA
tpuci_run run bad.lua
expect_code 3 "a failing build on podman"
expect_out "bad.lua:1: image 'broken': the build failed"
expect_out "build/broken.log"
finish
