"""kubesched.cache — the cluster cache (nodes + assigned/assumed pods) over the NodeTable, and the
per-PodGroup member state (GenericWorkload)."""

from kubesched.cache.cache import Cache, PodState
from kubesched.cache.podgroups import PodGroupManagerImpl, PodGroupStateImpl

__all__ = ["Cache", "PodGroupManagerImpl", "PodGroupStateImpl", "PodState"]
