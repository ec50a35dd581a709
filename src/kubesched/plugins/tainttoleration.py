"""TaintToleration (upstream ``pkg/scheduler/framework/plugins/tainttoleration``, v1.34; v1.37.2 changes below).

* Filter: a node with a NoSchedule/NoExecute taint that the pod does not tolerate is rejected
  UnschedulableAndUnresolvable with ``"node(s) had untolerated taint(s)"`` (v1.34.x wording
  since PR #134740; earlier releases named the taint).
* PreScore/Score: the number of PreferNoSchedule taints not tolerated by the pod's
  tolerations with an empty or PreferNoSchedule effect; NormalizeScore is
  ``DefaultNormalizeScore(100, reverse=True)`` (fewer intolerable taints → higher score).
* Queueing hints (QueueingHints on, the v1.34 default): Node Add/UpdateNodeTaint → queue when
  the node went from untolerated to tolerated; Pod UpdatePodToleration → queue when the
  updated pod is the rejected pod itself.

Since 1.37 also a PreFilter (taint_toleration.go L104-110): Success, or Skip for a pod whose
resize the kubelet deferred when InPlacePodVerticalScalingSchedulerPreemption (alpha) is on —
Filter then passes such a pod (L118-121). Below 1.37 the plugin has no PreFilter (the factory
returns the plain class). Toleration operators ``Lt``/``Gt`` count only with the gate
TaintTolerationComparisonOperators (alpha, 1.35+), in Filter, Score and the node hint.

The batch shape works on ``NodeTable.taint_set``: each distinct taint set is checked once per
distinct toleration list (cached per table), so a pod costs one gather over ``rows``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.taints import (
    TAINT_EFFECT_NO_EXECUTE,
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_EFFECT_PREFER_NO_SCHEDULE,
    find_matching_untolerated_taint,
    tolerations_tolerate_taint,
)
from kubesched.features import FeatureGate, default_feature_gate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interface import Code, FilterResult, Status
from kubesched.framework.npfast import count_nonzero
from kubesched.framework.signers import TOLERATIONS_SIGNER_NAME, tolerations_signer
from kubesched.plugins.helper.gates import features_of
from kubesched.plugins.helper.normalize import default_normalize_score
from kubesched.plugins.helper.resize import SkipDeferredResizePreFilter, deferred_resize_enabled, is_pod_resize_deferred

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod, Taint, Toleration
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = [
    "DO_NOT_SCHEDULE_EFFECTS",
    "ERR_REASON_NOT_MATCH",
    "NAME",
    "TaintToleration",
    "TaintToleration137",
    "count_intolerable_taints_prefer_no_schedule",
    "intolerable_prefer_no_schedule_counts",
    "new",
    "tolerations_prefer_no_schedule",
    "untolerated_mask",
    "untolerated_taint",
]

NAME = "TaintToleration"
ERR_REASON_NOT_MATCH = "node(s) had untolerated taint(s)"
PRE_SCORE_STATE_KEY = "PreScore" + NAME

#: Upstream ``helper.DoNotScheduleTaintsFilterFunc``: the effects Filter cares about.
DO_NOT_SCHEDULE_EFFECTS = frozenset({TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_NO_EXECUTE})
_PREFER = frozenset({TAINT_EFFECT_PREFER_NO_SCHEDULE})


# ───────────────────────────── pure helpers ─────────────────────────────


def untolerated_taint(taints: Sequence[Taint], tolerations: Sequence[Toleration],
                      effects: Collection[str] = DO_NOT_SCHEDULE_EFFECTS,
                      comparison_operators: bool = False) -> Taint | None:
    """The first taint with an effect in ``effects`` that no toleration tolerates, or None
    (``comparison_operators``: gate TaintTolerationComparisonOperators)."""
    return find_matching_untolerated_taint(taints, tolerations, lambda t: t.effect in effects, comparison_operators)


def tolerations_prefer_no_schedule(tolerations: Sequence[Toleration]) -> list[Toleration]:
    """Tolerations with an empty effect (all effects) or PreferNoSchedule
    (upstream ``getAllTolerationPreferNoSchedule``)."""
    return [t for t in tolerations if not t.effect or t.effect == TAINT_EFFECT_PREFER_NO_SCHEDULE]


def count_intolerable_taints_prefer_no_schedule(taints: Sequence[Taint], tolerations: Sequence[Toleration],
                                                comparison_operators: bool = False) -> int:
    """Number of PreferNoSchedule taints that ``tolerations`` do not tolerate."""
    return sum(1 for t in taints if t.effect == TAINT_EFFECT_PREFER_NO_SCHEDULE
               and not tolerations_tolerate_taint(tolerations, t, comparison_operators))


def _tol_key(tolerations: Sequence[Toleration]) -> tuple:
    return tuple((t.key, t.operator, t.value, t.effect) for t in tolerations)


# per table (table.derived): {cache key → per-taint-set array}; arrays are extended when new
# taint sets appear (taint-set ids are append-only in NodeTable, so entries never go stale).
_CACHE_KEY = (__name__, "per_taint_set")
_MAX_ENTRIES = 4096


def _new_cache(table: NodeTable) -> dict[tuple, np.ndarray]:
    return {}


def _per_taint_set(table: NodeTable, key: tuple, compute: Any, dtype: Any) -> np.ndarray:
    per_table = table.derived(_CACHE_KEY, _new_cache)
    arr = per_table.get(key)
    sets = table.taint_sets
    n = len(sets)
    if arr is not None and len(arr) == n:
        return arr
    start = 0 if arr is None else len(arr)
    new = np.empty(n, dtype)
    if arr is not None:
        new[:start] = arr
    for tid in range(start, n):
        new[tid] = compute(sets[tid])
    if len(per_table) >= _MAX_ENTRIES:
        per_table.clear()
    per_table[key] = new
    return new


def untolerated_mask(table: NodeTable, rows: np.ndarray, tolerations: Sequence[Toleration],
                     effects: Collection[str] = DO_NOT_SCHEDULE_EFFECTS,
                     comparison_operators: bool = False) -> np.ndarray:
    """``bool[M]``: True where the node of ``rows[i]`` has a taint with an effect in
    ``effects`` that ``tolerations`` do not tolerate (PodTopologySpread reuses this for
    ``nodeTaintsPolicy: Honor``)."""
    eff = frozenset(effects)
    key = ("untol", _tol_key(tolerations), eff, comparison_operators)
    tols = list(tolerations)
    arr = _per_taint_set(table, key,
                         lambda ts: untolerated_taint(ts, tols, eff, comparison_operators) is not None, bool)
    if len(arr) <= 64 and not count_nonzero(arr):  # every taint set tolerated (an untainted cluster)
        return np.zeros(len(rows), bool)
    return arr[table.taint_set[rows]]


def intolerable_prefer_no_schedule_counts(table: NodeTable, rows: np.ndarray,
                                          tolerations: Sequence[Toleration],
                                          comparison_operators: bool = False) -> np.ndarray:
    """``int64[M]``: :func:`count_intolerable_taints_prefer_no_schedule` for each row; pass the
    tolerations already reduced by :func:`tolerations_prefer_no_schedule`."""
    key = ("prefer", _tol_key(tolerations), comparison_operators)
    tols = list(tolerations)
    arr = _per_taint_set(table, key, lambda ts: count_intolerable_taints_prefer_no_schedule(
        ts, tols, comparison_operators), np.int64)
    if len(arr) <= 64 and not count_nonzero(arr):  # no taint set counts (a cluster without PreferNoSchedule)
        return np.zeros(len(rows), np.int64)
    return arr[table.taint_set[rows]]


# ───────────────────────────── the plugin ─────────────────────────────


class _PreScoreState:
    __slots__ = ("tolerations_prefer_no_schedule",)

    def __init__(self, tolerations: list[Toleration]) -> None:
        self.tolerations_prefer_no_schedule = tolerations

    def clone(self) -> _PreScoreState:
        return self


class TaintToleration:
    """Filter + PreScore + Score (+ NormalizeScore); v1.34–1.36. See the module docstring."""

    name = NAME
    pure_filter_nodes = True
    """``filter_nodes`` judges each row on its own, without effects (``Framework.run_filter_plugins``)."""

    def sign_pod(self, pod: Pod) -> tuple[list[tuple[str, Any]], None]:
        """Batching signature (v1.37.2 taint_toleration.go ``SignPod``): the pod's sorted tolerations."""
        return [(TOLERATIONS_SIGNER_NAME, tolerations_signer(pod))], None

    def __init__(self, handle: Any = None, features: FeatureGate | None = None) -> None:
        self.handle = handle
        fg = features if features is not None else default_feature_gate()
        self.comparison_operators = fg.enabled("TaintTolerationComparisonOperators")
        self.deferred_resize = deferred_resize_enabled(fg)

    # ── events ──

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Node Add|UpdateNodeTaint; the pod's own new toleration: 1.37 ``TargetPod`` with an
        always-Queue hint (taint_toleration.go L84-91), before ``Pod`` with a hint comparing UIDs."""
        if features_of(self.handle).at_least(1, 37):
            pod_event = ClusterEventWithHint(
                ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATION),
                self.is_schedulable_after_target_pod_toleration_change)
        else:
            pod_event = ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
                self.is_schedulable_after_pod_toleration_change)
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.is_schedulable_after_node_change),
            pod_event,
        ]

    @staticmethod
    def is_schedulable_after_target_pod_toleration_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        """1.37 ``isSchedulableAfterTargetPodTolerationChange``: the updated pod is the rejected
        pod itself and got a toleration, which may make it schedulable."""
        return QueueingHint.QUEUE

    def is_schedulable_after_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        tols, cmp = pod.spec.tolerations, self.comparison_operators
        was_untolerated = True
        if old is not None:
            was_untolerated = untolerated_taint(old.spec.taints, tols, comparison_operators=cmp) is not None
        is_untolerated = untolerated_taint(new.spec.taints, tols, comparison_operators=cmp) is not None
        if was_untolerated and not is_untolerated:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_pod_toleration_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if _uid(pod) == _uid(new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    # ── Filter ──

    def filter_is_node_local(self, state: CycleState) -> bool:
        """Filter depends only on the pod and the one node's state (the scheduler's equivalence
        cache, :mod:`kubesched.framework.equivalence`, may reuse its passes)."""
        return True

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        if untolerated_taint(node_info.node.spec.taints, pod.spec.tolerations,
                             comparison_operators=self.comparison_operators) is None:
            return None
        return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NOT_MATCH)

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> FilterResult | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        mask = untolerated_mask(nodes, rows, pod.spec.tolerations, comparison_operators=self.comparison_operators)
        if not count_nonzero(mask):
            return None
        return FilterResult.single(mask, ERR_REASON_NOT_MATCH, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    # ── PreScore / Score ──

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(tolerations_prefer_no_schedule(pod.spec.tolerations)))
        return None

    @staticmethod
    def _tolerations(state: CycleState) -> list[Toleration]:
        s = state.read(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            raise TypeError(f"{s!r} convert to tainttoleration.preScoreState error")
        return s.tolerations_prefer_no_schedule

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        tols = self._tolerations(state)
        return count_intolerable_taints_prefer_no_schedule(node_info.node.spec.taints, tols,
                                                           self.comparison_operators), None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> np.ndarray:
        return intolerable_prefer_no_schedule_counts(nodes, rows, self._tolerations(state), self.comparison_operators)

    def normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> Status | None:
        default_normalize_score(100, True, scores)
        return None


def _uid(pod: Any) -> str:
    meta = pod.metadata
    return meta.uid or f"{meta.namespace}/{meta.name}"


class TaintToleration137(SkipDeferredResizePreFilter, TaintToleration):
    """v1.37: also a PreFilter (taint_toleration.go L104-115)."""


def new(args: Any, handle: Any) -> TaintToleration:
    """Factory (upstream ``tainttoleration.New``); the plugin takes no args. At emulated 1.37+
    the plugin has a PreFilter."""
    fg = features_of(handle)
    return (TaintToleration137 if fg.at_least(1, 37) else TaintToleration)(handle, fg)
