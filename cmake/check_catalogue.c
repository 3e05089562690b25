/* check_catalogue FILE: reads a TPU catalogue (the format of
 * core/plan/topology_catalogue.yaml) with the library's reader, as the
 * built-in one is read at run time. The build runs it on the built-in
 * file, so a file the reader refuses fails the build.
 *
 * Exit codes: 0 the file reads; 1 it does not ("FILE:LINE:COLUMN: what"
 * on stderr); 2 usage or the file cannot be read. */
#include <stdio.h>
#include <stdlib.h>

#include "plan/topology.h"

int main(int argc, char **argv) {
  tpuci__tpu_catalogue_t *c;
  tpuci__err_t err = {0, NULL};
  char *text;
  size_t len;
  int rc;

  if (argc != 2) {
    fprintf(stderr, "usage: check_catalogue FILE\n");
    return 2;
  }
  rc = tpuci__read_file(argv[1], &text, &len);
  if (rc != 0) {
    fprintf(stderr, "check_catalogue: %s: %s\n", argv[1], tpuci__strerror(rc));
    return 2;
  }
  rc = tpuci__tpu_catalogue_read(argv[1], text, len, &c, &err);
  free(text);
  if (rc != 0) {
    fprintf(stderr, "%s\n", err.msg);
    tpuci__err_clear(&err);
    return 1;
  }
  tpuci__tpu_catalogue_free(c);
  return 0;
}
