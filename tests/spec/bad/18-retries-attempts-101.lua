-- expect: 18-retries-attempts-101.lua:2: job 'x': retries.attempts: must be between 1 and 100, got 101
job "x" { run = "true", retries = { attempts = 101 } }
