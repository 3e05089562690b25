#!/usr/bin/env bash
# Loading a spec ends within its time cap (5 s) whatever the spec does,
# also inside library functions that loop in C: a pathological pattern,
# table.insert over what __len says, table.concat through a C metamethod.
# Each is exit 2 with one line naming the file, its line and that the
# load was stopped; memory stays under the Lua state's cap (256 MiB) plus
# tpuci's own, never an out-of-memory kill. The specs run side by side.
. "$TESTS/e2e/lib.sh"

cat > pattern.lua <<'LUA'
job "x" { run = "true" }
local r = string.find(string.rep("a", 30), string.rep("a-", 12) .. "b")
LUA
cat > insert.lua <<'LUA'
job "x" { run = "true" }
local t = setmetatable({}, { __len = function() return math.maxinteger - 1 end })
table.insert(t, 1, "x")
LUA
cat > concat.lua <<'LUA'
job "x" { run = "true" }
local s = table.concat(setmetatable({}, { __index = rawlen }), "", 1, 1 << 40)
LUA
cat > memory.lua <<'LUA'
job "x" { run = "true" }
local t, s = {}, string.rep("x", 1 << 20)
for i = 1, 1e9 do t[i] = s .. i end
LUA

# measure NAME CMD SPEC: runs in the background; NAME.out, NAME.code,
# NAME.secs and NAME.kb (peak RSS) when it is done.
measure() {
  local name=$1 t0
  shift
  (
    t0=$(date +%s%N)
    /usr/bin/time -f '%M' -o "$name.kb" "$TPUCI" "$@" > "$name.out" 2>&1
    echo $? > "$name.code"
    echo $(( ($(date +%s%N) - t0) / 1000000 )) > "$name.ms"
  ) &
}
[ -x /usr/bin/time ] || { echo "SKIP: needs /usr/bin/time"; exit 77; }
measure pattern plan pattern.lua
measure insert run insert.lua
measure concat plan concat.lua
measure memory plan memory.lua
wait

check() { # NAME MESSAGE
  out=$(cat "$1.out")
  code=$(cat "$1.code")
  expect_code 2 "$1"
  [ "$out" = "tpuci: $2" ] && pass || fail "$1: got '$out', want 'tpuci: $2'"
  ms=$(cat "$1.ms")
  # Stopped, not hung: 5 s and whatever a loaded, shared machine adds
  # (this is no speed check; the time is printed below).
  [ "$ms" -lt 120000 ] && pass || fail "$1 took $ms ms: the load was not stopped"
  kb=$(tail -n 1 "$1.kb")
  [ "$kb" -lt $((400 * 1024)) ] && pass || fail "$1: peak RSS $kb KB"
  echo "$1: ${ms} ms, peak RSS ${kb} KB"
}
check pattern "pattern.lua:2: spec took longer than 5s to load (stopped in string.find)"
check insert "insert.lua:3: spec took longer than 5s to load (stopped in table.insert)"
check concat "concat.lua:2: spec took longer than 5s to load (stopped in a library function)"
check memory "memory.lua: spec used more than 256 MiB while loading"
[ ! -d .tpuci ] && pass || fail "a refused spec created a run folder"
finish
