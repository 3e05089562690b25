job "fails" { run = "sleep 0.2; exit 1" }
job "long" { run = "sleep 60" }
job "later" { matrix = { n = { 1, 2, 3 } }, run = "true" }
