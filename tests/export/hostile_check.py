"""Reads an export of a spec full of hostile strings back and checks that
every spec-derived string is text, and the same text, for every reader.

    hostile_check.py github|kubernetes FILE PLAN_JSON SPEC_PATH

FILE is parsed by PyYAML (YAML 1.1) and by ruamel.yaml (YAML 1.2, as
GitHub's and Kubernetes' Go readers): both must give the same tree, the
lines before it must all be comments, and the top level must hold only
what tpuci writes. GitHub: every string is evaluated the way GitHub does
(`${{ ... }}`: only string literals and format() are evaluated here),
after which each field that carries spec text (matrix entries, step
names, env values, `if:` literals) must equal the plan's text
(PLAN_JSON, `tpuci plan --json`); every expression left must be one of
tpuci's own (so no spec text opened one); no `run:` script may hold spec
text. Kubernetes: every document is a Job or a Service, each Job's
annotations, image, working folder, environment and command equal the
plan's instance after the kubelet's `$$` unescaping. Prints FAIL lines;
exit 1 on any.
"""
import json
import re
import sys

import yaml
from ruamel.yaml import YAML

MODE, FILE, PLAN, SPEC = sys.argv[1:5]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: %s: %s" % (FILE, msg))


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


text = open(FILE, encoding="utf-8", newline="").read()
plan = json.load(open(PLAN, encoding="utf-8"))
trees11 = list(yaml.safe_load_all(text))
trees12 = list(YAML(typ="safe", pure=True).load_all(text))
check(trees11 == trees12, "PyYAML (1.1) and ruamel.yaml (1.2) read different trees")
# What comes before the first document: comments only (a line break in
# spec text must not end one).
head = text.split("\n---", 1)[0] if MODE == "kubernetes" else text.split("\nname:", 1)[0]
for n, line in enumerate(head.split("\n"), 1):
    check(line.startswith("#"), "line %d before the document is not a comment: %r" % (n, line))
for bad in ("\u2028", "\u2029", "\u0085", "\r"):
    check(bad not in head, "the header comment holds %r" % bad)


# GitHub's expressions, as far as tpuci's output needs: string literals
# and format(STRING, STRING...).

def lex_literal(s, i):
    """The string literal at s[i] ("'"), and the index after it."""
    assert s[i] == "'"
    out, i = [], i + 1
    while True:
        if s[i] == "'":
            if s.startswith("''", i):
                out.append("'")
                i += 2
                continue
            return "".join(out), i + 1
        out.append(s[i])
        i += 1


def gh_format(fmt, args):
    out, i = [], 0
    while i < len(fmt):
        if fmt.startswith("{{", i) or fmt.startswith("}}", i):
            out.append(fmt[i])
            i += 2
        elif fmt[i] == "{":
            j = fmt.index("}", i)
            out.append(args[int(fmt[i + 1:j])])
            i = j + 1
        else:
            out.append(fmt[i])
            i += 1
    return "".join(out)


def eval_value(expr):
    """The value of a literal or format() expression, else None."""
    e = expr.strip()
    if e.startswith("'"):
        v, k = lex_literal(e, 0)
        return v if k == len(e) else None
    m = re.match(r"format\(", e)
    if m:
        i, args = m.end(), []
        while True:
            while e[i] == " ":
                i += 1
            v, i = lex_literal(e, i)
            args.append(v)
            while e[i] == " ":
                i += 1
            if e[i] == ")":
                return gh_format(args[0], args[1:]) if i + 1 == len(e) else None
            assert e[i] == ","
            i += 1
    return None


def expr_end(s, i):
    """The index of the '}}' that ends the expression starting at s[i],
    or len(s) when none does."""
    while i < len(s) and not s.startswith("}}", i):
        if s[i] == "'" and "'" in s[i + 1:]:
            _, i = lex_literal(s, i)
        else:
            i += 1
    return i


left = []  # the expressions evaluation left in place


def gh_eval(s):
    out, i = [], 0
    while True:
        j = s.find("${{", i)
        if j < 0:
            out.append(s[i:])
            return "".join(out)
        out.append(s[i:j])
        k = expr_end(s, j + 3)
        if k >= len(s):
            fail("an expression that never ends: %r" % s)
            return s
        body = s[j + 3:k]
        v = eval_value(body)
        if v is None:
            left.append(body.strip())
            out.append(s[j:k + 2])
        else:
            out.append(v)
        i = k + 2


OURS = re.compile(
    r"^(matrix\.(job|only|slug)|runner\.(temp|os)|steps\.[a-z-]+\.outputs\.[a-z-]+"
    r"|github\.(actor|run_id|run_attempt)|secrets\.[A-Z0-9_]+|join\(matrix\.pull, ' '\)"
    r"|needs\.timings\.outputs\.key \|\| 'tpuci-timings-none')$")


def strings(node, path=""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from strings(k, path + "/key")
            yield from strings(v, "%s/%s" % (path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from strings(v, "%s[%d]" % (path, i))
    elif isinstance(node, str):
        yield path, node


def github(wf):
    check(set(wf) <= {"name", "on", "permissions", "concurrency", "jobs"},
          "unexpected top-level keys %s" % sorted(set(wf) - {"name", "on", "permissions", "jobs"}))
    check(set(wf["jobs"]) <= {"tpuci", "timings", "timings-save", "report"}, "jobs %s" % sorted(wf["jobs"]))
    job = wf["jobs"]["tpuci"]
    images = {i["ref"]: i for i in plan["images"]}
    used = []
    for inst in plan["instances"]:
        ref = inst.get("image")
        if ref and ref not in used:
            used.append(ref)
    pulled = [r for r in used if images[r]["pull"] != "never"]
    built = [r for r in used if images[r]["pull"] == "never"]
    names = []
    for inst in plan["instances"]:
        if inst["job"] not in names:
            names.append(inst["job"])
    # Every string: only tpuci's own expressions survive evaluation, and
    # an `if:` (itself an expression) holds no "${{".
    for path, s in strings(wf):
        gh_eval(s)
        if path.endswith("/if"):
            check("${{" not in s, "%s holds ${{: %r" % (path, s))
    for body in left:
        check(OURS.match(body), "an expression tpuci did not write: ${{ %s }}" % body)
    per_job = "strategy" in job
    if per_job:
        entries = job["strategy"]["matrix"]["include"]
        jobs = [gh_eval(e["job"]) for e in entries]
        want = []
        for n in names:
            shards = [i["pytest"]["shards"] for i in plan["instances"]
                      if i["job"] == n and i.get("pytest") and i["pytest"].get("shards", 1) > 1]
            want += ["%s (shard %d/%d)" % (n, k, shards[0]) for k in range(1, shards[0] + 1)] if shards else [n]
        check(jobs == want, "matrix jobs %r, want %r" % (jobs, want))
        got_pull = sorted({gh_eval(r) for e in entries for r in e.get("pull", [])})
        got_build = sorted({gh_eval(r) for e in entries for r in e.get("build", [])})
        check(got_pull == sorted(pulled), "matrix pull %r, want %r" % (got_pull, sorted(pulled)))
        check(got_build == sorted(built), "matrix build %r, want %r" % (got_build, sorted(built)))
    steps = job["steps"]
    by_name = {gh_eval(s["name"]): s for s in steps}
    run = by_name.get("Run the spec")
    if check(run is not None, "no step 'Run the spec'"):
        check(gh_eval(run["env"]["TPUCI_SPEC"]) == SPEC,
              "TPUCI_SPEC is %r, want %r" % (gh_eval(run["env"]["TPUCI_SPEC"]), SPEC))
    if pulled:
        p = by_name.get("Pull the images")
        if check(p is not None, "no step 'Pull the images'") and not per_job:
            check(gh_eval(p["env"]["TPUCI_IMAGES"]) == " ".join(pulled),
                  "TPUCI_IMAGES is %r" % gh_eval(p["env"]["TPUCI_IMAGES"]))
    for ref in built:
        name = 'Build or load image %s (pull = "never": replace this step)' % ref
        s = by_name.get(name)
        if not check(s is not None, "no step %r" % name):
            continue
        check(gh_eval(s["env"]["TPUCI_IMAGE"]) == ref, "TPUCI_IMAGE is %r" % s["env"]["TPUCI_IMAGE"])
        if per_job:
            m = re.match(r"^contains\(matrix\.build, (.*)\)$", s["if"])
            check(m and eval_value(m.group(1)) == ref, "the step's if: %r" % s["if"])
    for s in steps:
        if gh_eval(s["name"]).startswith("Log in to "):
            host = gh_eval(s["name"])[len("Log in to "):]
            check(gh_eval(s["env"]["TPUCI_REGISTRY"]) == host, "TPUCI_REGISTRY of %r" % host)
            check(any(r.startswith(host + "/") for r in pulled), "a login to %r, no image there" % host)
    # No spec text in a script.
    marks = used + [SPEC] + [n for n in names if not n.isalnum()]
    for j in wf["jobs"].values():
        for s in j.get("steps", []):
            for m in marks:
                check(m not in s.get("run", ""), "step %r's script holds %r" % (s["name"], m))


def unescape_k8s(s):
    out, i = [], 0
    while i < len(s):
        if s.startswith("$$", i):
            out.append("$")
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def kubernetes(docs):
    insts = {i["name"]: i for i in plan["instances"]}
    jobs = [d for d in docs if isinstance(d, dict) and d.get("kind") == "Job"]
    for d in docs:
        check(isinstance(d, dict) and d.get("kind") in ("Job", "Service"), "a document %r" % (d,))
    check(len(jobs) == len(insts), "%d Jobs for %d instances" % (len(jobs), len(insts)))
    for j in jobs:
        ann = j["metadata"]["annotations"]
        inst = insts.get(ann["tpuci.instance"])
        if not check(inst is not None, "annotation tpuci.instance %r is no instance" % ann["tpuci.instance"]):
            continue
        check(ann.get("tpuci.where") == inst["where"], "tpuci.where %r" % ann.get("tpuci.where"))
        if inst["mounts"]:
            check(ann.get("tpuci.dropped-mounts") == ",".join(m["target"] for m in inst["mounts"]),
                  "tpuci.dropped-mounts %r" % ann.get("tpuci.dropped-mounts"))
        c = j["spec"]["template"]["spec"]["containers"][0]
        check(c["image"] == inst["image"], "image %r, want %r" % (c["image"], inst["image"]))
        check(c.get("workingDir") == inst["workdir"], "workingDir %r" % c.get("workingDir"))
        env = {e["name"]: unescape_k8s(e["value"]) for e in c["env"] if "value" in e}
        check(env.get("TPUCI_INSTANCE") == inst["name"], "TPUCI_INSTANCE %r" % env.get("TPUCI_INSTANCE"))
        for k, v in inst["env"].items():
            check(env.get(k) == v, "%s: env %s is %r, want %r" % (inst["name"], k, env.get(k), v))
        for k, v in inst["matrix"].items():
            key = "TPUCI_MATRIX_" + k.upper()
            check(env.get(key) == v, "%s: %s is %r, want %r" % (inst["name"], key, env.get(key), v))
        if not inst.get("pytest"):
            check([unescape_k8s(a) for a in c["command"]] == inst["argv"],
                  "%s: command %r, want %r" % (inst["name"], c["command"], inst["argv"]))


if MODE == "github":
    check(len(trees11) == 1, "%d documents" % len(trees11))
    github(trees11[0])
else:
    kubernetes(trees11)
sys.exit(1 if failures else 0)
