/* base64 (base64.h): libcrypto's EVP_EncodeBlock and EVP_DecodeBlock,
 * with the URL-safe alphabet and the strictness around them. */
#include "runtime/engine/base64.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "base/util.h"

char *tpuci__base64(const unsigned char *data, size_t len, int url) {
  char *out = tpuci__malloc((len + 2) / 3 * 4 + 1), *o;
  EVP_EncodeBlock((unsigned char *) out, data, (int) len);
  for (o = out; url && *o; o++) {
    if (*o == '+') *o = '-';
    else if (*o == '/') *o = '_';
  }
  return out;
}

/* Whether c is of the alphabet `flags` allows. */
static int tpuci__b64_ok(char c, int flags) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
      c == '/')
    return 1;
  return !(flags & TPUCI__B64_STRICT) && (c == '-' || c == '_');
}

long tpuci__base64_decode_to(const char *s, size_t len, int flags, unsigned char *out) {
  size_t n = len, i, pad;
  unsigned char *norm, *raw;
  int got;
  while (n > 0 && s[n - 1] == '=') n--;
  if (len - n > 2 || n % 4 == 1 || n > (size_t) 1 << 30) return -1;
  if ((flags & TPUCI__B64_STRICT) && len % 4 != 0) return -1;
  /* libcrypto skips white space and takes '=' anywhere: checked here. */
  for (i = 0; i < n; i++)
    if (!tpuci__b64_ok(s[i], flags)) return -1;
  /* The standard alphabet, padded to whole groups. */
  pad = (4 - n % 4) % 4;
  norm = tpuci__malloc(n + pad + 1);
  for (i = 0; i < n; i++) norm[i] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : (unsigned char) s[i];
  memset(norm + n, '=', pad);
  raw = tpuci__malloc((n + pad) / 4 * 3 + 1);
  got = EVP_DecodeBlock(raw, norm, (int) (n + pad));
  /* The padding's bytes come out as zeros: they go. */
  if (got >= 0) memcpy(out, raw, (size_t) got - pad);
  free(raw);
  free(norm);
  return got < 0 ? -1 : (long) ((size_t) got - pad);
}

int tpuci__base64_decode(const char *s, char **out, size_t *len) {
  size_t n = strlen(s);
  unsigned char *buf = tpuci__malloc(n / 4 * 3 + 3);
  long k = tpuci__base64_decode_to(s, n, 0, buf);
  if (k < 0) {
    free(buf);
    return -1;
  }
  buf[k] = '\0';
  *out = (char *) buf;
  *len = (size_t) k;
  return 0;
}
