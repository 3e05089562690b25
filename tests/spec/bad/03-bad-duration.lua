-- expect: 03-bad-duration.lua:3: job 'unit': timeout: bad duration '10 minutes' (use e.g. "90s", "20m", "1h30m")

job "unit" {
  run = "pytest",
  timeout = "10 minutes",
}
