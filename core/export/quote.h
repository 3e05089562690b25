/* Spec text in an exported file (`tpuci export github`, `tpuci export
 * kubernetes`): the one way it is written for each place it lands in, so
 * that what a reader of that place gets back is the text, and never more
 * than text. A spec's strings (its file name, image refs, job and
 * instance names, matrix values, environment, commands, mounts, topology
 * names) are not tpuci's: a pull request may carry any of them.
 *
 * The places, from the outside in (docs/github.md and docs/kubernetes.md,
 * "Quoting", list each exported field with its place):
 *  - a YAML comment line (tpuci__quote_comment, base/emit.h): a
 *    comment ends at a line break, and YAML 1.1 readers (PyYAML) break
 *    lines at U+0085, U+2028 and U+2029 too, where 1.2 readers (GitHub,
 *    Kubernetes) do not;
 *  - a YAML scalar: written by libyaml's emitter in the style
 *    tpuci__quote_yaml_style() picks (base/emit.h), which every reader,
 *    1.1 or 1.2, reads back as the same string;
 *  - a string GitHub evaluates: GitHub reads `${{ ... }}` in nearly
 *    every value of a workflow (names, env, with, matrix values), so
 *    text goes through tpuci__quote_github_text() before it is a scalar;
 *  - a string literal inside a GitHub expression (an `if:`):
 *    tpuci__quote_github_literal();
 *  - a command, argument or environment value of a pod, where the
 *    kubelet expands `$(VAR)`: tpuci__quote_k8s() (pod/pod.h);
 *  - a shell script (`run:`): spec text never goes into one. Scripts are
 *    tpuci's own text and read every value from the environment
 *    (`"$TPUCI_SPEC"`), whose values are GitHub text as above. */
#ifndef TPUCI_EXPORT_QUOTE_H
#define TPUCI_EXPORT_QUOTE_H

#include "base/emit.h"
#include "base/util.h"

/* Text GitHub evaluates, as a value that evaluates back to it: every
 * "${{" becomes "${{ '${{' }}" (an expression whose value is "${{"), so
 * no spec text opens an expression. A new string. */
char *tpuci__quote_github_text(const char *s);

/* A string literal of a GitHub expression whose value is s:
 * 'it''s' (a quote doubled); when s holds "${{", which would make GitHub
 * read the whole condition as text with an expression in it,
 * format('...', '$') with every '$' as {0} and every brace doubled. A new
 * string. */
char *tpuci__quote_github_literal(const char *s);

#endif /* TPUCI_EXPORT_QUOTE_H */
