-- expect: 90-function-run-not-utf8.lua:2: job 'j', instance 'j[v=1]': run: not valid UTF-8
job "j" {
  matrix = { v = { 1 } },
  run = function(inst) return "echo " .. string.char(0xE9) end,
}
