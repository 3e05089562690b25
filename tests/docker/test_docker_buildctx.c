/* The build context archive (runtime/engine/buildctx.h) and its
 * .dockerignore patterns (dockerignore.h): the matcher as a table, then
 * real folders archived and read back, by a small tar reader here (which
 * checks every header's checksum) and by GNU tar for the long names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "runtime/engine/buildctx.h"
#include "runtime/engine/dockerignore.h"

/* The pure matcher. */

typedef struct {
  const char *patterns;
  const char *path;
  int excluded;
} match_case_t;

static const match_case_t match_cases[] = {
    {"", "a", 0},
    {"a", "a", 1},
    {"a", "b", 0},
    {"a", "a/b/c", 1}, /* a folder: everything below it */
    {"a", "b/a", 0},   /* anchored at the context */
    {"/a", "a", 1},
    {"./a/", "a/x", 1},
    {"a//b/../c/.", "a/c", 1},
    {"*.pyc", "x.pyc", 1},
    {"*.pyc", "d/x.pyc", 0}, /* '*' stops at '/' */
    {"**/*.pyc", "x.pyc", 1},
    {"**/*.pyc", "d/e/x.pyc", 1},
    {"**/__pycache__", "__pycache__/m.pyc", 1},
    {"**/__pycache__", "a/b/__pycache__/m.pyc", 1},
    {"**/__pycache__", "a/__pycache__x", 0},
    {"**", "anything/at/all", 1},
    {"a/**", "a/b/c", 1},
    {"a/**", "ab", 0},
    {"a/**/b", "a/b", 1},
    {"a/**/b", "a/x/y/b", 1},
    {"a/**/b", "a/xb", 0},
    {"*/temp*", "d/temporary.txt", 1},
    {"*/temp*", "temp", 0},
    {"temp?", "tempa", 1},
    {"temp?", "temp", 0},
    {"temp?", "temp/", 0},
    {"[a-c]x", "bx", 1},
    {"[a-c]x", "dx", 0},
    {"[^a-c]x", "dx", 1},
    {"[^a-c]x", "ax", 0},
    {"[\\]]", "]", 1},
    {"\\*", "*", 1},
    {"\\*", "a", 0},
    {"?", "\xc3\xa9", 1}, /* one character, two bytes */
    {"caf\xc3\xa9", "caf\xc3\xa9", 1},
    {"build/", "build/out.o", 1},
    {"build\n!build/keep.txt", "build/keep.txt", 0},
    {"build\n!build/keep.txt", "build/other", 1},
    {"build\n!build/keep.txt", "build", 1},
    {"*.md\n!README*.md\nREADME-secret.md", "README-secret.md", 1},
    {"*.md\n!README*.md\nREADME-secret.md", "README.md", 0},
    {"*.md\n!README*.md\nREADME-secret.md", "x.md", 1},
    {"*.md\nREADME-secret.md\n!README*.md", "README-secret.md", 0},
    {"# comment\n", "# comment", 0},
    {"#a", "#a", 0},
    {" #a", "#a", 1}, /* only column 1 makes a comment */
    {"  spaced  \r\n", "spaced", 1},
    {"\xef\xbb\xbf"
     "bom",
     "bom", 1},
    {"*\n!keep", "keep", 0},
    {"*\n!keep", "other", 1},
    {"!a", "a", 0},
    {"../a", "a", 0},
    {"/", "a", 0},
};

static void test_match_table(void **state) {
  size_t i;
  (void) state;
  for (i = 0; i < sizeof(match_cases) / sizeof(match_cases[0]); i++) {
    const match_case_t *c = &match_cases[i];
    tpuci__dockerignore_t di;
    tpuci__err_t err = {0, NULL};
    int got;
    assert_int_equal(tpuci__dockerignore_parse(&di, c->patterns, strlen(c->patterns), ".dockerignore", &err), 0);
    got = tpuci__dockerignore_excluded(&di, c->path);
    if (got != c->excluded) fail_msg("patterns \"%s\", path \"%s\": excluded %d, want %d", c->patterns, c->path, got, c->excluded);
    tpuci__dockerignore_free(&di);
  }
}

static void expect_reach(const char *patterns, const char *dir, int want) {
  tpuci__dockerignore_t di;
  tpuci__err_t err = {0, NULL};
  assert_int_equal(tpuci__dockerignore_parse(&di, patterns, strlen(patterns), "x", &err), 0);
  if (tpuci__dockerignore_reaches_below(&di, dir) != want) fail_msg("patterns \"%s\", folder %s: want %d", patterns, dir, want);
  tpuci__dockerignore_free(&di);
}

static void test_reaches_below(void **state) {
  (void) state;
  expect_reach("build", "build", 0);
  expect_reach("build\n!build/keep.txt", "build", 1);
  expect_reach("build\n!build/keep.txt", "other", 0);
  expect_reach("build\n!build/keep.txt", "build/sub", 0);
  expect_reach("a\n!a/*/c", "a/b", 1);
  expect_reach("a\n!**/keep", "a/b/c", 1);
  expect_reach("a\n!a", "a", 0);
}

static void expect_parse_error(const char *patterns, const char *want) {
  tpuci__dockerignore_t di;
  tpuci__err_t err = {0, NULL};
  assert_int_equal(tpuci__dockerignore_parse(&di, patterns, strlen(patterns), "ctx/.dockerignore", &err), TPUCI_ESPEC);
  if (strstr(err.msg, want) == NULL) fail_msg("\"%s\": message \"%s\" lacks \"%s\"", patterns, err.msg, want);
  assert_null(di.pats);
  tpuci__err_clear(&err);
}

static void test_parse_errors(void **state) {
  (void) state;
  expect_parse_error("ok\n!", "ctx/.dockerignore:2: \"!\"");
  expect_parse_error("ok\n!  \n", "ctx/.dockerignore:2:");
  expect_parse_error("a[", "ctx/.dockerignore:1: bad pattern \"a[\"");
  expect_parse_error("\n\n[]", ":3: bad pattern");
  expect_parse_error("[z-a]", "bad pattern");
  expect_parse_error("[-a]", "bad pattern");
  expect_parse_error("a\\", "a '\\' at its end");
}

/* Temporary trees. */

static char *tree_new(void) {
  char *dir = tpuci__strdup("/tmp/tpuci-buildctx-XXXXXX");
  assert_non_null(mkdtemp(dir));
  return dir;
}

static void tree_rm(char *dir) {
  tpuci__buf_t cmd;
  tpuci__buf_init(&cmd);
  tpuci__buf_adds(&cmd, "chmod -R u+rwX ");
  tpuci__buf_add_shell(&cmd, dir);
  tpuci__buf_adds(&cmd, " && rm -rf ");
  tpuci__buf_add_shell(&cmd, dir);
  assert_int_equal(system(cmd.data), 0);
  tpuci__buf_free(&cmd);
  free(dir);
}

static char *tree_path(const char *root, const char *rel) {
  return tpuci__printf("%s/%s", root, rel);
}

static void tree_dir(const char *root, const char *rel) {
  char *p = tree_path(root, rel);
  assert_int_equal(tpuci__mkdir_p(p, 0755), 0);
  free(p);
}

static void tree_file(const char *root, const char *rel, const char *text, int mode) {
  char *p = tree_path(root, rel), *slash = strrchr(p, '/');
  int fd;
  *slash = '\0';
  assert_int_equal(tpuci__mkdir_p(p, 0755), 0);
  *slash = '/';
  fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(fd >= 0);
  assert_int_equal(tpuci__write_all(fd, text, strlen(text)), 0);
  close(fd);
  assert_int_equal(chmod(p, (mode_t) mode), 0);
  free(p);
}

static void tree_link(const char *root, const char *rel, const char *target) {
  char *p = tree_path(root, rel);
  assert_int_equal(symlink(target, p), 0);
  free(p);
}

/* A small tar reader: ustar with its prefix, pax 'x' records. */

typedef struct {
  char *name;
  char type;
  unsigned mode, uid, gid;
  uint64_t size;
  char *link;
  const char *data;
} ent_t;

typedef struct {
  ent_t *e;
  size_t n;
} arc_t;

static uint64_t octal(const char *f, size_t n) {
  uint64_t v = 0;
  size_t i;
  for (i = 0; i < n && f[i] >= '0' && f[i] <= '7'; i++) v = v * 8 + (uint64_t) (f[i] - '0');
  return v;
}

static int block_zero(const char *b) {
  size_t i;
  for (i = 0; i < 512; i++)
    if (b[i] != 0) return 0;
  return 1;
}

static void check_sum(const char *h) {
  unsigned sum = 0;
  size_t i;
  for (i = 0; i < 512; i++) sum += (i >= 148 && i < 156) ? ' ' : (unsigned char) h[i];
  assert_int_equal(octal(h + 148, 8), sum);
  assert_memory_equal(h + 257, "ustar\0"
                               "00",
                      8);
}

/* Reads "LEN key=value\n" records into *path, *link, *size. */
static void read_pax(const char *p, size_t len, char **path, char **link, uint64_t *size) {
  const char *end = p + len;
  while (p < end) {
    char *sp;
    size_t n = strtoul(p, &sp, 10);
    const char *kv = sp + 1, *eq = memchr(kv, '=', (size_t) (p + n - kv));
    assert_true(n > 0 && p + n <= end && p[n - 1] == '\n' && eq != NULL);
    if ((size_t) (eq - kv) == 4 && memcmp(kv, "path", 4) == 0) *path = tpuci__strndup(eq + 1, (size_t) (p + n - 1 - eq - 1));
    if ((size_t) (eq - kv) == 8 && memcmp(kv, "linkpath", 8) == 0) *link = tpuci__strndup(eq + 1, (size_t) (p + n - 1 - eq - 1));
    if ((size_t) (eq - kv) == 4 && memcmp(kv, "size", 4) == 0) *size = strtoull(eq + 1, NULL, 10);
    p += n;
  }
}

static void arc_read(const tpuci__buf_t *tar, arc_t *a) {
  size_t off = 0;
  char *path = NULL, *link = NULL;
  uint64_t psize = 0;
  memset(a, 0, sizeof(*a));
  assert_int_equal(tar->len % 512, 0);
  for (;;) {
    const char *h = tar->data + off;
    ent_t *e;
    uint64_t size;
    assert_true(off + 512 <= tar->len);
    if (block_zero(h)) {
      /* The end: two zero blocks, nothing after. */
      assert_int_equal(tar->len, off + 1024);
      assert_true(block_zero(h + 512));
      break;
    }
    check_sum(h);
    size = octal(h + 124, 12);
    if (h[156] == 'x') {
      read_pax(h + 512, (size_t) size, &path, &link, &psize);
      off += 512 + (size + 511) / 512 * 512;
      continue;
    }
    a->e = realloc(a->e, (a->n + 1) * sizeof(*a->e));
    e = &a->e[a->n++];
    if (path != NULL) {
      e->name = path;
    } else if (h[345] != '\0') {
      e->name = tpuci__printf("%.155s/%.100s", h + 345, h);
    } else {
      e->name = tpuci__printf("%.100s", h);
    }
    e->link = link ? link : tpuci__printf("%.100s", h + 157);
    e->type = h[156];
    e->mode = (unsigned) octal(h + 100, 8);
    e->uid = (unsigned) octal(h + 108, 8);
    e->gid = (unsigned) octal(h + 116, 8);
    e->size = psize ? psize : size;
    e->data = h + 512;
    assert_memory_equal(h + 265, "\0", 1); /* no user name */
    off += 512 + (e->size + 511) / 512 * 512;
    path = link = NULL;
    psize = 0;
  }
}

static void arc_free(arc_t *a) {
  size_t i;
  for (i = 0; i < a->n; i++) {
    free(a->e[i].name);
    free(a->e[i].link);
  }
  free(a->e);
}

static const ent_t *arc_find(const arc_t *a, const char *name) {
  size_t i;
  for (i = 0; i < a->n; i++)
    if (strcmp(a->e[i].name, name) == 0) return &a->e[i];
  return NULL;
}

/* The names, one a line, in archive order. */
static char *arc_names(const arc_t *a) {
  tpuci__buf_t b;
  size_t i;
  tpuci__buf_init(&b);
  for (i = 0; i < a->n; i++) tpuci__buf_addf(&b, "%s\n", a->e[i].name);
  return tpuci__buf_steal(&b);
}

static void expect_names(const arc_t *a, const char *want) {
  char *got = arc_names(a);
  assert_string_equal(got, want);
  free(got);
}

static void expect_file(const arc_t *a, const char *name, const char *text, unsigned mode) {
  const ent_t *e = arc_find(a, name);
  if (e == NULL) fail_msg("%s is not in the archive", name);
  assert_int_equal(e->type, '0');
  assert_int_equal(e->mode, mode);
  assert_int_equal(e->uid, 0);
  assert_int_equal(e->gid, 0);
  assert_int_equal(e->size, strlen(text));
  assert_memory_equal(e->data, text, strlen(text));
}

static void make_ok(const char *dir, const char *dockerfile, tpuci__buildctx_t *c, arc_t *a) {
  tpuci__err_t err = {0, NULL};
  int r = tpuci__buildctx_make(dir, dockerfile, 64u << 20, c, &err);
  if (r != 0) fail_msg("buildctx_make %s: %s", dir, err.msg);
  arc_read(&c->tar, a);
}

static char *make_err(const char *dir, const char *dockerfile, uint64_t max, int code) {
  tpuci__buildctx_t c;
  tpuci__err_t err = {0, NULL};
  char *msg;
  assert_int_equal(tpuci__buildctx_make(dir, dockerfile, max, &c, &err), code);
  assert_null(c.tar.data);
  assert_null(c.dockerfile);
  msg = err.msg;
  return msg;
}

/* Archives. */

static void test_entries(void **state) {
  char *dir = tree_new(), *p;
  tpuci__buildctx_t c;
  arc_t a;
  const ent_t *e;
  (void) state;
  tree_file(dir, "Dockerfile", "FROM scratch\n", 0644);
  tree_file(dir, "run.sh", "#!/bin/sh\n", 0755);
  tree_file(dir, "secret", "s", 0600);
  tree_file(dir, "src/b.c", "b", 0644);
  tree_file(dir, "src/a.c", "a", 0644);
  tree_dir(dir, "empty");
  tree_link(dir, "src/link", "../run.sh");
  tree_link(dir, "dangling", "nowhere/at/all");
  p = tree_path(dir, "fifo");
  assert_int_equal(mkfifo(p, 0644), 0);
  free(p);
  p = tree_path(dir, "empty");
  assert_int_equal(chmod(p, 0750), 0);
  free(p);

  make_ok(dir, NULL, &c, &a);
  /* Byte order at each level, a folder before what is in it; no FIFO. */
  expect_names(&a, "Dockerfile\ndangling\nempty/\nrun.sh\nsecret\nsrc/\nsrc/a.c\nsrc/b.c\nsrc/link\n");
  assert_string_equal(c.dockerfile, "Dockerfile");
  assert_int_equal(c.files, 5);
  assert_int_equal(c.bytes, 13 + 10 + 1 + 1 + 1);
  expect_file(&a, "Dockerfile", "FROM scratch\n", 0644);
  expect_file(&a, "run.sh", "#!/bin/sh\n", 0755);
  expect_file(&a, "secret", "s", 0600);
  expect_file(&a, "src/a.c", "a", 0644);
  e = arc_find(&a, "empty/");
  assert_int_equal(e->type, '5');
  assert_int_equal(e->mode, 0750);
  e = arc_find(&a, "src/link");
  assert_int_equal(e->type, '2');
  assert_string_equal(e->link, "../run.sh");
  assert_int_equal(e->size, 0);
  assert_string_equal(arc_find(&a, "dangling")->link, "nowhere/at/all");
  arc_free(&a);
  tpuci__buildctx_free(&c);
  assert_null(c.tar.data);
  tree_rm(dir);
}

/* What GNU tar lists of the archive. */
static char *gnu_tar_list(const tpuci__buildctx_t *c) {
  char file[] = "/tmp/tpuci-buildctx-tar-XXXXXX", *cmd, line[4096];
  tpuci__buf_t out;
  FILE *f;
  int fd = mkstemp(file);
  assert_true(fd >= 0);
  assert_int_equal(tpuci__write_all(fd, c->tar.data, c->tar.len), 0);
  close(fd);
  cmd = tpuci__printf("tar -tf %s 2>&1", file);
  f = popen(cmd, "r");
  assert_non_null(f);
  tpuci__buf_init(&out);
  while (fgets(line, sizeof(line), f) != NULL) tpuci__buf_adds(&out, line);
  assert_int_equal(pclose(f), 0);
  unlink(file);
  free(cmd);
  return tpuci__buf_steal(&out);
}

/* n times c; a static buffer, several live at once. */
static const char *run(char c, size_t n) {
  static char bufs[4][128];
  static int next;
  char *b = bufs[next++ % 4];
  assert_true(n < sizeof(bufs[0]));
  memset(b, c, n);
  b[n] = '\0';
  return b;
}

static void test_long_paths(void **state) {
  char *dir = tree_new(), *mid, *deep, *target, *list, *want;
  tpuci__buildctx_t c;
  arc_t a;
  (void) state;
  /* 130 bytes: over ustar's name, fits with the prefix. 300 bytes: a
   * pax path. A link target of 150 bytes: a pax linkpath. */
  mid = tpuci__printf("%s/%s", run('a', 60), run('b', 69));
  assert_int_equal(strlen(mid), 130);
  deep = tpuci__printf("%s/%s/%s/%s", run('c', 100), run('d', 100), run('e', 50), run('f', 36));
  assert_true(strlen(deep) > 255);
  target = tpuci__printf("../../%.144s", deep);
  tree_file(dir, "Dockerfile", "FROM scratch\n", 0644);
  tree_file(dir, mid, "mid", 0644);
  tree_file(dir, deep, "deep", 0640);
  tree_link(dir, "lnk", target);

  make_ok(dir, NULL, &c, &a);
  expect_file(&a, mid, "mid", 0644);
  expect_file(&a, deep, "deep", 0640);
  assert_string_equal(arc_find(&a, "lnk")->link, target);
  /* GNU tar reads the same names. */
  list = gnu_tar_list(&c);
  want = tpuci__printf("\n%s\n", mid);
  assert_non_null(strstr(list, want));
  free(want);
  want = tpuci__printf("\n%s\n", deep);
  assert_non_null(strstr(list, want));
  free(want);
  free(list);
  arc_free(&a);
  tpuci__buildctx_free(&c);
  free(mid);
  free(deep);
  free(target);
  tree_rm(dir);
}

static void test_dockerignore(void **state) {
  char *dir = tree_new();
  tpuci__buildctx_t c;
  arc_t a;
  (void) state;
  tree_file(dir, ".dockerignore",
            "# build outputs\n"
            "*.pyc\n"
            "**/__pycache__\n"
            "build/\n"
            "!build/keep.txt\n"
            "/secret.txt\n"
            "*.md\n"
            "!README*.md\n"
            "README-secret.md\n"
            "Dockerfile\n"
            ".dockerignore\n"
            "docker\n",
            0644);
  tree_file(dir, "Dockerfile", "FROM scratch\n", 0644);
  tree_file(dir, "app.py", "x", 0644);
  tree_file(dir, "app.pyc", "x", 0644);
  tree_file(dir, "pkg/mod.py", "x", 0644);
  tree_file(dir, "pkg/mod.pyc", "x", 0644); /* '*' does not cross '/' */
  tree_file(dir, "pkg/__pycache__/mod.cpython-311.pyc", "x", 0644);
  tree_file(dir, "__pycache__/top.pyc", "x", 0644);
  tree_file(dir, "build/keep.txt", "kept", 0644);
  tree_file(dir, "build/out.o", "x", 0644);
  tree_file(dir, "build/sub/deep.o", "x", 0644);
  tree_file(dir, "secret.txt", "x", 0644);
  tree_file(dir, "sub/secret.txt", "x", 0644); /* "/secret.txt" is the top's */
  tree_file(dir, "README.md", "x", 0644);
  tree_file(dir, "README-secret.md", "x", 0644);
  tree_file(dir, "notes.md", "x", 0644);
  tree_file(dir, "docker/Dockerfile.ci", "FROM scratch\n", 0644);
  tree_file(dir, "docker/other", "x", 0644);

  make_ok(dir, NULL, &c, &a);
  /* build/ and docker/ are left out, their folders' own entries too, but
   * what comes back below them is there. */
  expect_names(&a,
               ".dockerignore\nDockerfile\nREADME.md\napp.py\nbuild/keep.txt\n"
               "pkg/\npkg/mod.py\npkg/mod.pyc\nsub/\nsub/secret.txt\n");
  expect_file(&a, "build/keep.txt", "kept", 0644);
  arc_free(&a);
  tpuci__buildctx_free(&c);

  /* A Dockerfile in a left-out folder is sent, alone. */
  make_ok(dir, "docker/Dockerfile.ci", &c, &a);
  assert_string_equal(c.dockerfile, "docker/Dockerfile.ci");
  expect_file(&a, "docker/Dockerfile.ci", "FROM scratch\n", 0644);
  assert_null(arc_find(&a, "docker/other"));
  assert_null(arc_find(&a, "Dockerfile"));
  arc_free(&a);
  tpuci__buildctx_free(&c);
  tree_rm(dir);
}

static void test_dockerignore_bad(void **state) {
  char *dir = tree_new(), *msg, *want;
  (void) state;
  tree_file(dir, "Dockerfile", "FROM scratch\n", 0644);
  tree_file(dir, ".dockerignore", "ok\n[oops\n", 0644);
  msg = make_err(dir, NULL, 1u << 20, TPUCI_ESPEC);
  want = tpuci__printf("%s/.dockerignore:2: bad pattern \"[oops\"", dir);
  assert_non_null(strstr(msg, want));
  free(want);
  free(msg);
  tree_rm(dir);
}

static void test_dockerfile_outside(void **state) {
  char *top = tree_new(), *ctx = tree_path(top, "ctx"), *abs, *msg;
  tpuci__buildctx_t c, c2;
  arc_t a;
  (void) state;
  tree_file(top, "ctx/app.py", "x", 0644);
  tree_file(top, "ci/Dockerfile.test", "FROM python\n", 0644);
  tree_link(top, "ctx/Dockerfile", "../ci/Dockerfile.test");

  make_ok(ctx, "../ci/Dockerfile.test", &c, &a);
  assert_int_equal(strncmp(c.dockerfile, ".tpuci-dockerfile-", 18), 0);
  assert_int_equal(strlen(c.dockerfile), 18 + 12);
  expect_file(&a, c.dockerfile, "FROM python\n", 0644);
  /* First, then the context; the link named Dockerfile is a link. */
  assert_string_equal(a.e[0].name, c.dockerfile);
  assert_int_equal(arc_find(&a, "Dockerfile")->type, '2');
  assert_int_equal(c.files, 2);
  arc_free(&a);

  /* Absolute, or through a link out of the context: the same archive. */
  abs = tree_path(top, "ci/Dockerfile.test");
  make_ok(ctx, abs, &c2, &a);
  assert_string_equal(c2.dockerfile, c.dockerfile);
  assert_int_equal(c2.tar.len, c.tar.len);
  assert_memory_equal(c2.tar.data, c.tar.data, c.tar.len);
  arc_free(&a);
  tpuci__buildctx_free(&c2);
  make_ok(ctx, NULL, &c2, &a);
  assert_string_equal(c2.dockerfile, c.dockerfile);
  arc_free(&a);
  tpuci__buildctx_free(&c2);
  tpuci__buildctx_free(&c);
  free(abs);

  /* A link that ends inside the context names the file there. */
  tree_file(top, "ctx/docker/real", "FROM inside\n", 0644);
  tree_link(top, "ctx/Dockerfile.link", "docker/real");
  make_ok(ctx, "Dockerfile.link", &c, &a);
  assert_string_equal(c.dockerfile, "docker/real");
  arc_free(&a);
  tpuci__buildctx_free(&c);

  /* Missing: the path as the user would look for it. */
  msg = make_err(ctx, "nope/Dockerfile", 1u << 20, TPUCI_ESPEC);
  assert_non_null(strstr(msg, "Dockerfile"));
  assert_non_null(strstr(msg, "nope/Dockerfile not found"));
  free(msg);
  msg = make_err(ctx, "docker", 1u << 20, TPUCI_ESPEC);
  assert_non_null(strstr(msg, "is a folder, not a regular file"));
  free(msg);
  free(ctx);
  tree_rm(top);
}

static void test_dockerfile_default(void **state) {
  char *dir = tree_new(), *msg, *want;
  tpuci__buildctx_t c;
  arc_t a;
  (void) state;
  tree_file(dir, "app.py", "x", 0644);
  msg = make_err(dir, NULL, 1u << 20, TPUCI_ESPEC);
  want = tpuci__printf("Dockerfile %s/Dockerfile not found", dir);
  assert_string_equal(msg, want);
  free(want);
  free(msg);
  /* As the docker CLI does: "dockerfile" when there is no "Dockerfile". */
  tree_file(dir, "dockerfile", "FROM scratch\n", 0644);
  make_ok(dir, NULL, &c, &a);
  assert_string_equal(c.dockerfile, "dockerfile");
  arc_free(&a);
  tpuci__buildctx_free(&c);
  tree_rm(dir);
}

static void test_context_errors(void **state) {
  char *dir = tree_new(), *missing = tree_path(dir, "missing"), *file, *msg;
  (void) state;
  msg = make_err(missing, NULL, 1u << 20, TPUCI_ESPEC);
  assert_non_null(strstr(msg, missing));
  free(msg);
  tree_file(dir, "file", "x", 0644);
  file = tree_path(dir, "file");
  msg = make_err(file, NULL, 1u << 20, TPUCI_ESPEC);
  assert_non_null(strstr(msg, "is a regular file, not a folder"));
  free(msg);
  /* An unreadable file inside fails the build, as docker build does
   * (root reads everything: then there is nothing to see). */
  if (geteuid() != 0) {
    tree_file(dir, "Dockerfile", "FROM scratch\n", 0644);
    tree_file(dir, "locked", "x", 0000);
    msg = make_err(dir, NULL, 1u << 20, TPUCI_EIO);
    assert_non_null(strstr(msg, "/locked"));
    free(msg);
  }
  free(file);
  free(missing);
  tree_rm(dir);
}

static void test_size_cap(void **state) {
  char *dir = tree_new(), *big = tpuci__malloc(600 * 1024 + 1), *msg, *want;
  tpuci__buildctx_t c;
  tpuci__err_t err = {0, NULL};
  (void) state;
  memset(big, 'x', 600 * 1024);
  big[600 * 1024] = '\0';
  tree_file(dir, "Dockerfile", "FROM scratch\n", 0644);
  tree_file(dir, "data/a.bin", big, 0644);
  tree_file(dir, "data/b.bin", big, 0644);
  msg = make_err(dir, NULL, 1u << 20, TPUCI_ESPEC);
  want = tpuci__printf("build context %s is over 1 MiB (3 files); add a .dockerignore", dir);
  assert_string_equal(msg, want);
  free(want);
  free(msg);
  /* Left out, they do not count. */
  tree_file(dir, ".dockerignore", "data/b.bin\n", 0644);
  assert_int_equal(tpuci__buildctx_make(dir, NULL, 1u << 20, &c, &err), 0);
  assert_int_equal(c.files, 3);
  assert_int_equal(c.bytes, 13 + 600 * 1024 + 11);
  tpuci__buildctx_free(&c);
  free(big);
  tree_rm(dir);
}

/* Sets a path's times without following a link. */
static void tree_time(const char *root, const char *rel) {
  struct timespec ts[2] = {{1700000000, 0}, {1700000000, 0}};
  char *p = rel ? tree_path(root, rel) : tpuci__strdup(root);
  assert_int_equal(utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW), 0);
  free(p);
}

/* The same tree, made in another order, is the same bytes. */
static void make_tree(const char *dir, int reverse) {
  static const char *files[] = {"Dockerfile", "b/z", "b/a", "a", "c/d/e", "B"};
  size_t i, n = sizeof(files) / sizeof(files[0]);
  for (i = 0; i < n; i++) tree_file(dir, files[reverse ? n - 1 - i : i], "same", 0644);
  tree_link(dir, "l", "a");
  for (i = 0; i < n; i++) tree_time(dir, files[i]);
  tree_time(dir, "l");
  tree_time(dir, "b");
  tree_time(dir, "c/d");
  tree_time(dir, "c");
}

static void test_deterministic(void **state) {
  char *d1 = tree_new(), *d2 = tree_new();
  tpuci__buildctx_t c1, c2, c3;
  arc_t a;
  (void) state;
  make_tree(d1, 0);
  make_tree(d2, 1);
  make_ok(d1, NULL, &c1, &a);
  expect_names(&a, "B\nDockerfile\na\nb/\nb/a\nb/z\nc/\nc/d/\nc/d/e\nl\n");
  arc_free(&a);
  make_ok(d1, NULL, &c2, &a);
  arc_free(&a);
  make_ok(d2, NULL, &c3, &a);
  arc_free(&a);
  assert_int_equal(c1.tar.len, c2.tar.len);
  assert_memory_equal(c1.tar.data, c2.tar.data, c1.tar.len);
  assert_int_equal(c1.tar.len, c3.tar.len);
  assert_memory_equal(c1.tar.data, c3.tar.data, c1.tar.len);
  tpuci__buildctx_free(&c1);
  tpuci__buildctx_free(&c2);
  tpuci__buildctx_free(&c3);
  tree_rm(d1);
  tree_rm(d2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_match_table),
      cmocka_unit_test(test_reaches_below),
      cmocka_unit_test(test_parse_errors),
      cmocka_unit_test(test_entries),
      cmocka_unit_test(test_long_paths),
      cmocka_unit_test(test_dockerignore),
      cmocka_unit_test(test_dockerignore_bad),
      cmocka_unit_test(test_dockerfile_outside),
      cmocka_unit_test(test_dockerfile_default),
      cmocka_unit_test(test_context_errors),
      cmocka_unit_test(test_size_cap),
      cmocka_unit_test(test_deterministic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
