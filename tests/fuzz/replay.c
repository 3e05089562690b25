/* Runs the fuzz harness over files, without libFuzzer: each argument is
 * a file or a folder of files (not recursive); with none, the folders in
 * TPUCI_FUZZ_SEEDS (colon-separated). Exit status 0 when every input went
 * through; a harness check aborts. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t replay_file(const char *path) {
  char *data;
  size_t len;
  int r = tpuci__read_file(path, &data, &len);
  if (r != 0) {
    fprintf(stderr, "replay: %s: %s\n", path, tpuci_strerror(r));
    exit(1);
  }
  LLVMFuzzerTestOneInput((const uint8_t *) data, len);
  free(data);
  return 1;
}

static size_t replay(const char *path) {
  struct stat st;
  DIR *d;
  struct dirent *e;
  size_t n = 0;

  if (stat(path, &st) != 0) {
    fprintf(stderr, "replay: %s: no such file or folder\n", path);
    exit(1);
  }
  if (!S_ISDIR(st.st_mode)) return replay_file(path);
  d = opendir(path);
  if (d == NULL) {
    fprintf(stderr, "replay: %s: cannot open\n", path);
    exit(1);
  }
  while ((e = readdir(d)) != NULL) {
    char *p;
    if (e->d_name[0] == '.') continue;
    p = tpuci__printf("%s/%s", path, e->d_name);
    if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) n += replay_file(p);
    free(p);
  }
  closedir(d);
  return n;
}

int main(int argc, char **argv) {
  size_t n = 0;
  int i;
  if (argc > 1) {
    for (i = 1; i < argc; i++) n += replay(argv[i]);
  } else {
#ifdef TPUCI_FUZZ_SEEDS
    char *dirs = tpuci__strdup(TPUCI_FUZZ_SEEDS), *save = NULL, *d;
    for (d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) n += replay(d);
    free(dirs);
#else
    fprintf(stderr, "usage: %s FILE_OR_FOLDER...\n", argv[0]);
    return 2;
#endif
  }
  printf("replay: %zu inputs ran through the harness\n", n);
  return n == 0;
}
