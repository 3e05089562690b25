"""Reads `tpuci export kubernetes` manifests back with the Kubernetes
Python client (python3-kubernetes) and checks them.

Every object must deserialize into its model (V1Service, V1Job) with the
client's own validation of required fields, every key must be a field of
the model at that place (the client silently drops unknown keys, so the
walk below refuses them first), every value must have the field's type,
and serializing the model again must give back exactly what was read.
Then the checks the API server would make on names, labels, selectors,
quantities and environment names, and tpuci's own promises: one pod per
host, GKE's TPU node labels and chip counts for each catalogue type (the
table below, written by hand from /work/shared/tpu-topology.md), the CPU
emulation environment with --emulated, the pytest command and the
results volume. A sharded pytest job's exported command is also run here
with a local pytest, as the kubelet would run it.

Usage: python3 k8s_check.py TPUCI WORKDIR   (prints FAIL lines; exit 1 on
any). Needs the kubernetes and yaml modules; the caller skips without."""
import os
import re
import subprocess
import sys

import yaml
from kubernetes.utils import parse_quantity

import k8s_models

TPUCI, WORK = sys.argv[1], sys.argv[2]
checks = k8s_models.Checks()
want = checks.want


# ---------------------------------------------------------------------
# GKE's values per accelerator type and layout, from tpu-topology.md:
# 4a (accelerator table: topology, hosts x chips/VM, gke-tpu-accelerator)
# and 4c (node labels cloud.google.com/gke-tpu-accelerator and
# gke-tpu-topology, resource google.com/tpu = chips per VM).
# (type, layout) -> (accelerator label, topology label, chips/VM, hosts)
GKE = {
    ("v4-8", "1x4"): ("tpu-v4-podslice", "2x2x1", 4, 1),
    ("v4-16", "2x4"): ("tpu-v4-podslice", "2x2x2", 4, 2),
    ("v4-32", "4x4"): ("tpu-v4-podslice", "2x2x4", 4, 4),
    ("v4-64", "8x4"): ("tpu-v4-podslice", "2x4x4", 4, 8),
    ("v4-128", "16x4"): ("tpu-v4-podslice", "4x4x4", 4, 16),
    ("v5p-8", "1x4"): ("tpu-v5p-slice", "2x2x1", 4, 1),
    ("v5p-16", "2x4"): ("tpu-v5p-slice", "2x2x2", 4, 2),
    ("v5p-32", "4x4"): ("tpu-v5p-slice", "2x2x4", 4, 4),
    ("v5litepod-1", "1x1"): ("tpu-v5-lite-podslice", "1x1", 1, 1),
    ("v5litepod-4", "1x4"): ("tpu-v5-lite-podslice", "2x2", 4, 1),
    ("v5litepod-8", "2x4"): ("tpu-v5-lite-podslice", "2x4", 4, 2),
    ("v5litepod-8", "1x8"): ("tpu-v5-lite-podslice", "2x4", 8, 1),
    ("v5litepod-16", "4x4"): ("tpu-v5-lite-podslice", "4x4", 4, 4),
    ("v5litepod-32", "8x4"): ("tpu-v5-lite-podslice", "4x8", 4, 8),
    ("v5litepod-64", "16x4"): ("tpu-v5-lite-podslice", "8x8", 4, 16),
    ("v5litepod-256", "64x4"): ("tpu-v5-lite-podslice", "16x16", 4, 64),
    ("v6e-1", "1x1"): ("tpu-v6e-slice", "1x1", 1, 1),
    ("v6e-4", "1x4"): ("tpu-v6e-slice", "2x2", 4, 1),
    ("v6e-8", "1x8"): ("tpu-v6e-slice", "2x4", 8, 1),
    ("v6e-8", "2x4"): ("tpu-v6e-slice", "2x4", 4, 2),
    ("v6e-16", "4x4"): ("tpu-v6e-slice", "4x4", 4, 4),
    ("v6e-32", "8x4"): ("tpu-v6e-slice", "4x8", 4, 8),
    ("v6e-64", "16x4"): ("tpu-v6e-slice", "8x8", 4, 16),
    # 4a gives tpu7x-8 (2x2x1, 1 VM x 4); -16 and -32 follow its
    # "chips/4 VMs x 4" rule with v4/v5p's 3-D shapes (inferred, as in
    # the catalogue).
    ("tpu7x-8", "1x4"): ("tpu7x", "2x2x1", 4, 1),
    ("tpu7x-16", "2x4"): ("tpu7x", "2x2x2", 4, 2),
    ("tpu7x-32", "4x4"): ("tpu7x", "2x2x4", 4, 4),
}
# Two layouts: the other one is picked with `layout`.
DEFAULT_LAYOUT = {"v5litepod-8": "2x4", "v6e-8": "1x8"}
# Not on GKE (4a: no gke-tpu-accelerator for v2/v3).
NOT_ON_GKE = ["v2-8", "v2-32", "v3-8", "v3-32", "v3-64", "v3-128", "v3-256", "v3-512"]

INDEX_FIELD = "metadata.annotations['batch.kubernetes.io/job-completion-index']"

# ---------------------------------------------------------------------
# The API server's name rules (k8s.io/apimachinery validation).
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")


def dns1123_label(s):
    return isinstance(s, str) and len(s) <= 63 and DNS1123_LABEL.match(s) is not None


def qualified_key(k):
    if "/" in k:
        prefix, name = k.split("/", 1)
        if not (len(prefix) <= 253 and DNS1123_SUBDOMAIN.match(prefix)):
            return False
    else:
        name = k
    return len(name) <= 63 and QUALIFIED_NAME.match(name) is not None


def label_value(v):
    return isinstance(v, str) and len(v) <= 63 and LABEL_VALUE.match(v) is not None


# ---------------------------------------------------------------------
MODELS = {("v1", "Service"): "V1Service", ("batch/v1", "Job"): "V1Job"}


def read_back(doc, where):
    """Deserializes into the model (required fields are checked by its
    setters) and serializes again: nothing may be lost or changed."""
    model = MODELS.get((doc.get("apiVersion"), doc.get("kind")))
    if not want(model is not None, "%s: unexpected object %s %s" % (where, doc.get("apiVersion"), doc.get("kind"))):
        return None
    problems = k8s_models.model_problems(doc, model)
    for p in problems:
        want(False, "%s: %s" % (where, p))
    want(not problems, "%s: read back as %s" % (where, model))


# ---------------------------------------------------------------------
def export(spec_text, *args, expect_code=0):
    path = os.path.join(WORK, "spec.lua")
    with open(path, "w") as f:
        f.write(spec_text)
    p = subprocess.run([TPUCI, "export", "kubernetes", *args, "spec.lua"], cwd=WORK,
                       capture_output=True, text=True)
    want(p.returncode == expect_code,
         "export %s: exit %d, want %d: %s" % (" ".join(args), p.returncode, expect_code, p.stderr.strip()))
    # Warnings of the spec (emulation caveats) come first; an error is
    # the one last line.
    lines = [l for l in p.stderr.splitlines() if not l.startswith("see 'tpuci help")]
    want(all(l.startswith("tpuci: warning: ") for l in lines[:-1]), "stderr: %r" % p.stderr)
    p.error = lines[-1] + "\n" if lines and not lines[-1].startswith("tpuci: warning: ") else ""
    return p


def load(text):
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    for d in docs:
        read_back(d, "%s %s" % (d.get("kind"), d.get("metadata", {}).get("name")))
    return docs


def container(job):
    return job["spec"]["template"]["spec"]["containers"][0]


def env_of(job):
    return {e["name"]: e for e in container(job).get("env", [])}


def check_objects(docs):
    """What the API server and tpuci promise for every object."""
    services = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}
    jobs = [d for d in docs if d["kind"] == "Job"]
    names = [d["metadata"]["name"] for d in jobs]
    want(len(set(names)) == len(names), "two Jobs have one name: %r" % names)
    for d in docs:
        md, name = d["metadata"], d["metadata"]["name"]
        want(len(name) <= 59 and DNS1035_LABEL.match(name), "%s: not a DNS-1035 label of at most 59" % name)
        for k, v in list(md.get("labels", {}).items()) + list(md.get("annotations", {}).items()):
            want(qualified_key(k), "%s: bad label or annotation key %r" % (name, k))
        for k, v in md.get("labels", {}).items():
            want(label_value(v), "%s: bad label value %s=%r" % (name, k, v))
    for job in jobs:
        name, spec = job["metadata"]["name"], job["spec"]
        pod = spec["template"]["spec"]
        hosts = spec["completions"]
        want(spec["completionMode"] == "Indexed" and spec["parallelism"] == hosts >= 1,
             "%s: completions %r, parallelism %r" % (name, hosts, spec["parallelism"]))
        want(dns1123_label("%s-%d" % (name, hosts - 1)), "%s: pod hostnames too long" % name)
        want(pod["restartPolicy"] == "Never", "%s: restartPolicy" % name)
        want(pod.get("enableServiceLinks") is False, "%s: service links" % name)
        labels = spec["template"]["metadata"]["labels"]
        want(labels == job["metadata"]["labels"], "%s: pod labels differ from the Job's" % name)
        want(labels.get("tpuci.gang") == name, "%s: tpuci.gang" % name)
        if hosts > 1:
            svc = services.get(pod.get("subdomain"))
            if want(svc is not None and pod["subdomain"] == name, "%s: no Service for subdomain %r" % (name, pod.get("subdomain"))):
                want(svc["spec"]["clusterIP"] == "None", "%s: Service not headless" % name)
                sel = svc["spec"]["selector"]
                want(sel and all(labels.get(k) == v for k, v in sel.items()), "%s: Service selects other pods" % name)
        else:
            want("subdomain" not in pod and name not in services, "%s: a Service for one pod" % name)
        c = container(job)
        want(dns1123_label(c["name"]), "%s: container name" % name)
        seen = set()
        for e in c.get("env", []):
            want(ENV_NAME.match(e["name"]) is not None, "%s: env name %r" % (name, e["name"]))
            want(e["name"] not in seen, "%s: env %s twice" % (name, e["name"]))
            seen.add(e["name"])
            if "valueFrom" in e:
                want(e["valueFrom"] == {"fieldRef": {"fieldPath": INDEX_FIELD}}, "%s: env %s from %r" % (name, e["name"], e["valueFrom"]))
        res = c.get("resources", {})
        want(res.get("limits") == res.get("requests"), "%s: requests differ from limits" % name)
        for q in res.get("limits", {}).values():
            try:
                parse_quantity(q)
            except ValueError:
                want(False, "%s: quantity %r" % (name, q))
        mounts = {m["name"]: m for m in c.get("volumeMounts", [])}
        vols = {v["name"]: v for v in pod.get("volumes", [])}
        want(set(mounts) == set(vols), "%s: volumes %r vs mounts %r" % (name, list(vols), list(mounts)))
        want(mounts.get("tpuci-results", {}).get("mountPath") == "/tpuci/results", "%s: results mount" % name)
        want(env_of(job).get("TPUCI_RESULTS", {}).get("value") == "/tpuci/results", "%s: TPUCI_RESULTS" % name)
        for k in vols:
            want(dns1123_label(k), "%s: volume name %r" % (name, k))
    return jobs


def by_instance(jobs):
    return {j["metadata"]["annotations"]["tpuci.instance"]: j for j in jobs}


# ---------------------------------------------------------------------
# 1. Every GKE catalogue type, on TPU nodes and emulated.
def types_spec():
    lines = ['image "img" { ref = "registry.example/ml:1.0" }']
    for (t, layout) in GKE:
        topo = t if DEFAULT_LAYOUT.get(t, layout) == layout else "%s-%s" % (t, layout)
        if topo == t:
            lines.append('topology "%s" {}' % t)
        else:
            lines.append('topology "%s" { base = "%s", layout = "%s" }' % (topo, t, layout))
        lines.append('job "j-%s" { image = "img", topology = "%s", run = "python3 train.py", env = { TPU_CUSTOM = "kept" } }' % (topo, topo))
    lines.append('topology "custom" { hosts = 2, chips_per_host = 4, cores_per_chip = 1, emulate = "jax" }')
    lines.append('job "c" { image = "img", topology = "custom", cmd = { "python3", "-c", "print(1)" } }')
    lines.append('job "plain" { image = "img", run = "true", cpus = 0.25, memory = "1536m" }')
    return "\n".join(lines) + "\n"


def check_types():
    spec = types_spec()
    jobs = by_instance(check_objects(load(export(spec).stdout)))
    for (t, layout), (accel, topo, chips, hosts) in GKE.items():
        topo_name = t if DEFAULT_LAYOUT.get(t, layout) == layout else "%s-%s" % (t, layout)
        job = jobs.get("j-" + topo_name)
        if not want(job is not None, "no Job for %s" % topo_name):
            continue
        pod = job["spec"]["template"]["spec"]
        want(job["spec"]["completions"] == hosts, "%s: %r pods, want %d" % (topo_name, job["spec"]["completions"], hosts))
        want(pod.get("nodeSelector") == {"cloud.google.com/gke-tpu-accelerator": accel,
                                         "cloud.google.com/gke-tpu-topology": topo},
             "%s: nodeSelector %r, want %s %s" % (topo_name, pod.get("nodeSelector"), accel, topo))
        res = container(job).get("resources", {})
        want(res.get("limits", {}).get("google.com/tpu") == str(chips) == res.get("requests", {}).get("google.com/tpu"),
             "%s: google.com/tpu %r, want %d" % (topo_name, res, chips))
        want({"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"} in pod.get("tolerations", []),
             "%s: no toleration of the TPU taint" % topo_name)
        env = env_of(job)
        want(not [k for k in env if k.startswith("TPU_") and k != "TPU_CUSTOM"] and "PJRT_DEVICE" not in env
             and "CLOUD_TPU_TASK_ID" not in env,
             "%s: TPU or emulation variables on a real TPU: %r" % (topo_name, sorted(env)))
        want(env.get("TPU_CUSTOM", {}).get("value") == "kept", "%s: the job's own TPU_CUSTOM" % topo_name)
        want(env.get("WORLD_SIZE", {}).get("value") == str(hosts), "%s: WORLD_SIZE" % topo_name)
        if hosts > 1:
            want(env["RANK"].get("valueFrom") is not None, "%s: RANK is not the completion index" % topo_name)
            want(env["MASTER_ADDR"]["value"] == "%s-0.%s" % (job["metadata"]["name"], job["metadata"]["name"]),
                 "%s: MASTER_ADDR %r" % (topo_name, env["MASTER_ADDR"]))
    c = jobs["c"]
    env = env_of(c)
    want("nodeSelector" not in c["spec"]["template"]["spec"] and c["metadata"]["annotations"]["tpuci.mode"] == "emulated",
         "a custom topology is not emulated")
    want(env.get("JAX_PLATFORMS", {}).get("value") == "cpu" and env["TPU_WORKER_ID"].get("valueFrom"),
         "custom topology: emulation environment %r" % sorted(env))
    plain = jobs["plain"]
    want(container(plain)["resources"]["limits"] == {"cpu": "250m", "memory": "1536Mi"},
         "plain: resources %r" % container(plain).get("resources"))
    want(container(plain)["command"] == ["/bin/sh", "-c", "true"], "plain: command")

    # The same spec emulated: no TPU anywhere, the emulation everywhere.
    jobs = by_instance(check_objects(load(export(spec, "--emulated").stdout)))
    for (t, layout), (accel, topo, chips, hosts) in GKE.items():
        topo_name = t if DEFAULT_LAYOUT.get(t, layout) == layout else "%s-%s" % (t, layout)
        job, name = jobs["j-" + topo_name], jobs["j-" + topo_name]["metadata"]["name"]
        pod, env = job["spec"]["template"]["spec"], env_of(job)
        want("nodeSelector" not in pod and "tolerations" not in pod and "resources" not in container(job),
             "%s --emulated: TPU scheduling left in" % topo_name)
        want(env.get("PJRT_DEVICE", {}).get("value") == "CPU" and env["CPU_NUM_DEVICES"]["value"] == str(chips),
             "%s --emulated: PJRT_DEVICE/CPU_NUM_DEVICES %r" % (topo_name, sorted(env)))
        want(env["TPU_ACCELERATOR_TYPE"]["value"] == t and env["TPU_TOPOLOGY"]["value"] == topo,
             "%s --emulated: TPU_ACCELERATOR_TYPE/TPU_TOPOLOGY" % topo_name)
        hostnames = "localhost" if hosts == 1 else ",".join("%s-%d.%s" % (name, i, name) for i in range(hosts))
        want(env["TPU_WORKER_HOSTNAMES"]["value"] == hostnames, "%s --emulated: TPU_WORKER_HOSTNAMES" % topo_name)
        want(("valueFrom" in env["TPU_WORKER_ID"]) == (hosts > 1), "%s --emulated: TPU_WORKER_ID" % topo_name)

    # v2/v3 are not on GKE: an error naming the job's line, unless emulated.
    for t in NOT_ON_GKE:
        s = 'image "img" { ref = "x/y:1" }\ntopology "%s" {}\njob "old" { image = "img", topology = "%s", run = "true" }\n' % (t, t)
        p = export(s, expect_code=2)
        want(p.stdout == "" and p.error.startswith("tpuci: spec.lua:3: job 'old': topology '%s' (spec.lua:2) is a " % t)
             and "GKE does not offer" in p.error, "%s: %r" % (t, p.stderr))
        load(export(s, "--emulated").stdout)


# ---------------------------------------------------------------------
# 2. A pytest spec in ignite's style, with every option.
IGNITE = r'''
image "xla" { ref = "us-central1-docker.pkg.dev/tpu-pytorch-releases/docker/xla:r2.7.0_3.10_tpuvm", pull = "always" }
topology "v4-16" { emulate = "pjrt" }
topology "v5litepod-4" {}
job "tpu" {
  image = "xla", topology = "v4-16", workdir = "/src", mounts = { ["."] = "/src" },
  pytest = { markers = "tpu", args = { "tests/ignite" } },
  timeout = "20m", grace = "30s", retries = { attempts = 3, on = { "timeout", "infra" } },
  env = { XLA_USE_BF16 = "0", WEIRD = "$(HOME) $$ yes" },
}
job "unit" {
  image = "xla", topology = "v5litepod-4", workdir = "/src", mounts = { ["."] = "/src" },
  pytest = { markers = "not distributed", args = { "tests/ignite" }, shards = 3, allow_empty = true },
  matrix = { python = { "3.10", "3.11" } }, cpus = 2, memory = "4g", timeout = "90s",
}
'''


def check_pytest():
    p = export(IGNITE, expect_code=2)
    want("job 'tpu': mounts " in p.error and "--no-mounts" in p.error and p.error.startswith("tpuci: spec.lua:5: "),
         "mounts without --no-mounts: %r" % p.stderr)
    docs = load(export(IGNITE, "--no-mounts", "--run", "CI run #42", "--results-claim", "tpuci-results").stdout)
    jobs = by_instance(check_objects(docs))
    want(sorted(jobs) == ["tpu", "unit[python=3.10,shard=1/3]", "unit[python=3.10,shard=2/3]", "unit[python=3.10,shard=3/3]",
                          "unit[python=3.11,shard=1/3]", "unit[python=3.11,shard=2/3]", "unit[python=3.11,shard=3/3]"],
         "instances %r" % sorted(jobs))
    tpu = jobs["tpu"]
    md, spec, pod = tpu["metadata"], tpu["spec"], tpu["spec"]["template"]["spec"]
    want(md["name"].startswith("ci-run-42-tpu-"), "run in the name: %s" % md["name"])
    want(md["labels"].get("tpuci.run", "").startswith("CI-run-42-"), "tpuci.run label %r" % md["labels"])
    want(md["annotations"].get("tpuci.dropped-mounts") == "/src", "dropped-mounts annotation")
    want(md["annotations"].get("tpuci.retry-on") == "timeout,infra" and md["annotations"].get("tpuci.attempts") == "3", "retry annotations")
    want(spec["backoffLimit"] == 4, "backoffLimit %r, want (3 - 1) x 2 hosts" % spec["backoffLimit"])
    want(pod["activeDeadlineSeconds"] == 1200 and pod["terminationGracePeriodSeconds"] == 30, "deadline/grace")
    c, env = container(tpu), env_of(tpu)
    want(c["imagePullPolicy"] == "Always" and c["workingDir"] == "/src", "pull policy / workdir")
    want(env["TPUCI_RUN_ID"]["value"] == "CI run #42" and "TPUCI_ATTEMPT" not in env, "TPUCI_RUN_ID / TPUCI_ATTEMPT")
    want(env["WEIRD"]["value"] == "$$(HOME) $$$ yes", "$ escaped for the kubelet: %r" % env["WEIRD"]["value"])
    cmd = c["command"]
    want(cmd[0] == "python3" and cmd[1] == "-c" and "--junitxml=/tpuci/results/junit.xml" in cmd
         and cmd[cmd.index("-m") + 1] == "tpu" and cmd[-1] == "tests/ignite", "pytest command %r" % (cmd[:2] + cmd[3:]))
    vols = {v["name"]: v for v in pod["volumes"]}
    want(vols["tpuci-results"] == {"name": "tpuci-results", "persistentVolumeClaim": {"claimName": "tpuci-results"}}, "claim volume")
    want(c["volumeMounts"][0].get("subPathExpr") == md["name"] + "/$(JOB_COMPLETION_INDEX)", "subPathExpr")
    want(len(pod["volumes"]) == 1, "a volume for a dropped mount")
    unit = jobs["unit[python=3.10,shard=2/3]"]
    want(container(unit)["resources"]["limits"] == {"cpu": "2", "memory": "4Gi", "google.com/tpu": "4"}, "unit resources")
    want(env_of(unit).get("TPUCI_K8S_SHARD", {}).get("value") == "2/3"
         and "class TpuciShard" in container(unit)["command"][2], "shard 2/3: TPUCI_K8S_SHARD and tpuci_k8s.py")
    want(env_of(unit).get("TPUCI_K8S_ALLOW_EMPTY", {}).get("value") == "1", "allow_empty: TPUCI_K8S_ALLOW_EMPTY")
    want("TPUCI_K8S_SHARD" not in env_of(tpu) and "TpuciShard" not in container(tpu)["command"][2],
         "an unsharded job without allow_empty: no tpuci_k8s.py")


# ---------------------------------------------------------------------
# 3. The exported command of a sharded pytest job, run as a pod would.
def kubelet_expand(s, env):
    """The kubelet's $(VAR) expansion of command and args."""
    out, i = [], 0
    while i < len(s):
        if s[i] == "$" and i + 1 < len(s):
            n = s[i + 1]
            if n == "$":
                out.append("$")
                i += 2
                continue
            if n == "(":
                j = s.find(")", i + 2)
                if j > 0:
                    name = s[i + 2:j]
                    out.append(env[name] if name in env else "$(%s)" % name)
                    i = j + 1
                    continue
        out.append(s[i])
        i += 1
    return "".join(out)


def run_shards(python):
    suite = os.path.join(WORK, "suite")
    os.makedirs(os.path.join(suite, "tests"), exist_ok=True)
    with open(os.path.join(suite, "tests", "test_a.py"), "w") as f:
        for i in range(7):
            f.write("def test_%d():\n    pass\n" % i)
        f.write("import pytest\n@pytest.mark.slow\ndef test_slow():\n    pass\n")
    spec = ('image "py" { ref = "python:3.11" }\n'
            'job "s" { image = "py", pytest = { python = "%s", args = { "tests" }, k = "not slow", shards = 3 } }\n'
            'job "none" { image = "py", pytest = { python = "%s", args = { "tests" }, k = "nothing", allow_empty = true } }\n'
            % (python, python))
    jobs = by_instance(check_objects(load(export(spec).stdout)))
    seen = []
    for name in ["s[shard=1/3]", "s[shard=2/3]", "s[shard=3/3]", "none"]:
        c = container(jobs[name])
        results = os.path.join(WORK, "results-" + str(len(seen)))
        os.makedirs(results, exist_ok=True)
        env = {e["name"]: e["value"] for e in c["env"] if "value" in e}
        argv = [kubelet_expand(a, env).replace("/tpuci/results", results) for a in c["command"]]
        p = subprocess.run(argv, cwd=suite, capture_output=True, text=True, env=dict(os.environ, **env))
        if name == "none":
            want(p.returncode == 0, "allow_empty: exit %d: %s" % (p.returncode, p.stdout[-500:]))
            continue
        want(p.returncode == 0, "%s: exit %d: %s %s" % (name, p.returncode, p.stdout[-800:], p.stderr[-800:]))
        out = p.stdout
        want("--- tpuci junit.xml begin ---" in out and "--- tpuci junit.xml end ---" in out, "%s: no JUnit in the log" % name)
        xml = open(os.path.join(results, "junit.xml")).read()
        ran = re.findall(r'name="(test_\w+)"', xml)
        want(os.path.exists(os.path.join(results, "progress.jsonl")), "%s: no progress.jsonl" % name)
        seen.append(ran)
    # Round-robin in collection order, -k applied first: 0,3,6 / 1,4 / 2,5.
    want(seen == [["test_0", "test_3", "test_6"], ["test_1", "test_4"], ["test_2", "test_5"]], "shards ran %r" % seen)


# ---------------------------------------------------------------------
# 4. Specs that cannot be exported: one line, file:line, exit 2.
def check_errors():
    cases = [
        ('job "lint" { run = "ruff check ." }\n', "spec.lua:1: job 'lint': runs as a local process, and a pod runs an image"),
        ('image "i" { ref = "a/b:1" }\njob "n" { image = "i", run = "true", network = "none" }\n',
         "spec.lua:2: job 'n': network = \"none\" is a Docker network mode"),
        ('image "i" { ref = "a/b:1" }\ntopology "v4-16" {}\njob "g" { image = "i", topology = "v4-16", pytest = { shards = 2 } }\n',
         "spec.lua:3: job 'g': pytest shards on a 2-host topology are not supported"),
    ]
    for spec, msg in cases:
        p = export(spec, expect_code=2)
        want(p.stdout == "" and p.error.startswith("tpuci: " + msg),
             "error %r, want %r" % (p.stderr, msg))
    p = export('image "i" { ref = "a/b:1" }\njob "a" { image = "i", run = "true" }\n', "--results-claim", "Bad_Name", expect_code=2)
    want("cannot name a PersistentVolumeClaim" in p.stderr, "bad claim: %r" % p.stderr)
    p = export('image "i" { ref = "a/b:1" }\njob "a" { image = "i", run = "true" }\n', "--only", "zzz", expect_code=2)
    want(p.stdout == "" and p.stderr, "--only matching nothing")
    p = export('image "i" { ref = "a/b:1" }\njob "a" { image = "i", run = "true" }\n', "--per-job", expect_code=2)
    want("--per-job is not an option of export kubernetes" in p.stderr, "github option on kubernetes: %r" % p.stderr)


# ---------------------------------------------------------------------
# 5. The accelerator options a pod can have: read into the client's
# models like every object, and where each went.
def check_accelerators():
    spec = """image "xla" { ref = "registry.example/xla:1" }
job "tpu" { image = "xla", topology = "v4-8", run = "python3 train.py",
  shm_size = "16g", privileged = true, devices = { "/dev/accel*", "/dev/vfio/0" },
  cap_add = { "sys_resource" }, cap_drop = { "NET_RAW" },
  sysctls = { ["net.core.somaxconn"] = 1024, ["kernel.shmmax"] = "68719476736" } }
job "ipc" { image = "xla", run = "true", ipc = "host" }
job "gpu" { image = "xla", run = "nvidia-smi", gpus = { count = 2, driver = "nvidia" }, memory = "4g" }
job "plain" { image = "xla", run = "true", ipc = "private" }
"""
    p = export(spec)
    jobs = by_instance(check_objects(load(p.stdout)))
    tpu = jobs["tpu"]
    pod, c = tpu["spec"]["template"]["spec"], container(tpu)
    vols = {v["name"]: v for v in pod["volumes"]}
    shm = vols.get("tpuci-shm", {}).get("emptyDir", {})
    want(shm.get("medium") == "Memory" and parse_quantity(shm.get("sizeLimit", "0")) == 16 << 30,
         "shm_size: emptyDir %r" % shm)
    want({m["name"]: m["mountPath"] for m in c["volumeMounts"]}.get("tpuci-shm") == "/dev/shm",
         "shm_size: mounts %r" % c["volumeMounts"])
    want(c.get("securityContext") == {"privileged": True,
                                      "capabilities": {"add": ["SYS_RESOURCE"], "drop": ["NET_RAW"]}},
         "privileged, cap_add, cap_drop: %r" % c.get("securityContext"))
    want(pod.get("securityContext") == {"sysctls": [{"name": "kernel.shmmax", "value": "68719476736"},
                                                    {"name": "net.core.somaxconn", "value": "1024"}]},
         "sysctls: %r" % pod.get("securityContext"))
    want("hostIPC" not in pod, "hostIPC without ipc = \"host\"")
    # google.com/tpu brings the TPU's devices.
    want(tpu["metadata"]["annotations"].get("tpuci.dropped-devices") == "/dev/accel*,/dev/vfio/0",
         "dropped devices: %r" % tpu["metadata"]["annotations"])
    want(c["resources"]["limits"] == {"google.com/tpu": "4"}, "tpu resources %r" % c["resources"])
    want(jobs["ipc"]["spec"]["template"]["spec"].get("hostIPC") is True, "ipc = \"host\": hostIPC")
    want("hostIPC" not in jobs["plain"]["spec"]["template"]["spec"], "ipc = \"private\" is a pod's own")
    want(container(jobs["gpu"])["resources"]["limits"] == {"memory": "4Gi", "nvidia.com/gpu": "2"},
         "gpus: %r" % container(jobs["gpu"])["resources"])
    for name in ("ipc", "gpu", "plain"):
        want("securityContext" not in container(jobs[name]) and "tpuci-shm" not in
             [v["name"] for v in jobs[name]["spec"]["template"]["spec"]["volumes"]],
             "%s: options it does not have" % name)
    # What a pod cannot have.
    cases = [
        ('devices = { "/dev/null:/dev/accel0" }', "devices: a pod cannot name a device of its node"),
        ('topology = "v4-8", devices = { "/dev/accel*", "/dev/nvidia0" }',
         "devices: a pod cannot name a device of its node"),
        ('ulimits = { memlock = -1 }', "ulimits: a pod spec has no resource limits (memlock, ...)"),
        ('gpus = "all"', 'gpus = "all": a pod asks for a number of GPUs (nvidia.com/gpu); give a count'),
        ('gpus = { "0" }', "gpus: a pod asks for a number of GPUs (nvidia.com/gpu), not for device ids"),
        ('gpus = { count = 1, driver = "amd" }', 'gpus.driver = "amd"'),
        ('gpus = { count = 1, capabilities = { "gpu", "utility" } }', "gpus.capabilities"),
    ]
    for body, msg in cases:
        p = export('image "i" { ref = "a/b:1" }\njob "x" { image = "i", run = "true", %s }\n' % body,
                   expect_code=2)
        want(p.stdout == "" and p.error.startswith("tpuci: spec.lua:2: job 'x': " + msg),
             "error %r, want %r" % (p.stderr, msg))


# ---------------------------------------------------------------------
def kubectl():
    """kubectl's client-side dry run needs API discovery from a server."""
    try:
        p = subprocess.run(["kubectl", "apply", "--dry-run=client", "--validate=false", "--request-timeout=5s",
                            "-f", "-"], input=export(types_spec()).stdout, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        print("note: kubectl not usable here (%s): skipped" % e)
        return
    if p.returncode != 0 and re.search(r"connection refused|unable to recognize|couldn't get current server API|no configuration", p.stderr):
        print("note: kubectl apply --dry-run=client needs a cluster for discovery, none here: skipped")
        return
    want(p.returncode == 0 and "created (dry run)" in p.stdout, "kubectl apply --dry-run=client: %s" % p.stderr[-500:])


def main():
    check_types()
    check_pytest()
    check_errors()
    check_accelerators()
    if len(sys.argv) > 3:
        run_shards(sys.argv[3])
    else:
        print("note: no python with pytest here: the exported pytest command was not run")
    kubectl()
    checks.finish()


main()
