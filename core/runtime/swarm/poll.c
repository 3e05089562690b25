/* The swarm runtime driver's task poll: one GET /tasks for the services
 * of every running attempt, and one for the tasks of attempts whose
 * services were removed (a removed service's tasks can only be asked for
 * by id). What it says goes to the attempts (attempt.c). */
#include <stdlib.h>
#include <string.h>

#include "runtime/swarm/swarm.h"

static void tpuci__sw_poll_cb(uv_timer_t *t);

void tpuci__sw_poll_start(tpuci__sw_t *sw) {
  if (!sw->poll_init) {
    uv_timer_init(sw->e.loop, &sw->poll);
    sw->poll.data = sw;
    sw->poll_init = 1;
  }
  if (sw->polling > 0 || uv_is_active((uv_handle_t *) &sw->poll)) return;
  uv_timer_start(&sw->poll, tpuci__sw_poll_cb, TPUCI__SW_POLL_MS, 0);
}

static void tpuci__sw_poll_again(tpuci__sw_t *sw) {
  tpuci__unit_att_t *ua;
  if (sw->polling > 0) return;
  for (ua = sw->atts.atts; ua != NULL; ua = ua->next)
    if (tpuci__unit_polls(ua)) {
      tpuci__sw_poll_start(sw);
      return;
    }
  tpuci__sw_maybe_closed(&sw->e.rt);
}

/* The host whose service (by == 0) or task (by == 1) is `id`. */
static tpuci__sw_host_t *tpuci__sw_find(tpuci__sw_t *sw, const char *id, int by) {
  tpuci__unit_att_t *ua;
  size_t i;
  if (id == NULL) return NULL;
  for (ua = sw->atts.atts; ua != NULL; ua = ua->next)
    for (i = 0; i < ua->nunits; i++) {
      tpuci__sw_host_t *h = (tpuci__sw_host_t *) tpuci__unit_at(ua, i);
      const char *v = by == 0 ? h->id : h->task_id;
      if (v != NULL && strcmp(v, id) == 0) return h;
    }
  return NULL;
}

/* Which hosts a poll asks about. */
static int tpuci__sw_wants(const tpuci__sw_host_t *h, int by) {
  const tpuci__unit_att_t *att = h->u.att;
  if (by == 0)
    return att->phase == TPUCI__UP_RUN && h->id != NULL && !TPUCI__U_ENDED(&h->u) && !h->u.stopped;
  return att->phase == TPUCI__UP_GONE && h->task_id != NULL && h->id != NULL && !TPUCI__SW_WENT(h);
}

typedef struct {
  tpuci__sw_t *sw;
  int by;            /* 0: services (RUN), 1: tasks (GONE) */
  tpuci__strv_t ids; /* asked about */
} tpuci__sw_poll_t;

static void tpuci__sw_on_poll(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_poll_t *q = p;
  tpuci__sw_t *sw = q->sw;
  size_t i, k;
  json_t *o;

  sw->polling--;
  if (res->ok && json_is_array(res->json)) {
    int *seen = tpuci__calloc(q->ids.len + 1, sizeof(int));
    sw->poll_fails = 0;
    json_array_foreach(res->json, i, o) {
      tpuci__task_t t;
      tpuci__sw_host_t *h;
      tpuci__task_read(o, &t);
      for (k = 0; k < q->ids.len; k++) {
        const char *want = q->by == 0 ? t.service_id : t.id;
        if (want != NULL && strcmp(want, q->ids.items[k]) == 0) seen[k] = 1;
      }
      h = tpuci__sw_find(sw, q->by == 0 ? t.service_id : t.id, q->by);
      if (h != NULL && q->by == 0) tpuci__sw_on_task(h, &t);
    }
    if (q->by == 1) {
      /* Tasks no longer listed are gone; an attempt also checks its
       * deadline. */
      tpuci__unit_att_t *ua, *next;
      for (k = 0; k < q->ids.len; k++) {
        tpuci__sw_host_t *h;
        if (seen[k]) continue;
        h = tpuci__sw_find(sw, q->ids.items[k], 1);
        if (h != NULL) tpuci__sw_on_absent(h);
      }
      for (ua = sw->atts.atts; ua != NULL; ua = next) {
        next = ua->next;
        if (ua->phase == TPUCI__UP_GONE) tpuci__unit_step(ua);
      }
    }
    free(seen);
  } else if (res->error != UV_ECANCELED) {
    /* "service <id> not found": removed by someone else. */
    const char *m = res->message;
    tpuci__sw_host_t *h = NULL;
    if (q->by == 0 && res->status == 404 && strncmp(m, "service ", 8) == 0) {
      size_t n = strcspn(m + 8, " ");
      char *id = tpuci__strndup(m + 8, n);
      h = tpuci__sw_find(sw, id, 0);
      free(id);
    }
    if (h != NULL) {
      tpuci__sw_on_absent(h);
    } else if (++sw->poll_fails >= TPUCI__SW_POLL_FAILS) {
      tpuci__unit_att_t *ua, *next;
      sw->poll_fails = 0;
      for (ua = sw->atts.atts; ua != NULL; ua = next) {
        tpuci__sw_att_t *att = (tpuci__sw_att_t *) ua;
        next = ua->next;
        tpuci__sw_poll_lost(att, m);
      }
    }
  }
  tpuci__strv_free(&q->ids);
  free(q);
  if (!sw->e.closing || sw->atts.atts != NULL) tpuci__sw_poll_again(sw);
  else tpuci__sw_maybe_closed(&sw->e.rt);
}

static void tpuci__sw_poll_send(tpuci__sw_t *sw, int by) {
  tpuci__sw_poll_t *q = tpuci__calloc(1, sizeof(*q));
  tpuci__unit_att_t *ua;
  size_t i;
  q->sw = sw;
  q->by = by;
  for (ua = sw->atts.atts; ua != NULL; ua = ua->next)
    for (i = 0; i < ua->nunits; i++) {
      const tpuci__sw_host_t *h = (const tpuci__sw_host_t *) tpuci__unit_at(ua, i);
      if (tpuci__sw_wants(h, by)) tpuci__strv_push(&q->ids, by == 0 ? h->id : h->task_id);
    }
  if (q->ids.len == 0) {
    free(q);
    return;
  }
  sw->polling++;
  tpuci__sw_task_list(sw->e.eng, by == 0 ? "service" : "id", (const char *const *) q->ids.items,
                      q->ids.len, tpuci__sw_on_poll, q);
}

static void tpuci__sw_poll_cb(uv_timer_t *t) {
  tpuci__sw_t *sw = t->data;
  tpuci__unit_att_t *ua, *next;
  tpuci__sw_poll_send(sw, 0);
  tpuci__sw_poll_send(sw, 1);
  if (sw->polling > 0) return;
  /* Nothing to ask: attempts in GONE whose hosts need no asking move on. */
  for (ua = sw->atts.atts; ua != NULL; ua = next) {
    next = ua->next;
    if (ua->phase == TPUCI__UP_GONE) tpuci__unit_step(ua);
  }
  tpuci__sw_poll_again(sw);
}
