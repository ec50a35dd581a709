"""Incremental per-node counts of matching pods, for PodTopologySpread (and anyone else).

Upstream counts, in every PreFilter and PreScore, the pods matching each constraint's
selector on every node (``countPodsMatchSelector`` over ``nodeInfo.Pods``): O(pods) per
cycle. Here a :class:`SpreadIndex` listens to the :class:`NodeTable` and keeps, for each
distinct *group* ``(namespace, selector)`` that an incoming pod has asked about, an
``int32[cap]`` column: the number of pods on each node that are in that namespace, match the
selector and are not terminating (``deletionTimestamp`` unset, upstream #87621).

* A group is created on first use by one scan of the pods in the table; afterwards each pod
  add/remove costs O(#groups of its namespace) selector matches.
* Which groups a pod was counted in is remembered per pod key, so removal undoes exactly what
  the add did even if the ``PodInfo`` was mutated in between.
* Groups not used for a while are not evicted one by one: when more than ``max_groups`` exist
  the index is reset and rebuilt lazily (workloads use a handful of selectors).

Per-domain counts are then ``np.bincount`` over a topology key's label column, weighted by a
group's column and masked by the eligible nodes: array work, no loop over pods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.labels import DOUBLE_EQUALS, EQUALS, IN

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.labels import Selector
    from kubesched.api.objects import Node
    from kubesched.framework.node_info import PodInfo
    from kubesched.framework.node_table import NodeTable

__all__ = ["SpreadIndex", "spread_index"]

_INDEX_KEY = (__name__, "SpreadIndex")


def spread_index(table: NodeTable) -> SpreadIndex:
    """The table's :class:`SpreadIndex`, created (and registered as a listener) on first use;
    owned by the table (:meth:`NodeTable.derived`)."""
    return table.derived(_INDEX_KEY, SpreadIndex)


def _counted(pod_info: PodInfo) -> bool:
    return pod_info.pod.metadata.deletion_timestamp is None


class SpreadIndex:
    """Per-node counts of pods matching ``(namespace, selector)`` groups. See the module docstring."""

    def __init__(self, table: NodeTable, max_groups: int = 256) -> None:
        self.table = table  # the table owns the index (derived + listener): a cycle the GC collects
        self.max_groups = max_groups
        self._by_label: dict[tuple[str, str, str], dict[str, tuple[int, PodInfo]]] | None = None
        """(namespace, label key, value) → pod key → (row, PodInfo) of every pod in the table;
        built with the first group that has a positive requirement, then kept up to date."""
        self._label_keys: dict[str, tuple[tuple[str, str, str], ...]] = {}
        """pod key → the entries of ``_by_label`` it was put under."""
        self._reset(table)
        table.add_listener(self)

    def _reset(self, table: NodeTable | None = None) -> None:
        self._ids: dict[tuple[str, Selector], int] = {}
        self._sel: list[Selector] = []
        self._ns_groups: dict[str, list[int]] = {}
        self._counts = np.zeros((4, (table or self.table).capacity), np.int32)
        self._member: dict[str, tuple[int, ...]] = {}
        """pod key → the groups the pod was counted in."""

    # ───────────────────────────── queries ─────────────────────────────

    def counts(self, namespace: str, selector: Selector) -> np.ndarray:
        """``int32[cap]``: matching, non-terminating pods of ``namespace`` per row. A view: do
        not modify, and do not keep across table changes."""
        g = self._ids.get((namespace, selector))
        if g is None:
            g = self._add_group(namespace, selector)
        if self._counts.shape[1] < self.table.capacity:
            self._grow_rows()
        return self._counts[g]

    def __len__(self) -> int:
        return len(self._sel)

    # ───────────────────────────── groups ─────────────────────────────

    def _add_group(self, namespace: str, selector: Selector) -> int:
        if len(self._sel) >= self.max_groups:
            self._reset()
        g = len(self._sel)
        self._ids[(namespace, selector)] = g
        self._sel.append(selector)
        self._ns_groups.setdefault(namespace, []).append(g)
        if g >= self._counts.shape[0]:
            grown = np.zeros((self._counts.shape[0] * 2, self._counts.shape[1]), np.int32)
            grown[: self._counts.shape[0]] = self._counts
            self._counts = grown
        if self._counts.shape[1] < self.table.capacity:
            self._grow_rows()
        col = self._counts[g]
        col[:] = 0
        table = self.table
        member = self._member
        matches = selector.matches
        pods_of = table.pods
        # a positive requirement (In / =): only the pods carrying one of its values can match
        pk, pv = next(((k, vals) for k, op, vals in selector.requirements if op in (IN, EQUALS, DOUBLE_EQUALS)),
                      (None, frozenset()))
        if pk is not None:
            by_label = self._labels()
            alive = table.alive
            for v in pv:
                for row, pi in list(by_label.get((namespace, pk, v), {}).values()):
                    # only pods still on that row count (a removed node drops its pods unannounced)
                    if not alive[row] or not any(p is pi for p in pods_of[row]):
                        continue
                    meta = pi.pod.metadata
                    if meta.deletion_timestamp is None and matches(meta.labels):
                        col[row] += 1
                        member[pi.key] = member.get(pi.key, ()) + (g,)
            return g
        # only nodes holding pods (requested[:, PODS] counts them): not a loop over every node
        for row in np.flatnonzero(table.alive & (table.requested[:, table.PODS] > 0)).tolist():
            pods = pods_of[row]
            if not pods:
                continue
            n = 0
            for pi in pods:
                meta = pi.pod.metadata
                if meta.namespace != namespace:
                    continue
                if meta.deletion_timestamp is None and matches(meta.labels):
                    n += 1
                    member[pi.key] = member.get(pi.key, ()) + (g,)
            if n:
                col[row] = n
        return g

    # ───────────────────────────── pods by label ─────────────────────────────

    def _labels(self) -> dict[tuple[str, str, str], dict[str, tuple[int, PodInfo]]]:
        if self._by_label is None:
            self._by_label = {}
            table = self.table
            for row in np.flatnonzero(table.alive & (table.requested[:, table.PODS] > 0)).tolist():
                for pi in table.pods[row]:
                    self._index_pod(row, pi)
        return self._by_label

    def _index_pod(self, row: int, pod_info: PodInfo) -> None:
        assert self._by_label is not None
        meta = pod_info.pod.metadata
        ns, key = meta.namespace, pod_info.key
        keys = tuple((ns, k, v) for k, v in meta.labels.items())
        entry = (row, pod_info)
        for lk in keys:
            d = self._by_label.get(lk)
            if d is None:
                d = self._by_label[lk] = {}
            d[key] = entry
        self._label_keys[key] = keys

    def _unindex_pod(self, row: int, pod_info: PodInfo) -> None:
        assert self._by_label is not None
        key = pod_info.key
        for lk in self._label_keys.pop(key, ()):
            d = self._by_label.get(lk)
            if d is not None and key in d and d[key][0] == row:
                del d[key]
                if not d:
                    del self._by_label[lk]

    def _grow_rows(self) -> None:
        cap = self.table.capacity
        grown = np.zeros((self._counts.shape[0], cap), np.int32)
        grown[:, : self._counts.shape[1]] = self._counts
        self._counts = grown

    # ───────────────────────────── NodeTableListener ─────────────────────────────

    def on_node_set(self, table: NodeTable, row: int, old: Node | None) -> None:
        if row >= self._counts.shape[1]:
            self._grow_rows()

    def on_node_removed(self, table: NodeTable, row: int, old: Node) -> None:
        if row < self._counts.shape[1]:
            self._counts[:, row] = 0

    def on_pod_added(self, table: NodeTable, row: int, pod_info: PodInfo) -> None:
        if self._by_label is not None:
            self._index_pod(row, pod_info)
        groups = self._ns_groups.get(pod_info.pod.metadata.namespace)
        if not groups or not _counted(pod_info):
            return
        if row >= self._counts.shape[1]:
            self._grow_rows()
        labels = pod_info.pod.metadata.labels
        hit = tuple(g for g in groups if self._sel[g].matches(labels))
        if hit:
            self._counts[hit, row] += 1
            self._member[pod_info.key] = hit

    def on_pod_removed(self, table: NodeTable, row: int, pod_info: PodInfo) -> None:
        if self._by_label is not None:
            self._unindex_pod(row, pod_info)
        hit = self._member.pop(pod_info.key, None)
        if hit and row < self._counts.shape[1]:
            self._counts[hit, row] -= 1
