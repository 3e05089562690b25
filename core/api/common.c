/* What every file of core/api/ uses, calling no other file of it: the
 * context's last error, a message for the host, the struct convention's
 * copies, instance i of a run's record; and the public
 * tpuci_last_error(), tpuci_run_options_init() and tpuci_free(). */
#include <stdlib.h>
#include <string.h>

#include "api/ctx.h"

tpuci__kind_run_t *tpuci__run_kind(const tpuci__run_t *run, const tpuci__kind_t *ops) {
  size_t k;
  for (k = 0; k < TPUCI__NKINDS; k++)
    if (run->kinds[k].ops == ops) return run->kinds[k].run;
  return NULL;
}

int tpuci__fail(tpuci_ctx_t *ctx, tpuci__err_t *e) {
  int code = e->code;
  tpuci__err_clear(&ctx->err);
  ctx->err = *e;
  e->msg = NULL;
  return code;
}

void tpuci__message(tpuci__run_t *run, const char *msg) {
  tpuci_event_t ev;
  if (run->hold) {
    tpuci__strv_push(&run->held, msg);
    return;
  }
  memset(&ev, 0, sizeof(ev));
  ev.size = sizeof(ev);
  ev.type = TPUCI_EVENT_MESSAGE;
  ev.message = msg;
  if (run->ropts.on_event) run->ropts.on_event(run, &ev, run->ropts.userdata);
}

json_t *tpuci__record_instance(const tpuci__run_t *run, size_t i) {
  json_t *insts;
  if (run == NULL || !run->plan_owned || run->running || run->report == NULL) return NULL;
  insts = json_object_get(run->report, "instances");
  if (json_array_size(insts) != run->nresults) return NULL;
  return json_array_get(insts, i);
}

void tpuci_run_options_init(tpuci_run_options_t *opts) {
  memset(opts, 0, sizeof(*opts));
  opts->size = sizeof(*opts);
}

const char *tpuci_last_error(const tpuci_ctx_t *ctx) {
  return ctx && ctx->err.msg ? ctx->err.msg : "";
}

void tpuci_free(void *p) { free(p); }

static size_t tpuci__struct_size(const void *p) {
  size_t size;
  memcpy(&size, p, sizeof(size));
  return size;
}

int tpuci__struct_in(void *dst, size_t dst_size, const void *src, size_t min) {
  size_t size = tpuci__struct_size(src);
  if (size < min) return TPUCI_EUSAGE;
  if (size > dst_size) size = dst_size;
  memcpy((char *) dst + sizeof(size_t), (const char *) src + sizeof(size_t), size - sizeof(size_t));
  memcpy(dst, &dst_size, sizeof(dst_size));
  return 0;
}

int tpuci__struct_out(void *out, const void *full, size_t full_size, size_t min) {
  size_t size = tpuci__struct_size(out);
  if (size < min) return TPUCI_EUSAGE;
  if (size > full_size) size = full_size;
  memcpy((char *) out + sizeof(size_t), (const char *) full + sizeof(size_t),
         size - sizeof(size_t));
  return 0;
}
