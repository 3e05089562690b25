#!/usr/bin/env bash
# `tpuci completion bash|zsh`: the scripts complete commands, each
# command's options (asked of this tpuci, so an option the CLI gains is
# completed at once; after `export github` or `export kubernetes` only that
# format's), specs as *.lua files, --color's values and show's run ids. bash is driven through COMP_WORDS/COMPREPLY; zsh through the
# script's _tpuci_candidates (zsh's completion widgets need a terminal).
. "$TESTS/e2e/lib.sh"
mkdir -p sub .tpuci/runs/20261203-010101-abcd
touch a.lua b.txt

# bash_complete WORD...: the candidates bash offers for the last word.
bash_complete() {
  TPUCI_BIN=$TPUCI bash -c '
    eval "$($TPUCI_BIN completion bash)"
    COMP_WORDS=("$TPUCI_BIN" "${@:1}")
    COMP_CWORD=$#
    _tpuci
    printf "%s\n" "${COMPREPLY[@]}"' x "$@" | sort
}
out=$(bash_complete r); expect_out run "bash: commands"; expect_out rerun "bash: commands"
out=$(bash_complete comp); expect_out completion "bash: the completion command itself"
out=$(bash_complete run --fa); expect_out --fail-fast "bash: run's options"; expect_not_out --failed "bash: --failed is rerun's"
out=$(bash_complete rerun --fa); expect_out --failed "bash: rerun's options"
out=$(bash_complete run --); expect_out --report-html "bash: run's options"; expect_not_out --per-job "bash: export's options are not run's"
out=$(bash_complete export --p); expect_out --per-job "bash: export's options"
out=$(bash_complete run --color a); expect_out auto "bash: --color"; expect_out always "bash: --color"
out=$(bash_complete run --quarantine ""); expect_out b.txt "bash: --quarantine takes any file"
out=$(bash_complete run --re); expect_out --repeat "bash: run's options"; expect_out --release-after "bash: run's options"
out=$(bash_complete flaky --rel); expect_out --release "bash: flaky's options"
out=$(bash_complete me); expect_out merge "bash: the merge command"
out=$(bash_complete merge --); expect_out --report-html "bash: merge's options"; expect_out --junit "bash: merge's options"
out=$(bash_complete merge ""); expect_out sub "bash: merge's run folders"
out=$(bash_complete run --junit-); expect_out --junit-file-line "bash: run's --junit-file-line"
out=$(bash_complete export github --sch); expect_out --schedule "bash: github's --schedule"
out=$(bash_complete export github --pa); expect_out --package "bash: github's --package"
out=$(bash_complete in); expect_out init "bash: the init command"
out=$(bash_complete init --); expect_out --force "bash: init's options"; expect_out --output "bash: init's options"
expect_out --stdout "bash: init's options"; expect_not_out --per-job "bash: export's options are not init's"
out=$(bash_complete init --output ""); expect_out b.txt "bash: --output takes any file"
out=$(bash_complete init ""); expect_not_out a.lua "bash: init takes no spec"
out=$(bash_complete run ""); expect_out a.lua "bash: specs"; expect_not_out b.txt "bash: only .lua files"; expect_out sub "bash: folders"
out=$(bash_complete show 2026); expect_out 20261203-010101-abcd "bash: run ids"
out=$(bash_complete topologies v4-1); expect_out v4-16 "bash: TPU types"
out=$(bash_complete export ""); expect_out github "bash: export formats"; expect_out kubernetes "bash: export formats"
# After the format, only that format's options.
out=$(bash_complete export kubernetes --); expect_out --emulated "bash: kubernetes' options"
expect_not_out --per-job "bash: github's options after export kubernetes"
expect_not_out --runs-on "bash: github's options after export kubernetes"
out=$(bash_complete export github --); expect_out --per-job "bash: github's options"
expect_not_out --emulated "bash: kubernetes' options after export github"
out=$(bash_complete export kubernetes --only 'x*' --r); expect_out --results-claim "bash: kubernetes' options after a value"
expect_not_out --runs-on "bash: github's options after a kubernetes option's value"

if command -v zsh >/dev/null; then
  zsh_complete() {
    TPUCI_BIN=$TPUCI zsh -c 'source <($TPUCI_BIN completion zsh); _tpuci_candidates $TPUCI_BIN "$@"' x "$@" | sort
  }
  zsh -n <("$TPUCI" completion zsh) && pass || fail "zsh: the script does not parse"
  out=$(zsh_complete r); expect_out rerun "zsh: commands"
  out=$(zsh_complete run --fa); expect_out --fail-fast "zsh: run's options"
  out=$(zsh_complete run --color a); expect_out never "zsh: --color"
  out=$(zsh_complete run x); expect_out FILES "zsh: specs as files"
  out=$(zsh_complete init --); expect_out --stdout "zsh: init's options"
  out=$(zsh_complete init --output x); expect_out FILES "zsh: init's --output"
  out=$(zsh_complete init x); expect_not_out FILES "zsh: init takes no spec"
  out=$(zsh_complete show 2); expect_out 20261203-010101-abcd "zsh: run ids"
  out=$(zsh_complete export kubernetes --); expect_out --emulated "zsh: kubernetes' options"
  expect_not_out --per-job "zsh: github's options after export kubernetes"
  out=$(zsh_complete export github --); expect_out --per-job "zsh: github's options"
  expect_not_out --emulated "zsh: kubernetes' options after export github"
else
  fail "zsh is not installed (tests/deps.sh installs it)"
fi
run_tpuci completion fish
expect_code 2 "an unknown shell"
finish
