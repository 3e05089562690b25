-- expect: 30-bad-interpolation-key.lua:2: job 'unit': run: unknown matrix key 'pyton' in '${matrix.pyton}', did you mean 'python'?
job "unit" {
  run = "pytest --python ${matrix.pyton}",
  matrix = { python = { "3.10", "3.11" } },
}
