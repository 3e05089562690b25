-- expect: 19-retries-unknown-outcome.lua:2: job 'x': retries.on[2]: unknown outcome 'timout', did you mean 'timeout'?
job "x" { run = "true", retries = { attempts = 3, on = { "failed", "timout" } } }
