-- tests/pytest/rerun.sh: retries.rerun = "unfinished" against the default,
-- with /usr/bin/python3 (python3-pytest) on this machine.
local function job_of(name, retries)
  job(name) { pytest = { python = "/usr/bin/python3", args = { "tests/test_u.py" } },
              workdir = tpuci.spec_dir, timeout = "8s", grace = "500ms", retries = retries }
end
job_of("unfinished", { attempts = 3, on = { "timeout", "failed" }, rerun = "unfinished", backoff = 0 })
job_of("default", { attempts = 3, on = { "timeout", "failed" }, backoff = 0 })
