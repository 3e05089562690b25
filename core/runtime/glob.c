/* The `inputs` globs (tree.h, tpuci__glob_match): base/wildmatch.h's, with
 * '/' a separator and a matched folder matching what is in it. */
#include "base/wildmatch.h"
#include "runtime/tree.h"

int tpuci__glob_match(const char *pattern, const char *path) {
  return tpuci__wildmatch(pattern, path, TPUCI__WM_PATH | TPUCI__WM_FOLDER);
}
