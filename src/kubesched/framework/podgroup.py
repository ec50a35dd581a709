"""Pod groups in the framework: the types the pod-group cycle and its plugins share.

Workload-aware scheduling (GenericWorkload, v1.35+; upstream-v137 §2.3, §2.8) schedules the pods
of a ``scheduling.k8s.io`` PodGroup as one entity. These types follow staging
``k8s.io/kube-scheduler/framework`` v0.37.2 — ``types.go`` L687-760 (``PodGroupInfo``,
``Placement``, ``ProposedAssignment``, ``PodGroupAssignments``, ``EntityKeyType``),
``interface.go`` L595-625 and L795-840 (``PodGroupPostFilterPlugin``,
``PlacementGeneratePlugin``, ``PlacementScorePlugin``), ``listers.go`` L230-255
(``PodGroupState``), ``cycle_state.go`` L100-165 (``PodGroupCycleState``,
``PlacementCycleState``) — and ``pkg/scheduler/framework/interface.go`` (``PlacementProgress``,
``PlacementFeasiblePlugin``).

PodGroup, CompositePodGroup and Workload objects are raw mappings shaped as the API serves them
(``{"metadata": …, "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}, …}, "status": …}``),
as ResourceClaims are; the helpers at the end read their fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.interface import NominatingInfo, Status
    from kubesched.framework.node_info import PodInfo

__all__ = [
    "COMPOSITE_POD_GROUP_KEY_TYPE",
    "POD_GROUP_KEY_TYPE",
    "POD_KEY_TYPE",
    "PODGROUP_PROTECTION_FINALIZER",
    "Placement",
    "PlacementCycleState",
    "PlacementFeasiblePlugin",
    "PlacementGeneratePlugin",
    "PlacementProgress",
    "PlacementScore",
    "PlacementScorePlugin",
    "PodGroupAssignments",
    "PodGroupCycleState",
    "PodGroupInfo",
    "PodGroupManager",
    "PlacementPluginScores",
    "PodGroupPostFilterPlugin",
    "PodGroupPostFilterResult",
    "PodGroupSchedulingFunc",
    "PodGroupState",
    "ProposedAssignment",
    "entity_key",
    "every_node_placement",
    "pod_group_disruption_mode_all",
    "pod_group_min_count",
    "pod_group_name_of",
    "pod_group_preemption_policy",
    "pod_group_priority",
    "pod_group_topology_keys",
    "select_placement",
]

POD_KEY_TYPE = "pod"
"""Upstream ``PodKeyType``: a queued entity that is a single pod."""
POD_GROUP_KEY_TYPE = "podgroup"
"""Upstream ``PodGroupKeyType``."""
COMPOSITE_POD_GROUP_KEY_TYPE = "compositepodgroup"
"""Upstream ``CompositePodGroupKeyType`` (CompositePodGroup, alpha)."""
PODGROUP_PROTECTION_FINALIZER = "scheduling.k8s.io/podgroup-protection"
"""The finalizer the PodGroupProtection admission plugin adds to PodGroups."""


def entity_key(key_type: str, namespace: str, name: str) -> str:
    """The queue key of an entity: ``type/namespace/name`` (upstream ``EntityKey.String``)."""
    return f"{key_type}/{namespace}/{name}"


@dataclass
class PodGroupInfo:
    """A PodGroup (or CompositePodGroup) with the members being scheduled (upstream ``PodGroupInfo``).

    ``unscheduled_pods`` are the members considered in this pod-group cycle, in queue order
    (priority, then attempts/timestamp, then name); ``pod_group`` is the raw PodGroup object
    (None for a composite group), ``composite_pod_group`` the raw CompositePodGroup (None
    otherwise), ``children`` the child groups of a composite group.
    """

    name: str
    namespace: str
    type: str = POD_GROUP_KEY_TYPE
    pod_group: dict[str, Any] | None = None
    composite_pod_group: dict[str, Any] | None = None
    children: list[PodGroupInfo] = field(default_factory=list)
    unscheduled_pods: list[Pod] = field(default_factory=list)

    @property
    def key(self) -> str:
        """``type/namespace/name`` (upstream ``GetKey``)."""
        return entity_key(self.type, self.namespace, self.name)


@dataclass
class Placement:
    """A candidate set of nodes for a pod group (upstream ``Placement``): the cycle schedules the
    group using only ``nodes`` (node names, in snapshot order). ``name`` is for diagnostics
    (TopologyPlacementGenerator uses the topology label's value). ``rows``: the same nodes as
    node-table rows in the same order (``int64[len(nodes)]``), when the producer has them (the
    parent placement of every node); it spares the cycle a name lookup per node and is not
    compared."""

    name: str
    nodes: list[str]
    rows: np.ndarray | None = field(default=None, compare=False, repr=False)


def every_node_placement(table: Any) -> Placement:
    """The placement of every node of ``table`` (a :class:`~kubesched.framework.node_table.NodeTable`):
    name ``""``, the node names in ``order()`` order, ``rows`` = ``order()`` (upstream
    ``ListNodesInPlacement`` with no enclosing placement). The names are listed once per table
    order (``order()`` is a new array after any node change) and copied for each caller."""
    order = table.order()
    held = table.derived((__name__, "every-node names"), lambda t: [None, []])
    if held[0] is not order:
        held[0], held[1] = order, [table.names[r] for r in order.tolist()]
    return Placement("", list(held[1]), order)


@dataclass
class ProposedAssignment:
    """A member's node in a pod-group cycle's simulation (upstream ``ProposedAssignment``), with
    the :class:`CycleState` its single-pod algorithm computed."""

    pod: Pod
    pod_info: PodInfo
    node_name: str
    cycle_state: CycleState


@dataclass
class PodGroupAssignments:
    """The simulated assignments of a group within one placement (upstream ``PodGroupAssignments``;
    ``placement`` None = all nodes)."""

    placement: Placement | None
    proposed_assignments: list[ProposedAssignment] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class PlacementProgress:
    """Upstream ``PlacementProgress``: members still to place (``remaining``) and members already
    assumed or assigned (``scheduled``) — for a CompositePodGroup, child groups."""

    remaining: int
    scheduled: int


@dataclass
class PodGroupPostFilterResult:
    """Upstream ``PodGroupPostFilterResult``: the nominated node of each member (``namespace/name``
    → :class:`~kubesched.framework.interface.NominatingInfo`); only members with one."""

    nominating_infos: dict[str, NominatingInfo] = field(default_factory=dict)


class _KeyValue:
    """A plain key → value store (upstream's pod-group and placement states have no cloning)."""

    record_plugin_metrics: bool = False
    """Upstream ``ShouldRecordPluginMetrics``: when a metrics recorder is installed, the framework's
    pod-group ``run_*`` methods time each plugin (the pod-group cycle sets it on its state;
    upstream: always, "for now", in the placement algorithm)."""

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        """The value under ``key``; raises ``KeyError`` when absent (upstream ``ErrNotFound``)."""
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def delete(self, key: str) -> None:
        self._data.pop(key, None)


class PlacementCycleState(_KeyValue):
    """Data shared by every pod scheduled within one placement of a pod-group cycle (upstream
    ``PlacementCycleState``); ``pod_group_cycle_state`` is the owning group's state."""

    def __init__(self, pod_group_cycle_state: PodGroupCycleState) -> None:
        super().__init__()
        self.pod_group_cycle_state = pod_group_cycle_state


class PodGroupCycleState(_KeyValue):
    """Data of one pod-group cycle (upstream ``PodGroupCycleState``); ``parent_placement_cycle_state``
    is the enclosing CompositePodGroup's placement state (None at the root)."""

    def __init__(self, parent_placement_cycle_state: PlacementCycleState | None = None) -> None:
        super().__init__()
        self.parent_placement_cycle_state = parent_placement_cycle_state


PodGroupSchedulingFunc = Callable[[], "tuple[PodGroupAssignments | None, Status | None]"]
"""Upstream ``PodGroupSchedulingFunc``: re-runs the group's algorithm on the (mutated) snapshot."""


class PodGroupState(Protocol):
    """One pod group's members as the scheduler knows them (upstream ``PodGroupState``, kept from
    pod events, so it exists before the PodGroup object). Pods are identified by UID."""

    def all_pods(self) -> set[str]: ...
    def all_pods_count(self) -> int: ...
    def unscheduled_pods(self) -> dict[str, Pod]:
        """Members neither assumed nor assigned, by ``namespace/name`` (what ``Activate`` takes)."""
        ...
    def assumed_pods(self) -> set[str]: ...
    def assigned_pods(self) -> set[str]: ...
    def scheduled_pods(self) -> list[Pod]:
        """Assumed + assigned members."""
        ...
    def scheduled_pods_count(self) -> int: ...


class PodGroupManager(Protocol):
    """What plugins read about pod groups (upstream ``Handle.PodGroupManager()``, v1.37.2
    listers.go L200-230): the PodGroup objects the scheduler observed and each group's member
    state. ``Handle.pod_group_manager`` is one when GenericWorkload is on, else None."""

    def pod_group(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The PodGroup object as last observed (raw mapping), or None."""
        ...

    def pod_group_state(self, namespace: str, name: str) -> PodGroupState | None:
        """The group's members as known from pod events (exists before the PodGroup object), or None."""
        ...


@dataclass
class PlacementPluginScores:
    """Upstream ``PlacementPluginScores``: a feasible placement's weighted scores per plugin, their
    sum, and the random tie-breaker (the highest ``total_score`` wins, ties by larger ``randomizer``)."""

    placement: Placement | None
    scores: list[tuple[str, int]] = field(default_factory=list)
    total_score: int = 0
    randomizer: int = 0


@dataclass
class PlacementScore:
    """Upstream ``PlacementScore``: one placement's score from one PlacementScore plugin, as
    ``normalize_placement_score`` receives them (it rewrites ``score`` in place)."""

    placement: Placement | None
    score: int


def select_placement(scores: list[PlacementPluginScores], rng: Any) -> int:
    """The index of the best of ``scores`` (upstream ``findBestPlacement``, schedule_one_podgroup.go
    L1194-1223, v1.37.2): first every entry gets a ``randomizer`` drawn from ``rng`` (upstream
    ``rand.Int()``: a non-negative int63; a numpy ``Generator`` — the Handle's ``rng`` — or a
    ``random.Random``), then the highest ``total_score`` wins, ties going to the larger
    randomizer (the earlier entry on a full tie). ``scores`` must not be empty."""
    for s in scores:
        if hasattr(rng, "integers"):
            s.randomizer = int(rng.integers(0, 2**63 - 1, dtype="int64"))
        else:
            s.randomizer = int(rng.getrandbits(63))
    best = 0
    for i in range(1, len(scores)):
        s, b = scores[i], scores[best]
        if s.total_score > b.total_score or (s.total_score == b.total_score and s.randomizer > b.randomizer):
            best = i
    return best


class PodGroupPostFilterPlugin(Protocol):
    """Upstream ``PodGroupPostFilterPlugin`` (runs after a failed pod-group cycle): Success stops
    (the group can be made schedulable, e.g. by preemption); UnschedulableAndUnresolvable stops;
    Unschedulable lets the next plugin try; anything else is an error."""

    name: str

    def pod_group_post_filter(self, state: PodGroupCycleState, pg_info: PodGroupInfo,
                              scheduling_func: PodGroupSchedulingFunc,
                              ) -> tuple[PodGroupPostFilterResult | None, Status | None]: ...


class PlacementGeneratePlugin(Protocol):
    """Upstream ``PlacementGeneratePlugin`` (at most one per profile): the candidate placements of a
    group within ``parent`` (None = all nodes). An empty list means no feasible placement."""

    name: str

    def generate_placements(self, state: PodGroupCycleState, pg_info: PodGroupInfo,
                            parent: Placement | None) -> tuple[list[Placement], Status | None]: ...


class PlacementScorePlugin(Protocol):
    """Upstream ``PlacementScorePlugin``: scores a feasible placement (higher is better; after
    ``normalize_placement_score``, if the plugin has it, scores must be in [0, 100]); weighted by
    the ``placementScore`` config weight."""

    name: str

    def score_placement(self, state: PlacementCycleState, pg_info: PodGroupInfo,
                        assignments: PodGroupAssignments) -> tuple[int, Status | None]: ...


class PlacementFeasiblePlugin(Protocol):
    """Upstream ``PlacementFeasiblePlugin`` (GangScheduling only): before and after each member of a
    simulated placement, Success (feasible), Wait (not yet) or Unschedulable (cannot be)."""

    name: str

    def placement_feasible(self, state: PlacementCycleState, pg_info: PodGroupInfo,
                           progress: PlacementProgress) -> Status | None: ...


# ───────────────────────────── raw PodGroup fields ─────────────────────────────


def _is_mapping(v: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(v, Mapping)``, the common ``dict`` first (the ABC check is slow and these
    readers run per member and event)."""
    return type(v) is dict or isinstance(v, Mapping)


def _spec(pg: Mapping[str, Any] | None) -> Mapping[str, Any]:
    spec = (pg or {}).get("spec")
    return spec if _is_mapping(spec) else {}


def pod_group_name_of(pod: Pod) -> str | None:
    """The PodGroup a pod belongs to (``spec.schedulingGroup.podGroupName``), or None."""
    sg = pod.spec.scheduling_group
    return sg.pod_group_name if sg is not None and sg.pod_group_name else None


def pod_group_min_count(pg: Mapping[str, Any] | None) -> int | None:
    """A gang's ``spec.schedulingPolicy.gang.minCount``; None for a Basic (or unknown) policy."""
    policy = _spec(pg).get("schedulingPolicy") or {}
    gang = policy.get("gang") if _is_mapping(policy) else None
    if not _is_mapping(gang):
        return None
    mc = gang.get("minCount")
    return int(mc) if isinstance(mc, int) else None


def pod_group_priority(pg: Mapping[str, Any] | None) -> int:
    """``spec.priority`` (resolved by admission from ``priorityClassName``); absent → 0."""
    p = _spec(pg).get("priority")
    return int(p) if isinstance(p, int) else 0


def pod_group_preemption_policy(pg: Mapping[str, Any] | None) -> str:
    """``spec.preemptionPolicy`` (PodGroupPreemptionPolicy); absent → ``PreemptLowerPriority``."""
    p = _spec(pg).get("preemptionPolicy")
    return p if isinstance(p, str) and p else "PreemptLowerPriority"


def pod_group_topology_keys(pg: Mapping[str, Any] | None) -> list[str]:
    """The keys of ``spec.schedulingConstraints.topology[]`` (at most one by validation)."""
    cons = _spec(pg).get("schedulingConstraints") or {}
    topo = cons.get("topology") if isinstance(cons, Mapping) else None
    return [t["key"] for t in topo or () if isinstance(t, Mapping) and isinstance(t.get("key"), str)]


def pod_group_disruption_mode_all(pg: Mapping[str, Any] | None) -> bool:
    """Whether ``spec.disruptionMode`` is ``all`` (the group is preempted as one victim)."""
    dm = _spec(pg).get("disruptionMode")
    return isinstance(dm, Mapping) and dm.get("all") is not None
