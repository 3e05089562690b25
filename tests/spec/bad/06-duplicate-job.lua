-- expect: 06-duplicate-job.lua:4: job 'unit' already declared at 06-duplicate-job.lua:2
job "unit" { run = "pytest" }
job "lint" { run = "ruff" }
job "unit" { run = "pytest -x" }
