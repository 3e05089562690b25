-- expect: 72-cmd-empty.lua:2: job 'x': cmd: must not be empty
job "x" { cmd = {} }
