-- The quick-start example: a few jobs in real containers of a local
-- Docker Engine, and one on the host. `tpuci plan specs/example.lua`
-- shows what it expands to; `tpuci run specs/example.lua` runs it.
--
-- The image is the small busybox image the test suite builds locally
-- (tests/images/build-busybox.sh); no registry is needed.
image "busybox" {
  ref = tpuci.env("TPUCI_EXAMPLE_IMAGE", "tpuci-test/busybox:1"),
  pull = "never",
}

-- Three instances, one per shard, each in its own container.
job "hello" {
  image = "busybox",
  matrix = { shard = { 1, 2, 3 } },
  run = "echo hello from shard ${matrix.shard} of 3 in container $(hostname)",
  env = { SHARD = "${matrix.shard}" },
  network = "none",
  timeout = "1m",
  retries = { attempts = 2, on = { "infra", "timeout" }, backoff = "1s" },
}

-- Limits are the engine's: this container gets 64 MiB and half a CPU.
job "limits" {
  image = "busybox",
  run = "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes",
  memory = "64m",
  cpus = 0.5,
  network = "none",
}

-- No image: runs on the host with the local runtime.
job "host" { run = "echo running on $(uname -sr)" }
