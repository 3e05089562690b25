-- expect: 28-io-popen.lua:3: attempt to index a nil value (global 'io')
local version = "1"
local f = io.popen("git describe")
