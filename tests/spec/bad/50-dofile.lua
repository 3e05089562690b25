-- expect: 50-dofile.lua:2: attempt to call a nil value (global 'dofile')
dofile("common.lua")
