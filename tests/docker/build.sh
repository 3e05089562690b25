#!/usr/bin/env bash
# Images built from the spec (issue 42.2; docs/docker.md, "Images built
# from the spec"): `image { build = ... }` is built by the engine through
# its build endpoint before the run, from a context that honours its
# .dockerignore, with build args; the results cache keys the id it built,
# so a change of the context is a new image and a rerun, and no change is
# a cache hit. A failing step, a missing Dockerfile and a swarm job on a
# built image are one-line errors; `tpuci export github` writes a build
# step that builds the same image on the runner.
. "$TESTS/e2e/lib.sh"
need_python_image tpuci-test/python:1
REF="tpuci-test/built-$$:1"
trap 'docker rmi -f "$REF" > /dev/null 2>&1; rm -rf "$WORK"' EXIT
docker rmi -f "$REF" > /dev/null 2>&1

mkdir -p proj/docker proj/data
printf 'FROM tpuci-test/python:1\nARG FLAVOUR=plain\nCOPY . /ctx\nRUN echo "$FLAVOUR" > /opt/flavour\n' \
  > proj/docker/Dockerfile.test
printf 'v1\n' > proj/data/marker.txt
printf 'do not send\n' > proj/secret.txt
printf '# keys stay home\nsecret.txt\n' > proj/.dockerignore

cat > spec.lua <<LUA
image "app" {
  ref = "$REF",
  build = { context = "proj", dockerfile = "docker/Dockerfile.test", args = { FLAVOUR = "mint" } },
}
job "look" { image = "app", run = "cat /ctx/data/marker.txt /opt/flavour; test ! -e /ctx/secret.txt" }
LUA

# On an engine without the image: built, then run.
run_tpuci run spec.lua
expect_code 0 "the first run builds"
expect_out "built image 'app' ($REF) from $WORK/proj: sha256:"
expect_out "v1"
expect_out "mint"
[ -s .tpuci/runs/latest/build/app.log ] && pass || fail "no build log"
grep -q 'Step 3/5 : COPY . /ctx' .tpuci/runs/latest/build/app.log && pass ||
  fail "the build log lacks the COPY step: $(cat .tpuci/runs/latest/build/app.log)"
id1=$(docker image inspect -f '{{.Id}}' "$REF")
expect_json "s['instances'][0]['outcome']" "passed"

# Nothing changed: the engine's layer cache builds the same id, and the
# results cache takes the pass.
run_tpuci run spec.lua
expect_code 0 "the second run"
expect_out "4 of 4 steps from the engine's cache"
expect_json "s['instances'][0]['outcome']" "cached"
[ "$(docker image inspect -f '{{.Id}}' "$REF")" = "$id1" ] && pass || fail "an unchanged context built another id"

# A file the .dockerignore leaves out changes nothing either.
printf 'still secret\n' > proj/secret.txt
run_tpuci run spec.lua
expect_json "s['instances'][0]['outcome']" "cached"

# The context changed: a new image, so the job runs again and sees it.
printf 'v2\n' > proj/data/marker.txt
run_tpuci run spec.lua
expect_code 0 "a changed context"
expect_json "s['instances'][0]['outcome']" "passed"
expect_out "v2"
[ "$(docker image inspect -f '{{.Id}}' "$REF")" != "$id1" ] && pass || fail "a changed context kept the id"

# A step that fails: one line naming the spec's image, the step and the log.
printf 'FROM tpuci-test/python:1\nRUN echo building; exit 7\n' > proj/docker/Dockerfile.bad
cat > bad.lua <<LUA
image "broken" { ref = "$REF-bad", build = { context = "proj", dockerfile = "docker/Dockerfile.bad" } }
job "never" { image = "broken", run = "true" }
LUA
run_tpuci run bad.lua
expect_code 3 "a failing build"
expect_out "bad.lua:1: image 'broken': the build failed at 'Step 2/3 : RUN echo building; exit 7'"
expect_out "returned a non-zero code: 7"
expect_out "build/broken.log"
# As a failed pull: the run started and ended with nothing run, and its
# records say why.
expect_json "s['exit_code'], s['instances'][0]['outcome']" "(3, 'not-run')"
expect_json "'the build failed at' in s['error']" "True"
grep -q 'exit 7' .tpuci/runs/latest/build/broken.log && pass || fail "the build log: $(cat .tpuci/runs/latest/build/broken.log)"

# A missing Dockerfile, before anything is sent.
cat > nofile.lua <<LUA
image "x" { ref = "$REF-x", build = { context = "proj", dockerfile = "nope/Dockerfile" } }
job "j" { image = "x", run = "true" }
LUA
run_tpuci run nofile.lua
expect_code 2 "a missing Dockerfile"
expect_out "nofile.lua:1: image 'x': no Dockerfile at $WORK/proj/nope/Dockerfile"
# ... and a missing context.
sed 's|context = "proj"|context = "gone"|' nofile.lua > nodir.lua
run_tpuci run nodir.lua
expect_code 2 "a missing context"
expect_out "nodir.lua:1: image 'x': build context $WORK/gone: No such file or directory"

# A swarm's nodes would not have it.
cat > swarm.lua <<LUA
image "app" { ref = "$REF", build = "proj" }
job "s" { image = "app", runtime = "swarm", run = "true" }
LUA
run_tpuci run swarm.lua
expect_code 2 "swarm on a built image"
expect_out "job 's' runs on swarm, and image 'app' is built from the spec"

# The spec's mistakes, at load.
printf 'image "p" { build = "proj", pull = "always" }\n' > pull.lua
run_tpuci plan pull.lua
expect_code 2 "pull with build"
expect_out "pull.lua:1: image 'p': pull: an image with build is built, never pulled"
printf 'image "p" { build = { context = "proj", file = "D" } }\n' > key.lua
run_tpuci plan key.lua
expect_code 2 "an unknown build key"
expect_out "build.file: unknown key"
printf 'image "Up+Case" { build = "proj" }\njob "j" { image = "Up+Case", run = "true" }\n' > name.lua
run_tpuci plan --json name.lua
expect_code 0 "a default ref"
expect_out '"ref": "tpuci-build/up-case"'

# The export: a step that builds the image on the runner, with the
# context and Dockerfile as the repository has them; run here, it
# builds the image the run then finds whole in the layer cache.
docker rmi -f "$REF" > /dev/null 2>&1
run_tpuci export github "${GH_SOURCE[@]}" spec.lua
expect_code 0 "the export"
expect_not_out "replace this step"
printf '%s\n' "$out" > workflow.yml
/usr/bin/python3 - "$REF" > step.sh 2> step.err <<'PY' || fail "no build step: $(cat step.err)"
import sys, yaml, shlex
doc = yaml.safe_load(open("workflow.yml"))
steps = [s for j in doc["jobs"].values() for s in j.get("steps", [])]
step = [s for s in steps if s.get("name", "").startswith("Build image " + sys.argv[1])][0]
for k, v in step["env"].items():
    print("export %s=%s" % (k, shlex.quote(str(v))))
print(step["run"])
PY
grep -q 'export TPUCI_CONTEXT=proj$' step.sh && pass || fail "context: $(cat step.sh)"
grep -q 'export TPUCI_DOCKERFILE=proj/docker/Dockerfile.test$' step.sh && pass || fail "dockerfile: $(cat step.sh)"
grep -q 'export FLAVOUR=mint$' step.sh && pass || fail "build arg: $(cat step.sh)"
bash step.sh > step.log 2>&1 && pass || fail "the build step failed: $(tail -5 step.log)"
run_tpuci run --no-cache spec.lua
expect_code 0 "a run after the export's build"
expect_out "4 of 4 steps from the engine's cache"
expect_out "v2"
finish
