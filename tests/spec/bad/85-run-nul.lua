-- expect: 85-run-nul.lua:3: job 'j': run: contains a NUL byte (at position 8)
-- The command would silently end at the NUL.
job "j" { run = "make -k\0 && make install" }
