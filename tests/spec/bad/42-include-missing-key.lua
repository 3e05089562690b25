-- expect: 42-include-missing-key.lua:2: job 'x': matrix.include[1]: missing key 'torch'
job "x" {
  run = "true",
  matrix = { python = { "3.10" }, torch = { "2.1" }, include = { { python = "3.12" } } },
}
