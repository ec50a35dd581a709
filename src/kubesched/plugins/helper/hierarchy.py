"""CompositePodGroup hierarchies as GangScheduling reads them (upstream v1.37.2
``pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go``: ``areSameHierarchy``
L178-205, ``isCPGTreeReady`` L311-340, ``isPGReady`` L342-356, ``activateUnscheduledPodsInHierarchy``
L445-462, ``allowAssumedPodsInHierarchy`` L464-486, ``getMinCount`` L510-521).

``manager`` is the scheduler's pod-group manager
(:class:`~kubesched.cache.podgroups.PodGroupManagerImpl`, duck-typed): ``pod_group``,
``pod_group_state``, ``composite_pod_group``, ``composite_pod_group_state`` (with ``children()``,
entity keys ``type/namespace/name``) and ``root_key_for_group``. Upstream reads a hierarchy
snapshot; the manager doubles as one here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kubesched.framework.podgroup import (
    COMPOSITE_POD_GROUP_KEY_TYPE,
    POD_GROUP_KEY_TYPE,
    PodGroupInfo,
    PodGroupState,
    entity_key,
    pod_group_min_count,
)

__all__ = ["composite_min_group_count", "leaf_states", "min_count", "pg_ready", "same_hierarchy", "tree_ready"]


def composite_min_group_count(cpg: Mapping[str, Any] | None) -> int | None:
    """A CompositePodGroup's ``spec.schedulingPolicy.gang.minGroupCount``; None for Basic."""
    spec = (cpg or {}).get("spec")
    policy = spec.get("schedulingPolicy") if isinstance(spec, Mapping) else None
    gang = policy.get("gang") if isinstance(policy, Mapping) else None
    value = gang.get("minGroupCount") if isinstance(gang, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def min_count(pg_info: PodGroupInfo) -> int:
    """Upstream ``getMinCount``: a CompositePodGroup's ``minGroupCount``, a PodGroup's ``minCount``;
    1 for a Basic policy."""
    if pg_info.type == COMPOSITE_POD_GROUP_KEY_TYPE:
        m = composite_min_group_count(pg_info.composite_pod_group)
    else:
        m = pod_group_min_count(pg_info.pod_group)
    return 1 if m is None else m


def pg_ready(manager: Any, namespace: str, name: str, count: Callable[[PodGroupState], int]) -> bool:
    """Upstream ``isPGReady``: ``count(state) ≥ minCount`` (Basic: 1); False for an unobserved group."""
    pg = manager.pod_group(namespace, name)
    state = manager.pod_group_state(namespace, name)
    if pg is None or state is None:
        return False
    m = pod_group_min_count(pg)
    return count(state) >= (1 if m is None else m)


def tree_ready(manager: Any, namespace: str, name: str, count: Callable[[PodGroupState], int]) -> bool:
    """Upstream ``isCPGTreeReady``: at least ``minGroupCount`` (Basic: 1) children ready, a child
    CompositePodGroup by this rule recursively, a child PodGroup by :func:`pg_ready`."""
    state = manager.composite_pod_group_state(namespace, name)
    cpg = manager.composite_pod_group(namespace, name)
    if state is None or cpg is None:
        return False
    m = composite_min_group_count(cpg)
    ready = 0
    for child in state.children():
        key_type, _, child_name = child.split("/", 2)
        if key_type == COMPOSITE_POD_GROUP_KEY_TYPE:
            ready += tree_ready(manager, namespace, child_name, count)
        else:
            ready += pg_ready(manager, namespace, child_name, count)
    return ready >= (1 if m is None else m)


def leaf_states(manager: Any, namespace: str, name: str) -> Iterator[PodGroupState]:
    """The states of the PodGroups below CompositePodGroup ``name`` (depth first, children in the
    state's order); unknown groups are skipped, as upstream."""
    state = manager.composite_pod_group_state(namespace, name)
    if state is None:
        return
    for child in state.children():
        key_type, _, child_name = child.split("/", 2)
        if key_type == COMPOSITE_POD_GROUP_KEY_TYPE:
            yield from leaf_states(manager, namespace, child_name)
            continue
        pg_state = manager.pod_group_state(namespace, child_name)
        if pg_state is not None:
            yield pg_state


def same_hierarchy(manager: Any, composite_enabled: bool, namespace: str, pod_group_name: str,
                   target_key: str) -> bool:
    """Upstream ``areSameHierarchy``: without CompositePodGroup, the pod's own PodGroup key equals
    ``target_key``; with it, both have the same (observed) root. A cycle counts as not the same
    (upstream logs the error)."""
    key = entity_key(POD_GROUP_KEY_TYPE, namespace, pod_group_name)
    if not composite_enabled:
        return key == target_key
    try:
        root1 = manager.root_key_for_group(key)
        if root1 is None:
            return False
        root2 = manager.root_key_for_group(target_key)
    except ValueError:
        return False
    return root2 is not None and root1 == root2
