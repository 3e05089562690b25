/* Demultiplexing the engine's stdout/stderr stream. */
#include "runtime/engine/demux.h"

#include <string.h>

void tpuci__demux_init(tpuci__demux_t *d) { memset(d, 0, sizeof(*d)); }

static int tpuci__demux_header_ok(const unsigned char *h) {
  return h[0] <= 3 && h[1] == 0 && h[2] == 0 && h[3] == 0;
}

int tpuci__demux_feed(tpuci__demux_t *d, const char *buf, size_t len, tpuci__demux_cb cb,
                      void *data) {
  int switched = 0;

  while (len > 0) {
    if (d->raw) {
      cb(data, 1, buf, len);
      return switched;
    }
    if (d->remaining > 0) {
      size_t n = len < d->remaining ? len : d->remaining;
      cb(data, d->stream, buf, n);
      d->remaining -= (uint32_t) n;
      buf += n;
      len -= n;
      continue;
    }
    /* Collect a header. */
    {
      size_t n = 8 - d->hdr_len;
      if (n > len) n = len;
      memcpy(d->hdr + d->hdr_len, buf, n);
      d->hdr_len += n;
      buf += n;
      len -= n;
    }
    if (d->hdr_len < 8) break;
    if (!tpuci__demux_header_ok(d->hdr)) {
      /* Not a multiplexed stream: hand over what was taken for a header
       * and everything after it as stdout. */
      d->raw = 1;
      switched = 1;
      cb(data, 1, (const char *) d->hdr, 8);
      d->hdr_len = 0;
      continue;
    }
    d->stream = d->hdr[0] == 0 || d->hdr[0] == 1 ? 1 : 2;
    d->remaining = ((uint32_t) d->hdr[4] << 24) | ((uint32_t) d->hdr[5] << 16) |
                   ((uint32_t) d->hdr[6] << 8) | (uint32_t) d->hdr[7];
    d->hdr_len = 0;
    d->frames++;
  }
  return switched;
}

void tpuci__demux_flush(tpuci__demux_t *d, tpuci__demux_cb cb, void *data) {
  if (!d->raw && d->frames == 0 && d->hdr_len > 0) {
    d->raw = 1;
    cb(data, 1, (const char *) d->hdr, d->hdr_len);
    d->hdr_len = 0;
  }
}

int tpuci__demux_partial(const tpuci__demux_t *d) {
  return !d->raw && (d->hdr_len > 0 || d->remaining > 0);
}
