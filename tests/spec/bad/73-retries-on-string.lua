-- expect: 73-retries-on-string.lua:2: job 'x': retries.on: expected a list of outcomes like { "timeout" }, got string
job "x" { run = "true", retries = { attempts = 2, on = "timeout" } }
