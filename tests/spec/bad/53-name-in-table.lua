-- expect: 53-name-in-table.lua:2: job 'x': name: the name is already given before the table
job "x" { name = "y", run = "true" }
