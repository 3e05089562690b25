local co = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end end)
job ("c" .. co()) { run = "true" }
