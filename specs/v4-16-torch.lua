-- A torch.distributed test on an emulated TPU v4-16 slice: 2 hosts x 4
-- chips, so tpuci runs the job as a gang of 2 containers on a private
-- network of their own (worker-0, worker-1), gives each the environment a
-- v4-16 TPU VM has (TPU_WORKER_ID, TPU_WORKER_HOSTNAMES, TPU_ACCELERATOR_TYPE,
-- bounds) and the torch.distributed rendezvous (MASTER_ADDR=worker-0,
-- MASTER_PORT=29500, RANK, WORLD_SIZE=2), and ends the gang together.
-- docs/topology.md lists the exact environment of each host.
--
--   tpuci plan specs/v4-16-torch.lua     -- the hosts and their environment
--   tpuci run specs/v4-16-torch.lua      -- needs a Docker Engine
--
-- The image is the test image with Debian's python3-torch
-- (tests/images/build-torch.sh builds tpuci-test/torch:1); any image with
-- python3, pytest and torch works: TPUCI_TORCH_IMAGE=my/torch:tag.
image "torch" {
  ref = tpuci.env("TPUCI_TORCH_IMAGE", "tpuci-test/torch:1"),
  pull = tpuci.env("TPUCI_TORCH_PULL", "never"),
}

-- emulate = "none": only the TPU VM variables and the rendezvous. With
-- "pjrt" (torch_xla) each host would also get PJRT_DEVICE=CPU and
-- CPU_NUM_DEVICES=4, and tpuci would warn that PJRT's CPU client does not
-- reach across hosts: cross-host tests use torch.distributed with gloo,
-- as this one does.
topology "v4-16" { emulate = "none" }

job "allreduce" {
  image    = "torch",
  topology = "v4-16",
  mounts   = { ["v4-16-torch"] = { target = "/src", readonly = true } },
  workdir  = "/src",
  -- (hypothesis, which Debian's pytest brings, would want to write into /src)
  pytest   = { args = { "test_allreduce.py" }, options = { "-v", "-p", "no:hypothesispytest" } },
  timeout  = "3m",
  -- A retry runs the whole gang again.
  retries  = { attempts = 2, on = { "timeout", "infra" } },
}
