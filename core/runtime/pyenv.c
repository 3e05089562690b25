/* The installed Python packages of an environment (pyenv.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/evp.h>
#include <uv.h>

#include "runtime/pyenv.h"
#include "runtime/tree.h"

/* One distribution's record: far beyond any package's. */
#define TPUCI__PYENV_RECORD_MAX ((size_t) 16 << 20)
/* Entries at a site-packages folder's top: far beyond any environment. */
#define TPUCI__PYENV_MAX_ENTRIES 100000

static int tpuci__name_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *) a, *(const char *const *) b);
}

static int tpuci__ends(const char *s, const char *tail) {
  size_t n = strlen(s), t = strlen(tail);
  return n > t && strcmp(s + n - t, tail) == 0;
}

static int tpuci__is_dist(const char *name) {
  return tpuci__ends(name, ".dist-info") || tpuci__ends(name, ".egg-info");
}

int tpuci__pyenv_is_site(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *de;
  int found = 0;
  if (d == NULL) return 0;
  while (!found && (de = readdir(d)) != NULL) found = tpuci__is_dist(de->d_name);
  closedir(d);
  return found;
}

void tpuci__pyenv_sites(const char *prefix, tpuci__strv_t *out) {
  char *lib = tpuci__printf("%s/lib", prefix);
  DIR *d = opendir(lib);
  struct dirent *de;
  tpuci__strv_t found = {0};
  size_t i;
  if (d != NULL) {
    while ((de = readdir(d)) != NULL) {
      char *site;
      struct stat st;
      if (strncmp(de->d_name, "python", 6) != 0) continue;
      site = tpuci__printf("%s/%s/site-packages", lib, de->d_name);
      if (stat(site, &st) == 0 && S_ISDIR(st.st_mode)) tpuci__strv_take(&found, site);
      else free(site);
    }
    closedir(d);
  }
  free(lib);
  /* In name order: the key must not depend on readdir's. */
  if (found.len > 1) qsort(found.items, found.len, sizeof(char *), tpuci__name_cmp);
  for (i = 0; i < found.len; i++) tpuci__strv_push(out, found.items[i]);
  tpuci__strv_free(&found);
}

/* What stands for the entry `name` of `dir` in the key: a distribution's
 * record, an editable install's file, else its kind. A new string. */
static char *tpuci__pyenv_entry(const char *dir, const char *name) {
  static const char *const records[] = {"RECORD", "METADATA", "PKG-INFO", NULL};
  char *path = tpuci__printf("%s/%s", dir, name), *data = NULL, hex[41], *id = NULL;
  struct stat st;
  size_t len = 0, i;
  if (lstat(path, &st) != 0) {
    id = tpuci__strdup("gone");
  } else if (S_ISDIR(st.st_mode) && tpuci__is_dist(name)) {
    for (i = 0; records[i] && id == NULL; i++) {
      char *rec = tpuci__printf("%s/%s", path, records[i]);
      if (tpuci__read_file_max(rec, TPUCI__PYENV_RECORD_MAX, &data, &len) == 0) {
        tpuci__git_blob_id(data, len, hex);
        id = tpuci__printf("%s:%s", records[i], hex);
      }
      free(data);
      data = NULL;
      free(rec);
    }
    if (id == NULL) id = tpuci__strdup("no record");
  } else if (S_ISREG(st.st_mode) && (tpuci__is_dist(name) || tpuci__ends(name, ".pth") ||
                                     tpuci__ends(name, ".egg-link"))) {
    if (tpuci__read_file_max(path, TPUCI__PYENV_RECORD_MAX, &data, &len) == 0) {
      tpuci__git_blob_id(data, len, hex);
      id = tpuci__strdup(hex);
    } else {
      id = tpuci__strdup("unreadable");
    }
    free(data);
  } else {
    id = tpuci__strdup(tpuci__file_kind(st.st_mode));
  }
  free(path);
  return id;
}

int tpuci__pyenv_key(const char *dir, char hex[65], size_t *packages, tpuci__err_t *err) {
  DIR *d = opendir(dir);
  struct dirent *de;
  tpuci__strv_t names = {0};
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned mdn = 0;
  EVP_MD_CTX *sum;
  size_t i;
  int r = 0;
  *packages = 0;
  if (d == NULL) {
    r = -errno;
    return tpuci__err_set(err, r, "%s: cannot read the folder: %s", dir, tpuci__strerror(r));
  }
  while (r == 0 && (de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
        strcmp(de->d_name, "__pycache__") == 0)
      continue;
    if (names.len >= TPUCI__PYENV_MAX_ENTRIES)
      r = tpuci__err_set(err, UV_E2BIG, "%s: more than %d entries", dir, TPUCI__PYENV_MAX_ENTRIES);
    else tpuci__strv_push(&names, de->d_name);
  }
  closedir(d);
  if (r != 0) {
    tpuci__strv_free(&names);
    return r;
  }
  if (names.len > 1) qsort(names.items, names.len, sizeof(char *), tpuci__name_cmp);
  sum = EVP_MD_CTX_new();
  EVP_DigestInit_ex(sum, EVP_sha256(), NULL);
  EVP_DigestUpdate(sum, "tpuci-site-1\n", 13);
  for (i = 0; i < names.len; i++) {
    char *id = tpuci__pyenv_entry(dir, names.items[i]);
    *packages += tpuci__is_dist(names.items[i]);
    EVP_DigestUpdate(sum, names.items[i], strlen(names.items[i]) + 1);
    EVP_DigestUpdate(sum, id, strlen(id));
    EVP_DigestUpdate(sum, "\n", 1);
    free(id);
  }
  EVP_DigestFinal_ex(sum, md, &mdn);
  EVP_MD_CTX_free(sum);
  tpuci__hex(md, 32, hex);
  tpuci__strv_free(&names);
  return 0;
}
