-- expect: hosts 'slice': [1]: the port must be 1..65535, got '10.0.0.2:70000'
hosts "slice" { "10.0.0.2:70000" }
