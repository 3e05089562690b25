"""What a pod of `tpuci export kubernetes` runs before the bootstrap
(core/kind/pytest/plugin/tpuci_k8s.py): the exported command, run as the pod
runs it, with the pod's TPUCI_K8S_SHARD and TPUCI_K8S_ALLOW_EMPTY."""
import xml.etree.ElementTree as ET

import pytest

import tpuci_k8s
from conftest import Attempt, bootstrap, source

SUITE = "".join("def test_%d():\n    pass\n" % i for i in range(7)) + (
    "import pytest\n@pytest.mark.slow\ndef test_slow():\n    pass\n")


@pytest.fixture
def pod(pytester):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_a=SUITE)
    return Attempt(pytester, source("tpuci_k8s.py") + bootstrap())


def ran(attempt):
    return [c.get("name") for c in ET.parse(str(attempt.junit)).iter("testcase")]


def test_shards_deal_round_robin_after_deselection(pod, monkeypatch):
    seen = []
    for i in (1, 2, 3):
        monkeypatch.setenv("TPUCI_K8S_SHARD", "%d/3" % i)
        result = pod.run("-k", "not slow")
        assert result.ret == 0, result.outlines
        seen.append(ran(pod))
    assert seen == [["test_0", "test_3", "test_6"], ["test_1", "test_4"], ["test_2", "test_5"]]
    # The bootstrap's progress is written as with tpuci run.
    collected = [r["collected"] for r in pod.records() if "collected" in r]
    assert collected[-1] == ["test_a.py::test_2", "test_a.py::test_5"]


def test_a_shard_that_gets_no_test_exits_0(pod, monkeypatch):
    monkeypatch.setenv("TPUCI_K8S_SHARD", "3/3")
    assert pod.run("-k", "test_0 or test_1").ret == 0
    assert ran(pod) == []


def test_allow_empty(pod, monkeypatch):
    assert pod.run("-k", "nothing").ret == 5
    monkeypatch.setenv("TPUCI_K8S_ALLOW_EMPTY", "1")
    assert pod.run("-k", "nothing").ret == 0


def test_without_its_variables_it_changes_nothing(pod):
    result = pod.run("-k", "not slow")
    assert result.ret == 0 and len(ran(pod)) == 7


def test_the_shard_from_the_environment():
    shard = tpuci_k8s.k8s_shard({"TPUCI_K8S_SHARD": "2/3"})
    assert (shard.index, shard.count) == (1, 3)
    assert tpuci_k8s.k8s_shard({}) is None
