/* Running a Docker credential helper on the loop: `docker-credential-NAME
 * get` with the registry's server on stdin, its JSON answer on stdout
 * (registry.h reads it). It runs under a time cap, so a helper that
 * waits for a keyring prompt cannot hang a run, and the loop never
 * blocks on it. Its stderr is ignored and its stdout is only handed to
 * the callback, never printed (it holds the secret). */
#ifndef TPUCI_ENGINE_CREDHELPER_H
#define TPUCI_ENGINE_CREDHELPER_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* The helper exited non-zero saying it has nothing for this server
 * ("credentials not found in native keychain"): pull without. */
#define TPUCI__CREDHELPER_NONE 1

/* `status`: 0 (out/len: what it printed), TPUCI__CREDHELPER_NONE, or a
 * negative code with `why` ("docker-credential-x: not found on PATH",
 * "... timed out after 10s", "... exit 1: <first line>", "cancelled":
 * UV_ECANCELED). Called once, from the loop, after every handle closed. */
typedef void (*tpuci__credhelper_cb)(void *data, int status, const char *out,
                                     size_t len, const char *why);

typedef struct tpuci__credhelper_s tpuci__credhelper_t;

/* Starts `helper get` (looked up on PATH). Never calls back from inside. */
tpuci__credhelper_t *tpuci__credhelper_get(uv_loop_t *loop, const char *helper,
                                           const char *server,
                                           uint64_t timeout_ms,
                                           tpuci__credhelper_cb cb, void *data);
/* Kills the helper; the callback follows with UV_ECANCELED. */
void tpuci__credhelper_cancel(tpuci__credhelper_t *h);

#endif /* TPUCI_ENGINE_CREDHELPER_H */
