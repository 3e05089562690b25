-- expect: 05-bad-size.lua:3: job 'unit': memory: bad size '2 gigs' (use e.g. "512m", "2g" or a number of bytes)
image "py" { ref = "python:3.11" }
job "unit" { image = "py", run = "pytest", memory = "2 gigs" }
