-- expect: 55-factor-below-one.lua:2: job 'x': retries.factor: must be between 1 and 100, got 0.5
job "x" { run = "true", retries = { attempts = 2, factor = 0.5 } }
