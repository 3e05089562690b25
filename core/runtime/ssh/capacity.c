/* The machines' failures, told apart from the job's (docs/ssh.md,
 * "Capacity"): a worker that refused or timed out at connect before the
 * gang started (no capacity), and, after a failed attempt, a fresh
 * describe or instances list (the hosts' `describe` command, else their
 * gcloud file read again) that says a worker was taken away (preempted). */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ssh/ssh.h"

/* How much the describe command may print (how long it may take:
 * tpuci__hostset_describe_ms). */
#define TPUCI__SSH_DESCRIBE_MAX (8u << 20)

int tpuci__ssh_connect_failed(const char *line) {
  static const char *const words[] = {"Connection refused",
                                      "Connection timed out",
                                      "Operation timed out",
                                      "No route to host",
                                      "Network is unreachable",
                                      "Host is down",
                                      NULL};
  size_t i;
  for (i = 0; line != NULL && words[i]; i++)
    if (strstr(line, words[i]) != NULL) return 1;
  return 0;
}

/* The host ssh connects to for worker i when its ssh_config says another
 * (`ssh -G`'s hostname), or NULL: an address, or no other. Blocks for
 * the ssh process (it reads its config, connects nowhere). */
static char *tpuci__ssh_config_host(const tpuci__hostset_t *hs, size_t i) {
  static const char *const opts[] = {"-G", NULL};
  const char *host = hs->hosts[i].host;
  unsigned char addr[16];
  tpuci__strv_t argv = {0};
  tpuci__buf_t out;
  char *found = NULL, *last = NULL;
  const char *p;
  if (inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1) return NULL;
  tpuci__buf_init(&out);
  tpuci__ssh_argv(hs, i, NULL, opts, &argv);
  if (tpuci__ssh_run_capture(&argv, &out, &last) == 0 && out.data != NULL) {
    for (p = out.data; p != NULL && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
      if (strncmp(p, "hostname ", 9) != 0) continue;
      found = tpuci__strndup(p + 9, strcspn(p + 9, "\r\n"));
      break;
    }
  }
  if (found != NULL && strcmp(found, host) == 0) {
    free(found);
    found = NULL;
  }
  free(last);
  tpuci__buf_free(&out);
  tpuci__strv_free(&argv);
  return found;
}

/* What a gcloud document says (c->outcome, c->why). Workers written by
 * an ssh_config host are also looked for by the host it gives. */
static void tpuci__ssh_capacity_judge(tpuci__ssh_capacity_t *c, const char *text, size_t len,
                                      const char *source) {
  char *why = NULL, **aliases = tpuci__calloc(c->hs->nhosts + 1, sizeof(*aliases));
  size_t i;
  int r;
  for (i = 0; i < c->hs->nhosts; i++) aliases[i] = tpuci__ssh_config_host(c->hs, i);
  r = tpuci__gcloud_check(c->hs, (const char *const *) aliases, text, len, &why);
  for (i = 0; i < c->hs->nhosts; i++) free(aliases[i]);
  free(aliases);
  if (r > 0) {
    c->outcome = TPUCI_OUTCOME_PREEMPTED;
    c->why = tpuci__printf("%s (%s)", why, source);
  } else if (r < 0) {
    c->note = tpuci__printf("%s: %s: cannot tell whether a worker was preempted", source, why);
  }
  free(why);
}

static void tpuci__ssh_describe_output(tpuci__sshproc_t *p, int stream, const char *buf, size_t n) {
  tpuci__ssh_capacity_t *c = p->data;
  if (stream != 1) return;
  if (c->out.len + n > TPUCI__SSH_DESCRIBE_MAX) {
    c->too_big = 1;
    return;
  }
  tpuci__buf_add(&c->out, buf, n);
}

static void tpuci__ssh_describe_done(tpuci__sshproc_t *p) {
  tpuci__ssh_capacity_t *c = p->data;
  if (p->spawn_error) {
    c->note = tpuci__printf("the hosts' describe command: cannot run sh: %s",
                            uv_strerror(p->spawn_error));
  } else if (p->killed) {
    char d[32];
    c->note =
        tpuci__printf("the hosts' describe command took over %s (describe_timeout) and "
                      "was killed: cannot tell whether a worker was preempted",
                      tpuci__duration_format(tpuci__hostset_describe_ms(c->hs), d, sizeof(d)));
  } else if (p->status != 0) {
    char *last = tpuci__sshproc_last_line(p);
    c->note = tpuci__printf("the hosts' describe command failed (%s): cannot tell whether a "
                            "worker was preempted",
                            last ? last : "no error output");
    free(last);
  } else if (c->too_big) {
    c->note = tpuci__strdup("the hosts' describe command printed over 8 MiB: cannot tell "
                            "whether a worker was preempted");
  } else {
    tpuci__ssh_capacity_judge(c, c->out.data ? c->out.data : "", c->out.len,
                              "the hosts' describe command");
  }
  tpuci__buf_free(&c->out);
  tpuci__buf_free(&p->tail);
  c->done(c);
}

int tpuci__ssh_capacity_check(tpuci__ssh_capacity_t *c, uv_loop_t *loop, const tpuci__hostset_t *hs,
                              const char *dir) {
  c->hs = hs;
  if (hs->describe != NULL) {
    tpuci__strv_t argv = {0};
    tpuci__strv_push(&argv, "/bin/sh");
    tpuci__strv_push(&argv, "-c");
    tpuci__strv_push(&argv, "cd \"$1\" && eval \"$2\"");
    tpuci__strv_push(&argv, "tpuci-describe");
    tpuci__strv_push(&argv, dir ? dir : ".");
    tpuci__strv_push(&argv, hs->describe);
    memset(&c->proc, 0, sizeof(c->proc));
    tpuci__buf_init(&c->out);
    c->proc.data = c;
    c->proc.on_output = tpuci__ssh_describe_output;
    c->proc.on_done = tpuci__ssh_describe_done;
    tpuci__sshproc_spawn(&c->proc, loop, &argv, 0);
    tpuci__sshproc_deadline(&c->proc, tpuci__hostset_describe_ms(hs));
    tpuci__strv_free(&argv);
    return 1;
  }
  if (hs->gcloud != NULL) {
    char *text = NULL;
    size_t len = 0;
    int r = tpuci__read_file_max(hs->gcloud, TPUCI__SSH_DESCRIBE_MAX, &text, &len);
    if (r != 0) {
      c->note = tpuci__printf("gcloud: cannot read '%s' again: %s: cannot tell whether a "
                              "worker was preempted",
                              hs->gcloud, uv_strerror(r));
    } else {
      char *source = tpuci__printf("gcloud: '%s'", hs->gcloud);
      tpuci__ssh_capacity_judge(c, text, len, source);
      free(source);
    }
    free(text);
  }
  return 0;
}

void tpuci__ssh_capacity_free(tpuci__ssh_capacity_t *c) {
  free(c->why);
  free(c->note);
  c->why = c->note = NULL;
}
