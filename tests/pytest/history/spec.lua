-- tests/pytest/history.sh: the history across runs, with /usr/bin/python3
-- (python3-pytest); local jobs see the caller's HISTORY_* variables.
local function j(name, extra)
  local py = { python = "/usr/bin/python3", args = { "t" } }
  for k, v in pairs(extra or {}) do py[k] = v end
  job(name) { pytest = py, workdir = tpuci.spec_dir .. "/" .. name }
end
j("cancel")
j("flip", { shards = 2, shard_by = "test" })
j("quiet")
