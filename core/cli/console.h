/* The console reporter of the tpuci command: plain lines per attempt,
 * log tails of failures, a summary table. Uses only tpuci.h. */
#ifndef TPUCI_CLI_CONSOLE_H
#define TPUCI_CLI_CONSOLE_H

#include <stdio.h>

#include "tpuci.h"

typedef struct {
  FILE *out;
  int color;              /* write ANSI colours */
  int verbose;            /* stream output live, prefixed */
  int quiet;              /* only failures and the summary */
  int tail_lines;         /* log lines shown for a failed attempt */
  /* Private. */
  char **partial;         /* per instance: an incomplete output line */
  size_t *partial_len;
  size_t ninstances;
} tpuci_console_t;

void tpuci_console_init(tpuci_console_t *c, FILE *out, size_t ninstances);
void tpuci_console_free(tpuci_console_t *c);
/* The tpuci_event_cb: pass the console as userdata. */
void tpuci_console_event(tpuci_ctx_t *ctx, const tpuci_event_t *ev, void *ud);
/* The final table and verdict. */
void tpuci_console_summary(tpuci_console_t *c, tpuci_ctx_t *ctx);

#endif /* TPUCI_CLI_CONSOLE_H */
