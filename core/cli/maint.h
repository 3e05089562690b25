/* `tpuci gc` and `tpuci doctor` (maint.c). */
#ifndef TPUCI_CLI_MAINT_H
#define TPUCI_CLI_MAINT_H

/* Each runs its command with argv[0] its name; returns the exit code. */
int tpuci_cli_gc(int argc, char **argv);
int tpuci_cli_doctor(int argc, char **argv);

#endif /* TPUCI_CLI_MAINT_H */
