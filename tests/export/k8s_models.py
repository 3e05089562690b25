"""What jobset_check.py and k8s_check.py share: a count of checks with
their failures, and the strict reading of a document into the Kubernetes
Python client's models (python3-kubernetes)."""
import json
import sys

from kubernetes import client


class Checks:
    """want(cond, what) counts a check and records `what` if it failed;
    finish() prints the failures and the count and exits 1 on any."""

    def __init__(self):
        self.count = 0
        self.failures = []

    def want(self, cond, what):
        self.count += 1
        if not cond:
            self.failures.append(what)
        return cond

    def finish(self):
        for f in self.failures:
            print("FAIL: " + f)
        print("%d checks, %d failed" % (self.count, len(self.failures)))
        sys.exit(1 if self.failures else 0)


PRIMITIVE = {"str": str, "int": int, "bool": bool, "float": (int, float)}


def walk(value, typ, path, out):
    """Appends to `out` each place where `value` is not of the client's
    type `typ`: every key a field of its model, every value of the
    field's type, every mapping key a string."""
    if typ.startswith("list["):
        if not isinstance(value, list):
            out.append("%s: a list expected, got %r" % (path, value))
            return
        for i, v in enumerate(value):
            walk(v, typ[5:-1], "%s[%d]" % (path, i), out)
    elif typ.startswith("dict("):
        inner = typ[typ.index(",") + 1:-1].strip()
        if not isinstance(value, dict):
            out.append("%s: a mapping expected" % path)
            return
        for k, v in value.items():
            if not isinstance(k, str):
                out.append("%s: key %r is not a string" % (path, k))
            walk(v, inner, "%s[%s]" % (path, k), out)
    elif typ in PRIMITIVE:
        if not isinstance(value, PRIMITIVE[typ]) or (typ != "bool" and isinstance(value, bool)):
            out.append("%s: %s expected, got %r" % (path, typ, value))
    elif typ != "object":
        cls = getattr(client.models, typ)
        if not isinstance(value, dict):
            out.append("%s: a %s mapping expected" % (path, typ))
            return
        fields = {json_key: attr for attr, json_key in cls.attribute_map.items()}
        for k, v in value.items():
            if k in fields:
                walk(v, cls.openapi_types[fields[k]], "%s.%s" % (path, k), out)
            else:
                out.append("%s: unknown field '%s' of %s" % (path, k, typ))


class _Response:
    def __init__(self, doc):
        self.data = json.dumps(doc)


def model_problems(doc, model):
    """What keeps `doc` from being the client's `model`: the walk's
    places, then deserializing (the setters check required fields) and
    serializing again, which must give back exactly `doc`."""
    out = []
    walk(doc, model, model, out)
    api = client.ApiClient()
    try:
        obj = api.deserialize(_Response(doc), model)
    except (ValueError, TypeError) as e:
        return out + ["%s does not deserialize: %s" % (model, e)]
    if api.sanitize_for_serialization(obj) != doc:
        out.append("%s does not serialize back to what was read" % model)
    return out
