/* Which build of tpuci this is (util.h, tpuci__build_id): the GNU build
 * id the linker wrote into the object that holds the core (the tpuci
 * binary, libtpuci.so, or an embedder's program linked with libtpuci.a),
 * else a SHA-256 of that object's file. And the checkout it was built
 * from (tpuci__build_source_*), which cmake/build_info.cmake writes into
 * the build folder's build_info.c. */
/* dl_iterate_phdr() and struct dl_phdr_info are GNU extensions. */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "base/util.h"

/* ELF's note type of a build id (elf.h's NT_GNU_BUILD_ID). */
#define TPUCI__NT_BUILD_ID 3

static char tpuci__build[160];
static pthread_once_t tpuci__build_once = PTHREAD_ONCE_INIT;

typedef struct {
  uintptr_t addr; /* an address inside the core */
  char *id;       /* "gnu:HEX" (new string), or NULL */
  char *file;     /* the object's file (new string), or NULL */
} tpuci__find_t;

/* The build id in the note segment [p, end), or NULL. */
static char *tpuci__note_id(const unsigned char *p, const unsigned char *end) {
  while (p + 12 <= end) {
    uint32_t namesz, descsz, type;
    const unsigned char *name, *desc;
    memcpy(&namesz, p, 4);
    memcpy(&descsz, p + 4, 4);
    memcpy(&type, p + 8, 4);
    name = p + 12;
    desc = name + ((namesz + 3u) & ~3u);
    if (desc + descsz > end || desc < name) return NULL;
    if (type == TPUCI__NT_BUILD_ID && namesz == 4 && memcmp(name, "GNU", 4) == 0 && descsz > 0 &&
        descsz <= 64) {
      tpuci__buf_t b;
      uint32_t i;
      tpuci__buf_init(&b);
      tpuci__buf_adds(&b, "gnu:");
      for (i = 0; i < descsz; i++) tpuci__buf_addf(&b, "%02x", desc[i]);
      return tpuci__buf_steal(&b);
    }
    p = desc + ((descsz + 3u) & ~3u);
  }
  return NULL;
}

static int tpuci__find_object(struct dl_phdr_info *info, size_t size, void *data) {
  tpuci__find_t *f = data;
  int i, inside = 0;
  (void) size;
  for (i = 0; i < info->dlpi_phnum && !inside; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = (uintptr_t) info->dlpi_addr + ph->p_vaddr;
    inside = ph->p_type == PT_LOAD && f->addr >= lo && f->addr < lo + ph->p_memsz;
  }
  if (!inside) return 0;
  for (i = 0; i < info->dlpi_phnum && f->id == NULL; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    const unsigned char *p;
    if (ph->p_type != PT_NOTE) continue;
    p = (const unsigned char *) (info->dlpi_addr + ph->p_vaddr);
    f->id = tpuci__note_id(p, p + ph->p_memsz);
  }
  f->file = tpuci__strdup(info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe");
  return 1;
}

/* "sha256:HEX" of the file at `path`, or NULL. */
static char *tpuci__file_id(const char *path) {
  unsigned char d[EVP_MAX_MD_SIZE], buf[65536];
  unsigned dn = 0;
  char hex[65];
  size_t n;
  FILE *f = fopen(path, "rb");
  EVP_MD_CTX *md;
  if (f == NULL) return NULL;
  md = EVP_MD_CTX_new();
  EVP_DigestInit_ex(md, EVP_sha256(), NULL);
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) EVP_DigestUpdate(md, buf, n);
  fclose(f);
  EVP_DigestFinal_ex(md, d, &dn);
  EVP_MD_CTX_free(md);
  tpuci__hex(d, 32, hex);
  return tpuci__printf("sha256:%s", hex);
}

static void tpuci__build_find(void) {
  tpuci__find_t f = {(uintptr_t) &tpuci__build_find, NULL, NULL};
  char *id;
  dl_iterate_phdr(tpuci__find_object, &f);
  id = f.id ? f.id : f.file ? tpuci__file_id(f.file) : NULL;
  snprintf(tpuci__build, sizeof(tpuci__build), "%s", id ? id : "unknown");
  if (id != f.id) free(id);
  free(f.id);
  free(f.file);
}

const char *tpuci__build_id(void) {
  pthread_once(&tpuci__build_once, tpuci__build_find);
  return tpuci__build;
}

/* build_info.c, generated (cmake/build_info.cmake); "" when not recorded. */
extern const char tpuci__build_source_url[];
extern const char tpuci__build_source_commit[];
extern const int tpuci__build_source_modified;
extern const int tpuci__build_source_pushed;

const char *tpuci__build_source_url_get(void) {
  return tpuci__build_source_url[0] ? tpuci__build_source_url : NULL;
}

const char *tpuci__build_source_commit_get(void) {
  return tpuci__build_source_commit[0] ? tpuci__build_source_commit : NULL;
}

int tpuci__build_source_is_modified(void) {
  return tpuci__build_source_commit[0] && tpuci__build_source_modified;
}

int tpuci__build_source_is_pushed(void) {
  return tpuci__build_source_commit[0] && tpuci__build_source_pushed;
}
