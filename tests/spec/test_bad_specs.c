/* Every malformed spec in tests/spec/bad/ must be refused with one line
 * that starts with "<file>:<line>: " and contains the text its first line
 * announces ("-- expect: <text>"). The folder comes from argv[1] or the
 * TPUCI_BAD_SPECS compile definition. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kind/kinds.h"
#include "spec/spec.h"

#ifndef TPUCI_BAD_SPECS
#define TPUCI_BAD_SPECS "bad"
#endif

static const char *bad_dir = TPUCI_BAD_SPECS;

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Checks one spec; returns 0 or prints why it failed and returns 1. */
static int check_one(const char *name) {
  char *path = tpuci__printf("%s/%s", bad_dir, name), *chunk, *want, *nl;
  const tpuci__kind_spec_t *kinds[TPUCI__NKINDS + 1];
  tpuci__spec_limits_t limits = {2000, 64u * 1024 * 1024, 0, kinds};
  tpuci__err_t err = {0, NULL};
  tpuci__plan_t plan;
  size_t len, n = strlen(name);
  int r, bad = 0;
  const char *msg;

  tpuci__kind_specs(kinds);

  if (tpuci__read_file(path, &chunk, &len) != 0) {
    print_error("%s: cannot read\n", path);
    free(path);
    return 1;
  }
  if (strncmp(chunk, "-- expect: ", 11) != 0) {
    print_error("%s: first line is not '-- expect: <text>'\n", name);
    free(chunk);
    free(path);
    return 1;
  }
  nl = strchr(chunk, '\n');
  want = tpuci__strndup(chunk + 11, nl ? (size_t) (nl - chunk - 11) : strlen(chunk + 11));

  tpuci__plan_init(&plan);
  r = tpuci__spec_load(&plan, chunk, len, name, bad_dir, &limits, &err);
  msg = err.msg ? err.msg : "";
  if (r != TPUCI_ESPEC && r != TPUCI_ELIMIT) {
    print_error("%s: expected TPUCI_ESPEC, got %d (%s)\n", name, r, msg);
    bad = 1;
  } else if (strstr(msg, want) == NULL) {
    print_error("%s:\n  want: %s\n  got:  %s\n", name, want, msg);
    bad = 1;
  } else if (strncmp(msg, name, n) != 0 || msg[n] != ':' ||
             msg[n + 1] < '0' || msg[n + 1] > '9') {
    print_error("%s: message does not start with '%s:LINE:': %s\n", name, name, msg);
    bad = 1;
  } else if (strchr(msg, '\n') != NULL) {
    print_error("%s: message is more than one line: %s\n", name, msg);
    bad = 1;
  } else if (plan.ninstances != 0) {
    print_error("%s: a failed load left %zu instances\n", name, plan.ninstances);
    bad = 1;
  }
  tpuci__plan_free(&plan);
  tpuci__err_clear(&err);
  free(want);
  free(chunk);
  free(path);
  return bad;
}

static void test_bad_specs(void **state) {
  DIR *d = opendir(bad_dir);
  struct dirent *e;
  tpuci__strv_t names = {NULL, 0, 0};
  size_t i;
  int failures = 0;

  (void) state;
  if (d == NULL) fail_msg("cannot open %s", bad_dir);
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (n > 4 && strcmp(e->d_name + n - 4, ".lua") == 0)
      tpuci__strv_push(&names, e->d_name);
  }
  closedir(d);
  if (names.len > 0) qsort(names.items, names.len, sizeof(char *), cmp_names);
  for (i = 0; i < names.len; i++) failures += check_one(names.items[i]);
  print_message("%zu malformed specs checked, %d failed\n", names.len, failures);
  assert_true(names.len >= 30);
  assert_int_equal(failures, 0);
  tpuci__strv_free(&names);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bad_specs),
  };
  if (argc > 1) bad_dir = argv[1];
  return cmocka_run_group_tests(tests, NULL, NULL);
}
