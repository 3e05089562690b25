/* Kubernetes names and label values (see pod.h), and spec text the
 * kubelet would expand. The rules are the API server's validation:
 * DNS-1123 labels and subdomains, DNS-1035 labels for Services,
 * qualified label values of at most 63 characters. */
#include "pod/pod.h"

#include <stdio.h>
#include <string.h>

#define TPUCI__K8S_HASH_LEN 8

uint32_t tpuci__k8s_hash(const char *a, const char *b) {
  uint32_t h = 2166136261u;
  const unsigned char *p;
  for (p = (const unsigned char *) (a ? a : ""); *p; p++) h = (h ^ *p) * 16777619u;
  h = (h ^ 0u) * 16777619u;
  for (p = (const unsigned char *) (b ? b : ""); *p; p++) h = (h ^ *p) * 16777619u;
  return h;
}

static int tpuci__k8s_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Appends the lower-cased [a-z0-9] runs of s to b, one '-' between runs,
 * while b is shorter than max. */
static void tpuci__k8s_slug(tpuci__buf_t *b, const char *s, size_t max) {
  int sep = 0;
  for (; s && *s && b->len < max; s++) {
    char c = *s;
    if (c >= 'A' && c <= 'Z') c = (char) (c - 'A' + 'a');
    if (!tpuci__k8s_alnum(c)) {
      sep = 1;
      continue;
    }
    if (sep && b->len > 0 && b->data[b->len - 1] != '-') {
      tpuci__buf_add(b, "-", 1);
      if (b->len >= max) break;
    }
    tpuci__buf_add(b, &c, 1);
    sep = 0;
  }
  while (b->len > 0 && b->data[b->len - 1] == '-') b->data[--b->len] = '\0';
}

char *tpuci__k8s_name(const char *run, const char *instance) {
  return tpuci__k8s_name_max(run, instance, TPUCI__K8S_NAME_MAX);
}

char *tpuci__k8s_name_max(const char *run, const char *instance, size_t longest) {
  /* Room for "-" and the hash. */
  const size_t max = longest - 1 - TPUCI__K8S_HASH_LEN;
  tpuci__buf_t b;
  tpuci__buf_init(&b);
  if (run && *run) {
    tpuci__k8s_slug(&b, run, max);
    if (b.len > 0 && b.len < max) tpuci__buf_add(&b, "-", 1);
  }
  tpuci__k8s_slug(&b, instance, max);
  if (b.len == 0 || !(b.data[0] >= 'a' && b.data[0] <= 'z')) {
    /* A Service name starts with a letter. */
    tpuci__buf_t p;
    tpuci__buf_init(&p);
    tpuci__buf_adds(&p, "tpuci");
    if (b.len > 0) {
      tpuci__buf_add(&p, "-", 1);
      tpuci__buf_add(&p, b.data, b.len < max - 6 ? b.len : max - 6);
      while (p.data[p.len - 1] == '-') p.data[--p.len] = '\0';
    }
    tpuci__buf_free(&b);
    b = p;
  }
  tpuci__buf_addf(&b, "-%08x", (unsigned) tpuci__k8s_hash(run, instance));
  return tpuci__buf_steal(&b);
}

int tpuci__k8s_label_value_valid(const char *s) {
  size_t n = strlen(s), i;
  if (n == 0) return 1;
  if (n > TPUCI__K8S_LABEL_MAX) return 0;
  if (!tpuci__k8s_alnum(s[0]) || !tpuci__k8s_alnum(s[n - 1])) return 0;
  for (i = 0; i < n; i++)
    if (!tpuci__k8s_alnum(s[i]) && !strchr("-_.", s[i])) return 0;
  return 1;
}

char *tpuci__k8s_label_value(const char *text) {
  const size_t max = TPUCI__K8S_LABEL_MAX - 1 - TPUCI__K8S_HASH_LEN;
  tpuci__buf_t b;
  const char *p;

  if (text == NULL) text = "";
  if (*text && tpuci__k8s_label_value_valid(text)) return tpuci__strdup(text);
  tpuci__buf_init(&b);
  for (p = text; *p && b.len < max; p++) {
    char c = *p;
    if (!tpuci__k8s_alnum(c) && !strchr("-_.", c)) c = '-';
    /* Start with a letter or digit; no runs of '-'. */
    if (!tpuci__k8s_alnum(c) && b.len == 0) continue;
    if (c == '-' && b.len > 0 && b.data[b.len - 1] == '-') continue;
    tpuci__buf_add(&b, &c, 1);
  }
  while (b.len > 0 && !tpuci__k8s_alnum(b.data[b.len - 1])) b.data[--b.len] = '\0';
  tpuci__buf_addf(&b, "%s%08x", b.len ? "-" : "", (unsigned) tpuci__k8s_hash(text, NULL));
  return tpuci__buf_steal(&b);
}

int tpuci__k8s_subdomain_valid(const char *s) {
  size_t n = strlen(s), i;
  if (n == 0 || n > 253) return 0;
  for (i = 0; i < n; i++) {
    char c = s[i];
    int an = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!an && c != '-' && c != '.') return 0;
    if ((i == 0 || i == n - 1) && !an) return 0;
  }
  return 1;
}

int tpuci__k8s_env_name_valid(const char *s) {
  size_t i;
  if (s == NULL || *s == '\0' || (s[0] >= '0' && s[0] <= '9')) return 0;
  for (i = 0; s[i]; i++)
    if (!tpuci__k8s_alnum(s[i]) && !strchr("-._", s[i])) return 0;
  return 1;
}

char *tpuci__quote_k8s(const char *s) {
  tpuci__buf_t b;
  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "");
  for (; *s; s++) {
    if (*s == '$' && (s[1] == '$' || s[1] == '(')) tpuci__buf_add(&b, "$", 1);
    tpuci__buf_add(&b, s, 1);
  }
  return tpuci__buf_steal(&b);
}
