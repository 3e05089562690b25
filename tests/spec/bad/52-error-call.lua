-- expect: 52-error-call.lua:3: CUDA is not supported here
local want = "cuda"
if want == "cuda" then error("CUDA is not supported here") end
