-- expect: 63-all-excluded.lua:2: job 'x': matrix: every combination is excluded
job "x" {
  run = "true",
  matrix = { a = { 1, 2 }, exclude = { { a = 1 }, { a = 2 } } },
}
