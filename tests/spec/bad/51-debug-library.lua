-- expect: 51-debug-library.lua:2: attempt to index a nil value (global 'debug')
local info = debug.getinfo(1)
