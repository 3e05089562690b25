/* tpuci.yaml(path): YAML files beside the spec as Lua values. Fixtures are
 * in tests/spec/yaml/ (TPUCI_YAML_DIR); yaml/bad/ holds one malformed file
 * per kind of mistake, whose first line is "# expect: LINE:COL: message".
 * Files too large or too odd to keep in git (deep nesting, the memory and
 * time limits, symbolic links) are made in a temporary folder. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "plan/plan.h"
#include "spec/spec.h"
#include "spec_fixture.h"

#ifndef TPUCI_YAML_DIR
#define TPUCI_YAML_DIR "yaml"
#endif

static char tmp[] = "/tmp/tpuci-yaml-XXXXXX";

static void load_ok(const char *src) {
  int r = load_with(src, TPUCI_YAML_DIR, 0, 0);
  if (r != 0) fail_msg("load failed (%d): %s", r, err.msg ? err.msg : "");
}

/* Expects the load to fail with exactly `want` as its message. */
static void load_says(const char *src, const char *dir, const char *want) {
  int r = load_with(src, dir, 0, 0);
  if (r != TPUCI_ESPEC || err.msg == NULL || strcmp(err.msg, want) != 0)
    fail_msg("expected TPUCI_ESPEC with\n  '%s'\ngot %d:\n  '%s'", want, r,
             err.msg ? err.msg : "(no message)");
  assert_int_equal(plan.ninstances, 0);
}

static void write_file(const char *name, const char *text) { write_file_in(tmp, name, text); }

static int has_warning(const char *want) {
  size_t i;
  for (i = 0; i < plan.warnings.len; i++)
    if (strstr(plan.warnings.items[i], want)) return 1;
  return 0;
}

/* ------------------------------------------------------------------ */

/* The use it is for: a version matrix shared with other tools. */
static void test_matrix(void **state) {
  static const char *names[] = {
      "unit[python=3.10,torch=2.1]", "unit[python=3.10,torch=2.2]",
      "unit[python=3.11,torch=2.1]", "unit[python=3.11,torch=2.2]",
      "unit[python=3.12,torch=2.2]", "tpu[jax=0.4.30]", "tpu[jax=0.4.31]"};
  size_t i;
  (void) state;

  load_ok("local versions = tpuci.yaml(\"versions.yaml\")\n"
          "job \"unit\" {\n"
          "  run = \"pytest\",\n"
          "  matrix = tpuci.yaml(\"versions.yaml\").python,\n"
          "  env = { TORCH = \"${matrix.torch}\" },\n"
          "}\n"
          "job \"tpu\" { run = \"pytest -m tpu\", matrix = versions.tpu }\n");
  assert_int_equal(plan.ninstances, 7);
  for (i = 0; i < 7; i++) assert_string_equal(plan.instances[i].name, names[i]);
  assert_string_equal(plan.instances[4].env.items[0].value, "2.2");
  assert_int_equal(plan.warnings.len, 0);
}

/* Scalars follow YAML 1.2's core schema; quoted ones stay strings. */
static void test_types(void **state) {
  (void) state;
  load_ok(
      "local t = tpuci.yaml('types.yaml')\n"
      "local function is(got, want, mt, what)\n"
      "  local kind = math.type(got) or type(got)\n"
      "  if not (got == want or (want ~= want and got ~= got)) or kind ~= mt then\n"
      "    error(what .. ': got ' .. tostring(got) .. ' (' .. kind .. '), want ' ..\n"
      "          tostring(want) .. ' (' .. mt .. ')', 0)\n"
      "  end\n"
      "end\n"
      "local s = t.strings\n"
      "is(s.plain, 'hello world', 'string', 'plain')\n"
      "is(s.single, \"it's\", 'string', 'single')\n"
      "is(s.double, 'tab\\there \\u{e9}', 'string', 'double')\n"
      "is(s.quoted_true, 'true', 'string', 'quoted_true')\n"
      "is(s.quoted_number, '42', 'string', 'quoted_number')\n"
      "is(s.quoted_null, 'null', 'string', 'quoted_null')\n"
      "is(s.yes_is_a_string, 'yes', 'string', 'yes')\n"
      "is(s.version, '3.10.1', 'string', 'version')\n"
      "is(s.literal, 'line one\\nline two\\n', 'string', 'literal')\n"
      "is(s.folded, 'folded text\\n', 'string', 'folded')\n"
      "local b = t.booleans\n"
      "assert(#b == 6)\n"
      "for i = 1, 3 do is(b[i], true, 'boolean', 'true ' .. i) end\n"
      "for i = 4, 6 do is(b[i], false, 'boolean', 'false ' .. i) end\n"
      "local n = t.integers\n"
      "local want = { 0, 42, -17, 5, 31, 15, 7 }\n"
      "assert(#n == #want)\n"
      "for i = 1, #want do is(n[i], want[i], 'integer', 'integers[' .. i .. ']') end\n"
      "is(t.big, 1e20, 'float', 'big')\n"
      "local f = t.floats\n"
      "want = { 1.5, -0.25, 1000.0, 0.25, 0.5, 3.0, 3.1 }\n"
      "assert(#f == #want)\n"
      "for i = 1, #want do is(f[i], want[i], 'float', 'floats[' .. i .. ']') end\n"
      "is(t.special[1], math.huge, 'float', '.inf')\n"
      "is(t.special[2], -math.huge, 'float', '-.inf')\n"
      "is(t.special[3], 0/0, 'float', '.nan')\n"
      "assert(next(t.nulls) == nil, 'null values leave no key')\n"
      "local l = t.list_with_null\n"
      "is(l[1], 'a', 'string', 'l1'); is(l[2], nil, 'nil', 'l2'); is(l[3], 'c', 'string', 'l3')\n"
      "local g = t.tagged\n"
      "is(g.str, '123', 'string', '!!str')\n"
      "is(g.int, 12, 'integer', '!!int')\n"
      "is(g.float, 3.0, 'float', '!!float')\n"
      "is(g.bool, false, 'boolean', '!!bool')\n"
      "is(g['null'], nil, 'nil', '!!null')\n"
      "is(g.nonspecific, '12', 'string', '! 12')\n"
      "local k = t.keys\n"
      "is(k['1'], 'one', 'string', 'key 1'); is(k[1], nil, 'nil', 'no integer key')\n"
      "is(k['true'], 'yes', 'string', 'key true')\n"
      "is(k['3.10'], 'python', 'string', 'key 3.10')\n"
      "is(k['null'], 'nothing', 'string', 'key null')\n"
      "job 'x' { run = 'true' }\n");
}

/* Nesting, anchors (the alias is the same table), merge keys. */
static void test_nested(void **state) {
  (void) state;
  load_ok(
      "local t = tpuci.yaml('nested.yaml')\n"
      "local d, jobs = t.defaults, t.jobs\n"
      "assert(#jobs == 3)\n"
      "local unit, tpu, lint = jobs[1], jobs[2], jobs[3]\n"
      "assert(unit.name == 'unit' and unit.timeout == '20m', 'merged timeout')\n"
      "assert(unit.retries == 3, 'own key wins over the merged one')\n"
      "assert(unit.env == d.env, 'merged values are the same tables')\n"
      "assert(tpu.timeout == '20m', 'the first merged mapping wins')\n"
      "assert(tpu.memory == '4g' and tpu.retries == 2)\n"
      "assert(tpu.env == d.env, 'an alias is the same table')\n"
      "assert(d.retries == 2, 'merging does not touch the source')\n"
      "assert(next(lint.empty_map) == nil and #lint.empty_list == 0)\n"
      "assert(lint.deep.a[1].b[2][2][1] == 3)\n"
      "assert(rawequal(t.same, t.shared) and t.same[2] == 'y')\n"
      "assert(t.flow.a == 1 and t.flow.b[2] == 3 and t.flow.c.d == 'e')\n"
      "job 'x' { run = 'true', env = t.defaults.env }\n");
  assert_string_equal(plan.instances[0].env.items[0].key, "XLA_FLAGS");
}

/* Each file of yaml/bad/ fails with "spec.lua:1: tpuci.yaml: bad/F:" and
 * the LINE:COL: message its first line announces. */
static void test_bad_files(void **state) {
  char *dir = tpuci__printf("%s/bad", TPUCI_YAML_DIR);
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0, failures = 0;
  (void) state;

  assert_non_null(d);
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    char *path, *text, *nl, *src, *want;
    size_t tlen;
    int r;
    if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0) continue;
    n++;
    path = tpuci__printf("%s/%s", dir, e->d_name);
    assert_int_equal(tpuci__read_file(path, &text, &tlen), 0);
    if (strncmp(text, "# expect: ", 10) != 0) fail_msg("%s: no '# expect: '", path);
    nl = strchr(text, '\n');
    assert_non_null(nl);
    *nl = '\0';
    src = tpuci__printf("local v = tpuci.yaml('bad/%s')\n", e->d_name);
    want = tpuci__printf("spec.lua:1: tpuci.yaml: bad/%s:%s", e->d_name, text + 10);
    r = load_with(src, TPUCI_YAML_DIR, 0, 0);
    if (r != TPUCI_ESPEC || err.msg == NULL || strcmp(err.msg, want) != 0) {
      print_error("%s:\n  want: %s\n  got:  %s (%d)\n", e->d_name, want,
                  err.msg ? err.msg : "(none)", r);
      failures++;
    }
    free(want);
    free(src);
    free(text);
    free(path);
  }
  closedir(d);
  free(dir);
  print_message("%d malformed YAML files checked, %d failed\n", n, failures);
  assert_true(n >= 15);
  assert_int_equal(failures, 0);
}

/* The location is the spec line that called tpuci.yaml, also inside a
 * function, and a pcall sees the same message. */
static void test_error_location(void **state) {
  (void) state;
  load_says("local function load(p)\n"
            "  return tpuci.yaml(p)\n"
            "end\n"
            "local m = load('bad/mapping-value.yaml')\n",
            TPUCI_YAML_DIR,
            "spec.lua:2: tpuci.yaml: bad/mapping-value.yaml:4:7: mapping values "
            "are not allowed in this context");
  load_ok("local ok, e = pcall(function() return tpuci.yaml('bad/tab.yaml') end)\n"
          "assert(not ok)\n"
          "assert(e == 'spec.lua:1: tpuci.yaml: bad/tab.yaml:3:1: found character '\n"
          "  .. 'that cannot start any token (a tab: YAML indents with spaces only)', e)\n"
          "job 'x' { run = 'true' }\n");
}

/* Paths: like tpuci.read_file. */
static void test_paths(void **state) {
  char *src;
  (void) state;

  load_says("tpuci.yaml('/etc/hosts')", TPUCI_YAML_DIR,
            "spec.lua:1: tpuci.yaml: '/etc/hosts' is absolute; give a path "
            "relative to the spec's folder");
  load_says("tpuci.yaml('bad/../../yaml/versions.yaml')", TPUCI_YAML_DIR,
            "spec.lua:1: tpuci.yaml: 'bad/../../yaml/versions.yaml' leaves the "
            "spec's folder");
  load_says("tpuci.yaml('../CMakeLists.txt')", TPUCI_YAML_DIR,
            "spec.lua:1: tpuci.yaml: '../CMakeLists.txt' leaves the spec's folder");
  load_says("tpuci.yaml('missing.yaml')", TPUCI_YAML_DIR,
            "spec.lua:1: tpuci.yaml: cannot read 'missing.yaml': No such file "
            "or directory");
  load_says("tpuci.yaml('bad')", TPUCI_YAML_DIR,
            "spec.lua:1: tpuci.yaml: 'bad' is a folder, not a regular file");
  load_says("tpuci.yaml('')", TPUCI_YAML_DIR, "spec.lua:1: tpuci.yaml: bad path ''");
  assert_int_equal(load_with("tpuci.yaml({})", TPUCI_YAML_DIR, 0, 0), TPUCI_ESPEC);
  assert_non_null(strstr(err.msg, "string expected, got table"));

  src = tpuci__printf("%s/link.yaml", tmp);
  assert_int_equal(symlink("/etc/passwd", src), 0);
  free(src);
  load_says("tpuci.yaml('link.yaml')", tmp,
            "spec.lua:1: tpuci.yaml: 'link.yaml' leaves the spec's folder "
            "(through a symbolic link)");

  /* Empty streams are nil; a document of its own may be a bare scalar. */
  write_file("empty.yaml", "");
  write_file("comments.yaml", "# nothing here\n\n");
  write_file("scalar.yaml", "--- 42\n...\n");
  write_file("list.yaml", "- a\n- b\n");
  assert_int_equal(load_with("assert(tpuci.yaml('empty.yaml') == nil)\n"
                             "assert(tpuci.yaml('comments.yaml') == nil)\n"
                             "assert(tpuci.yaml('scalar.yaml') == 42)\n"
                             "assert(tpuci.yaml('./list.yaml')[2] == 'b')\n"
                             "job 'x' { run = 'true' }\n",
                             tmp, 0, 0),
                   0);
}

/* Nesting is capped at 100 levels, before the C stack could suffer. */
static void test_deep(void **state) {
  tpuci__buf_t b;
  int i;
  (void) state;

  tpuci__buf_init(&b);
  for (i = 0; i < 100; i++) tpuci__buf_adds(&b, "[");
  tpuci__buf_adds(&b, "1");
  for (i = 0; i < 100; i++) tpuci__buf_adds(&b, "]");
  write_file("deep100.yaml", b.data);
  b.len = 0;
  for (i = 0; i < 101; i++) tpuci__buf_adds(&b, "[");
  for (i = 0; i < 101; i++) tpuci__buf_adds(&b, "]");
  write_file("deep101.yaml", b.data);
  b.len = 0;
  for (i = 0; i < 200000; i++) tpuci__buf_adds(&b, "{a: ");
  write_file("deep-unclosed.yaml", b.data);
  b.len = 0;
  for (i = 0; i < 101; i++) tpuci__buf_addf(&b, "%*sk:\n", i, "");
  write_file("deep-block.yaml", b.data);
  tpuci__buf_free(&b);

  assert_int_equal(load_with("local v = tpuci.yaml('deep100.yaml')\n"
                             "for i = 1, 100 do v = v[1] end\n"
                             "assert(v == 1)\n"
                             "job 'x' { run = 'true' }\n",
                             tmp, 0, 0),
                   0);
  load_says("tpuci.yaml('deep101.yaml')", tmp,
            "spec.lua:1: tpuci.yaml: deep101.yaml:1:101: nested deeper than "
            "100 levels");
  load_says("tpuci.yaml('deep-unclosed.yaml')", tmp,
            "spec.lua:1: tpuci.yaml: deep-unclosed.yaml:1:401: nested deeper "
            "than 100 levels");
  load_says("tpuci.yaml('deep-block.yaml')", tmp,
            "spec.lua:1: tpuci.yaml: deep-block.yaml:101:101: nested deeper "
            "than 100 levels");
}

/* The file and everything built from it count against the memory limit;
 * a spec that catches the failure with pcall goes on. */
static void test_memory_limit(void **state) {
  tpuci__buf_t b;
  int i, r;
  (void) state;

  tpuci__buf_init(&b);
  for (i = 0; i < 200000; i++) tpuci__buf_addf(&b, "- item%d\n", i);
  write_file("big.yaml", b.data);
  tpuci__buf_free(&b);

  r = load_with("local v = tpuci.yaml('big.yaml')\n", tmp, 0, 4u * 1024 * 1024);
  assert_int_equal(r, TPUCI_ELIMIT);
  assert_string_equal(err.msg, "spec.lua: spec used more than 4 MiB while loading");

  r = load_with("local ok, e = pcall(tpuci.yaml, 'big.yaml')\n"
                "assert(not ok and e == 'not enough memory', e)\n"
                "job 'x' { run = 'true' }\n",
                tmp, 0, 4u * 1024 * 1024);
  if (r != 0) fail_msg("%d: %s", r, err.msg);
  assert_int_equal(plan.ninstances, 1);

  /* No memory cap, and room on the clock: 200,000 items under ASan on a
   * loaded machine took longer than the default 5 s (what is tested is
   * the memory, not the speed). */
  r = load_with("local v = tpuci.yaml('big.yaml')\n"
                "assert(#v == 200000 and v[200000] == 'item199999')\n"
                "job 'x' { run = 'true' }\n",
                tmp, 120000, 0);
  if (r != 0) fail_msg("%d: %s", r, err.msg);
}

/* The memory limit hit at many points while a file is read: every load
 * either succeeds or fails with TPUCI_ELIMIT (and, under ASan, leaks
 * nothing of libyaml's). */
static void test_memory_sweep(void **state) {
  const char *src = "local b = tpuci.yaml('many.yaml')\n"
                    "assert(#b == 1001 and b[1001].k.z == b[1] and b[9].y[1] == 2)\n"
                    "job 'x' { run = 'true' }\n";
  size_t limit, lo = 1024, hi = 8u * 1024 * 1024;
  int i, ok = 0, limited = 0;
  tpuci__buf_t b;
  (void) state;

  tpuci__buf_init(&b);
  tpuci__buf_adds(&b, "- &first {name: first}\n");
  for (i = 0; i < 1000; i++)
    tpuci__buf_addf(&b, "- &a%d {name: item%d, v: [%d, 2.5, true, ~, 'q'], "
                        "<<: {x: 1, y: [2]}, k: {z: *first}}\n", i, i, i);
  write_file("many.yaml", b.data);
  tpuci__buf_free(&b);
  /* The least memory the whole load needs... */
  if (load_with(src, tmp, 0, hi) != 0) fail_msg("%s", err.msg);
  while (lo + 64 < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (load_with(src, tmp, 0, mid) == 0)
      hi = mid;
    else
      lo = mid;
  }
  /* ... and below it, in steps, down to where reading starts. */
  for (limit = hi; limit > 64u * 1024 && limit + 512u * 1024 > hi; limit -= 4096) {
    int r = load_with(src, tmp, 0, limit);
    if (r == 0) ok++;
    else if (r == TPUCI_ELIMIT) limited++;
    else fail_msg("limit %zu: %d: %s", limit, r, err.msg);
  }
  print_message("%zu bytes suffice; %d loads fit, %d hit the limit\n", hi, ok,
                limited);
  assert_true(ok > 0);
  assert_true(limited > 50);
}

/* A file that takes longer to read than the load may is stopped inside
 * tpuci.yaml, and pcall cannot swallow that. */
static void test_time_limit(void **state) {
  tpuci__buf_t b;
  uint64_t t0;
  int i, r;
  (void) state;

  tpuci__buf_init(&b);
  for (i = 0; i < 3000000; i++) tpuci__buf_adds(&b, "- x\n");
  write_file("long.yaml", b.data);
  tpuci__buf_free(&b);

  t0 = tpuci__now_ms();
  /* Were the deadline only seen by the hook once tpuci.yaml returned, the
   * error on line 2 would come first. */
  r = load_with("local ok = pcall(tpuci.yaml, 'long.yaml')\n"
                "error('not stopped inside tpuci.yaml', 0)\n",
                tmp, 100, 0);
  assert_int_equal(r, TPUCI_ELIMIT);
  assert_string_equal(err.msg, "spec.lua:1: spec took longer than 100ms to load "
                               "(stopped in tpuci.yaml)");
  /* Stopped soon after the deadline, not at the end of the file. */
  if (tpuci__now_ms() - t0 > 3000) fail_msg("took %llu ms",
                                            (unsigned long long) (tpuci__now_ms() - t0));
}

/* A malformed version matrix is reported through the matrix check, like
 * a written one; plain 3.10 is the number 3.1, with the usual warning. */
static void test_matrix_from_yaml_checked(void **state) {
  int r;
  (void) state;
  write_file("unquoted.yaml", "python: [3.10, 3.11]\n");
  r = load_with("job 'unit' { run = 'x', matrix = tpuci.yaml('unquoted.yaml') }\n",
                tmp, 0, 0);
  if (r != 0) fail_msg("%d: %s", r, err.msg);
  assert_string_equal(plan.instances[0].name, "unit[python=3.1]");
  assert_true(has_warning("quote versions"));
  write_file("scalar-matrix.yaml", "python: \"3.10\"\n");
  load_says("job 'unit' { run = 'x', matrix = tpuci.yaml('scalar-matrix.yaml') }\n",
            tmp,
            "spec.lua:1: job 'unit': matrix.python: expected a list of values, "
            "got string (write python = { ... })");
}

static int group_setup(void **state) {
  (void) state;
  return mkdtemp(tmp) == NULL ? -1 : 0;
}

static int group_teardown(void **state) {
  char *cmd = tpuci__printf("rm -rf '%s'", tmp);
  int r = system(cmd);
  (void) state;
  free(cmd);
  return r == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_matrix, setup, teardown),
    cmocka_unit_test_setup_teardown(test_types, setup, teardown),
    cmocka_unit_test_setup_teardown(test_nested, setup, teardown),
    cmocka_unit_test_setup_teardown(test_bad_files, setup, teardown),
    cmocka_unit_test_setup_teardown(test_error_location, setup, teardown),
    cmocka_unit_test_setup_teardown(test_paths, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deep, setup, teardown),
    cmocka_unit_test_setup_teardown(test_memory_limit, setup, teardown),
    cmocka_unit_test_setup_teardown(test_memory_sweep, setup, teardown),
    cmocka_unit_test_setup_teardown(test_time_limit, setup, teardown),
    cmocka_unit_test_setup_teardown(test_matrix_from_yaml_checked, setup, teardown),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
