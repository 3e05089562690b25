/* What the commands that load a spec share (load.c). */
#ifndef TPUCI_CLI_LOAD_H
#define TPUCI_CLI_LOAD_H

#include "tpuci.h"

/* Says a failed load's or selection's message; its exit code. */
int tpuci_cli_load_error(tpuci_ctx_t *ctx, int r);
/* The last load's warnings, one line each on stderr. */
void tpuci_cli_print_warnings(tpuci_ctx_t *ctx);
/* --engine (NULL: none), after loading: 0, or the exit code of a bad
 * name, said. */
int tpuci_cli_apply_engine(tpuci_ctx_t *ctx, const char *engine);

#endif /* TPUCI_CLI_LOAD_H */
