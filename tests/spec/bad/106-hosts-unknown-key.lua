-- expect: hosts 'slice': ssh_cofig: unknown key, did you mean 'ssh_config'?
hosts "slice" { "a", ssh_cofig = "c" }
