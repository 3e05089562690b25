-- expect: 86-cmd-not-utf8.lua:2: job 'j': cmd[3]: not valid UTF-8 (byte 0xFF at position 1)
job "j" { cmd = { "printf", "%s", "\xff" } }
