/* `tpuci topologies`: the TPU catalogue, or one type and the environment
 * of each of its emulated hosts. */
#include <getopt.h>
#include <stdio.h>

#include "usage.h"
#include "tpuci.h"

enum { OPT_EMULATE = 256 };

int tpuci_cli_topologies(int argc, char **argv) {
  static const struct option longopts[] = {{"emulate", required_argument, NULL, OPT_EMULATE},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  const char *emulate = NULL;
  tpuci_ctx_t *ctx;
  char *text = NULL;
  int c, r;

  optind = 1;
  while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
    switch (c) {
      case OPT_EMULATE: emulate = optarg; break;
      case 'h': return tpuci_cli_help("topologies", stdout);
      default: return tpuci_cli_usage_error("topologies", "bad option");
    }
  }
  if (optind < argc - 1) return tpuci_cli_usage_error("topologies", "too many arguments");
  if (tpuci_ctx_new(&ctx, NULL) != 0) return EXIT_USAGE;
  r = tpuci_topologies(ctx, optind < argc ? argv[optind] : NULL, emulate, &text);
  if (r == 0) fputs(text, stdout);
  else fprintf(stderr, "tpuci: %s\n", tpuci_last_error(ctx));
  tpuci_free(text);
  tpuci_ctx_free(ctx);
  return r == 0 ? EXIT_PASSED : EXIT_USAGE;
}
