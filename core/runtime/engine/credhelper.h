/* Running a Docker credential helper on the loop: `docker-credential-NAME
 * get` with the registry's server on stdin, its JSON answer on stdout
 * (registry.h reads it). It runs in a process group of its own under a
 * time cap: at the cap, or when cancelled, the whole group is killed and
 * reading stops, so neither a helper that waits for a keyring prompt nor
 * a child of it that keeps stdout open can hang a run, and the loop never
 * blocks on it. When the helper exits, what is left of its group is
 * killed too. Its stdout is only handed to the callback, never printed,
 * not even when the helper fails (it may hold the secret); a failed
 * helper's message quotes the first line of its stderr with anything that
 * looks like a credential replaced by "***" (tpuci__credhelper_quote). */
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
 * "... no answer within 20s; killed", "... exit 1 (stderr: <its first
 * line, made safe>)", "cancelled": UV_ECANCELED). Called once, from the
 * loop, after every handle closed and the helper was reaped. */
typedef void (*tpuci__credhelper_cb)(void *data, int status, const char *out, size_t len,
                                     const char *why);

typedef struct tpuci__credhelper_s tpuci__credhelper_t;

/* Starts `helper get` (looked up on PATH). Never calls back from inside. */
tpuci__credhelper_t *tpuci__credhelper_get(uv_loop_t *loop, const char *helper, const char *server,
                                           uint64_t timeout_ms, tpuci__credhelper_cb cb,
                                           void *data);
/* Kills the helper's process group; the callback follows with
 * UV_ECANCELED as soon as the helper is reaped (nothing more is read). */
void tpuci__credhelper_cancel(tpuci__credhelper_t *h);

/* What a failed helper's message may quote of its stderr: the first line
 * that is not blank, at most TPUCI__CREDHELPER_QUOTE_MAX bytes, controls
 * as spaces, with every word that looks like a credential as "***". A
 * word is a run of characters other than blanks and " ' ` , ; : = ( ) [ ]
 * { } < >. It looks like a credential when it shares 6 characters in a
 * row (all of them, for a shorter one of 4 or more) with a string of the
 * helper's stdout (its JSON's values but ServerURL and Username, else its
 * words); or when it has 16 characters or more; or 8 or more with a
 * digit, an upper case letter after its first, or any character but
 * letters, '.' and '-'. Of the last two kinds, a word found in `server` or
 * `helper` (no secrets) stays. NULL when no word is left as it was. Pure;
 * a new string. */
#define TPUCI__CREDHELPER_QUOTE_MAX 200
char *tpuci__credhelper_quote(const char *err, size_t errlen, const char *out, size_t outlen,
                              const char *server, const char *helper);

#endif /* TPUCI_ENGINE_CREDHELPER_H */
