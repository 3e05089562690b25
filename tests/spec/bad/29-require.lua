-- expect: 29-require.lua:2: attempt to call a nil value (global 'require')
local json = require("cjson")
