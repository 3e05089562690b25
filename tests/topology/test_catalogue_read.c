/* Reading a TPU catalogue from YAML (core/plan/topology_read.c): a small
 * valid catalogue and what the reader makes of it, then that catalogue
 * with one thing wrong at a time, each refused with the file, line and
 * column of the culprit and what is wrong with it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan/topology.h"

/* Two generations; "v9" has a type with two layouts and a row with its
 * own source for the topology. Line numbers matter to the cases below. */
static const char good[] =
    "- generation: v9\n"                                        /* 1 */
    "  cores_per_chip: 2\n"                                     /* 2 */
    "  devices: per_chip\n"                                     /* 3 */
    "  name_counts: cores\n"                                    /* 4 */
    "  process_bounds: true\n"                                  /* 5 */
    "  gke_accelerator: tpu-v9-slice\n"                         /* 6 */
    "  sources: &src\n"                                         /* 7 */
    "    layout: L\n"                                           /* 8 */
    "    topology: T\n"                                         /* 9 */
    "    host_bounds: HB\n"                                     /* 10 */
    "    chips_per_host_bounds: CB\n"                           /* 11 */
    "    cores_per_chip: C\n"                                   /* 12 */
    "    devices: D\n"                                          /* 13 */
    "    name_counts: N\n"                                      /* 14 */
    "    process_bounds: P\n"                                   /* 15 */
    "    gke_accelerator: G\n"                                  /* 16 */
    "    machine_type: M\n"                                     /* 17 */
    "  types:\n"                                                /* 18 */
    "    - {type: v9-16, layout: 2x4, topology: 2x2x2, host_bounds: \"1,1,2\", machine_type: m4}\n"
    "    - {type: v9-16, layout: 1x8, topology: 2x4, host_bounds: \"1,1,1\", machine_type: m8,\n"
    "       sources: {topology: T8}}\n"                         /* 21 */
    "    - {type: v9-2, layout: 1x1, topology: 1x1, host_bounds: \"1,1,1\", machine_type: m1}\n"
    "- generation: w1\n"                                        /* 23 */
    "  cores_per_chip: 2\n"                                     /* 24 */
    "  devices: per_core\n"                                     /* 25 */
    "  name_counts: chips\n"                                    /* 26 */
    "  process_bounds: false\n"                                 /* 27 */
    "  gke_accelerator: ~\n"                                    /* 28 */
    "  sources: *src\n"                                         /* 29 */
    "  types:\n"                                                /* 30 */
    "    - {type: w1-8, layout: 2x4, topology: 4x2, host_bounds: \"2,1,1\"}\n";

/* good[] with `from` (which must occur once) replaced by `to`. */
static char *edit(const char *from, const char *to) {
  const char *at = strstr(good, from);
  char *s;
  size_t n;
  assert_non_null(at);
  assert_null(strstr(at + 1, from));
  n = strlen(good) - strlen(from) + strlen(to);
  s = malloc(n + 1);
  memcpy(s, good, (size_t) (at - good));
  strcpy(s + (at - good), to);
  strcat(s, at + strlen(from));
  return s;
}

static void refused(const char *text, const char *want) {
  tpuci__tpu_catalogue_t *c = (tpuci__tpu_catalogue_t *) 1;
  tpuci__err_t err = {0, NULL};
  assert_int_equal(tpuci__tpu_catalogue_read("cat.yaml", text, strlen(text),
                                             &c, &err),
                   TPUCI_ESPEC);
  assert_null(c);
  assert_int_equal(err.code, TPUCI_ESPEC);
  if (strcmp(err.msg, want) != 0) {
    print_error("want: %s\ngot:  %s\n", want, err.msg);
    fail();
  }
  tpuci__err_clear(&err);
}

static void refused_edit(const char *from, const char *to, const char *want) {
  char *text = edit(from, to);
  refused(text, want);
  free(text);
}

/* ------------------------------------------------------------------ */

static void test_good(void **state) {
  tpuci__tpu_catalogue_t *c = NULL;
  tpuci__err_t err = {0, NULL};
  const tpuci__tpu_type_t *t;
  (void) state;
  assert_int_equal(tpuci__tpu_catalogue_read("cat.yaml", good, strlen(good),
                                             &c, &err),
                   0);
  assert_null(err.msg);
  assert_int_equal(tpuci__tpu_catalogue_rows(c), 4);
  assert_null(tpuci__tpu_catalogue_row(c, 4));

  t = tpuci__tpu_catalogue_row(c, 0);
  assert_string_equal(t->type, "v9-16");
  assert_string_equal(t->generation, "v9");
  assert_string_equal(t->gen->name, "v9");
  assert_true(t->is_default_layout);
  assert_int_equal(t->hosts, 2);
  assert_int_equal(t->chips_per_host, 4);
  assert_int_equal(t->cores_per_chip, 2);
  assert_int_equal(t->devices_per_host, 4); /* per_chip */
  assert_string_equal(t->chips_per_host_bounds, "2,2,1"); /* worked out */
  assert_string_equal(t->gke_accelerator, "tpu-v9-slice");
  assert_string_equal(t->machine_type, "m4");
  assert_string_equal(t->sources[1], "T");
  assert_string_equal(t->sources[9], "M");
  assert_int_equal(t->gen->process_bounds, 1);
  assert_int_equal(t->gen->name_counts_chips, 0);

  t = tpuci__tpu_catalogue_row(c, 1); /* the second layout of v9-16 */
  assert_false(t->is_default_layout);
  assert_string_equal(t->layout, "1x8");
  assert_int_equal(t->devices_per_host, 8);
  assert_string_equal(t->chips_per_host_bounds, "2,4,1");
  assert_string_equal(t->sources[1], "T8"); /* its own */
  assert_string_equal(t->sources[0], "L");  /* the generation's */

  t = tpuci__tpu_catalogue_row(c, 2);
  assert_true(t->is_default_layout);
  assert_string_equal(t->chips_per_host_bounds, "1,1,1");

  /* w1: per_core devices, names count chips, not on GKE; the alias gave
   * it v9's sources, and machine_type has none off GKE. */
  t = tpuci__tpu_catalogue_row(c, 3);
  assert_string_equal(t->type, "w1-8");
  assert_int_equal(t->devices_per_host, 8);
  assert_null(t->gke_accelerator);
  assert_null(t->machine_type);
  assert_null(t->sources[9]);
  assert_string_equal(t->sources[0], "L");
  assert_int_equal(t->gen->process_bounds, 0);
  assert_int_equal(t->gen->name_counts_chips, 1);
  assert_int_equal(t->gen->device_per_core, 1);

  assert_string_equal(tpuci__tpu_source_key(0), "layout");
  assert_string_equal(tpuci__tpu_source_key(TPUCI__TPU_NSOURCES - 1),
                      "machine_type");
  assert_null(tpuci__tpu_source_key(TPUCI__TPU_NSOURCES));
  tpuci__tpu_catalogue_free(c);
}

static void test_not_a_catalogue(void **state) {
  (void) state;
  refused("", "cat.yaml:1:1: the catalogue is empty");
  refused("generations: []\n",
          "cat.yaml:1:1: the catalogue must be a list of generations");
  refused("- [v4]\n", "cat.yaml:1:3: a generation must be a mapping");
  refused_edit("  types:\n    - {type: w1-8",
               "  types:\n    - {type: w1-8]",
               "cat.yaml:31:18: did not find expected ',' or '}' while "
               "parsing a flow mapping");
  {
    char *two = malloc(sizeof(good) + 8);
    strcpy(two, good);
    strcat(two, "---\n- x\n");
    refused(two, "cat.yaml:32:1: a second document");
    free(two);
  }
}

static void test_generation(void **state) {
  (void) state;
  refused_edit("  name_counts: chips\n", "  name_count: chips\n",
               "cat.yaml:26:3: generation w1: unknown key 'name_count' in "
               "a generation");
  refused_edit("  process_bounds: false\n",
               "  process_bounds: false\n  cores_per_chip: 1\n",
               "cat.yaml:28:3: generation w1: 'cores_per_chip' is given "
               "twice");
  refused_edit("- generation: w1\n", "- generation: v9\n",
               "cat.yaml:23:3: generation v9 is listed twice");
  refused_edit("  cores_per_chip: 2\n  devices: per_core",
               "  cores_per_chip: 4\n  devices: per_core",
               "cat.yaml:24:19: generation w1: cores_per_chip must be 1 or "
               "2, got '4'");
  refused_edit("  devices: per_core\n", "  devices: 2\n",
               "cat.yaml:25:12: generation w1: 'devices' must be per_chip "
               "or per_core, got '2'");
  refused_edit("  process_bounds: false\n", "  process_bounds: no\n",
               "cat.yaml:27:19: generation w1: 'process_bounds' must be "
               "false or true, got 'no'");
  refused_edit("  name_counts: chips\n", "",
               "cat.yaml:23:3: generation w1: no 'name_counts'");
  refused_edit("  gke_accelerator: ~\n", "",
               "cat.yaml:23:3: generation w1: no 'gke_accelerator' (~ when "
               "GKE does not offer it)");
  refused_edit("  types:\n    - {type: w1-8, layout: 2x4, topology: 4x2, "
               "host_bounds: \"2,1,1\"}\n",
               "  types: []\n",
               "cat.yaml:30:10: generation w1: 'types' must be a list of "
               "types");
}

static void test_sources(void **state) {
  (void) state;
  refused_edit("    topology: T\n", "",
               "cat.yaml:18:7: v9-16: no source for 'topology' (give one in "
               "the generation's or the type's sources)");
  refused_edit("    devices: D\n", "    device: D\n",
               "cat.yaml:13:5: generation v9: unknown key 'device' in "
               "sources");
  refused_edit("    devices: D\n", "    devices: \"\"\n",
               "cat.yaml:13:14: generation v9: the source of 'devices' must "
               "be text");
  refused_edit("sources: {topology: T8}", "sources: {topologie: T8}",
               "cat.yaml:21:18: v9-16: unknown key 'topologie' in sources");
}

static void test_type(void **state) {
  (void) state;
  refused_edit("type: v9-2,", "kind: v9-2,",
               "cat.yaml:22:8: generation v9: unknown key 'kind' in a type");
  refused_edit("type: v9-2,", "type: v9-4,",
               "cat.yaml:22:14: v9-4: a layout of 1x1 has 2 TensorCores: the "
               "name must be <prefix>-2");
  refused_edit("type: w1-8,", "type: w1-16,",
               "cat.yaml:31:14: w1-16: a layout of 2x4 has 8 chips: the name "
               "must be <prefix>-8");
  refused_edit("layout: 1x1,", "layout: 1x3,",
               "cat.yaml:22:28: v9-2: layout '1x3' must be <hosts 1..256>x"
               "<chips 1, 2, 4 or 8>");
  refused_edit("layout: 1x1,", "layout: \"1x01\",",
               "cat.yaml:22:28: v9-2: layout '1x01' must be <hosts 1..256>x"
               "<chips 1, 2, 4 or 8>");
  refused_edit("topology: 1x1,", "topology: 1x1x1x1,",
               "cat.yaml:22:43: v9-2: topology '1x1x1x1' must be AxB or "
               "AxBxC");
  refused_edit("topology: 2x2x2,", "topology: 2x2x4,",
               "cat.yaml:19:44: v9-16: topology 2x2x4 is not host bounds "
               "1,1,2 x chips per host bounds 2,2,1");
  refused_edit("host_bounds: \"2,1,1\"", "host_bounds: \"1,2,1\"",
               "cat.yaml:31:43: w1-8: topology 4x2 is not host bounds 1,2,1 "
               "x chips per host bounds 2,2,1");
  refused_edit("host_bounds: \"2,1,1\"", "host_bounds: \"1,1,1\"",
               "cat.yaml:31:61: w1-8: host_bounds 1,1,1 make 1 host, layout "
               "2x4 has 2");
  refused_edit("host_bounds: \"2,1,1\"", "host_bounds: \"2,1\"",
               "cat.yaml:31:61: w1-8: host_bounds '2,1' must be a,b,c");
  refused_edit("host_bounds: \"2,1,1\"}", "host_bounds: \"2,1,1\", "
               "machine_type: m}",
               "cat.yaml:31:84: w1-8: a machine_type needs the generation's "
               "gke_accelerator");
  refused_edit(", machine_type: m1}", "}",
               "cat.yaml:22:7: v9-2: no 'machine_type'");
  refused_edit("machine_type: m1}", "machine_type: ~}",
               "cat.yaml:22:84: v9-2: 'machine_type' must be text");
  refused_edit("layout: 1x8, topology: 2x4, host_bounds: \"1,1,1\"",
               "layout: 2x4, topology: 2x2x2, host_bounds: \"1,1,2\"",
               "cat.yaml:20:7: v9-16: layout 2x4 is listed twice");
  /* A type of another generation: names are unique across the file. */
  refused_edit("host_bounds: \"2,1,1\"}\n",
               "host_bounds: \"2,1,1\"}\n"
               "    - {type: v9-16, layout: 4x4, topology: 4x4, "
               "host_bounds: \"2,2,1\"}\n",
               "cat.yaml:32:7: v9-16: the layouts of v9-16 must be next to "
               "each other");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_good),   cmocka_unit_test(test_not_a_catalogue),
      cmocka_unit_test(test_generation), cmocka_unit_test(test_sources),
      cmocka_unit_test(test_type),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
