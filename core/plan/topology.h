/* Emulated TPU topologies: the built-in catalogue of accelerator types,
 * resolved slices, and the environment each emulated host gets.
 *
 * Pure data: nothing here does I/O, starts a container or knows about Lua.
 * The facts come from /work/shared/tpu-topology.md (cited per value in
 * topology_catalogue.yaml and in docs/topology.md).
 *
 * Messages: errors are one line without a location and without the
 * topology's name ("hosts must be 1..256, got 300"); the caller prefixes
 * "spec.lua:3: topology 'x': ". Warnings follow the same rule. */
#ifndef TPUCI_TOPOLOGY_H
#define TPUCI_TOPOLOGY_H

#include <stddef.h>

#include "base/util.h"

/* ------------------------------------------------------------------ */
/* The catalogue                                                       */

/* The catalogue is data: core/plan/topology_catalogue.yaml, compiled into
 * the library (cmake/embed.cmake) and read once, on first use, by
 * topology_read.c. The build runs the same reader on the file
 * (cmake/check_catalogue.c), so the built-in data always reads; should it
 * not (a library built without that check), the first lookup writes
 * "tpuci: built-in TPU catalogue: FILE:LINE:COL: ..." to stderr and
 * aborts, as an allocation failure does. */

/* What every type of one TPU generation shares. */
typedef struct {
  const char *name;            /* "v2" "v3" "v4" "v5p" "v5e" "v6e" "tpu7x" */
  int cores_per_chip;          /* TensorCores */
  int device_per_core;         /* a framework sees each TensorCore as a
                                * device (v2, v3), else each chip */
  int name_counts_chips;       /* N in "<prefix>-N" counts chips, else cores */
  int process_bounds;          /* hosts get TPU_PROCESS_BOUNDS and
                                * TPU_CHIPS_PER_PROCESS_BOUNDS */
  const char *gke_accelerator; /* NULL: not on GKE */
} tpuci__tpu_gen_t;

/* The values a row names a source for, as the data file's keys, in the
 * order `tpuci topologies TYPE` shows them. */
#define TPUCI__TPU_NSOURCES 10
const char *tpuci__tpu_source_key(size_t i); /* NULL past the end */

/* One host layout of one accelerator type. A type with two real layouts
 * (v5litepod-8, v6e-8: 1 VM x 8 chips or 2 VMs x 4 chips) has two rows
 * with the same `type`, exactly one of them `is_default_layout`. Every
 * string lives as long as the process; `gke_accelerator` and
 * `machine_type` are NULL where the type has none (v2, v3 are not on
 * GKE). */
typedef struct {
  const char *type;       /* "v4-16": TPU_ACCELERATOR_TYPE */
  const char *generation; /* gen->name */
  const tpuci__tpu_gen_t *gen;
  int hosts; /* VMs (GKE nodes/pods) in the slice */
  int chips_per_host;
  int cores_per_chip;                /* TensorCores (gen's) */
  int devices_per_host;              /* devices a framework sees on one host */
  const char *topology;              /* "2x2x2", "4x4": TPU_TOPOLOGY */
  const char *host_bounds;           /* "1,1,2": TPU_HOST_BOUNDS */
  const char *chips_per_host_bounds; /* "2,2,1": TPU_CHIPS_PER_HOST_BOUNDS */
  const char *gke_accelerator;       /* cloud.google.com/gke-tpu-accelerator */
  const char *machine_type;          /* "ct4p-hightpu-4t" */
  const char *layout;                /* "<hosts>x<chips per host>": "2x4" */
  int is_default_layout;
  /* Where each value comes from: sources[i] for tpuci__tpu_source_key(i);
   * NULL only for machine_type off GKE. */
  const char *sources[TPUCI__TPU_NSOURCES];
} tpuci__tpu_type_t;

/* A catalogue read from YAML text (topology_read.c). */
typedef struct tpuci__tpu_catalogue_s tpuci__tpu_catalogue_t;

/* Reads and checks a catalogue in the format of topology_catalogue.yaml
 * (its header says what is checked). `name` is the file name used in
 * messages. Returns 0 and *out, or TPUCI_ESPEC with a one-line message
 * "NAME:LINE:COLUMN: what" in *err and *out NULL. */
int tpuci__tpu_catalogue_read(const char *name, const char *text, size_t len,
                              tpuci__tpu_catalogue_t **out, tpuci__err_t *err);
void tpuci__tpu_catalogue_free(tpuci__tpu_catalogue_t *c);
size_t tpuci__tpu_catalogue_rows(const tpuci__tpu_catalogue_t *c);
/* Row i (0-based) of `c`, or NULL past the end. */
const tpuci__tpu_type_t *tpuci__tpu_catalogue_row(const tpuci__tpu_catalogue_t *c, size_t i);

/* The GKE device plugin's getChipsPerDim (tpu-topology.md 4b): chips per
 * host 1, 2, 4, 8 -> 1,1,1; 1,2,1; 2,2,1; 2,4,1. Returns 0, or -1 for
 * another number (dim untouched but dim[2]). */
int tpuci__tpu_chips_per_dim(int chips, int dim[3]);

/* The built-in catalogue. */
size_t tpuci__tpu_catalogue_size(void);
/* Row i (0-based), or NULL past the end. Rows of one type are adjacent,
 * the default layout first. */
const tpuci__tpu_type_t *tpuci__tpu_catalogue_at(size_t i);

/* The row of `type` with `hosts` hosts; hosts == 0 picks the default
 * layout. NULL when the type is unknown or has no such layout. */
const tpuci__tpu_type_t *tpuci__tpu_find(const char *type, int hosts);

/* The row of `type` with layout `layout` ("1x8"); NULL picks the default.
 * NULL when the type is unknown or has no such layout. */
const tpuci__tpu_type_t *tpuci__tpu_find_layout(const char *type, const char *layout);

/* The number of layouts `type` has (0: unknown type). */
int tpuci__tpu_layout_count(const char *type);

/* A suggestion for a misspelt type: the closest catalogue name by
 * tpuci__edit_distance (at most 2 edits, 3 for names over 6 characters),
 * or "v5litepod-N" for "v5e-N". NULL when nothing is close or when `type`
 * is itself a catalogue name. The string is static. */
const char *tpuci__tpu_suggest(const char *type);

/* ------------------------------------------------------------------ */
/* Resolved slices                                                     */

/* Which CPU emulation switches a host gets. */
typedef enum {
  TPUCI__EMULATE_PJRT = 0, /* torch_xla >= 2.0: PJRT_DEVICE=CPU */
  TPUCI__EMULATE_XRT,      /* torch_xla <= 2.0: XRT_DEVICE_MAP, XRT_WORKERS */
  TPUCI__EMULATE_JAX,      /* JAX_PLATFORMS=cpu, forced device count */
  TPUCI__EMULATE_NONE,     /* only the TPU_* and rendezvous variables */
  TPUCI__EMULATE_REAL,     /* real TPU hardware: only the rendezvous
                              variables; the host's own TPU_*, PJRT_*,
                              LIBTPU_* ... environment passes through */
  TPUCI__EMULATE__COUNT
} tpuci__emulate_t;

/* "pjrt", "xrt", "jax", "none", "real". */
const char *tpuci__emulate_name(tpuci__emulate_t e);
/* Returns 0, or -1 when `name` is none of the above. */
int tpuci__emulate_parse(const char *name, tpuci__emulate_t *out);

/* A slice ready to run: every field is filled in. Strings are owned by the
 * slice (tpuci__slice_free). */
typedef struct {
  char *name;                   /* the topology's name ("v4-16", "mine") */
  char *accelerator_type;       /* TPU_ACCELERATOR_TYPE ("v4-16") */
  char *generation;             /* "v4"; NULL for a custom slice w/o base */
  const tpuci__tpu_type_t *row; /* the catalogue row, NULL if custom */
  int hosts;
  int chips_per_host;
  int cores_per_chip;
  int devices_per_host;
  char *topology;              /* TPU_TOPOLOGY */
  char *host_bounds;           /* TPU_HOST_BOUNDS */
  char *chips_per_host_bounds; /* TPU_CHIPS_PER_HOST_BOUNDS */
  /* TPU_PROCESS_BOUNDS / TPU_CHIPS_PER_PROCESS_BOUNDS for one process per
   * host; NULL where they are not exported (v2, v3, tpu7x). */
  char *process_bounds;
  char *chips_per_process_bounds;
  tpuci__emulate_t emulate;
} tpuci__slice_t;

/* What a spec asks for. Zero/NULL fields are "not given".
 *
 * - `name` is a catalogue type and `base` is NULL: that type. `hosts` or
 *   `layout` pick one of its layouts; `chips_per_host` / `cores_per_chip`,
 *   if given, must match it.
 * - `base` is a catalogue type: a slice of that generation with the
 *   base's numbers, each one overridable. If the result is a catalogue
 *   layout (base "v4-8" with hosts = 4 is v4-32), it is that row.
 * - otherwise a custom slice; missing numbers are 1. A name that is close
 *   to a catalogue type is refused (likely a typo) unless `base` is set.
 *
 * Ranges: hosts 1..256, chips_per_host 1, 2, 4 or 8, cores_per_chip 1 or
 * 2; `emulate` NULL means "pjrt". */
typedef struct {
  const char *name;
  const char *base;
  const char *layout;
  int hosts;
  int chips_per_host;
  int cores_per_chip;
  const char *emulate;
} tpuci__slice_req_t;

/* Fills *s (which needs no initialisation). Returns 0, or TPUCI_ESPEC with
 * a one-line message in *err and *s zeroed. */
int tpuci__slice_resolve(tpuci__slice_t *s, const tpuci__slice_req_t *req, tpuci__err_t *err);

/* Shorthands: a catalogue type (hosts 0 = default layout), or custom
 * numbers with strict validation. Same returns as tpuci__slice_resolve. */
int tpuci__slice_from_type(tpuci__slice_t *s, const char *type, int hosts, const char *emulate,
                           tpuci__err_t *err);
/* Custom: r's name, hosts, chips_per_host, cores_per_chip and emulate
 * (its base and layout are not used). */
int tpuci__slice_custom(tpuci__slice_t *s, const tpuci__slice_req_t *r, tpuci__err_t *err);

void tpuci__slice_free(tpuci__slice_t *s);

/* ------------------------------------------------------------------ */
/* Per-host environment                                                */

#define TPUCI__MASTER_PORT_DEFAULT 29500 /* torch.distributed convention */
#define TPUCI__JAX_PORT_DEFAULT 8482     /* JAX TPU coordinator port */
#define TPUCI__XRT_PORT_DEFAULT 40934    /* pytorch/xla + ignite CI */

/* How the hosts of one gang reach each other. */
typedef struct {
  /* s->hosts names ordered by worker id; NULL: "worker-0".."worker-N-1".
   * Ignored for a single-host slice (which sees "localhost", as the GKE
   * device plugin sets it). */
  const char *const *hostnames;
  int master_port; /* MASTER_PORT; 0: 29500 */
  int jax_port;    /* JAX coordinator port; 0: 8482 */
  int xrt_port;    /* port in XRT_WORKERS; 0: 40934 */
} tpuci__gang_net_t;

/* Adds the environment host `host` (0-based) of slice `s` gets to `env`,
 * in a fixed order: TPU VM/GKE variables, emulation switches, then the
 * torch.distributed rendezvous. `net` may be NULL (defaults). Returns 0,
 * or TPUCI_EUSAGE for a host out of range, a bad port or a bad hostname;
 * env is left unchanged then. */
int tpuci__slice_host_env(const tpuci__slice_t *s, int host, const tpuci__gang_net_t *net,
                          tpuci__kvlist_t *env, tpuci__err_t *err);

/* Appends one line per combination that cannot work as a user may expect
 * on CPU (why, and what works instead). */
void tpuci__slice_warnings(const tpuci__slice_t *s, tpuci__strv_t *out);

/* ------------------------------------------------------------------ */
/* Text for `tpuci topologies`                                         */

/* The catalogue as an aligned table, one line per row. Caller frees. */
char *tpuci__tpu_catalogue_text(void);

/* One type ("v5litepod-8", or "v5litepod-8:1x8" for a layout) and the
 * environment each host gets with hostnames worker-0..N-1 under `emulate`
 * (NULL: "pjrt"). Returns a string the caller frees, or NULL with *err set
 * (TPUCI_EUSAGE: unknown type, layout or emulate mode). */
char *tpuci__tpu_describe(const char *type, const char *emulate, tpuci__err_t *err);

#endif /* TPUCI_TOPOLOGY_H */
