local t = {1, 2, 3}
table.insert(t, 1, 0) table.remove(t) table.move(t, 1, 3, 2)
table.sort(t, function(a, b) return a > b end)
local f = load("return " .. table.concat(t, "+"))
job "t" { run = "echo " .. f() }
