-- The spec DSL: `image`, `topology` and `job` declarations.
--
-- core/spec/load.c runs this chunk in the spec's sandboxed Lua state
-- before the spec itself, passing H, a table of helpers written in C
-- (H.where, H.distance, H.duration, H.size, H.outcome, H.warn, H.text and
-- the functions behind the `tpuci` table). The chunk installs the globals
-- `image`, `topology`, `job` and `tpuci`, and returns a table:
--
--   finish()  runs after the spec: checks that every name was followed by
--             its table, resolves image and topology names (so order does
--             not matter), and returns the declarations as plain tables
--             that core/spec/expand.c turns into the plan.
--   eval(j, field, inst, name)  calls a job's function-valued field for
--             one instance and checks what it returned.
--
-- Every error is raised as a finished one-line message with level 0, so
-- Lua adds nothing: "spec.lua:12: job 'unit': retries.on[2]: ...". The
-- prelude keeps its own references to the library functions it uses, so
-- a spec that reassigns `string.format` or `next` cannot confuse it.

local H = ...

local type, next, error, rawget, rawlen, tostring, tonumber, ipairs =
  type, next, error, rawget, rawlen, tostring, tonumber, ipairs
local sfmt, sfind, ssub, smatch, sgsub, sbyte, supper =
  string.format, string.find, string.sub, string.match, string.gsub,
  string.byte, string.upper
local tsort, tconcat = table.sort, table.concat
local mtype, mtointeger, mfloor, mhuge, mmaxint =
  math.type, math.tointeger, math.floor, math.huge, math.maxinteger

-- Limits that keep a typo from producing something absurd.
local MAX_MS = 100 * 365 * 24 * 3600 * 1000
local MAX_COMBINATIONS = 100000

-- Names of jobs may contain '/' and ':' ("lint/ruff"); names of images and
-- topologies may not, because a ':' or '/' marks a literal image ref.
local JOB_NAME = "^[%w_%.%-/:+@]+$"
local NAME = "^[%w_%.%-+@]+$"
local IDENT = "^[%a_][%w_]*$"

------------------------------------------------------------------------
-- Messages

-- A value as it is quoted in a message: one line of valid UTF-8, not too
-- long (cut between characters).
local function show(s)
  s = sgsub(tostring(s), "[%c]", "?")
  if H.text(s) then s = sgsub(s, "[\128-\255]", "?") end
  if #s > 60 then
    local n = 57
    while n > 0 and (sbyte(s, n + 1) & 0xC0) == 0x80 do n = n - 1 end
    s = ssub(s, 1, n) .. "..."
  end
  return s
end

-- The type of a value for "expected ..., got <type>".
local function tname(v)
  return type(v)
end

-- One step of a key path: ".name", '["./data"]', "[2]".
local function qkey(k)
  local t = type(k)
  if t == "string" then
    if smatch(k, IDENT) then return "." .. k end
    return '["' .. sgsub(show(k), '"', '\\"') .. '"]'
  elseif t == "number" then
    local i = mtointeger(k)
    return "[" .. (i and sfmt("%d", i) or sfmt("%.14g", k)) .. "]"
  elseif t == "boolean" then
    return "[" .. tostring(k) .. "]"
  end
  return "[" .. t .. " key]"
end

local function join(path, k)
  local step = qkey(k)
  if path == nil then
    if ssub(step, 1, 1) == "." then return ssub(step, 2) end
    return step
  end
  return path .. step
end

local function fail(d, path, msg)
  if path then msg = path .. ": " .. msg end
  error(d.where .. ": " .. d.what .. ": " .. msg, 0)
end

local function warn(d, path, msg)
  if path then msg = path .. ": " .. msg end
  H.warn(d.where .. ": " .. d.what .. ": " .. msg)
end

-- Every string the plan gets from the spec passes here (through scalar(),
-- nonempty(), the mounts and eval()): it must be valid UTF-8, since the
-- reports are JSON, and hold no NUL byte, since commands, environment and
-- paths are C strings. Names and keys are ASCII by their patterns.
local function text(d, path, s)
  local problem = H.text(s)
  if problem then fail(d, path, problem) end
  return s
end

-- The closest candidate within edit distance 2 (1 for very short words),
-- or nil.
local function suggest(word, candidates)
  local cap = #word <= 2 and 1 or 2
  local best, bestd
  for i = 1, #candidates do
    local c = candidates[i]
    local dist = H.distance(word, c, cap)
    if dist <= cap and (bestd == nil or dist < bestd) then
      best, bestd = c, dist
    end
  end
  if best == nil and #word >= 2 then
    -- A shortened or lengthened name: "pyhton" for "py", "ret" for "retries".
    for i = 1, #candidates do
      local c = candidates[i]
      if #c >= 2 and (ssub(word, 1, #c) == c or ssub(c, 1, #word) == word) then
        return c
      end
    end
  end
  return best
end

-- "'a', 'b' or 'c'".
local function one_of(list)
  local q = {}
  for i = 1, #list do q[i] = "'" .. list[i] .. "'" end
  if #q == 1 then return q[1] end
  return tconcat(q, ", ", 1, #q - 1) .. " or " .. q[#q]
end

local function set_of(list)
  local s = {}
  for i = 1, #list do s[list[i]] = true end
  return s
end

------------------------------------------------------------------------
-- Checks shared by all declarations

-- Rejects keys that are not strings, then unknown keys, each time picking
-- the smallest offender so that messages do not depend on table order.
local function check_keys(d, path, t, keys, set)
  local badk, unknown
  for k in next, t do
    if type(k) ~= "string" then
      if badk == nil or (type(k) == "number" and
                         (type(badk) ~= "number" or k < badk)) then
        badk = k
      end
    elseif not set[k] and (unknown == nil or k < unknown) then
      unknown = k
    end
  end
  if badk ~= nil then
    if mtype(badk) == "integer" then
      fail(d, join(path, badk),
           "unexpected value without a key (write key = value)")
    end
    fail(d, join(path, badk),
         "keys must be names, got a " .. type(badk) .. " key")
  end
  if unknown ~= nil then
    local s = suggest(unknown, keys)
    if s then
      fail(d, join(path, unknown), "unknown key, did you mean '" .. s .. "'?")
    end
    fail(d, join(path, unknown),
         "unknown key (valid keys: " .. tconcat(keys, ", ") .. ")")
  end
end

-- Checks that t is a list (keys 1..n, no holes) and returns n.
local function check_list(d, path, t, what)
  local n = rawlen(t)
  for k in next, t do
    if mtype(k) ~= "integer" or k < 1 or k > n then
      fail(d, join(path, k), "unexpected key: " .. (what or "a list") ..
           " takes values only, like { \"a\", \"b\" }")
    end
  end
  for i = 1, n do
    if rawget(t, i) == nil then fail(d, join(path, i), "missing value") end
  end
  return n
end

-- Numbers print as integers when they are whole ("2", not "2.0").
local function fmtnum(v)
  if mtype(v) == "integer" then return sfmt("%d", v) end
  local i = mtointeger(v)
  if i then return sfmt("%d", i) end
  return sfmt("%.14g", v)
end

local function finite(v)
  return v == v and v ~= mhuge and v ~= -mhuge
end

-- A string, number or boolean as a string, for env values, matrix values
-- and cmd arguments.
local function scalar(d, path, v)
  local t = type(v)
  if t == "string" then return text(d, path, v) end
  if t == "number" then
    if not finite(v) then fail(d, path, "expected a finite number, got " .. tostring(v)) end
    return fmtnum(v)
  end
  if t == "boolean" then return v and "true" or "false" end
  fail(d, path, "expected a string, number or boolean, got " .. tname(v))
end

local function nonempty(d, path, v, expected)
  if type(v) ~= "string" then
    fail(d, path, "expected " .. (expected or "a string") .. ", got " .. tname(v))
  end
  if v == "" then fail(d, path, "must not be empty") end
  return text(d, path, v)
end

local function integer(d, path, v, lo, hi, hint)
  if type(v) ~= "number" then
    fail(d, path, "expected a whole number, got " .. tname(v))
  end
  local i = mtointeger(v)
  if not i then fail(d, path, "expected a whole number, got " .. fmtnum(v)) end
  if i < lo or i > hi then
    fail(d, path, sfmt("must be between %d and %d%s, got %d", lo, hi,
                       hint or "", i))
  end
  return i
end

local DURATION_HINT = ' (use e.g. "90s", "20m", "1h30m")'

-- A duration in milliseconds: "1h30m" or a number of seconds.
local function duration(d, path, v)
  local t = type(v)
  if t == "number" then
    if not finite(v) then
      fail(d, path, "expected a finite number of seconds, got " .. tostring(v))
    end
    if v < 0 then fail(d, path, "must not be negative, got " .. fmtnum(v)) end
    local ms = v * 1000
    if ms > MAX_MS then fail(d, path, "longer than 100 years") end
    return mtointeger(mfloor(ms + 0.5))
  elseif t == "string" then
    local ms = H.duration(v)
    if ms then return ms end
    if smatch(v, "^%s*%-") then
      fail(d, path, "must not be negative, got '" .. show(v) .. "'")
    end
    fail(d, path, "bad duration '" .. show(v) .. "'" .. DURATION_HINT)
  end
  fail(d, path, 'expected a duration (a string like "20m" or a number of ' ..
       "seconds), got " .. t)
end

local SIZE_HINT = ' (use e.g. "512m", "2g" or a number of bytes)'

-- A size in bytes: "2g" or a number of bytes; must be positive.
local function size(d, path, v)
  local t, n = type(v), nil
  if t == "number" then
    if not finite(v) then fail(d, path, "expected a finite number of bytes, got " .. tostring(v)) end
    if v < 0 then fail(d, path, "must not be negative, got " .. fmtnum(v)) end
    if v > 1e18 then fail(d, path, "too large") end
    n = mtointeger(mfloor(v))
  elseif t == "string" then
    n = H.size(v)
    if not n then fail(d, path, "bad size '" .. show(v) .. "'" .. SIZE_HINT) end
  else
    fail(d, path, 'expected a size (a string like "2g" or a number of ' ..
         "bytes), got " .. t)
  end
  if n == 0 then fail(d, path, "must be more than 0") end
  return n
end

local function enum(d, path, v, choices, noun)
  noun = noun or "value"
  if type(v) ~= "string" then
    fail(d, path, "expected a string, got " .. tname(v))
  end
  for i = 1, #choices do
    if choices[i] == v then return v end
  end
  local s = suggest(v, choices)
  if s then
    fail(d, path, sfmt("unknown %s '%s', did you mean '%s'?", noun, show(v), s))
  end
  fail(d, path, sfmt("unknown %s '%s' (use %s)", noun, show(v), one_of(choices)))
end

local function boolean(d, path, v)
  if type(v) ~= "boolean" then
    fail(d, path, "expected true or false, got " .. tname(v))
  end
  return v
end

------------------------------------------------------------------------
-- Templates: "${matrix.key}" is replaced by the instance's value, and
-- "$${matrix.key}" stands for the literal text "${matrix.key}". Anything
-- else after a '$' is kept as it is, "$$" included: "${HOME}" and "$$"
-- reach the shell untouched. A string without references compiles to a plain
-- string; one with references to a list of literal strings and 1-based
-- matrix key indexes, which expand.c concatenates per instance.

local function template(d, path, s, mkeys, keys)
  if not sfind(s, "$", 1, true) then return s end
  local parts, buf, i, n, dynamic = {}, {}, 1, #s, false
  while i <= n do
    local j = sfind(s, "$", i, true)
    if j == nil then
      buf[#buf + 1] = ssub(s, i)
      break
    end
    if j > i then buf[#buf + 1] = ssub(s, i, j - 1) end
    local c = sbyte(s, j + 1)
    if c == 36 and smatch(s, "^{%s*matrix%s*[%.}%[]", j + 2) then -- "$${matrix"
      buf[#buf + 1] = "$"
      i = j + 2
    elseif c == 36 then -- "$$", the shell's pid: kept
      buf[#buf + 1] = "$$"
      i = j + 2
    elseif c == 123 and smatch(s, "^{%s*matrix%s*[%.}%[]", j + 1) then
      local close = sfind(s, "}", j + 2, true)
      if close == nil then
        fail(d, path, "unterminated '${' in '" .. show(s) .. "'")
      end
      local ref = ssub(s, j, close)
      local key = smatch(ref, "^%${matrix%.([%a_][%w_]*)}$")
      if key == nil then
        fail(d, path, "bad reference '" .. show(ref) .. "' (write ${matrix.KEY})")
      end
      local idx = mkeys and mkeys[key]
      if idx == nil then
        if mkeys == nil then
          fail(d, path, "'" .. ref .. "' is used but the job has no matrix")
        end
        local sug = suggest(key, keys)
        fail(d, path, "unknown matrix key '" .. key .. "' in '" .. ref .. "'" ..
             (sug and (", did you mean '" .. sug .. "'?")
              or (" (matrix keys: " .. tconcat(keys, ", ") .. ")")))
      end
      if #buf > 0 then
        parts[#parts + 1] = tconcat(buf)
        buf = {}
      end
      parts[#parts + 1] = idx
      dynamic = true
      i = close + 1
    else
      buf[#buf + 1] = "$"
      i = j + 1
    end
  end
  if #buf > 0 then parts[#parts + 1] = tconcat(buf) end
  if not dynamic then return tconcat(parts) end
  return parts
end

------------------------------------------------------------------------
-- Declarations

local decls = {}          -- every declaration, in order
local by_kind = { job = {}, image = {}, topology = {}, hosts = {} }
local lists = { job = {}, image = {}, topology = {}, hosts = {} }

local PULL = { "missing", "always", "never" }
local EMULATE = { "pjrt", "xrt", "jax", "none", "real" }
local RUNTIMES = { "local", "docker", "swarm", "ssh" }
local RETRYABLE = { "failed", "timeout", "oom", "infra" }
local RETRYABLE_SET = set_of(RETRYABLE)

local DEFAULT_ON = 0
for i = 1, #RETRYABLE do DEFAULT_ON = DEFAULT_ON | (1 << H.outcome(RETRYABLE[i])) end

local TOPOLOGY_KEYS = { "name", "base", "layout", "hosts", "chips_per_host",
                        "cores_per_chip", "emulate" }
local TOPOLOGY_SET = set_of(TOPOLOGY_KEYS)

-- Types and ranges are checked here, with key paths; what the numbers
-- mean (catalogue types, bases, layouts) is core/topology.c's business,
-- called from expand.c. A number not given stays nil: a catalogue type or
-- a base fills it in.
local function topology_spec(d, t)
  check_keys(d, nil, t, TOPOLOGY_KEYS, TOPOLOGY_SET)
  -- The ranges of core/topology.h: hosts 1..256, 1, 2, 4 or 8 chips per
  -- host, 1 or 2 TensorCores per chip.
  local function int(key, hi, allowed)
    local v = rawget(t, key)
    if v == nil then return nil end
    local i = integer(d, key, v, 1, hi)
    if allowed and not allowed[i] then
      fail(d, key, sfmt("must be %s, got %d", allowed.text, i))
    end
    return i
  end
  local base, layout = rawget(t, "base"), rawget(t, "layout")
  local emulate = rawget(t, "emulate")
  return {
    name = d.name, where = d.where,
    base = base ~= nil and nonempty(d, "base", base) or nil,
    layout = layout ~= nil and nonempty(d, "layout", layout) or nil,
    hosts = int("hosts", 256),
    chips_per_host = int("chips_per_host", 8,
                         { [1] = true, [2] = true, [4] = true, [8] = true,
                           text = "1, 2, 4 or 8" }),
    cores_per_chip = int("cores_per_chip", 2),
    emulate = emulate ~= nil and enum(d, "emulate", emulate, EMULATE) or "pjrt",
  }
end

-- hosts "slice" { "root@10.0.0.2", "10.0.0.3:2222", ssh_config = "ci/ssh_config" }
-- hosts "slice" { gcloud = "tpu.json", user = "me" }
-- The workers of a slice, in worker order, reached with the system's ssh
-- (docs/ssh.md). Paths are the spec folder's; core/spec/expand_hosts.c
-- makes them absolute and reads the gcloud file.
local HOSTS_KEYS = { "name", "ssh_config", "gcloud", "user", "instances", "label", "describe",
                     "describe_timeout" }
local HOSTS_SET = set_of(HOSTS_KEYS)
-- Neither starts with '-': ssh would read it as an option (`-Fevil.conf`
-- runs that config's ProxyCommand here), whatever tpuci puts before it.
local SSH_USER = "^[%w_%.][%w_%.%-]*$"
local SSH_HOST = "^[%w_%.][%w_%.%-]*$"

-- "[user@]host[:port]", "[user@][v6addr]:port": { user, host, port }.
local function ssh_target(d, p, s)
  if type(s) ~= "string" then
    fail(d, p, "expected a string like 'root@10.0.0.2' or 'host:2222', got " .. tname(s))
  end
  text(d, p, s)
  local user, rest = smatch(s, "^([^@]*)@(.*)$")
  if user == nil then rest = s end
  if user ~= nil and not smatch(user, SSH_USER) then
    fail(d, p, "the user must be letters, digits, '_', '.' or '-', not starting with '-', got '" ..
         show(s) .. "'")
  end
  local host, port = smatch(rest, "^%[([%x:]+)%]:(%d+)$")
  if host == nil then host, port = smatch(rest, "^([^:]*):(%d+)$") end
  if host == nil then
    host = smatch(rest, "^%[([%x:]+)%]$") or
           (smatch(rest, "^[%x]*:[%x:]+$") and rest) or rest
  end
  if smatch(host, "^%-") then
    fail(d, p, "a host cannot start with '-' (ssh would read it as an option), got '" ..
         show(s) .. "'")
  end
  if host == "" or not (smatch(host, SSH_HOST) or smatch(host, "^[%x:]+$")) then
    fail(d, p, "expected [user@]host[:port], got '" .. show(s) .. "'")
  end
  if port ~= nil then
    port = mtointeger(tonumber(port))
    if port == nil or port < 1 or port > 65535 then
      fail(d, p, "the port must be 1..65535, got '" .. show(s) .. "'")
    end
  end
  return { user = user, host = host, port = port or 0 }
end

local function hosts_spec(d, t, alias)
  local named, list = {}, {}
  for k, v in next, t do
    if mtype(k) == "integer" then list[k] = v else named[k] = v end
  end
  check_keys(d, nil, named, HOSTS_KEYS, HOSTS_SET)
  if not alias and rawget(t, "name") ~= nil then
    fail(d, "name", "the name is already given before the table")
  end
  local n = check_list(d, nil, list, "the hosts")
  local gcloud, user = rawget(t, "gcloud"), rawget(t, "user")
  local ssh_config = rawget(t, "ssh_config")
  local out = { name = d.name, where = d.where, workers = {} }
  if ssh_config ~= nil then
    out.ssh_config = text(d, "ssh_config", nonempty(d, "ssh_config", ssh_config))
  end
  -- After a failed attempt: a fresh describe or instances list, whose
  -- worker states tell a preemption from a test failure (docs/ssh.md).
  local describe = rawget(t, "describe")
  if describe ~= nil then out.describe = text(d, "describe", nonempty(d, "describe", describe)) end
  -- How long it may take before it is killed (with what it started).
  local dt = rawget(t, "describe_timeout")
  if dt ~= nil then
    if describe == nil then fail(d, "describe_timeout", "only with describe = ...") end
    out.describe_timeout_ms = duration(d, "describe_timeout", dt)
    if out.describe_timeout_ms < 1000 then
      fail(d, "describe_timeout", "must be at least 1s, got '" .. show(dt) .. "'")
    end
  end
  for _, k in ipairs({ "instances", "label" }) do
    local v = rawget(t, k)
    if v ~= nil then
      if gcloud == nil then
        fail(d, k, "only with gcloud = ... (an instances list: `gcloud compute instances list --format=json`)")
      end
      out[k] = text(d, k, nonempty(d, k, v))
    end
  end
  if out.label ~= nil and not smatch(out.label, "^[%w_%-]+=[%w_%-]*$") then
    fail(d, "label", "expected 'key=value' (letters, digits, '_' and '-'), got '" .. show(out.label) .. "'")
  end
  if gcloud ~= nil then
    if n > 0 then
      fail(d, "gcloud", "give either the hosts or a gcloud file, not both")
    end
    out.gcloud = text(d, "gcloud", nonempty(d, "gcloud", gcloud))
    if user ~= nil then
      user = nonempty(d, "user", user)
      if not smatch(user, SSH_USER) then
        fail(d, "user", "must be letters, digits, '_', '.' or '-', not starting with '-', got '" ..
             show(user) .. "'")
      end
      out.user = user
    end
    return out
  end
  if user ~= nil then
    fail(d, "user", "only with gcloud = ...; write the user in each host ('me@10.0.0.2')")
  end
  if n == 0 then
    fail(d, nil, 'needs hosts or a gcloud file (write hosts "' .. show(d.name) ..
         '" { "root@10.0.0.2", "root@10.0.0.3" } or { gcloud = "tpu.json" })')
  end
  if n > 256 then fail(d, nil, sfmt("at most 256 hosts, got %d", n)) end
  for i = 1, n do out.workers[i] = ssh_target(d, join(nil, i), list[i]) end
  return out
end

-- matrix = { key = { values... }, exclude = { {...} }, include = { {...} } }
-- Keys are sorted; each list keeps its order; the product varies the last
-- key fastest. Returns the record for expand.c and a key -> index map.
local function matrix_spec(d, m)
  if type(m) ~= "table" then
    fail(d, "matrix", "expected a table of lists, got " .. tname(m))
  end
  local keys = {}
  for k in next, m do
    if type(k) ~= "string" then
      if mtype(k) == "integer" then
        fail(d, join("matrix", k), "unexpected value without a key (write key = { values })")
      end
      fail(d, join("matrix", k), "keys must be names, got a " .. type(k) .. " key")
    end
    if k ~= "include" and k ~= "exclude" then
      if not smatch(k, IDENT) then
        fail(d, join("matrix", k), "not a valid key name (use letters, " ..
             "digits and '_', not starting with a digit)")
      end
      keys[#keys + 1] = k
    end
  end
  tsort(keys)
  local inc, ex = rawget(m, "include"), rawget(m, "exclude")
  if #keys == 0 and inc == nil then
    fail(d, "matrix", 'empty (give each key a list of values, e.g. ' ..
         'python = { "3.10", "3.11" })')
  end

  local values, index, mkeys, product = {}, {}, {}, 1
  for i = 1, #keys do
    local k = keys[i]
    local p = "matrix." .. k
    local list = rawget(m, k)
    if type(list) ~= "table" then
      fail(d, p, "expected a list of values, got " .. tname(list) ..
           (type(list) ~= "function" and " (write " .. k .. " = { ... })" or ""))
    end
    local n = check_list(d, p, list, "a matrix key")
    if n == 0 then fail(d, p, "empty list (give at least one value)") end
    local vs, pos = {}, {}
    for j = 1, n do
      local v = rawget(list, j)
      local pj = p .. "[" .. j .. "]"
      local s = scalar(d, pj, v)
      if s == "" then fail(d, pj, "must not be empty") end
      if sfind(s, "%c") then fail(d, pj, "must not contain control characters") end
      if pos[s] then
        fail(d, pj, "duplicate value '" .. show(s) .. "' (also at [" .. pos[s] .. "])")
      end
      if mtype(v) == "float" and not mtointeger(v) then
        warn(d, pj, "the number " .. s .. " is used as '" .. s ..
             "'; quote versions (\"3.10\") to keep trailing zeros")
      end
      pos[s], vs[j] = j, s
    end
    values[i], index[k], mkeys[k] = vs, pos, i
    product = product * n
  end
  if product > MAX_COMBINATIONS then
    fail(d, "matrix", sfmt("expands to %.0f combinations (at most %d)",
                           product, MAX_COMBINATIONS))
  end

  -- exclude: each entry drops the combinations matching all its keys.
  local rules, nrules = {}, 0
  if ex ~= nil then
    if type(ex) ~= "table" then
      fail(d, "matrix.exclude", "expected a list of tables, got " .. tname(ex))
    end
    local n = check_list(d, "matrix.exclude", ex)
    if #keys == 0 then
      fail(d, "matrix.exclude", "there are no matrix keys to exclude from")
    end
    local keyset = set_of(keys)
    for r = 1, n do
      local e = rawget(ex, r)
      local p = "matrix.exclude[" .. r .. "]"
      if type(e) ~= "table" then
        fail(d, p, 'expected a table like { python = "3.10" }, got ' .. tname(e))
      end
      check_keys(d, p, e, keys, keyset)
      if next(e) == nil then fail(d, p, "empty: it would exclude everything") end
      for i = 1, #keys do
        local k = keys[i]
        local v = rawget(e, k)
        if v == nil then
          rules[nrules * #keys + i] = -1
        else
          local s = scalar(d, p .. "." .. k, v)
          local at = index[k][s]
          if at == nil then
            fail(d, p .. "." .. k, "'" .. show(s) .. "' is not a value of matrix." ..
                 k .. " (" .. one_of(values[i]) .. ")")
          end
          rules[nrules * #keys + i] = at - 1
        end
      end
      nrules = nrules + 1
    end
  end

  local function excluded(at)
    for r = 0, nrules - 1 do
      local all = true
      for i = 1, #keys do
        local want = rules[r * #keys + i]
        if want ~= -1 and want ~= at[i] - 1 then
          all = false
          break
        end
      end
      if all then return true end
    end
    return false
  end

  -- include: extra combinations, each naming every key.
  local rows = {}
  local has_product = #keys > 0
  if inc ~= nil then
    if type(inc) ~= "table" then
      fail(d, "matrix.include", "expected a list of tables, got " .. tname(inc))
    end
    local n = check_list(d, "matrix.include", inc)
    if n == 0 and not has_product then
      fail(d, "matrix", "empty (include has no entries)")
    end
    if not has_product then
      -- No product: the first entry's keys are the matrix keys.
      local first = rawget(inc, 1)
      if type(first) ~= "table" then
        fail(d, "matrix.include[1]", 'expected a table like { python = "3.12" }, got ' ..
             tname(first))
      end
      for k in next, first do
        if type(k) == "string" then
          if not smatch(k, IDENT) then
            fail(d, join("matrix.include[1]", k), "not a valid key name (use " ..
                 "letters, digits and '_', not starting with a digit)")
          end
          keys[#keys + 1] = k
        end
      end
      tsort(keys)
      if #keys == 0 then fail(d, "matrix.include[1]", "empty entry (give every matrix key a value)") end
      for i = 1, #keys do mkeys[keys[i]] = i end
    end
    local keyset = set_of(keys)
    local seen = {}
    for r = 1, n do
      local e = rawget(inc, r)
      local p = "matrix.include[" .. r .. "]"
      if type(e) ~= "table" then
        fail(d, p, 'expected a table like { python = "3.12" }, got ' .. tname(e))
      end
      check_keys(d, p, e, keys, keyset)
      local row, at, inside = {}, {}, has_product
      for i = 1, #keys do
        local k = keys[i]
        local v = rawget(e, k)
        if v == nil then
          fail(d, p, "missing key '" .. k .. "' (an include entry gives " ..
               "every matrix key a value)")
        end
        local s = scalar(d, p .. "." .. k, v)
        if s == "" then fail(d, p .. "." .. k, "must not be empty") end
        if sfind(s, "%c") then fail(d, p .. "." .. k, "must not contain control characters") end
        row[i] = s
        at[i] = index[k] and index[k][s]
        if at[i] == nil then inside = false end
      end
      local sig = tconcat(row, "\0")
      if seen[sig] then
        warn(d, p, "same combination as matrix.include[" .. seen[sig] .. "], skipped")
      elseif inside and not excluded(at) then
        warn(d, p, "combination is already in the matrix, skipped")
      else
        seen[sig] = r
        rows[#rows + 1] = row
      end
    end
  end

  return {
    keys = keys, values = values, product = has_product,
    exclude = rules, nexclude = nrules, include = rows,
  }, mkeys, keys
end

-- env = { NAME = value }: returns { k1, v1, k2, v2, ... } sorted by name;
-- values are templates unless `literal` (function results).
local function env_spec(d, path, t, mkeys, keys, literal)
  local names = {}
  for k in next, t do
    if type(k) ~= "string" then
      if mtype(k) == "integer" then
        fail(d, join(path, k), "unexpected value without a name (write NAME = value)")
      end
      fail(d, join(path, k), "keys must be variable names, got a " .. type(k) .. " key")
    end
    if not smatch(k, IDENT) then
      fail(d, join(path, k), "not a valid variable name (use letters, digits " ..
           "and '_', not starting with a digit)")
    end
    names[#names + 1] = k
  end
  tsort(names)
  local out = {}
  for i = 1, #names do
    local k = names[i]
    local v = rawget(t, k)
    local p = join(path, k)
    local s = scalar(d, p, v)
    out[2 * i - 1] = k
    if literal or type(v) ~= "string" then
      out[2 * i] = s
    else
      out[2 * i] = template(d, p, s, mkeys, keys)
    end
  end
  return out
end

local IMAGE_KEYS = { "name", "ref", "pull", "build" }
local IMAGE_SET = set_of(IMAGE_KEYS)
local BUILD_KEYS = { "context", "dockerfile", "args", "target" }
local BUILD_SET = set_of(BUILD_KEYS)

-- build = "dir" or { context, dockerfile, args, target }, as compose's
-- `build:`. The context is made absolute against the spec's folder by
-- expand.c; the Dockerfile is relative to the context.
local function build_spec(d, v)
  if type(v) == "string" then return { context = nonempty(d, "build", v), args = {} } end
  if type(v) ~= "table" then
    fail(d, "build", 'expected a folder or a table like { context = ".", dockerfile = ' ..
         '"Dockerfile.test" }, got ' .. tname(v))
  end
  check_keys(d, "build", v, BUILD_KEYS, BUILD_SET)
  local b = { context = ".", args = {} }
  local c, f, a, t = rawget(v, "context"), rawget(v, "dockerfile"), rawget(v, "args"),
                     rawget(v, "target")
  if c ~= nil then b.context = nonempty(d, "build.context", c) end
  if f ~= nil then b.dockerfile = nonempty(d, "build.dockerfile", f) end
  if t ~= nil then b.target = nonempty(d, "build.target", t) end
  if a ~= nil then
    if type(a) ~= "table" then
      fail(d, "build.args", "expected a table like { PY = \"3.11\" }, got " .. tname(a))
    end
    b.args = env_spec(d, "build.args", a, nil, nil, true)
  end
  return b
end

local function image_spec(d, t)
  check_keys(d, nil, t, IMAGE_KEYS, IMAGE_SET)
  local ref, build = rawget(t, "ref"), rawget(t, "build")
  local pull = rawget(t, "pull")
  if build ~= nil then
    build = build_spec(d, build)
    if pull ~= nil then
      fail(d, "pull", "an image with build is built, never pulled (remove pull)")
    end
    -- The tag is for people: containers start from the id the build gave.
    -- A repository name is lowercase letters, digits and separators.
    if ref == nil then
      ref = "tpuci-build/" .. sgsub(sgsub(string.lower(d.name), "[^%w._-]", "-"), "^[._-]", "x")
    end
  end
  if ref == nil then
    fail(d, "ref", 'missing (e.g. ref = "python:3.11", or build = { context = "." })')
  end
  nonempty(d, "ref", ref)
  if sfind(ref, "[%s%c]") then fail(d, "ref", "must not contain spaces, got '" .. show(ref) .. "'") end
  return { name = d.name, where = d.where, ref = ref, build = build,
           pull = pull ~= nil and enum(d, "pull", pull, PULL) or "missing" }
end

-- cmd = { "prog", "arg", ... }: a list of templates (or plain strings).
local function cmd_spec(d, path, t, mkeys, keys, literal)
  local n = check_list(d, path, t, "cmd")
  if n == 0 then fail(d, path, "must not be empty") end
  local out = {}
  for i = 1, n do
    local v = rawget(t, i)
    local p = path .. "[" .. i .. "]"
    local s = scalar(d, p, v)
    if i == 1 and s == "" then fail(d, p, "the program must not be empty") end
    if literal or type(v) ~= "string" then out[i] = s
    else out[i] = template(d, p, s, mkeys, keys) end
  end
  return out
end

local MOUNT_KEYS = { "target", "readonly" }
local MOUNT_SET = set_of(MOUNT_KEYS)

-- mounts = { [host] = "/target" or { target = ..., readonly = ... } },
-- returned as a list sorted by host path.
local function mounts_spec(d, t)
  if type(t) ~= "table" then
    fail(d, "mounts", 'expected a table like { ["."] = "/src" }, got ' .. tname(t))
  end
  local hosts = {}
  for k in next, t do
    if type(k) ~= "string" then
      fail(d, join("mounts", k), "keys are host paths, got a " .. type(k) ..
           ' key (write ["./data"] = "/data")')
    end
    hosts[#hosts + 1] = k
  end
  tsort(hosts)
  local out, targets = {}, {}
  for i = 1, #hosts do
    local host = hosts[i]
    local p = join("mounts", host)
    if host == "" then fail(d, p, "the host path must not be empty") end
    text(d, p, host)
    local v = rawget(t, host)
    local target, ro
    if type(v) == "string" then
      target, ro = v, false
    elseif type(v) == "table" then
      check_keys(d, p, v, MOUNT_KEYS, MOUNT_SET)
      target = rawget(v, "target")
      if target == nil then fail(d, p .. ".target", "missing") end
      if type(target) ~= "string" then
        fail(d, p .. ".target", "expected a string, got " .. tname(target))
      end
      ro = rawget(v, "readonly")
      ro = ro ~= nil and boolean(d, p .. ".readonly", ro) or false
    else
      fail(d, p, "expected a container path or a table { target = ..., " ..
           "readonly = ... }, got " .. tname(v))
    end
    text(d, type(v) == "table" and p .. ".target" or p, target)
    if ssub(target, 1, 1) ~= "/" then
      fail(d, p, "the container path must be absolute, got '" .. show(target) .. "'")
    end
    if targets[target] then
      fail(d, p, "'" .. show(target) .. "' is already mounted from " ..
           join("mounts", targets[target]))
    end
    targets[target] = host
    out[i] = { source = host, target = target, readonly = ro }
  end
  return out
end

local RETRY_KEYS = { "attempts", "on", "backoff", "factor", "max_backoff", "rerun", "capacity" }
local CAPACITY_KEYS = { "attempts", "wait" }
local CAPACITY_SET = set_of(CAPACITY_KEYS)
local RETRY_SET = set_of(RETRY_KEYS)

-- retries.capacity = { attempts = N, wait = "2m" }: the attempts after a
-- preempted or no-capacity one (the machines', not the tests'), which
-- never count against `attempts`, and the wait before each.
local function capacity_spec(d, j, c)
  if type(c) ~= "table" then
    fail(d, "retries.capacity", "expected a table like { attempts = 3, wait = \"2m\" }, got " ..
         tname(c))
  end
  check_keys(d, "retries.capacity", c, CAPACITY_KEYS, CAPACITY_SET)
  local n = rawget(c, "attempts")
  if n ~= nil then j.capacity_attempts = integer(d, "retries.capacity.attempts", n, 0, 100) end
  local w = rawget(c, "wait")
  if w ~= nil then j.capacity_wait_ms = duration(d, "retries.capacity.wait", w) end
end

local function retries_spec(d, j, r)
  j.attempts, j.on, j.backoff_ms, j.factor, j.max_backoff_ms =
    1, DEFAULT_ON, 1000, 2.0, 60000
  j.capacity_attempts, j.capacity_wait_ms = 3, 60000
  if r == nil then return end
  if type(r) == "number" then
    j.attempts = integer(d, "retries", r, 0, 99,
                         " (retries after the first attempt)") + 1
    return
  end
  if type(r) ~= "table" then
    fail(d, "retries", "expected a number or a table, got " .. tname(r))
  end
  check_keys(d, "retries", r, RETRY_KEYS, RETRY_SET)
  local attempts = rawget(r, "attempts")
  if attempts == nil and rawget(r, "capacity") ~= nil then attempts = 1 end
  if attempts == nil then
    fail(d, "retries.attempts", "missing (the total number of attempts, e.g. attempts = 3)")
  end
  j.attempts = integer(d, "retries.attempts", attempts, 1, 100)
  local on = rawget(r, "on")
  if on ~= nil then
    if type(on) ~= "table" then
      fail(d, "retries.on", "expected a list of outcomes like { \"timeout\" }, got " ..
           tname(on))
    end
    local n = check_list(d, "retries.on", on)
    local mask = 0
    for i = 1, n do
      local v = rawget(on, i)
      local p = "retries.on[" .. i .. "]"
      if type(v) ~= "string" then
        fail(d, p, "expected a string, got " .. tname(v))
      end
      if not RETRYABLE_SET[v] then
        if H.outcome(v) then
          fail(d, p, "'" .. v .. "' cannot be retried (use " .. one_of(RETRYABLE) .. ")")
        end
        enum(d, p, v, RETRYABLE, "outcome")
      end
      mask = mask | (1 << H.outcome(v))
    end
    j.on = mask
  end
  local backoff = rawget(r, "backoff")
  if backoff ~= nil then j.backoff_ms = duration(d, "retries.backoff", backoff) end
  local factor = rawget(r, "factor")
  if factor ~= nil then
    if type(factor) ~= "number" then
      fail(d, "retries.factor", "expected a number, got " .. tname(factor))
    end
    if not finite(factor) or factor < 1 or factor > 100 then
      fail(d, "retries.factor", "must be between 1 and 100, got " .. tostring(factor))
    end
    j.factor = factor + 0.0
  end
  local maxb = rawget(r, "max_backoff")
  if maxb ~= nil then
    -- 0 would mean "no cap" to tpuci__retry_delay(), whose doubling then
    -- overflows after enough attempts.
    j.max_backoff_ms = duration(d, "retries.max_backoff", maxb)
    if j.max_backoff_ms == 0 then fail(d, "retries.max_backoff", "must be more than 0") end
  end
  -- pytest jobs: what a retry runs. "failed" (the default): the tests
  -- that failed, the one an attempt was cut short in, and those that never
  -- got a result; "unfinished": only the last two, so that tests that
  -- simply failed are not run again after a timeout or a crash.
  local rerun = rawget(r, "rerun")
  if rerun ~= nil then
    enum(d, "retries.rerun", rerun, { "failed", "unfinished" }, "choice")
    j.rerun_unfinished = rerun == "unfinished"
  end
  local capacity = rawget(r, "capacity")
  if capacity ~= nil then capacity_spec(d, j, capacity) end
end

------------------------------------------------------------------------
-- Container options for accelerators, with Compose's names and forms
-- (docs/spec.md, "Accelerators"). container_spec() returns the record
-- core/spec/expand_ctr.c copies into each instance; which runtime takes
-- which option is core/plan/ctr_opts.c's business.

local CONTAINER_KEYS = { "shm_size", "ipc", "privileged", "devices", "cap_add",
                         "cap_drop", "ulimits", "gpus", "sysctls" }
local IPC = { "host", "private", "shareable" }
-- Docker's limit names.
local ULIMITS = { "core", "cpu", "data", "fsize", "locks", "memlock",
                  "msgqueue", "nice", "nofile", "nproc", "rss", "rtprio",
                  "rttime", "sigpending", "stack" }
local ULIMIT_SET = set_of(ULIMITS)
local ULIMIT_KEYS = { "soft", "hard" }
local ULIMIT_KEY_SET = set_of(ULIMIT_KEYS)
-- Linux's capabilities (capabilities(7)) without "CAP_", and "ALL".
local CAPS = { "ALL", "AUDIT_CONTROL", "AUDIT_READ", "AUDIT_WRITE",
  "BLOCK_SUSPEND", "BPF", "CHECKPOINT_RESTORE", "CHOWN", "DAC_OVERRIDE",
  "DAC_READ_SEARCH", "FOWNER", "FSETID", "IPC_LOCK", "IPC_OWNER", "KILL",
  "LEASE", "LINUX_IMMUTABLE", "MAC_ADMIN", "MAC_OVERRIDE", "MKNOD",
  "NET_ADMIN", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_RAW", "PERFMON",
  "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYSLOG", "SYS_ADMIN", "SYS_BOOT",
  "SYS_CHROOT", "SYS_MODULE", "SYS_NICE", "SYS_PACCT", "SYS_PTRACE",
  "SYS_RAWIO", "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "WAKE_ALARM" }
local CAP_SET = set_of(CAPS)
local GPUS_KEYS = { "count", "device_ids", "driver", "capabilities" }
local GPUS_SET = set_of(GPUS_KEYS)
-- The sysctls of the IPC namespace; with net.* and fs.mqueue.*, the only
-- ones a container has a namespace of its own for (runc refuses others).
local IPC_SYSCTLS = set_of({ "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni",
                             "kernel.sem", "kernel.shmall", "kernel.shmmax",
                             "kernel.shmmni", "kernel.shm_rmid_forced" })
local GLOB = "[%*%?%[]"

-- Cgroup device permissions: letters of "rwm", each at most once.
local function device_mode(s)
  return s ~= "" and not sfind(s, "[^rwm]") and not smatch(s, "(.).*%1")
end

-- devices = { "/dev/accel0", "/dev/null:/dev/accel1:rwm", "/dev/vfio/*" }:
-- HOST[:CONTAINER][:PERMISSIONS], Docker's --device (HOST:PERMISSIONS too).
local function devices_spec(d, v)
  if type(v) ~= "table" then
    fail(d, "devices", 'expected a list like { "/dev/accel0" }, got ' .. tname(v))
  end
  local n = check_list(d, "devices", v)
  local out, at = {}, {}
  for i = 1, n do
    local p = "devices[" .. i .. "]"
    local s = nonempty(d, p, rawget(v, i))
    local parts, from = {}, 1
    while true do
      local c = sfind(s, ":", from, true)
      parts[#parts + 1] = ssub(s, from, c and c - 1 or #s)
      if not c then break end
      from = c + 1
    end
    if #parts > 3 then
      fail(d, p, "expected HOST[:CONTAINER][:PERMISSIONS], got '" .. show(s) .. "'")
    end
    local host, target, perms = parts[1], nil, nil
    if #parts == 2 and ssub(parts[2], 1, 1) ~= "/" then perms = parts[2]
    elseif #parts >= 2 then target, perms = parts[2], parts[3] end
    if ssub(host, 1, 1) ~= "/" then
      fail(d, p, "the host path must be absolute, got '" .. show(host) .. "'")
    end
    if target ~= nil and ssub(target, 1, 1) ~= "/" then
      fail(d, p, "the container path must be absolute, got '" .. show(target) .. "'")
    end
    if perms ~= nil and not device_mode(perms) then
      fail(d, p, "permissions are letters of 'rwm', each at most once, got '" ..
           show(perms) .. "'")
    end
    local glob = sfind(host, GLOB) ~= nil
    if glob and target ~= nil then
      fail(d, p, "a glob takes no container path (each device it matches " ..
           "keeps its own path)")
    end
    if target ~= nil and sfind(target, GLOB) then
      fail(d, p, "the container path must not hold '*', '?' or '['")
    end
    local path = target or host
    if at[path] then
      fail(d, p, "'" .. show(path) .. "' is already given by devices[" .. at[path] .. "]")
    end
    at[path] = i
    out[i] = { host = host, target = target, perms = perms or "rwm", glob = glob }
  end
  return out
end

-- cap_add / cap_drop = { "SYS_ADMIN", "CAP_NET_RAW", "ALL" }: names in
-- any case, with or without "CAP_"; returned upper-case without it,
-- sorted, with the set.
local function caps_spec(d, key, v)
  if type(v) ~= "table" then
    fail(d, key, 'expected a list like { "SYS_ADMIN" }, got ' .. tname(v))
  end
  local n = check_list(d, key, v)
  local out, seen = {}, {}
  for i = 1, n do
    local p = key .. "[" .. i .. "]"
    local given = nonempty(d, p, rawget(v, i))
    local name = supper(given)
    if ssub(name, 1, 4) == "CAP_" then name = ssub(name, 5) end
    if not CAP_SET[name] then
      local s = suggest(name, CAPS)
      fail(d, p, "unknown capability '" .. show(given) .. "'" ..
           (s and (", did you mean '" .. s .. "'?")
            or " (capabilities(7) lists them; write SYS_ADMIN, CAP_SYS_ADMIN or ALL)"))
    end
    if seen[name] then fail(d, p, "'" .. name .. "' is given twice") end
    seen[name] = true
    out[#out + 1] = name
  end
  tsort(out)
  return out, seen
end

-- A limit: a whole number, -1 for unlimited.
local function limit(d, p, v)
  if type(v) ~= "number" then
    fail(d, p, "expected a number (-1: unlimited) or { soft = ..., hard = ... }, got " ..
         tname(v))
  end
  return integer(d, p, v, -1, mmaxint, " (-1: unlimited)")
end

local function limit_text(v)
  return v == -1 and "unlimited" or sfmt("%d", v)
end

-- The keys of v, the table of `key`, sorted; each must be a string
-- ("keys are <what> ... (write <hint>)").
local function names_of(d, key, v, example, what, hint)
  if type(v) ~= "table" then
    fail(d, key, "expected a table like " .. example .. ", got " .. tname(v))
  end
  local names = {}
  for k in next, v do
    if type(k) ~= "string" then
      fail(d, join(key, k), "keys are " .. what .. ", got a " .. type(k) ..
           " key (write " .. hint .. ")")
    end
    names[#names + 1] = k
  end
  tsort(names)
  return names
end

-- ulimits = { memlock = -1, nofile = { soft = 4096, hard = 8192 } },
-- returned as a list sorted by name.
local function ulimits_spec(d, v)
  local names = names_of(d, "ulimits", v, "{ nofile = { soft = 4096, hard = 8192 } }",
                         "limit names", "nofile = 4096")
  local out = {}
  for i = 1, #names do
    local k = names[i]
    local p = "ulimits." .. k
    if not ULIMIT_SET[k] then enum(d, p, k, ULIMITS, "limit") end
    local x = rawget(v, k)
    local soft, hard
    if type(x) == "table" then
      check_keys(d, p, x, ULIMIT_KEYS, ULIMIT_KEY_SET)
      if rawget(x, "soft") == nil then fail(d, p .. ".soft", "missing") end
      if rawget(x, "hard") == nil then fail(d, p .. ".hard", "missing") end
      soft = limit(d, p .. ".soft", rawget(x, "soft"))
      hard = limit(d, p .. ".hard", rawget(x, "hard"))
      if hard ~= -1 and (soft == -1 or soft > hard) then
        fail(d, p, "the soft limit (" .. limit_text(soft) ..
             ") is above the hard limit (" .. limit_text(hard) .. ")")
      end
    else
      soft = limit(d, p, x)
      hard = soft
    end
    out[i] = { name = k, soft = soft, hard = hard }
  end
  return out
end

-- A list of words without commas or spaces (GPU ids, capabilities).
local function words(d, p, v, example)
  if type(v) ~= "table" then
    fail(d, p, "expected a list like " .. example .. ", got " .. tname(v))
  end
  local n = check_list(d, p, v)
  if n == 0 then fail(d, p, "must not be empty") end
  local out = {}
  for i = 1, n do
    local pi = p .. "[" .. i .. "]"
    local x = rawget(v, i)
    if type(x) ~= "string" and mtype(x) ~= "integer" then
      fail(d, pi, "expected a string, got " .. tname(x))
    end
    local s = scalar(d, pi, x)
    if s == "" then fail(d, pi, "must not be empty") end
    if sfind(s, "[,%s%c]") then fail(d, pi, "must not hold commas or spaces") end
    out[i] = s
  end
  return out
end

local GPUS_FORMS = '"all", a number of GPUs, a list of device ids ({ "0", "1" }) ' ..
                   'or { count = ..., device_ids = ..., driver = ..., capabilities = ... }'

local function gpu_count(d, p, v)
  if v == "all" then return -1 end
  if type(v) ~= "number" then
    fail(d, p, 'expected "all" or a number of GPUs, got ' ..
         (type(v) == "string" and ("'" .. show(v) .. "'") or tname(v)))
  end
  return integer(d, p, v, 1, 1024, ' (or "all")')
end

-- gpus = "all" | N | { "0", "1" } | { count = ..., device_ids = ...,
-- driver = ..., capabilities = ... } (Compose's device reservation): one
-- Docker DeviceRequest.
local function gpus_spec(d, v)
  local g = { count = 0, caps = { "gpu" } }
  if type(v) == "number" or v == "all" then
    g.count = gpu_count(d, "gpus", v)
    return g
  end
  if type(v) ~= "table" then
    fail(d, "gpus", "expected " .. GPUS_FORMS .. ", got " ..
         (type(v) == "string" and ("'" .. show(v) .. "'") or tname(v)))
  end
  if next(v) == nil then fail(d, "gpus", "empty (write " .. GPUS_FORMS .. ")") end
  if rawget(v, 1) ~= nil then
    g.ids = words(d, "gpus", v, '{ "0", "1" }')
    return g
  end
  check_keys(d, "gpus", v, GPUS_KEYS, GPUS_SET)
  local count, ids = rawget(v, "count"), rawget(v, "device_ids")
  if count ~= nil and ids ~= nil then
    fail(d, "gpus", "'count' and 'device_ids' are exclusive")
  end
  if ids ~= nil then g.ids = words(d, "gpus.device_ids", ids, '{ "0", "1" }')
  else g.count = count ~= nil and gpu_count(d, "gpus.count", count) or -1 end
  local driver = rawget(v, "driver")
  if driver ~= nil then
    g.driver = nonempty(d, "gpus.driver", driver)
    if sfind(driver, "[%s%c]") then fail(d, "gpus.driver", "must not contain spaces") end
  end
  local caps = rawget(v, "capabilities")
  if caps ~= nil then g.caps = words(d, "gpus.capabilities", caps, '{ "gpu", "utility" }') end
  return g
end

-- sysctls = { ["net.core.somaxconn"] = 1024 }: { k1, v1, ... } by name.
local function sysctls_spec(d, v)
  local names = names_of(d, "sysctls", v, '{ ["net.core.somaxconn"] = 1024 }',
                         "sysctl names", '["net.core.somaxconn"] = 1024')
  local out = {}
  for i = 1, #names do
    local k = names[i]
    local p = join("sysctls", k)
    if not smatch(k, "^[%w_%-]+%.[%w_%-%.]*[%w_%-]$") then
      fail(d, p, "not a sysctl name (like net.core.somaxconn)")
    end
    if not (IPC_SYSCTLS[k] or ssub(k, 1, 4) == "net." or ssub(k, 1, 10) == "fs.mqueue.") then
      fail(d, p, "a container may set only the sysctls of its own namespaces: " ..
           "net.*, fs.mqueue.* and kernel.shm*, kernel.msg*, kernel.sem")
    end
    local s = scalar(d, p, rawget(v, k))
    if s == "" then fail(d, p, "must not be empty") end
    if sfind(s, "%c") then fail(d, p, "must not contain control characters") end
    out[2 * i - 1], out[2 * i] = k, s
  end
  return out
end

-- The options of job table t, checked against each other and against
-- network and mounts (already in j). nil when none is given.
local function container_spec(d, t, j)
  local c = { devices = {}, cap_add = {}, cap_drop = {}, ulimits = {},
              sysctls = {}, privileged = false, shm = 0, given = {} }
  for i = 1, #CONTAINER_KEYS do
    if rawget(t, CONTAINER_KEYS[i]) ~= nil then c.given[#c.given + 1] = CONTAINER_KEYS[i] end
  end
  if #c.given == 0 then return nil end
  local v = rawget(t, "shm_size")
  if v ~= nil then c.shm = size(d, "shm_size", v) end
  v = rawget(t, "ipc")
  if v ~= nil then c.ipc = enum(d, "ipc", v, IPC, "IPC mode") end
  v = rawget(t, "privileged")
  if v ~= nil then c.privileged = boolean(d, "privileged", v) end
  v = rawget(t, "devices")
  if v ~= nil then c.devices = devices_spec(d, v) end
  local add, drop = {}, {}
  v = rawget(t, "cap_add")
  if v ~= nil then c.cap_add, add = caps_spec(d, "cap_add", v) end
  v = rawget(t, "cap_drop")
  if v ~= nil then c.cap_drop, drop = caps_spec(d, "cap_drop", v) end
  for i = 1, #c.cap_add do
    if drop[c.cap_add[i]] then
      fail(d, "cap_drop", "'" .. c.cap_add[i] .. "' is in cap_add too")
    end
  end
  v = rawget(t, "ulimits")
  if v ~= nil then c.ulimits = ulimits_spec(d, v) end
  v = rawget(t, "gpus")
  if v ~= nil then c.gpus = gpus_spec(d, v) end
  v = rawget(t, "sysctls")
  if v ~= nil then c.sysctls = sysctls_spec(d, v) end

  -- What the engine would ignore or refuse only once an attempt starts.
  if c.shm > 0 and c.ipc == "host" then
    fail(d, "shm_size", "has no effect with ipc = \"host\" (the container " ..
         "uses the host's /dev/shm)")
  end
  for i = 1, #j.mounts do
    if c.shm > 0 and j.mounts[i].target == "/dev/shm" then
      fail(d, "shm_size", "/dev/shm is also mounted by " ..
           join("mounts", j.mounts[i].source) .. "; give one of them")
    end
  end
  for i = 1, #c.sysctls, 2 do
    local k = c.sysctls[i]
    if j.network == "host" and ssub(k, 1, 4) == "net." then
      fail(d, join("sysctls", k), "a container on the host's network " ..
           "(network = \"host\") cannot set net.* sysctls")
    end
    if c.ipc == "host" and not (ssub(k, 1, 4) == "net.") then
      fail(d, join("sysctls", k), "a container in the host's IPC namespace " ..
           "(ipc = \"host\") cannot set its sysctls")
    end
  end
  return c
end

-- A timeout key of a job in ms: 0 (or "0s", or absent) means none. A
-- positive duration under 1ms rounds to 0 too, and would then mean none by
-- accident: refused.
local function timeout_key(d, t, key)
  local v = rawget(t, key)
  local ms = v ~= nil and duration(d, key, v) or 0
  if ms == 0 and v ~= nil and
     ((type(v) == "number" and v > 0) or (type(v) == "string" and sfind(v, "[1-9]"))) then
    fail(d, key, "less than 1ms, got " .. show(v) .. " (write 0 for none)")
  end
  return ms
end

local JOB_KEYS = { "name", "run", "cmd", "pytest", "env", "workdir", "timeout", "idle_timeout",
                   "start_timeout", "grace", "retries", "matrix", "runtime", "image", "topology",
                   "mounts", "cpus", "memory", "network", "shm_size", "ipc",
                   "privileged", "devices", "cap_add", "cap_drop", "ulimits",
                   "gpus", "sysctls", "hosts", "cache", "inputs", "expect_devices" }
local JOB_SET = set_of(JOB_KEYS)

local PYTEST_KEYS = { "markers", "k", "args", "options", "shards", "shard_by", "allow_empty",
                      "failed_first", "retry_steady", "python", "test_timeout", "select",
                      "select_always", "select_ignore", "new_tests", "per_chip", "setup" }
local PYTEST_SET = set_of(PYTEST_KEYS)
local NEW_TESTS_KEYS = { "runs" }
local NEW_TESTS_SET = set_of(NEW_TESTS_KEYS)

-- pytest = { markers = "tpu", k = "...", args = { "tests/" }, shards = 4,
--            allow_empty = false, python = "python3", options = { "-x" } }
-- Checked before the matrix, since shards add a matrix key.
local function pytest_check(d, t)
  if type(t) ~= "table" then
    fail(d, "pytest", 'expected a table like { markers = "tpu", args = { "tests/" } }, got ' ..
         tname(t))
  end
  check_keys(d, "pytest", t, PYTEST_KEYS, PYTEST_SET)
  local shards = rawget(t, "shards")
  return shards ~= nil and integer(d, "pytest.shards", shards, 1, 256) or 1
end

-- The matrix with a "shard" key for pytest.shards = N > 1: values "1/N"
-- .. "N/N", and every include entry repeated once per shard.
local function with_shards(d, m, n)
  if n <= 1 then return m end
  local out = {}
  if m ~= nil then
    if type(m) ~= "table" then
      fail(d, "matrix", "expected a table of lists, got " .. tname(m))
    end
    if rawget(m, "shard") ~= nil then
      fail(d, "matrix.shard", "the key 'shard' is taken by pytest.shards")
    end
    for k, v in next, m do out[k] = v end
  end
  local values = {}
  for i = 1, n do values[i] = i .. "/" .. n end
  out.shard = values
  local inc = out.include
  if type(inc) == "table" then
    local rows = {}
    for r = 1, #inc do
      local e = inc[r]
      if type(e) ~= "table" then rows[#rows + 1] = e
      else
        for i = 1, n do
          local copy = {}
          for k, v in next, e do copy[k] = v end
          copy.shard = values[i]
          rows[#rows + 1] = copy
        end
      end
    end
    out.include = rows
  end
  return out
end

-- The command a pytest job runs for the whole suite; tpuci adds the JUnit
-- file and, on retries and shards, replaces the trailing args by node ids.
local function pytest_spec(d, j, t, mkeys, keys)
  local py = { shards = pytest_check(d, t), allow_empty = false, failed_first = true }
  local cmd = {}
  local python = rawget(t, "python")
  cmd[1] = python ~= nil and nonempty(d, "pytest.python", python) or "python3"
  cmd[#cmd + 1] = "-m"
  cmd[#cmd + 1] = "pytest"
  -- The mounted source tree stays clean: no .pytest_cache.
  cmd[#cmd + 1] = "-p"
  cmd[#cmd + 1] = "no:cacheprovider"
  local markers = rawget(t, "markers")
  if markers ~= nil then
    py.markers = template(d, "pytest.markers", nonempty(d, "pytest.markers", markers), mkeys, keys)
    cmd[#cmd + 1] = "-m"
    cmd[#cmd + 1] = py.markers
  end
  local k = rawget(t, "k")
  if k ~= nil then
    py.k = template(d, "pytest.k", nonempty(d, "pytest.k", k), mkeys, keys)
    cmd[#cmd + 1] = "-k"
    cmd[#cmd + 1] = py.k
  end
  local options = rawget(t, "options")
  if options ~= nil then
    if type(options) ~= "table" then
      fail(d, "pytest.options", "expected a list of strings, got " .. tname(options))
    end
    local n = check_list(d, "pytest.options", options)
    for i = 1, n do
      local p = "pytest.options[" .. i .. "]"
      local o = scalar(d, p, rawget(options, i))
      if o == "--junitxml" or sfind(o, "^%-%-junit%-?xml") then
        fail(d, p, "tpuci writes the JUnit file itself; leave out " .. o)
      end
      cmd[#cmd + 1] = template(d, p, o, mkeys, keys)
    end
  end
  local args = rawget(t, "args")
  py.nargs = 0
  if args ~= nil then
    if type(args) ~= "table" then
      fail(d, "pytest.args", 'expected a list of strings like { "tests/" }, got ' .. tname(args))
    end
    local n = check_list(d, "pytest.args", args)
    for i = 1, n do
      local p = "pytest.args[" .. i .. "]"
      cmd[#cmd + 1] = template(d, p, nonempty(d, p, scalar(d, p, rawget(args, i))), mkeys, keys)
    end
    py.nargs = n
  end
  local empty = rawget(t, "allow_empty")
  if empty ~= nil then py.allow_empty = boolean(d, "pytest.allow_empty", empty) end
  -- One process per chip of the job's one host: the C side makes them
  -- shards, as many as the topology's chips (core/spec/expand.c).
  local pc = rawget(t, "per_chip")
  if pc ~= nil then py.per_chip = boolean(d, "pytest.per_chip", pc) end
  if py.per_chip and py.shards > 1 then
    fail(d, "pytest.per_chip", "per_chip splits the tests over the host's chips; leave 'shards' out")
  end
  local rs = rawget(t, "retry_steady")
  if rs ~= nil then py.retry_steady = boolean(d, "pytest.retry_steady", rs) end
  local ff = rawget(t, "failed_first")
  if ff == "always" then
    py.failed_first, py.failed_first_steady = true, true
  elseif ff ~= nil then
    if type(ff) ~= "boolean" then
      fail(d, "pytest.failed_first", 'expected true, false or "always", got ' .. tname(ff))
    end
    py.failed_first = ff
  end
  -- A file's tests stay together by default: tests that lean on the
  -- order of their file (a fixture's leftovers) pass as in serial pytest.
  local by = rawget(t, "shard_by")
  py.shard_by = by ~= nil and enum(d, "pytest.shard_by", by, { "file", "class", "test" }) or "file"
  -- select = "affected": only the tests a change can affect run
  -- (docs/pytest.md, "Only what a change can affect"); select_always:
  -- globs of test files that always run.
  -- select = { mode = "affected", audit = 0.05 } also runs that fraction
  -- of the tests it leaves out, to measure its misses; select_ignore:
  -- globs of files whose changes never matter.
  local sel = rawget(t, "select")
  if type(sel) == "table" then
    check_keys(d, "pytest.select", sel, { "mode", "audit" }, set_of({ "mode", "audit" }))
    local audit = rawget(sel, "audit")
    if audit ~= nil then
      if type(audit) ~= "number" or audit < 0 or audit > 1 then
        fail(d, "pytest.select.audit", "expected a fraction from 0 to 1 (0.05: one test in 20 " ..
             "of those left out), got " .. tostring(audit))
      end
      py.select_audit = audit
    end
    sel = rawget(sel, "mode")
    if sel == nil then fail(d, "pytest.select.mode", 'missing: "affected" or "all"') end
    py.select = enum(d, "pytest.select.mode", sel, { "all", "affected" })
  else
    py.select = sel ~= nil and enum(d, "pytest.select", sel, { "all", "affected" }) or "all"
  end
  for _, key in ipairs({ "select_always", "select_ignore" }) do
    local globs = rawget(t, key)
    if globs ~= nil then
      if type(globs) ~= "table" then
        fail(d, "pytest." .. key,
             'expected a list of globs like { "docs/**" }, got ' .. tname(globs))
      end
      local n = check_list(d, "pytest." .. key, globs, key)
      local list = {}
      for i = 1, n do
        list[i] = nonempty(d, "pytest." .. key .. "[" .. i .. "]", rawget(globs, i), "a glob")
      end
      py[key] = list
    end
  end
  -- setup = { "pip install --no-deps -e ." }: shell commands the
  -- attempt runs before it imports pytest (docs/pytest.md, "The tree
  -- under test"), one a line.
  local setup = rawget(t, "setup")
  if setup ~= nil then
    if type(setup) ~= "table" then
      fail(d, "pytest.setup",
           'expected a list of shell commands like { "pip install --no-deps -e ." }, got ' ..
           tname(setup))
    end
    local n = check_list(d, "pytest.setup", setup, "setup")
    local list = {}
    for i = 1, n do
      local p = "pytest.setup[" .. i .. "]"
      list[i] = nonempty(d, p, rawget(setup, i), "a shell command")
      if list[i]:find("\n", 1, true) then
        fail(d, p, "a command of one line (chain commands with &&, or list them)")
      end
    end
    py.setup = list
  end
  -- new_tests = { runs = N }: a test the history has never seen runs
  -- N times before its pass counts (docs/pytest.md, "New tests"); not
  -- `repeat`, a Lua keyword that a table constructor cannot take bare.
  local nt = rawget(t, "new_tests")
  if nt ~= nil then
    if type(nt) ~= "table" then
      fail(d, "pytest.new_tests", "expected a table like { runs = 5 }, got " .. tname(nt))
    end
    check_keys(d, "pytest.new_tests", nt, NEW_TESTS_KEYS, NEW_TESTS_SET)
    local runs = rawget(nt, "runs")
    if runs == nil then fail(d, "pytest.new_tests.runs", "is required (how many runs in all)") end
    py.new_tests_runs = integer(d, "pytest.new_tests.runs", runs, 2, 50)
  end
  local tt = rawget(t, "test_timeout")
  if tt ~= nil then
    py.test_timeout_ms = duration(d, "pytest.test_timeout", tt)
    if py.test_timeout_ms < 1000 then
      fail(d, "pytest.test_timeout", "must be at least 1s, got '" .. show(tt) .. "'")
    end
  end
  j.cmd, j.pytest = cmd, py
end

-- cache = false: never a cached result (docs/cache.md).
-- inputs = { "src/**", "tests/**" }: only these files (globs relative to
-- the spec's folder) of the job's mounts (of its folder, for a job without
-- an image) count in its results' key.
local function inputs_spec(d, j, t)
  local c = rawget(t, "cache")
  j.cache = true
  if c ~= nil then j.cache = boolean(d, "cache", c) end
  local inputs = rawget(t, "inputs")
  if inputs == nil then return end
  if type(inputs) ~= "table" then
    fail(d, "inputs", 'expected a list of globs like { "src/**", "tests/**" }, got ' ..
         tname(inputs))
  end
  local n = check_list(d, "inputs", inputs, "inputs")
  if n == 0 then
    fail(d, "inputs", 'lists no glob (leave it out to count every file, or write cache = false)')
  end
  local list = {}
  for i = 1, n do
    local p = "inputs[" .. i .. "]"
    local g = nonempty(d, p, rawget(inputs, i), "a glob")
    if ssub(g, 1, 1) == "/" then
      fail(d, p, "'" .. show(g) .. "' is absolute: globs are relative to the spec's folder")
    end
    list[i] = g
  end
  j.inputs = list
  if not j.cache then fail(d, "inputs", "has no use with cache = false") end
end

-- expect_devices = "jax": before the command (or a pytest job's first
-- test) the framework must see the devices of the job's topology, else
-- the attempt is infra (docs/pytest.md, "The device check"). A pytest
-- job checks every framework that imports ("auto") unless it says false;
-- a command job only when it asks.
local DEVICE_CHECKS = { "auto", "jax", "torch_xla" }

local function device_check_spec(d, j, t, pytest)
  local v = rawget(t, "expect_devices")
  if v == nil then
    j.expect_devices = pytest and "auto" or nil
    return
  end
  if v == false then return end
  j.expect_devices = enum(d, "expect_devices", v, DEVICE_CHECKS, "framework")
  if j.topology_name == nil then
    fail(d, "expect_devices", "needs a topology (the devices it checks are the topology's)")
  end
end

local function job_spec(d, t, alias)
  check_keys(d, nil, t, JOB_KEYS, JOB_SET)
  if not alias and rawget(t, "name") ~= nil then
    fail(d, "name", "the name is already given before the table")
  end
  local j = { name = d.name, where = d.where, what = d.what, has_fn = false }

  -- The matrix first: templates refer to its keys (pytest shards add one).
  local mkeys, keys
  local pt = rawget(t, "pytest")
  local m = rawget(t, "matrix")
  if pt ~= nil then m = with_shards(d, m, pytest_check(d, pt)) end
  if m ~= nil then j.matrix, mkeys, keys = matrix_spec(d, m) end

  local run, cmd = rawget(t, "run"), rawget(t, "cmd")
  if pt ~= nil then
    if run ~= nil then fail(d, nil, "'pytest' and 'run' are exclusive") end
    if cmd ~= nil then fail(d, nil, "'pytest' and 'cmd' are exclusive") end
    pytest_spec(d, j, pt, mkeys, keys)
  elseif run == nil and cmd == nil then
    fail(d, nil, "needs 'run', 'cmd' or 'pytest'")
  end
  if run ~= nil and cmd ~= nil then fail(d, nil, "'run' and 'cmd' are exclusive") end
  if pt ~= nil then
    -- j.cmd is set.
  elseif run ~= nil then
    if type(run) == "function" then
      j.run, j.has_fn = run, true
    else
      j.run = template(d, "run", nonempty(d, "run", run,
                                          "a string or a function"), mkeys, keys)
    end
  elseif type(cmd) == "function" then
    j.cmd, j.has_fn = cmd, true
  elseif type(cmd) == "table" then
    j.cmd = cmd_spec(d, "cmd", cmd, mkeys, keys)
  else
    fail(d, "cmd", "expected a list of strings or a function, got " .. tname(cmd))
  end

  local env = rawget(t, "env")
  if type(env) == "function" then
    j.env, j.has_fn = env, true
  elseif type(env) == "table" then
    j.env = env_spec(d, "env", env, mkeys, keys)
  elseif env ~= nil then
    fail(d, "env", "expected a table or a function, got " .. tname(env))
  end

  local workdir = rawget(t, "workdir")
  if type(workdir) == "function" then
    j.workdir, j.has_fn = workdir, true
  elseif workdir ~= nil then
    j.workdir = template(d, "workdir", nonempty(d, "workdir", workdir,
                                                "a string or a function"), mkeys, keys)
  end

  j.timeout_ms = timeout_key(d, t, "timeout")
  -- No output (on any host) for this long ends the attempt as a timeout.
  j.idle_timeout_ms = timeout_key(d, t, "idle_timeout")
  -- A gang's hosts must all be up (their names resolving) within this;
  -- 0: no start barrier at all.
  j.start_timeout_ms = rawget(t, "start_timeout") == nil and 180000
                       or timeout_key(d, t, "start_timeout")
  local grace = rawget(t, "grace")
  j.grace_ms = 5000
  if grace ~= nil then
    j.grace_ms = duration(d, "grace", grace)
    if j.grace_ms == 0 then fail(d, "grace", "must be more than 0") end
  end
  retries_spec(d, j, rawget(t, "retries"))
  if j.rerun_unfinished and rawget(t, "pytest") == nil then
    fail(d, "retries.rerun", "only a pytest job runs tests again (a command job's retry runs its command)")
  end

  local runtime = rawget(t, "runtime")
  if runtime ~= nil then j.runtime = enum(d, "runtime", runtime, RUNTIMES, "runtime") end
  local image = rawget(t, "image")
  if image ~= nil then j.image_name = nonempty(d, "image", image) end
  local topology = rawget(t, "topology")
  if topology ~= nil then j.topology_name = nonempty(d, "topology", topology) end
  local hosts = rawget(t, "hosts")
  if hosts ~= nil then
    j.hosts_name = nonempty(d, "hosts", hosts)
    if j.runtime ~= nil and j.runtime ~= "ssh" then
      fail(d, "hosts", "runs over SSH: it needs runtime 'ssh' (or no runtime), got '" ..
           j.runtime .. "'")
    end
    j.runtime = "ssh"
  elseif j.runtime == "ssh" then
    fail(d, "runtime", "'ssh' needs the hosts to run on (add hosts = \"slice\", " ..
         'declared with hosts "slice" { "root@10.0.0.2", ... })')
  end

  local mounts = rawget(t, "mounts")
  j.mounts = mounts ~= nil and mounts_spec(d, mounts) or {}
  local cpus = rawget(t, "cpus")
  j.cpus = 0.0
  if cpus ~= nil then
    if type(cpus) ~= "number" then
      fail(d, "cpus", "expected a number, got " .. tname(cpus))
    end
    if not finite(cpus) or cpus <= 0 or cpus > 4096 then
      fail(d, "cpus", "must be a positive number of CPUs, got " .. tostring(cpus))
    end
    j.cpus = cpus + 0.0
  end
  local memory = rawget(t, "memory")
  j.memory = memory ~= nil and size(d, "memory", memory) or 0
  local network = rawget(t, "network")
  if network ~= nil then
    j.network = nonempty(d, "network", network)
    if sfind(network, "[%s%c]") then
      fail(d, "network", "must not contain spaces, got '" .. show(network) .. "'")
    end
  end
  j.container = container_spec(d, t, j)
  inputs_spec(d, j, t)
  device_check_spec(d, j, t, pt ~= nil)
  return j
end

local SPECS = { job = job_spec, image = image_spec, topology = topology_spec,
                hosts = hosts_spec }
local NAMES = { job = JOB_NAME, image = NAME, topology = "^[%w_%.%-]+$",
                hosts = "^[%w_%.%-]+$" }

-- Registers `name` for `kind` at `where`; returns the declaration.
local function open(kind, name, where, alias)
  local d = { kind = kind, where = where, what = kind, pending = true }
  if alias then
    if name == nil then
      fail(d, nil, "missing 'name' (write " .. kind .. ' "name" { ... } or ' ..
           kind .. ' { name = "name", ... })')
    end
    if type(name) ~= "string" then
      fail(d, "name", "expected a string, got " .. tname(name))
    end
  elseif type(name) ~= "string" then
    fail(d, nil, "expected a name or a table, got " .. tname(name) ..
         " (write " .. kind .. ' "name" { ... })')
  end
  if name == "" then fail(d, nil, "the name must not be empty") end
  d.name, d.what = name, kind .. " '" .. show(name) .. "'"
  local problem = H.text(name)
  if problem then
    fail(d, nil, "the name " .. (sfind(problem, "^not") and "is " or "") .. problem)
  end
  if not smatch(name, NAMES[kind]) then
    fail(d, nil, "the name may only contain letters, digits and " ..
         (kind == "job" and "'_', '.', '-', '/', ':', '+', '@'"
          or kind == "image" and "'_', '.', '-', '+', '@'"
          or "'_', '.', '-'"))
  end
  local prev = by_kind[kind][name]
  if prev then
    error(where .. ": " .. d.what .. " already declared at " .. prev.where, 0)
  end
  by_kind[kind][name] = d
  decls[#decls + 1] = d
  return d
end

local function close(d, t, alias)
  if not d.pending then fail(d, nil, "already has its table") end
  if type(t) ~= "table" then
    fail(d, nil, "expected a table after the name, got " .. tname(t))
  end
  d.spec = SPECS[d.kind](d, t, alias)
  d.pending = false
  local l = lists[d.kind]
  l[#l + 1] = d
end

local sealed = false      -- set once the spec has run

local function declarer(kind)
  return function(arg, extra)
    local where = H.where()
    if sealed then
      error(where .. ": " .. kind .. ": declarations are only allowed while " ..
            "the spec runs, not from a job's function", 0)
    end
    if extra ~= nil then
      local d = { where = where, what = kind }
      fail(d, nil, "takes one argument (write " .. kind .. ' "name" { ... })')
    end
    if type(arg) == "table" then
      close(open(kind, rawget(arg, "name"), where, true), arg, true)
      return
    end
    local d = open(kind, arg, where, false)
    return function(t, more)
      if more ~= nil then fail(d, nil, "takes one table") end
      close(d, t, false)
    end
  end
end

image = declarer("image")
topology = declarer("topology")
job = declarer("job")
hosts = declarer("hosts")

tpuci = {
  env = H.env,
  read_file = H.read_file,
  yaml = H.yaml,
  spec_dir = H.spec_dir,
  version = H.version,
}

------------------------------------------------------------------------
-- After the spec

local function finish()
  sealed = true
  for i = 1, #decls do
    local d = decls[i]
    if d.pending then
      fail(d, nil, "the name must be followed by a table (write " .. d.kind ..
           ' "' .. d.name .. '" { ... })')
    end
  end

  local images, image_index, by_ref, image_names = {}, {}, {}, {}
  for i, d in ipairs(lists.image) do
    images[i] = d.spec
    image_index[d.name] = i - 1
    image_names[i] = d.name
    if by_ref[d.spec.ref] == nil then by_ref[d.spec.ref] = i - 1 end
  end
  tsort(image_names)
  local topologies, topo_index, topo_names = {}, {}, {}
  for i, d in ipairs(lists.topology) do
    topologies[i] = d.spec
    topo_index[d.name] = i - 1
    topo_names[i] = d.name
  end
  tsort(topo_names)
  local hostsets, hosts_index, hosts_names = {}, {}, {}
  for i, d in ipairs(lists.hosts) do
    hostsets[i] = d.spec
    hosts_index[d.name] = i - 1
    hosts_names[i] = d.name
  end
  tsort(hosts_names)

  local jobs = {}
  for i, d in ipairs(lists.job) do
    local j = d.spec
    j.image, j.topology = -1, -1
    local name = j.image_name
    if name ~= nil then
      if image_index[name] then
        j.image = image_index[name]
      elseif sfind(name, "[:/]") then
        -- A literal ref: an implicit image, shared by every job using it.
        if by_ref[name] == nil then
          images[#images + 1] = { name = name, ref = name, pull = "missing",
                                  where = d.where }
          by_ref[name] = #images - 1
        end
        j.image = by_ref[name]
      else
        local s = suggest(name, image_names)
        fail(d, nil, "image '" .. show(name) .. "' is not declared" ..
             (s and (" (did you mean '" .. s .. "'?)")
              or (' (declare it with image "' .. show(name) ..
                  '" { ref = ... } or give a ref such as \'python:3.11\')')))
      end
    end
    name = j.topology_name
    if name ~= nil then
      if topo_index[name] == nil then
        local known, close = H.tpu_type(name)
        if not known then
          local s = suggest(name, topo_names) or close
          fail(d, nil, "topology '" .. show(name) .. "' is neither declared " ..
               "nor a TPU type" ..
               (s and (" (did you mean '" .. s .. "'?)")
                or (' (declare it with topology "' .. show(name) .. '" { ... }, ' ..
                    "or name a type that `tpuci topologies` lists)")))
        end
        -- A catalogue type named directly: an implicit declaration with
        -- the defaults, shared by every job naming it, as a literal
        -- image ref is.
        topologies[#topologies + 1] = { name = name, where = d.where }
        topo_index[name] = #topologies - 1
      end
      j.topology = topo_index[name]
    end
    j.hosts = -1
    name = j.hosts_name
    if name ~= nil then
      if hosts_index[name] == nil then
        local s = suggest(name, hosts_names)
        fail(d, nil, "hosts '" .. show(name) .. "' is not declared" ..
             (s and (" (did you mean '" .. s .. "'?)")
              or (' (declare it with hosts "' .. show(name) .. '" { "root@10.0.0.2", ... })')))
      end
      j.hosts = hosts_index[name]
    end
    if j.runtime == nil then
      j.runtime = j.image >= 0 and "docker" or "local"
    elseif j.runtime ~= "local" and j.runtime ~= "ssh" and j.image < 0 then
      fail(d, "runtime", "'" .. j.runtime .. "' needs an image (add image = ...)")
    end
    if j.runtime == "ssh" and j.image >= 0 then
      -- A container on each worker, on the worker's network (docs/ssh.md).
      if j.network then
        warn(d, nil, "network: ignored by runtime 'ssh': a job's containers on the " ..
             "workers use the worker's own network (--network host)")
        j.network = nil
      end
    elseif j.runtime == "local" or j.runtime == "ssh" then
      local ignored = {}
      if j.image >= 0 then ignored[#ignored + 1] = "image" end
      if #j.mounts > 0 then ignored[#ignored + 1] = "mounts" end
      if j.cpus > 0 then ignored[#ignored + 1] = "cpus" end
      if j.memory > 0 then ignored[#ignored + 1] = "memory" end
      if j.network then ignored[#ignored + 1] = "network" end
      if j.container then
        for k = 1, #j.container.given do ignored[#ignored + 1] = j.container.given[k] end
        j.container = nil
      end
      if #ignored > 0 then
        warn(d, nil, tconcat(ignored, ", ") .. ": ignored by runtime '" .. j.runtime ..
             "'" .. (j.runtime == "ssh" and " without an image" or ""))
      end
      j.image = -1
    end
    jobs[i] = j
  end
  return { images = images, topologies = topologies, hostsets = hostsets, jobs = jobs }
end

-- Calls j[field](inst) and checks the result like the static form, except
-- that strings are taken literally (no "${matrix.x}" or "$$").
local function eval(j, field, inst, name)
  local v = j[field](inst)
  local d = { where = j.where, what = j.what .. ", instance '" .. name .. "'" }
  local function bad(expected)
    fail(d, field, "the function returned " .. tname(v) .. ", expected " .. expected)
  end
  if field == "run" or field == "workdir" then
    if type(v) ~= "string" then bad("a string") end
    if v == "" then fail(d, field, "the function returned an empty string") end
    return text(d, field, v)
  elseif field == "cmd" then
    if type(v) ~= "table" then bad("a list of strings") end
    return cmd_spec(d, "cmd", v, nil, nil, true)
  elseif field == "env" then
    if type(v) ~= "table" then bad("a table") end
    return env_spec(d, "env", v, nil, nil, true)
  end
  error("tpuci: eval of unknown field " .. tostring(field), 0)
end

return { finish = finish, eval = eval }
