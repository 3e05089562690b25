/* One container's output on its way to its attempt, for both engine
 * drivers (a docker container's attach stream and logs, a swarm task's
 * logs): the engine's multiplexed stream (demux.h) cut into stdout and
 * stderr and passed on with tpuci__attempt_output. A gang's host also
 * writes its raw output to a log of its own and passes its lines on
 * whole, each with "[worker-<i>] " in front (gang.h), so that the lines
 * of concurrent hosts never mix. A second read of the same output (the
 * logs after a broken attach stream, a task's logs after its end) skips
 * what was passed on already. Lines that start with the attempt's key
 * (gate.h: tpuci's own steps in the container) are taken out of the
 * output, and of the host's own log, and given to the driver. */
#ifndef TPUCI_ENGINE_OUTPUT_H
#define TPUCI_ENGINE_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/engine/demux.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/gang.h"
#include "runtime/runtime.h"

typedef struct {
  tpuci__attempt_t *a;
  int gang_host; /* lines prefixed, raw output in its own log */
  tpuci__demux_t demux;
  tpuci__lines_t lines[2]; /* stdout, stderr */
  uint64_t seen[2];        /* bytes of stdout, stderr passed on */
  uint64_t skip[2];        /* of a second read: bytes already passed on */
  int log_fd;              /* a gang host's own log, or -1 */
  char *log_path;
  /* tpuci's own lines (tpuci__ctrout_ctl), per stream: "KEY " and the
   * driver's callback; the line start held while it may be one, or the
   * line that is one, until its newline. */
  char *ctl_key;
  char *ctl_mid; /* "KEY results ": ours within a line too */
  void (*ctl)(void *data, int stream, const char *line, size_t len);
  void *ctl_data;
  struct {
    int mid;      /* within a line that is not ours */
    int ours;     /* hold is one of ours (the key matched) */
    int hold_mid; /* hold started within a line (ctl_mid) */
    tpuci__buf_t hold;
  } cs[2];
} tpuci__ctrout_t;

/* The longest line of tpuci's own that is kept whole (longer ones are
 * cut there: what they say is then wrong, never passed on as output). */
#define TPUCI__CTL_LINE_MAX (1024 * 1024)

/* `host` is a gang host's name ("worker-1"), NULL for a lone container. */
void tpuci__ctrout_init(tpuci__ctrout_t *o, tpuci__attempt_t *a, const char *host);
/* From now on, the lines of either stream that start with `key` and a
 * space are not output: ctl(data, stream, rest, len) gets each, without
 * the key, its space and its newline. Within a line, "KEY results "
 * starts one too (the results block after a line left without its
 * newline): that line ends there (a newline is added). */
void tpuci__ctrout_ctl(tpuci__ctrout_t *o, const char *key,
                       void (*ctl)(void *data, int stream, const char *line, size_t len),
                       void *data);
/* Opens (truncates) the gang host's own log at `path` (taken), making the
 * attempt's folder first. A failure is told once (write_error) and the
 * host's lines still reach the attempt's log. */
void tpuci__ctrout_open_log(tpuci__ctrout_t *o, char *path);
/* A chunk of the multiplexed stream (a tpuci__http_chunk_cb). */
void tpuci__ctrout_chunk(void *o, const char *buf, size_t len);
/* At the end of a stream: what the demultiplexer and the line buffers
 * hold is passed on. */
void tpuci__ctrout_flush(tpuci__ctrout_t *o);
/* At the end of a read of the whole output (`res`: its answer):
 * flushed, and unless it succeeded or was cancelled the user is told
 * that the output of `kind` `name` may be incomplete: `how`. */
void tpuci__ctrout_read_end(tpuci__ctrout_t *o, const char *kind, const char *name, const char *how,
                            const tpuci__engine_res_t *res);
/* Before a second read of the whole output: skip what was passed on. */
void tpuci__ctrout_rewind(tpuci__ctrout_t *o);
void tpuci__ctrout_free(tpuci__ctrout_t *o);

#endif /* TPUCI_ENGINE_OUTPUT_H */
