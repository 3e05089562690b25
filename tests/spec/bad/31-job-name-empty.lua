-- expect: 31-job-name-empty.lua:2: job: the name must not be empty
job "" { run = "true" }
