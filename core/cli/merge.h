/* `tpuci merge` (merge.c). */
#ifndef TPUCI_CLI_MERGE_H
#define TPUCI_CLI_MERGE_H

/* Runs `tpuci merge` with argv[0] "merge"; returns the exit code. */
int tpuci_cli_merge(int argc, char **argv);

#endif /* TPUCI_CLI_MERGE_H */
