"""kubesched.cache — the cluster cache (nodes + assigned/assumed pods) over the NodeTable."""

from kubesched.cache.cache import Cache, PodState

__all__ = ["Cache", "PodState"]
