"""Reuse of Filter results between equal pods (an equivalence-class cache; kubesched's own).

Upstream kube-scheduler evaluates every Filter plugin on every sampled node for every pod. Its
own reuse, opportunistic batching (KEP-5598, v1.37.2 ``pkg/scheduler/framework/runtime/batch.go``),
is inert under the default profile: PodTopologySpread's system-default constraints make every pod
unsignable. Many pods are nonetheless equal for the node-local Filter plugins (the replicas of a
Deployment), so this cache remembers, per *equivalence class* of pods, which nodes passed every
Filter plugin, and skips those plugins for such a node until the node changes.

What makes it exact:

* **Only node-local plugins.** A cycle may use the cache only when every Filter plugin that is not
  skipped (PreFilter Skip) says its result depends on nothing but the pod and the one node's
  state: the plugin has ``filter_is_node_local(state) -> bool`` and it answers True for this
  cycle (NodeResourcesFit answers False when a request is left to DynamicResources, a
  cluster-wide answer). PodTopologySpread and InterPodAffinity (whole-cluster counts), the
  volume plugins and DynamicResources (API objects) have no such method, so a pod that needs them
  is evaluated the plain way.
* **The class is the pod's spec and status** (``msgspec`` JSON of both, so any field a node-local
  plugin may read is part of the key; names, labels and other metadata are not read by them).
* **A node's entries are dropped on any change of its row**: the cache listens to the
  :class:`~kubesched.framework.node_table.NodeTable` (node set/removed, pod added/removed —
  including the temporary edits of preemption dry-runs and pod-group cycles, which only drop
  more). A node removed or added drops nothing else: the results of other nodes do not depend
  on it.
* **Only passes are remembered.** A node that failed is evaluated again, so its rejection
  status (and its place in the plugins' interned reason tables) is exactly what the plain path
  produces; a chunk's result is the plain result with the remembered passes filled in.
* Used only by the scheduling cycle's sampled Filter pass
  (:func:`kubesched.scheduler.schedule_pod.schedule_pod`), never by nominated-pod or
  preemption re-runs (those evaluate a modified copy of a node).

Off by default (``Framework.enable_equivalence_cache``): measured on ``simulate_large`` inputs it
reuses about half of the sampled nodes but saves no CPU, because a Filter pass costs mostly
per-plugin call overhead, which a chunk pays unless *every* node of it is remembered
(benchmarks/README.md, "perfsim").

Memory: one ``bool`` per (class, node row); when the classes would exceed
:attr:`EquivalenceCache.max_cells` cells the cache starts over (empty).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from kubesched.framework.diagnosis import FilterChunk
from kubesched.framework.interface import Status

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Node, Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_info import PodInfo
    from kubesched.framework.node_table import NodeTable

__all__ = ["EquivalenceCache", "pod_class_key"]

_encode = msgspec.json.Encoder().encode


def pod_class_key(pod: Pod) -> bytes:
    """The equivalence class of ``pod`` for node-local plugins: its spec and status as JSON bytes."""
    return _encode((pod.spec, pod.status))


class EquivalenceCache:
    """Per class of pods, the node rows that passed every (node-local) Filter plugin.

    Args:
        table: the scheduler's node table (the cache registers itself as a listener).
        filter_plugins: the profile's Filter plugins, in order (``Framework.filter_plugins``).
        max_cells: bound on ``classes × table capacity`` booleans kept (default 64 Mi: 64 MiB).
    """

    def __init__(self, table: NodeTable, filter_plugins: list[Any], max_cells: int = 64 << 20) -> None:
        self.table = table
        self.filter_plugins = filter_plugins
        self.max_cells = max_cells
        self._slots: dict[bytes, int] = {}
        self._passed = np.zeros((0, table.capacity), bool)
        self.hits = 0
        """Nodes whose Filter plugins were skipped thanks to the cache (for benchmarks)."""
        self.evaluated = 0
        """Nodes evaluated through the cache's path (hits included)."""
        table.add_listener(self)

    # ─── which cycles may use it ───

    def slot_for(self, state: CycleState, pod: Pod) -> int | None:
        """The class row of ``pod`` for this cycle, or None when a Filter plugin that runs in
        this cycle is not node-local (then the plain path is used)."""
        skip = state.skip_filter_plugins
        for pl in self.filter_plugins:
            if pl.name in skip:
                continue
            local = getattr(pl, "filter_is_node_local", None)
            if local is None or not local(state):
                return None
        key = pod_class_key(pod)
        slot = self._slots.get(key)
        cap = self.table.capacity
        if slot is None:
            if (len(self._slots) + 1) * cap > self.max_cells:
                self._slots.clear()  # start over; rows are cleared as their slots are reused
            slot = self._slots[key] = len(self._slots)
            fresh = True
        else:
            fresh = False
        if slot >= len(self._passed) or self._passed.shape[1] < cap:
            n_rows = max(slot + 1, min(max(2 * len(self._passed), 8), self.max_cells // cap))
            grown = np.zeros((n_rows, cap), bool)
            grown[:len(self._passed), :self._passed.shape[1]] = self._passed
            self._passed = grown
        if fresh:
            self._passed[slot] = False
        return slot

    # ─── the filter pass ───

    def run_filter_plugins(self, fw: Any, state: CycleState, pod: Pod, rows: np.ndarray,
                           slot: int) -> FilterChunk | Status:
        """``fw.run_filter_plugins(state, pod, rows)`` with the remembered passes of class ``slot``
        filled in: the plugins run only on the other rows. Same chunk (or Error status) as the
        plain call."""
        known = self._passed[slot, rows]
        n_known = int(np.count_nonzero(known))
        self.evaluated += len(rows)
        self.hits += n_known
        if n_known == 0:
            chunk: FilterChunk | Status = fw.run_filter_plugins(state, pod, rows)
            if isinstance(chunk, Status):
                return chunk
            self._passed[slot, chunk.rows[chunk.fail_plugin == FilterChunk.PASSED]] = True
            return chunk
        # every non-skipped plugin ran: the remembered nodes stay alive through all of them
        skip = state.skip_filter_plugins
        skipped = frozenset(i for i, pl in enumerate(self.filter_plugins) if pl.name in skip)
        n = len(rows)
        fail_plugin = np.full(n, FilterChunk.PASSED, np.int16)
        fail_key = np.zeros(n, np.int64)
        if n_known == n:
            return FilterChunk(rows, fail_plugin, fail_key, fw._filter_names,
                               [None] * len(self.filter_plugins), skipped)
        todo = np.flatnonzero(~known)
        sub: FilterChunk | Status = fw.run_filter_plugins(state, pod, rows[todo])
        if isinstance(sub, Status):
            return sub
        fail_plugin[todo] = sub.fail_plugin
        fail_key[todo] = sub.fail_key
        self._passed[slot, sub.rows[sub.fail_plugin == FilterChunk.PASSED]] = True
        return FilterChunk(rows, fail_plugin, fail_key, sub.plugins, sub.tables, skipped)

    # ─── invalidation (NodeTableListener) ───

    def _drop(self, row: int) -> None:
        if row < self._passed.shape[1]:
            self._passed[:, row] = False

    def on_node_set(self, table: NodeTable, row: int, old: Node | None) -> None:
        self._drop(row)

    def on_node_removed(self, table: NodeTable, row: int, old: Node) -> None:
        self._drop(row)

    def on_pod_added(self, table: NodeTable, row: int, pod_info: PodInfo) -> None:
        self._drop(row)

    def on_pod_removed(self, table: NodeTable, row: int, pod_info: PodInfo) -> None:
        self._drop(row)
