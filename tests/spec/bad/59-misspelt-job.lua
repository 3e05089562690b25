-- expect: 59-misspelt-job.lua:2: attempt to call a nil value (global 'jbo'), did you mean 'job'?
jbo "x" { run = "true" }
