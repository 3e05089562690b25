-- expect: 32-job-name-not-string.lua:2: job: expected a name or a table, got number
job(42)
