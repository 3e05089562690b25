-- tests/pytest/first.sh: failing first, with /usr/bin/python3 (python3-pytest).
local function j(name, extra)
  local py = { python = "/usr/bin/python3", args = { "tests/test_many.py" } }
  for k, v in pairs(extra or {}) do py[k] = v end
  job(name) { pytest = py, workdir = tpuci.spec_dir }
end
j("plain")
j("sharded", { shards = 2, shard_by = "test" })
j("off", { failed_first = false })
-- A failing-first process that hangs: stopped once the attempts are over.
job "hang" {
  pytest = { python = "/usr/bin/python3", args = { "t" } },
  workdir = tpuci.spec_dir .. "/hang",
}
