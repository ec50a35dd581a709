"""NodeResourcesFit: does the node have room for the pod's requests? And how full is it?

Follows upstream ``pkg/scheduler/framework/plugins/noderesources/fit.go`` (v1.34 and v1.37.2, default
feature gates: PodLevelResources, InPlacePodVerticalScaling and SchedulingQueueHint on;
DRAExtendedResource from 1.36, below).

Filter (``fitsRequest``), in this order, all failing reasons in one status:

1. ``len(pods) + 1 > allocatable pods`` → "Too many pods";
2. if the pod requests nothing (cpu, memory, ephemeral-storage all 0 and no scalar resource), stop;
3. "Insufficient cpu" / "Insufficient memory" / "Insufficient ephemeral-storage" when the
   request is > 0 and exceeds ``allocatable - requested``;
4. each scalar resource (extended, hugepages-*, ``*kubernetes.io/*``) with a non-zero request,
   unless it is an *extended* resource named in ``ignoredResources`` or whose domain is in
   ``ignoredResourceGroups``: ``"Insufficient <name>"``. A node without the resource has 0.

The code is Unschedulable, or UnschedulableAndUnresolvable when some request alone exceeds the
node's allocatable (preemption cannot help; upstream PR #131345, in v1.34). Upstream iterates
the scalar resources in Go map order; here they are sorted by name.

DRAExtendedResource (off α 1.35, on β 1.36, GA 1.37; v1.37.2 fit.go L273-292, L782-784): a scalar
request that a DeviceClass maps (``spec.extendedResourceName`` or the implicit
``deviceclass.resource.kubernetes.io/<class>``, :mod:`kubesched.plugins.helper.extendedresources`)
is not checked on a node with 0 allocatable of it — DynamicResources allocates devices for it; the
node hint treats such a node as fitting; Score / BalancedAllocation count the node's devices of the
class for it (:class:`~kubesched.plugins.helper.extendedresources.DRAScoreState`).

Score (``resource_allocation.go``): LeastAllocated (default), MostAllocated or
RequestedToCapacityRatio over ``scoringStrategy.resources``; see
:mod:`kubesched.plugins.noderesources.resource_allocation`. PreScore never skips.

PlacementScore (TopologyAwareWorkloadScheduling, v1.37.2 fit.go L247-256, L867-875): a
MostAllocated score of a pod group's candidate placement over the sums of its nodes
(:meth:`Fit.score_placement`).

Upstream quirk kept (every version, v1.34.12 to v1.37.2; fit.go L65-89, L93-104, L207-259): the
scorer embedded in Fit never gets ``enablePodLevelResources``, so the *incoming* pod is scored
on its containers' requests (+ overhead, 100m / 200Mi defaults), ignoring
``spec.resources.requests``; the nodes' requested side (NodeInfo) and Filter honour pod-level
resources.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

# a module import: helper.extendedresources itself imports this package's resource_allocation
import kubesched.plugins.helper.extendedresources as _extres
from kubesched.api.objects import node_allocatable, pod_key
from kubesched.api.quantity import to_int
from kubesched.api.resources import pod_requests
from kubesched.config.args import NodeResourcesFitArgs
from kubesched.errors import ConfigError
from kubesched.framework.cycle_state import read_state
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interface import MAX_NODE_SCORE, Code, FilterResult, Status
from kubesched.framework.node_info import Resource
from kubesched.framework.npfast import count_nonzero
from kubesched.plugins.helper.gates import features_of
from kubesched.plugins.helper.resize import deferred_resize_enabled, is_pod_resize_deferred
from kubesched.plugins.noderesources.resource_allocation import (
    LEAST_ALLOCATED,
    MAX_CUSTOM_PRIORITY_SCORE,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    PreScoreState,
    ResourceAllocationScorer,
    is_extended_resource_name,
    is_scalar_resource_name,
    sign_resources,
)

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Node, Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_info import PodInfo
    from kubesched.framework.node_table import NodeInfo, NodeTable
    from kubesched.framework.podgroup import PlacementCycleState, PodGroupAssignments, PodGroupInfo

__all__ = [
    "ERR_REASON_TOO_MANY_PODS",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "Fit",
    "FitRequest",
    "InsufficientResource",
    "compute_fit_request",
    "fits",
    "fits_request",
    "insufficient_reason",
    "new",
]

NAME = "NodeResourcesFit"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_REASON_TOO_MANY_PODS = "Too many pods"

_CPU, _MEMORY, _EPHEMERAL, _PODS = "cpu", "memory", "ephemeral-storage", "pods"


def insufficient_reason(resource: str) -> str:
    """``fmt.Sprintf("Insufficient %v", name)``."""
    return f"Insufficient {resource}"


_FIXED_REASONS = {_CPU: "Insufficient cpu", _MEMORY: "Insufficient memory",
                  _EPHEMERAL: "Insufficient ephemeral-storage"}
_MAX_BIT_CHECKS = 31
"""Most checked resources whose reasons fit the bit-set FilterResult (1 + 2 × 31 = 63 bits)."""


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """Upstream ``InsufficientResource``: what did not fit. ``unresolvable`` is True when the
    request alone exceeds the node's allocatable (preemption cannot help)."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


@dataclass(frozen=True, slots=True)
class FitRequest:
    """The pod's request as Fit sees it (upstream ``preFilterState``: ``Resource.SetMaxResource``
    of ``PodRequests``). ``scalars`` holds the scalar resources only, sorted by name.

    ``checks`` are the ``(resource, request)`` pairs Filter compares, in upstream order (cpu,
    memory, ephemeral-storage, scalars), non-zero and not ignored; ``empty`` is upstream's
    "pod requests nothing" short-cut. ``reasons`` / ``codes`` are the batch Filter's bit layout
    (Too many pods, then U and UU per check); with more than 31 checks ``reasons`` is Too many
    pods then one reason per check and ``codes`` is empty (the Filter interns statuses).
    """

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    scalars: tuple[tuple[str, int], ...] = ()
    checks: tuple[tuple[str, int], ...] = ()
    empty: bool = True
    reasons: tuple[str, ...] = field(default=(), compare=False)
    codes: tuple[Code, ...] = field(default=(), compare=False)
    dra: frozenset[str] = frozenset()
    """DRAExtendedResource: checked names a DeviceClass maps — left to DynamicResources on a node
    whose allocatable of them is 0 (upstream ``shouldDelegateResourceToDRA``, fit.go L273-292)."""

    def clone(self) -> FitRequest:
        return self


def compute_fit_request(requests: dict[str, int], ignored_resources: frozenset[str] = frozenset(),
                        ignored_groups: frozenset[str] = frozenset()) -> FitRequest:
    """Build a :class:`FitRequest` from a ``pod_requests`` dict, honouring the ignore lists."""
    cpu = requests.get(_CPU, 0)
    mem = requests.get(_MEMORY, 0)
    eph = requests.get(_EPHEMERAL, 0)
    scalars = tuple(sorted((n, v) for n, v in requests.items() if n not in _FIXED_REASONS and n != _PODS
                           and is_scalar_resource_name(n)))
    checks: list[tuple[str, int]] = []
    if cpu > 0:
        checks.append((_CPU, cpu))
    if mem > 0:
        checks.append((_MEMORY, mem))
    if eph > 0:
        checks.append((_EPHEMERAL, eph))
    for n, v in scalars:
        if v == 0:
            continue
        if is_extended_resource_name(n) and (
                n in ignored_resources or (ignored_groups and n.split("/", 1)[0] in ignored_groups)):
            continue
        checks.append((n, v))
    empty = cpu == 0 and mem == 0 and eph == 0 and not scalars
    # Filter bit layout: 0 = Too many pods; then per check two bits (U, UU) so that the reason
    # order of a node's status stays upstream's. Beyond _MAX_BIT_CHECKS checks the batch Filter
    # interns the statuses instead (FilterResult.interned) and needs only the reason names.
    reasons = [ERR_REASON_TOO_MANY_PODS]
    codes = [Code.UNSCHEDULABLE]
    for n, _ in checks:
        r = _FIXED_REASONS.get(n) or insufficient_reason(n)
        if len(checks) > _MAX_BIT_CHECKS:
            reasons.append(r)
            continue
        reasons += [r, r]
        codes += [Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE]
    return FitRequest(cpu, mem, eph, scalars, tuple(checks), empty, tuple(reasons), tuple(codes))


def fits_request(req: FitRequest, allocatable: Resource, requested: Resource,
                 num_pods: int, cached: Mapping[str, int] | None = None) -> list[InsufficientResource]:
    """Upstream ``fitsRequest``: the resources that do not fit, in upstream order (empty = fits).

    ``allocatable`` / ``requested`` are the node's; ``num_pods`` the number of pods on it.
    ``cached``: the requests of the node's cached copy of the same pod (an assigned pod whose
    resize is deferred, InPlacePodVerticalScalingSchedulerPreemption): then only the delta
    ``max(0, request - cached)`` must fit what is free, and a scalar resource whose delta is 0
    is not checked (v1.37.2 fit.go L727-790 with ``adjustDeltasToAccomodateCacheDiscrepancy``
    L805-846); the reported request and ``unresolvable`` still use the whole request.
    """
    out: list[InsufficientResource] = []
    allowed = allocatable.allowed_pod_number
    if num_pods + 1 > allowed:
        out.append(InsufficientResource(_PODS, ERR_REASON_TOO_MANY_PODS, 1, num_pods, allowed))
    if req.empty:
        return out
    for name, q in req.checks:
        delta = q
        if cached is not None:
            delta = max(0, q - cached.get(name, 0))
            if delta == 0 and name not in _FIXED_REASONS:
                continue  # L767-770: a scalar's zero delta is skipped
        cap = allocatable.get(name)
        if cap == 0 and name in req.dra:
            continue  # v1.37.2 fit.go L782-784: the node has none, DRA provides it
        used = requested.get(name)
        if delta > cap - used:
            out.append(InsufficientResource(name, _FIXED_REASONS.get(name) or insufficient_reason(name),
                                            q, used, cap, q > cap))
    return out


def fits(pod_requests_: dict[str, int], node_info: NodeInfo,
         dra_mapping: Mapping[str, Any] | None = None) -> list[InsufficientResource]:
    """Upstream ``Fits``: does a pod with these requests fit ``node_info`` (no ignored resources)?
    ``dra_mapping``: the DeviceClass mapping when DRAExtendedResource is on (see :func:`with_dra`).
    Reusable by preemption."""
    return fits_request(with_dra(compute_fit_request(pod_requests_), dra_mapping), node_info.allocatable,
                        node_info.requested, len(node_info.pods))


def with_dra(req: FitRequest, dra_mapping: Mapping[str, Any] | None) -> FitRequest:
    """``req`` with :attr:`FitRequest.dra` set to its checked names that ``dra_mapping`` (resource
    name → DeviceClass, :func:`~kubesched.plugins.helper.extendedresources.device_class_mapping`)
    maps; unchanged without a mapping (the gate off)."""
    if not dra_mapping:
        return req
    names = frozenset(n for n, _ in req.checks if n in dra_mapping)
    return replace(req, dra=names) if names else req


def _node_resource(node: Node) -> Resource:
    """The allocatable of a Node object as upstream ``NewResource`` (scalar names only)."""
    r = Resource()
    for name, q in node_allocatable(node).items():
        v = to_int(name, q)
        if name == _CPU:
            r.milli_cpu = v
        elif name == _MEMORY:
            r.memory = v
        elif name == _EPHEMERAL:
            r.ephemeral_storage = v
        elif name == _PODS:
            r.allowed_pod_number = v
        elif is_scalar_resource_name(name):
            r.scalar_resources[name] = v
    return r


def _is_fit(pod: Pod, node: Node | None, dra_mapping: Mapping[str, Any] | None = None) -> bool:
    """Upstream ``isFit``: would the pod fit the node if it were empty?"""
    if node is None:
        return False
    return not fits_request(with_dra(compute_fit_request(pod_requests(pod)), dra_mapping), _node_resource(node),
                            Resource(), 0)


def _any_requested_resource_increased(pod: Pod, old: Node, new: Node,
                                      dra_mapping: Mapping[str, Any] | None = None) -> bool:
    """Upstream ``haveAnyRequestedResourcesIncreased`` (v1.37.2 fit.go L598-640: a requested
    resource DRA would provide on the new node counts as increased)."""
    req = compute_fit_request(pod_requests(pod))
    o, m = _node_resource(old), _node_resource(new)
    if m.allowed_pod_number > o.allowed_pod_number:
        return True
    if req.empty:
        return False
    if (req.milli_cpu > 0 and m.milli_cpu > o.milli_cpu) or (req.memory > 0 and m.memory > o.memory) or (
            req.ephemeral_storage > 0 and m.ephemeral_storage > o.ephemeral_storage):
        return True
    dra = dra_mapping or {}
    return any(q != 0 and (m.scalar_resources.get(n, 0) > o.scalar_resources.get(n, 0)
                           or (n in dra and m.scalar_resources.get(n, 0) == 0)) for n, q in req.scalars)




_Short = tuple[int, int, tuple[np.ndarray, np.ndarray] | None]
"""(check index, request, (short bool[M], allocatable int64[M]), or None when no node has the resource)."""


def _interned_result(req: FitRequest, too_many: np.ndarray, short_list: list[_Short]) -> FilterResult:
    """The batch Filter's result for more checks than the bit set holds: one row per node of
    0 (fits) / 1 (short) / 2 (the request alone exceeds allocatable) per Too-many-pods and per
    short resource, each distinct row interned as a status in upstream reason order."""
    m = len(too_many)
    mat = np.zeros((m, 1 + len(short_list)), np.int8)
    mat[:, 0] = too_many
    for c, (_, q, sa) in enumerate(short_list, start=1):
        if sa is None:
            mat[:, c] = 2
        else:
            short, a = sa
            mat[:, c] = np.where(short, np.where(q > a, 2, 1), 0)
    bad = mat.any(axis=1)
    uniq, inv = np.unique(mat[bad], axis=0, return_inverse=True)
    names = [ERR_REASON_TOO_MANY_PODS] + [req.reasons[1 + j] for j, _, _ in short_list]
    statuses = []
    for row in uniq.tolist():
        reasons = tuple(r for r, v in zip(names, row) if v)
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if 2 in row else Code.UNSCHEDULABLE
        statuses.append((reasons, code))
    ids = np.zeros(m, np.int64)
    ids[bad] = inv.reshape(-1) + 1
    return FilterResult.interned(ids, statuses)


def _scorer_from_args(args: NodeResourcesFitArgs) -> ResourceAllocationScorer:
    strategy = args.scoring_strategy
    if strategy is None:
        raise ConfigError("scoring strategy not specified", "scoringStrategy")
    resources = [(r.name, r.weight) for r in strategy.resources]
    if strategy.type in (LEAST_ALLOCATED, MOST_ALLOCATED):
        return ResourceAllocationScorer(strategy.type, resources, pod_level_resources=False)
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        param = strategy.requested_to_capacity_ratio
        if param is None or not param.shape:
            raise ConfigError("RequestedToCapacityRatio needs a shape",
                              "scoringStrategy.requestedToCapacityRatio.shape")
        scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
        shape = [(p.utilization, p.score * scale) for p in param.shape]
        return ResourceAllocationScorer(strategy.type, resources, shape=shape, pod_level_resources=False)
    raise ConfigError(f"scoring strategy {strategy.type} is not supported", "scoringStrategy.type")


class Fit:
    """The NodeResourcesFit plugin: PreFilter, Filter (both shapes), PreScore, Score (both shapes),
    PlacementScore."""

    name = NAME
    pure_filter_nodes = True
    """``filter_nodes`` judges each row on its own, without effects (``Framework.run_filter_plugins``)."""

    def sign_pod(self, pod: Pod) -> tuple[list[tuple[str, Any]] | None, Status | None]:
        """Batching signature (v1.37.2 fit.go ``SignPod``): :func:`sign_resources`."""
        return sign_resources(pod, self.handle)

    def __init__(self, args: NodeResourcesFitArgs | None = None, handle: Handle | None = None) -> None:
        args = args if args is not None else NodeResourcesFitArgs()
        self.handle = handle
        self.ignored_resources = frozenset(args.ignored_resources)
        self.ignored_resource_groups = frozenset(args.ignored_resource_groups)
        self.scorer = _scorer_from_args(args)
        self.strategy = self.scorer.strategy
        self.dra_extended_resource = features_of(handle).enabled("DRAExtendedResource")
        """DRAExtendedResource (off α 1.35, on β 1.36, GA 1.37): a scalar request a DeviceClass maps
        is left to DynamicResources on nodes with 0 allocatable of it (v1.37.2 fit.go L273-292, L782)."""
        self.deferred_resize = deferred_resize_enabled(features_of(handle))
        """InPlacePodVerticalScalingSchedulerPreemption (alpha, 1.37): deferred-resize deltas, the
        scale-up registrations and the same-node checks of the hints."""
        self.placement_scorer: ResourceAllocationScorer | None = None
        """TopologyAwareWorkloadScheduling (alpha, 1.36+; v1.37.2 fit.go L247-256): a MostAllocated
        scorer over the configured ``scoringStrategy.resources`` (whatever the node strategy) for
        :meth:`score_placement`; like Fit's own scorer it ignores pod-level resources (quirk §8a)."""
        if features_of(handle).enabled("TopologyAwareWorkloadScheduling"):
            strategy = args.scoring_strategy
            self.placement_scorer = ResourceAllocationScorer(
                MOST_ALLOCATED, [(r.name, r.weight) for r in strategy.resources] if strategy else [],
                pod_level_resources=False)

    def _dra_mapping(self) -> Mapping[str, Any] | None:
        """The DeviceClass mapping (upstream ``draManager.DeviceClassResolver()``), None with the gate off."""
        if not self.dra_extended_resource or self.handle is None:
            return None
        return _extres.device_class_mapping(self.handle.lister)

    # ───────────────────────────── PreFilter / Filter ─────────────────────────────

    def _requests(self, state: CycleState, pod: Pod) -> dict[str, int]:
        pi = state.pod_info
        return pi.requests if pi is not None and pi.pod is pod else pod_requests(pod)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[None, Status | None]:
        req = compute_fit_request(self._requests(state, pod), self.ignored_resources, self.ignored_resource_groups)
        state.write(PRE_FILTER_STATE_KEY, with_dra(req, self._dra_mapping()))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def _cached_requests(self, pod: Pod, node_name: str, pods: Iterable[PodInfo]) -> dict[str, int] | None:
        """``adjustDeltasToAccomodateCacheDiscrepancy`` (v1.37.2 fit.go L805-846): with
        InPlacePodVerticalScalingSchedulerPreemption, for a pod assigned to this node, the
        requests of the node's cached copy of it (same UID); None otherwise (no delta)."""
        if not self.deferred_resize or not pod.spec.node_name or pod.spec.node_name != node_name:
            return None
        uid = pod.metadata.uid
        key = pod_key(pod)
        for pi in pods:
            if pi.pod.metadata.uid == uid and (uid or pi.key == key):
                return pi.requests
        return None

    def filter_is_node_local(self, state: CycleState) -> bool:
        """Filter depends only on the pod and the one node's state unless a request is left to
        DynamicResources (DRAExtendedResource: the DeviceClass mapping is cluster-wide); see
        :mod:`kubesched.framework.equivalence`."""
        req = state.get(PRE_FILTER_STATE_KEY)
        return isinstance(req, FitRequest) and not req.dra

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        req = read_state(state, PRE_FILTER_STATE_KEY, FitRequest)
        cached = (self._cached_requests(pod, node_info.node.metadata.name, node_info.pods)
                  if self.deferred_resize and node_info.node is not None else None)
        insufficient = fits_request(req, node_info.allocatable, node_info.requested, len(node_info.pods), cached)
        if not insufficient:
            return None
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if any(r.unresolvable for r in insufficient) else Code.UNSCHEDULABLE
        return Status(code, tuple(r.reason for r in insufficient))

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> FilterResult | None:
        req = read_state(state, PRE_FILTER_STATE_KEY, FitRequest)
        return self._filter_nodes(req, pod, nodes, rows, None)

    def filter_nodes_with_added(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray,
                                added: np.ndarray) -> tuple[bool, FilterResult | None]:
        """:meth:`filter_nodes` as if each ``rows[i]`` also held pods whose summed requests are
        ``added[i]`` (``int64[M, R]`` over the table's columns, pod count in column ``PODS``):
        upstream's first pass of ``RunFilterPluginsWithNominatedPods`` (v1.37.2
        framework/runtime/framework.go ``addGENominatedPods``) without editing the rows.
        Returns ``(exact, result)``; ``exact`` is False (answer unknown: run the real pass)
        when the PreFilter state is absent or a deferred resize applies to the pod."""
        req = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(req, FitRequest) or (self.deferred_resize and pod.spec.node_name):
            return False, None
        return True, self._filter_nodes(req, pod, nodes, rows, added)

    def _filter_nodes(self, req: FitRequest, pod: Pod, nodes: NodeTable, rows: np.ndarray,
                      added: np.ndarray | None) -> FilterResult | None:
        alloc = nodes.allocatable
        # nodes.free[col] = allocatable - requested, one contiguous column per resource (kept by the
        # table): one gather per resource; allocatable is gathered only for a resource some row lacks
        # (its reason) or a DRA one. requested[:, PODS] holds the number of pods on the node,
        # allocatable[:, PODS] the limit: len(pods) + 1 > allowed  <=>  allowed - count <= 0
        free = nodes.free
        free_pods = free[nodes.PODS][rows]
        if added is not None:
            free_pods = free_pods - added[:, nodes.PODS]
        too_many = free_pods <= 0
        # (check index, request, (short bool[M], allocatable int64[M]) or None: no node has it)
        short_list: list[_Short] = []
        # a deferred resize (alpha gate): on the pod's own node only the delta over its cached
        # copy must fit (see fits_request); own = its index in rows, -1 if not among them
        own, cached = -1, None
        if added is None and self.deferred_resize and pod.spec.node_name and not req.empty:
            r = nodes.row_of.get(pod.spec.node_name)
            if r is not None:
                hit = np.flatnonzero(rows == r)
                if len(hit):
                    cached = self._cached_requests(pod, pod.spec.node_name, nodes.pods[r])
                    own = int(hit[0]) if cached is not None else -1
        if not req.empty:
            for j, (name, q) in enumerate(req.checks):
                col = nodes.resource_index.get(name)
                dra = name in req.dra
                delta = q if cached is None else max(0, q - cached.get(name, 0))
                skip_own = cached is not None and delta == 0 and name not in _FIXED_REASONS
                if col is None:  # no node has this resource: allocatable 0 everywhere
                    if not dra:  # (else DRA provides it on every node)
                        if own >= 0 and skip_own:
                            short = np.ones(len(rows), bool)
                            short[own] = False
                            short_list.append((j, q, (short, np.zeros(len(rows), np.int64))))
                        else:
                            short_list.append((j, q, None))
                    continue
                f = free[col][rows]
                short = f < q if added is None else f - added[:, col] < q
                if own >= 0:
                    short[own] = not skip_own and bool(free[col, rows[own]] < delta)
                if dra:
                    a = alloc[:, col][rows]
                    short &= a != 0  # the nodes without it leave it to DRA
                    if count_nonzero(short):
                        short_list.append((j, q, (short, a)))
                elif count_nonzero(short):
                    short_list.append((j, q, (short, alloc[:, col][rows])))
        if not short_list and not count_nonzero(too_many):
            return None
        if len(req.checks) > _MAX_BIT_CHECKS:
            return _interned_result(req, too_many, short_list)
        failed = too_many.astype(np.int64)
        for j, q, sa in short_list:
            u_bit, uu_bit = np.int64(1 << (1 + 2 * j)), np.int64(1 << (2 + 2 * j))
            if sa is None:
                failed |= uu_bit
            else:
                short, a = sa
                failed |= np.where(short, np.where(q > a, uu_bit, u_bit), 0)
        return FilterResult(failed, req.reasons, req.codes)

    # ───────────────────────────── PreScore / Score ─────────────────────────────

    def _pre_score_state(self, state: CycleState, pod: Pod) -> PreScoreState:
        reqs = self.scorer.pod_requests(state, pod)
        dra = _extres.dra_score_state(self.handle, self.scorer.names) if self.dra_extended_resource else None
        return PreScoreState(tuple(reqs), self.scorer.terms_for(reqs), dra)

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, self._pre_score_state(state, pod))
        return None

    def _state(self, state: CycleState, pod: Pod) -> PreScoreState:
        s = state.get(PRE_SCORE_STATE_KEY)
        return s if isinstance(s, PreScoreState) else self._pre_score_state(state, pod)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = self._state(state, pod)
        try:
            return self.scorer.score_node(node_info, s.pod_requests, s.dra), None
        except ValueError as e:
            return 0, Status(Code.ERROR, (str(e),), e)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> np.ndarray:
        s = self._state(state, pod)
        return self.scorer.score_rows(nodes, rows, s.terms, s.dra)

    # ───────────────────────────── PlacementScore ─────────────────────────────

    def score_placement(self, state: PlacementCycleState | None, pg_info: PodGroupInfo,
                        assignments: PodGroupAssignments) -> tuple[int, Status | None]:
        """Upstream ``Fit.ScorePlacement`` (v1.37.2 fit.go L872-875, resource_allocation.go L505-545):
        MostAllocated over the sums of the placement's nodes (``assignments.placement`` None = every
        node), the proposed members' requests added — each member's non-zero container requests
        (100m / 200Mi for a container without a cpu / memory request), pod-level requests ignored.
        ``(score 0-100, None)``; an Error without the TopologyAwareWorkloadScheduling gate (upstream
        builds no placement scorer then)."""
        scorer = self.placement_scorer
        if scorer is None:
            return 0, Status(Code.ERROR, ("NodeResourcesFit has no placement scorer: the "
                                          "TopologyAwareWorkloadScheduling feature gate is disabled",))
        group = [0] * len(scorer.names)
        for pa in assignments.proposed_assignments:
            for i, v in enumerate(scorer.pod_requests(None, pa.pod)):
                group[i] += v
        table = self.handle.nodes if self.handle is not None else None
        if table is None:
            return scorer.combine(group, [0] * len(group)), None
        placement = assignments.placement
        rows = table.order() if placement is None else table.rows_for_names(placement.nodes)
        return scorer.score_placement_rows(table, rows, group), None

    # ───────────────────────────── queueing hints ─────────────────────────────

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Pod delete / scale-down (scale-down only with InPlacePodVerticalScaling) and Node add /
        allocatable change (QueueingHints on, so no UpdateNodeTaint/UpdateNodeLabel, as upstream).
        1.37 (fit.go L290-320): ``AssignedPod/Delete``, ``AssignedPod/UpdatePodScaleDown`` and
        ``TargetPod/UpdatePodScaleDown`` (always Queue) instead of one ``Pod`` registration.
        With DRAExtendedResource (1.35+; on by default since 1.36): ``DeviceClass`` Add|Update
        (:meth:`is_schedulable_after_device_class_event`; the 1.36 registration is the 1.34 list plus
        this one). With InPlacePodVerticalScalingSchedulerPreemption (alpha, off by default):
        ``AssignedPod/UpdatePodScaleUp`` and ``TargetPod/UpdatePodScaleUp`` (fit.go L378-382)."""
        f = features_of(self.handle)
        ippvs = f.enabled("InPlacePodVerticalScaling")
        node = ClusterEventWithHint(
            ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE,
                         "Node/Add|UpdateNodeAllocatable"), self.is_schedulable_after_node_change)
        device_class = ([ClusterEventWithHint(
            ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
            self.is_schedulable_after_device_class_event)]
            if f.at_least(1, 35) and f.enabled("DRAExtendedResource") else [])
        if not f.at_least(1, 37):
            acts = ActionType.DELETE | (ActionType.UPDATE_POD_SCALE_DOWN if ippvs else ActionType(0))
            return [ClusterEventWithHint(ClusterEvent(EventResource.POD, acts), self.is_schedulable_after_pod_event),
                    node, *device_class]
        events = [ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                                       self.is_schedulable_after_pod_event), node, *device_class]
        if ippvs:
            events += [
                ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN),
                                     self.is_schedulable_after_pod_event),
                ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_SCALE_DOWN),
                                     self.is_schedulable_after_target_pod_scale_down),
            ]
        if self.deferred_resize:  # fit.go L378-382
            events += [
                ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_UP),
                                     self.is_schedulable_after_assigned_pod_scale_up),
                ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_SCALE_UP),
                                     self.is_schedulable_after_target_pod_scale_up),
            ]
        return events

    @staticmethod
    def is_schedulable_after_target_pod_scale_up(pod: Pod, old: Any, new: Any) -> QueueingHint:
        """``isSchedulableAfterTargetPodScaleUp`` (fit.go L415-425): a deferred-resize pod that
        asks for more again may now need preemption."""
        return QueueingHint.QUEUE if is_pod_resize_deferred(pod) else QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_assigned_pod_scale_up(pod: Pod, old: Any, new: Any) -> QueueingHint:
        """``isSchedulableAfterAssignedPodScaleUp`` (fit.go L427-447): another pod scaled up on the
        deferred-resize pod's node (it may have taken the headroom the pod waited for)."""
        if not is_pod_resize_deferred(pod) or new.spec.node_name != pod.spec.node_name:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    @staticmethod
    def is_schedulable_after_device_class_event(pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Upstream ``isSchedulableAfterDeviceClassEvent`` (fit.go, 1.36+): an update queues only if
        ``spec.extendedResourceName`` changed and the pod requests the new name; an added class
        queues if the pod requests its implicit ``deviceclass.resource.kubernetes.io/<class>`` or
        its ``extendedResourceName``."""
        def ext_name(dc: Any) -> str:
            spec = dc.get("spec") if isinstance(dc, dict) else getattr(dc, "spec", None)
            if spec is None:
                return ""
            v = spec.get("extendedResourceName") if isinstance(spec, dict) else getattr(
                spec, "extended_resource_name", None)
            return v or ""

        reqs = pod_requests(pod)
        if old is not None:
            if ext_name(old) == ext_name(new):
                return QueueingHint.SKIP
        else:
            meta = new.get("metadata") if isinstance(new, dict) else getattr(new, "metadata", None)
            name = (meta.get("name") if isinstance(meta, dict) else getattr(meta, "name", "")) or ""
            if "deviceclass.resource.kubernetes.io/" + name in reqs:
                return QueueingHint.QUEUE
        name = ext_name(new)
        if name and name in reqs:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_target_pod_scale_down(pod: Pod, old: Any, new: Any) -> QueueingHint:
        """1.37 ``isSchedulableAfterTargetPodScaleDown``: the rejected pod itself asks for less."""
        return QueueingHint.QUEUE

    def is_schedulable_after_pod_event(self, pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
        """Upstream ``isSchedulableAfterPodEvent``: a deleted pod that was assigned (or nominated)
        may free room; a scaled-down pod only if it is the pod itself or an assigned pod whose
        request of something this pod requests shrank."""
        deferred = self.deferred_resize and is_pod_resize_deferred(pod)
        if new is None:
            if old is None or (not old.spec.node_name and not old.status.nominated_node_name):
                return QueueingHint.SKIP
            if deferred and old.spec.node_name != pod.spec.node_name:
                return QueueingHint.SKIP  # fit.go L399-404: another node than the deferred pod's
            return QueueingHint.QUEUE
        if old is None:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE if _scaled_down_for(pod, old, new, deferred) else QueueingHint.SKIP

    def is_schedulable_after_node_change(self, pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
        """Upstream ``isSchedulableAfterNodeChange``: queue when the (empty) node fits the pod and
        it is new, or one of the resources the pod requests (or the pod limit) grew."""
        if (self.deferred_resize and is_pod_resize_deferred(pod) and new is not None
                and new.metadata.name != pod.spec.node_name):
            return QueueingHint.SKIP  # fit.go L528-534: not the deferred pod's node
        mapping = self._dra_mapping()
        if not _is_fit(pod, new, mapping):
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        if not _any_requested_resource_increased(pod, old, new, mapping):  # type: ignore[arg-type]
            return QueueingHint.SKIP
        return QueueingHint.QUEUE


def _scaled_down_for(target: Pod, old: Pod, new: Pod, deferred: bool = False) -> bool:
    """Upstream ``isSchedulableAfterPodScaleDown`` / ``haveEnoughRelevantResourcesDecreased``;
    ``deferred``: the target's resize is deferred (alpha gate), so only its own node counts
    (fit.go L479-484)."""
    if new.metadata.uid == target.metadata.uid and (
            new.metadata.uid or pod_key(new) == pod_key(target)):
        return True
    if not new.spec.node_name:
        return False
    if deferred and new.spec.node_name != target.spec.node_name:
        return False
    orig, mod = pod_requests(old), pod_requests(new)
    for name, v in pod_requests(target).items():
        if v == 0:
            continue
        if name in _FIXED_REASONS:
            if orig.get(name, 0) > mod.get(name, 0):
                return True
        elif is_scalar_resource_name(name) and orig.get(name, 0) > mod.get(name, 0):
            return True
    return False


def new(args: NodeResourcesFitArgs | None, handle: Handle | None) -> Fit:
    """Factory (``kubesched.plugins.noderesources.fit:new``)."""
    return Fit(args, handle)
