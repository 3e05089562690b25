"""Tests for an (emulated) TPU v4 slice: they read what a TPU VM's
environment says about the slice, as the real code paths do."""
import os
import time

import pytest

from mylib import global_batch, shard_sizes

pytestmark = pytest.mark.tpu


def env(name):
    value = os.environ.get(name)
    assert value is not None, f"{name} is not set: not on a (emulated) TPU host?"
    return value


def hosts():
    return env("TPU_WORKER_HOSTNAMES").split(",")


def test_accelerator_is_a_v4_slice():
    assert env("TPU_ACCELERATOR_TYPE") in ("v4-8", "v4-16")
    assert int(env("TPU_WORKER_ID")) in range(len(hosts()))


def test_jax_sees_four_devices_per_host():
    assert env("JAX_PLATFORMS") == "cpu"
    assert "--xla_force_host_platform_device_count=4" in env("XLA_FLAGS")


def test_global_batch_over_the_slice():
    assert global_batch(8, len(hosts()), 4) == 32 * len(hosts())


@pytest.mark.parametrize("device", range(8))
def test_each_device_gets_its_share(device):
    time.sleep(0.3)
    sizes = shard_sizes(1001, 8)
    assert sizes[device] in (125, 126)


@pytest.mark.multihost
def test_two_hosts_one_coordinator():
    assert hosts() == ["worker-0", "worker-1"]
    assert env("JAX_COORDINATOR_ADDRESS") == "worker-0:8482"
    assert env("TPUCI_JAX_NUM_PROCESSES") == "2"
