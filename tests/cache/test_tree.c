/* core/runtime/tree.c: the content key of a mount (a git work tree, a
 * plain folder, a file) and the `inputs` globs. Each case changes one
 * thing and checks that the key changes, or that it does not when the
 * change must not count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime/tree.h"

static char root[256];

static void sh(const char *fmt, ...) {
  char cmd[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof(cmd), fmt, ap);
  va_end(ap);
  if (system(cmd) != 0) fail_msg("failed: %s", cmd);
}

static void put(const char *rel, const char *text) {
  char path[512];
  FILE *f;
  snprintf(path, sizeof(path), "%s/%s", root, rel);
  f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* The key of root/rel (rel "" for root) with the options. */
static void key_of(const char *rel, const tpuci__tree_opts_t *o, char hex[65], const char **how) {
  char path[512];
  tpuci__tree_key_t k;
  tpuci__err_t e = {0, NULL};
  snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
  if (tpuci__tree_key(path, o, &k, &e) != 0) fail_msg("%s: %s", path, e.msg);
  memcpy(hex, k.hex, 65);
  if (how) *how = k.how;
}

#define SAME(a, b) assert_string_equal(a, b)
#define DIFFERENT(a, b) assert_string_not_equal(a, b)

/* The key of root/rel now against `want`: the same (same != 0) or not. */
static void expect_key(const char *rel, const tpuci__tree_opts_t *o, const char *want, int same) {
  char now[65];
  key_of(rel, o, now, NULL);
  if (same) SAME(want, now);
  else DIFFERENT(want, now);
}

static int setup(void **state) {
  (void) state;
  snprintf(root, sizeof(root), "/tmp/tpuci-tree.XXXXXX");
  if (mkdtemp(root) == NULL) return -1;
  return 0;
}

static int teardown(void **state) {
  (void) state;
  sh("rm -rf '%s'", root);
  return 0;
}

static void test_glob(void **state) {
  (void) state;
  assert_true(tpuci__glob_match("src/**", "src/a.py"));
  assert_true(tpuci__glob_match("src/**", "src/x/y/a.py"));
  assert_false(tpuci__glob_match("src/**", "srcx/a.py"));
  assert_true(tpuci__glob_match("src", "src/x/a.py"));
  assert_true(tpuci__glob_match("**/test_*.py", "test_a.py"));
  assert_true(tpuci__glob_match("**/test_*.py", "tests/unit/test_a.py"));
  assert_false(tpuci__glob_match("**/test_*.py", "tests/unit/a_test.py"));
  assert_true(tpuci__glob_match("tests/*.py", "tests/a.py"));
  assert_false(tpuci__glob_match("tests/*.py", "tests/sub/a.py"));
  assert_true(tpuci__glob_match("tests/**/*.py", "tests/a.py"));
  assert_true(tpuci__glob_match("tests/**/*.py", "tests/x/y/a.py"));
  assert_true(tpuci__glob_match("?.md", "a.md"));
  assert_false(tpuci__glob_match("?.md", "ab.md"));
  assert_true(tpuci__glob_match("[a-c]x", "bx"));
  assert_false(tpuci__glob_match("[!a-c]x", "bx"));
  assert_true(tpuci__glob_match("\\*", "*"));
  assert_false(tpuci__glob_match("\\*", "a"));
  assert_true(tpuci__glob_match("**", "anything/at/all"));
  assert_false(tpuci__glob_match("*.md", "docs/a.md"));
  assert_true(tpuci__glob_match("../data/**", "../data/x.csv"));
}

/* A git work tree: tracked, modified, untracked, ignored, deleted. */
static void test_git(void **state) {
  char k0[65], k1[65], k2[65];
  const char *how;
  (void) state;
  sh("cd '%s' && git init -q && mkdir -p src docs && echo 'def f(): return 1' > src/m.py && "
     "echo readme > docs/a.md && echo 'build/' > .gitignore && git add . && "
     "git -c user.email=t@t -c user.name=t commit -qm init", root);
  key_of("", NULL, k0, &how);
  assert_string_equal(how, "git");
  /* Unchanged: the same key; a touch (stat changed, content not) too. */
  expect_key("", NULL, k0, 1);
  sh("sleep 1; touch '%s/src/m.py'", root);
  expect_key("", NULL, k0, 1);
  /* One byte of a tracked file. */
  put("src/m.py", "def f(): return 2\n");
  expect_key("", NULL, k0, 0);
  put("src/m.py", "def f(): return 1\n");
  expect_key("", NULL, k0, 1);
  /* An untracked file counts; an ignored one does not. */
  sh("mkdir -p '%s/build' && echo x > '%s/build/out.o'", root, root);
  expect_key("", NULL, k0, 1);
  put("src/new.py", "x = 1\n");
  expect_key("", NULL, k0, 0);
  sh("rm '%s/src/new.py'", root);
  /* Caches Python and pytest write do not count. */
  sh("mkdir -p '%s/src/__pycache__' '%s/.pytest_cache' && echo c > '%s/src/__pycache__/m.pyc' "
     "&& echo c > '%s/.pytest_cache/lastfailed'", root, root, root, root);
  expect_key("", NULL, k0, 1);
  /* A deleted tracked file, and a staged change. */
  sh("mv '%s/docs/a.md' '%s/a.md.keep'", root, root);
  expect_key("", NULL, k0, 0);
  sh("mv '%s/a.md.keep' '%s/docs/a.md'", root, root);
  put("src/m.py", "def f(): return 3\n");
  sh("cd '%s' && git add src/m.py", root);
  key_of("", NULL, k2, NULL);
  DIFFERENT(k0, k2);
  put("src/m.py", "def f(): return 1\n");
  expect_key("", NULL, k0, 1);  /* the index differs from the file: the file counts */
  /* The executable bit. */
  sh("chmod +x '%s/src/m.py'", root);
  expect_key("", NULL, k0, 0);
  sh("chmod -x '%s/src/m.py'", root);
  /* A subfolder of the work tree has a key of its own. */
  key_of("src", NULL, k1, &how);
  assert_string_equal(how, "git");
  put("docs/a.md", "changed\n");
  key_of("src", NULL, k2, NULL);
  SAME(k1, k2);
}

/* An excluded path (the state folder) and the globs. */
static void test_exclude_and_globs(void **state) {
  char k0[65], state_dir[300];
  const char *ex[1];
  const char *globs[] = {"src/**", "nothing/**"};
  size_t hits[2];
  tpuci__tree_opts_t o;
  (void) state;
  sh("cd '%s' && git init -q && mkdir -p src docs && echo a > src/m.py && echo b > docs/a.md && "
     "git add . && git -c user.email=t@t -c user.name=t commit -qm init", root);
  snprintf(state_dir, sizeof(state_dir), "%s/.tpuci", root);
  ex[0] = state_dir;
  memset(&o, 0, sizeof(o));
  o.exclude = ex;
  o.nexclude = 1;
  key_of("", &o, k0, NULL);
  sh("mkdir -p '%s/.tpuci/runs/x' && echo log > '%s/.tpuci/runs/x/log'", root, root);
  expect_key("", &o, k0, 1);
  expect_key("", NULL, k0, 0);  /* without the exclusion the state folder counts */
  /* Globs: a docs change does not count, a source change does. */
  o.globs = globs;
  o.nglobs = 2;
  o.glob_base = root;
  o.glob_hits = hits;
  key_of("", &o, k0, NULL);
  assert_int_equal(hits[0], 1);
  assert_int_equal(hits[1], 0);
  put("docs/a.md", "other\n");
  expect_key("", &o, k0, 1);
  put("src/m.py", "other\n");
  expect_key("", &o, k0, 0);
  /* The globs are relative to glob_base, not to the folder hashed. */
  key_of("src", &o, k0, NULL);
  assert_int_equal(hits[0], 1);
}

/* No git: every file, its content and its name. */
static void test_files(void **state) {
  char k0[65];
  const char *how;
  tpuci__tree_opts_t o;
  (void) state;
  sh("mkdir -p '%s/d/e' && echo 1 > '%s/d/e/f' && echo 2 > '%s/g' && ln -s g '%s/l'", root, root,
     root, root);
  key_of("", NULL, k0, &how);
  assert_string_equal(how, "files");
  put("g", "3\n");
  expect_key("", NULL, k0, 0);
  put("g", "2\n");
  expect_key("", NULL, k0, 1);
  sh("mv '%s/g' '%s/h'", root, root);
  expect_key("", NULL, k0, 0);
  sh("mv '%s/h' '%s/g' && rm '%s/l' && ln -s d '%s/l'", root, root, root, root);
  expect_key("", NULL, k0, 0);
  /* Over the cap: no key, and the error says why. */
  memset(&o, 0, sizeof(o));
  o.max_files = 2;
  {
    tpuci__tree_key_t k;
    tpuci__err_t e = {0, NULL};
    assert_true(tpuci__tree_key(root, &o, &k, &e) < 0);
    assert_non_null(strstr(e.msg, "more than 2 files outside git"));
    tpuci__err_clear(&e);
  }
  /* One file. */
  key_of("g", NULL, k0, &how);
  assert_string_equal(how, "file");
  put("g", "9\n");
  expect_key("g", NULL, k0, 0);
}

/* A folder git ignores as a whole is walked, not taken as empty. */
static void test_ignored_folder(void **state) {
  char k0[65];
  const char *how;
  (void) state;
  sh("cd '%s' && git init -q && echo 'data/' > .gitignore && mkdir data && echo 1 > data/x && "
     "git add .gitignore && git -c user.email=t@t -c user.name=t commit -qm init", root);
  key_of("data", NULL, k0, &how);
  assert_string_equal(how, "files");
  put("data/x", "2\n");
  expect_key("data", NULL, k0, 0);
}

/* Globs reach folders outside glob_base (inputs "../src/" and more for a spec in ci/
 * and the checkout mounted as ".."). */
static void test_globs_outside(void **state) {
  char k0[65], base[300], up[300];
  const char *globs[] = {"../src/**"};
  size_t hits[1];
  tpuci__tree_opts_t o;
  (void) state;
  sh("mkdir -p '%s/ci' '%s/src' && echo a > '%s/src/m.py' && echo r > '%s/README'", root, root,
     root, root);
  snprintf(base, sizeof(base), "%s/ci", root);
  memset(&o, 0, sizeof(o));
  o.globs = globs;
  o.nglobs = 1;
  o.glob_base = base;
  o.glob_hits = hits;
  key_of("", &o, k0, NULL);
  assert_int_equal(hits[0], 1);
  put("README", "other\n");
  expect_key("", &o, k0, 1);
  put("src/m.py", "b\n");
  expect_key("", &o, k0, 0);
  /* A sibling folder, and a folder two levels away. */
  key_of("src", &o, k0, NULL);
  assert_int_equal(hits[0], 1);
  snprintf(up, sizeof(up), "%s/ci/deeper", root);
  sh("mkdir -p '%s'", up);
  o.glob_base = up;
  globs[0] = "../../src/*.py";
  key_of("src", &o, k0, NULL);
  assert_int_equal(hits[0], 1);
}

/* A mounted file that is a symbolic link is its target's content; with
 * follow_links, a link inside a folder that leads out of it too. */
static void test_links(void **state) {
  char k0[65];
  tpuci__tree_opts_t o;
  (void) state;
  sh("mkdir -p '%s/real' '%s/job' && echo good > '%s/real/c.txt' && ln -s ../real/c.txt "
     "'%s/job/c.txt' && ln -s inside.txt '%s/job/in.txt' && echo i > '%s/job/inside.txt'",
     root, root, root, root, root, root);
  key_of("job/c.txt", NULL, k0, NULL);
  put("real/c.txt", "bad\n");
  expect_key("job/c.txt", NULL, k0, 0);
  /* In a folder: the link's text, unless links are followed. */
  key_of("job", NULL, k0, NULL);
  put("real/c.txt", "worse\n");
  expect_key("job", NULL, k0, 1);
  memset(&o, 0, sizeof(o));
  o.follow_links = 1;
  key_of("job", &o, k0, NULL);
  put("real/c.txt", "good\n");
  expect_key("job", &o, k0, 0);
  /* A link that stays inside is its text either way. */
  key_of("job", &o, k0, NULL);
  put("job/inside.txt", "j\n");
  key_of("job", &o, k0, NULL);
  sh("rm '%s/job/in.txt' && ln -s c.txt '%s/job/in.txt'", root, root);
  expect_key("job", &o, k0, 0);
  /* The same in a git work tree. */
  sh("cd '%s/job' && git init -q && git add . && git -c user.email=t@t -c user.name=t commit "
     "-qm init", root);
  key_of("job", &o, k0, NULL);
  put("real/c.txt", "changed\n");
  expect_key("job", &o, k0, 0);
}

/* core.fileMode=false: the executable bit of a tracked file still counts. */
static void test_filemode(void **state) {
  char k0[65];
  (void) state;
  sh("cd '%s' && git init -q && git config core.fileMode false && printf 'exit 0\\n' > s.sh && "
     "chmod +x s.sh && git add s.sh && git update-index --chmod=+x s.sh && "
     "git -c user.email=t@t -c user.name=t commit -qm init", root);
  key_of("", NULL, k0, NULL);
  sh("chmod -x '%s/s.sh'", root);
  expect_key("", NULL, k0, 0);
}

/* A plain folder: an empty folder, a FIFO; an empty folder has a key. */
static void test_plain_kinds(void **state) {
  char k0[65];
  const char *how;
  (void) state;
  key_of("", NULL, k0, &how);  /* empty: no entry to sort */
  assert_string_equal(how, "files");
  put("f", "1\n");
  key_of("", NULL, k0, NULL);
  sh("mkdir '%s/d'", root);
  expect_key("", NULL, k0, 0);
  sh("rmdir '%s/d' && mkfifo '%s/p'", root, root);
  expect_key("", NULL, k0, 0);
  sh("rm '%s/p'", root);
  expect_key("", NULL, k0, 1);
}

/* Ignored files: a glob whose fixed part names them counts them; a
 * folder of which git keeps one file says how many it ignores. */
static void test_ignored_named(void **state) {
  char k0[65], path[300];
  const char *globs[] = {"data/**"}, *wide[] = {"**/*.csv"};
  size_t hits[1];
  tpuci__tree_opts_t o;
  tpuci__tree_key_t k;
  tpuci__err_t e = {0, NULL};
  (void) state;
  sh("cd '%s' && git init -q && mkdir data && printf 'data/*\\n!data/.gitkeep\\n' > .gitignore "
     "&& : > data/.gitkeep && echo 1 > data/x.csv && echo s > src.py && git add . && "
     "git -c user.email=t@t -c user.name=t commit -qm init", root);
  snprintf(path, sizeof(path), "%s/data", root);
  assert_int_equal(tpuci__tree_key(path, NULL, &k, &e), 0);
  assert_int_equal(k.files, 1);
  assert_int_equal(k.ignored_only, 1);
  /* The whole checkout keeps more than one file: nothing to say. */
  assert_int_equal(tpuci__tree_key(root, NULL, &k, &e), 0);
  assert_int_equal(k.ignored_only, 0);
  memset(&o, 0, sizeof(o));
  o.globs = globs;
  o.nglobs = 1;
  o.glob_base = root;
  o.glob_hits = hits;
  key_of("", &o, k0, NULL);
  assert_int_equal(hits[0], 2);
  put("data/x.csv", "2\n");
  expect_key("", &o, k0, 0);
  /* A glob that starts with a wildcard does not bring ignored files in. */
  o.globs = wide;
  key_of("", &o, k0, NULL);
  assert_int_equal(hits[0], 0);
  put("data/x.csv", "3\n");
  expect_key("", &o, k0, 1);
}

/* Git's blob ids, as `git hash-object` gives them. */
static void test_blob(void **state) {
  char hex[41];
  (void) state;
  tpuci__git_blob_id("", 0, hex);
  assert_string_equal(hex, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
  tpuci__git_blob_id("hello\n", 6, hex);
  assert_string_equal(hex, "ce013625030ba8dba906f756967f9e9ca394464a");
}

/* A missing mount has no key. */
static void test_missing(void **state) {
  tpuci__tree_key_t k;
  tpuci__err_t e = {0, NULL};
  char path[300];
  (void) state;
  snprintf(path, sizeof(path), "%s/nope", root);
  assert_true(tpuci__tree_key(path, NULL, &k, &e) < 0);
  assert_non_null(strstr(e.msg, "no such file or folder"));
  tpuci__err_clear(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_glob),
      cmocka_unit_test(test_blob),
      cmocka_unit_test_setup_teardown(test_git, setup, teardown),
      cmocka_unit_test_setup_teardown(test_exclude_and_globs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_files, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ignored_folder, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_globs_outside, setup, teardown),
      cmocka_unit_test_setup_teardown(test_links, setup, teardown),
      cmocka_unit_test_setup_teardown(test_filemode, setup, teardown),
      cmocka_unit_test_setup_teardown(test_plain_kinds, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ignored_named, setup, teardown),
  };
  if (system("git --version > /dev/null 2>&1") != 0) {
    fprintf(stderr, "SKIP: no git\n");
    return 77;
  }
  return cmocka_run_group_tests(tests, NULL, NULL);
}
