-- expect: 10-empty-matrix-list.lua:2: job 'unit': matrix.torch: empty list
job "unit" {
  run = "pytest",
  matrix = { python = { "3.10" }, torch = {} },
}
