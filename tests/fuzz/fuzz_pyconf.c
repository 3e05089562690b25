/* libFuzzer harness for pytest's configuration files, which `tpuci init`
 * reads from any project (core/kind/pytest/pyconf.h): the same bytes as
 * pyproject.toml (the TOML reader), as pytest.ini (the INI reader with
 * [pytest]) and as setup.cfg ([tool:pytest]), then the starting spec
 * written from what was read (core/kind/pytest/init.h).
 *
 * Oracles beyond "no crash, no sanitizer report":
 * - a reader returns 0 or TPUCI_ESPEC with one line that starts with the
 *   file's name and a line number;
 * - what it keeps is within the caps: at most TPUCI__PYCONF_MAX_ITEMS
 *   entries of at most TPUCI__PYCONF_MAX_VALUE bytes, valid UTF-8;
 * - the spec written from it loads (the real loader) without a warning,
 *   and has at least one job.
 * See run.sh (clang, -fsanitize=fuzzer) and replay.c (any compiler, the
 * corpus only). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind/pytest/init.h"
#include "kind/pytest/pyconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                          \
  do {                                                                    \
    if (!(c)) {                                                           \
      fprintf(stderr, "fuzz_pyconf: %s:%d: check failed: %s\n", __FILE__, \
              __LINE__, #c);                                              \
      abort();                                                            \
    }                                                                     \
  } while (0)

static void check_list(const tpuci__strv_t *v) {
  size_t k, at;
  CHECK(v->len <= TPUCI__PYCONF_MAX_ITEMS);
  for (k = 0; k < v->len; k++) {
    CHECK(strlen(v->items[k]) <= TPUCI__PYCONF_MAX_VALUE);
    CHECK(tpuci__text_problem(v->items[k], strlen(v->items[k]), &at) == NULL);
  }
}

/* The spec init writes for conf loads, warns of nothing, has jobs. */
static void check_spec(tpuci__pyconf_t *conf, const char *file) {
  tpuci__init_opts_t o = {"tpuci.lua", ".", "fuzz", 0, NULL, 0, {0}};
  tpuci_ctx_t *ctx;
  char *text, *summary = NULL;
  conf->file = tpuci__strdup(file);
  if (conf->section == NULL) conf->section = tpuci__strdup("[pytest]");
  text = tpuci__init_spec(conf, &o, &summary);
  CHECK(text != NULL && summary != NULL && strchr(summary, '\n') == NULL);
  CHECK(tpuci_ctx_new(&ctx, NULL) == 0);
  if (tpuci_load_string(ctx, text, strlen(text), "tpuci.lua") != 0) {
    fprintf(stderr, "fuzz_pyconf: the spec does not load: %s\n%s\n", tpuci_last_error(ctx), text);
    abort();
  }
  if (tpuci_warning_count(ctx) != 0) {
    fprintf(stderr, "fuzz_pyconf: the spec warns: %s\n%s\n", tpuci_warning(ctx, 0), text);
    abort();
  }
  CHECK(tpuci_instance_count(ctx) >= 1);
  tpuci_ctx_free(ctx);
  free(text);
  free(summary);
}

static void one(const char *file, const char *section, const char *text, size_t size) {
  tpuci__pyconf_t conf;
  tpuci__err_t err = {0, NULL};
  int r;
  tpuci__pyconf_init(&conf);
  r = section ? tpuci__pyconf_ini(text, size, file, section, &conf, &err)
              : tpuci__pyconf_toml(text, size, file, &conf, &err);
  if (r != 0) {
    CHECK(r == TPUCI_ESPEC && err.msg != NULL);
    CHECK(strncmp(err.msg, file, strlen(file)) == 0 && err.msg[strlen(file)] == ':');
    CHECK(strchr(err.msg, '\n') == NULL);
  } else {
    check_list(&conf.markers);
    check_list(&conf.testpaths);
    check_list(&conf.python_files);
    if (conf.found) check_spec(&conf, file);
  }
  tpuci__err_clear(&err);
  tpuci__pyconf_free(&conf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* An exact copy: a read past the end is ASan's to see. */
  char *text;
  if (size > TPUCI__PYCONF_MAX_BYTES) return 0;
  text = malloc(size ? size : 1);
  memcpy(text, data, size);
  one("pyproject.toml", NULL, text, size);
  one("pytest.ini", "pytest", text, size);
  one("setup.cfg", "tool:pytest", text, size);
  free(text);
  return 0;
}
