-- pytest.lua: pytest jobs in containers: unit tests in shards, TPU tests on emulated slices.
image "py" { ref = "mylib-test:1", pull = "never" }

-- The container settings every job here shares.
local function in_py(t)
  t.image   = "py"
  t.mounts  = { ["."] = { target = "/src", readonly = true } }
  t.workdir = "/src"
  -- No network, except for gangs: their hosts get a private one.
  if t.topology ~= "v4-16" then t.network = "none" end
  return t
end

job "unit" (in_py {
  pytest  = { markers = "not tpu", args = { "tests/" }, shards = 3 },
  timeout = "10m",
  retries = 1,
})

-- Emulated TPU v4 slices. On each host JAX sees 4 CPU devices, and the
-- host gets the variables a TPU VM of that slice has.
topology "v4-8"  { emulate = "jax" }   -- 1 host x 4 chips
topology "v4-16" { emulate = "jax" }   -- 2 hosts x 4 chips: a gang of 2 containers

-- Single-host TPU tests, split into 2 shards.
job "tpu" (in_py {
  topology = "v4-8",
  pytest   = { markers = "tpu and not multihost", args = { "tests/" }, shards = 2 },
  timeout  = "10m",
})

-- Every TPU test on both hosts of a v4-16 at once.
job "tpu-pod" (in_py {
  topology = "v4-16",
  pytest   = { markers = "tpu", args = { "tests/" } },
  timeout  = "10m",
  retries  = { attempts = 2, on = { "timeout", "infra" } },
})
