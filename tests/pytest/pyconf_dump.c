/* Prints what core/kind/pytest/pyconf_ini.c reads of INI files, for
 * pyconf_check.py to compare with iniconfig (what pytest reads them
 * with).
 *   pyconf_dump SECTION FILE...
 * For each file it prints
 *   file PATH
 * then either
 *   error LINE          the reader refused the file at LINE
 * or
 *   found 0|1           whether the section was there
 *   KEY<TAB>ITEM        each item of markers, testpaths, python_files
 * Exit status 0, or 1 when a file cannot be read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "kind/pytest/pyconf.h"

static void items(const char *key, const tpuci__strv_t *v) {
  size_t i;
  for (i = 0; i < v->len; i++) printf("%s\t%s\n", key, v->items[i]);
}

static int dump(const char *section, const char *path) {
  tpuci__pyconf_t conf;
  tpuci__err_t err = {0, NULL};
  char *text;
  size_t len;
  int r = tpuci__read_file(path, &text, &len);
  if (r != 0) {
    fprintf(stderr, "pyconf_dump: %s: %s\n", path, tpuci_strerror(r));
    return 1;
  }
  tpuci__pyconf_init(&conf);
  printf("file %s\n", path);
  /* The file is named "f": its message is "f:LINE: what". */
  if (tpuci__pyconf_ini(text, len, "f", section, &conf, &err) != 0) {
    printf("error %d\n", atoi(err.msg + 2));
  } else {
    printf("found %d\n", conf.found);
    items("markers", &conf.markers);
    items("testpaths", &conf.testpaths);
    items("python_files", &conf.python_files);
  }
  tpuci__err_clear(&err);
  tpuci__pyconf_free(&conf);
  free(text);
  return 0;
}

int main(int argc, char **argv) {
  int i, bad = 0;
  if (argc < 3) {
    fprintf(stderr, "usage: pyconf_dump SECTION FILE...\n");
    return 2;
  }
  for (i = 2; i < argc; i++) bad |= dump(argv[1], argv[i]);
  return bad;
}
