image "py" { ref = "tpuci-test/python:1", pull = "never" }
topology "v4-16" { emulate = "jax" }
job "unit" {
  image = "py",
  matrix = { python = { "3.10", "3.11" }, torch = { "2.1", "2.2" },
             exclude = { { python = "3.10", torch = "2.2" } },
             include = { { python = "3.12", torch = "2.4" } } },
  run = "pytest -q ${matrix.python} $${matrix.torch} $$",
  env = { A = 1, B = true, C = "${matrix.torch}" },
  workdir = "/src", mounts = { ["."] = "/src", data = { target = "/d", readonly = true } },
  timeout = "20m", grace = 1.5,
  retries = { attempts = 3, on = { "timeout", "infra" }, backoff = "5s", factor = 2, max_backoff = "1m" },
  memory = "4g", cpus = 2, network = "none",
}
job "tpu" { image = "py", topology = "v4-16", cmd = function(i) return { "echo", i.name } end }
job "direct" { topology = "v4-8", run = "true" }
job "py" { pytest = { markers = "not tpu", k = "x", args = { "tests/" }, shards = 3, options = { "-x" } } }
job { name = "alias", cmd = { "true", 1, false } }
