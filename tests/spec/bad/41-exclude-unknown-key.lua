-- expect: 41-exclude-unknown-key.lua:5: job 'x': matrix.exclude[1].pyhton: unknown key, did you mean 'python'?



job "x" {
  run = "true",
  matrix = { python = { "3.10" }, torch = { "2.1" }, exclude = { { pyhton = "3.10" } } },
}
