-- tests/pytest/first.sh: failing first, with /usr/bin/python3 (python3-pytest).
local function j(name, extra, retries)
  local py = { python = "/usr/bin/python3", args = { "tests/" } }
  for k, v in pairs(extra or {}) do py[k] = v end
  job(name) { pytest = py, workdir = tpuci.spec_dir, retries = retries }
end
j("plain")
j("sharded", { shards = 2, shard_by = "test" })
j("off", { failed_first = false })
j("always", { failed_first = "always" })
-- Retries: not of a test that fails steadily, unless retry_steady.
j("retried", { failed_first = false }, { attempts = 3, on = { "failed" } })
j("retried_steady", { failed_first = false, retry_steady = true }, { attempts = 2, on = { "failed" } })
-- A failing-first process that hangs: stopped once the attempts are over.
job "hang" {
  pytest = { python = "/usr/bin/python3", args = { "t" } },
  workdir = tpuci.spec_dir .. "/hang",
}
