-- expect: 37-cmd-not-list.lua:2: job 'x': cmd: expected a list of strings or a function, got string
job "x" { cmd = "ls -l" }
