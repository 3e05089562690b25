-- expect: 01-unknown-key.lua:2: job 'unit': retires: unknown key, did you mean 'retries'?
job "unit" { run = "pytest", retires = 2 }
