"""The scheduler's cluster cache (upstream ``pkg/scheduler/backend/cache/cache.go``).

Pod states, as upstream's diagram::

    +-------------------------------------------+  +----+
    |                            Add            |  |    |
    |                                           |  |    | Update
    +      Assume                Add            v  v    |
  Initial +--------> Assumed +------------+---> Added <--+
    ^                +   +               |       +
    |                |   |               |       |
    |                |   |     Add       |       | Remove
    |                |   |               |       +
    +----------------+   +-----------> Expired   +----> Deleted
          Forget                 Expire

Assumed pods never expire: upstream 1.34 had a TTL of 0 (= never, issue #106361) and
``FinishBinding``; 1.36 removed both. An assumed pod that is deleted is removed with
:meth:`Cache.remove_assumed_pod` (1.37 ``RemoveAssumedPod``; the event handlers call it since 1.35).
Everything lands in one :class:`NodeTable`, which doubles as the snapshot: the engine only
mutates it between scheduling cycles. Pods bound to a node the cache does not know yet are
held aside and accounted when the node arrives (upstream keeps a NodeInfo without a Node).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubesched.api.objects import Node, Pod, pod_key
from kubesched.framework.node_info import PodInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.node_table_bulk import set_nodes

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.cache.podgroups import PodGroupManagerImpl

__all__ = ["Cache", "PodState"]


@dataclass(slots=True)
class PodState:
    pod_info: PodInfo
    node_name: str
    assumed: bool = False


class Cache:
    """Nodes and assigned pods. Methods raise ``KeyError``/``ValueError`` on impossible
    transitions (assuming a pod twice, forgetting a pod that is not assumed), as upstream."""

    def __init__(self, table: NodeTable | None = None) -> None:
        self.table = table if table is not None else NodeTable()
        self.pod_states: dict[str, PodState] = {}
        self._orphans: dict[str, dict[str, PodInfo]] = {}
        """node name → pods bound there before the node is known."""
        self.pod_groups: PodGroupManagerImpl | None = None
        """With GenericWorkload: the per-PodGroup member state the cache keeps up to date
        (upstream ``podGroupStates``, backend/cache/cache.go L79); None otherwise (no cost)."""

    # ───────────────────────────── nodes ─────────────────────────────

    def add_node(self, node: Node) -> None:
        self.table.set_node(node)
        if self._orphans:
            self.add_node_orphans(node.metadata.name)

    update_node = add_node

    def add_nodes(self, nodes: Sequence[Node]) -> None:
        """:meth:`add_node` for each node, in order, the table filled in bulk
        (:func:`~kubesched.framework.node_table_bulk.set_nodes`: an initial LIST). Raises
        :class:`~kubesched.errors.QuantityError` for an invalid allocatable quantity (the nodes
        before it added). Pods held aside for a node of the batch are accounted right after it, as
        :meth:`add_node` one by one does (the batch is cut there: same rows, columns and
        generation stamps)."""
        orphans = self._orphans
        if not orphans:
            set_nodes(self.table, nodes)
            return
        start = 0
        for i, node in enumerate(nodes):
            name = node.metadata.name
            if name in orphans:
                set_nodes(self.table, nodes[start:i + 1])
                self.add_node_orphans(name)
                start = i + 1
        if start < len(nodes):
            set_nodes(self.table, nodes[start:])

    def add_node_orphans(self, name: str) -> None:
        """Account the pods held aside for node ``name`` (bound before it was known) on its row."""
        orphans = self._orphans.pop(name, None)
        if orphans:
            row = self.table.row_of[name]
            for pi in orphans.values():
                self.table.add_pod(pi, row)

    def remove_node(self, name: str) -> None:
        """Remove a node; its pods stay in the cache, held aside until a node of that name returns."""
        row = self.table.row_of.get(name)
        if row is None:
            return
        pods = list(self.table.pods[row])
        for pi in pods:
            self.table.remove_pod(pi, row)
        if pods:
            self._orphans[name] = {pi.key: pi for pi in pods}
        self.table.remove_node(name)

    def node_count(self) -> int:
        return len(self.table)

    # ───────────────────────────── pods ─────────────────────────────

    def _place(self, pi: PodInfo, node_name: str) -> None:
        row = self.table.row_of.get(node_name)
        if row is None:
            self._orphans.setdefault(node_name, {})[pi.key] = pi
        else:
            self.table.add_pod(pi, row)

    def _unplace(self, pi: PodInfo, node_name: str) -> None:
        row = self.table.row_of.get(node_name)
        if row is None:
            self._orphans.get(node_name, {}).pop(pi.key, None)
        else:
            self.table.remove_pod(pi, row)

    def assume_pod(self, pod_info: PodInfo, node_name: str) -> None:
        """Account the pod on ``node_name`` before it is bound. Raises ``ValueError`` if known."""
        if pod_info.key in self.pod_states:
            raise ValueError(f"pod {pod_info.key} is in the cache, so can't be assumed")
        self._place(pod_info, node_name)
        self.pod_states[pod_info.key] = PodState(pod_info, node_name, assumed=True)
        if self.pod_groups is not None and pod_info.pod.spec.scheduling_group is not None:
            self.pod_groups.assume_pod(pod_info.pod)

    def forget_pod(self, key: str) -> None:
        """Undo :meth:`assume_pod`. Raises ``ValueError`` for a pod that is not assumed."""
        st = self.pod_states.get(key)
        if st is None or not st.assumed:
            raise ValueError(f"pod {key} wasn't assumed so cannot be forgotten")
        self._unplace(st.pod_info, st.node_name)
        del self.pod_states[key]
        if self.pod_groups is not None and st.pod_info.pod.spec.scheduling_group is not None:
            self.pod_groups.forget_pod(st.pod_info.pod)

    def assume_pod_in_snapshot(self, pod_info: PodInfo, node_name: str) -> None:
        """Upstream ``Snapshot.AssumePod`` (backend/cache/snapshot.go L581-630): a pod-group
        cycle's simulated assumption — the pod is accounted on the node and marked assumed in
        its group's state, but the cache does not track it (undo with
        :meth:`forget_pod_in_snapshot`, last in first out)."""
        self._place(pod_info, node_name)
        if self.pod_groups is not None:
            self.pod_groups.assume_pod(pod_info.pod)

    def forget_pod_in_snapshot(self, pod_info: PodInfo, node_name: str) -> None:
        """Upstream ``Snapshot.ForgetPod`` (snapshot.go L643-690): undo :meth:`assume_pod_in_snapshot`."""
        self._unplace(pod_info, node_name)
        if self.pod_groups is not None:
            self.pod_groups.forget_pod(pod_info.pod)

    def remove_assumed_pod(self, key: str) -> PodInfo | None:
        """An assumed pod was deleted (upstream ``RemoveAssumedPod``, backend/cache/cache.go,
        1.37.2): free what it holds on its node. None if the pod is no longer in the cache;
        ``ValueError`` if it is there but not assumed (upstream ``validateAssumedPod``)."""
        st = self.pod_states.get(key)
        if st is None:
            return None
        if not st.assumed:
            raise ValueError(f"pod {key} wasn't assumed so cannot be removed as assumed")
        self._unplace(st.pod_info, st.node_name)
        del self.pod_states[key]
        if self.pod_groups is not None and st.pod_info.pod.spec.scheduling_group is not None:
            self.pod_groups.remove_pod(st.pod_info.pod)
        return st.pod_info

    def is_assumed(self, key: str) -> bool:
        st = self.pod_states.get(key)
        return st is not None and st.assumed

    def add_pod(self, pod: Pod) -> PodInfo:
        """An assigned pod was added (informer) — confirms an assumed pod."""
        key = pod_key(pod)
        node_name = pod.spec.node_name
        st = self.pod_states.get(key)
        if self.pod_groups is not None and pod.spec.scheduling_group is not None:
            self.pod_groups.add_pod(pod)  # upstream addPod → addPodGroupMember: assigned
        if st is not None and st.assumed:
            if st.node_name != node_name:  # bound elsewhere than assumed
                self._unplace(st.pod_info, st.node_name)
                st.pod_info.update(pod)
                self._place(st.pod_info, node_name)
            else:
                self._refresh(st, pod)
            st.node_name = node_name
            st.assumed = False
            return st.pod_info
        if st is not None:
            raise ValueError(f"pod {key} was already in added state")
        pi = PodInfo(pod)
        self._place(pi, node_name)
        self.pod_states[key] = PodState(pi, node_name)
        return pi

    def _refresh(self, st: PodState, pod: Pod) -> None:
        """Replace the stored pod object; re-account only when scheduling-relevant data changed."""
        old = st.pod_info
        o, n = old.pod, pod
        same_spec = (o.spec.containers is n.spec.containers and o.spec.init_containers is n.spec.init_containers
                     and o.spec.overhead is n.spec.overhead and o.spec.affinity is n.spec.affinity)
        if same_spec and o.metadata.labels is n.metadata.labels:
            old.pod = pod  # same scheduling-relevant parts (e.g. only nodeName/status changed)
            return
        if same_spec:
            # only the labels changed (e.g. the zone/region labels PodTopologyLabels adds on binding):
            # requests, ports and priority stand; the label indexes re-account the pod
            if n.metadata.labels != o.metadata.labels:
                row = self.table.row_of.get(st.node_name)
                if row is not None and self.table.pod_row.get(old.key) == row:
                    self.table.relabel_pod(old, row, pod)
                else:
                    self._unplace(old, st.node_name)
                    old.pod = pod
                    old.extra.clear()
                    self._place(old, st.node_name)
            else:
                old.pod = pod
            return
        new = PodInfo(pod)
        if (new.requests == old.requests and new.ports == old.ports
                and new.non_zero_cpu == old.non_zero_cpu and new.non_zero_memory == old.non_zero_memory
                and pod.metadata.labels == old.pod.metadata.labels and pod.spec.affinity == old.pod.spec.affinity):
            old.pod = pod
            return
        self._unplace(old, st.node_name)
        old.update(pod)
        self._place(old, st.node_name)

    def update_pod(self, old: Pod, new: Pod) -> None:
        key = pod_key(new)
        st = self.pod_states.get(key)
        if st is None:
            self.add_pod(new)
            return
        if self.pod_groups is not None and new.spec.scheduling_group is not None:
            self.pod_groups.add_pod(new)  # upstream updatePod = removePod + addPod
        if st.node_name != new.spec.node_name:
            self._unplace(st.pod_info, st.node_name)
            st.pod_info.update(new)
            st.node_name = new.spec.node_name
            self._place(st.pod_info, st.node_name)
        else:
            self._refresh(st, new)
        st.assumed = False

    def remove_pod(self, pod: Pod) -> PodInfo | None:
        key = pod_key(pod)
        st = self.pod_states.pop(key, None)
        if self.pod_groups is not None and pod.spec.scheduling_group is not None:
            self.pod_groups.remove_pod(pod)
        if st is None:
            return None
        self._unplace(st.pod_info, st.node_name)
        return st.pod_info

    def pod_count(self) -> int:
        return len(self.pod_states)

    def assumed_count(self) -> int:
        return sum(1 for s in self.pod_states.values() if s.assumed)
