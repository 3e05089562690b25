/* base64 (RFC 4648) for the engine client, one encoder and one decoder:
 * the X-Registry-Auth header (base64url of JSON) and a Docker config's
 * "auth" (user:password), registry.h; a results folder's pieces in a
 * task's log, logres.h. Pure. */
#ifndef TPUCI_ENGINE_BASE64_H
#define TPUCI_ENGINE_BASE64_H

#include <stddef.h>

/* base64 (url: the URL-safe alphabet, '-' and '_'), padded. New string. */
char *tpuci__base64(const unsigned char *data, size_t len, int url);

/* The decoder's strictness (tpuci__base64_decode_to's flags). */
/* The standard alphabet only ('+' and '/'), in whole groups of four
 * with their '=' padding: `len` a multiple of 4. Without it: either
 * alphabet, mixed ('-' and '_' too), the padding optional. */
#define TPUCI__B64_STRICT 1

/* Decodes the `len` bytes at s (no NUL needed) into out, which has room
 * for len / 4 * 3 + 2 bytes. Either way at most two '=', and only at the
 * end; no whitespace; a lone last character (len % 4 == 1 once the '='
 * are off) is refused; the unused low bits of a last partial group are
 * not checked. The number of bytes decoded, or -1 when s is not base64
 * as `flags` says. */
long tpuci__base64_decode_to(const char *s, size_t len, int flags, unsigned char *out);

/* The same, not strict, of the NUL-terminated s: 0 with *out a new
 * NUL-terminated buffer of *len bytes (owned by the caller), or -1 and
 * nothing set. */
int tpuci__base64_decode(const char *s, char **out, size_t *len);

#endif /* TPUCI_ENGINE_BASE64_H */
