"""Per-PodGroup member state and the observed PodGroup objects (upstream
``pkg/scheduler/backend/cache/podgroupstate.go`` v1.37.2 and the pod-group parts of
``backend/cache/cache.go``: ``AddPodGroupMember`` L879, ``UpdatePodGroupMember`` L890,
``RemovePodGroupMember`` L901, ``AddPodGroup``/``UpdatePodGroup``/``RemovePodGroup``).

A group's state is kept from pod events, so it exists before its PodGroup object: every known
member (``all``), and which of them are unscheduled, assumed or assigned. Members are identified
as the waiting-pods map identifies them (UID, ``namespace/name`` without one: see
:func:`~kubesched.framework.waiting_pods.waiting_pod_key`), so GangScheduling can look an assumed
member up with ``Handle.get_waiting_pod``. Only used with GenericWorkload on (the scheduler
builds a :class:`PodGroupManagerImpl` then, and the cache feeds it); CompositePodGroups are not
modelled.

Upstream snapshots the cache's states once per cycle and the pod-group cycle assumes members in
the snapshot only; here the cache doubles as the snapshot (as the NodeTable does), so the
cycle's simulated assumptions go through :meth:`PodGroupManagerImpl.assume_pod` /
:meth:`~PodGroupManagerImpl.forget_pod` and are reverted LIFO before anything else reads them.
"""

from __future__ import annotations

from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.podgroup import pod_group_name_of
from kubesched.framework.waiting_pods import waiting_pod_key

__all__ = ["PodGroupManagerImpl", "PodGroupStateImpl"]


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

    def __init__(self) -> None:
        self._states: dict[tuple[str, str], PodGroupStateImpl] = {}

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
        meta = pg.get("metadata") or {}
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        st = self._states.get(key)
        if st is None:
            st = self._states[key] = PodGroupStateImpl()
        st.pod_group = pg

    def remove_pod_group(self, pg: dict[str, Any]) -> None:
        meta = pg.get("metadata") or {}
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        st = self._states.get(key)
        if st is not None:
            st.pod_group = None
            self._drop_if_empty(key, st)

    # ───── PodGroupManager ─────

    def pod_group(self, namespace: str, name: str) -> dict[str, Any] | None:
        st = self._states.get((namespace, name))
        return None if st is None else st.pod_group

    def pod_group_state(self, namespace: str, name: str) -> PodGroupStateImpl | None:
        return self._states.get((namespace, name))

    def pod_groups(self) -> list[dict[str, Any]]:
        """Every observed PodGroup object."""
        return [st.pod_group for st in self._states.values() if st.pod_group is not None]
