/* What the commands that load a spec share: a failed load's message and
 * exit code, the load's warnings, `--engine`. Uses only tpuci.h. */
#include <stdio.h>

#include "console.h"
#include "load.h"
#include "usage.h"

/* Exit code for a failed load or select. */
int tpuci_cli_load_error(tpuci_ctx_t *ctx, int r) {
  fprintf(stderr, "tpuci: %s\n", tpuci_console__safe(tpuci_last_error(ctx), 1));
  (void) r;
  return EXIT_USAGE;
}

void tpuci_cli_print_warnings(tpuci_ctx_t *ctx) {
  size_t i;
  for (i = 0; i < tpuci_warning_count(ctx); i++)
    fprintf(stderr, "tpuci: warning: %s\n", tpuci_console__safe(tpuci_warning(ctx, i), 1));
}

/* --engine: after loading. 0, or the exit code of a bad name. */
int tpuci_cli_apply_engine(tpuci_ctx_t *ctx, const char *engine) {
  if (engine == NULL) return 0;
  if (tpuci_plan_engine(ctx, engine) < 0) {
    fprintf(stderr, "tpuci: %s\n", tpuci_console__safe(tpuci_last_error(ctx), 1));
    return EXIT_USAGE;
  }
  return 0;
}
