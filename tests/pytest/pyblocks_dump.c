/* Prints the blocks core/kind/pytest/pyblocks.h finds in Python files, for
 * pyblocks_check.py to compare with Python's own parser. Each argument
 * is a file, or "-": the files named on standard input, one a line. For
 * each file it prints
 *   file PATH RC        RC: tpuci__pyblocks_scan()'s, 0 or -1
 * then one line a block:
 *   FIRST LAST BODY NAME
 * Exit status 0, or 1 when a file cannot be read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "kind/pytest/pyblocks.h"

static int dump(const char *path) {
  tpuci__pyblocks_t b;
  char *text;
  size_t len, i;
  int r = tpuci__read_file(path, &text, &len);
  if (r != 0) {
    fprintf(stderr, "pyblocks_dump: %s: %s\n", path, tpuci_strerror(r));
    return 1;
  }
  r = tpuci__pyblocks_scan(text, len, &b);
  printf("file %s %d\n", path, r);
  for (i = 0; i < b.n; i++)
    printf("%d %d %d %s\n", b.blocks[i].first, b.blocks[i].last, b.blocks[i].body, b.blocks[i].name);
  tpuci__pyblocks_free(&b);
  free(text);
  return 0;
}

int main(int argc, char **argv) {
  char line[4096];
  int i, bad = 0;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-") != 0) {
      bad |= dump(argv[i]);
      continue;
    }
    while (fgets(line, sizeof line, stdin) != NULL) {
      line[strcspn(line, "\n")] = '\0';
      if (line[0] != '\0') bad |= dump(line);
    }
  }
  return bad;
}
