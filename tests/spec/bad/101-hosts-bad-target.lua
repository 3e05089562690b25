-- expect: hosts 'slice': [2]: expected [user@]host[:port], got 'root@'
hosts "slice" { "root@10.0.0.2", "root@" }
