/* `hosts` declarations: the machines a gang reaches over SSH, as the
 * plan keeps them and `tpuci plan` shows them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "plan/plan.h"
#include "plan/host_env.h"

char *tpuci__ssh_host_text(const tpuci__ssh_host_t *h) {
  tpuci__buf_t b;
  int v6 = strchr(h->host, ':') != NULL;
  tpuci__buf_init(&b);
  if (h->user) tpuci__buf_addf(&b, "%s@", h->user);
  if (h->port > 0 && v6) tpuci__buf_addf(&b, "[%s]:%d", h->host, h->port);
  else if (h->port > 0) tpuci__buf_addf(&b, "%s:%d", h->host, h->port);
  else tpuci__buf_adds(&b, h->host);
  return tpuci__buf_steal(&b);
}

void tpuci__hostset_free(tpuci__hostset_t *hs) {
  size_t i;
  free(hs->name);
  free(hs->where);
  free(hs->ssh_config);
  free(hs->gcloud);
  free(hs->match);
  free(hs->label);
  free(hs->describe);
  for (i = 0; i < hs->nhosts; i++) {
    free(hs->hosts[i].user);
    free(hs->hosts[i].host);
  }
  free(hs->hosts);
  memset(hs, 0, sizeof(*hs));
}

static json_t *tpuci__json_str_or_null(const char *s) { return s ? json_string(s) : json_null(); }

uint64_t tpuci__hostset_describe_ms(const tpuci__hostset_t *hs) {
  return hs->describe_timeout_ms > 0 ? hs->describe_timeout_ms : 60000;
}

json_t *tpuci__hostset_json(const tpuci__hostset_t *hs) {
  json_t *o = json_object(), *a = json_array();
  size_t i;
  json_object_set_new(o, "name", json_string(hs->name));
  json_object_set_new(o, "where", json_string(hs->where));
  json_object_set_new(o, "ssh_config", tpuci__json_str_or_null(hs->ssh_config));
  json_object_set_new(o, "gcloud", tpuci__json_str_or_null(hs->gcloud));
  if (hs->match) json_object_set_new(o, "instances", json_string(hs->match));
  if (hs->label) json_object_set_new(o, "label", json_string(hs->label));
  json_object_set_new(o, "describe", tpuci__json_str_or_null(hs->describe));
  json_object_set_new(o, "describe_timeout_ms",
                      json_integer((json_int_t) tpuci__hostset_describe_ms(hs)));
  for (i = 0; i < hs->nhosts; i++) {
    json_t *w = json_object();
    char *t = tpuci__ssh_host_text(&hs->hosts[i]);
    json_object_set_new(w, "target", json_string(t));
    json_object_set_new(w, "user", tpuci__json_str_or_null(hs->hosts[i].user));
    json_object_set_new(w, "host", json_string(hs->hosts[i].host));
    json_object_set_new(w, "port",
                        hs->hosts[i].port > 0 ? json_integer(hs->hosts[i].port) : json_null());
    json_array_append_new(a, w);
    free(t);
  }
  json_object_set_new(o, "workers", a);
  return o;
}

void tpuci__hostset_text(const tpuci__hostset_t *hs, tpuci__buf_t *b) {
  size_t i;
  tpuci__buf_addf(b, "  ssh:      hosts '%s' (%s)%s%s\n", hs->name, hs->where,
                  hs->gcloud ? ", read from " : "", hs->gcloud ? hs->gcloud : "");
  if (hs->ssh_config) tpuci__buf_addf(b, "  ssh -F:   %s\n", hs->ssh_config);
  if (hs->describe) tpuci__buf_addf(b, "  describe: %s (after a failed attempt)\n", hs->describe);
  for (i = 0; i < hs->nhosts; i++) {
    char *t = tpuci__ssh_host_text(&hs->hosts[i]);
    tpuci__buf_addf(b, "  worker:   " TPUCI__GANG_HOST_FMT " on %s\n", (int) i, t);
    free(t);
  }
}
