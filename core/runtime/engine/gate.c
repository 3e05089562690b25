/* A gang's start barrier in its containers (gate.h). */
#include "runtime/engine/gate.h"
#include "plan/host_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

char *tpuci__ctl_key(void) {
  unsigned char b[4];
  if (uv_random(NULL, NULL, b, sizeof(b), 0, NULL) != 0) {
    /* No entropy source: the clock and the pid still differ per attempt. */
    unsigned long x = (unsigned long) time(NULL) * 2654435761u ^ (unsigned long) getpid() * 40503u ^
                      (unsigned long) clock();
    static unsigned long n;
    x ^= ++n * 0x9e3779b9u;
    b[0] = (unsigned char) x;
    b[1] = (unsigned char) (x >> 8);
    b[2] = (unsigned char) (x >> 16);
    b[3] = (unsigned char) (x >> 24);
  }
  return tpuci__printf("#tpuci-%02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
}

int tpuci__ctl_line(const char *key, const char *line, size_t len, const char **rest,
                    size_t *rest_len) {
  size_t k = strlen(key);
  if (len < k + 1 || memcmp(line, key, k) != 0 || line[k] != ' ') return 0;
  *rest = line + k + 1;
  *rest_len = len - k - 1;
  return 1;
}

/* The wait step, core/runtime/engine/gate.sh (embedded at build time
 * without its comment lines, cmake/embed_sh.cmake): $K is the key, $P
 * the names, $H this host's own, $G tpuci's go, $E its end (empty: no
 * end step), set in front of it by tpuci__gate_argv. */
extern const char tpuci__sh_gate[];

void tpuci__gate_go_argv(tpuci__strv_t *argv) {
  tpuci__strv_push(argv, "/bin/sh");
  tpuci__strv_push(argv, "-c");
  tpuci__strv_push(argv, "while :; do sleep 3600; done");
}

char *tpuci__gate_name(const char *key, tpuci__gate_sign_t sign) {
  const char *hex = strrchr(key, '-');
  return tpuci__printf("tpuci-%s-%s", sign == TPUCI__GATE_END ? "end" : "go", hex ? hex + 1 : key);
}

void tpuci__gate_argv(const tpuci__gang_member_t *m, uint32_t peer_exits, const tpuci__strv_t *argv,
                      tpuci__strv_t *out) {
  const char *key = m->gate_key;
  tpuci__buf_t b;
  int i, n;
  char *go = tpuci__gate_name(key, TPUCI__GATE_GO);
  /* No end name: gate.sh execs the command. */
  char *e = m->gate_end ? tpuci__gate_name(key, TPUCI__GATE_END) : tpuci__strdup("");
  tpuci__buf_init(&b);
  tpuci__buf_addf(&b, "K='%s' G='%s' E='%s' O='0", key, go, e);
  free(go);
  free(e);
  for (n = 1; n < 32; n++)
    if ((peer_exits >> n) & 1u) tpuci__buf_addf(&b, " %d", n);
  tpuci__buf_addf(&b, "' H=" TPUCI__GANG_HOST_FMT " P='", m->host);
  for (i = 0; i < m->nhosts; i++) tpuci__buf_addf(&b, "%s" TPUCI__GANG_HOST_FMT, i ? " " : "", i);
  tpuci__buf_adds(&b, "'\n");
  tpuci__buf_adds(&b, tpuci__sh_gate);
  tpuci__strv_push(out, "/bin/sh");
  tpuci__strv_push(out, "-c");
  tpuci__strv_take(out, tpuci__buf_steal(&b));
  /* $0 of the script, as `ps` shows it (the command is its child). */
  tpuci__strv_push(out, "tpuci-gang");
  for (i = 0; argv != NULL && (size_t) i < argv->len; i++) tpuci__strv_push(out, argv->items[i]);
}

/* "gang done N", N a status 0..255. */
static int tpuci__gate_done(const char *rest, size_t len, long *status) {
  static const char done[] = "gang done ";
  size_t i, k = sizeof(done) - 1;
  long v = 0;
  if (len <= k || len > k + 3 || memcmp(rest, done, k) != 0) return 0;
  for (i = k; i < len; i++) {
    if (rest[i] < '0' || rest[i] > '9') return 0;
    v = v * 10 + (rest[i] - '0');
  }
  if (v > 255) return 0;
  *status = v;
  return 1;
}

tpuci__gate_say_t tpuci__gate_parse(const char *rest, size_t len, char **names, long *status) {
  static const char wait[] = "gang wait ";
  *names = NULL;
  *status = 0;
  if (tpuci__gate_done(rest, len, status)) return TPUCI__SAY_DONE;
  if (len == 7 && memcmp(rest, "gang up", 7) == 0) return TPUCI__SAY_UP;
  if (len == 9 && memcmp(rest, "gang none", 9) == 0) return TPUCI__SAY_NONE;
  if (len == 10 && memcmp(rest, "gang ready", 10) == 0) return TPUCI__SAY_READY;
  if (len > sizeof(wait) - 1 && memcmp(rest, wait, sizeof(wait) - 1) == 0) {
    *names = tpuci__strndup(rest + sizeof(wait) - 1, len - (sizeof(wait) - 1));
    return TPUCI__SAY_WAIT;
  }
  return TPUCI__SAY_OTHER;
}

tpuci__gate_state_t tpuci__gate_line(tpuci__attempt_t *a, const char *host, const char *rest,
                                     size_t len, char **waiting, long *status) {
  char *note;
  switch (tpuci__gate_parse(rest, len, waiting, status)) {
    case TPUCI__SAY_WAIT: return TPUCI__GATE_WAITING;
    case TPUCI__SAY_READY: return TPUCI__GATE_READY;
    case TPUCI__SAY_UP: return TPUCI__GATE_STARTED;
    case TPUCI__SAY_DONE: return TPUCI__GATE_DONE;
    case TPUCI__SAY_NONE: break;
    default: return TPUCI__GATE_SILENT;
  }
  note = tpuci__printf("%s: the image has none of getent, nslookup and python3, "
                       "so the gang's start barrier cannot look its peers' names "
                       "up: its command starts at once (docs/spec.md, "
                       "start_timeout)",
                       host);
  tpuci__attempt_message(a, note);
  free(note);
  return TPUCI__GATE_SILENT;
}
