-- expect: 27-os-execute.lua:2: attempt to index a nil value (global 'os')
os.execute("rm -rf /tmp/x")
