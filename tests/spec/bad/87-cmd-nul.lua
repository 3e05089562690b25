-- expect: 87-cmd-nul.lua:2: job 'j': cmd[2]: contains a NUL byte (at position 2)
job "j" { cmd = { "echo", "a\0b" } }
