-- tests/pytest/alive.sh: what a running attempt says while it runs. The
-- local jobs run with /usr/bin/python3 (python3-pytest); the gang in the
-- Python test image (TPUCI_PYTEST_IMAGE), with this folder at /src.
local image_ref = tpuci.env("TPUCI_PYTEST_IMAGE")

job "py" { pytest = { python = "/usr/bin/python3", args = { "tests/test_live.py" } },
           workdir = tpuci.spec_dir }
job "quiet" { run = "echo started; sleep 3.5; echo done" }

if image_ref then
  image "img" { ref = image_ref, pull = "never" }
  topology "v4-16" {}
  job "gang" { image = "img", topology = "v4-16",
               mounts = { [tpuci.spec_dir] = { target = "/src", readonly = true } },
               workdir = "/src", pytest = { args = { "tests/test_live.py" } } }
end
