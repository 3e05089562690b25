/* What the attempt core's state machines and its drivers' share
 * (unit.h): the check of a move against a machine's table, the
 * attempt's count of requests in flight, its first infra failure and its
 * messages. Below attempt.c and the drivers: it calls neither. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/unit/unit.h"

void tpuci__unit_bad_move(tpuci__unit_att_t *att, const char *what, const char *name,
                          const char *from, const char *to) {
  tpuci__unit_tell(att,
                   "tpuci: internal error: %s%s%s moved from %s to %s, which it "
                   "never should; please report it",
                   what, name ? " " : "", name ? name : "", from, to);
  assert(!"a state machine made a move its table does not allow");
}

void tpuci__unit_move(tpuci__unit_att_t *att, const tpuci__unit_machine_t *m, const char *name,
                      int from, int to) {
  if ((m->moves[from] >> to) & 1u) return;
  tpuci__unit_bad_move(att, m->what, name, m->names[from], m->names[to]);
}

void tpuci__unit_req_begin(tpuci__unit_att_t *att) { att->requests++; }

int tpuci__unit_req_end(tpuci__unit_att_t *att) {
  if (att->requests <= 0) {
    /* Never below 0: the phase would wait for it forever. */
    tpuci__unit_bad_move(att, "request count", NULL, "0", "-1");
    return 1;
  }
  return --att->requests == 0;
}

void tpuci__unit_infra(tpuci__unit_att_t *att, char *msg) {
  if (att->infra == NULL) att->infra = msg;
  else free(msg);
}

void tpuci__unit_tell(tpuci__unit_att_t *att, const char *fmt, ...) {
  va_list ap;
  char buf[1024];
  char *m = buf;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t) n >= sizeof(buf)) {
    m = tpuci__malloc((size_t) n + 1);
    va_start(ap, fmt);
    vsnprintf(m, (size_t) n + 1, fmt, ap);
    va_end(ap);
  }
  tpuci__attempt_message(att->a, m);
  if (m != buf) free(m);
}
