/* `tpuci doctor --real`: does this machine look like a TPU VM (see
 * tpuvm.h). */
#include "runtime/tpuvm.h"

#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#define TPUCI__METADATA_TIMEOUT_MS 2000L
#define TPUCI__METADATA_MAX 4096

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

/* GET http://<server>/computeMetadata/v1/instance/attributes/<key> with
 * the header the server requires. Returns the value (a new string), or
 * NULL with *why set (a new string). */
static char *tpuci__metadata_get(const char *server, const char *key, char **why) {
  char *url = tpuci__printf("http://%s/computeMetadata/v1/instance/attributes/%s", server, key);
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
    *why = tpuci__printf("%s", reply.too_big ? "the answer is over 4 KiB"
                               : *errbuf     ? errbuf
                                             : curl_easy_strerror(rc));
  } else if (status != 200) {
    *why = tpuci__printf("HTTP %ld", status);
  } else {
    value = tpuci__strndup(reply.body.data ? reply.body.data : "", reply.body.len);
    value[strcspn(value, "\r\n")] = '\0';
  }
done:
  if (c) curl_easy_cleanup(c);
  curl_slist_free_all(headers);
  tpuci__buf_free(&reply.body);
  free(url);
  return value;
}

/* The accelerator type this machine is: from the metadata server, else
 * from TPU_ACCELERATOR_TYPE (GKE's device plugin, or set by hand). A new
 * string, or NULL; the lines go to `report`. */
static char *tpuci__tpuvm_type(tpuci__buf_t *report) {
  const char *server = getenv("GCE_METADATA_HOST");
  const char *env = getenv("TPU_ACCELERATOR_TYPE");
  char *why = NULL, *why2 = NULL, *type, *worker, *endpoints;

  if (server == NULL || *server == '\0') server = TPUCI__METADATA_DEFAULT;
  type = tpuci__metadata_get(server, "accelerator-type", &why);
  if (type != NULL && *type != '\0') {
    worker = tpuci__metadata_get(server, "agent-worker-number", &why2);
    free(why2);
    endpoints = tpuci__metadata_get(server, "worker-network-endpoints", &why2);
    free(why2);
    tpuci__buf_addf(report, "ok   tpu metadata: %s, worker %s (%s)\n", type,
                    worker && *worker ? worker : "0", server);
    if (endpoints && *endpoints)
      tpuci__buf_addf(report, "ok   tpu workers: %s\n", endpoints);
    free(worker);
    free(endpoints);
    free(why);
    return type;
  }
  free(type);
  if (env != NULL && *env != '\0') {
    tpuci__buf_addf(report, "ok   tpu environment: TPU_ACCELERATOR_TYPE=%s (no metadata "
                            "server at %s: %s)\n",
                    env, server, why ? why : "empty answer");
    free(why);
    return tpuci__strdup(env);
  }
  tpuci__buf_addf(report, "FAIL tpu metadata: no metadata server at %s (%s) and no "
                          "TPU_ACCELERATOR_TYPE: nothing says which TPU slice this is (on a "
                          "Cloud TPU VM the server answers; elsewhere set TPU_ACCELERATOR_TYPE "
                          "and TPU_WORKER_ID)\n",
                  server, why ? why : "empty answer");
  free(why);
  return NULL;
}

/* Emulation switches left in this environment: real mode passes them
 * on, and each one sends TPU software to the CPU. */
static void tpuci__tpuvm_leftovers(tpuci__buf_t *report) {
  static const char *const names[][2] = {{"PJRT_DEVICE", "CPU"}, {"JAX_PLATFORMS", "cpu"}};
  size_t i;
  for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    const char *v = getenv(names[i][0]);
    if (v != NULL && strcasecmp(v, names[i][1]) == 0)
      tpuci__buf_addf(report, "warn tpu environment: %s=%s is set here: the jobs get it "
                              "and run on the CPU, not the TPU\n",
                      names[i][0], v);
  }
}

int tpuci__tpuvm_doctor(const tpuci__plan_t *plan, tpuci__buf_t *report,
                        tpuci__err_t *err) {
  tpuci__strv_t devs = {NULL, 0, 0};
  tpuci__buf_t list;
  char *type;
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
    rc = tpuci__err_set(err, TPUCI_EENGINE, "this machine has no TPU device "
                                            "(/dev/accel*, /dev/vfio/<group>)");
  }
  tpuci__buf_free(&list);
  tpuci__strv_free(&devs);

  type = tpuci__tpuvm_type(report);
  if (type == NULL && rc == 0)
    rc = tpuci__err_set(err, TPUCI_EENGINE, "nothing says which TPU slice this machine "
                                            "is (no metadata server, no TPU_ACCELERATOR_TYPE)");
  tpuci__tpuvm_leftovers(report);

  /* The spec's real topologies against the machine. */
  for (i = 0; plan != NULL && type != NULL && i < plan->ntopologies; i++) {
    const tpuci__topology_t *t = &plan->topologies[i];
    const char *want = t->base ? t->base : t->name;
    size_t k;
    int used = 0;
    for (k = 0; k < plan->ninstances && !used; k++)
      used = plan->instances[k].selected && plan->instances[k].topology == (int) i;
    if (!used || t->emulate == NULL || strcmp(t->emulate, "real") != 0) continue;
    if (strcmp(want, type) == 0)
      tpuci__buf_addf(report, "ok   tpu topology '%s': this machine is a %s\n", t->name, type);
    else
      tpuci__buf_addf(report, "warn tpu topology '%s' (%s): this machine is a %s; "
                              "the jobs will see the %s\n",
                      t->name, t->where ? t->where : "spec",
                      type, type);
  }
  free(type);
  return rc;
}
