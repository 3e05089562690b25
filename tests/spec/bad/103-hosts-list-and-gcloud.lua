-- expect: hosts 'slice': gcloud: give either the hosts or a gcloud file, not both
hosts "slice" { "10.0.0.2", gcloud = "tpu.json" }
