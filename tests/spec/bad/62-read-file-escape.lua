-- expect: 62-read-file-escape.lua:2: tpuci.read_file: '../../../etc/passwd' leaves the spec's folder
local users = tpuci.read_file("../../../etc/passwd")
