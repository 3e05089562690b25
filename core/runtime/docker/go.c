/* The docker driver's go and end of a gang's hosts' wait steps
 * (engine/gate.h; the attempt core's ops->go and ops->end): once every
 * host resolves every name, a container named the go joins the gang's
 * network, and the hosts' wait steps, which wait for that name, start
 * their commands; once every host's command ended, a container named
 * the end joins it, and the hosts, idle since their commands ended
 * (their names still resolving for their peers), exit. Both are removed
 * with the hosts' containers (ops->go_remove). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/engine/container.h"
#include "runtime/engine/gate.h"
#include "runtime/docker/driver.h"

static const char *const tpuci__dk_sign_words[] = {"go", "end"};

typedef struct {
  tpuci__dk_att_t *att;
  tpuci__gate_sign_t sign;
} tpuci__dk_sign_req_t;

static tpuci__dk_sign_req_t *tpuci__dk_sign_req(tpuci__dk_att_t *att, tpuci__gate_sign_t sign) {
  tpuci__dk_sign_req_t *q = tpuci__calloc(1, sizeof(*q));
  q->att = att;
  q->sign = sign;
  return q;
}

/* "<network>-go", "<network>-end": the container's name. New string. */
static char *tpuci__dk_sign_name(const tpuci__dk_att_t *att, tpuci__gate_sign_t sign) {
  return tpuci__printf("%s-%s", att->net.name, tpuci__dk_sign_words[sign]);
}

/* It could not be made: the attempt is infra; hosts idle for the end
 * exit at a SIGTERM. */
static void tpuci__dk_sign_failed(tpuci__dk_att_t *att, tpuci__gate_sign_t sign, const char *step,
                                  const char *msg) {
  char *what = tpuci__printf("%s the gang's %s container", step, tpuci__dk_sign_words[sign]);
  tpuci__dk_infra(att, what, NULL, msg);
  free(what);
  if (sign == TPUCI__GATE_END) tpuci__unit_stop_all(&att->ua, SIGTERM);
}

static void tpuci__dk_on_sign_started(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_sign_req_t *q = p;
  tpuci__dk_att_t *att = q->att;
  tpuci__unit_req_end(&att->ua);
  if (!res->ok) tpuci__dk_sign_failed(att, q->sign, "starting", res->message);
  free(q);
  tpuci__unit_step(&att->ua);
}

static void tpuci__dk_on_sign_created(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_sign_req_t *q = p;
  tpuci__dk_att_t *att = q->att;
  const char *id = json_string_value(json_object_get(res->json, "Id"));
  tpuci__unit_req_end(&att->ua);
  if (res->ok && id != NULL) {
    att->sign_id[q->sign] = tpuci__strdup(id);
    tpuci__unit_req_begin(&att->ua);
    tpuci__engine_container_start(att->dk->e.eng, id, tpuci__dk_on_sign_started, q);
    return;
  }
  tpuci__dk_sign_failed(att, q->sign, "creating", res->ok ? "the answer has no Id" : res->message);
  if (!res->ok && tpuci__dk_no_answer(res) && !tpuci__dk_unreached(res)) {
    /* The engine may have made it: removed by its name once the engine
     * answers again (a 404 then is nothing left). */
    char *name = tpuci__dk_sign_name(att, q->sign);
    tpuci__dk_orphan(att->dk, 0, name, name);
    free(name);
  }
  free(q);
  tpuci__unit_step(&att->ua);
}

/* A container named the go or the end joins the gang's network (the
 * job's image, sleeping: what every host can run). */
static void tpuci__dk_sign(tpuci__dk_att_t *att, tpuci__gate_sign_t sign) {
  tpuci__attempt_t *a = att->ua.a;
  tpuci__kvlist_t labels = {0};
  tpuci__strv_t argv = {0};
  tpuci__ctr_spec_t spec;
  char *alias = tpuci__gate_name(att->key, sign), *name = tpuci__dk_sign_name(att, sign);
  json_t *body;

  tpuci__ctr_labels(&labels, a->run_id, a->inst->job, a->inst->name, a->number, a->keep_on_failure);
  tpuci__gate_go_argv(&argv);
  memset(&spec, 0, sizeof(spec));
  spec.image = tpuci__image_engine_ref(&a->plan->images[a->inst->image]);
  spec.argv = &argv;
  spec.labels = &labels;
  spec.network = att->net.name;
  spec.alias = alias;
  body = tpuci__ctr_create_body(&spec);
  tpuci__podman_body_limits(body, &att->dk->limits);
  tpuci__unit_req_begin(&att->ua);
  tpuci__engine_container_create(att->dk->e.eng, name, body, tpuci__dk_on_sign_created,
                                 tpuci__dk_sign_req(att, sign));
  json_decref(body);
  free(name);
  free(alias);
  tpuci__strv_free(&argv);
  tpuci__kv_free(&labels);
}

/* Every host resolves every name: the go, and each host's wait step sees
 * that name and starts its command. */
void tpuci__dk_op_go(tpuci__unit_att_t *ua) {
  tpuci__dk_sign((tpuci__dk_att_t *) ua, TPUCI__GATE_GO);
}

/* Every host's command ended: the end, and the idle hosts exit. */
void tpuci__dk_op_end(tpuci__unit_att_t *ua) {
  tpuci__dk_sign((tpuci__dk_att_t *) ua, TPUCI__GATE_END);
}

static void tpuci__dk_on_sign_removed(void *p, const tpuci__engine_res_t *res) {
  tpuci__dk_sign_req_t *q = p;
  tpuci__dk_att_t *att = q->att;
  char *name = tpuci__dk_sign_name(att, q->sign);
  tpuci__unit_req_end(&att->ua);
  if (!res->ok && res->status != 404 && tpuci__dk_no_answer(res))
    /* The engine stopped: removed when it answers again. */
    tpuci__dk_orphan(att->dk, 0, att->sign_id[q->sign], name);
  else if (!res->ok && res->status != 404)
    tpuci__unit_tell(&att->ua,
                     "could not remove the gang's %s container %s: %s; "
                     "run `tpuci gc` to clean up",
                     tpuci__dk_sign_words[q->sign], name, res->message);
  free(name);
  free(q);
  tpuci__unit_step(&att->ua);
}

void tpuci__dk_op_go_remove(tpuci__unit_att_t *ua) {
  tpuci__dk_att_t *att = (tpuci__dk_att_t *) ua;
  int sign;
  for (sign = TPUCI__GATE_GO; sign <= TPUCI__GATE_END; sign++) {
    if (att->sign_id[sign] == NULL) continue;
    tpuci__unit_req_begin(ua);
    tpuci__engine_container_remove(att->dk->e.eng, att->sign_id[sign], tpuci__dk_on_sign_removed,
                                   tpuci__dk_sign_req(att, (tpuci__gate_sign_t) sign));
  }
}
