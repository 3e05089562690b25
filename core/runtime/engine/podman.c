/* Podman's Docker-compatible service: what differs (podman.h). */
#define _GNU_SOURCE /* struct ucred */
#include "runtime/engine/podman.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/util.h"

/* <linux/capability.h>'s CAP_SYS_RESOURCE. */
#define TPUCI__CAP_SYS_RESOURCE 24

int tpuci__podman_detect(json_t *version, int *major, int *minor) {
  json_t *comps = json_object_get(version, "Components");
  json_t *c;
  size_t i;
  *major = *minor = 0;
  json_array_foreach(comps, i, c) {
    const char *name = json_string_value(json_object_get(c, "Name"));
    const char *ver = json_string_value(json_object_get(c, "Version"));
    if (name == NULL || strcmp(name, "Podman Engine") != 0) continue;
    if (ver == NULL) ver = json_string_value(json_object_get(version, "Version"));
    if (ver != NULL && sscanf(ver, "%d.%d", major, minor) != 2) *major = *minor = 0;
    return 1;
  }
  return 0;
}

/* The hard limit (the second number) of the line of /proc/<pid>/limits
 * that starts with `name`. */
static int tpuci__limit_line(const char *text, const char *name, unsigned long long *out) {
  const char *p = text;
  size_t n = strlen(name);
  while (p != NULL && *p) {
    if (strncmp(p, name, n) == 0 && (p[n] == ' ' || p[n] == '\t')) {
      char soft[32], hard[32];
      char *end;
      if (sscanf(p + n, "%31s %31s", soft, hard) != 2) return -1;
      if (strcmp(hard, "unlimited") == 0) {
        *out = ULLONG_MAX;
        return 0;
      }
      errno = 0;
      *out = strtoull(hard, &end, 10);
      return errno != 0 || *end != '\0' || end == hard ? -1 : 0;
    }
    p = strchr(p, '\n');
    if (p != NULL) p++;
  }
  return -1;
}

int tpuci__proc_hard_limits(const char *text, unsigned long long *nofile,
                            unsigned long long *nproc) {
  if (tpuci__limit_line(text, "Max open files", nofile) != 0) return -1;
  if (tpuci__limit_line(text, "Max processes", nproc) != 0) return -1;
  return 0;
}

int tpuci__proc_has_cap(const char *status, int cap) {
  const char *p = status;
  unsigned long long mask;
  char *end;
  while (p != NULL && strncmp(p, "CapEff:", 7) != 0) {
    p = strchr(p, '\n');
    if (p != NULL) p++;
  }
  if (p == NULL || cap < 0 || cap > 63) return -1;
  p += 7;
  errno = 0;
  mask = strtoull(p, &end, 16);
  if (errno != 0 || end == p) return -1;
  return (mask >> cap) & 1u ? 1 : 0;
}

void tpuci__podman_limits_decide(tpuci__podman_limits_t *l) {
  l->needed = l->known && l->uid == 0 && !l->sys_resource &&
              (l->nofile < TPUCI__PODMAN_RLIMIT_DEFAULT || l->nproc < TPUCI__PODMAN_RLIMIT_DEFAULT);
}

void tpuci__podman_probe(const char *unix_path, tpuci__podman_limits_t *out) {
  struct sockaddr_un sa;
  struct ucred cred;
  socklen_t len = sizeof(cred);
  char path[64];
  char *text = NULL;
  size_t n;
  int fd, ok;

  memset(out, 0, sizeof(*out));
  if (unix_path == NULL || strlen(unix_path) >= sizeof(sa.sun_path)) return;
  memset(&sa, 0, sizeof(sa));
  sa.sun_family = AF_UNIX;
  memcpy(sa.sun_path, unix_path, strlen(unix_path) + 1);
  /* Non-blocking: a full backlog is EAGAIN, not a wait. */
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return;
  ok = connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0 &&
       getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0;
  close(fd);
  if (!ok) return;
  out->pid = (long) cred.pid;
  out->uid = (long) cred.uid;

  snprintf(path, sizeof(path), "/proc/%ld/limits", out->pid);
  if (tpuci__read_file_max(path, 65536, &text, &n) != 0) return;
  ok = tpuci__proc_hard_limits(text, &out->nofile, &out->nproc) == 0;
  free(text);
  text = NULL;
  if (!ok) return;
  snprintf(path, sizeof(path), "/proc/%ld/status", out->pid);
  if (tpuci__read_file_max(path, 65536, &text, &n) != 0) return;
  ok = tpuci__proc_has_cap(text, TPUCI__CAP_SYS_RESOURCE);
  free(text);
  if (ok < 0) return;
  out->sys_resource = ok;
  out->known = 1;
  tpuci__podman_limits_decide(out);
}

static unsigned long long tpuci__cap_default(unsigned long long v) {
  return v < TPUCI__PODMAN_RLIMIT_DEFAULT ? v : TPUCI__PODMAN_RLIMIT_DEFAULT;
}

/* Appends {name, v, v} to the list unless it has an entry for name. */
static void tpuci__ulimit_default(json_t *list, const char *name, json_int_t v) {
  size_t i;
  json_t *u;
  json_array_foreach(list, i, u) {
    const char *have = json_string_value(json_object_get(u, "Name"));
    if (have != NULL && strcmp(have, name) == 0) return;
  }
  json_array_append_new(list, json_pack("{s:s, s:I, s:I}", "Name", name, "Soft", v, "Hard", v));
}

void tpuci__podman_body_limits(json_t *body, const tpuci__podman_limits_t *l) {
  json_t *hc = json_object_get(body, "HostConfig"), *list;
  if (!l->needed || !json_is_object(hc)) return;
  /* The job's own ulimits (HostConfig.Ulimits already) win. */
  list = json_object_get(hc, "Ulimits");
  if (!json_is_array(list)) {
    list = json_array();
    json_object_set_new(hc, "Ulimits", list);
  }
  tpuci__ulimit_default(list, "nofile", (json_int_t) tpuci__cap_default(l->nofile));
  tpuci__ulimit_default(list, "nproc", (json_int_t) tpuci__cap_default(l->nproc));
}

char *tpuci__podman_limits_text(const tpuci__podman_limits_t *l) {
  if (!l->known)
    return tpuci__strdup("cannot read the limits of the process serving the socket (a remote "
                         "engine, or one started by systemd's socket activation); if "
                         "containers fail to start with \"error setting rlimit\", set "
                         "default_ulimits in podman's containers.conf");
  if (l->needed)
    return tpuci__printf("the service (pid %ld, root, without CAP_SYS_RESOURCE) may give "
                         "containers at most %llu open files and %llu processes, less than "
                         "podman's default of %llu: tpuci asks for those limits "
                         "(HostConfig.Ulimits)",
                         l->pid, tpuci__cap_default(l->nofile), tpuci__cap_default(l->nproc),
                         TPUCI__PODMAN_RLIMIT_DEFAULT);
  return tpuci__printf("the service (pid %ld) can give containers podman's "
                       "default open-files and process limits",
                       l->pid);
}

int tpuci__podman_not_running(long status, const char *message) {
  return status == 500 && message != NULL &&
         strstr(message, "can only kill running containers") != NULL;
}

char *tpuci__podman_gpus_refusal(const tpuci__plan_t *plan) {
  size_t i;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *inst = &plan->instances[i];
    if (!inst->selected || inst->runtime != TPUCI__RUNTIME_DOCKER || inst->ctr.gpus == NULL)
      continue;
    return tpuci__printf("%s: job '%s': gpus: podman's Docker-compatible API ignores "
                         "device requests (containers/podman#22645), so the container "
                         "would run without its GPUs; run the job on Docker, or give the "
                         "GPU's device files with devices = { ... }",
                         inst->where ? inst->where : "spec", inst->job);
  }
  return NULL;
}

const char *tpuci__podman_hint(const char *msg) {
  if (msg == NULL) return NULL;
  if (strstr(msg, "container-init binary not found") != NULL)
    return "podman has no init binary, which tpuci asks for "
           "(HostConfig.Init): install catatonit and set init_path = "
           "\"/usr/bin/catatonit\" in the [engine] table of podman's "
           "containers.conf (Debian's podman 4.3 looks for "
           "/usr/libexec/podman/catatonit)";
  if (strstr(msg, "error setting rlimit") != NULL)
    return "podman could not give the container its open-files or process "
           "limits (it lacks CAP_SYS_RESOURCE); tpuci asks for the "
           "service's own limits when it can read them (see `tpuci "
           "doctor`), otherwise set default_ulimits in podman's "
           "containers.conf, e.g. default_ulimits = [\"nofile=1024:1024\", "
           "\"nproc=1000:1000\"]";
  return NULL;
}

char *tpuci__podman_oom_cause(const char *cause, uint64_t memory_bytes, const char *version) {
  return tpuci__printf("%s (SIGKILL under a memory limit of %.0f MiB: "
                       "probably out of memory, but podman %s does not "
                       "report OOM kills)",
                       cause ? cause : "exit 137", (double) memory_bytes / (1024.0 * 1024.0),
                       version ? version : "");
}
