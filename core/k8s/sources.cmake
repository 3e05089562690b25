# The Kubernetes export (`tpuci export kubernetes`, docs/kubernetes.md).
set(tpuci_k8s_sources
  core/k8s/names.c
  core/k8s/gke.c
  core/k8s/export.c)
