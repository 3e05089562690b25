-- expect: hosts 'slice' already declared at 107-hosts-duplicate.lua:3

hosts "slice" { "a" }
hosts "slice" { "b" }
