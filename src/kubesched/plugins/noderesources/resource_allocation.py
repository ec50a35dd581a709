"""Shared scoring machinery of NodeResourcesFit and NodeResourcesBalancedAllocation.

Follows upstream ``pkg/scheduler/framework/plugins/noderesources/resource_allocation.go``,
``least_allocated.go``, ``most_allocated.go``, ``requested_to_capacity_ratio.go`` and
``plugins/helper/shape_score.go`` (v1.34).

Per configured resource ``i`` (name ``n``, weight ``w``) and node, upstream builds
``(allocatable, requested)``:

* the pod's request ``p``: with ``use_requested`` false (Fit) cpu/memory are the *non-zero*
  requests (100m / 200Mi per container without one), everything else the real request;
  with ``use_requested`` true (BalancedAllocation) the real requests;
* a scalar resource (extended, hugepages-*, ``*kubernetes.io/*``, attachable-volumes-*) the pod
  does not request is skipped (``(0, 0)``);
* cpu/memory: ``allocatable``, node's NonZeroRequested (or Requested) + ``p``;
  ephemeral-storage: node's Requested + ``p``; scalars: node's Requested + ``p``;
  any other name (``pods``, unqualified names) is skipped;
* a resource whose allocatable is 0 on the node is skipped by every scorer.

All integer arithmetic is Go's int64 arithmetic: division truncates toward zero
(:func:`go_div`), ``math.Round`` rounds half away from zero (:func:`go_round`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.resources import is_pod_level_requests_set, pod_non_zero_requests, pod_requests
from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.framework.npfast import count_nonzero
from kubesched.plugins.helper.resourcenames import is_extended_resource_name, is_scalar_resource_name

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = [
    "BALANCED",
    "LEAST_ALLOCATED",
    "MAX_CUSTOM_PRIORITY_SCORE",
    "MAX_UTILIZATION",
    "MOST_ALLOCATED",
    "REQUESTED_TO_CAPACITY_RATIO",
    "ResourceAllocationScorer",
    "balanced_resource_score",
    "balanced_resource_scorer",
    "broken_linear",
    "go_div",
    "go_round",
    "is_extended_resource_name",
    "is_scalar_resource_name",
    "least_requested_score",
    "most_requested_score",
    "pod_request_vector",
]

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
BALANCED = "NodeResourcesBalancedAllocation"
#: ``config.MaxCustomPriorityScore``: shape scores are 0-10 and scaled by 100/10.
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100

_CPU, _MEMORY, _EPHEMERAL = "cpu", "memory", "ephemeral-storage"


# ───────────────────────────── Go arithmetic ─────────────────────────────


def go_div(a: Any, b: Any) -> Any:
    """Go's integer division (truncates toward zero), for ints or int64 arrays.

    ``b`` must be non-zero (arrays: everywhere the result is used; zero divisors give 0).
    """
    if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
        q = abs(int(a)) // abs(int(b))
        return q if (a < 0) == (b < 0) else -q
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe)
    return np.where((a < 0) != (safe < 0), -q, q)


def go_round(x: Any) -> Any:
    """Go's ``math.Round``: half away from zero (Python's ``round`` is half-to-even)."""
    if isinstance(x, (float, int, np.floating)):
        t = int(x)  # truncates toward zero, as math.trunc
        return t + (1 if x - t >= 0.5 else -1 if x - t <= -0.5 else 0)
    x = np.asarray(x, np.float64)
    t = np.trunc(x)
    d = x - t
    return (t + np.where(d >= 0.5, 1.0, np.where(d <= -0.5, -1.0, 0.0)))


# ───────────────────────────── per-resource scores (scalar, reference shape) ─────────────────────────────


def least_requested_score(requested: int, capacity: int) -> int:
    """``(capacity - requested) * 100 / capacity``; 0 when capacity is 0 or exceeded."""
    if capacity == 0 or requested > capacity:
        return 0
    return go_div((capacity - requested) * MAX_NODE_SCORE, capacity)


def most_requested_score(requested: int, capacity: int) -> int:
    """``min(requested, capacity) * 100 / capacity``; 0 when capacity is 0."""
    if capacity == 0:
        return 0
    return go_div(min(requested, capacity) * MAX_NODE_SCORE, capacity)


def broken_linear(shape: Sequence[tuple[int, int]], p: int) -> int:
    """Upstream ``helper.BuildBrokenLinearFunction``: ``shape`` is ``[(utilization, score)]``
    ascending; constant before the first and after the last point, linear (Go integer
    division) in between."""
    for i, (u, s) in enumerate(shape):
        if p <= u:
            if i == 0:
                return s
            pu, ps = shape[i - 1]
            return ps + go_div((s - ps) * (p - pu), u - pu)
    return shape[-1][1]


def _broken_linear_array(shape: Sequence[tuple[int, int]], p: np.ndarray) -> np.ndarray:
    out = np.full(p.shape, shape[-1][1], np.int64)
    for i in range(len(shape) - 1, -1, -1):  # earlier segments win, as the Go loop's early return
        u, s = shape[i]
        if i == 0:
            val = np.full(p.shape, s, np.int64)
        else:
            pu, ps = shape[i - 1]
            val = ps + go_div((s - ps) * (p - pu), np.int64(u - pu))
        out = np.where(p <= u, val, out)
    return out


def balanced_resource_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """Upstream ``balancedResourceScorer``: fractions ``min(req/alloc, 1)`` of the resources with
    allocatable > 0; std = ``|f1-f2|/2`` for two, population std for more, 0 otherwise;
    ``int64((1 - std) * 100)``."""
    fractions: list[float] = []
    total = 0.0
    for r, a in zip(requested, allocatable):
        if a == 0:
            continue
        f = float(r) / float(a)
        if f > 1:
            f = 1.0
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))


def balanced_resource_scorer(requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int],
                             *, with_delta: bool = True) -> int:
    """Upstream ``balancedResourceScorer`` (v1.37.2 ``balanced_allocation.go`` L204-218, since
    v1.36): ``50 + (50 + with - without) / 2`` in Go integer division, where ``with`` is
    :func:`balanced_resource_score` of the node's requests plus the pod's and ``without`` of the
    node's requests alone (``allocated``). ``with_delta=False`` is the v1.34/v1.35 scorer, the
    score with the pod only."""
    score_with = balanced_resource_score(requested, allocatable)
    if not with_delta:
        return score_with
    score_without = balanced_resource_score(allocated, allocatable)
    half = MAX_NODE_SCORE // 2
    return half + go_div(half + score_with - score_without, 2)


# ───────────────────────────── the scorer ─────────────────────────────


def pod_request_vector(state: CycleState | None, pod: Pod, names: Sequence[str], use_requested: bool,
                       pod_level_resources: bool = True) -> list[int]:
    """Upstream ``calculatePodResourceRequestList``: the pod's request of each resource in
    ``names`` (cpu in millicores), non-zero cpu/memory unless ``use_requested``.

    ``pod_level_resources`` False is upstream's ``SkipPodLevelResources`` (resource_allocation.go
    L236-262): ``spec.resources.requests`` are ignored and the containers' requests (+ overhead,
    100m / 200Mi for a container without a cpu / memory request unless ``use_requested``) count.
    Uses the cycle's ``PodInfo`` (requests computed once per pod) when it is this pod's.
    """
    pi = state.pod_info if state is not None else None
    if pi is not None and pi.pod is pod:
        derived = pi.container_requests if not pod_level_resources else None  # None: no pod-level requests
        if derived is not None:
            reqs, nz_cpu, nz_mem = derived
        else:
            reqs, nz_cpu, nz_mem = pi.requests, pi.non_zero_cpu, pi.non_zero_memory
    elif not pod_level_resources and is_pod_level_requests_set(pod):
        reqs = pod_requests(pod, skip_pod_level_resources=True)
        nz_cpu, nz_mem = (pod_non_zero_requests(pod, skip_pod_level_resources=True)
                          if not use_requested else (0, 0))
    else:
        reqs = pod_requests(pod)
        nz_cpu, nz_mem = pod_non_zero_requests(pod) if not use_requested else (0, 0)
    out = []
    for n in names:
        if not use_requested and n == _CPU:
            out.append(nz_cpu)
        elif not use_requested and n == _MEMORY:
            out.append(nz_mem)
        else:
            out.append(reqs.get(n, 0))
    return out


@dataclass(frozen=True, slots=True)
class _Term:
    """One resource that may be scored: ``kind`` 0 cpu, 1 memory, 2 ephemeral, 3 scalar."""

    index: int
    name: str
    kind: int
    pod_request: int


@dataclass(frozen=True, slots=True)
class PreScoreState:
    """What Fit's and BalancedAllocation's PreScore compute once per cycle (each under its own
    key): the pod's request per scored resource and the scorer's per-resource terms."""

    pod_requests: tuple[int, ...]
    terms: tuple[Any, ...]
    dra: Any = None
    """DRAExtendedResource: a :class:`~kubesched.plugins.helper.extendedresources.DRAScoreState`
    when a scored resource is a DeviceClass-mapped extended resource (upstream ``draPreScoreState``)."""

    def clone(self) -> PreScoreState:
        return self


class ResourceAllocationScorer:
    """Upstream ``resourceAllocationScorer``: ``resources`` are ``(name, weight)`` pairs;
    ``strategy`` one of LeastAllocated, MostAllocated, RequestedToCapacityRatio or
    :data:`BALANCED`; ``shape`` the RequestedToCapacityRatio points ``(utilization, score)``
    with scores already on the 0-100 scale.

    ``pod_level_resources``: the scorer's own ``enablePodLevelResources`` (False for Fit's
    scorer in every version: upstream never sets it, v1.37.2 fit.go L65-89 / L207-259, so the
    incoming pod's pod-level requests are ignored when scoring; BalancedAllocation sets it).
    ``balanced_delta``: BalancedAllocation's v1.36+ formula (:func:`balanced_resource_scorer`).
    """

    def __init__(self, strategy: str, resources: Sequence[tuple[str, int]], *, use_requested: bool = False,
                 shape: Sequence[tuple[int, int]] = (), pod_level_resources: bool = True,
                 balanced_delta: bool = False) -> None:
        self.strategy = strategy
        self.names = [n for n, _ in resources]
        self.weights = [int(w) for _, w in resources]
        self.use_requested = use_requested
        self.pod_level_resources = pod_level_resources
        self.balanced_delta = balanced_delta
        self.shape = [(int(u), int(s)) for u, s in shape]
        if strategy == REQUESTED_TO_CAPACITY_RATIO and not self.shape:
            raise ValueError("RequestedToCapacityRatio needs a shape")
        self._terms_memo: dict[tuple[int, ...], tuple[_Term, ...]] = {}

    # ── per cycle ──

    def pod_requests(self, state: CycleState | None, pod: Pod) -> list[int]:
        return pod_request_vector(state, pod, self.names, self.use_requested, self.pod_level_resources)

    def terms(self, pod_requests: Sequence[int]) -> list[_Term]:
        """The resources that can contribute for this pod (the rest are skipped on every node)."""
        out = []
        for i, (n, p) in enumerate(zip(self.names, pod_requests)):
            if n == _CPU:
                out.append(_Term(i, n, 0, p))
            elif n == _MEMORY:
                out.append(_Term(i, n, 1, p))
            elif n == _EPHEMERAL:
                out.append(_Term(i, n, 2, p))
            elif is_scalar_resource_name(n) and p != 0:
                out.append(_Term(i, n, 3, p))
            # else: scalar not requested, or not a schedulable resource name → (0, 0)
        return out

    def terms_for(self, pod_requests: Sequence[int]) -> tuple[_Term, ...]:
        """:meth:`terms` as a tuple, remembered per request vector (pods of one template ask
        for the same amounts; the terms depend on nothing else)."""
        key = tuple(pod_requests)
        out = self._terms_memo.get(key)
        if out is None:
            if len(self._terms_memo) >= 1024:
                self._terms_memo.clear()
            out = self._terms_memo[key] = tuple(self.terms(key))
        return out

    # ── per node (reference) ──

    def score_node(self, node_info: NodeInfo, pod_requests: Sequence[int], dra: Any = None) -> int:
        """Upstream ``resourceAllocationScorer.score`` for one node. Raises ``ValueError`` when no
        resources are configured (upstream: Error "resources not found"). ``dra``: a
        ``DRAScoreState`` — a scalar resource the node has 0 allocatable of is scored on the
        devices of its DeviceClass there (v1.37.2 ``resource_allocation.go`` L216-226)."""
        if not self.names:
            raise ValueError("resources not found")
        alloc_r = node_info.allocatable
        req_r = node_info.requested
        nz_r = node_info.non_zero_requested
        cpu_mem = req_r if self.use_requested else nz_r
        k = len(self.names)
        requested = [0] * k
        allocated = [0] * k
        allocatable = [0] * k
        for t in self.terms(pod_requests):
            if t.kind == 0:
                a, r = alloc_r.milli_cpu, cpu_mem.milli_cpu + t.pod_request
            elif t.kind == 1:
                a, r = alloc_r.memory, cpu_mem.memory + t.pod_request
            elif t.kind == 2:
                a, r = alloc_r.ephemeral_storage, req_r.ephemeral_storage + t.pod_request
            else:
                if dra is not None and not alloc_r.scalar_resources.get(t.name, 0):
                    da, dused = dra.totals(node_info.node, t.name)
                    if da > 0:
                        allocatable[t.index] = da
                        requested[t.index] = dused + t.pod_request
                        allocated[t.index] = dused
                        continue
                if t.name not in alloc_r.scalar_resources:
                    continue
                a, r = alloc_r.scalar_resources[t.name], req_r.scalar_resources.get(t.name, 0) + t.pod_request
            if a == 0:
                continue
            allocatable[t.index] = a
            requested[t.index] = r
            allocated[t.index] = r - t.pod_request
        return self.combine(requested, allocatable, allocated)

    def combine(self, requested: Sequence[int], allocatable: Sequence[int],
                allocated: Sequence[int] | None = None) -> int:
        """The strategy's scorer over per-resource ``(requested, allocatable)`` (0 = skipped);
        ``allocated`` (the node's requests without the pod) is read by the v1.36+ balanced
        formula only."""
        if self.strategy == BALANCED:
            return balanced_resource_scorer(requested, allocated if allocated is not None else requested,
                                            allocatable, with_delta=self.balanced_delta)
        node_score = weight_sum = 0
        for r, a, w in zip(requested, allocatable, self.weights):
            if a == 0:
                continue
            if self.strategy == LEAST_ALLOCATED:
                s = least_requested_score(r, a)
            elif self.strategy == MOST_ALLOCATED:
                s = most_requested_score(r, a)
            else:
                util = MAX_UTILIZATION if r > a else go_div(r * MAX_UTILIZATION, a)
                s = broken_linear(self.shape, util)
                if s <= 0:
                    continue
            node_score += s * w
            weight_sum += w
        if weight_sum == 0:
            return 0
        if self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            return int(go_round(float(node_score) / float(weight_sum)))
        return go_div(node_score, weight_sum)

    # ── placements (TopologyAwareWorkloadScheduling) ──

    def score_placement_rows(self, nodes: NodeTable, rows: np.ndarray, group_requests: Sequence[int]) -> int:
        """Upstream ``resourceAllocationScorer.scorePlacement`` (v1.37.2 resource_allocation.go
        L505-545) over the placement's ``rows``: per scored resource, ``allocatable`` = the sum of the
        nodes' allocatable and ``requested`` = ``group_requests`` (the proposed members' requests,
        summed) + the sum of the nodes' requests (NonZeroRequested for cpu/memory unless
        ``use_requested``; Requested for ephemeral-storage and scalars), counting only nodes where
        the resource's allocatable is non-zero; a scalar resource the group does not request is
        skipped, as is any other name; then the strategy's scorer over those sums (upstream only
        builds a MostAllocated one). No DRA-backed extended resources (upstream passes no
        ``draPreScoreState``)."""
        k = len(self.names)
        requested = [int(v) for v in group_requests]
        allocatable = [0] * k
        alloc_m = nodes.allocatable
        req_m = nodes.requested
        for t in self.terms(requested):
            if t.kind == 0 or t.kind == 1:
                a = alloc_m[:, t.kind][rows]
                base = req_m[:, t.kind][rows] if self.use_requested else nodes.non_zero_requested[:, t.kind][rows]
            else:
                col = nodes.EPHEMERAL_STORAGE if t.kind == 2 else nodes.resource_index.get(t.name)
                if col is None:
                    continue  # no node has it: allocatable 0 everywhere
                a = alloc_m[:, col][rows]
                base = req_m[:, col][rows]
            has = a != 0
            allocatable[t.index] = int(a[has].sum())
            requested[t.index] += int(base[has].sum())
        return self.combine(requested, allocatable)

    # ── batch ──

    def score_rows(self, nodes: NodeTable, rows: np.ndarray, terms: Sequence[_Term], dra: Any = None) -> np.ndarray:
        """Vectorised :meth:`score_node` over ``rows`` (``int64[K]``) for precomputed ``terms``
        (``dra``: as there; the nodes with 0 allocatable of a mapped resource are counted one by one).

        One contiguous column gather per resource (cheaper than 2-D fancy indexing); nodes where
        a resource has allocatable 0 take a masked path, the common case does not.
        """
        if not self.names:
            raise ValueError("resources not found")
        k = len(rows)
        alloc_m = nodes.allocatable
        req_m = nodes.requested
        if (self.strategy == BALANCED and self.balanced_delta and self.use_requested and len(terms) == 2
                and terms[0].kind == 0 and terms[1].kind == 1):
            # cpu then memory (never DRA-mapped): the common default, gathered straight into place
            two = _balanced_delta_two_rows(alloc_m, req_m, rows, terms[0].pod_request, terms[1].pod_request)
            if two is not None:
                return two
        cols: list[tuple[int, np.ndarray, np.ndarray, bool]] = []  # (weight, allocatable, requested, all > 0)
        bases: list[np.ndarray] = []  # the node's requests without the pod (balanced delta)
        for t in terms:
            # m[:, c][rows]: a gather from one column, about twice as fast as m[rows, c]
            if t.kind == 0 or t.kind == 1:
                a = alloc_m[:, t.kind][rows]
                base = (req_m[:, t.kind][rows] if self.use_requested
                        else nodes.non_zero_requested[:, t.kind][rows])
            elif t.kind == 2:
                a = alloc_m[:, nodes.EPHEMERAL_STORAGE][rows]
                base = req_m[:, nodes.EPHEMERAL_STORAGE][rows]
            else:
                col = nodes.resource_index.get(t.name)
                mapped = dra is not None and dra.maps(t.name)
                if col is None and not mapped:
                    continue  # no node has it: allocatable 0 everywhere, skipped
                if col is None:
                    a = np.zeros(k, np.int64)
                    base = np.zeros(k, np.int64)
                else:
                    a = alloc_m[:, col][rows]
                    base = req_m[:, col][rows]
                if mapped:
                    a, base = a.copy(), base.copy()
                    table_nodes = nodes.nodes
                    for i in np.flatnonzero(a == 0).tolist():
                        da, dused = dra.totals(table_nodes[int(rows[i])], t.name)
                        if da > 0:
                            a[i], base[i] = da, dused
            bases.append(base)
            if t.pod_request:
                base = base + t.pod_request
            cols.append((self.weights[t.index], a, base, count_nonzero(a) == k))
        if self.strategy == BALANCED:
            if self.balanced_delta and len(cols) == 2 and cols[0][3] and cols[1][3]:
                return _balanced_delta_two(cols[0][1], cols[1][1], cols[0][2], cols[1][2], bases[0], bases[1])
            with_pod = _balanced_rows(k, cols)
            if not self.balanced_delta:
                return with_pod
            without = _balanced_rows(k, [(w, a, b, has) for (w, a, _, has), b in zip(cols, bases)])
            half = MAX_NODE_SCORE // 2
            return half + go_div(half + with_pod - without, 2)
        if not cols:
            return np.zeros(k, np.int64)
        node_score: np.ndarray | int = 0
        weight_sum: np.ndarray | int = 0
        exact = True  # weight_sum is the same scalar for every node
        for w, a, r, has_all in cols:
            safe = a if has_all else np.where(a != 0, a, 1)
            if self.strategy == LEAST_ALLOCATED:
                # (a - r) * 100 // a is exact for r <= a and negative otherwise: clamping at 0
                # is upstream's "0 when requested > capacity"
                s = np.maximum((safe - r) * MAX_NODE_SCORE // safe, 0)
            elif self.strategy == MOST_ALLOCATED:
                s = np.minimum(r, safe) * MAX_NODE_SCORE // safe
            else:
                util = np.where(r > safe, MAX_UTILIZATION, r * MAX_UTILIZATION // safe)
                s = _broken_linear_array(self.shape, util)
                has_all = False
                inc = (s > 0) if count_nonzero(a) == k else ((s > 0) & (a != 0))
            if has_all:
                node_score = node_score + (s if w == 1 else s * w)
                weight_sum = weight_sum + w
                continue
            if self.strategy != REQUESTED_TO_CAPACITY_RATIO:
                inc = a != 0
            exact = False
            node_score = node_score + np.where(inc, s * w, 0)
            weight_sum = weight_sum + np.where(inc, w, 0)
        if exact:
            # weights are validated > 0, so the sum is positive; cols is not empty, so
            # node_score is an array
            assert isinstance(node_score, np.ndarray)
            wsum = int(weight_sum)
            if wsum & (wsum - 1) == 0:  # a power of two: >> is numpy's floor division, and faster
                return node_score >> (wsum.bit_length() - 1)
            return node_score // wsum
        ws = np.asarray(weight_sum, np.int64)
        nonzero = ws != 0
        safe_ws = np.where(nonzero, ws, 1)
        if self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            out = go_round(np.asarray(node_score, np.float64) / safe_ws.astype(np.float64)).astype(np.int64)
        else:
            out = go_div(node_score, safe_ws)
        return np.where(nonzero, out, 0).astype(np.int64)


def _balanced_delta_two(a0: np.ndarray, a1: np.ndarray, with0: np.ndarray, with1: np.ndarray,
                        without0: np.ndarray, without1: np.ndarray) -> np.ndarray:
    """The v1.36+ balanced score (:func:`balanced_resource_scorer`) of two resources that every
    node has (allocatable ``a0``/``a1`` > 0, ``int64[K]``), the node's requests with the pod
    (``with0``/``with1``) and without (``without0``/``without1``): the same float64 operations,
    element by element, as two :func:`_balanced_rows` passes and ``go_div(50 + with - without,
    2)``, in a third of the numpy calls (the two passes run as one over stacked rows)."""
    f = np.concatenate((with0, without0, with1, without1)) / np.concatenate((a0, a0, a1, a1))
    return _balanced_delta_fracs(f, len(a0))


def _balanced_delta_two_rows(alloc_m: np.ndarray, req_m: np.ndarray, rows: np.ndarray, p0: int,
                             p1: int) -> np.ndarray | None:
    """:func:`_balanced_delta_two` of cpu (column 0) and memory (column 1) over ``rows`` of the
    table's ``allocatable`` / ``requested`` (``int64[cap, R]``), the pod requesting ``p0`` / ``p1``:
    the columns are gathered straight into one ``[[with0, without0], [with1, without1]]`` block
    and divided by ``[[a0], [a1]]`` broadcast (the same float64 divisions, without the
    intermediate arrays and concatenations). None when some node has 0 allocatable cpu or memory
    (then the general path applies)."""
    k = len(rows)
    # (np.take(column, rows, out=...) would be far slower: it copies the strided column first)
    den = np.empty((2, 1, k), np.int64)
    den[0, 0] = alloc_m[:, 0][rows]
    den[1, 0] = alloc_m[:, 1][rows]
    if count_nonzero(den) != 2 * k:
        return None
    num = np.empty((2, 2, k), np.int64)
    num[0, 1] = req_m[:, 0][rows]
    num[1, 1] = req_m[:, 1][rows]
    np.add(num[0, 1], p0, out=num[0, 0])
    np.add(num[1, 1], p1, out=num[1, 0])
    return _balanced_delta_fracs((num / den).reshape(4 * k), k)


def _balanced_delta_fracs(f: np.ndarray, k: int) -> np.ndarray:
    """The rest of :func:`_balanced_delta_two` from ``f`` = ``float64[4K]``, the fractions
    ``[with0, without0, with1, without1] / [a0, a0, a1, a1]`` (modified in place)."""
    np.minimum(f, 1.0, out=f)  # min(float64(req) / float64(alloc), 1)
    d = f[:2 * k] - f[2 * k:]
    d /= 2
    np.abs(d, out=d)  # std = |f0 - f1| / 2, [with the pod, without]
    np.subtract(1, d, out=d)
    d *= float(MAX_NODE_SCORE)
    score = d.astype(np.int64)  # each in [0, 100]
    x = score[:k] - score[k:]
    x += MAX_NODE_SCORE // 2
    # Go's x / 2 (truncation toward zero): floor division after adding 1 to a negative x
    return MAX_NODE_SCORE // 2 + ((x - (x >> 63)) >> 1)


def _balanced_rows(k: int, cols: list[tuple[int, np.ndarray, np.ndarray, bool]]) -> np.ndarray:
    """Vectorised :func:`balanced_resource_score`; ``cols`` are ``(weight, alloc, requested, all>0)``."""
    t = len(cols)
    if t == 0:
        return np.full(k, MAX_NODE_SCORE, np.int64)
    if all(c[3] for c in cols):
        # every fraction is included on every node
        fracs = [np.minimum(r / a, 1.0) for _, a, r, _ in cols]  # float64(req) / float64(alloc)
        if t == 1:
            return np.full(k, MAX_NODE_SCORE, np.int64)
        if t == 2:
            std = np.abs((fracs[0] - fracs[1]) / 2)
        else:
            total = fracs[0]
            for f in fracs[1:]:  # Go's summation order
                total = total + f
            mean = total / t
            acc = np.zeros(k, np.float64)
            for f in fracs:
                d = f - mean
                acc = acc + d * d
            std = np.sqrt(acc / t)
        return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
    masks = [a != 0 for _, a, _, _ in cols]
    fracs = [np.where(m, np.minimum(r / np.where(m, a, 1), 1.0), 0.0) for m, (_, a, r, _) in zip(masks, cols)]
    count = np.zeros(k, np.int64)
    total = np.zeros(k, np.float64)
    first = np.zeros(k, np.float64)
    second = np.zeros(k, np.float64)
    for f, m in zip(fracs, masks):
        first = np.where(m & (count == 0), f, first)
        second = np.where(m & (count == 1), f, second)
        total = total + f  # + 0.0 where excluded: exact, keeps Go's summation order
        count = count + m
    std = np.zeros(k, np.float64)
    two = count == 2
    if two.any():
        std = np.where(two, np.abs((first - second) / 2), std)
    more = count > 2
    if more.any():
        n = np.where(more, count, 1).astype(np.float64)
        mean = total / n
        acc = np.zeros(k, np.float64)
        for f, m in zip(fracs, masks):
            d = f - mean
            acc = acc + np.where(m, d * d, 0.0)
        std = np.where(more, np.sqrt(acc / n), std)
    return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)


# ───────────────────────────── batching signature ─────────────────────────────

_SIGN_REFUSED_135 = "signature disabled when dra extended resources enabled"
_SIGN_REFUSED = "signature disabled when dra extended resources are used in the cluster"


def sign_resources(pod: Pod, handle: Any) -> tuple[list[tuple[str, Any]] | None, Any]:
    """``SignPod`` of NodeResourcesFit and NodeResourcesBalancedAllocation (v1.37.2 fit.go,
    balanced_allocation.go): the ``ContainerRequestsAndOverheads()`` fragment, the JSON of
    ``computePodResourceRequest`` (a ``framework.Resource``: MilliCPU, Memory, EphemeralStorage,
    AllowedPodNumber 0, ScalarResources — nil without scalar names). With DRAExtendedResource the
    pod is refused: since 1.36 when a non-zero scalar request is DRA-backed in the cluster, in 1.35
    always."""
    from kubesched.framework.interface import Code, Status
    from kubesched.framework.signers import RESOURCES_SIGNER_NAME, GoStruct
    from kubesched.plugins.helper.gates import features_of

    fg = features_of(handle)
    reqs = pod_requests(pod, skip_pod_level_resources=not fg.enabled("PodLevelResources"))
    scalars = {n: v for n, v in reqs.items() if n not in ("cpu", "memory", "ephemeral-storage")
               and is_scalar_resource_name(n)}
    if fg.enabled("DRAExtendedResource"):
        if not fg.at_least(1, 36):
            return None, Status(Code.UNSCHEDULABLE, (_SIGN_REFUSED_135,))
        # shouldDelegateResourceToDRA(name, nil, draManager) (fit.go L273-291): a DeviceClass maps the name
        from kubesched.plugins.helper.extendedresources import device_class_mapping

        mapping = device_class_mapping(getattr(handle, "lister", None))
        if any(v != 0 and n in mapping for n, v in scalars.items()):
            return None, Status(Code.UNSCHEDULABLE, (_SIGN_REFUSED,))
    value = GoStruct(MilliCPU=reqs.get("cpu", 0), Memory=reqs.get("memory", 0),
                     EphemeralStorage=reqs.get("ephemeral-storage", 0), AllowedPodNumber=0,
                     ScalarResources=scalars or None)
    return [(RESOURCES_SIGNER_NAME, value)], None
