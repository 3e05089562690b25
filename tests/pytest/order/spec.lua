-- tests/pytest/order.sh: order dependence, with /usr/bin/python3
-- (python3-pytest); local jobs see the caller's ORDER_FAIL_ONCE.
local function j(name)
  job(name) {
    pytest = { python = "/usr/bin/python3", args = { "t" } },
    workdir = tpuci.spec_dir .. "/" .. name,
    retries = { attempts = 2 },
  }
end
j("pair")
j("victim")
j("brittle")
