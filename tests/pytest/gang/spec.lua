-- A pytest gang whose hosts end apart (tests/pytest/gang.sh): host 1
-- finishes its tests first, one of them failing, while host 0 is still
-- starting (conftest.py holds it back until host 1 leaves a file in
-- GANG_SYNC_DIR, mounted at /sync). The project is this folder, mounted
-- read-only at /src in the image named by TPUCI_PYTEST_IMAGE.
image "py" { ref = tpuci.env("TPUCI_PYTEST_IMAGE", "tpuci-test/python:1"), pull = "never" }
topology "v4-16" {}

job "gangtests" {
  image = "py", topology = "v4-16", timeout = "2m", grace = "1s",
  mounts = {
    [tpuci.spec_dir] = { target = "/src", readonly = true },
    [assert(tpuci.env("GANG_SYNC_DIR"), "set GANG_SYNC_DIR")] = "/sync",
  },
  env = { GANG_SYNC = "/sync" },
  workdir = "/src",
  pytest = { args = { "tests/" } },
}

-- A command gang: a host that fails on its own still stops the others.
job "cmdgang" {
  image = "py", topology = "v4-16", timeout = "2m", grace = "1s",
  run = "if [ $TPUCI_HOST = 1 ]; then exit 3; fi; sleep 30; echo slept through",
}
