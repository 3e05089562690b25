/* The starting spec `tpuci init` writes for a Python project (init.c;
 * docs/cli.md, "tpuci init"), from its pytest configuration (pyconf.h):
 * a pytest job per family of registered markers, and one for the tests
 * none of them marks, so that together they run every test once.
 *
 * A family is the markers of one kind: names that say multi-host
 * (multihost, multinode, multislice, multiworker, distributed, dist,
 * pod) make one job on a two-host emulated TPU v4-16 (a gang); names
 * with "tpu" one job on a single-host v4-8; any other names one job per
 * first word ("integration" and "integration_db" together), at most
 * TPUCI__INIT_MAX_PLAIN of them, the rest running with the unmarked
 * tests. A test with markers of several families runs in the first
 * family's job, in that order (multi-host, TPU, the others as
 * registered): each job's -m expression leaves out the earlier
 * families' markers. pytest's own markers (skip, xfail, ...) are no
 * family. Part of core/kind/pytest/ (pytest_run.h says what it may use). */
#ifndef TPUCI_PYTEST_INIT_H
#define TPUCI_PYTEST_INIT_H

#include "kind/pytest/pyconf.h"

#define TPUCI__INIT_MAX_PLAIN 8
#define TPUCI__INIT_MAX_SCAN 300

typedef struct {
  /* The spec's file name, for its comments ("tpuci.lua"). */
  const char *spec_name;
  /* The project's folder as the spec names it (its mounts), relative to
   * the spec's folder: "." when the spec is written into it. */
  const char *project;
  /* A name for the image: the project folder's, made an image name
   * ("mylib"); "project" when it has none. */
  const char *image_name;
  int dockerfile; /* the folder has a Dockerfile */
  /* The first file of the project that names JAX, or NULL: the topologies
   * then emulate "jax". */
  const char *jax;
  /* The project keeps its packages under src/ (a src layout): the tests
   * import them with PYTHONPATH=src, not from a copy in the image. */
  int src_layout;
  /* The project's top-level files and folders that count for the results
   * cache (all but its docs, hidden and build folders), sorted; empty:
   * the spec writes no inputs. Owned by the caller (tpuci__init_probe
   * fills it). */
  tpuci__strv_t counted;
} tpuci__init_opts_t;

/* What `dir` tells of the project besides pytest's configuration: a
 * Dockerfile; a src layout and the top-level entries that count (o's
 * src_layout and counted); the first file that names JAX ("jax" at the start of a
 * word, in any case: "import jax", "jaxlib", "JAX_PLATFORMS") among
 * pyproject.toml, setup.cfg, setup.py, requirements*.txt, conftest.py
 * and the Python files of the test folders (conf's testpaths, else tests/
 * and test/; three levels deep, at most TPUCI__INIT_MAX_SCAN files), a
 * new string in *jax or NULL; and the folder's name made an image name,
 * a new string in *image_name. */
void tpuci__init_probe(const char *dir, const tpuci__pyconf_t *conf, tpuci__init_opts_t *o,
                       char **image_name, char **jax);

/* The spec's text (a new string), with a comment for each choice, for a
 * project whose configuration is `conf` (conf->file NULL: none, then one
 * pytest job runs every test; an empty test path is left out). *summary
 * gets one line saying what was read and which jobs were proposed (a new
 * string). */
char *tpuci__init_spec(const tpuci__pyconf_t *conf, const tpuci__init_opts_t *o, char **summary);

#endif /* TPUCI_PYTEST_INIT_H */
