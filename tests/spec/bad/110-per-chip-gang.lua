-- expect: 110-per-chip-gang.lua:3: job 't': pytest.per_chip runs on one host, and topology 'v5litepod-8' has 2 hosts: use a one-host layout (e.g. layout = "1x8") or leave per_chip out
topology "v5litepod-8" {}
job "t" { topology = "v5litepod-8", pytest = { args = { "tests/" }, per_chip = true } }
