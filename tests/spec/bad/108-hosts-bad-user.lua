-- expect: hosts 'slice': [1]: the user must be letters, digits
hosts "slice" { "-oProxyCommand=x@h" }
