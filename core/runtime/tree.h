/* The content key of what a mount gives a job: a folder or a file on
 * this machine, hashed so that two keys are equal only when the job would
 * see the same files (docs/cache.md, "What a key covers").
 *
 *  - In a git work tree: the index's blob ids, with the files git says
 *    differ from the index and every untracked file that is not ignored
 *    hashed as git would hash them (one `git ls-files -s -v -m -o
 *    --exclude-standard`); a submodule counts as its commit plus its own
 *    work tree's key. One git process per folder, whatever its size:
 *    nothing reads a file that git says is unchanged. Ignored files do
 *    not count.
 *  - Elsewhere (no git, or git refuses the folder): every file under it,
 *    walked and hashed, at most `max_files` files and `max_bytes` bytes
 *    (beyond: no key, and the error says so).
 *  - A file: its content.
 *
 * Left out in both cases: the paths in `exclude` (the state folder, the
 * spec itself), `.git`, and the folders `__pycache__` and
 * `.pytest_cache` (what Python and pytest write beside the sources:
 * derived from them, or pytest's own state). With `globs`, only the
 * files whose path (relative to `glob_base`) matches one count
 * (tpuci__glob_match()).
 *
 * Blocking: it spawns git (through PATH) and reads files. Each entry is
 * "path\0mode\0id\n" in byte order of paths, and the key is the SHA-256
 * of a format tag and the entries: stable across machines and git
 * versions for the same content. Used by the results cache
 * (runtime/inputs.h); any part of tpuci that needs to know whether a
 * checkout changed may call it. */
#ifndef TPUCI_RUNTIME_TREE_H
#define TPUCI_RUNTIME_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

/* Outside git. */
#define TPUCI__TREE_MAX_FILES 100000
#define TPUCI__TREE_MAX_BYTES ((uint64_t) 4 << 30)

typedef struct {
  /* Absolute paths left out, with everything under them. */
  const char *const *exclude;
  size_t nexclude;
  /* Only files matching one of these count; nglobs 0: every file. */
  const char *const *globs;
  size_t nglobs;
  const char *glob_base; /* absolute; the globs are relative to it */
  size_t *glob_hits;     /* nglobs counters (files matched), or NULL */
  size_t max_files;      /* outside git; 0: TPUCI__TREE_MAX_FILES */
  /* A symbolic link that leads out of the folder counts as what it leads
   * to (a file's content, a folder's key): for a job that runs on this
   * machine, which follows it. In a container the link leads into the
   * container's own files, so mounts keep the link's text. */
  int follow_links;
  uint64_t max_bytes; /* outside git; 0: TPUCI__TREE_MAX_BYTES */
} tpuci__tree_opts_t;

typedef struct {
  char hex[65];    /* SHA-256, lower-case hex */
  const char *how; /* "git", "files" or "file" (static) */
  size_t files;    /* entries that counted */
  size_t hashed;   /* files whose content was read */
  /* When git keeps at most one file of the folder (a dataset's .gitkeep),
   * how many entries it ignores, which do not count; else 0. */
  size_t ignored_only;
} tpuci__tree_key_t;

/* The key of `path` (absolute). 0, or a negative code with err naming the
 * path and why there is no key ("...: 123456 files outside git, over
 * 100000", "...: no such file or folder"). */
int tpuci__tree_key(const char *path, const tpuci__tree_opts_t *opts, tpuci__tree_key_t *out,
                    tpuci__err_t *err);

/* Whether `path` (relative, '/'-separated) matches the glob `pattern`:
 * `*` any characters but '/', `?` one, `[a-z]` / `[!a-z]` a class, `\`
 * quotes the next character, and `**` as a whole segment any number of
 * folders (docs/cache.md has examples); a pattern that matches a folder
 * of the path matches the path (`src` counts all of src). */
int tpuci__glob_match(const char *pattern, const char *path);

/* Git's id of a blob of `len` bytes (SHA-1 of "blob LEN\0" and the
 * bytes), 40 hex digits and a NUL into hex. */
void tpuci__git_blob_id(const char *data, size_t len, char hex[41]);

#endif /* TPUCI_RUNTIME_TREE_H */
