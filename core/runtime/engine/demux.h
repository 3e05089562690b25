/* The Docker Engine's multiplexed stream format (logs and attach with TTY
 * off): frames of an 8-byte header {stream, 0, 0, 0, size (big-endian
 * uint32)} followed by `size` bytes. Stream 1 is stdout, 2 stderr, 0
 * stdin (never sent back in practice) and 3 the engine's own error text.
 * The demultiplexer is incremental: a chunk may end anywhere, inside a
 * header or a payload. Pure, no I/O. */
#ifndef TPUCI_ENGINE_DEMUX_H
#define TPUCI_ENGINE_DEMUX_H

#include <stddef.h>
#include <stdint.h>

/* Called for each piece of payload; `stream` is 1 (stdout) or 2 (stderr:
 * engine error frames are reported as stderr too). A frame's payload may
 * arrive in several calls. */
typedef void (*tpuci__demux_cb)(void *data, int stream, const char *buf, size_t len);

typedef struct {
  unsigned char hdr[8];
  size_t hdr_len;     /* bytes of the current header seen so far */
  uint32_t remaining; /* payload bytes left in the current frame */
  int stream;         /* of the current frame */
  int raw;            /* not multiplexed: everything is stdout */
  uint64_t frames;    /* headers parsed, for tests */
} tpuci__demux_t;

void tpuci__demux_init(tpuci__demux_t *d);

/* Feeds a chunk. A header that cannot be one (stream id > 3 or non-zero
 * padding) means the stream is not multiplexed (a TTY container): from
 * then on everything is passed through as stdout, and 1 is returned by
 * the call that found out. Returns 0 otherwise. */
int tpuci__demux_feed(tpuci__demux_t *d, const char *buf, size_t len, tpuci__demux_cb cb,
                      void *data);

/* At the end of the stream: a stream shorter than one header was not
 * multiplexed, so bytes held back for a header are passed on as stdout
 * when no frame was parsed yet. */
void tpuci__demux_flush(tpuci__demux_t *d, tpuci__demux_cb cb, void *data);

/* Whether the stream ended in the middle of a frame. */
int tpuci__demux_partial(const tpuci__demux_t *d);

#endif /* TPUCI_ENGINE_DEMUX_H */
