-- tests/junit/identity.sh: one pytest job in two matrix instances, run
-- in the Python test image from the folder TPUCI_WORKDIR (/src, or
-- /src/tests: pytest's rootdir and node ids change with it), the project
-- (this folder) mounted at /src.
image "py" { ref = tpuci.env("TPUCI_PYTEST_IMAGE", "tpuci-test/python:1"), pull = "never" }
local workdir = tpuci.env("TPUCI_WORKDIR", "/src")
job "edge" {
  image = "py",
  mounts = { [tpuci.spec_dir] = { target = "/src", readonly = true } },
  workdir = workdir,
  network = "none",
  env = { PYTHONDONTWRITEBYTECODE = "1" },
  pytest = { args = workdir == "/src" and { "tests/", "-p", "no:cacheprovider" } or { "-p", "no:cacheprovider" } },
  matrix = { py = { "3.11", "a,b" } },
}
