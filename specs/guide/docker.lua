-- docker.lua: the same tests in containers of a locally built image.
image "py" { ref = "mylib-test:1", pull = "never" }   -- built here, never pulled

job "unit" {
  image   = "py",
  run     = "python3 -m pytest -q -p no:cacheprovider -m 'not slow' tests/test_core.py",
  mounts  = { ["."] = { target = "/src", readonly = true } },
  workdir = "/src",
  network = "none", memory = "512m", cpus = 1,
  timeout = "5m",
}
