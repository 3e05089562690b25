/* Digests (util.h): the one SHA-256 of the core, OpenSSL's (libcrypto,
 * which curl's TLS links anyway), and bytes as hex. */
#include <openssl/evp.h>

#include "base/util.h"

void tpuci__hex(const unsigned char *d, size_t n, char *hex) {
  static const char digits[] = "0123456789abcdef";
  size_t i;
  for (i = 0; i < n; i++) {
    hex[2 * i] = digits[d[i] >> 4];
    hex[2 * i + 1] = digits[d[i] & 15];
  }
  hex[2 * n] = '\0';
}

void tpuci__sha256_hex(const void *data, size_t len, char hex[65]) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned dn = 0;
  EVP_Digest(data, len, d, &dn, EVP_sha256(), NULL);
  tpuci__hex(d, 32, hex);
}
