/* `tpuci completion bash|zsh`: shell completion scripts. They hold no list
 * of their own: at completion time they ask the tpuci they complete for
 * its commands (`tpuci --help`) and a command's options (`tpuci help
 * CMD`), so they never fall behind the CLI; after `export github` or
 * `export kubernetes` only that format's options. Specs complete as *.lua files,
 * `show` as the recorded run ids, `topologies` as the catalogue's types,
 * `--color` as auto/always/never. */
#include <stdio.h>
#include <string.h>

#include "completion.h"

/* awk over `tpuci help CMD` with fmt set (export's github, kubernetes):
 * only the format's usage lines (and their continuations) and the section
 * that starts "fmt:"; all of it when fmt is empty. */
#define TPUCI__SECTION_AWK                                    \
  "fmt == \"\" {print; next} "                                \
  "/^[a-z]+:/ {on = ($1 == fmt \":\")} "                      \
  "/tpuci export [a-z]+/ {match($0, /tpuci export [a-z]+/); " \
  "on = (substr($0, RSTART + 13, RLENGTH - 13) == fmt)} "     \
  "on {print}"

static const char tpuci__bash[] =
    "# bash completion for tpuci: eval \"$(tpuci completion bash)\", or save\n"
    "# it as /usr/share/bash-completion/completions/tpuci.\n"
    "_tpuci_commands() {\n"
    "  \"$1\" --help 2>/dev/null | awk '/^commands:/ {on=1; next} on && /^$/ {exit} on {print "
    "$1}'\n"
    "}\n"
    "# _tpuci_options TPUCI CMD [FORMAT]: CMD's options; with FORMAT (export's\n"
    "# github or kubernetes) only its own: its usage lines and its section.\n"
    "_tpuci_options() {\n"
    "  \"$1\" help \"$2\" 2>/dev/null | awk -v fmt=\"$3\" '" TPUCI__SECTION_AWK "' |\n"
    "    grep -oE -- '(^|[ ,])--?[a-zA-Z][a-z-]*' | tr -d ' ,' | sort -u\n"
    "}\n"
    "_tpuci() {\n"
    "  local cur prev cmd fmt i\n"
    "  cur=${COMP_WORDS[COMP_CWORD]}\n"
    "  prev=${COMP_WORDS[COMP_CWORD-1]}\n"
    "  cmd= fmt=\n"
    "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
    "    case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac\n"
    "  done\n"
    "  if [ \"$cmd\" = export ]; then\n"
    "    for ((i++; i < COMP_CWORD; i++)); do\n"
    "      case ${COMP_WORDS[i]} in -*) ;; *) fmt=${COMP_WORDS[i]}; break ;; esac\n"
    "    done\n"
    "  fi\n"
    "  COMPREPLY=()\n"
    "  if [ -z \"$cmd\" ]; then\n"
    "    COMPREPLY=($(compgen -W \"$(_tpuci_commands \"${COMP_WORDS[0]}\") --help --version\" -- "
    "\"$cur\"))\n"
    "    return\n"
    "  fi\n"
    "  case $prev in\n"
    "    --color) COMPREPLY=($(compgen -W 'auto always never' -- \"$cur\")); return ;;\n"
    "    --state-dir) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n"
    "    --report-json|--report-yaml|--report-html|--junit|--quarantine|--output) "
    "COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
    "  esac\n"
    "  case $cur in\n"
    "    -*) COMPREPLY=($(compgen -W \"$(_tpuci_options \"${COMP_WORDS[0]}\" \"$cmd\" \"$fmt\")\" "
    "-- \"$cur\")) ;;\n"
    "    *)\n"
    "      case $cmd in\n"
    "        show) COMPREPLY=($(compgen -W \"$(ls .tpuci/runs 2>/dev/null | grep -v '^latest$')\" "
    "-- \"$cur\")) ;;\n"
    "        topologies) COMPREPLY=($(compgen -W \"$(\"${COMP_WORDS[0]}\" topologies 2>/dev/null | "
    "awk 'NR > 1 && $2 ~ /x/ {print $1}')\" -- \"$cur\")) ;;\n"
    "        export) if [ \"$prev\" = export ]; then COMPREPLY=($(compgen -W 'github kubernetes' "
    "-- \"$cur\")); else\n"
    "                  COMPREPLY=($(compgen -f -X '!*.lua' -- \"$cur\") $(compgen -d -- "
    "\"$cur\")); fi ;;\n"
    "        help) COMPREPLY=($(compgen -W \"$(_tpuci_commands \"${COMP_WORDS[0]}\")\" -- "
    "\"$cur\")) ;;\n"
    "        init) ;;\n"
    "        *) COMPREPLY=($(compgen -f -X '!*.lua' -- \"$cur\") $(compgen -d -- \"$cur\")) ;;\n"
    "      esac ;;\n"
    "  esac\n"
    "}\n"
    "complete -o filenames -F _tpuci tpuci\n";

static const char tpuci__zsh[] =
    "#compdef tpuci\n"
    "# zsh completion for tpuci: source <(tpuci completion zsh), or save it as\n"
    "# _tpuci in a folder of $fpath.\n"
    "# _tpuci_candidates WORD...: what may follow the words typed so far\n"
    "# (the first is the tpuci binary), one per line; 'FILES' means *.lua\n"
    "# files and folders.\n"
    "_tpuci_candidates() {\n"
    "  local bin=$1 cmd= fmt= w prev\n"
    "  shift\n"
    "  for w in \"${@[1,-2]}\"; do\n"
    "    case $w in\n"
    "      -*) ;;\n"
    "      *) if [[ -z $cmd ]]; then cmd=$w; [[ $cmd == export ]] || break\n"
    "         else fmt=$w; break; fi ;;\n"
    "    esac\n"
    "  done\n"
    "  prev=${@[-2]:-}\n"
    "  if [[ -z $cmd ]]; then\n"
    "    $bin --help 2>/dev/null | awk '/^commands:/ {on=1; next} on && /^$/ {exit} on {print "
    "$1}'\n"
    "    return\n"
    "  fi\n"
    "  case $prev in\n"
    "    --color) print -l auto always never; return ;;\n"
    "  esac\n"
    "  case ${@[-1]} in\n"
    "    -*) $bin help $cmd 2>/dev/null | awk -v fmt=\"$fmt\" '" TPUCI__SECTION_AWK "' |\n"
    "          grep -oE -- '(^|[ ,])--?[a-zA-Z][a-z-]*' | tr -d ' ,' | sort -u ;;\n"
    "    *) case $cmd in\n"
    "         show) ls .tpuci/runs 2>/dev/null | grep -v '^latest$' ;;\n"
    "         topologies) $bin topologies 2>/dev/null | awk 'NR > 1 && $2 ~ /x/ {print $1}' ;;\n"
    "         export) if [[ $prev == export ]]; then print -l github kubernetes; else print FILES; "
    "fi ;;\n"
    "         init) [[ $prev == --output ]] && print FILES ;;\n"
    "         *) print FILES ;;\n"
    "       esac ;;\n"
    "  esac\n"
    "}\n"
    "_tpuci() {\n"
    "  local -a c\n"
    "  c=(${(f)\"$(_tpuci_candidates ${words[1]} ${words[2,CURRENT]})\"})\n"
    "  if [[ ${c[1]} == FILES ]]; then\n"
    "    _files -g '*.lua(-.)'\n"
    "  else\n"
    "    compadd -a c\n"
    "  fi\n"
    "}\n"
    "if (( $+functions[compdef] )); then compdef _tpuci tpuci; fi\n";

int tpuci_cli_completion(const char *shell, FILE *out) {
  if (shell != NULL && strcmp(shell, "bash") == 0) fputs(tpuci__bash, out);
  else if (shell != NULL && strcmp(shell, "zsh") == 0) fputs(tpuci__zsh, out);
  else return -1;
  return 0;
}
