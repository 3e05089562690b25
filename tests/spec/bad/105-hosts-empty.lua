-- expect: hosts 'slice': needs hosts or a gcloud file
hosts "slice" { ssh_config = "c" }
