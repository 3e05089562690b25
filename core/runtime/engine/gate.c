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
    unsigned long x = (unsigned long) time(NULL) * 2654435761u ^
                      (unsigned long) getpid() * 40503u ^ (unsigned long) clock();
    static unsigned long n;
    x ^= ++n * 0x9e3779b9u;
    b[0] = (unsigned char) x;
    b[1] = (unsigned char) (x >> 8);
    b[2] = (unsigned char) (x >> 16);
    b[3] = (unsigned char) (x >> 24);
  }
  return tpuci__printf("#tpuci-%02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
}

int tpuci__ctl_line(const char *key, const char *line, size_t len,
                    const char **rest, size_t *rest_len) {
  size_t k = strlen(key);
  if (len < k + 1 || memcmp(line, key, k) != 0 || line[k] != ' ') return 0;
  *rest = line + k + 1;
  *rest_len = len - k - 1;
  return 1;
}

/* The wait step. $K is the key, $P the names, $H this host's own, $G
 * tpuci's go; r() looks a name up with what the image has: getent
 * (glibc's or musl's resolver, as the job's own lookups), busybox's
 * nslookup, python3. A name that does not exist yet costs a DNS timeout
 * (docker's DNS on an internal network answers none: 5 s by default,
 * 20 s for glibc's retries), so the lookups get 1 s and one try
 * (RES_OPTIONS for glibc's; nslookup's -timeout and -retry when it takes
 * them, tried on the host's own name, which resolves) and run all at
 * once. The set of names still missing is said when it changes. Then it
 * waits for the go: a host whose peers all resolve may not start yet, or
 * a peer whose job ends at once would be gone from the names before a
 * slower host saw it. `sleep 0.1` is not POSIX (busybox and coreutils
 * take it), `sleep 1` is. */
static const char tpuci__gate_script[] =
    "o='timeout:1 attempts:1'\n"
    "if command -v getent >/dev/null 2>&1; then\n"
    "  r() { RES_OPTIONS=$o getent hosts \"$1\" >/dev/null 2>&1; }\n"
    "elif command -v nslookup >/dev/null 2>&1; then\n"
    "  o=; nslookup -timeout=1 -retry=1 \"$H\" >/dev/null 2>&1 && o='-timeout=1 -retry=1'\n"
    "  r() { nslookup $o \"$1\" >/dev/null 2>&1; }\n"
    "elif command -v python3 >/dev/null 2>&1; then\n"
    "  r() { RES_OPTIONS=$o python3 -c 'import socket, sys; socket.getaddrinfo(sys.argv[1], None)' \"$1\" >/dev/null 2>&1; }\n"
    "else echo \"$K gang none\" >&2; P=; G=; fi\n"
    "m=\n"
    "while [ -n \"$P\" ]; do\n"
    "  x=\" $(echo $(for n in $P; do { r \"$n\" || echo \"$n\"; } & done; wait)) \"\n"
    "  w=; for n in $P; do case $x in *\" $n \"*) w=\"$w $n\";; esac; done\n"
    "  [ -z \"$w\" ] && break\n"
    "  [ \"$w\" = \"$m\" ] || echo \"$K gang wait$w\" >&2\n"
    "  m=$w\n"
    "  sleep 0.1 2>/dev/null || sleep 1\n"
    "done\n"
    "if [ -n \"$G\" ]; then\n"
    "  echo \"$K gang ready\" >&2\n"
    "  until r \"$G\"; do sleep 0.1 2>/dev/null || sleep 1; done\n"
    "fi\n"
    "echo \"$K gang up\" >&2\n"
    "exec \"$@\"\n";

void tpuci__gate_go_argv(tpuci__strv_t *argv) {
  tpuci__strv_push(argv, "/bin/sh");
  tpuci__strv_push(argv, "-c");
  tpuci__strv_push(argv, "while :; do sleep 3600; done");
}

char *tpuci__gate_go_name(const char *key) {
  const char *hex = strrchr(key, '-');
  return tpuci__printf("tpuci-go-%s", hex ? hex + 1 : key);
}

void tpuci__gate_argv(const char *key, size_t nhosts, int host,
                      const tpuci__strv_t *argv, tpuci__strv_t *out) {
  tpuci__buf_t b;
  size_t i;
  char *go = tpuci__gate_go_name(key);
  tpuci__buf_init(&b);
  tpuci__buf_addf(&b, "K='%s' G='%s' H=" TPUCI__GANG_HOST_FMT " P='", key, go, host);
  free(go);
  for (i = 0; i < nhosts; i++)
    tpuci__buf_addf(&b, "%s" TPUCI__GANG_HOST_FMT, i ? " " : "", (int) i);
  tpuci__buf_adds(&b, "'\n");
  tpuci__buf_adds(&b, tpuci__gate_script);
  tpuci__strv_push(out, "/bin/sh");
  tpuci__strv_push(out, "-c");
  tpuci__strv_take(out, tpuci__buf_steal(&b));
  /* $0 of the script, as `ps` shows it until the exec. */
  tpuci__strv_push(out, "tpuci-gang");
  for (i = 0; argv != NULL && i < argv->len; i++) tpuci__strv_push(out, argv->items[i]);
}

tpuci__gate_say_t tpuci__gate_parse(const char *rest, size_t len, char **names) {
  static const char wait[] = "gang wait ";
  *names = NULL;
  if (len == 7 && memcmp(rest, "gang up", 7) == 0) return TPUCI__SAY_UP;
  if (len == 9 && memcmp(rest, "gang none", 9) == 0) return TPUCI__SAY_NONE;
  if (len == 10 && memcmp(rest, "gang ready", 10) == 0) return TPUCI__SAY_READY;
  if (len > sizeof(wait) - 1 && memcmp(rest, wait, sizeof(wait) - 1) == 0) {
    *names = tpuci__strndup(rest + sizeof(wait) - 1, len - (sizeof(wait) - 1));
    return TPUCI__SAY_WAIT;
  }
  return TPUCI__SAY_OTHER;
}

tpuci__gate_state_t tpuci__gate_line(tpuci__attempt_t *a, const char *host,
                                     const char *rest, size_t len, char **waiting) {
  char *note;
  switch (tpuci__gate_parse(rest, len, waiting)) {
    case TPUCI__SAY_WAIT: return TPUCI__GATE_WAITING;
    case TPUCI__SAY_READY: return TPUCI__GATE_READY;
    case TPUCI__SAY_UP: return TPUCI__GATE_STARTED;
    case TPUCI__SAY_NONE: break;
    default: return TPUCI__GATE_SILENT;
  }
  note = tpuci__printf("%s: the image has none of getent, nslookup and python3, "
                       "so the gang's start barrier cannot look its peers' names "
                       "up: its command starts at once (docs/spec.md, "
                       "start_timeout)", host);
  tpuci__attempt_message(a, note);
  free(note);
  return TPUCI__GATE_SILENT;
}
