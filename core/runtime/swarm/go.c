/* The swarm driver's go and end of a gang's hosts' wait steps
 * (engine/gate.h; the attempt core's ops->go and ops->end): once every
 * host resolves every name, a service named the go joins the gang's
 * overlay network, and the hosts' wait steps, which wait for that name,
 * start their commands; once every host's command ended, a service
 * named the end joins it, and the hosts, idle since their commands
 * ended (their names still resolving for their peers), exit. Both are
 * removed with the hosts' services (ops->go_remove). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/swarm/swarm.h"

static const char *const tpuci__sw_sign_words[] = {"go", "end"};

typedef struct {
  tpuci__sw_att_t *att;
  tpuci__gate_sign_t sign;
} tpuci__sw_sign_req_t;

static void tpuci__sw_on_sign_created(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_sign_req_t *q = p;
  tpuci__sw_att_t *att = q->att;
  tpuci__gate_sign_t sign = q->sign;
  const char *id = json_string_value(json_object_get(res->json, "ID"));
  free(q);
  tpuci__unit_req_end(&att->ua);
  if (res->ok && id != NULL) {
    att->sign_id[sign] = tpuci__strdup(id);
  } else {
    tpuci__unit_infra(&att->ua, tpuci__printf("swarm: creating the gang's %s service failed: %s",
                                              tpuci__sw_sign_words[sign],
                                              res->ok ? "the answer has no ID" : res->message));
    /* The idle hosts would wait for the end: they go with their
     * services. */
    if (sign == TPUCI__GATE_END) tpuci__unit_stop_all(&att->ua, SIGTERM);
  }
  tpuci__unit_step(&att->ua);
}

/* A service named the go or the end joins the gang's network (the
 * job's image, sleeping, on host 0's node, which has it). */
static void tpuci__sw_sign(tpuci__sw_att_t *att, tpuci__gate_sign_t sign) {
  tpuci__sw_host_t *h0 = TPUCI__SW_HOST(att, 0);
  tpuci__attempt_t *a = att->ua.a;
  const tpuci__instance_t *inst = a->inst;
  tpuci__kvlist_t labels = {0};
  tpuci__strv_t argv = {0};
  tpuci__svc_spec_t spec;
  tpuci__sw_sign_req_t *q = tpuci__calloc(1, sizeof(*q));
  const char *word = tpuci__sw_sign_words[sign];
  char *alias = tpuci__gate_name(att->key, sign), *name, *constraint = NULL;
  json_t *body;

  tpuci__ctr_labels(&labels, a->run_id, inst->job, inst->name, a->number, a->keep_on_failure);
  tpuci__gate_go_argv(&argv);
  if (h0->node_id != NULL) constraint = tpuci__printf("node.id==%s", h0->node_id);
  /* The network's name (a DNS label) with -go or -end, within the
   * label's 63. */
  name = tpuci__printf("%.*s-%s", TPUCI__SW_NAME_MAX - 1 - (int) strlen(word), att->net.name, word);
  memset(&spec, 0, sizeof(spec));
  spec.name = name;
  spec.image = json_string_value(json_object_get(
      json_object_get(json_object_get(h0->body, "TaskTemplate"), "ContainerSpec"), "Image"));
  spec.argv = &argv;
  spec.labels = &labels;
  spec.network = att->net.id;
  spec.alias = alias;
  spec.grace_ms = 1000;
  spec.constraint = constraint;
  body = tpuci__svc_create_body(&spec);
  q->att = att;
  q->sign = sign;
  tpuci__unit_req_begin(&att->ua);
  tpuci__sw_service_create(att->sw->e.eng, body, tpuci__sw_host_auth(h0), tpuci__sw_on_sign_created,
                           q);
  json_decref(body);
  free(name);
  free(alias);
  free(constraint);
  tpuci__strv_free(&argv);
  tpuci__kv_free(&labels);
}

/* Every host resolves every name: the go, and each host's wait step
 * sees that name and starts its command. */
void tpuci__sw_op_go(tpuci__unit_att_t *ua) {
  tpuci__sw_sign((tpuci__sw_att_t *) ua, TPUCI__GATE_GO);
}

/* Every host's command ended: the end, and the idle hosts exit. */
void tpuci__sw_op_end(tpuci__unit_att_t *ua) {
  tpuci__sw_sign((tpuci__sw_att_t *) ua, TPUCI__GATE_END);
}

static void tpuci__sw_on_sign_removed(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_sign_req_t *q = p;
  tpuci__sw_att_t *att = q->att;
  tpuci__gate_sign_t sign = q->sign;
  free(q);
  tpuci__unit_req_end(&att->ua);
  if (!res->ok && res->status != 404)
    tpuci__unit_tell(&att->ua,
                     "could not remove the gang's %s service %s: %s; run "
                     "`tpuci gc` to clean up",
                     tpuci__sw_sign_words[sign], att->sign_id[sign], res->message);
  tpuci__unit_step(&att->ua);
}

void tpuci__sw_op_go_remove(tpuci__unit_att_t *ua) {
  tpuci__sw_att_t *att = (tpuci__sw_att_t *) ua;
  int sign;
  for (sign = TPUCI__GATE_GO; sign <= TPUCI__GATE_END; sign++) {
    tpuci__sw_sign_req_t *q;
    if (att->sign_id[sign] == NULL) continue;
    q = tpuci__calloc(1, sizeof(*q));
    q->att = att;
    q->sign = (tpuci__gate_sign_t) sign;
    tpuci__unit_req_begin(ua);
    tpuci__sw_service_remove(att->sw->e.eng, att->sign_id[sign], tpuci__sw_on_sign_removed, q);
  }
}
