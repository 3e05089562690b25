-- expect: 83-matrix-value-not-utf8.lua:4: job 'j': matrix.v[2]: not valid UTF-8 (byte 0xE9 at position 4)
-- A Latin-1 "café": summary.json could not record the instance's name.
-- (Written with an escape so that this file itself stays ASCII.)
job "j" { run = "exit 1", matrix = { v = { "cafe", "caf\xe9" } } }
