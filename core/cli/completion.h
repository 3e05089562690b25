/* Shell completion scripts (`tpuci completion bash|zsh`). */
#ifndef TPUCI_CLI_COMPLETION_H
#define TPUCI_CLI_COMPLETION_H

#include <stdio.h>

/* Writes the completion script for `shell` ("bash" or "zsh") to `out`.
 * Returns 0, or -1 for another shell. */
int tpuci_cli_completion(const char *shell, FILE *out);

#endif /* TPUCI_CLI_COMPLETION_H */
