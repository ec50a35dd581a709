"""``schedulePod``: the scheduling cycle's algorithm — find feasible nodes, score them, pick one.

Named after the function it holds; the cycle around it (pop, ``schedule_pod``, assume, Reserve,
Permit) is :func:`kubesched.scheduler.schedule_one.scheduling_cycle`, as upstream's
``schedulingCycle``.

Follows ``pkg/scheduler/schedule_one.go`` (v1.34): ``schedulePod``, ``findNodesThatFitPod``,
``findNodesThatPassFilters``, ``numFeasibleNodesToFind``, ``prioritizeNodes``, ``selectHost``.

Host selection by emulated version: up to v1.34 a uniform draw (the seeded rng) among the nodes
with the highest total (upstream's reservoir sampling); since v1.35 the first pop of a Go
``container/heap`` max-heap over the scored nodes in feasible-list order, ties by
``Randomizer`` — random only for nodes named by prioritize extenders (v1.37.2 schedule_one.go
L613-614, L1039-1047; :mod:`kubesched.framework.sorted_nodes`). Upstream's feasible list is
filled in Filter completion order; here it is the evaluation order.

Scheduler extenders (``findNodesThatPassExtenders``, the extender part of ``prioritizeNodes``)
run after the Filter plugins and after the Score plugins, through
:class:`~kubesched.framework.extender.Extender` (synchronous calls; prioritize verbs of several
extenders concurrently on a thread pool, as upstream's goroutines).

Node sampling is reproduced exactly, sequentially: the candidate list is the zone-interleaved
node order (or the PreFilterResult's nodes in that order); evaluation starts at
``next_start_node_index`` and stops at the ``numFeasibleNodesToFind``-th feasible node; nodes
after it count as never evaluated; the start index then advances by the number of evaluated
nodes. Filters run on chunks of that order, vectorised, so only about as many nodes as needed
are evaluated.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.objects import pod_key
from kubesched.framework.batch import NodePluginScores, ScoredNodeHeap
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import (
    NO_NODES_AVAILABLE,
    Diagnosis,
    FilterChunk,
    FitError,
)
from kubesched.framework.extender import EXTENDER_NAME, MAX_EXTENDER_PRIORITY, Extender, ExtenderError
from kubesched.framework.interface import MAX_NODE_SCORE, Code, Status
from kubesched.framework.npfast import amax, count_nonzero, flatnonzero
from kubesched.framework.runtime import ScoreResult
from kubesched.framework.sorted_nodes import heap_top

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.node_table import NodeTable
    from kubesched.framework.runtime import Framework

__all__ = [
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "NoNodesAvailable",
    "Sampler",
    "ScheduleResult",
    "find_nodes_that_pass_extenders",
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
    extender_statuses: dict[str, Status] = field(default_factory=dict)
    """Nodes the extenders rejected (for the decision record)."""


def _apply_nominated_pods(fw: Framework, state: CycleState, pod: Pod, chunk: FilterChunk) -> Status | None:
    """Upstream ``RunFilterPluginsWithNominatedPods``: a node to which pods of priority ≥ the
    pod's are nominated must also pass with those pods on it. Only such nodes are re-run.
    Returns the Error status of that run, else None."""
    nominator = fw.handle.nominator
    if nominator is None or not nominator.has_nominated_pods():
        return None
    table = fw.handle.nodes
    key = state.pod_info.key if state.pod_info is not None else pod_key(pod)
    prio = state.pod_info.priority if state.pod_info is not None else (pod.spec.priority or 0)
    rows_with = [table.row_of[n] for n in nominator.nominated_nodes() if n in table.row_of]
    if not rows_with:
        return None
    marked = np.zeros(len(table.names), bool)  # a lookup table: cheaper than np.isin's sort
    marked[rows_with] = True
    items = []
    for i in np.flatnonzero(marked[chunk.rows]).tolist():
        row = int(chunk.rows[i])
        nominated = [pi for pi in nominator.nominated_pods_for_node(table.names[row])
                     if pi.priority >= prio and pi.key != key and pi.key not in table.pod_row]
        if nominated:
            items.append((i, nominated))
    return fw.apply_nominated_pods(state, pod, chunk, items)


def _next_chunk_size(size: int, pos: int, found: int, num_to_find: int, n: int) -> int:
    """Size of the next chunk of nodes to filter: enough, at the pass rate seen so far, for the
    feasible nodes still missing (plus a margin), else double. Only the amount of work depends
    on it: evaluations past the ``num_to_find``-th feasible node are dropped either way."""
    if found < 16:  # too few to estimate the pass rate
        return min(size * 2, n)
    want = (num_to_find - found) * pos // found
    return max(64, min(want + want // 4 + 32, n))


def _filter_rows(fw: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis, rows: np.ndarray,
                 start: int, num_to_find: int) -> np.ndarray | Status:
    """``findNodesThatPassFilters`` over ``rows``: evaluate from ``start`` (wrapping) until
    ``num_to_find`` feasible nodes are found. Appends the evaluated chunks to ``diagnosis``.
    A Filter plugin's Error stops it: that Error status is returned instead of the rows."""
    n = len(rows)
    if n == 0:
        return rows
    start %= n
    if not fw.has_filter_plugins():
        idx = (start + np.arange(min(num_to_find, n))) % n
        return rows[idx]
    eq = fw.equivalence
    slot = eq.slot_for(state, pod) if eq is not None else None
    feasible: list[np.ndarray] = []
    found = 0
    pos = 0
    # a margin over num_to_find: a few more nodes cost less than a second pass of every plugin
    size = max(num_to_find + num_to_find // 8, 64)
    while pos < n and found < num_to_find:
        # nodes[(start + i) % n] for i in [pos, pos + size), without rotating the whole list
        a, b = start + pos, start + min(pos + size, n)
        if b <= n:
            segment = rows[a:b]
        elif a >= n:
            segment = rows[a - n:b - n]
        else:
            segment = np.concatenate((rows[a:], rows[:b - n]))
        if slot is None:
            chunk = fw.run_filter_plugins(state, pod, segment)
        else:
            assert eq is not None
            chunk = eq.run_filter_plugins(fw, state, pod, segment, slot)
        if isinstance(chunk, Status):
            return chunk
        err = _apply_nominated_pods(fw, state, pod, chunk)
        if err is not None:
            return err
        ok = chunk.ok_mask()
        n_ok = int(count_nonzero(ok))
        if found + n_ok > num_to_find:
            # keep the evaluations up to and including the num_to_find-th feasible node
            cut = int(flatnonzero(ok)[num_to_find - found - 1]) + 1
            chunk = chunk.truncate(cut)
            ok = ok[:cut]
            n_ok = num_to_find - found
        diagnosis.chunks.append(chunk)
        if n_ok:
            feasible.append(chunk.rows[ok])
        found += n_ok
        pos += size
        size = _next_chunk_size(size, pos, found, num_to_find, n)
    if not feasible:
        return rows[:0]
    return feasible[0] if len(feasible) == 1 else np.concatenate(feasible)


def schedule_pod(fw: Framework, state: CycleState, pod: Pod, table: NodeTable, sampler: Sampler,
                 rng: np.random.Generator, *, has_extender_filters: bool = False,
                 record: bool = True, extenders: Sequence[Extender] = (), signature: bytes | None = None,
                 cycle: int = 0, placement_rows: np.ndarray | None = None) -> ScheduleResult | Status:
    """Pick a node for ``pod`` (upstream ``schedulePod`` + ``findNodesThatFitPod``).

    With OpportunisticBatching (``fw.batch``; v1.37.2 schedule_one.go L596-619, L656-676) the
    batch cache is asked for a node hint after PreFilter (``signature``: the queued pod's
    signature, ``cycle``: the queue's scheduling cycle); the hint is tried like a nominated node
    (a real nominated node takes precedence) and, if it passes every filter, is the result
    without scoring; every success is stored back (:mod:`kubesched.framework.batch`).

    ``extenders`` are consulted after the Filter plugins (filter verbs, in order, each on the
    survivors of the previous one) and after the Score plugins (prioritize verbs, concurrently);
    ``has_extender_filters`` is implied by an extender with a filter verb.

    ``placement_rows`` (a pod-group cycle's placement, TopologyAwareWorkloadScheduling): the
    candidate nodes in ``order()`` order (upstream ``ListNodesInPlacement``/``GetNodeInPlacement``);
    plugins still see every node.

    Returns the :class:`ScheduleResult`, or the failure as a Status, as upstream's
    ``schedulingCycle`` turns ``schedulePod``'s error into one:

    * no node fits → ``Unschedulable`` whose ``error`` is the :class:`FitError` (its diagnosis
      carries the per-node statuses; ``message()`` is the FailedScheduling text);
    * empty cluster → ``UnschedulableAndUnresolvable`` with :class:`NoNodesAvailable`;
    * a PreFilter, Filter, PreScore or Score plugin error → the ``Error`` status;
    * an extender filter error (not ignorable) → an ``Error`` status with its message.
    """
    if extenders:
        has_extender_filters = has_extender_filters or any(e.is_filter() for e in extenders)
    order = table.order() if placement_rows is None else placement_rows
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

    batch = getattr(fw, "batch", None)
    hint = ""
    if batch is not None:
        if not fw.handle.features.at_least(1, 36):
            signature = fw.sign_pod(pod)  # 1.35 signed the pod in GetNodeHint
        hint = batch.get_node_hint(pod, signature, state, cycle)

    # a nominated node (from an earlier preemption) is tried first (upstream evaluateNominatedNode);
    # the batch's hint likewise when there is none
    nnn = pod.status.nominated_node_name or hint
    nominated_chunk: FilterChunk | None = None
    if nnn and nnn in table.row_of and (placement_rows is None or table.row_of[nnn] in placement_rows):
        row = np.asarray([table.row_of[nnn]], np.int64)
        ran = fw.run_filter_plugins(state, pod, row)
        chunk = None
        if not isinstance(ran, Status) and _apply_nominated_pods(fw, state, pod, ran) is None:
            chunk = ran  # an Error: upstream only logs it here and goes on with all nodes
        if chunk is not None:
            if chunk.fail_plugin[0] == chunk.PASSED:
                if not extenders:
                    if batch is not None:
                        batch.store_schedule_results(signature, hint, nnn, None, cycle)
                    return ScheduleResult(nnn, 1, 1, [chunk])
                try:
                    passed = find_nodes_that_pass_extenders(extenders, pod, row, diagnosis, table)
                except ExtenderError:
                    passed = row[:0]  # upstream only logs an error here and goes on with all nodes
                if len(passed):
                    if batch is not None:
                        batch.store_schedule_results(signature, hint, nnn, None, cycle)
                    return ScheduleResult(nnn, 1, 1, [chunk])
            # upstream records the node's status in the cycle's NodeToStatus right away; the pass
            # below overwrites it (same result) only if it reaches the node
            nominated_chunk = chunk

    rows = order
    if pre_res is not None and not pre_res.all_nodes():
        rows = table.rows_for_names(pre_res.node_names)
        if placement_rows is not None:
            rows = rows[np.isin(rows, placement_rows)]
        diagnosis.absent_status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
            f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]",))

    num_to_find = num_feasible_nodes_to_find(fw.percentage_of_nodes_to_score, len(rows))
    has_scoring = fw.has_score_plugins() or any(e.is_prioritizer() for e in extenders)
    if not has_extender_filters and not has_scoring:
        num_to_find = 1
    start = sampler.next_start_node_index
    feasible = _filter_rows(fw, state, pod, diagnosis, rows, start, num_to_find)
    if isinstance(feasible, Status):  # a Filter plugin's Error: the cycle returns it
        return feasible
    if nominated_chunk is not None:
        nominated_row = int(nominated_chunk.rows[0])
        if not any(bool((c.rows == nominated_row).any()) for c in diagnosis.chunks):
            diagnosis.chunks.append(nominated_chunk)
    explicit = diagnosis.num_explicit()
    sampler.next_start_node_index = (start + len(feasible) + explicit) % num_all

    if extenders and len(feasible):
        try:
            after = find_nodes_that_pass_extenders(extenders, pod, feasible, diagnosis, table)
        except ExtenderError as e:
            return Status(Code.ERROR, (str(e),), e)
        if len(after) != len(feasible):
            # extenders cannot tell which events may help: any cluster event requeues the pod
            diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
        feasible = after
        explicit = diagnosis.num_explicit()

    if len(feasible) == 0:
        diagnosis.collect_plugins()
        return _fit_error(pod, num_all, diagnosis)
    chunks = diagnosis.chunks
    if len(feasible) == 1:
        if batch is not None:
            batch.store_schedule_results(signature, hint, table.names[int(feasible[0])], None, cycle)
        return ScheduleResult(table.names[int(feasible[0])], 1 + explicit, 1, chunks,
                              extender_statuses=diagnosis.extra_statuses)

    st = fw.run_pre_score_plugins(state, pod, feasible)
    if st is not None and not st.is_success():
        return st
    scores: ScoreResult | None = None
    batching = batch is not None and signature is not None
    if fw.has_score_plugins():
        scores, st = fw.run_score_plugins(state, pod, feasible, keep=record or batching)
        if st is not None:
            return st
        assert scores is not None
        total = scores.total
    else:
        total = np.ones(len(feasible), np.int64)
    named: np.ndarray | None = None
    heap_order = fw.handle.features.at_least(1, 35)
    if extenders:
        scores, total, named = _prioritize_with_extenders(extenders, pod, feasible, table, scores, total, record,
                                                          randomize=heap_order)
    if heap_order:
        # v1.35+: heap order; Randomizer = rand.Int() only for nodes extenders scored
        randomizer = None
        if named is not None and named.any():
            randomizer = np.zeros(len(feasible), np.int64)
            randomizer[named] = rng.integers(0, 2**63 - 1, size=int(np.count_nonzero(named)), dtype=np.int64)
        if batching:
            # the whole heap: what is left after the first pop is the batch's next state
            heap = _scored_heap(table, feasible, scores, total, randomizer)
            chosen = heap.pop().name
            assert batch is not None
            batch.store_schedule_results(signature, hint, chosen, heap, cycle)
            return ScheduleResult(chosen, len(feasible) + explicit, len(feasible), chunks, scores,
                                  diagnosis.extra_statuses)
        pick = heap_top(total, randomizer)
        if batch is not None:  # an unsignable pod: the state is dropped
            batch.store_schedule_results(None, hint, table.names[int(feasible[pick])], None, cycle,
                                         num_other=len(feasible) - 1)
    else:
        best = flatnonzero(total == amax(total))
        pick = int(best[0]) if len(best) == 1 else int(best[int(rng.integers(len(best)))])
    return ScheduleResult(table.names[int(feasible[pick])], len(feasible) + explicit,
                          len(feasible), chunks, scores, diagnosis.extra_statuses)


def _scored_heap(table: NodeTable, feasible: np.ndarray, scores: ScoreResult | None, total: np.ndarray,
                 randomizer: np.ndarray | None) -> ScoredNodeHeap:
    """Upstream ``NewSortedScoredNodes(priorityList)`` (schedule_one.go L613) over the feasible
    nodes in order, each with its raw Score() per plugin (the batch re-normalises them)."""
    raws = list(zip(scores.plugins, scores.raw)) if scores is not None else []
    rnd = randomizer.tolist() if randomizer is not None else [0] * len(feasible)
    entries = [NodePluginScores(table.names[r], [(n, int(v[i])) for n, v in raws], int(t), int(x))
               for i, (r, t, x) in enumerate(zip(feasible.tolist(), total.tolist(), rnd))]
    return ScoredNodeHeap(entries)


def find_nodes_that_pass_extenders(extenders: Sequence[Extender], pod: Pod, feasible: np.ndarray,
                                   diagnosis: Diagnosis, table: NodeTable) -> np.ndarray:
    """Upstream ``findNodesThatPassExtenders``: each interested extender with a filter verb, in
    order, filters the survivors of the previous one. ``failedAndUnresolvableNodes`` become
    UnschedulableAndUnresolvable statuses, ``failedNodes`` (not also in the former)
    Unschedulable ones, both without a plugin, in ``diagnosis.extra_statuses`` (upstream
    ``NodeToStatus.Set``; only names of nodes the scheduler knows are kept). Returns the rows
    that passed, in their order.

    Raises:
        ExtenderError: an extender that is not ignorable failed.
    """
    rows = feasible
    for ext in extenders:
        if len(rows) == 0:
            break
        if not ext.is_interested(pod) or not ext.is_filter():
            continue
        nodes = [table.nodes[r] for r in rows.tolist()]
        try:
            try:
                passed, failed, unresolvable = ext.filter(pod, nodes)
            except ExtenderError:
                raise
            except Exception as e:  # a malformed answer or a crashing client is an extender error
                raise ExtenderError(f"extender {ext.name()}: {type(e).__name__}: {e}") from e
        except ExtenderError:
            if ext.is_ignorable():
                continue
            raise
        for name, msg in unresolvable.items():
            if name in table.row_of:
                diagnosis.extra_statuses[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,))
        for name, msg in failed.items():
            if name not in unresolvable and name in table.row_of:
                diagnosis.extra_statuses[name] = Status(Code.UNSCHEDULABLE, (msg,))
        keep = {n.metadata.name for n in passed}
        rows = np.asarray([r for r in rows.tolist() if table.names[r] in keep], np.int64)
    return rows


_PRIORITIZE_POOL: ThreadPoolExecutor | None = None


def _prioritize_pool() -> ThreadPoolExecutor:
    global _PRIORITIZE_POOL
    if _PRIORITIZE_POOL is None:
        _PRIORITIZE_POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="kubesched-extender")
    return _PRIORITIZE_POOL


def _prioritize_with_extenders(extenders: Sequence[Extender], pod: Pod, feasible: np.ndarray, table: NodeTable,
                               scores: ScoreResult | None, total: np.ndarray, record: bool,
                               randomize: bool = False) -> tuple[ScoreResult | None, np.ndarray, np.ndarray]:
    """The extender half of upstream ``prioritizeNodes``: every interested extender's
    Prioritize (concurrently when there are several), ``score × weight × (MAX_NODE_SCORE /
    MAX_EXTENDER_PRIORITY)`` added to the nodes it names; an extender that fails adds nothing
    (upstream logs and ignores it). With ``record`` each extender appears in the returned
    :class:`ScoreResult` as a "plugin" named after it (raw = its score, weighted = what was added).

    Also returns ``named`` (``bool[len(feasible)]``): the nodes some extender's answer named,
    which get a random ``Randomizer`` since v1.35 (schedule_one.go L1039-1047). With
    ``randomize`` (v1.35+) interested extenders without a prioritize verb are asked too: upstream
    calls every interested extender, and ``HTTPExtender.Prioritize`` answers score 0 for every
    node without one (extender.go L328-334), which names them all.
    """
    named = np.zeros(len(feasible), bool)
    index = {table.names[r]: i for i, r in enumerate(feasible.tolist())}
    if randomize:
        # an extender without a prioritize verb adds nothing, but its answer names nodes
        for e in extenders:
            if e.is_interested(pod) and not e.is_prioritizer():
                try:
                    hosts = e.prioritize(pod, [table.nodes[r] for r in feasible.tolist()])[0]
                except Exception:  # noqa: BLE001 - a failing extender names no node (upstream ignores it)
                    continue
                for host, _ in hosts:
                    i = index.get(host)
                    if i is not None:
                        named[i] = True
    # an extender without a prioritize verb scores 0 everywhere (upstream calls it for nothing)
    interested = [e for e in extenders if e.is_prioritizer() and e.is_interested(pod)]
    if not interested:
        return scores, total, named
    nodes = [table.nodes[r] for r in feasible.tolist()]

    def call(e: Extender) -> tuple[list[tuple[str, int]], int] | None:
        try:
            return e.prioritize(pod, nodes)
        except ExtenderError:
            return None
        except Exception:  # noqa: BLE001 - a crashing extender client is an extender error, ignored here
            return None

    if len(interested) == 1:
        results = [call(interested[0])]
    else:
        results = list(_prioritize_pool().map(call, interested))
    total = total.copy()
    scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
    for ext, res in zip(interested, results):
        if res is None:
            continue
        priorities, weight = res
        raw = np.zeros(len(feasible), np.int64)
        added = np.zeros(len(feasible), np.int64)
        for host, score in priorities:
            i = index.get(host)
            if i is None:
                continue
            named[i] = True
            raw[i] += score
            added[i] += score * weight * scale
        total += added
        if record:
            if scores is None:
                scores = ScoreResult(feasible, [], [], [], [], total)
            scores.plugins.append(ext.name())
            scores.raw.append(raw)
            scores.normalized.append(raw * scale)
            scores.weighted.append(added)
    if scores is not None:
        scores.total = total
    return scores, total, named


def _fit_error(pod: Pod, num_all: int, diagnosis: Diagnosis) -> Status:
    """Upstream ``NewStatus(Unschedulable).WithError(fitError)``."""
    return Status(Code.UNSCHEDULABLE, (), FitError(pod_key(pod), num_all, diagnosis))
