"""The scheduling cycle's algorithm: find feasible nodes, score them, pick one.

Follows ``pkg/scheduler/schedule_one.go`` (v1.34): ``schedulePod``, ``findNodesThatFitPod``,
``findNodesThatPassFilters``, ``numFeasibleNodesToFind``, ``prioritizeNodes``, ``selectHost``.

Node sampling is reproduced exactly, sequentially: the candidate list is the zone-interleaved
node order (or the PreFilterResult's nodes in that order); evaluation starts at
``next_start_node_index`` and stops at the ``numFeasibleNodesToFind``-th feasible node; nodes
after it count as never evaluated; the start index then advances by the number of evaluated
nodes. Filters run on chunks of that order, vectorised, so only about as many nodes as needed
are evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.objects import pod_key
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import (
    NO_NODES_AVAILABLE,
    Diagnosis,
    FilterChunk,
    FitError,
)
from kubesched.framework.interface import Code, Status
from kubesched.framework.runtime import FilterError

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.node_table import NodeTable
    from kubesched.framework.runtime import Framework, ScoreResult

__all__ = [
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "NoNodesAvailable",
    "Sampler",
    "ScheduleResult",
    "num_feasible_nodes_to_find",
    "schedule_pod",
]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


class NoNodesAvailable(Exception):
    """Upstream ``ErrNoNodesAvailable`` (the error carried by the status :func:`schedule_pod`
    returns on an empty cluster)."""

    def __init__(self) -> None:
        super().__init__(NO_NODES_AVAILABLE)


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """Upstream ``numFeasibleNodesToFind``: all nodes below 100; else ``percentage`` of them
    (adaptive ``50 - n/125``, at least 5 %, when 0), but at least 100."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        percentage = max(percentage, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass
class Sampler:
    """Upstream ``sched.nextStartNodeIndex``, shared by all profiles of a scheduler."""

    next_start_node_index: int = 0


@dataclass
class ScheduleResult:
    """Outcome of :func:`schedule_pod` on success."""

    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    chunks: list[FilterChunk] = field(default_factory=list)
    scores: ScoreResult | None = None


def _apply_nominated_pods(fw: Framework, state: CycleState, pod: Pod, chunk: FilterChunk) -> None:
    """Upstream ``RunFilterPluginsWithNominatedPods``: a node to which pods of priority ≥ the
    pod's are nominated must also pass with those pods on it. Only such nodes are re-run."""
    nominator = fw.handle.nominator
    if nominator is None or not nominator.has_nominated_pods():
        return
    table = fw.handle.nodes
    key = state.pod_info.key if state.pod_info is not None else pod_key(pod)
    prio = state.pod_info.priority if state.pod_info is not None else (pod.spec.priority or 0)
    rows_with = [table.row_of[n] for n in nominator.nominated_nodes() if n in table.row_of]
    if not rows_with:
        return
    for i in np.flatnonzero(np.isin(chunk.rows, np.asarray(rows_with, np.int64))).tolist():
        row = int(chunk.rows[i])
        nominated = [pi for pi in nominator.nominated_pods_for_node(table.names[row])
                     if pi.priority >= prio and pi.key != key and pi.key not in table.pod_row]
        if not nominated:
            continue
        sub = fw.filter_with_nominated_pods(state, pod, row, nominated)
        if sub is not None:
            chunk.override(i, sub)


def _filter_rows(fw: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis, rows: np.ndarray,
                 start: int, num_to_find: int) -> np.ndarray:
    """``findNodesThatPassFilters`` over ``rows``: evaluate from ``start`` (wrapping) until
    ``num_to_find`` feasible nodes are found. Appends the evaluated chunks to ``diagnosis``."""
    n = len(rows)
    if n == 0:
        return rows
    start %= n
    if not fw.has_filter_plugins():
        idx = (start + np.arange(min(num_to_find, n))) % n
        return rows[idx]
    feasible: list[np.ndarray] = []
    found = 0
    pos = 0
    size = max(num_to_find, 64)
    while pos < n and found < num_to_find:
        # nodes[(start + i) % n] for i in [pos, pos + size), without rotating the whole list
        a, b = start + pos, start + min(pos + size, n)
        if b <= n:
            segment = rows[a:b]
        elif a >= n:
            segment = rows[a - n:b - n]
        else:
            segment = np.concatenate((rows[a:], rows[:b - n]))
        chunk = fw.run_filter_plugins(state, pod, segment)
        _apply_nominated_pods(fw, state, pod, chunk)
        ok = chunk.ok_mask()
        n_ok = int(ok.sum())
        if found + n_ok > num_to_find:
            # keep the evaluations up to and including the num_to_find-th feasible node
            cut = int(np.flatnonzero(ok)[num_to_find - found - 1]) + 1
            chunk = chunk.truncate(cut)
            ok = ok[:cut]
            n_ok = num_to_find - found
        diagnosis.chunks.append(chunk)
        if n_ok:
            feasible.append(chunk.rows[ok])
        found += n_ok
        pos += size
        size = min(size * 2, n)
    if not feasible:
        return rows[:0]
    return feasible[0] if len(feasible) == 1 else np.concatenate(feasible)


def schedule_pod(fw: Framework, state: CycleState, pod: Pod, table: NodeTable, sampler: Sampler,
                 rng: np.random.Generator, *, has_extender_filters: bool = False,
                 record: bool = True) -> ScheduleResult | Status:
    """Pick a node for ``pod`` (upstream ``schedulePod`` + ``findNodesThatFitPod``).

    Returns the :class:`ScheduleResult`, or the failure as a Status, as upstream's
    ``schedulingCycle`` turns ``schedulePod``'s error into one:

    * no node fits → ``Unschedulable`` whose ``error`` is the :class:`FitError` (its diagnosis
      carries the per-node statuses; ``message()`` is the FailedScheduling text);
    * empty cluster → ``UnschedulableAndUnresolvable`` with :class:`NoNodesAvailable`;
    * a PreFilter, Filter, PreScore or Score plugin error → the ``Error`` status.
    """
    order = table.order()
    num_all = len(order)
    if num_all == 0:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (), NoNodesAvailable())
    diagnosis = Diagnosis()
    pre_res, st, plugins = fw.run_pre_filter_plugins(state, pod)
    diagnosis.unschedulable_plugins |= plugins
    if st is not None and not st.is_success():
        if not st.is_rejected():
            return st
        diagnosis.absent_status = st
        diagnosis.pre_filter_msg = st.message()
        diagnosis.add_plugin_status(st)
        return _fit_error(pod, num_all, diagnosis)

    # a nominated node (from an earlier preemption) is tried first (upstream evaluateNominatedNode)
    nnn = pod.status.nominated_node_name
    nominated_chunk: FilterChunk | None = None
    if nnn and nnn in table.row_of:
        row = np.asarray([table.row_of[nnn]], np.int64)
        try:
            chunk = fw.run_filter_plugins(state, pod, row)
            _apply_nominated_pods(fw, state, pod, chunk)
        except FilterError:
            chunk = None  # upstream only logs an error here and goes on with all nodes
        if chunk is not None:
            if chunk.fail_plugin[0] == chunk.PASSED:
                return ScheduleResult(nnn, 1, 1, [chunk])
            # upstream records the node's status in the cycle's NodeToStatus right away; the pass
            # below overwrites it (same result) only if it reaches the node
            nominated_chunk = chunk

    rows = order
    if pre_res is not None and not pre_res.all_nodes():
        rows = table.rows_for_names(pre_res.node_names)
        diagnosis.absent_status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
            f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]",))

    num_to_find = num_feasible_nodes_to_find(fw.percentage_of_nodes_to_score, len(rows))
    if not has_extender_filters and not fw.has_score_plugins():
        num_to_find = 1
    start = sampler.next_start_node_index
    try:
        feasible = _filter_rows(fw, state, pod, diagnosis, rows, start, num_to_find)
    except FilterError as e:  # the runtime's Filter path raises; the cycle returns a status
        return e.status
    if nominated_chunk is not None:
        nominated_row = int(nominated_chunk.rows[0])
        if not any(bool((c.rows == nominated_row).any()) for c in diagnosis.chunks):
            diagnosis.chunks.append(nominated_chunk)
    explicit = diagnosis.num_explicit()
    sampler.next_start_node_index = (start + len(feasible) + explicit) % num_all

    if len(feasible) == 0:
        diagnosis.collect_plugins()
        return _fit_error(pod, num_all, diagnosis)
    chunks = diagnosis.chunks
    if len(feasible) == 1:
        return ScheduleResult(table.names[int(feasible[0])], 1 + explicit, 1, chunks)

    st = fw.run_pre_score_plugins(state, pod, feasible)
    if st is not None and not st.is_success():
        return st
    scores: ScoreResult | None = None
    if fw.has_score_plugins():
        scores, st = fw.run_score_plugins(state, pod, feasible, keep=record)
        if st is not None:
            return st
        assert scores is not None
        total = scores.total
    else:
        total = np.ones(len(feasible), np.int64)
    best = np.flatnonzero(total == total.max())
    pick = int(best[0]) if len(best) == 1 else int(best[int(rng.integers(len(best)))])
    return ScheduleResult(table.names[int(feasible[pick])], len(feasible) + explicit,
                          len(feasible), chunks, scores)


def _fit_error(pod: Pod, num_all: int, diagnosis: Diagnosis) -> Status:
    """Upstream ``NewStatus(Unschedulable).WithError(fitError)``."""
    return Status(Code.UNSCHEDULABLE, (), FitError(pod_key(pod), num_all, diagnosis))
