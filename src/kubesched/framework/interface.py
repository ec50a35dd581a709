"""The scheduling framework's contract: status codes, results and one protocol per extension point.

Follows ``staging/src/k8s.io/kube-scheduler/framework/interface.go`` (v1.34). Grouped by phase
like pytest's ``hookspec.py``: the queue, the scheduling cycle, the binding cycle.

A plugin is any object with a ``name`` attribute and the methods of the extension points it
implements; the framework detects extension points by method name when it is built from a
profile (:mod:`kubesched.framework.runtime`) and rejects a plugin enabled at a point it does
not implement.

Every method returns ``Status | None``; ``None`` means Success, as a nil ``*Status`` upstream.
Two shapes exist for Filter and Score (``docs/architecture.md``, "The seams"):

* per node, like upstream — ``filter(state, pod, node_info)`` / ``score(state, pod, node_info)``;
* batch over the columnar :class:`~kubesched.framework.node_table.NodeTable` —
  ``filter_nodes(state, pod, nodes, rows)`` / ``score_nodes(state, pod, nodes, rows)``, where
  ``rows`` is ``int64[M]`` of table rows in evaluation order.

All built-in plugins implement the batch shape; the framework prefers it when both exist.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_info import PodInfo, QueuedPodInfo
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = [
    "MAX_NODE_SCORE",
    "MAX_TOTAL_SCORE",
    "MIN_NODE_SCORE",
    "BatchFilterPlugin",
    "BatchScorePlugin",
    "BindPlugin",
    "Code",
    "FilterPlugin",
    "FilterResult",
    "NominatingInfo",
    "NominatingMode",
    "PermitPlugin",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreBindPreFlightResult",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortPlugin",
    "ReservePlugin",
    "ScorePlugin",
    "Status",
    "SKIP_STATUS",
    "as_status",
    "MAX_REASON_BITS",
    "ReasonEntry",
    "bits_entry",
    "bits_status",
    "is_success",
    "reason_entry",
]

MIN_NODE_SCORE = 0
"""Lowest score a Score plugin may give after NormalizeScore (upstream ``MinNodeScore``)."""
MAX_NODE_SCORE = 100
"""Highest score a Score plugin may give after NormalizeScore (upstream ``MaxNodeScore``)."""
MAX_TOTAL_SCORE = (1 << 63) - 1
"""Upper bound of the weighted total (upstream ``MaxTotalScore = math.MaxInt64``)."""


class Code(enum.IntEnum):
    """Status codes, in upstream's iota order. The comment on each says what the queue does."""

    SUCCESS = 0
    """The plugin ran and the pod may proceed."""
    ERROR = 1
    """Internal failure: the pod gets no UnschedulablePlugins and goes to the error backoff."""
    UNSCHEDULABLE = 2
    """Rejected; preemption may help (the node is a preemption candidate)."""
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    """Rejected and preemption cannot help on this node."""
    WAIT = 4
    """Permit only: the pod waits in the binding cycle until allowed, rejected or timed out."""
    SKIP = 5
    """PreFilter/PreScore: skip this plugin's Filter/Score for the cycle. Bind: let the next binder bind."""
    PENDING = 6
    """Rejected for now, waiting on something external; requeued without backoff."""

    def __str__(self) -> str:  # upstream Code.String()
        return _CODE_NAMES[self]


_CODE_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}
_REJECTED = frozenset({Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING})


@dataclass(frozen=True, slots=True)
class Status:
    """The result of running a plugin (upstream ``fwk.Status``); ``None`` stands for Success.

    ``reasons`` are the user-facing strings that end up in the FailedScheduling histogram;
    ``plugin`` is the name of the plugin that produced a rejection (filled by the framework).
    """

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    error: BaseException | None = None
    plugin: str = ""

    @classmethod
    def of(cls, code: Code, *reasons: str) -> Status:
        """Build a status like upstream ``NewStatus(code, reasons...)``."""
        return cls(code, tuple(reasons))

    def message(self) -> str:
        """The reasons joined with ``", "`` (upstream ``Status.Message``)."""
        if self.error is not None and not self.reasons:
            return str(self.error)
        return ", ".join(self.reasons)

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_wait(self) -> bool:
        return self.code == Code.WAIT

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending (upstream ``IsRejected``)."""
        return self.code in _REJECTED

    def with_plugin(self, plugin: str) -> Status:
        return Status(self.code, self.reasons, self.error, plugin)

    def as_error(self) -> BaseException:
        """The status as an exception (upstream ``AsError``)."""
        return self.error if self.error is not None else RuntimeError(self.message())

    def __str__(self) -> str:
        return f"{self.code}: {self.message()}" if self.reasons or self.error else str(self.code)


def is_success(status: Status | None) -> bool:
    """True for ``None`` or a Success status (upstream ``Status.IsSuccess`` on a nil pointer)."""
    return status is None or status.code == Code.SUCCESS


SKIP_STATUS = Status(Code.SKIP)
"""A shared ``Skip`` status (statuses are immutable): what a plugin returns when it has nothing
to do for the pod, without building a new object each cycle."""

def as_status(err: BaseException) -> Status:
    """Wrap an exception as an Error status (upstream ``AsStatus``)."""
    return Status(Code.ERROR, (str(err),), err)


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Nodes a PreFilter plugin narrowed the cycle to; ``node_names=None`` means all nodes.

    Upstream ``framework.PreFilterResult``; results of several plugins are intersected.
    """

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return self
        if self.all_nodes():
            return other
        return PreFilterResult(self.node_names & other.node_names)  # type: ignore[operator]


class NominatingMode(enum.IntEnum):
    """Upstream ``NominatingMode``: keep the current nomination or override it."""

    NOOP = 0
    OVERRIDE = 1


@dataclass(frozen=True, slots=True)
class NominatingInfo:
    nominated_node_name: str = ""
    mode: NominatingMode = NominatingMode.NOOP


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """Upstream ``PostFilterResult``: where the pod is nominated after preemption."""

    nominating_info: NominatingInfo | None = None


ReasonEntry = tuple[tuple[str, ...], Code]
"""An interned per-node rejection: the Status's reasons, in order, and its code."""

MAX_REASON_BITS = 63
"""How many reasons the bit-set form of :class:`FilterResult` can carry (bits of an int64)."""


@dataclass(slots=True)
class FilterResult:
    """What a batch Filter plugin returns for ``rows`` (``int64[M]``); ``failed[i] == 0`` means
    ``rows[i]`` passes, anything else that it is rejected. Two forms:

    * **bit set** (``statuses is None``, for plugins with a few fixed reasons that combine):
      ``failed[i]`` is a bit set over ``reasons``: bit ``b`` set means ``reasons[b]`` applies,
      ``codes[b]`` is its status code and a node's code is the highest among its reasons. At
      most :data:`MAX_REASON_BITS` reasons (``ValueError`` otherwise).
    * **interned** (:meth:`interned`, :meth:`from_statuses`; any number of distinct statuses):
      ``failed[i] = k ≥ 1`` means the node's status is ``statuses[k - 1]`` — a
      :data:`ReasonEntry` ``(reasons, code)`` kept exactly (order and repeats of the reasons).

    A plugin returns ``None`` instead when every node passes.
    """

    failed: np.ndarray
    reasons: Sequence[str] = ()
    codes: Sequence[Code] = ()
    statuses: Sequence[ReasonEntry] | None = None

    def __post_init__(self) -> None:
        if self.statuses is None and len(self.reasons) > MAX_REASON_BITS:
            raise ValueError(f"FilterResult: {len(self.reasons)} reasons do not fit a bit set "
                             f"(at most {MAX_REASON_BITS}); use FilterResult.interned or from_statuses")

    @classmethod
    def single(cls, fail_mask: np.ndarray, reason: str, code: Code) -> FilterResult:
        """One reason: ``fail_mask`` is ``bool[M]``, True where the node is rejected."""
        return cls(fail_mask.astype(np.int64), (reason,), (code,))

    @classmethod
    def interned(cls, ids: np.ndarray, statuses: Sequence[ReasonEntry]) -> FilterResult:
        """``ids`` (``int[M]``): 0 = the node passes, ``k`` = ``statuses[k - 1]``."""
        return cls(np.asarray(ids, np.int64), (), (), statuses)

    @classmethod
    def from_statuses(cls, statuses: Sequence[Status | None]) -> FilterResult:
        """One ``Status | None`` per row (None or Success = passes); equal statuses are
        interned. Each status must be a rejection (Unschedulable, UnschedulableAndUnresolvable,
        Pending) — ``ValueError`` otherwise."""
        table: dict[ReasonEntry, int] = {}
        ids = np.zeros(len(statuses), np.int64)
        for i, st in enumerate(statuses):
            if st is None or st.code == Code.SUCCESS:
                continue
            if not st.is_rejected():
                raise ValueError(f"FilterResult.from_statuses: row {i} has status {st.code}, not a rejection")
            entry = reason_entry(st)
            k = table.get(entry)
            if k is None:
                k = table[entry] = len(table) + 1
            ids[i] = k
        return cls(ids, (), (), list(table))

    def entry(self, value: int) -> ReasonEntry:
        """The ``(reasons, code)`` that the non-zero ``failed`` value ``value`` stands for."""
        if self.statuses is not None:
            return self.statuses[value - 1]
        return bits_entry(self.reasons, self.codes, value)

    def status_for(self, value: int, plugin: str = "") -> Status:
        """The per-node Status that the non-zero ``failed`` value ``value`` stands for."""
        reasons, code = self.entry(value)
        return Status(code, reasons, None, plugin)


def reason_entry(status: Status) -> ReasonEntry:
    """The :data:`ReasonEntry` of a rejection: its reasons (upstream ``Status.Reasons()``: the
    error's text first when the status wraps an error) and its code."""
    reasons = tuple(status.reasons)  # hashable even if a plugin passed a list
    if status.error is not None:
        reasons = (str(status.error), *reasons)
    return reasons, status.code


def bits_entry(reasons: Sequence[str], codes: Sequence[Code], bits: int) -> ReasonEntry:
    """The reasons whose bit is set in ``bits``, with the highest of their codes (Unschedulable
    for an empty set)."""
    chosen = tuple(r for b, r in enumerate(reasons) if bits >> b & 1)
    code = max((c for b, c in enumerate(codes) if bits >> b & 1), default=Code.UNSCHEDULABLE)
    return chosen, code


def bits_status(reasons: Sequence[str], codes: Sequence[Code], bits: int, plugin: str = "") -> Status:
    """The Status a reason bit set stands for (see :func:`bits_entry`)."""
    chosen, code = bits_entry(reasons, codes, bits)
    return Status(code, chosen, None, plugin)


# ─────────────────────────────────────────── Queue ───────────────────────────────────────────


@runtime_checkable
class PreEnqueuePlugin(Protocol):
    """Called before a pod enters activeQ; a rejection parks it as gated.

    Allowed codes: Success; Unschedulable/UnschedulableAndUnresolvable (the pod waits in
    unschedulablePods until an event the plugin registered for). Must be cheap: it runs on
    every add/update of a pending pod.
    """

    name: str

    def pre_enqueue(self, pod: Pod) -> Status | None: ...


@runtime_checkable
class QueueSortPlugin(Protocol):
    """Orders activeQ. Exactly one per profile, the same in every profile.

    ``less(a, b)`` is upstream's comparator. A plugin may also offer ``sort_key(qpi)`` returning
    a tuple with the same order — the queue then uses it (a heap key is much faster in Python).
    """

    name: str

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


# ───────────────────────────────────────── Scheduling cycle ─────────────────────────────────────────


class PreFilterExtensions(Protocol):
    """Incremental updates of a plugin's PreFilter state when a pod is added to / removed from a
    node during preemption dry-runs or nominated-pod evaluation. Must only touch ``state``."""

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None: ...

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None: ...


@runtime_checkable
class PreFilterPlugin(Protocol):
    """Runs once per cycle before Filter.

    Returns ``(PreFilterResult | None, Status | None)``. Codes: Success; Skip (this plugin's
    Filter is skipped for the cycle); Unschedulable/UnschedulableAndUnresolvable (every node gets
    this status and its message becomes the FailedScheduling message); Error (aborts the cycle).
    ``pre_filter_extensions()`` returns :class:`PreFilterExtensions` or ``None``.
    """

    name: str

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: NodeTable) -> tuple[PreFilterResult | None, Status | None]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Protocol):
    """Per node: may the pod run here? Codes: Success, Unschedulable,
    UnschedulableAndUnresolvable, Error (aborts the cycle). For each node the framework stops at
    the first plugin that rejects it."""

    name: str

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None: ...


@runtime_checkable
class BatchFilterPlugin(Protocol):
    """The vectorised Filter: judge ``rows`` (``int64[M]`` of NodeTable rows) at once.

    Returns a :class:`FilterResult` aligned with ``rows``, or ``None`` when all pass. Raising an
    exception is an Error status for the cycle.
    """

    name: str

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable,
                     rows: np.ndarray) -> FilterResult | None: ...


@runtime_checkable
class PostFilterPlugin(Protocol):
    """Runs only when no node is feasible (preemption). ``filtered_node_status_map`` maps node
    name → Status. Success ends the PostFilter loop; Unschedulable tries the next plugin;
    UnschedulableAndUnresolvable stops it."""

    name: str

    def post_filter(self, state: CycleState, pod: Pod,
                    filtered_node_status_map: Any) -> tuple[PostFilterResult | None, Status | None]: ...


@runtime_checkable
class PreScorePlugin(Protocol):
    """Runs once with the feasible nodes (``rows``) before Score. Skip skips this plugin's Score."""

    name: str

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeTable,
                  rows: np.ndarray) -> Status | None: ...


@runtime_checkable
class ScorePlugin(Protocol):
    """Per node raw score (``int``). ``normalize_score`` (optional, upstream ScoreExtensions)
    rewrites the ``int64[K]`` scores of the feasible nodes in place to [0, 100]."""

    name: str

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]: ...


@runtime_checkable
class BatchScorePlugin(Protocol):
    """The vectorised Score: ``int64[K]`` raw scores for ``rows``. Optional
    ``normalize_score(state, pod, scores) -> Status | None`` normalises in place."""

    name: str

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable,
                    rows: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class ReservePlugin(Protocol):
    """Reserve runs after the pod is assumed on ``node_name``; a failure unreserves all.
    Unreserve runs in reverse order on any later failure and must be idempotent."""

    name: str

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Protocol):
    """End of the scheduling cycle. Returns ``(status, timeout_s)``: Success, Wait (the binding
    cycle waits up to ``timeout_s`` seconds) or a rejection (Unreserve + forget)."""

    name: str

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]: ...


# ───────────────────────────────────────── Binding cycle ─────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class PreBindPreFlightResult:
    """Upstream ``PreBindPreFlightResult`` (staging ``framework/interface.go``, v1.36+):
    ``allow_parallel`` — the plugin's PreBind may run concurrently with its parallel neighbours."""

    allow_parallel: bool = False


@runtime_checkable
class PreBindPlugin(Protocol):
    """Before Bind; a failure unreserves and sends the pod to backoff.

    Optional ``pre_bind_pre_flight(state, pod, node_name)`` (upstream ``PreBindPreFlight``,
    run by the binding cycle with NominatedNodeNameForExpectation): returns
    ``(PreBindPreFlightResult | None, Status | None)`` (or just the status, v1.34 shape) —
    Success (None): PreBind has work for this pod; Skip: its PreBind is not run; Error: the
    binding fails. A plugin without it counts as Success, not parallel.
    """

    name: str

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class BindPlugin(Protocol):
    """Binds the pod. In order, the first plugin that does not return Skip handles it."""

    name: str

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class PostBindPlugin(Protocol):
    """Informational, after a successful bind."""

    name: str

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@dataclass(frozen=True, slots=True)
class ExtensionPoint:
    """One extension point: its config field (snake_case), and the methods that implement it."""

    config_name: str
    json_name: str
    methods: tuple[str, ...] = field(default=())


EXTENSION_POINTS: tuple[ExtensionPoint, ...] = (
    ExtensionPoint("pre_enqueue", "preEnqueue", ("pre_enqueue",)),
    ExtensionPoint("queue_sort", "queueSort", ("less", "sort_key")),
    ExtensionPoint("pre_filter", "preFilter", ("pre_filter",)),
    ExtensionPoint("filter", "filter", ("filter", "filter_nodes")),
    ExtensionPoint("post_filter", "postFilter", ("post_filter",)),
    ExtensionPoint("pre_score", "preScore", ("pre_score",)),
    ExtensionPoint("score", "score", ("score", "score_nodes")),
    ExtensionPoint("reserve", "reserve", ("reserve",)),
    ExtensionPoint("permit", "permit", ("permit",)),
    ExtensionPoint("pre_bind", "preBind", ("pre_bind",)),
    ExtensionPoint("bind", "bind", ("bind",)),
    ExtensionPoint("post_bind", "postBind", ("post_bind",)),
    ExtensionPoint("placement_generate", "placementGenerate", ("generate_placements",)),
    ExtensionPoint("placement_score", "placementScore", ("score_placement",)),
    ExtensionPoint("pod_group_post_filter", "podGroupPostFilter", ("pod_group_post_filter",)),
)
"""The configurable extension points in upstream order (PreEnqueue … PostBind, then the pod-group
points of v1.36+: PlacementGenerate, PlacementScore, PodGroupPostFilter, as upstream's ``Plugins``
struct); NormalizeScore is part of Score, as upstream. PlacementFeasible is not configurable
(GangScheduling is the only one, upstream framework.go L488-499)."""


def implements(plugin: object, point: ExtensionPoint) -> bool:
    """Whether ``plugin`` has a method for ``point`` (how the framework detects extension points)."""
    return any(callable(getattr(plugin, m, None)) for m in point.methods)


#: Every extension-point method the framework calls, with the parameters it passes positionally
#: (after ``self``), read from this module's Protocols; ``normalize_score`` is part of Score.
_PROTOCOLS: tuple[type, ...] = (
    PreEnqueuePlugin, QueueSortPlugin, PreFilterPlugin, FilterPlugin, BatchFilterPlugin, PostFilterPlugin,
    PreScorePlugin, ScorePlugin, BatchScorePlugin, ReservePlugin, PermitPlugin, PreBindPlugin, BindPlugin,
    PostBindPlugin,
)


def _called_signatures() -> dict[str, tuple[str, ...]]:
    import inspect

    out: dict[str, tuple[str, ...]] = {"normalize_score": ("state", "pod", "scores")}
    for proto in _PROTOCOLS:
        for name, fn in vars(proto).items():
            if name.startswith("_") or not callable(fn):
                continue
            params = list(inspect.signature(fn).parameters)[1:]  # without self
            out.setdefault(name, tuple(params))
    return out


CALLED_SIGNATURES: dict[str, tuple[str, ...]] = _called_signatures()
"""method name → the parameter names the framework passes, e.g. ``"pre_score": ("state", "pod",
"nodes", "rows")``."""


def signature_mismatch(plugin: object, method: str) -> str | None:
    """Why ``plugin.<method>`` cannot take the arguments the framework passes, or ``None``.

    Checked when a framework is built (:mod:`kubesched.framework.runtime`), so that a plugin written
    with a wrong signature is one configuration error, not an exception in every scheduling cycle.
    Methods whose signature Python cannot inspect (builtins) are accepted.
    """
    import inspect

    params = CALLED_SIGNATURES.get(method)
    fn = getattr(plugin, method, None)
    if params is None or not callable(fn):
        return None
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    try:
        sig.bind(*params)
    except TypeError:
        have = ", ".join(str(p) for p in sig.parameters.values())
        return (f"{method}({have}) cannot be called as {method}({', '.join(params)}): "
                f"the framework calls {method} with {len(params)} arguments")
    return None


POD_INDEPENDENT_FILTERS = frozenset({
    "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "VolumeBinding", "VolumeZone"})
"""In-tree Filter plugins whose verdict on a node does not depend on the pods assigned to it (nor
on the PreFilter state that AddPod/RemovePod change): once a node passed them with every
potential victim removed, re-adding victims during the reprieve cannot make them fail, so the
reprieve runs only the other Filter plugins (same verdict, fewer plugin calls)."""
