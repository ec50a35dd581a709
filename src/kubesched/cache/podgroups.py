"""Per-PodGroup member state and the observed PodGroup objects (upstream
``pkg/scheduler/backend/cache/podgroupstate.go`` v1.37.2 and the pod-group parts of
``backend/cache/cache.go``: ``AddPodGroupMember`` L879, ``UpdatePodGroupMember`` L890,
``RemovePodGroupMember`` L901, ``AddPodGroup``/``UpdatePodGroup``/``RemovePodGroup``).

A group's state is kept from pod events, so it exists before its PodGroup object: every known
member (``all``), and which of them are unscheduled, assumed or assigned. Members are identified
as the waiting-pods map identifies them (UID, ``namespace/name`` without one: see
:func:`~kubesched.framework.waiting_pods.waiting_pod_key`), so GangScheduling can look an assumed
member up with ``Handle.get_waiting_pod``. Only used with GenericWorkload on (the scheduler
builds a :class:`PodGroupManagerImpl` then, and the cache feeds it).

With CompositePodGroup (alpha) on, the manager also keeps the hierarchy as upstream's cache does
(``compositePodGroupStates``, cache.go ``AddPodGroup`` L1144-1157, ``RemovePodGroup`` L1194-1203,
``Add/Update/RemoveCompositePodGroup`` L1211-1290; snapshot.go ``GetRootKeyForGroup`` L935-975):
a :class:`CompositePodGroupStateImpl` per CompositePodGroup, made as a placeholder by the first
child (PodGroup or CompositePodGroup) naming it in ``parentCompositePodGroupName`` and dropped
when it has neither object nor children. Its children are entity keys (``type/namespace/name``).

Upstream snapshots the cache's states once per cycle and the pod-group cycle assumes members in
the snapshot only; here the cache doubles as the snapshot (as the NodeTable does), so the
cycle's simulated assumptions go through :meth:`PodGroupManagerImpl.assume_pod` /
:meth:`~PodGroupManagerImpl.forget_pod` and are reverted LIFO before anything else reads them.
"""

from __future__ import annotations

from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.podgroup import (
    COMPOSITE_POD_GROUP_KEY_TYPE,
    POD_GROUP_KEY_TYPE,
    entity_key,
    pod_group_name_of,
)
from kubesched.framework.waiting_pods import waiting_pod_key

WORKLOAD_MAX_TREE_DEPTH = 4
"""Upstream ``schedulingv1alpha3.WorkloadMaxTreeDepth``."""

__all__ = ["WORKLOAD_MAX_TREE_DEPTH", "CompositePodGroupStateImpl", "HierarchyCycleError", "PodGroupManagerImpl",
           "PodGroupStateImpl"]


class HierarchyCycleError(ValueError):
    """Upstream ``GetRootKeyForGroup``'s "cycle detected in the hierarchy: [keys]"."""


def _parent_of(obj: dict[str, Any] | None) -> str | None:
    spec = (obj or {}).get("spec")
    parent = spec.get("parentCompositePodGroupName") if isinstance(spec, dict) else None
    return parent if isinstance(parent, str) else None


def _meta_key(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class CompositePodGroupStateImpl:
    """Upstream ``compositePodGroupStateData`` (podgroupstate.go L218-290): the observed
    CompositePodGroup object (None for a placeholder) and its children's entity keys."""

    __slots__ = ("_children", "composite_pod_group")

    def __init__(self) -> None:
        self.composite_pod_group: dict[str, Any] | None = None
        self._children: set[str] = set()

    def add_child(self, key: str) -> None:
        self._children.add(key)

    def remove_child(self, key: str) -> None:
        self._children.discard(key)

    def children(self) -> list[str]:
        """Upstream ``GetChildren``: the child entity keys — sorted here (upstream ranges over a set)."""
        return sorted(self._children)

    def empty(self) -> bool:
        return self.composite_pod_group is None and not self._children


def _ns_name(pod: Pod) -> str:
    return f"{pod.metadata.namespace or ''}/{pod.metadata.name}"


class PodGroupStateImpl:
    """Upstream ``podGroupStateData``: one group's members. Implements
    :class:`~kubesched.framework.podgroup.PodGroupState`."""

    __slots__ = ("_all", "_assigned", "_assumed", "_unscheduled", "pod_group")

    def __init__(self) -> None:
        self._all: dict[str, Pod] = {}
        self._unscheduled: dict[str, str] = {}
        """uid → ``namespace/name`` (the key :meth:`unscheduled_pods` gives)."""
        self._assumed: dict[str, Pod] = {}
        self._assigned: dict[str, None] = {}
        self.pod_group: dict[str, Any] | None = None
        """The PodGroup object as last observed (raw), or None before it is seen."""

    # upstream podGroupStateData.addPod (podgroupstate.go L74-88)
    def add_pod(self, pod: Pod) -> None:
        uid = waiting_pod_key(pod)
        self._all[uid] = pod
        if pod.spec.node_name:
            self._assigned[uid] = None
            self._unscheduled.pop(uid, None)
            self._assumed.pop(uid, None)
        else:
            self._unscheduled[uid] = _ns_name(pod)

    # upstream updatePod (L90-100): binding moves the pod to assigned
    def update_pod(self, old: Pod, new: Pod) -> None:
        uid = waiting_pod_key(new)
        self._all[uid] = new
        if not old.spec.node_name and new.spec.node_name:
            self._assigned[uid] = None
            self._unscheduled.pop(uid, None)
            self._assumed.pop(uid, None)

    def delete_pod(self, uid: str) -> None:
        self._all.pop(uid, None)
        self._unscheduled.pop(uid, None)
        self._assumed.pop(uid, None)
        self._assigned.pop(uid, None)

    # upstream assumePod (L111-129): an unknown pod (deleted meanwhile) is ignored
    def assume_pod(self, pod: Pod) -> None:
        uid = waiting_pod_key(pod)
        stored = self._all.get(uid)
        if stored is None:
            return
        if stored.spec.node_name:
            self._assigned[uid] = None
        else:
            self._assumed[uid] = pod
        self._unscheduled.pop(uid, None)

    # upstream forgetPod (L131-152)
    def forget_pod(self, uid: str) -> None:
        pod = self._all.get(uid)
        if pod is None:
            return
        self._assumed.pop(uid, None)
        if pod.spec.node_name:
            self._assigned[uid] = None
        else:
            self._unscheduled[uid] = _ns_name(pod)

    def empty(self) -> bool:
        return not self._all and self.pod_group is None

    # ───── PodGroupState (listers.go L230-255) ─────

    def all_pods(self) -> set[str]:
        return set(self._all)

    def all_pods_count(self) -> int:
        return len(self._all)

    def unscheduled_pods(self) -> dict[str, Pod]:
        """Unscheduled members by ``namespace/name`` (what ``Handle.activate`` takes; upstream
        keys by name, the namespace being the group's)."""
        everyone = self._all
        return {key: everyone[uid] for uid, key in self._unscheduled.items()}

    def assumed_pods(self) -> set[str]:
        return set(self._assumed)

    def assigned_pods(self) -> set[str]:
        return set(self._assigned)

    def scheduled_pods(self) -> list[Pod]:
        return [self._all[u] for u in self._assigned] + list(self._assumed.values())

    def scheduled_pods_count(self) -> int:
        return len(self._assumed) + len(self._assigned)


class PodGroupManagerImpl:
    """The scheduler's pod groups (upstream cache ``podGroupStates`` + ``Handle.PodGroupManager()``).
    Implements :class:`~kubesched.framework.podgroup.PodGroupManager`; fed by the cache (assigned
    and assumed members) and the scheduler's event handlers (unscheduled members, PodGroup objects)."""

    def __init__(self, composite_enabled: bool = False) -> None:
        self._states: dict[tuple[str, str], PodGroupStateImpl] = {}
        self.composite_enabled = composite_enabled
        """CompositePodGroup on: the hierarchy is kept (else parents are ignored, as upstream)."""
        self._composite: dict[tuple[str, str], CompositePodGroupStateImpl] = {}

    def __len__(self) -> int:
        return len(self._states)

    def _state_for(self, pod: Pod) -> PodGroupStateImpl | None:
        name = pod_group_name_of(pod)
        if name is None:
            return None
        key = (pod.metadata.namespace or "", name)
        st = self._states.get(key)
        if st is None:
            st = self._states[key] = PodGroupStateImpl()
        return st

    def _existing(self, pod: Pod) -> tuple[tuple[str, str], PodGroupStateImpl] | None:
        name = pod_group_name_of(pod)
        if name is None:
            return None
        key = (pod.metadata.namespace or "", name)
        st = self._states.get(key)
        return None if st is None else (key, st)

    def _drop_if_empty(self, key: tuple[str, str], st: PodGroupStateImpl) -> None:
        if st.empty():
            self._states.pop(key, None)

    # ───── members (cache.go addPodGroupMember / updatePodGroupMember / removePodGroupMember) ─────

    def add_pod(self, pod: Pod) -> None:
        st = self._state_for(pod)
        if st is not None:
            st.add_pod(pod)

    def update_pod(self, old: Pod, new: Pod) -> None:
        st = self._state_for(new)
        if st is None:
            return
        if waiting_pod_key(new) not in st._all:
            st.add_pod(new)
        else:
            st.update_pod(old, new)

    def remove_pod(self, pod: Pod) -> None:
        found = self._existing(pod)
        if found is None:
            return
        key, st = found
        st.delete_pod(waiting_pod_key(pod))
        self._drop_if_empty(key, st)

    def assume_pod(self, pod: Pod) -> None:
        found = self._existing(pod)
        if found is not None:
            found[1].assume_pod(pod)

    def forget_pod(self, pod: Pod) -> None:
        found = self._existing(pod)
        if found is not None:
            found[1].forget_pod(waiting_pod_key(pod))

    # ───── PodGroup objects (cache.go AddPodGroup / UpdatePodGroup / RemovePodGroup) ─────

    def set_pod_group(self, pg: dict[str, Any]) -> None:
        """``AddPodGroup`` / ``UpdatePodGroup``: with CompositePodGroup, the group becomes a child of
        its parent (a placeholder state until the parent is observed)."""
        key = _meta_key(pg)
        st = self._states.get(key)
        if st is None:
            st = self._states[key] = PodGroupStateImpl()
        st.pod_group = pg
        parent = _parent_of(pg)
        if self.composite_enabled and parent is not None:
            self._composite_state_for((key[0], parent)).add_child(entity_key(POD_GROUP_KEY_TYPE, *key))

    def remove_pod_group(self, pg: dict[str, Any]) -> None:
        key = _meta_key(pg)
        st = self._states.get(key)
        if st is None:
            return
        parent = _parent_of(pg)
        if self.composite_enabled and parent is not None:
            self._unlink((key[0], parent), entity_key(POD_GROUP_KEY_TYPE, *key))
        st.pod_group = None
        self._drop_if_empty(key, st)

    # ───── CompositePodGroup objects (cache.go Add/Update/RemoveCompositePodGroup) ─────

    def _composite_state_for(self, key: tuple[str, str]) -> CompositePodGroupStateImpl:
        st = self._composite.get(key)
        if st is None:
            st = self._composite[key] = CompositePodGroupStateImpl()
        return st

    def _unlink(self, parent_key: tuple[str, str], child: str) -> None:
        parent = self._composite.get(parent_key)
        if parent is not None:
            parent.remove_child(child)
            if parent.empty():
                del self._composite[parent_key]

    def set_composite_pod_group(self, cpg: dict[str, Any]) -> None:
        """``AddCompositePodGroup`` / ``UpdateCompositePodGroup`` (ignored with the gate off)."""
        if not self.composite_enabled:
            return
        key = _meta_key(cpg)
        self._composite_state_for(key).composite_pod_group = cpg
        parent = _parent_of(cpg)
        if parent is not None:
            self._composite_state_for((key[0], parent)).add_child(entity_key(COMPOSITE_POD_GROUP_KEY_TYPE, *key))

    def remove_composite_pod_group(self, cpg: dict[str, Any]) -> None:
        """``RemoveCompositePodGroup``: unlinked from the parent its cached object names."""
        key = _meta_key(cpg)
        st = self._composite.get(key) if self.composite_enabled else None
        if st is None:
            return
        parent = _parent_of(st.composite_pod_group)
        if parent is not None:
            self._unlink((key[0], parent), entity_key(COMPOSITE_POD_GROUP_KEY_TYPE, *key))
        st.composite_pod_group = None
        if st.empty():
            self._composite.pop(key, None)

    def composite_pod_group(self, namespace: str, name: str) -> dict[str, Any] | None:
        st = self._composite.get((namespace, name)) if self.composite_enabled else None
        return None if st is None else st.composite_pod_group

    def composite_pod_group_state(self, namespace: str, name: str) -> CompositePodGroupStateImpl | None:
        """Upstream ``CompositePodGroupStates().Get`` (None when unknown or the gate is off)."""
        return self._composite.get((namespace, name)) if self.composite_enabled else None

    def hierarchy_root_for_pod(self, pod: Pod) -> str:
        """Upstream ``BuildHierarchySnapshotFromPod`` (cache.go L1291-1370): the entity key of the
        root of the pod's hierarchy, walking up at most ``WorkloadMaxTreeDepth − 1`` composite
        levels, after checking that the tree below it has no cycle. The manager doubles as the
        snapshot, so nothing is copied. Raises :class:`ValueError` with upstream's text ("pod has
        no scheduling group", "pod group state not found for <key>", "pod group object not found
        in state for <key>", "parent composite pod group state not found for <key>", "composite pod
        group object not found in state for <key>", "cycle detected in composite pod group
        hierarchy: <key>")."""
        name = pod_group_name_of(pod)
        if name is None:
            raise ValueError("pod has no scheduling group")
        ns = pod.metadata.namespace or ""
        current = entity_key(POD_GROUP_KEY_TYPE, ns, name)
        st = self._states.get((ns, name))
        if st is None:
            raise ValueError(f"pod group state not found for {current}")
        if st.pod_group is None:
            raise ValueError(f"pod group object not found in state for {current}")
        parent = _parent_of(st.pod_group)
        if self.composite_enabled and parent is not None:
            current = entity_key(COMPOSITE_POD_GROUP_KEY_TYPE, ns, parent)
            for _ in range(WORKLOAD_MAX_TREE_DEPTH - 1):
                cst = self._composite.get((ns, parent))
                if cst is None:
                    raise ValueError(f"parent composite pod group state not found for {current}")
                if cst.composite_pod_group is None:
                    raise ValueError(f"composite pod group object not found in state for {current}")
                up = _parent_of(cst.composite_pod_group)
                if up is None:
                    break
                parent = up
                current = entity_key(COMPOSITE_POD_GROUP_KEY_TYPE, ns, parent)
        visited: set[str] = set()

        def walk(key: str) -> None:  # buildPodGroupStateSnapshotTree
            if key in visited:
                raise ValueError(f"cycle detected in composite pod group hierarchy: {key}")
            visited.add(key)
            key_type, kns, kname = key.split("/", 2)
            if key_type == POD_GROUP_KEY_TYPE:
                if (kns, kname) not in self._states:
                    raise ValueError(f"pod group state not found for {key}")
                return
            cst = self._composite.get((kns, kname))
            if cst is None:
                raise ValueError(f"composite pod group state not found for {key}")
            for child in cst.children():
                walk(child)

        walk(current)
        return current

    def root_key_for_group(self, key: str) -> str | None:
        """Upstream ``GetRootKeyForGroup``: the entity key of the top of ``key``'s hierarchy
        (``podgroup/…`` or ``compositepodgroup/…``); None when a group on the way is not observed;
        :class:`HierarchyCycleError` on a cycle; ``ValueError`` for a pod key."""
        visited: list[str] = []
        current = key
        while True:
            if current in visited:
                raise HierarchyCycleError(f"cycle detected in the hierarchy: [{' '.join(visited)}]")
            visited.append(current)
            key_type, namespace, name = current.split("/", 2)
            if key_type == POD_GROUP_KEY_TYPE:
                st = self._states.get((namespace, name))
                obj = st.pod_group if st is not None else None
                if obj is None:
                    return None
                parent = _parent_of(obj) if self.composite_enabled else None
            elif key_type == COMPOSITE_POD_GROUP_KEY_TYPE:
                cst = self._composite.get((namespace, name))
                obj = cst.composite_pod_group if cst is not None else None
                if obj is None:
                    return None
                parent = _parent_of(obj)
            else:
                raise ValueError(f"pod key type not supported in snapshot GetRootKeyForGroup for {current}")
            if parent is None:
                return current
            current = entity_key(COMPOSITE_POD_GROUP_KEY_TYPE, namespace, parent)

    # ───── PodGroupManager ─────

    def pod_group(self, namespace: str, name: str) -> dict[str, Any] | None:
        st = self._states.get((namespace, name))
        return None if st is None else st.pod_group

    def pod_group_state(self, namespace: str, name: str) -> PodGroupStateImpl | None:
        return self._states.get((namespace, name))

    def pod_groups(self) -> list[dict[str, Any]]:
        """Every observed PodGroup object."""
        return [st.pod_group for st in self._states.values() if st.pod_group is not None]
