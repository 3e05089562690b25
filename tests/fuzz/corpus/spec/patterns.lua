local s = ("key = value, x = y"):gsub("(%w+)%s*=%s*(%w+)", "%2=%1")
for k, v in s:gmatch("(%w+)=(%w+)") do warn(k, v) end
local a, b, c = string.find("f(a(b)c)d", "%b()")
assert(("THE (quick) fox"):find("%f[%a]%a+", 5))
job "p" { run = "echo " .. s }
