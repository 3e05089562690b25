-- expect: 33-job-without-table.lua:2: job 'x': the name must be followed by a table
job "x"
job "y" { run = "true" }
