/* core/runtime/ssh/: runtime "ssh", a gang's hosts on the workers of a
 * `hosts` declaration, each reached with the system's OpenSSH client
 * (docs/ssh.md). Private to this folder; it includes only runtime.h,
 * core/plan/ and core/base/. */
#ifndef TPUCI_RUNTIME_SSH_H
#define TPUCI_RUNTIME_SSH_H

#include "runtime/runtime.h"

/* The ssh client: $TPUCI_SSH when set (tests), else "ssh" on PATH. */
const char *tpuci__ssh_client(void);

/* Appends to out the ssh command line that reaches worker i of hs, up to
 * and including the destination: the client, `-F` when the declaration
 * gives a config, BatchMode=yes (never a prompt), ConnectTimeout,
 * `-p`, `-l`, and with control_path (may be NULL) ControlMaster=auto,
 * that ControlPath and a short ControlPersist. The remote command
 * follows. */
void tpuci__ssh_argv(const tpuci__hostset_t *hs, size_t i,
                     const char *control_path, tpuci__strv_t *out);

/* Runs argv to its end (blocking), stdin and stdout on /dev/null: its
 * exit status (255: ssh's own failure), or -1 when it could not run or
 * was killed; the last line it wrote to stderr, trimmed, into *last (new
 * string, or NULL when it wrote none). */
int tpuci__ssh_run_blocking(const tpuci__strv_t *argv, char **last);

#endif /* TPUCI_RUNTIME_SSH_H */
