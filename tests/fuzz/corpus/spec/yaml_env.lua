local v = tpuci.env("HOME", "/") job "e" { run = "echo " .. v, env = { HOME = v } }
local ok = pcall(tpuci.yaml, "x.yaml") local ok2 = pcall(tpuci.read_file, "y")