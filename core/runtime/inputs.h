/* The input key of a job instance (docs/cache.md): everything tpuci knows
 * that can change its result, hashed.
 *
 *  - the plan entry, as `tpuci plan --json` writes it but for where it
 *    was declared (the command, env, matrix values, topology and each
 *    host's environment, real or emulated, container options, timeouts,
 *    retries, pytest's markers, -k and shard), canonical (sorted keys,
 *    compact), with the key format, tpuci's version and its build
 *    (tpuci__build_id());
 *  - the image's id from the engine (runtime.h, image_ids);
 *  - the content of each mount (runtime/tree.h), or for a job without
 *    an image (the local runtime) its working folder's (links out of it
 *    followed), every variable of this process it inherits but the
 *    volatile ones (a terminal's, a session's, a CI run's identity,
 *    tpuci's own), each by its value's hash, and the Python packages it
 *    finds (runtime/pyenv.h: VIRTUAL_ENV's, CONDA_PREFIX's, PYTHONPATH's
 *    folders);
 *  - the tests an attempt was told to run (rerun --failed, --test).
 *
 * When a part cannot be known (an image not on the engine, a mount that
 * cannot be read, no git and too many files, the ssh runtime), there is
 * no key and `why` says so: the instance runs. Blocking (git, files, the
 * engine); for one run, before anything starts. */
#ifndef TPUCI_RUNTIME_INPUTS_H
#define TPUCI_RUNTIME_INPUTS_H

#include <jansson.h>
#include <stddef.h>

#include "base/util.h"
#include "plan/plan.h"

/* The format of the key: a new one makes every earlier key miss. */
#define TPUCI__KEY_FORMAT "tpuci-key-1"

typedef struct tpuci__inputs_s tpuci__inputs_t;

typedef struct {
  const char *state_dir; /* absolute: left out of every mount */
  const char *spec_path; /* absolute, or NULL: left out too (the plan
                              entry says what it says) */
} tpuci__inputs_opts_t;

typedef struct {
  char hex[65]; /* the key; "" when there is none */
  char *why;    /* NULL, or why there is no key (new string) */
  /* What went in (`tpuci plan --keys`): {"format", "tpuci", "build",
   * "entry" (the SHA-256 of the canonical plan entry), "image", "mounts":
   * [{"source", "target", "readonly", "key", "how", "files"}], "workdir",
   * "python": [{"source", "how", "files", "key"}], "env": {NAME: the
   * first 16 hex digits of the value's SHA-256}, "tests"}. New
   * reference, or NULL. */
  json_t *parts;
  /* Globs of `inputs` that matched no file of the mounts, and mounted
   * folders whose files git ignores, one line each. */
  tpuci__strv_t warnings;
} tpuci__inputs_key_t;

/* Asks each driver for the ids of the images the selected instances run
 * (once); folders are hashed as keys are asked for, each once. Never
 * fails: an engine that does not answer leaves its instances without a
 * key. */
tpuci__inputs_t *tpuci__inputs_new(const tpuci__plan_t *plan, const tpuci__inputs_opts_t *o);
void tpuci__inputs_free(tpuci__inputs_t *in);

/* The key of instance `i`; `tests` (NULL: none) the node ids its first
 * attempt runs. Free out with tpuci__inputs_key_clear(). */
void tpuci__inputs_key(tpuci__inputs_t *in, size_t i, const tpuci__strv_t *tests,
                       tpuci__inputs_key_t *out);
void tpuci__inputs_key_clear(tpuci__inputs_key_t *k);

/* The key of instance `i`'s inputs that are not its files (docs/pytest.md,
 * "Only what a change can affect"): its plan entry but for what differs
 * between the shards of one instance (its name, its shard) and what
 * changes no result (timeouts, retries), the image's id, tpuci's build,
 * and for a job without an image the environment it inherits and the
 * Python packages it finds. 0 and hex, or -1: none (the image's id is not
 * known, the ssh runtime). */
int tpuci__inputs_nonfile(tpuci__inputs_t *in, size_t i, char hex[65]);

#endif /* TPUCI_RUNTIME_INPUTS_H */
