"""Pod-group lookups shared by the workload-aware plugins (upstream ``plugins/helper/podgroup.go``).

The plugins read pod groups through ``handle.pod_group_manager`` (a
:class:`~kubesched.framework.podgroup.PodGroupManager`, None when GenericWorkload is off), the
counterpart of upstream's ``SnapshotSharedLister().PodGroupStates()`` /
``CompositePodGroupStates()``. A missing state is an error with upstream's text
(``backend/cache/snapshot.go`` L496-521, v1.37.2).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from kubesched.framework.podgroup import COMPOSITE_POD_GROUP_KEY_TYPE, POD_GROUP_KEY_TYPE

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.framework.podgroup import PodGroupInfo, PodGroupState

__all__ = ["WORKLOAD_MAX_TREE_DEPTH", "PodGroupLookupError", "pod_group_states", "topology_key"]

WORKLOAD_MAX_TREE_DEPTH = 4
"""Upstream ``schedulingapi.WorkloadMaxTreeDepth``: the deepest CompositePodGroup hierarchy."""


class PodGroupLookupError(LookupError):
    """A pod group (or composite pod group) state the plugin needs is not known; ``str`` is upstream's text."""


def _pod_group_state(manager: Any, namespace: str, name: str) -> PodGroupState:
    state = manager.pod_group_state(namespace, name) if manager is not None else None
    if state is None:
        raise PodGroupLookupError(f"pod group state not found for pod group {namespace}/{name}")
    return state


def _children(manager: Any, namespace: str, name: str) -> list[str]:
    """The child entity keys (``type/namespace/name``) of a CompositePodGroup, from the manager's
    optional ``composite_pod_group_state(ns, name)`` (an object with ``children()``)."""
    getter = getattr(manager, "composite_pod_group_state", None)
    state = getter(namespace, name) if callable(getter) else None
    if state is None:
        raise PodGroupLookupError(f"composite pod group state not found for pod group {namespace}/{name}")
    return list(state.children())


def pod_group_states(manager: Any, pg_info: PodGroupInfo, composite_enabled: bool) -> Iterator[PodGroupState]:
    """The :class:`PodGroupState` s below ``pg_info`` (upstream ``helper.GetPodGroupStates``, podgroup.go
    L39-66, when ``composite_enabled``; else just the group's own state, as the plugins do with
    CompositePodGroup off). A CompositePodGroup is walked depth-first over the children its state
    lists; deeper than :data:`WORKLOAD_MAX_TREE_DEPTH` levels is an error ("exceeded maximum hierarchy
    depth at <key>"). Raises :class:`PodGroupLookupError` for a missing state."""
    if not composite_enabled:
        yield _pod_group_state(manager, pg_info.namespace, pg_info.name)
        return

    def walk(key_type: str, namespace: str, name: str, depth: int) -> Iterator[PodGroupState]:
        if depth >= WORKLOAD_MAX_TREE_DEPTH:
            raise PodGroupLookupError(f"exceeded maximum hierarchy depth at {key_type}/{namespace}/{name}")
        if key_type == COMPOSITE_POD_GROUP_KEY_TYPE:
            for child in _children(manager, namespace, name):
                ctype, cns, cname = child.split("/", 2)
                yield from walk(ctype, cns, cname, depth + 1)
            return
        yield _pod_group_state(manager, namespace, name)

    yield from walk(pg_info.type or POD_GROUP_KEY_TYPE, pg_info.namespace, pg_info.name, 0)


def _first_topology_key(obj: Mapping[str, Any] | None) -> str | None:
    spec = (obj or {}).get("spec")
    cons = spec.get("schedulingConstraints") if isinstance(spec, Mapping) else None
    topo = cons.get("topology") if isinstance(cons, Mapping) else None
    if not topo:
        return None
    first = topo[0]
    key = first.get("key") if isinstance(first, Mapping) else None
    return key if isinstance(key, str) else ""


def topology_key(pg_info: PodGroupInfo) -> str | None:
    """The group's topology key (upstream ``TopologyPlacement.getTopologyKey``, topology_placement.go
    L124-140): ``spec.schedulingConstraints.topology[0].key`` of the PodGroup, or — when there is no
    PodGroup object — of the CompositePodGroup; None without a constraint. (The API allows at most one.)"""
    if pg_info.pod_group is not None:
        return _first_topology_key(pg_info.pod_group)
    if pg_info.composite_pod_group is not None:
        return _first_topology_key(pg_info.composite_pod_group)
    return None
