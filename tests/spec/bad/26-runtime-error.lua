-- expect: 26-runtime-error.lua:3: attempt to index a nil value (local 'cfg')
local cfg
local v = cfg.version
job "x" { run = "true" }
