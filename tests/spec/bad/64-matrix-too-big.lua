-- expect: 64-matrix-too-big.lua:3: job 'x': matrix: expands to 1000000 combinations (at most 100000)
local v = {} for i = 1, 100 do v[i] = i end
job "x" { run = "true", matrix = { a = v, b = v, c = v } }
