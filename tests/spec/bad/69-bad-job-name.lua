-- expect: 69-bad-job-name.lua:2: job 'unit tests': the name may only contain letters, digits and
job "unit tests" { run = "pytest" }
