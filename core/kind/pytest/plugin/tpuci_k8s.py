"""What a pod of `tpuci export kubernetes` runs before tpuci's bootstrap.

core/export/k8s/export.c puts this file before tpuci_plugin.py in the
pytest command's -c when a job is sharded or has allow_empty; both run in
one namespace, so the names here do not repeat the bootstrap's. A pod
cannot see the durations `tpuci run` records, so an exported shard deals
the collected tests round-robin in collection order, after -m and -k
have deselected theirs (what tpuci does when it has no recorded
durations, core/kind/pytest/shard.h). The pod's environment says what to do
(docs/kubernetes.md, "Shards"):

    TPUCI_K8S_SHARD        "I/N": this pod runs shard I (1-based) of N
    TPUCI_K8S_ALLOW_EMPTY  "1": pytest's exit 5 (nothing collected) is 0

and a shard that got no test exits 0 instead of 5 too. It wraps
pytest.main, which the bootstrap calls.
"""
import os

import pytest


class TpuciShard:
    """Keeps the tests whose place in the collection is `index` (0-based)
    modulo `count`; `empty` says whether it kept none."""

    def __init__(self, index, count):
        self.index, self.count, self.empty = index, count, False

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session, config, items):
        keep = [t for i, t in enumerate(items) if i % self.count == self.index]
        drop = [t for i, t in enumerate(items) if i % self.count != self.index]
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep
        self.empty = not keep


def k8s_shard(environ):
    """The TpuciShard TPUCI_K8S_SHARD in `environ` names, or None."""
    text = environ.get("TPUCI_K8S_SHARD", "")
    if not text:
        return None
    i, _, n = text.partition("/")
    return TpuciShard(int(i) - 1, int(n))


def k8s_main(pytest_main, shard, allow_empty):
    """pytest_main, with `shard` (a TpuciShard, or None) among its plugins,
    and exit 5 made 0 where the pod counts it as a pass: `allow_empty`, or
    a shard that got no test."""
    def main(args=None, plugins=None):
        extra = [shard] if shard is not None else []
        rc = pytest_main(args, plugins=list(plugins or []) + extra)
        if rc == 5 and (allow_empty or (shard is not None and shard.empty)):
            return 0
        return rc
    return main


if __name__ == "__main__":
    pytest.main = k8s_main(pytest.main, k8s_shard(os.environ),
                           os.environ.get("TPUCI_K8S_ALLOW_EMPTY") == "1")
