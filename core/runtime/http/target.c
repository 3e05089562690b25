/* Where a server is (target.h): copies and names. */
#include "runtime/http/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void tpuci__http_target_copy(tpuci__http_target_t *dst, const tpuci__http_target_t *src) {
  *dst = *src;
  dst->url_base = tpuci__strdup(src->url_base);
  dst->unix_path = tpuci__strdup(src->unix_path);
  dst->display = tpuci__strdup(src->display);
  dst->ca_file = tpuci__strdup(src->ca_file);
  dst->cert_file = tpuci__strdup(src->cert_file);
  dst->key_file = tpuci__strdup(src->key_file);
  dst->ssh_host = tpuci__strdup(src->ssh_host);
  dst->ssh_user = tpuci__strdup(src->ssh_user);
  dst->ssh_config = tpuci__strdup(src->ssh_config);
}

void tpuci__http_target_free(tpuci__http_target_t *t) {
  free(t->url_base);
  free(t->unix_path);
  free(t->display);
  free(t->ca_file);
  free(t->cert_file);
  free(t->key_file);
  free(t->ssh_host);
  free(t->ssh_user);
  free(t->ssh_config);
  memset(t, 0, sizeof(*t));
}

char *tpuci__http_target_ssh(const tpuci__http_target_t *t) {
  int v6 = strchr(t->ssh_host, ':') != NULL;
  char port[16] = "";
  if (t->ssh_port > 0) snprintf(port, sizeof(port), ":%d", t->ssh_port);
  return tpuci__printf("ssh %s%s%s%s%s%s", t->ssh_user ? t->ssh_user : "", t->ssh_user ? "@" : "",
                       v6 && *port ? "[" : "", t->ssh_host, v6 && *port ? "]" : "", port);
}
