-- expect: hosts 'slice': user: only with gcloud = ...; write the user in each host
hosts "slice" { "10.0.0.2", user = "me" }
