-- expect: 20-retries-bad-backoff.lua:2: job 'x': retries.backoff: bad duration '5 secs'
job "x" { run = "true", retries = { attempts = 2, backoff = "5 secs" } }
