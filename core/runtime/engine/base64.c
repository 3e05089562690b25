/* base64 (base64.h). */
#include "runtime/engine/base64.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

static const char tpuci__b64_std[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char tpuci__b64_url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

char *tpuci__base64(const unsigned char *data, size_t len, int url) {
  const char *abc = url ? tpuci__b64_url : tpuci__b64_std;
  char *out = tpuci__malloc((len + 2) / 3 * 4 + 1), *o = out;
  size_t i;
  for (i = 0; i + 2 < len; i += 3) {
    unsigned v = (unsigned) data[i] << 16 | (unsigned) data[i + 1] << 8 | data[i + 2];
    *o++ = abc[v >> 18 & 63];
    *o++ = abc[v >> 12 & 63];
    *o++ = abc[v >> 6 & 63];
    *o++ = abc[v & 63];
  }
  if (i < len) {
    unsigned v = (unsigned) data[i] << 16 | (i + 1 < len ? (unsigned) data[i + 1] << 8 : 0);
    *o++ = abc[v >> 18 & 63];
    *o++ = abc[v >> 12 & 63];
    *o++ = i + 1 < len ? abc[v >> 6 & 63] : '=';
    *o++ = '=';
  }
  *o = '\0';
  return out;
}

/* A character's six bits, or -1. */
static int tpuci__b64_value(char c, int flags) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  if (flags & TPUCI__B64_STRICT) return -1;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

long tpuci__base64_decode_to(const char *s, size_t len, int flags, unsigned char *out) {
  size_t n = len, i, k = 0;
  unsigned acc = 0;
  int bits = 0;
  while (n > 0 && s[n - 1] == '=') n--;
  if (len - n > 2 || n % 4 == 1) return -1;
  if ((flags & TPUCI__B64_STRICT) && len % 4 != 0) return -1;
  for (i = 0; i < n; i++) {
    int v = tpuci__b64_value(s[i], flags);
    if (v < 0) return -1;
    acc = (acc << 6 | (unsigned) v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[k++] = (unsigned char) (acc >> bits & 0xff);
    }
  }
  return (long) k;
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
