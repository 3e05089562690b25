-- expect: 17-retries-attempts-zero.lua:2: job 'x': retries.attempts: must be between 1 and 100, got 0
job "x" { run = "true", retries = { attempts = 0 } }
