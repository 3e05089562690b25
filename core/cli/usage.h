/* The tpuci command's exit codes and help texts. */
#ifndef TPUCI_CLI_USAGE_H
#define TPUCI_CLI_USAGE_H

#include <stdio.h>

/* Exit codes (docs/cli.md). */
#define EXIT_PASSED 0
#define EXIT_FAILED 1
#define EXIT_USAGE 2
#define EXIT_ENV 3
#define EXIT_RECORDS 4
#define EXIT_INTERRUPTED 130

/* Prints the help of `cmd` (NULL: the command list) to `out`. Returns
 * EXIT_PASSED, or EXIT_USAGE (said on stderr) for an unknown command. */
int tpuci_cli_help(const char *cmd, FILE *out);

/* "tpuci CMD: MSG" and where to read more, on stderr; EXIT_USAGE. */
int tpuci_cli_usage_error(const char *cmd, const char *msg);

/* `tpuci topologies` (topologies.c). */
int tpuci_cli_topologies(int argc, char **argv);

/* `tpuci init` (init.c). */
int tpuci_cli_init(int argc, char **argv);

#endif /* TPUCI_CLI_USAGE_H */
