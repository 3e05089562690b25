/* `tpuci flaky` (flaky.c). */
#ifndef TPUCI_CLI_FLAKY_H
#define TPUCI_CLI_FLAKY_H

/* Runs `tpuci flaky` with argv[0] "flaky"; returns the exit code. */
int tpuci_cli_flaky(int argc, char **argv);

/* Runs `tpuci select` with argv[0] "select"; returns the exit code. */
int tpuci_cli_select(int argc, char **argv);

/* --release-after K (`tpuci run` and `tpuci flaky`): 0 and *out, or the
 * exit code of a bad number, said on stderr for `cmd`. */
int tpuci_cli_release_after(const char *cmd, const char *arg, int *out);

#endif /* TPUCI_CLI_FLAKY_H */
