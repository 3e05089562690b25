/* `tpuci init`: a starting spec for the project in the current folder
 * (tpuci_init_spec), written to tpuci.lua (or --output FILE, or stdout),
 * never over an existing file unless --force. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "console.h"
#include "usage.h"
#include "tpuci.h"

enum { OPT_FORCE = 256, OPT_OUTPUT, OPT_STDOUT };

/* The relative path from folder `base` to folder `target` (both absolute
 * and resolved): "." when they are one, else "../.." and names. A new
 * string. */
static char *relative_path(const char *target, const char *base) {
  size_t common = 0, i, len;
  char *out, *p;
  /* The longest common prefix that ends at a '/' (or the end) of both. */
  for (i = 0;; i++) {
    int tend = target[i] == '\0' || target[i] == '/', bend = base[i] == '\0' || base[i] == '/';
    if (tend && bend) common = i;
    if (target[i] != base[i] || target[i] == '\0') break;
  }
  len = strlen(target) + 3 * strlen(base) + 2;
  out = p = malloc(len);
  if (out == NULL) return NULL;
  *p = '\0';
  for (i = common; base[i]; i++)
    if (base[i] == '/' && base[i + 1] != '\0') p += sprintf(p, "%s..", p == out ? "" : "/");
  if (target[common] == '/' && target[common + 1] != '\0')
    p += sprintf(p, "%s%s", p == out ? "" : "/", target + common + 1);
  if (p == out) strcpy(out, ".");
  return out;
}

/* The project (the current folder) as a spec written to `output` names
 * it: 0 and *project, or the exit code of a folder that is not there. */
static int project_from(const char *output, char **project) {
  char here[PATH_MAX], there[PATH_MAX], *dir = strdup(output), *slash;
  int ok;
  if (dir == NULL) return EXIT_USAGE;
  slash = strrchr(dir, '/');
  if (slash == dir) slash[1] = '\0';
  else if (slash != NULL) *slash = '\0';
  ok = realpath(".", here) != NULL && realpath(slash ? dir : ".", there) != NULL;
  if (!ok) {
    fprintf(stderr, "tpuci init: %s: the folder of --output is not there\n",
            tpuci_console__safe(output, 0));
    free(dir);
    return EXIT_USAGE;
  }
  free(dir);
  *project = relative_path(here, there);
  return *project ? 0 : EXIT_USAGE;
}

/* Writes text to path: a new file (O_EXCL, so a file made since the
 * check is not overwritten), or with force through a temporary file
 * renamed over it. 0, or -1 with errno. */
static int write_spec(const char *path, const char *text, int force) {
  size_t len = strlen(text), done = 0;
  char tmp[PATH_MAX + 32];
  const char *target = path;
  int fd, e;
  if (force) {
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long) getpid());
    target = tmp;
  }
  fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return -1;
  while (done < len) {
    ssize_t n = write(fd, text + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    done += (size_t) n;
  }
  e = errno;
  if (close(fd) != 0 && done == len) e = errno, done = 0;
  if (done == len && (!force || rename(tmp, path) == 0)) return 0;
  if (done == len) e = errno;
  unlink(target);
  errno = e;
  return -1;
}

int tpuci_cli_init(int argc, char **argv) {
  static const struct option longopts[] = {{"force", no_argument, NULL, OPT_FORCE},
                                           {"output", required_argument, NULL, OPT_OUTPUT},
                                           {"stdout", no_argument, NULL, OPT_STDOUT},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  tpuci_init_options_t io;
  tpuci_ctx_t *ctx;
  const char *output = "tpuci.lua";
  char *text = NULL, *message = NULL, *project = NULL;
  struct stat st;
  int c, r, force = 0, to_stdout = 0, named = 0;

  tpuci_init_options_init(&io);
  optind = 1;
  while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
    switch (c) {
      case OPT_FORCE: force = 1; break;
      case OPT_OUTPUT:
        output = optarg;
        named = 1;
        break;
      case OPT_STDOUT: to_stdout = 1; break;
      case 'h': return tpuci_cli_help("init", stdout);
      default: return tpuci_cli_usage_error("init", "bad option");
    }
  }
  if (optind < argc) return tpuci_cli_usage_error("init", "too many arguments");
  if (to_stdout && (named || force))
    return tpuci_cli_usage_error("init", "--stdout writes no file: not with --output or --force");
  if (*output == '\0') return tpuci_cli_usage_error("init", "--output needs a file name");
  if (!to_stdout && !force && lstat(output, &st) == 0) {
    fprintf(stderr,
            "tpuci init: %s exists; --force overwrites it, --output FILE writes another "
            "file, --stdout prints the spec\n",
            tpuci_console__safe(output, 0));
    return EXIT_USAGE;
  }
  if (!to_stdout && (r = project_from(output, &project)) != 0) return r;
  io.project = project;
  io.spec_name = to_stdout ? "tpuci.lua" : output;
  if (tpuci_ctx_new(&ctx, NULL) != 0) {
    free(project);
    return EXIT_USAGE;
  }
  r = tpuci_init_spec(ctx, &io, &text, &message);
  free(project);
  if (r != 0) {
    fprintf(stderr, "tpuci init: %s\n", tpuci_console__safe(tpuci_last_error(ctx), 0));
    tpuci_ctx_free(ctx);
    return EXIT_USAGE;
  }
  tpuci_ctx_free(ctx);
  if (to_stdout) {
    fputs(text, stdout);
    fprintf(stderr, "tpuci init: a spec %s\n", tpuci_console__safe(message, 0));
  } else if (write_spec(output, text, force) != 0) {
    int e = errno;
    fprintf(stderr, "tpuci init: %s: %s\n", tpuci_console__safe(output, 0),
            e == EEXIST ? "it exists (made meanwhile); --force overwrites it" : strerror(e));
    r = e == EEXIST ? EXIT_USAGE : EXIT_ENV;
  } else {
    printf("tpuci init: wrote %s %s\n", tpuci_console__safe(output, 0),
           tpuci_console__safe(message, 0));
    printf("next: read it, build the image it names, then `tpuci plan %s` and `tpuci run %s`\n",
           tpuci_console__safe(output, 0), tpuci_console__safe(output, 0));
  }
  tpuci_free(text);
  tpuci_free(message);
  return r;
}
