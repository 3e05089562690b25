#!/usr/bin/env bash
# lua/tpuci.d.lua, the LuaLS annotations of the DSL, against the prelude
# that defines it (lua/prelude.lua): every key list (JOB_KEYS, PYTEST_KEYS,
# RETRY_KEYS, MOUNT_KEYS, ULIMIT_KEYS, GPUS_KEYS, IMAGE_KEYS,
# TOPOLOGY_KEYS, HOSTS_KEYS) matches the fields of its classes, both ways; the enums
# (PULL, EMULATE, RUNTIMES, RETRYABLE, IPC) match their aliases; the `tpuci` table's helpers are all annotated; the
# file is valid Lua that defines only stubs; and it is not compiled into
# the binary.
. "$TESTS/e2e/lib.sh"
src=$(cd "$TESTS/.." && pwd)
meta="$src/lua/tpuci.d.lua"
prelude="$src/lua/prelude.lua"

# check PRELUDE META: prints one line per mismatch.
check() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import re, sys
prelude = open(sys.argv[1]).read()
meta = open(sys.argv[2]).read()

def lua_list(name):
    m = re.search(r"^local %s = \{(.*?)\}" % name, prelude, re.S | re.M)
    if not m:
        print("prelude: no list %s (renamed? update tests/docs/luals.sh)" % name)
        return []
    return re.findall(r'"([^"]*)"', m.group(1))

# ---@class NAME[: PARENT] followed by its ---@field lines.
classes, parents, cur = {}, {}, None
for line in meta.splitlines():
    m = re.match(r"---@class\s+(?:\(exact\)\s+)?([\w.]+)(?:\s*:\s*([\w.]+))?", line)
    if m:
        cur = m.group(1)
        classes[cur] = set()
        parents[cur] = m.group(2)
        continue
    m = re.match(r"---@field\s+([A-Za-z_]\w*)\??\s", line)
    if m and cur:
        classes[cur].add(m.group(1))
    elif not line.startswith("---"):
        cur = None

# ---@alias NAME followed by ---| "value" lines.
aliases, cur = {}, None
for line in meta.splitlines():
    m = re.match(r"---@alias\s+([\w.]+)\s*$", line)
    if m:
        cur = m.group(1)
        aliases[cur] = []
        continue
    m = re.match(r'---\|\s*"([^"]*)"', line)
    if m and cur:
        aliases[cur].append(m.group(1))
    elif not line.startswith("---|"):
        cur = None

# LuaLS reports a key a table literal has but its class does not declare
# only for classes marked (exact): every class a spec table is typed with
# must be.
for line in meta.splitlines():
    m = re.match(r"---@class\s+(\(exact\)\s+)?(tpuci\.\w*Spec)\b", line)
    if m and not m.group(1):
        print("tpuci.d.lua: %s is not (exact): LuaLS would not flag a misspelt key" % m.group(2))

def fields(cls):
    if cls not in classes:
        print("tpuci.d.lua: no ---@class %s" % cls)
        return set()
    return classes[cls]

# key list -> (class for `kind "name" {...}`, class for `kind {name=...}`)
pairs = {
    "JOB_KEYS": ("tpuci.JobSpec", "tpuci.NamedJobSpec"),
    "IMAGE_KEYS": ("tpuci.ImageSpec", "tpuci.NamedImageSpec"),
    "TOPOLOGY_KEYS": ("tpuci.TopologySpec", "tpuci.NamedTopologySpec"),
    "HOSTS_KEYS": ("tpuci.HostsSpec", "tpuci.NamedHostsSpec"),
    "PYTEST_KEYS": ("tpuci.PytestSpec", None),
    "RETRY_KEYS": ("tpuci.RetrySpec", None),
    "MOUNT_KEYS": ("tpuci.MountSpec", None),
    "ULIMIT_KEYS": ("tpuci.UlimitSpec", None),
    "GPUS_KEYS": ("tpuci.GpusSpec", None),
}
for name, (cls, named) in pairs.items():
    keys = set(lua_list(name))
    have = set(fields(cls))
    if named:
        if parents.get(named) != cls:
            print("tpuci.d.lua: %s should extend %s" % (named, cls))
        have |= fields(named)
        if "name" in fields(cls):
            print("tpuci.d.lua: %s has 'name', which only %s takes" % (cls, named))
    for k in sorted(keys - have):
        print("%s: '%s' is not annotated (add ---@field %s to %s)" % (name, k, k, cls))
    for k in sorted(have - keys):
        print("%s: '%s' is annotated in %s but the prelude does not accept it" % (name, k, cls))

enums = {"PULL": "tpuci.Pull", "EMULATE": "tpuci.Emulate",
         "RUNTIMES": "tpuci.Runtime", "RETRYABLE": "tpuci.RetryOutcome",
         "IPC": "tpuci.Ipc"}
for name, alias in enums.items():
    want = lua_list(name)
    got = aliases.get(alias)
    if got is None:
        print("tpuci.d.lua: no ---@alias %s" % alias)
    elif sorted(got) != sorted(want):
        print("%s: %s has %s, the prelude %s" % (name, alias, got, want))

# The `tpuci` table the prelude installs.
m = re.search(r"^tpuci = \{(.*?)^\}", prelude, re.S | re.M)
helpers = re.findall(r"^\s*(\w+)\s*=", m.group(1), re.M) if m else []
if not helpers:
    print("prelude: no `tpuci = { ... }` table")
documented = set(fields("tpuci.Helpers")) | set(re.findall(r"^function tpuci\.(\w+)\(", meta, re.M))
for h in helpers:
    if h not in documented:
        print("tpuci.%s is not annotated (add function tpuci.%s or a ---@field)" % (h, h))
for h in sorted(documented - set(helpers)):
    print("tpuci.%s is annotated but the prelude has no such helper" % h)

# The declarations, both forms.
for kind, cls in (("job", "Job"), ("image", "Image"), ("topology", "Topology")):
    m = re.search(r"((?:^---.*\n)+)^function %s\(name\) end" % kind, meta, re.M)
    if not m:
        print("tpuci.d.lua: no function %s(name)" % kind)
        continue
    doc = m.group(1)
    if "---@return fun(spec: tpuci.%sSpec)" % cls not in doc:
        print("%s: the form %s \"name\" { } is not annotated" % (kind, kind))
    if "---@overload fun(spec: tpuci.Named%sSpec)" % cls not in doc:
        print("%s: the form %s { name = ... } is not annotated" % (kind, kind))
PY
}

report=$(check "$prelude" "$meta")
[ -z "$report" ] && pass || fail "lua/tpuci.d.lua is behind lua/prelude.lua:
$report"

# The check catches drift: a key the prelude gains, a field it loses, an
# enum value, a helper.
sed 's/^local JOB_KEYS = { "name",/local JOB_KEYS = { "name", "priority",/' "$prelude" > prelude-more.lua
out=$(check prelude-more.lua "$meta")
expect_out "JOB_KEYS: 'priority' is not annotated" "a new job key"
grep -v '^---@field readonly' "$meta" > meta-less.lua
out=$(check "$prelude" meta-less.lua)
expect_out "MOUNT_KEYS: 'readonly' is not annotated" "a lost mount field"
sed 's/^local PULL = { "missing", "always", "never" }/local PULL = { "missing", "always", "never", "daily" }/' "$prelude" > prelude-pull.lua
out=$(check prelude-pull.lua "$meta")
expect_out "PULL: tpuci.Pull has" "a new pull value"
sed 's/^  yaml = H.yaml,/  yaml = H.yaml,\n  json = H.json,/' "$prelude" > prelude-json.lua
out=$(check prelude-json.lua "$meta")
expect_out "tpuci.json is not annotated" "a new helper"

# Valid Lua that only defines stubs: tpuci's own sandbox compiles it and
# runs it in an empty environment, and a spec using every annotated key
# loads.
cp "$meta" tpuci.d.lua
cat > spec.lua <<'EOF'
local text = tpuci.read_file("tpuci.d.lua")
local chunk = assert(load(text, "=tpuci.d.lua", "t", { tpuci = {} }))
chunk()
local env = { tpuci = {} }
assert(load(text, "=tpuci.d.lua", "t", env))()
assert(type(env.job) == "function" and type(env.image) == "function" and
       type(env.topology) == "function" and type(env.tpuci.yaml) == "function")
assert(env.job("x") == nil, "stubs return nothing")
job "ok" { run = "true" }
EOF
run_tpuci plan spec.lua
expect_code 0 "the annotations file as Lua"

# Not embedded: the generated prelude source holds the prelude only.
if [ -n "${TPUCI_BUILD:-}" ] && [ -f "$TPUCI_BUILD/lua_prelude.c" ]; then
  n=$(grep -c '^const char tpuci__lua_' "$TPUCI_BUILD/lua_prelude.c")
  grep -q '^const char tpuci__lua_prelude\[\]' "$TPUCI_BUILD/lua_prelude.c" && [ "$n" = 1 ] && pass ||
    fail "lua_prelude.c embeds more than lua/prelude.lua ($n files)"
fi
finish
