-- expect: 46-job-string-after-name.lua:2: job 'x': expected a table after the name, got string
job "x" "run"
