/* The commit a folder's git repository is at, and the repository's
 * folder (see report.h): read from the .git folder itself, no git
 * program needed. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/report.h"

/* A file's first line, or NULL. */
static char *tpuci__first_line(const char *path) {
  char *text = NULL;
  size_t len;
  if (tpuci__read_file_max(path, 64 * 1024, &text, &len) != 0) return NULL;
  text[strcspn(text, "\r\n")] = '\0';
  return text;
}

/* 40 (SHA-1) or 64 (SHA-256) hex digits. */
static int tpuci__is_sha(const char *s) {
  size_t n = strspn(s, "0123456789abcdef");
  return (n == 40 || n == 64) && s[n] == '\0';
}

/* `rel` against the folder `dir`, unless it is absolute. */
static char *tpuci__resolve(const char *dir, const char *rel) {
  return rel[0] == '/' ? tpuci__strdup(rel) : tpuci__printf("%s/%s", dir, rel);
}

/* The object a ref names: its loose file, else packed-refs. */
static char *tpuci__git_ref(const char *gitdir, const char *common, const char *ref) {
  const char *dirs[2];
  char *path, *sha = NULL, *packed = NULL, *line, *next;
  size_t k, len;
  dirs[0] = gitdir;
  dirs[1] = common;
  for (k = 0; k < 2 && sha == NULL; k++) {
    path = tpuci__printf("%s/%s", dirs[k], ref);
    sha = tpuci__first_line(path);
    free(path);
    if (sha && !tpuci__is_sha(sha)) {
      free(sha);
      sha = NULL;
    }
  }
  if (sha != NULL) return sha;
  path = tpuci__printf("%s/packed-refs", common);
  if (tpuci__read_file_max(path, 64u << 20, &packed, &len) == 0) {
    for (line = packed; line && *line && sha == NULL; line = next) {
      char *sp;
      next = strchr(line, '\n');
      if (next) *next++ = '\0';
      if ((sp = strchr(line, ' ')) == NULL || line[0] == '#' || line[0] == '^') continue;
      *sp = '\0';
      if (strcmp(sp + 1, ref) == 0 && tpuci__is_sha(line)) sha = tpuci__strdup(line);
    }
  }
  free(packed);
  free(path);
  return sha;
}

/* The nearest folder upwards from `dir` (absolute) with a .git (a
 * folder, or a file naming the git folder of a worktree or submodule):
 * that folder, and in *gitdir (may be NULL) its git folder; NULL when
 * there is none. New strings. */
static char *tpuci__git_find(const char *dir, char **gitdir) {
  char *cur;
  struct stat st;

  if (gitdir) *gitdir = NULL;
  if (dir == NULL || dir[0] != '/') return NULL;
  cur = tpuci__strdup(dir);
  for (;;) {
    char *dotgit = tpuci__printf("%s/.git", cur), *slash;
    if (stat(dotgit, &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        if (gitdir) *gitdir = tpuci__strdup(dotgit);
      } else if (gitdir) {
        char *line = tpuci__first_line(dotgit);
        if (line && strncmp(line, "gitdir: ", 8) == 0) *gitdir = tpuci__resolve(cur, line + 8);
        free(line);
      }
      free(dotgit);
      return cur;
    }
    free(dotgit);
    slash = strrchr(cur, '/');
    if (slash == NULL || slash == cur) break;
    *slash = '\0';
  }
  free(cur);
  return NULL;
}

char *tpuci__git_root(const char *dir) { return tpuci__git_find(dir, NULL); }

char *tpuci__git_commit(const char *dir) {
  char *gitdir = NULL, *common = NULL, *head = NULL, *sha = NULL;

  free(tpuci__git_find(dir, &gitdir));
  if (gitdir == NULL) return NULL;
  {
    char *path = tpuci__printf("%s/commondir", gitdir), *line = tpuci__first_line(path);
    common = line ? tpuci__resolve(gitdir, line) : tpuci__strdup(gitdir);
    free(line);
    free(path);
    path = tpuci__printf("%s/HEAD", gitdir);
    head = tpuci__first_line(path);
    free(path);
  }
  if (head && strncmp(head, "ref: ", 5) == 0) sha = tpuci__git_ref(gitdir, common, head + 5);
  else if (head && tpuci__is_sha(head)) sha = tpuci__strdup(head);
  free(head);
  free(gitdir);
  free(common);
  return sha;
}
