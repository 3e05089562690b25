/* Images built from the spec (docs/docker.md, "Images built from the
 * spec"): the context archived here (buildctx.h), sent to the engine's
 * POST /build, which keeps its own layer cache; the output goes to a log
 * file, and the result is the image's id. Blocking, on a loop of its own
 * (sync.h), like the results cache's image ids: it runs before them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "runtime/engine/buildctx.h"
#include "runtime/http/http.h"
#include "runtime/engine/sync.h"
#include "runtime/runtime.h"

/* What one build's output stream said. */
typedef struct {
  FILE *log;
  char *id;       /* {"aux": {"ID"}} */
  char *step;     /* the last "Step n/m : ..." line */
  int steps;      /* steps seen */
  int cached;     /* of which the engine's cache gave */
  int log_failed; /* errno of the first failed write, or 0 */
} tpuci__build_stream_t;

static void tpuci__build_log(tpuci__build_stream_t *bs, const char *text) {
  if (bs->log == NULL || bs->log_failed) return;
  if (fputs(text, bs->log) == EOF) bs->log_failed = errno ? errno : EIO;
}

static void tpuci__build_line(void *p, json_t *line) {
  tpuci__build_stream_t *bs = p;
  const char *text = json_string_value(json_object_get(line, "stream"));
  const char *id = json_string_value(json_object_get(json_object_get(line, "aux"), "ID"));
  const char *error = json_string_value(json_object_get(line, "error"));
  if (id != NULL) {
    free(bs->id);
    bs->id = tpuci__strdup(id);
  }
  if (error != NULL) {
    tpuci__build_log(bs, "error: ");
    tpuci__build_log(bs, error);
    tpuci__build_log(bs, "\n");
  }
  if (text == NULL) return;
  tpuci__build_log(bs, text);
  /* The classic builder's "Step 2/5 : RUN ..." and " ---> Using cache";
   * podman's "STEP 2/5: RUN ..." and "--> Using cache ...". */
  if (strncmp(text, "Step ", 5) == 0 || strncmp(text, "STEP ", 5) == 0) {
    const char *colon = strchr(text, ':');
    free(bs->step);
    bs->step = tpuci__strndup(text, strcspn(text, "\r\n"));
    /* A FROM runs nothing, and the cache never says it gave it. */
    if (colon == NULL || strncasecmp(colon + 1 + strspn(colon + 1, " "), "FROM ", 5) != 0)
      bs->steps++;
  } else if (strstr(text, "> Using cache") != NULL) {
    bs->cached++;
  }
}

/* t, dockerfile, buildargs, target, labels, rm, forcerm. */
static char *tpuci__build_query(const tpuci__image_t *img, const char *dockerfile) {
  const tpuci__image_build_t *b = img->build;
  json_t *args = json_object(), *labels = json_object();
  char *args_text, *labels_text, *q;
  char *t = tpuci__http_escape(img->ref, 0), *f = tpuci__http_escape(dockerfile, 0);
  char *a, *l, *target = NULL;
  size_t k;
  for (k = 0; k + 1 < b->args.len; k += 2)
    json_object_set_new(args, b->args.items[k], json_string(b->args.items[k + 1]));
  json_object_set_new(labels, "tpuci.image", json_string(img->name));
  args_text = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS);
  labels_text = json_dumps(labels, JSON_COMPACT);
  a = tpuci__http_escape(args_text, 0);
  l = tpuci__http_escape(labels_text, 0);
  if (b->target != NULL) {
    char *e = tpuci__http_escape(b->target, 0);
    target = tpuci__printf("&target=%s", e);
    free(e);
  }
  q = tpuci__printf("t=%s&dockerfile=%s&buildargs=%s&labels=%s&rm=1&forcerm=1%s", t, f, a, l,
                    target ? target : "");
  free(target);
  free(l);
  free(a);
  free(labels_text);
  free(args_text);
  json_decref(labels);
  json_decref(args);
  free(f);
  free(t);
  return q;
}

/* The id of a build whose stream gave none: the tag it made. */
static char *tpuci__build_inspect_id(tpuci__sync_t *s, const char *ref) {
  tpuci__sync_res_t r;
  char *id = NULL;
  memset(&r, 0, sizeof(r));
  tpuci__engine_image_inspect(s->eng, ref, tpuci__sync_cb, &r);
  tpuci__sync_wait(s, &r);
  if (r.ok && json_is_string(json_object_get(r.json, "Id")))
    id = tpuci__strdup(json_string_value(json_object_get(r.json, "Id")));
  tpuci__sync_res_free(&r);
  return id;
}

static int tpuci__build_failed(const tpuci__image_t *img, const tpuci__build_stream_t *bs,
                               const tpuci__sync_res_t *r, const char *log_path,
                               tpuci__err_t *err) {
  if (r->error != 0)
    return tpuci__err_set(err, TPUCI_EENGINE, "%s: image '%s': the engine did not build it: %s",
                          img->where ? img->where : "spec", img->name,
                          r->message ? r->message : "no answer");
  return tpuci__err_set(err, TPUCI_EIMAGE, "%s: image '%s': the build failed%s%s%s: %s (log: %s)",
                        img->where ? img->where : "spec", img->name, bs->step ? " at '" : "",
                        bs->step ? bs->step : "", bs->step ? "'" : "",
                        r->message ? r->message : "no answer", log_path);
}

/* Whether `dockerfile` (as the spec writes it) is a file, taken from the
 * context as the build takes it. */
static int tpuci__build_dockerfile_there(const tpuci__image_build_t *b, char **path) {
  struct stat st;
  const char *f = b->dockerfile;
  if (f == NULL) {
    /* "Dockerfile", or "dockerfile" when only that one is there. */
    *path = tpuci__printf("%s/Dockerfile", b->context);
    if (stat(*path, &st) == 0 && S_ISREG(st.st_mode)) return 1;
    free(*path);
    *path = tpuci__printf("%s/dockerfile", b->context);
    if (stat(*path, &st) == 0 && S_ISREG(st.st_mode)) return 1;
    free(*path);
    *path = tpuci__printf("%s/Dockerfile", b->context);
    return 0;
  }
  *path = f[0] == '/' ? tpuci__strdup(f) : tpuci__printf("%s/%s", b->context, f);
  return stat(*path, &st) == 0 && S_ISREG(st.st_mode);
}

int tpuci__docker_build_check(const tpuci__plan_t *plan, tpuci__runtime_kind_t kind,
                              tpuci__err_t *err) {
  size_t i;
  for (i = 0; i < plan->ninstances; i++) {
    const tpuci__instance_t *in = &plan->instances[i];
    const tpuci__image_t *img;
    struct stat st;
    char *path;
    if (!in->selected || in->runtime != kind || in->image < 0 ||
        (size_t) in->image >= plan->nimages || plan->images[in->image].build == NULL)
      continue;
    img = &plan->images[in->image];
    if (kind == TPUCI__RUNTIME_SWARM)
      return tpuci__err_set(err, TPUCI_ESPEC,
                            "%s: job '%s' runs on swarm, and image '%s' is built from the spec: "
                            "the swarm's nodes would not have it; push it to a registry and "
                            "give its ref instead of build, or use runtime = \"docker\"",
                            in->where ? in->where : "spec", in->job, img->name);
    if (stat(img->build->context, &st) != 0 || !S_ISDIR(st.st_mode)) {
      const char *why = stat(img->build->context, &st) != 0 ? strerror(errno) : "not a folder";
      return tpuci__err_set(err, TPUCI_ESPEC, "%s: image '%s': build context %s: %s",
                            img->where ? img->where : "spec", img->name, img->build->context, why);
    }
    if (!tpuci__build_dockerfile_there(img->build, &path)) {
      int r = tpuci__err_set(err, TPUCI_ESPEC, "%s: image '%s': no Dockerfile at %s",
                             img->where ? img->where : "spec", img->name, path);
      free(path);
      return r;
    }
    free(path);
  }
  return 0;
}

int tpuci__runtime_docker_build(const tpuci__image_t *img, const char *log_path,
                                tpuci__docker_built_t *out, tpuci__err_t *err) {
  tpuci__buildctx_t bc;
  tpuci__build_stream_t bs;
  tpuci__engine_build_t b = {.line = tpuci__build_line, .line_data = &bs};
  tpuci__sync_t s;
  tpuci__sync_res_t r;
  char *query;
  int rc;

  memset(out, 0, sizeof(*out));
  memset(&bs, 0, sizeof(bs));
  memset(&r, 0, sizeof(r));
  memset(&bc, 0, sizeof(bc));
  rc = tpuci__buildctx_make(img->build->context, img->build->dockerfile,
                            TPUCI__BUILD_CONTEXT_MAX_BYTES, &bc, err);
  if (rc != 0) {
    /* The archiver names the path; the image names the spec line. */
    char *m = tpuci__printf("%s: image '%s': %s", img->where ? img->where : "spec", img->name,
                            err->msg ? err->msg : "cannot archive the build context");
    tpuci__err_clear(err);
    tpuci__err_set(err, rc, "%s", m);
    free(m);
    return rc;
  }
  bs.log = fopen(log_path, "w");
  if (bs.log == NULL) {
    rc = tpuci__err_set(err, TPUCI_EIO, "cannot write the build log %s: %s", log_path,
                        strerror(errno));
    tpuci__buildctx_free(&bc);
    return rc;
  }
  rc = tpuci__sync_open(&s, err);
  if (rc != 0) {
    fclose(bs.log);
    tpuci__buildctx_free(&bc);
    return rc;
  }
  query = tpuci__build_query(img, bc.dockerfile);
  b.query = query;
  b.tar = bc.tar.data;
  b.len = bc.tar.len;
  tpuci__engine_image_build(s.eng, &b, tpuci__sync_cb, &r);
  free(query);
  tpuci__sync_wait(&s, &r);
  if (!r.ok) {
    rc = tpuci__build_failed(img, &bs, &r, log_path, err);
  } else {
    if (bs.id == NULL) bs.id = tpuci__build_inspect_id(&s, img->ref);
    if (bs.id == NULL)
      rc = tpuci__err_set(err, TPUCI_EIMAGE,
                          "%s: image '%s': the engine built it but did not tell its id (log: %s)",
                          img->where ? img->where : "spec", img->name, log_path);
  }
  tpuci__sync_res_free(&r);
  tpuci__sync_close(&s);
  if (fclose(bs.log) != 0 && bs.log_failed == 0) bs.log_failed = errno ? errno : EIO;
  if (rc == 0) {
    out->id = bs.id;
    bs.id = NULL;
    out->steps = bs.steps;
    out->cached = bs.cached;
    out->files = bc.files;
    out->bytes = bc.bytes;
    out->log_error = bs.log_failed;
  }
  free(bs.id);
  free(bs.step);
  tpuci__buildctx_free(&bc);
  return rc;
}
