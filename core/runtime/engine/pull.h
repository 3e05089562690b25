/* Pulling an image for an engine driver's prepare(): the registry's
 * credentials (registry.h, credhelper.h) as X-Registry-Auth, the
 * progress stream summed into runtime.h's tpuci__pull_progress_t, and a
 * refusal by the registry told as such: which registry, and whether
 * credentials were sent (docs/docker.md, "Private registries"). */
#ifndef TPUCI_ENGINE_PULL_H
#define TPUCI_ENGINE_PULL_H

#include <jansson.h>
#include <stdint.h>

#include "runtime/engine/engine.h"
#include "runtime/runtime.h"

/* How long a credential helper may take. */
#define TPUCI__CREDHELPER_TIMEOUT_MS 20000

typedef struct {
  int ok;
  int engine_error; /* the engine did not answer (its error) */
  int denied;       /* the registry refused (authentication) */
  int cancelled;
  /* Why it failed ("" when ok). A refusal names the registry and
   * whether credentials were sent, and from where. */
  const char *message;
  /* The X-Registry-Auth value that was sent, or NULL: for the swarm's
   * services, whose nodes pull too. */
  const char *auth;
} tpuci__pull_res_t;

typedef void (*tpuci__pull_cb)(void *data, const tpuci__pull_res_t *res);
typedef void (*tpuci__pull_progress_cb)(void *data, const tpuci__pull_progress_t *p);

typedef struct tpuci__puller_s tpuci__puller_t;

/* Reads the Docker config, picks the credentials for `ref`, runs a
 * helper when the config names one, then pulls. `progress` (may be NULL)
 * gets STARTED at once, from inside this call. Returns NULL with err
 * filled (TPUCI_EIMAGE: the config cannot be read) and then never calls
 * back; otherwise cb follows once, from the loop. */
tpuci__puller_t *tpuci__pull_start(tpuci__engine_t *e, const char *ref,
                                   tpuci__pull_progress_cb progress, tpuci__pull_cb cb, void *data,
                                   tpuci__err_t *err);
/* Stops the helper or the pull; cb follows with cancelled set. */
void tpuci__pull_cancel(tpuci__puller_t *p);

/* The progress stream, summed per layer. Pure. */
typedef struct {
  char *id;
  uint64_t current, total;
  int done;
} tpuci__pull_layer_t;

typedef struct {
  tpuci__pull_layer_t *layers;
  size_t n, cap;
} tpuci__pull_state_t;

/* Takes one line ({"status", "id", "progressDetail": {"current",
 * "total"}}). Returns 1 when the sums changed. */
int tpuci__pull_state_line(tpuci__pull_state_t *st, json_t *line);
void tpuci__pull_state_sum(const tpuci__pull_state_t *st, uint64_t *current, uint64_t *total,
                           int *layers);
void tpuci__pull_state_free(tpuci__pull_state_t *st);

/* Whether a failed pull's answer (HTTP status, the engine's message) is
 * the registry refusing: 401/403, "unauthorized", "denied",
 * "authentication required", "no basic auth credentials". */
int tpuci__pull_denied(long status, const char *message);

#endif /* TPUCI_ENGINE_PULL_H */
