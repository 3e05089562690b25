"""Validates `tpuci export kubernetes --jobset` against the JobSet CRD's
published OpenAPI v3 schema (tests/export/jobset/, with its source) and
the Kubernetes API types.

- Every JobSet must validate against the CRD's v1alpha2 openAPIV3Schema
  (jsonschema: types, required fields, enums, patterns, bounds), and may
  hold no key the schema does not declare (the API server would prune
  it silently: the walk below refuses it first).
- Each replicated Job's template must deserialize into the Kubernetes
  client's V1JobTemplateSpec with no unknown field at any depth and
  serialize back to exactly what was read (as k8s_check.py does for Jobs).
- The JobSet webhook's rules on names (kubernetes-sigs/jobset
  pkg/webhooks/jobset_webhook.go): the JobSet and replicated Job names,
  the longest child Job name and the longest pod name plus its 5
  character suffix are DNS-1035 labels of at most 63.
- tpuci's promises: one JobSet per multi-host instance and no Service
  beside it (the JobSet makes it: network.enableDNSHostnames), a
  single-host instance stays an Indexed Job, one replicated Job per slice
  with parallelism = completions = hosts and backoffLimit 0,
  failurePolicy.maxRestarts = attempts - 1, GKE's TPU node selectors,
  google.com/tpu and topology per type, the hostnames JobSet gives pods
  in MASTER_ADDR / TPU_WORKER_HOSTNAMES, the results volume (claim with
  one folder per pod, or the JUnit wrapper).
- The validator itself must catch broken JobSets (a misspelt field, a
  string count, a missing template): a check that cannot fail proves
  nothing.

Usage: python3 jobset_check.py TPUCI WORKDIR CRD   (prints FAIL lines;
exit 1 on any). Needs the kubernetes, yaml and jsonschema modules."""
import copy
import json
import os
import re
import subprocess
import sys

import jsonschema
import yaml

import k8s_models

TPUCI, WORK, CRD = sys.argv[1], sys.argv[2], sys.argv[3]
checks = k8s_models.Checks()
want = checks.want


def schema_of(crd_path, version):
    crd = yaml.safe_load(open(crd_path))
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return v["schema"]["openAPIV3Schema"]
    raise SystemExit("no version %s in %s" % (version, crd_path))


SCHEMA = schema_of(CRD, "v1alpha2")
VALIDATOR = jsonschema.Draft7Validator(SCHEMA)


def unknown_fields(value, schema, path, out):
    """Keys the structural schema does not declare (what the API server
    prunes), at any depth."""
    if isinstance(value, dict):
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for k, v in value.items():
            if path == "" and k == "metadata":
                continue  # ObjectMeta: read into V1ObjectMeta below
            if props is not None and k in props:
                unknown_fields(v, props[k], "%s.%s" % (path, k), out)
            elif isinstance(extra, dict):
                unknown_fields(v, extra, "%s[%s]" % (path, k), out)
            else:
                out.append("%s.%s" % (path, k))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            unknown_fields(v, schema["items"], "%s[%d]" % (path, i), out)


def schema_problems(doc):
    errs = ["%s: %s" % ("/".join(str(p) for p in e.absolute_path), e.message)
            for e in VALIDATOR.iter_errors(doc)]
    extra = []
    unknown_fields(doc, SCHEMA, "", extra)
    return errs + ["unknown field %s" % f for f in extra]


model_problems = k8s_models.model_problems


DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def dns1035(s):
    return isinstance(s, str) and len(s) <= 63 and DNS1035.match(s) is not None


def jobset_problems(js):
    """Everything the API server and the JobSet webhook would refuse."""
    out = schema_problems(js)
    out += ["metadata: %s" % p for p in model_problems(js.get("metadata", {}), "V1ObjectMeta")]
    name = js.get("metadata", {}).get("name", "")
    if not dns1035(name):
        out.append("JobSet name %r is not a DNS-1035 label" % name)
    for i, rj in enumerate(js.get("spec", {}).get("replicatedJobs", [])):
        tmpl = rj.get("template")
        if not isinstance(tmpl, dict):
            continue
        out += ["replicatedJobs[%d].template: %s" % (i, p) for p in model_problems(tmpl, "V1JobTemplateSpec")]
        replicas = rj.get("replicas", 1)
        if not dns1035("%s-%s-%d" % (name, rj.get("name"), replicas - 1)):
            out.append("replicatedJobs[%d]: child Job name too long" % i)
        spec = tmpl.get("spec", {})
        if spec.get("completionMode") == "Indexed" and isinstance(spec.get("completions"), int):
            pod = "%s-%s-%d-%d-abcde" % (name, rj.get("name"), replicas - 1, spec["completions"] - 1)
            if not dns1035(pod):
                out.append("replicatedJobs[%d]: pod name %s too long" % (i, pod))
    return out


# ---------------------------------------------------------------------
def export(spec_text, *args, expect_code=0):
    path = os.path.join(WORK, "spec.lua")
    with open(path, "w") as f:
        f.write(spec_text)
    p = subprocess.run([TPUCI, "export", "kubernetes", *args, "spec.lua"], cwd=WORK,
                       capture_output=True, text=True)
    want(p.returncode == expect_code, "export %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return [d for d in yaml.safe_load_all(p.stdout) if d is not None] if p.returncode == 0 else []


def by_kind(docs, kind):
    return {d["metadata"]["annotations"]["tpuci.instance"]: d for d in docs
            if d["kind"] == kind and "annotations" in d["metadata"]}


def pod_of(js):
    return js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]


def env_of(js):
    return {e["name"]: e for e in pod_of(js)["containers"][0].get("env", [])}


# (type, hosts, gke-tpu-accelerator, gke-tpu-topology, chips per pod):
# multi-host rows of tpu-topology.md 4a/4c (k8s_check.py has them all).
MULTI = [("v4-16", 2, "tpu-v4-podslice", "2x2x2", 4),
         ("v4-128", 16, "tpu-v4-podslice", "4x4x4", 4),
         ("v5p-32", 4, "tpu-v5p-slice", "2x2x4", 4),
         ("v5litepod-8", 2, "tpu-v5-lite-podslice", "2x4", 4),
         ("v5litepod-256", 64, "tpu-v5-lite-podslice", "16x16", 4),
         ("v6e-16", 4, "tpu-v6e-slice", "4x4", 4),
         ("tpu7x-32", 4, "tpu7x", "2x2x4", 4)]


def spec_text():
    lines = ['image "img" { ref = "registry.example/ml:1.0" }']
    for i, (t, hosts, _, _, _) in enumerate(MULTI):
        lines.append('topology "%s" {}' % t)
        lines.append('job "j-%s" { image = "img", topology = "%s", run = "python3 train.py", retries = %d }'
                     % (t, t, i))
    lines.append('topology "v5litepod-4" {}')
    lines.append('job "single" { image = "img", topology = "v5litepod-4", run = "true", retries = 2 }')
    lines.append('topology "c" { hosts = 3, chips_per_host = 2, cores_per_chip = 1, emulate = "jax" }')
    lines.append('job "custom-with-a-name-long-enough-to-be-cut-to-fit-the-webhook" {')
    lines.append('  image = "img", topology = "c", pytest = { args = { "tests/" } }, timeout = "5m" }')
    return "\n".join(lines) + "\n"


def check_tpu():
    docs = export(spec_text(), "--jobset")
    kinds = [d["kind"] for d in docs]
    want("Service" not in kinds, "a Service beside the JobSets: %r" % kinds)
    jobsets, jobs = by_kind(docs, "JobSet"), by_kind(docs, "Job")
    want(sorted(jobs) == ["single"], "Indexed Jobs %r, want only the single-host one" % sorted(jobs))
    want(len(jobsets) == len(MULTI) + 1, "%d JobSets, want %d" % (len(jobsets), len(MULTI) + 1))
    for d in docs:
        if d["kind"] == "JobSet":
            for p in jobset_problems(d):
                want(False, "%s: %s" % (d["metadata"]["name"], p))
    for i, (t, hosts, accel, topo, chips) in enumerate(MULTI):
        js = jobsets.get("j-" + t)
        if not want(js is not None, "no JobSet for %s" % t):
            continue
        name, spec = js["metadata"]["name"], js["spec"]
        want(spec["failurePolicy"] == {"maxRestarts": max(i, 0)},
             "%s: failurePolicy %r, want maxRestarts %d (retries = %d)" % (t, spec["failurePolicy"], i, i))
        want(spec["network"].get("enableDNSHostnames") is True, "%s: no headless Service" % t)
        rjs = spec["replicatedJobs"]
        want(len(rjs) == 1 and rjs[0]["replicas"] == 1, "%s: one replicated Job per slice: %r" % (t, rjs))
        job = rjs[0]["template"]["spec"]
        want(job["completionMode"] == "Indexed" and job["completions"] == job["parallelism"] == hosts,
             "%s: %r pods, want %d" % (t, job.get("completions"), hosts))
        want(job["backoffLimit"] == 0, "%s: backoffLimit %r: a failed pod must fail the gang" % (t, job["backoffLimit"]))
        pod = pod_of(js)
        want(pod.get("nodeSelector") == {"cloud.google.com/gke-tpu-accelerator": accel,
                                         "cloud.google.com/gke-tpu-topology": topo},
             "%s: nodeSelector %r" % (t, pod.get("nodeSelector")))
        want(pod["containers"][0]["resources"]["limits"].get("google.com/tpu") == str(chips), "%s: google.com/tpu" % t)
        want("subdomain" not in pod, "%s: the JobSet sets the subdomain" % t)
        want(js["metadata"]["annotations"].get("alpha.jobset.sigs.k8s.io/exclusive-topology")
             == "cloud.google.com/gke-nodepool", "%s: slice not pinned to a node pool" % t)
        env = env_of(js)
        want(env["MASTER_ADDR"]["value"] == "%s-slice-0-0.%s" % (name, name),
             "%s: MASTER_ADDR %r is not the JobSet's host 0" % (t, env["MASTER_ADDR"]))
        want("valueFrom" in env["RANK"] and env["WORLD_SIZE"]["value"] == str(hosts), "%s: RANK/WORLD_SIZE" % t)
        want(not [k for k in env if k.startswith("TPU_")], "%s: TPU_* on a real TPU" % t)
    single = jobs.get("single")
    if single:
        want(single["spec"]["backoffLimit"] == 2, "single-host Job: backoffLimit %r" % single["spec"]["backoffLimit"])
    c = jobsets.get("custom-with-a-name-long-enough-to-be-cut-to-fit-the-webhook")
    if want(c is not None, "no JobSet for the custom topology"):
        name = c["metadata"]["name"]
        want(len(name) <= 45, "custom: name %s longer than 45" % name)
        env = env_of(c)
        want(env["TPU_WORKER_HOSTNAMES"]["value"] == ",".join("%s-slice-0-%d.%s" % (name, h, name) for h in range(3)),
             "custom: TPU_WORKER_HOSTNAMES %r" % env["TPU_WORKER_HOSTNAMES"])
        want(env["JAX_PLATFORMS"]["value"] == "cpu" and "valueFrom" in env["TPU_WORKER_ID"], "custom: emulation env")
        want(c["spec"]["failurePolicy"] == {"maxRestarts": 0}, "custom: no retries, no restarts")
        want("exclusive-topology" not in json.dumps(c["metadata"]), "custom: node pool pinning off TPU")
        cmd = pod_of(c)["containers"][0]["command"]
        want(cmd[:2] == ["/bin/sh", "-c"] and "tpuci junit.xml begin" in cmd[2], "custom: the JUnit wrapper")
        want(pod_of(c)["activeDeadlineSeconds"] == 300, "custom: per-attempt deadline")


def check_claim():
    docs = export(spec_text(), "--jobset", "--emulated", "--results-claim", "results", "--run", "r1")
    for d in docs:
        if d["kind"] != "JobSet":
            continue
        for p in jobset_problems(d):
            want(False, "--results-claim %s: %s" % (d["metadata"]["name"], p))
        pod = pod_of(d)
        want("nodeSelector" not in pod, "--emulated: TPU selector left in")
        vols = {v["name"]: v for v in pod["volumes"]}
        want(vols["tpuci-results"].get("persistentVolumeClaim") == {"claimName": "results"}, "claim volume")
        m = pod["containers"][0]["volumeMounts"][-1]
        want(m.get("subPathExpr") == d["metadata"]["name"] + "/$(JOB_COMPLETION_INDEX)", "one folder per pod: %r" % m)
        want(d["metadata"]["labels"].get("tpuci.run") == "r1", "run label")


def check_validator():
    """The validator must refuse what the API server would."""
    docs = export(spec_text(), "--jobset")
    js = [d for d in docs if d["kind"] == "JobSet"][0]
    want(jobset_problems(js) == [], "the base JobSet is not valid: %r" % jobset_problems(js))
    bad = []
    b = copy.deepcopy(js)
    b["spec"]["failurePolicy"]["maxRestart"] = 1
    bad.append(("misspelt field", b))
    b = copy.deepcopy(js)
    b["spec"]["failurePolicy"]["maxRestarts"] = "3"
    bad.append(("string count", b))
    b = copy.deepcopy(js)
    del b["spec"]["replicatedJobs"][0]["template"]
    bad.append(("no template", b))
    b = copy.deepcopy(js)
    b["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = 3
    bad.append(("number as a string field", b))
    b = copy.deepcopy(js)
    b["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["nodeSelectors"] = {}
    bad.append(("unknown pod field", b))
    b = copy.deepcopy(js)
    b["metadata"]["name"] = "x" * 60
    bad.append(("name too long for its pods", b))
    for what, doc in bad:
        want(jobset_problems(doc) != [], "the validator accepts a JobSet with a %s" % what)


def main():
    check_tpu()
    check_claim()
    check_validator()
    checks.finish()


main()
