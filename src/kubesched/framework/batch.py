"""Opportunistic batching (KEP-5598; OpportunisticBatching β, on since 1.35): reuse the sorted
scores of the previous cycle for the next pod with the same signature.

Follows upstream v1.37.2 ``pkg/scheduler/framework/runtime/batch.go`` (``OpportunisticBatch``)
and the v1.35.4 / v1.36.3 versions of that file for the emulated releases before:

* :meth:`OpportunisticBatch.store_schedule_results` (``StoreScheduleResults``): after every
  successful ``schedulePod`` the cycle is recorded as the last one; unless the hint was the
  chosen node, the nodes left in the heap after the chosen one was popped become the state
  (``signature``, the heap, the creation time on the injected clock), or the state is dropped
  (``pod_not_batchable`` without a signature, ``empty_list`` without other nodes).
* :meth:`OpportunisticBatch.get_node_hint` (``GetNodeHint``) after PreFilter: a hint exists
  only when the state is not empty, this cycle immediately follows the last stored one (or is
  the same cycle with GenericWorkload, 1.37), the last cycle succeeded, the pod has no
  nominated node (1.37), the signatures are byte-equal and the state is at most 500 ms old.
  Then the previously chosen node is checked with Filter:

  - 1.37 (``refreshHintCandidates``): rejected → the best cached node is popped; passes →
    PreScore (on a clone of the cycle state) over the cached nodes in heap-internal order plus
    that node, its raw Score, NormalizeScore over the cached raw scores plus its fresh ones,
    weights, a new heap over that list; then the head is popped. A Filter error, a cached node
    gone from the snapshot, or a PreScore / Score / NormalizeScore failure gives no hint.
  - 1.35 / 1.36: rejected → pop; anything else (``node_not_full``) → no hint.

Failing checks only log a flush reason (:attr:`OpportunisticBatch.flushes`, upstream's
``batch_cache_flushed_total`` labels); as upstream, they do not clear the state.

Time is the injected clock (upstream ``time.Now()``), so simulations are deterministic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from kubesched.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, Status
from kubesched.framework.sorted_nodes import SortedScoredNodes

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.diagnosis import FilterChunk
    from kubesched.framework.handle import Handle

__all__ = ["MAX_BATCH_AGE_S", "BatchFramework", "NodePluginScores", "OpportunisticBatch", "ScoredNodeHeap",
           "normalize_entries"]


class BatchFramework(Protocol):
    """What the batch cache calls on its profile's :class:`~kubesched.framework.runtime.Framework`
    (upstream ``OpportunisticBatch.handle``): a protocol so that this module does not import the
    runtime that owns it (contract ``acyclic``)."""

    @property
    def handle(self) -> Handle: ...

    def clock(self) -> Any: ...

    def run_filter_plugins(self, state: CycleState, pod: Pod, rows: np.ndarray) -> FilterChunk | Status: ...

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, rows: np.ndarray) -> Status | None: ...

    def run_raw_score_plugins(self, state: CycleState, pod: Pod, rows: np.ndarray,
                              ) -> tuple[list[tuple[str, np.ndarray]], Status | None]: ...

    def normalize_scores(self, state: CycleState, pod: Pod, rows: np.ndarray, entries: list[Any]) -> bool: ...

MAX_BATCH_AGE_S = 0.5
"""Upstream ``maxBatchAge`` (500 ms)."""

# flush reasons (upstream metrics.BatchFlush*)
POD_FAILED = "pod_failed"
POD_SKIPPED = "pod_skipped"
POD_NOMINATED = "pod_nominated"
NODE_MISSING = "node_missing"
NODE_NOT_FULL = "node_not_full"
EMPTY_LIST = "empty_list"
EXPIRED = "expired"
POD_INCOMPATIBLE = "pod_incompatible"
POD_NOT_BATCHABLE = "pod_not_batchable"
FILTER_ERROR = "filter_error"
PRESCORE_ERROR = "prescore_error"
RESCORE_ERROR = "rescore_error"
NORMALIZE_ERROR = "normalize_error"


@dataclass(slots=True)
class NodePluginScores:
    """Upstream ``fwk.NodePluginScores``: ``raw`` = (plugin name, Score()) per active Score plugin
    (``RawScores``), ``total`` the weighted normalised sum, ``randomizer`` the tie-breaker."""

    name: str
    raw: list[tuple[str, int]] = field(default_factory=list)
    total: int = 0
    randomizer: int = 0


class ScoredNodeHeap:
    """Upstream ``framework.SortedScoredNodes`` over :class:`NodePluginScores` (a Go
    ``container/heap``; :class:`~kubesched.framework.sorted_nodes.SortedScoredNodes` does the
    heap order)."""

    def __init__(self, scores: list[NodePluginScores]) -> None:
        self._items = scores
        self._heap = SortedScoredNodes([s.total for s in scores], [s.randomizer for s in scores])

    def pop(self) -> NodePluginScores:
        return self._items[self._heap.pop()]

    def __len__(self) -> int:
        return len(self._heap)

    def unordered_list(self) -> list[NodePluginScores]:
        """The entries in heap-internal order (upstream ``UnorderedList``)."""
        return [self._items[i] for i in self._heap.unordered_list()]


@dataclass(slots=True)
class _BatchState:
    signature: bytes
    sorted_nodes: ScoredNodeHeap
    creation_time: float


@dataclass(slots=True)
class _SchedulingCycle:
    cycle_count: int = 0
    chosen_node: str = ""
    succeeded: bool = False


class OpportunisticBatch:
    """One profile's batch cache (upstream ``OpportunisticBatch``). See the module docstring.

    Counters: :attr:`batched_pods` (hints used), :attr:`attempts` (upstream
    ``batch_attempts_total``: ``hint_used`` / ``hint_not_used`` / ``no_hint``), :attr:`flushes`
    (``batch_cache_flushed_total`` by reason)."""

    def __init__(self, fw: BatchFramework, *, generic_workload: bool = False, rescore: bool = True,
                 check_nominated: bool = True) -> None:
        self.fw = fw
        self.state: _BatchState | None = None
        self.last_cycle = _SchedulingCycle()
        self.generic_workload = generic_workload
        self.rescore = rescore
        """1.37 ``refreshHintCandidates``; before, a still-feasible last node gives no hint."""
        self.check_nominated = check_nominated
        self.batched_pods = 0
        self.attempts: Counter[str] = Counter()
        self.flushes: Counter[str] = Counter()

    def _now(self) -> float:
        return float(self.fw.clock().now())

    def _flush(self, reason: str) -> None:
        self.flushes[reason] += 1

    def _state_empty(self) -> bool:
        return self.state is None or len(self.state.sorted_nodes) == 0

    # ───────────────────────────── GetNodeHint ─────────────────────────────

    def get_node_hint(self, pod: Pod, signature: bytes | None, state: CycleState, cycle_count: int) -> str:
        """Upstream ``GetNodeHint`` (batch.go L78-110): the hinted node's name, or ``""``."""
        hint = ""
        if self._compatible(pod, signature, cycle_count) and self._refresh(pod, state):
            assert self.state is not None
            hint = self.state.sorted_nodes.pop().name
        if not hint:
            self.attempts["no_hint"] += 1
        return hint

    def _compatible(self, pod: Pod, signature: bytes | None, cycle_count: int) -> bool:
        """Upstream ``batchStateCompatible`` (batch.go L176-218)."""
        if self._state_empty():
            return False
        assert self.state is not None
        if cycle_count != self.last_cycle.cycle_count + 1:
            if not self.generic_workload or cycle_count != self.last_cycle.cycle_count:
                self._flush(POD_SKIPPED)
                return False
        if not self.last_cycle.succeeded:
            self._flush(POD_FAILED)
            return False
        if self.check_nominated and pod.status.nominated_node_name:
            self._flush(POD_NOMINATED)
            return False
        if signature is None or signature != self.state.signature:
            self._flush(POD_INCOMPATIBLE)
            return False
        if self._now() > self.state.creation_time + MAX_BATCH_AGE_S:
            self._flush(EXPIRED)
            return False
        return True

    def _refresh(self, pod: Pod, state: CycleState) -> bool:
        """Upstream ``refreshHintCandidates`` (batch.go L223-248); before 1.37 the tail of
        ``batchStateCompatible`` (v1.36.3 batch.go L195-213)."""
        table = self.fw.handle.nodes
        row = table.row_of.get(self.last_cycle.chosen_node)
        if row is None:
            self._flush(NODE_MISSING)
            return False
        rows = np.asarray([row], np.int64)
        chunk = self.fw.run_filter_plugins(state, pod, rows)
        # None: a Filter Error (upstream refreshHintCandidates: !status.IsSuccess() && !IsRejected())
        passed = None if isinstance(chunk, Status) else bool(chunk.fail_plugin[0] == chunk.PASSED)
        if not self.rescore:
            if passed is False:
                return True
            self._flush(NODE_NOT_FULL)
            return False
        if passed:
            return self._rescore(pod, state, row)
        if passed is None:
            self._flush(FILTER_ERROR)
            return False
        return True

    def _rescore(self, pod: Pod, state: CycleState, row: int) -> bool:
        """Upstream ``rescoreHintedNode`` (batch.go L252-293)."""
        assert self.state is not None
        fw = self.fw
        table = fw.handle.nodes
        cached = self.state.sorted_nodes.unordered_list()
        cached_rows = [table.row_of.get(s.name) for s in cached]
        if any(r is None for r in cached_rows):
            self._flush(NODE_MISSING)
            return False
        rows = np.asarray([*cached_rows, row], np.int64)
        rescore_state = state.clone()
        st = fw.run_pre_score_plugins(rescore_state, pod, rows)
        if st is not None and not st.is_success():
            self._flush(PRESCORE_ERROR)
            return False
        fresh, st = fw.run_raw_score_plugins(rescore_state, pod, rows[-1:])
        if st is not None:
            self._flush(RESCORE_ERROR)
            return False
        entries = [NodePluginScores(s.name, s.raw, s.total, s.randomizer) for s in cached]
        entries.append(NodePluginScores(table.names[row], [(n, int(v[0])) for n, v in fresh]))
        if not fw.normalize_scores(rescore_state, pod, rows, entries):
            self._flush(NORMALIZE_ERROR)
            return False
        self.state.sorted_nodes = ScoredNodeHeap(entries)
        return True

    # ───────────────────────────── StoreScheduleResults ─────────────────────────────

    def store_schedule_results(self, signature: bytes | None, hinted_node: str, chosen_node: str,
                               other_nodes: ScoredNodeHeap | None, cycle_count: int, *,
                               num_other: int | None = None) -> None:
        """Upstream ``StoreScheduleResults`` (batch.go L113-164). ``num_other``: the number of
        other scored nodes when ``other_nodes`` was not built (an unsignable pod), for the
        flush reason only."""
        self.last_cycle = _SchedulingCycle(cycle_count, chosen_node, True)
        if hinted_node == chosen_node:
            self.attempts["hint_used"] += 1
            self.batched_pods += 1
            return
        if hinted_node:
            self.attempts["hint_not_used"] += 1
        if signature is not None and other_nodes is not None and len(other_nodes) > 0:
            self.state = _BatchState(signature, other_nodes, self._now())
        else:
            n = len(other_nodes) if other_nodes is not None else (num_other or 0)
            self._flush(EMPTY_LIST if n == 0 else POD_NOT_BATCHABLE)
            self.state = None


def normalize_entries(score_plugins: Sequence[Any], weights: np.ndarray, state: CycleState, pod: Pod,
                      rows: np.ndarray, entries: list[NodePluginScores]) -> bool:
    """Upstream ``NormalizeScores`` (framework.go L1497-1591) over ``entries`` (one per row of
    ``rows``): per non-skipped Score plugin, the raw scores the entries carry under its name
    (0 where missing), its NormalizeScore, the range check, the weight (``weights``: ``int64``,
    one per plugin of ``score_plugins``); sets each entry's ``total``. False on any failure."""
    plugins = [pl for pl in score_plugins if pl.name not in state.skip_score_plugins]
    if not plugins:
        for e in entries:
            e.total = 0
        return True
    total = np.zeros(len(entries), np.int64)
    index = {pl.name: i for i, pl in enumerate(score_plugins)}
    for pl in plugins:
        raw = np.asarray([dict(e.raw).get(pl.name, 0) for e in entries], np.int64)
        normalize = getattr(pl, "normalize_score", None)
        if normalize is not None:
            try:
                st = normalize(state, pod, raw)
            except Exception:  # noqa: BLE001 - a plugin error is a failed normalisation
                return False
            if st is not None and not st.is_success():
                return False
        if len(raw) and (raw.max() > MAX_NODE_SCORE or raw.min() < MIN_NODE_SCORE):
            return False
        total += raw * int(weights[index[pl.name]])
    for e, t in zip(entries, total.tolist()):
        e.total = int(t)
    return True
