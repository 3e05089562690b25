-- Attempts cut short in the middle of a pytest run (tests/pytest/unfinished.sh):
-- a hang, a crash, a hung shard and a host of a gang that hangs. The
-- project is this folder, mounted read-only at /src in the image named by
-- TPUCI_PYTEST_IMAGE (tests/images/build-python.sh). The timeouts leave a loaded
-- machine room: only the tests that hang on purpose should reach them.
image "py" { ref = tpuci.env("TPUCI_PYTEST_IMAGE", "tpuci-test/python:1"), pull = "never" }
topology "v4-16" {}

local retry = { attempts = 2, on = { "failed", "timeout" }, backoff = "100ms" }

local function pyjob(t)
  t.image = "py"
  t.mounts = { [tpuci.spec_dir] = { target = "/src", readonly = true } }
  t.workdir = "/src"
  t.grace = "500ms"
  return t
end

-- The reproduction of issue 18.
job "hang" (pyjob { pytest = { args = { "tests/test_r.py" } }, timeout = "60s", retries = retry })
job "hang-xpass" (pyjob {
  pytest = { args = { "tests/test_r.py::test_d_xpass", "tests/test_r.py::test_b_hangs_on_first_attempt",
                      "tests/test_r.py::test_c_after_the_hang" } },
  timeout = "60s", retries = retry,
})
job "hang-once" (pyjob { pytest = { args = { "tests/test_r.py" } }, timeout = "60s" })
job "abort" (pyjob { pytest = { args = { "tests/test_abort.py" } } })
job "abort-retry" (pyjob { pytest = { args = { "tests/test_abort.py" } }, retries = retry })
job "sharded" (pyjob { pytest = { args = { "tests/test_shard.py" }, shards = 2, shard_by = "test" }, timeout = "45s", retries = retry })
job "test-timeout" (pyjob { pytest = { args = { "tests/test_slow.py" }, test_timeout = "2s" }, timeout = "40s" })
job "gang" (pyjob { pytest = { args = { "tests/test_gang.py" } }, topology = "v4-16", timeout = "90s", retries = retry })
