/* The build context of an image built by the engine (POST /build): a
 * folder as an uncompressed POSIX tar, filtered by its .dockerignore
 * the way Docker filters it, with the Dockerfile always in it. The
 * archive is made in memory (the caller caps its size), in a fixed order
 * and with owner 0:0, so the same tree is the same bytes and the engine's
 * build cache sees no change where there is none. The patterns are
 * dockerignore.h's. */
#ifndef TPUCI_ENGINE_BUILDCTX_H
#define TPUCI_ENGINE_BUILDCTX_H

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

typedef struct {
  tpuci__buf_t tar; /* the archive (an uncompressed POSIX tar), owned */
  char *dockerfile; /* the Dockerfile's path in the archive, for ?dockerfile= */
  size_t files;     /* regular files archived (the Dockerfile included) */
  uint64_t bytes;   /* their total size */
} tpuci__buildctx_t;

/* Archives `context_dir` for the engine's build. `dockerfile` is the
 * Dockerfile as the user wrote it: relative to context_dir, or absolute;
 * NULL is "Dockerfile" (or "dockerfile" when only that exists, as the
 * docker CLI does). Symbolic links on its path are followed: one that
 * ends inside the context names the file there; one outside (or a
 * "../" path) is added at the archive's top as
 * ".tpuci-dockerfile-<12 hex digits of its SHA-256>" and out->dockerfile
 * says so. context_dir/.dockerignore filters the rest; the Dockerfile
 * and the .dockerignore are sent even when it leaves them out (the
 * engine reads both). Regular files keep their mode bits and mtime,
 * symbolic links are archived as links (never followed), folders as
 * folders; sockets, FIFOs and devices are left out; a hard link is one
 * more regular file. When the files would total more than max_bytes
 * it stops.
 *
 * Returns 0 with *out filled (free it with tpuci__buildctx_free()), or,
 * with *out empty and err holding one line that names the path:
 * TPUCI_ESPEC (the context or the Dockerfile is missing or not what it
 * should be, the .dockerignore is malformed, the context is too big)
 * or TPUCI_EIO (a file or folder inside cannot be read, or changed size
 * while it was read: docker build fails on those too). */
int tpuci__buildctx_make(const char *context_dir, const char *dockerfile, uint64_t max_bytes,
                         tpuci__buildctx_t *out, tpuci__err_t *err);
void tpuci__buildctx_free(tpuci__buildctx_t *c);

#endif /* TPUCI_ENGINE_BUILDCTX_H */
