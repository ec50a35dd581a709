"""kubesched.apiserver: a Kubernetes-compatible API server in the box (see docs and DESIGN.md)."""
