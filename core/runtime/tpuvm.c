/* `tpuci doctor --real`: does this machine look like a TPU VM (see
 * tpuvm.h). */
#include "runtime/tpuvm.h"

#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "plan/topology.h"

#define TPUCI__METADATA_TIMEOUT_MS 2000L
#define TPUCI__METADATA_MAX 16384

/* The TPU device nodes: /dev/accel* (v2 to v4) and the VFIO groups
 * /dev/vfio/<n> (v5e and later); /dev/vfio/vfio alone is VFIO's control
 * node, which any machine with the module has. */
static size_t tpuci__tpu_devices(tpuci__strv_t *out) {
  static const char *const patterns[] = {"/dev/accel*", "/dev/vfio/[0-9]*"};
  size_t i, k;
  for (i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
    glob_t g;
    if (glob(patterns[i], 0, NULL, &g) != 0) continue;
    for (k = 0; k < g.gl_pathc; k++) tpuci__strv_push(out, g.gl_pathv[k]);
    globfree(&g);
  }
  return out->len;
}

typedef struct {
  tpuci__buf_t body;
  int too_big;
} tpuci__md_reply_t;

static size_t tpuci__md_write(char *data, size_t size, size_t n, void *userdata) {
  tpuci__md_reply_t *r = userdata;
  if (r->body.len + size * n > TPUCI__METADATA_MAX) {
    r->too_big = 1;
    return 0;
  }
  tpuci__buf_add(&r->body, data, size * n);
  return size * n;
}

/* GET http://<server>/computeMetadata/v1/instance/<path> with the header
 * the server requires. Returns the value (a new string), or NULL with
 * *why set (a new string). */
static char *tpuci__metadata_get(const char *server, const char *path, char **why) {
  char *url = tpuci__printf("http://%s/computeMetadata/v1/instance/%s", server, path);
  char errbuf[CURL_ERROR_SIZE] = "";
  struct curl_slist *headers = curl_slist_append(NULL, "Metadata-Flavor: Google");
  tpuci__md_reply_t reply;
  CURL *c = curl_easy_init();
  CURLcode rc;
  long status = 0;
  char *value = NULL;

  *why = NULL;
  tpuci__buf_init(&reply.body);
  reply.too_big = 0;
  if (c == NULL || headers == NULL) {
    *why = tpuci__strdup("cannot start libcurl");
    goto done;
  }
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, TPUCI__METADATA_TIMEOUT_MS);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, TPUCI__METADATA_TIMEOUT_MS);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PROXY, ""); /* never through a proxy */
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, tpuci__md_write);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &reply);
  rc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (rc != CURLE_OK) {
    *why = tpuci__printf("%s", reply.too_big ? "the answer is over 16 KiB"
                               : *errbuf     ? errbuf
                                             : curl_easy_strerror(rc));
  } else if (status != 200) {
    *why = tpuci__printf("HTTP %ld", status);
  } else {
    value = tpuci__strndup(reply.body.data ? reply.body.data : "", reply.body.len);
  }
done:
  if (c) curl_easy_cleanup(c);
  curl_slist_free_all(headers);
  tpuci__buf_free(&reply.body);
  free(url);
  return value;
}

/* A one-line value (its first line), or NULL when the server has none or
 * says nothing; why (a new string) is freed. */
static char *tpuci__metadata_line(const char *server, const char *path) {
  char *why = NULL, *v = tpuci__metadata_get(server, path, &why);
  free(why);
  if (v != NULL) v[strcspn(v, "\r\n")] = '\0';
  if (v != NULL && *v == '\0') {
    free(v);
    v = NULL;
  }
  return v;
}

/* The last part of a metadata path value ("projects/1/zones/z/
 * instanceGroupManagers/mig-a" -> "mig-a"). Points into `v`. */
static const char *tpuci__metadata_leaf(const char *v) {
  const char *slash = strrchr(v, '/');
  return slash ? slash + 1 : v;
}

char *tpuci__tpu_env_value(const char *text, const char *key) {
  size_t klen = strlen(key);
  const char *p = text;
  while (p != NULL && *p) {
    const char *eol = strchr(p, '\n');
    const char *end = eol ? eol : p + strlen(p), *v;
    if ((size_t) (end - p) > klen && strncmp(p, key, klen) == 0 && p[klen] == ':') {
      v = p + klen + 1;
      while (v < end && (*v == ' ' || *v == '\t')) v++;
      while (end > v && (end[-1] == '\r' || end[-1] == ' ')) end--;
      if (end - v >= 2 && (*v == '\'' || *v == '"') && end[-1] == *v) {
        v++;
        end--;
      }
      return tpuci__strndup(v, (size_t) (end - v));
    }
    p = eol ? eol + 1 : NULL;
  }
  return NULL;
}

/* A catalogue row whose hosts are `machine` VMs, or NULL: no TPU machine
 * type. */
static const tpuci__tpu_type_t *tpuci__tpu_machine_row(const char *machine) {
  const tpuci__tpu_type_t *t;
  size_t i;
  for (i = 0; (t = tpuci__tpu_catalogue_at(i)) != NULL; i++)
    if (t->machine_type != NULL && strcmp(t->machine_type, machine) == 0) return t;
  return NULL;
}

/* What this machine is. */
typedef struct {
  char *type;    /* the accelerator type ("v4-8"), or NULL */
  char *machine; /* a Compute Engine TPU machine type ("tpu7x-standard-4t")
                  * when that is what the metadata says, or NULL */
} tpuci__tpuvm_t;

/* A Cloud TPU VM (v2 to v6e through the Cloud TPU API): its accelerator
 * type, from `accelerator-type` or `tpu-env`'s ACCELERATOR_TYPE. Returns 1
 * and sets vm->type, or 0 (*why: the first answer's problem, NULL when
 * the server answered without a type). */
static int tpuci__tpuvm_cloud_tpu(const char *server, tpuci__tpuvm_t *vm, tpuci__buf_t *report,
                                  char **why) {
  char *worker, *endpoints, *text = NULL, *ignored = NULL;
  vm->type = tpuci__metadata_get(server, "attributes/accelerator-type", why);
  if (vm->type == NULL && strncmp(*why, "HTTP ", 5) != 0) return 0; /* no server */
  if (vm->type != NULL) vm->type[strcspn(vm->type, "\r\n")] = '\0';
  if ((vm->type == NULL || *vm->type == '\0') &&
      (text = tpuci__metadata_get(server, "attributes/tpu-env", &ignored)) != NULL) {
    free(vm->type);
    vm->type = tpuci__tpu_env_value(text, "ACCELERATOR_TYPE");
  }
  free(ignored);
  if (vm->type == NULL || *vm->type == '\0') {
    free(vm->type);
    vm->type = NULL;
    free(text);
    return 0;
  }
  /* Asked only of a Cloud TPU VM (a TPU7x instance has neither). */
  worker = tpuci__metadata_line(server, "attributes/agent-worker-number");
  if (worker == NULL && text != NULL) worker = tpuci__tpu_env_value(text, "WORKER_ID");
  free(text);
  endpoints = tpuci__metadata_line(server, "attributes/worker-network-endpoints");
  tpuci__buf_addf(report, "ok   tpu metadata: %s, worker %s (%s)\n", vm->type,
                  worker ? worker : "0", server);
  if (endpoints) tpuci__buf_addf(report, "ok   tpu workers: %s\n", endpoints);
  free(worker);
  free(endpoints);
  return 1;
}

/* A Compute Engine instance of a TPU machine type (TPU7x and later are
 * no Cloud TPU API nodes: their slices are instances, usually of a
 * managed instance group): its `machine-type`, name and group. Returns 1
 * and sets vm->machine, -1 (a FAIL line) for an instance of another
 * machine type, 0 when the server says no machine type. */
static int tpuci__tpuvm_instance(const char *server, tpuci__tpuvm_t *vm, tpuci__buf_t *report) {
  char *mt = tpuci__metadata_line(server, "machine-type"), *name, *group;
  const tpuci__tpu_type_t *row;
  if (mt == NULL) return 0;
  row = tpuci__tpu_machine_row(tpuci__metadata_leaf(mt));
  if (row == NULL) {
    tpuci__buf_addf(report,
                    "FAIL tpu metadata: this is a Compute Engine %s instance, no TPU "
                    "machine type (%s)\n",
                    tpuci__metadata_leaf(mt), server);
    free(mt);
    return -1;
  }
  vm->machine = tpuci__strdup(row->machine_type);
  name = tpuci__metadata_line(server, "name");
  group = tpuci__metadata_line(server, "attributes/created-by");
  tpuci__buf_addf(report,
                  "ok   tpu metadata: Compute Engine instance %s, a %s (%s, %d chip%s a VM)",
                  name ? name : "(unnamed)", vm->machine, row->generation, row->chips_per_host,
                  row->chips_per_host == 1 ? "" : "s");
  if (group) tpuci__buf_addf(report, " of instance group %s", tpuci__metadata_leaf(group));
  tpuci__buf_addf(report, " (%s)\n", server);
  free(name);
  free(group);
  free(mt);
  return 1;
}

/* What this machine is: from the metadata server (a Cloud TPU VM's
 * accelerator type, else a Compute Engine instance's TPU machine type),
 * with TPU_ACCELERATOR_TYPE (GKE's device plugin, or set by hand) for
 * the type when the server does not say it. The lines go to `report`;
 * returns 0 when nothing says what it is. */
static int tpuci__tpuvm_what(tpuci__tpuvm_t *vm, tpuci__buf_t *report) {
  const char *server = getenv("GCE_METADATA_HOST");
  const char *env = getenv("TPU_ACCELERATOR_TYPE");
  char *why = NULL;
  int r;

  if (server == NULL || *server == '\0') server = TPUCI__METADATA_DEFAULT;
  if (tpuci__tpuvm_cloud_tpu(server, vm, report, &why)) {
    free(why);
    return 1;
  }
  /* The server answered, without a Cloud TPU type: an instance? */
  r = why == NULL || strncmp(why, "HTTP ", 5) == 0 ? tpuci__tpuvm_instance(server, vm, report) : 0;
  if (env != NULL && *env != '\0') {
    const tpuci__tpu_type_t *row = tpuci__tpu_find(env, 0);
    vm->type = tpuci__strdup(env);
    if (r == 0)
      tpuci__buf_addf(report,
                      "ok   tpu environment: TPU_ACCELERATOR_TYPE=%s (no metadata "
                      "server at %s: %s)\n",
                      env, server, why ? why : "empty answer");
    else if (vm->machine && row && row->machine_type && strcmp(row->machine_type, vm->machine) != 0)
      tpuci__buf_addf(report,
                      "warn tpu environment: TPU_ACCELERATOR_TYPE=%s runs on %s VMs, "
                      "this one is a %s\n",
                      env, row->machine_type, vm->machine);
    else tpuci__buf_addf(report, "ok   tpu environment: TPU_ACCELERATOR_TYPE=%s\n", env);
    free(why);
    return 1;
  }
  if (r == 0)
    tpuci__buf_addf(report,
                    "FAIL tpu metadata: no metadata server at %s (%s) and no "
                    "TPU_ACCELERATOR_TYPE: nothing says which TPU slice this is (on a "
                    "Cloud TPU VM or a TPU Compute Engine instance the server answers; "
                    "elsewhere set TPU_ACCELERATOR_TYPE and TPU_WORKER_ID)\n",
                    server, why ? why : "empty answer");
  free(why);
  return r == 1;
}

/* Emulation switches left in this environment: real mode passes them
 * on, and each one sends TPU software to the CPU. */
static void tpuci__tpuvm_leftovers(tpuci__buf_t *report) {
  static const char *const names[][2] = {{"PJRT_DEVICE", "CPU"}, {"JAX_PLATFORMS", "cpu"}};
  size_t i;
  for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    const char *v = getenv(names[i][0]);
    if (v != NULL && strcasecmp(v, names[i][1]) == 0)
      tpuci__buf_addf(report,
                      "warn tpu environment: %s=%s is set here: the jobs get it "
                      "and run on the CPU, not the TPU\n",
                      names[i][0], v);
  }
}

/* A real topology of the spec against the machine: the same accelerator
 * type, else (a Compute Engine instance, whose metadata does not say the
 * slice's size) the same machine type for its hosts. */
static void tpuci__tpuvm_topology(const tpuci__tpuvm_t *vm, const tpuci__topology_t *t,
                                  tpuci__buf_t *report) {
  const char *want = t->base ? t->base : t->name;
  const char *where = t->where ? t->where : "spec";
  const tpuci__tpu_type_t *row = tpuci__tpu_find(want, t->hosts);
  if (vm->type != NULL) {
    if (strcmp(want, vm->type) == 0)
      tpuci__buf_addf(report, "ok   tpu topology '%s': this machine is a %s\n", t->name, vm->type);
    else
      tpuci__buf_addf(report,
                      "warn tpu topology '%s' (%s): this machine is a %s; "
                      "the jobs will see the %s\n",
                      t->name, where, vm->type, vm->type);
  } else if (vm->machine != NULL) {
    if (row != NULL && row->machine_type != NULL && strcmp(row->machine_type, vm->machine) == 0)
      tpuci__buf_addf(report,
                      "ok   tpu topology '%s': its hosts are %s VMs, as this one is "
                      "(its slice's size is the instance group's: set "
                      "TPU_ACCELERATOR_TYPE to check it too)\n",
                      t->name, vm->machine);
    else
      tpuci__buf_addf(
          report,
          "warn tpu topology '%s' (%s): its hosts are %s; this machine "
          "is a %s: the jobs will see its chips\n",
          t->name, where,
          row && row->machine_type ? row->machine_type : "no Compute Engine TPU machine",
          vm->machine);
  }
}

int tpuci__tpuvm_doctor(const tpuci__plan_t *plan, tpuci__buf_t *report, tpuci__err_t *err) {
  tpuci__strv_t devs = {NULL, 0, 0};
  tpuci__buf_t list;
  tpuci__tpuvm_t vm = {NULL, NULL};
  size_t i;
  int rc = 0;

  tpuci__buf_init(&list);
  if (tpuci__tpu_devices(&devs) > 0) {
    for (i = 0; i < devs.len && i < 8; i++)
      tpuci__buf_addf(&list, "%s%s", i ? " " : "", devs.items[i]);
    if (devs.len > 8) tpuci__buf_addf(&list, " and %zu more", devs.len - 8);
    tpuci__buf_addf(report, "ok   tpu devices: %s\n", list.data);
  } else {
    tpuci__buf_adds(report, "FAIL tpu devices: no /dev/accel* (TPU v2 to v4) and no "
                            "/dev/vfio/<group> (v5e and later): this is not a TPU VM, or its "
                            "TPU driver is not loaded\n");
    rc = tpuci__err_set(err, TPUCI_EENGINE,
                        "this machine has no TPU device "
                        "(/dev/accel*, /dev/vfio/<group>)");
  }
  tpuci__buf_free(&list);
  tpuci__strv_free(&devs);

  if (!tpuci__tpuvm_what(&vm, report) && rc == 0)
    rc = tpuci__err_set(err, TPUCI_EENGINE,
                        "nothing says which TPU slice this machine "
                        "is (no Cloud TPU VM or TPU machine type in its "
                        "metadata, no TPU_ACCELERATOR_TYPE)");
  tpuci__tpuvm_leftovers(report);

  /* The spec's real topologies against the machine. */
  for (i = 0; plan != NULL && i < plan->ntopologies; i++) {
    const tpuci__topology_t *t = &plan->topologies[i];
    size_t k;
    int used = 0;
    for (k = 0; k < plan->ninstances && !used; k++)
      used = plan->instances[k].selected && plan->instances[k].topology == (int) i;
    if (used && t->emulate != NULL && strcmp(t->emulate, "real") == 0)
      tpuci__tpuvm_topology(&vm, t, report);
  }
  free(vm.type);
  free(vm.machine);
  return rc;
}
