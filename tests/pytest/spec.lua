-- The pytest project beside this file, run by tpuci with the local
-- runtime (tests/pytest/run.sh) or in the Python test image
-- (tests/pytest/docker.sh sets TPUCI_PYTEST_IMAGE).
local image_ref = tpuci.env("TPUCI_PYTEST_IMAGE")
local python = tpuci.env("TPUCI_PYTHON", "/usr/bin/python3")
local project = tpuci.spec_dir .. "/project"
local flaky = tpuci.env("FLAKY_DIR", "/tmp")
local in_docker = image_ref ~= nil
-- Set: this folder is mounted at /src and the jobs run in /src/project,
-- so pytest's paths start below the mount (docker.sh's annotations).
local mount_spec_dir = tpuci.env("TPUCI_PYTEST_MOUNT_SPEC_DIR") ~= nil

if in_docker then image "py" { ref = image_ref, pull = "never" } end

local function common(t)
  if in_docker then
    t.image = "py"
    if mount_spec_dir then
      t.mounts = { [tpuci.spec_dir] = { target = "/src", readonly = true }, [flaky] = "/flaky" }
      t.workdir = "/src/project"
    else
      t.mounts = { [project] = { target = "/src", readonly = true }, [flaky] = "/flaky" }
      t.workdir = "/src"
    end
    t.env = t.env or {}
    t.env.FLAKY_DIR = "/flaky"
    t.network = "none"
  else
    t.workdir = project
    t.env = t.env or {}
    t.env.FLAKY_DIR = flaky
  end
  return t
end

job "suite" (common {
  pytest = { python = python, markers = "not slow and not hang and not shard and not memory", args = { "tests/" } },
  retries = { attempts = 3, backoff = "100ms" },
})

-- The checks want the test before the hang to have run on every run: its
-- failed test does not go first (pytest.failed_first). 45 s: on a loaded
-- CI machine a swarm task took over 20 s to reach the test that hangs,
-- and on a busier one over 45 s (swarm's timeout counts from the
-- service's creation): tests/swarm/pytest.sh sets TPUCI_HANG_TIMEOUT.
job "hang" (common {
  pytest = { python = python, markers = "hang", args = { "tests/test_timeout.py" }, failed_first = false },
  timeout = tpuci.env("TPUCI_HANG_TIMEOUT", "45s"), grace = "500ms",
})

job "empty" (common { pytest = { python = python, markers = "nothing_has_this" } })
job "empty_ok" (common { pytest = { python = python, markers = "nothing_has_this", allow_empty = true } })

job "sharded" (common { pytest = { python = python, markers = "shard", shards = 3, shard_by = "test" } })

if in_docker then
  job "oom" (common {
    pytest = { python = python, markers = "memory", args = { "tests/test_memory.py" } },
    memory = "64m",
    -- The engine sometimes reports a memory kill as a plain exit 137 under
    -- load: retry only "failed", so one attempt the engine got right is
    -- enough and an oom is never retried away.
    retries = { attempts = 3, on = { "failed" }, backoff = "100ms" },
  })
end
