/* The swarm driver's go of a gang's start barrier (engine/gate.h; the
 * attempt core's ops->go): once every host resolves every name, a
 * service named the go joins the gang's overlay network, and the hosts'
 * wait steps, which wait for that name, start their commands. Removed
 * with the hosts' services (ops->go_remove). */
#include <stdlib.h>
#include <string.h>

#include "runtime/swarm/swarm.h"

static void tpuci__sw_on_go_created(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_att_t *att = p;
  const char *id = json_string_value(json_object_get(res->json, "ID"));
  tpuci__unit_req_end(&att->ua);
  if (res->ok && id != NULL)
    att->go_id = tpuci__strdup(id);
  else
    tpuci__unit_infra(&att->ua, tpuci__printf("swarm: creating the gang's go service failed: %s",
                                              res->ok ? "the answer has no ID" : res->message));
  tpuci__unit_step(&att->ua);
}

/* Every host resolves every name: a service named the go joins the
 * gang's network (the job's image, sleeping, on host 0's node, which has
 * it), and each host's wait step sees that name and starts its command. */
void tpuci__sw_op_go(tpuci__unit_att_t *ua) {
  tpuci__sw_att_t *att = (tpuci__sw_att_t *) ua;
  tpuci__sw_host_t *h0 = TPUCI__SW_HOST(att, 0);
  tpuci__attempt_t *a = ua->a;
  const tpuci__instance_t *inst = a->inst;
  tpuci__kvlist_t labels = {0};
  tpuci__strv_t argv = {0};
  tpuci__svc_spec_t spec;
  char *alias = tpuci__gate_go_name(att->key), *name, *constraint = NULL;
  json_t *body;

  tpuci__ctr_labels(&labels, a->run_id, inst->job, inst->name, a->number,
                    a->keep_on_failure);
  tpuci__gate_go_argv(&argv);
  if (h0->node_id != NULL) constraint = tpuci__printf("node.id==%s", h0->node_id);
  /* The network's name (a DNS label) with -go, within the label's 63. */
  name = tpuci__printf("%.*s-go", TPUCI__SW_NAME_MAX - 3, att->net.name);
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
  tpuci__unit_req_begin(ua);
  tpuci__sw_service_create(att->sw->e.eng, body, tpuci__sw_host_auth(h0),
                           tpuci__sw_on_go_created, att);
  json_decref(body);
  free(name);
  free(alias);
  free(constraint);
  tpuci__strv_free(&argv);
  tpuci__kv_free(&labels);
}

static void tpuci__sw_on_go_removed(void *p, const tpuci__engine_res_t *res) {
  tpuci__sw_att_t *att = p;
  tpuci__unit_req_end(&att->ua);
  if (!res->ok && res->status != 404)
    tpuci__unit_tell(&att->ua, "could not remove the gang's go service %s: %s; run "
                               "`tpuci gc` to clean up",
                     att->go_id, res->message);
  tpuci__unit_step(&att->ua);
}

void tpuci__sw_op_go_remove(tpuci__unit_att_t *ua) {
  tpuci__sw_att_t *att = (tpuci__sw_att_t *) ua;
  if (att->go_id == NULL) return;
  tpuci__unit_req_begin(ua);
  tpuci__sw_service_remove(att->sw->e.eng, att->go_id, tpuci__sw_on_go_removed, att);
}
