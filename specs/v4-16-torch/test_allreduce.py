"""A torch.distributed test across the hosts of an emulated TPU slice.

tpuci runs this file once per host of the gang, each in its own
container; the hosts rendezvous over their private network with the
variables tpuci sets (MASTER_ADDR=worker-0, MASTER_PORT, RANK, WORLD_SIZE).
"""
import datetime
import os

import torch
import torch.distributed as dist


def test_env_is_the_slice():
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    names = os.environ["TPU_WORKER_HOSTNAMES"].split(",")
    assert len(names) == world
    assert os.environ["TPU_WORKER_ID"] == str(rank)
    assert names[rank] == f"worker-{rank}"
    assert os.environ["MASTER_ADDR"] == names[0]


def test_gloo_all_reduce():
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", init_method="env://",
                            timeout=datetime.timedelta(seconds=60))
    try:
        assert dist.get_world_size() == world
        assert dist.get_rank() == rank
        t = torch.tensor([float(rank + 1)] * 4)
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        want = world * (world + 1) / 2
        assert t.tolist() == [want] * 4, t
        print(f"rank {rank} of {world}: all_reduce sum {t[0].item()} (want {want})")
    finally:
        dist.destroy_process_group()
