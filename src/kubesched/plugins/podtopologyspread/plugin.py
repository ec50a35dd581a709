"""The PodTopologySpread plugin: PreFilter(+extensions), Filter, PreScore, Score, NormalizeScore.

Ports ``pkg/scheduler/framework/plugins/podtopologyspread/{plugin,filtering,scoring}.go``
(v1.34) onto the columnar :class:`NodeTable`:

* PreFilter (``DoNotSchedule`` constraints): per constraint, the eligible nodes (all topology
  keys present, inclusion policies passed) and per domain the number of matching pods —
  ``np.bincount`` of the key's label column weighted by the :class:`SpreadIndex` counts.
* Filter: a node missing any key → UU ``ErrReasonNodeLabelNotMatch``; else
  ``count(domain) + selfMatch - minMatch > maxSkew`` → U ``ErrReasonConstraintsNotMatch``
  (``minMatch`` is 0 while there are fewer domains than ``minDomains``). The first failing
  constraint, in order, decides the reason, as upstream returns at the first failure.
* PreScore (``ScheduleAnyway`` constraints, or the system/list defaults): domains are the
  values among the feasible nodes, weights ``log(#domains + 2)`` (hostname: the number of
  feasible nodes not ignored); Score ``round(Σ cnt·w + maxSkew - 1)``; NormalizeScore
  ``100·(max + min - s) / max`` with ignored nodes at 0.

The per-node methods (``filter``/``score``) run the batch code on one row; the independent
per-node reference that the tests compare against is :mod:`.reference`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.taints import TAINT_EFFECT_NO_EXECUTE, TAINT_EFFECT_NO_SCHEDULE, find_matching_untolerated_taint
from kubesched.config.args import SYSTEM_DEFAULTING, PodTopologySpreadArgs
from kubesched.errors import SelectorError
from kubesched.framework.cycle_state import read_state
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    pod_info_hint,
)
from kubesched.framework.handle import lister_revision
from kubesched.framework.interface import MAX_NODE_SCORE, SKIP_STATUS, Code, FilterResult, Status, as_status
from kubesched.framework.node_info import PodInfo
from kubesched.plugins.helper.gates import features_of
from kubesched.plugins.helper.resize import is_pod_resize_deferred, with_deferred_resize
from kubesched.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    HONOR,
    HOSTNAME,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    Constraint,
    PodTerms,
    default_selector,
    filter_constraints,
    inclusion_masks,
    node_labels_match,
    pod_labels_match,
)
from kubesched.plugins.podtopologyspread.gomath import go_log, go_round
from kubesched.plugins.podtopologyspread.index import spread_index

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Node, Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "PodTopologySpread",
    "PreFilterState",
    "PreScoreState",
    "new",
]

NAME = "PodTopologySpread"
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
_MAX_INT32 = 2**31 - 1
_REASONS = (ERR_REASON_NODE_LABEL_NOT_MATCH, ERR_REASON_CONSTRAINTS_NOT_MATCH)
_CODES = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.UNSCHEDULABLE)
_NO_EFFECTS = (TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_NO_EXECUTE)


def _column(table: NodeTable, key: str) -> np.ndarray:
    col = table.label_column(key)
    return col if col is not None else np.full(table.capacity, -1, np.int32)


def _has_all(table: NodeTable, constraints: list[Constraint]) -> np.ndarray:
    """``bool[cap]``: alive rows carrying every constraint's topology key."""
    out = table.alive[: table.capacity].copy()
    for key in {c.topology_key for c in constraints}:
        col = table.label_column(key)
        if col is None:
            out[:] = False
            break
        out &= col >= 0
    return out


_SELECTOR_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")
"""The kinds :func:`default_selector` reads through the lister."""
_DEFAULTS_CACHE_SIZE = 4096


class PreFilterState:
    """Upstream ``preFilterState``: per constraint the matching-pod count of every domain
    (``dom[i]``, indexed by the key's label value id; the extra last slot, read by ``-1``,
    stays 0) and which domains are eligible (``present[i]``)."""

    __slots__ = ("constraints", "self_match", "dom", "present")

    def __init__(self, constraints: list[Constraint], self_match: list[bool],
                 dom: list[np.ndarray], present: list[np.ndarray]) -> None:
        self.constraints = constraints
        self.self_match = self_match
        self.dom = dom
        self.present = present

    def min_match(self, i: int) -> int:
        """Upstream ``minMatchNum``: the global minimum, 0 while #domains < minDomains."""
        present = self.present[i]
        ndom = int(np.count_nonzero(present))
        if ndom < self.constraints[i].min_domains:
            return 0
        return int(self.dom[i][present].min()) if ndom else _MAX_INT32

    def clone(self) -> PreFilterState:
        return PreFilterState(self.constraints, self.self_match, [d.copy() for d in self.dom],
                              [p.copy() for p in self.present])


class PreScoreState:
    """Upstream ``preScoreState``: constraints, normalizing weights, per-domain counts of
    non-hostname constraints (``dom[i]`` indexed by value id, ``sentinel[i]`` standing for a
    missing label), per-node counts for hostname ones, and which scored rows are ignored."""

    __slots__ = ("constraints", "weights", "dom", "node_counts", "require_all", "ignored")

    def __init__(self) -> None:
        self.constraints: list[Constraint] = []
        self.weights: list[float] = []
        self.dom: list[np.ndarray | None] = []
        self.node_counts: list[np.ndarray] = []
        self.require_all = True
        self.ignored: np.ndarray | None = None

    def clone(self) -> PreScoreState:
        return self


class PodTopologySpread:
    """See the module docstring. Build with :func:`new`."""

    name = NAME
    deferred_resize = False
    """InPlacePodVerticalScalingSchedulerPreemption (alpha, 1.37; set by the factory): a pod whose
    resize the kubelet deferred is skipped (podtopologyspread/filtering.go L140-143, L318-321)."""

    def sign_pod(self, pod: Pod) -> tuple[list[tuple[str, Any]] | None, Status | None]:
        """Batching signature (v1.37.2 podtopologyspread/plugin.go ``SignPod``): refused for a
        pod with constraints, and for every pod while the plugin has default constraints (the
        ``System`` defaulting always has): no fragment otherwise."""
        if pod.spec.topology_spread_constraints:
            return None, Status(Code.UNSCHEDULABLE, ("pods with topology constraints are not signable",))
        if self.default_constraints:
            return None, Status(Code.UNSCHEDULABLE, ("pods with default topology constraints are not signable",))
        return [], None

    @property
    def signs_no_pod(self) -> bool:
        """Every :meth:`sign_pod` call refuses (the plugin has default constraints, e.g. the
        ``System`` defaulting): the framework skips signing (the signature is None either way)."""
        return bool(self.default_constraints)

    def __init__(self, args: PodTopologySpreadArgs | None, handle: Handle) -> None:
        args = args if args is not None else PodTopologySpreadArgs()
        self.handle = handle
        fg = features_of(handle)
        self.comparison_operators = fg.enabled("TaintTolerationComparisonOperators")
        self.system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
        self.default_constraints: tuple[Any, ...] = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else tuple(args.default_constraints))
        self._parsed_defaults: dict[str, list[Constraint]] = {}
        # the default constraints per (action, namespace, labels, controller), valid while the
        # lister's Service/RC/RS/StatefulSet counters stay at _defaults_rev (see _defaults)
        self._defaults_cache: dict[tuple[Any, ...], tuple[Constraint, ...]] = {}
        self._defaults_rev: int | None = None
        if handle is not None and handle.nodes is not None:
            spread_index(handle.nodes)  # start listening before pods arrive

    # ───────────────────────────── constraints ─────────────────────────────

    def _explicit(self, state: CycleState | None, pod: Pod,
                  pod_info: PodInfo | None = None) -> tuple[list[Constraint], list[Constraint], PodTerms]:
        """The pod's parsed explicit constraints, cached in the PodInfo of the cycle's ``state``
        (or the queued ``pod_info`` the queueing hints get) when it holds ``pod``."""
        pi = state.pod_info if state is not None else pod_info
        if pi is not None and pi.pod is pod:
            cached = pi.extra.get(NAME)
            if cached is not None:
                return cached  # type: ignore[return-value]
            out = pi.extra[NAME] = self._parse_explicit(pod)
            return out
        return self._parse_explicit(pod)

    def _parse_explicit(self, pod: Pod) -> tuple[list[Constraint], list[Constraint], PodTerms]:
        """The pod's (DoNotSchedule, ScheduleAnyway) constraints and its PodTerms; raises
        :class:`SelectorError`."""
        tscs, labels = pod.spec.topology_spread_constraints, pod.metadata.labels
        return (filter_constraints(tscs, labels, DO_NOT_SCHEDULE),
                filter_constraints(tscs, labels, SCHEDULE_ANYWAY), PodTerms(pod, self.comparison_operators))

    def _defaults(self, pod: Pod, action: str) -> list[Constraint]:
        """Upstream ``buildDefaultConstraints``."""
        cs = self._parsed_defaults.get(action)
        if cs is None:
            # the selector (and so any matchLabelKeys merge) is replaced below: parse once
            cs = self._parsed_defaults[action] = filter_constraints(self.default_constraints, {}, action)
        if not cs:
            return []
        lister = self.handle.lister
        rev = lister_revision(lister, _SELECTOR_KINDS)
        if rev is None:  # a lister without change counters: read it every time
            return self._build_defaults(pod, cs)
        # default_selector reads exactly the pod's namespace, labels and first controller reference,
        # and the lister's objects of _SELECTOR_KINDS: equal keys at an unchanged revision give
        # equal constraints (the replicas of one template share one entry)
        if rev != self._defaults_rev:
            self._defaults_cache.clear()
            self._defaults_rev = rev
        meta = pod.metadata
        owner = next((o for o in meta.owner_references if o.controller), None)
        key = (action, meta.namespace, frozenset(meta.labels.items()),
               None if owner is None else (owner.api_version, owner.kind, owner.name))
        cached = self._defaults_cache.get(key)
        if cached is None:
            if len(self._defaults_cache) >= _DEFAULTS_CACHE_SIZE:
                self._defaults_cache.clear()
            cached = self._defaults_cache[key] = tuple(self._build_defaults(pod, cs))
        return list(cached)

    def _build_defaults(self, pod: Pod, cs: list[Constraint]) -> list[Constraint]:
        """``cs`` with the pod's default selector (upstream ``buildDefaultConstraints``)."""
        selector = default_selector(pod, self.handle.lister)
        if selector.is_empty:
            return []
        return [Constraint(c.max_skew, c.topology_key, selector, c.min_domains, c.node_affinity_policy,
                           c.node_taints_policy) for c in cs]

    def get_constraints(self, pod: Pod, action: str = DO_NOT_SCHEDULE, state: CycleState | None = None,
                        pod_info: PodInfo | None = None) -> list[Constraint]:
        """The pod's constraints for ``action``, or the default ones when it has none (parsed once
        per PodInfo of ``state`` or ``pod_info``)."""
        kind = "hard" if action == DO_NOT_SCHEDULE else "soft"
        if pod.spec.topology_spread_constraints:
            try:
                hard, soft, _ = self._explicit(state, pod, pod_info)
            except SelectorError as e:
                raise SelectorError(f"obtaining pod's {kind} topology spread constraints: {e}") from None
            return hard if action == DO_NOT_SCHEDULE else soft
        try:
            return self._defaults(pod, action)
        except SelectorError as e:
            raise SelectorError(f"setting default {kind} topology spread constraints: {e}") from None

    # ───────────────────────────── PreFilter ─────────────────────────────

    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[None, Status | None]:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None, SKIP_STATUS
        try:
            constraints = self.get_constraints(pod, DO_NOT_SCHEDULE, state)
        except SelectorError as e:
            return None, as_status(RuntimeError(f"get constraints from pod: {e}"))
        if not constraints:
            return None, SKIP_STATUS
        state.write(PRE_FILTER_STATE_KEY, self._pre_filter_state(state, pod, nodes, constraints))
        return None, None

    def _pre_filter_state(self, state: CycleState | None, pod: Pod, table: NodeTable,
                          constraints: list[Constraint]) -> PreFilterState:
        terms = self._explicit(state, pod)[2]
        idx = spread_index(table)
        rows = np.flatnonzero(_has_all(table, constraints))
        masks = inclusion_masks(table, rows, constraints, terms)
        ns = pod.metadata.namespace
        dom, present, self_match = [], [], []
        for c, mask in zip(constraints, masks):
            er = rows if mask is None else rows[mask]
            vals = _column(table, c.topology_key)[er]
            size = len(table.label_values.get(c.topology_key, ())) + 1
            counts = idx.counts(ns, c.selector)[er]
            dom.append(np.bincount(vals, weights=counts, minlength=size).astype(np.int64))
            present.append(np.bincount(vals, minlength=size) > 0)
            self_match.append(c.selector.matches(pod.metadata.labels))
        return PreFilterState(constraints, self_match, dom, present)

    def pre_filter_extensions(self) -> PodTopologySpread:
        return self

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None:
        return self._update_with_pod(state, pod_to_schedule, pod_info_to_add, node_info, 1)

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None:
        return self._update_with_pod(state, pod_to_schedule, pod_info_to_remove, node_info, -1)

    def _update_with_pod(self, state: CycleState, preemptor: Pod, pod_info: PodInfo, node_info: NodeInfo,
                         delta: int) -> Status | None:
        """Upstream ``updateWithPod`` (terminating pods are not skipped here, as upstream)."""
        try:
            s = read_state(state, PRE_FILTER_STATE_KEY, PreFilterState)
        except Exception as e:  # noqa: BLE001
            return as_status(e)
        updated = pod_info.pod
        node = node_info.node
        if updated.metadata.namespace != preemptor.metadata.namespace or node is None:
            return None
        labels = node.metadata.labels
        if not node_labels_match(labels, s.constraints):
            return None
        terms = self._explicit(state, preemptor)[2]
        table, row = node_info.table, node_info.row
        for i, c in enumerate(s.constraints):
            if not c.selector.matches(updated.metadata.labels):
                continue
            if not _node_included(c, terms, node):
                continue
            v = int(table.labels[c.topology_key][row])
            if v + 1 >= len(s.dom[i]):  # a value the state has not seen (defensive)
                pad = v + 2 - len(s.dom[i])
                s.dom[i] = np.concatenate([s.dom[i][:-1], np.zeros(pad, np.int64), s.dom[i][-1:]])
                s.present[i] = np.concatenate([s.present[i][:-1], np.zeros(pad, bool), s.present[i][-1:]])
            s.dom[i][v] += delta
            s.present[i][v] = True
        return None

    # ───────────────────────────── Filter ─────────────────────────────

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable,
                     rows: np.ndarray) -> FilterResult | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        s = read_state(state, PRE_FILTER_STATE_KEY, PreFilterState)
        if not s.constraints:
            return None
        failed = np.zeros(len(rows), np.int64)
        open_ = np.ones(len(rows), bool)
        for i, c in enumerate(s.constraints):
            vals = _column(nodes, c.topology_key)[rows]
            missing = vals < 0
            dom = s.dom[i]
            if len(dom) - 1 < len(nodes.label_values.get(c.topology_key, ())):
                vals = np.where(vals >= len(dom) - 1, -1, vals)
            skew = dom[vals] + s.self_match[i] - s.min_match(i)
            bad_label = open_ & missing
            bad_skew = open_ & ~missing & (skew > c.max_skew)
            failed[bad_label] = 1
            failed[bad_skew] = 2
            open_ &= ~(bad_label | bad_skew)
        if not failed.any():
            return None
        return FilterResult(failed, _REASONS, _CODES)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        res = self.filter_nodes(state, pod, node_info.table, np.asarray([node_info.row], np.int64))
        if res is None or not res.failed[0]:
            return None
        return res.status_for(int(res.failed[0]))

    # ───────────────────────────── PreScore / Score ─────────────────────────────

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> Status | None:
        if len(nodes) == 0:
            return SKIP_STATUS
        try:
            constraints = self.get_constraints(pod, SCHEDULE_ANYWAY, state)
        except SelectorError as e:
            return as_status(RuntimeError(f"calculating preScoreState: {e}"))
        if not constraints:
            return SKIP_STATUS
        s = PreScoreState()
        s.constraints = constraints
        s.require_all = bool(pod.spec.topology_spread_constraints) or not self.system_defaulted
        table = nodes
        rows = np.asarray(rows, np.int64)
        cap = table.capacity
        if s.require_all:
            has_all = _has_all(table, constraints)
            keep = has_all[rows]
            s.ignored = ~keep
            scored = rows[keep]
            counted = has_all
        else:
            s.ignored = np.zeros(len(rows), bool)
            scored, counted = rows, table.alive[:cap]
        terms = self._explicit(state, pod)[2]
        idx = spread_index(table)
        ns = pod.metadata.namespace
        for c in constraints:
            node_counts = idx.counts(ns, c.selector)
            s.node_counts.append(node_counts)
            if c.topology_key == HOSTNAME:
                s.weights.append(go_log(float(len(scored) + 2)))
                s.dom.append(None)
                continue
            key = c.topology_key
            col = _column(table, key)
            nv = len(table.label_values.get(key, ()))
            empty = table.label_value_id(key, "")
            sentinel = empty if empty >= 0 else nv  # a missing label reads as "" upstream

            def mapped(r: np.ndarray, col: np.ndarray = col, sentinel: int = sentinel) -> np.ndarray:
                v = col[r]
                return np.where(v >= 0, v, sentinel)

            domset = np.zeros(nv + 1, bool)
            domset[mapped(scored)] = True
            s.weights.append(go_log(float(int(np.count_nonzero(domset)) + 2)))
            # only rows holding matching pods add to a domain: the counted rows with a nonzero
            # count (the same sums as over every counted row, without an O(nodes) pass)
            er = np.flatnonzero(node_counts[:cap])
            er = er[counted[er]]
            mask = inclusion_masks(table, er, [c], terms)[0]
            if mask is not None:
                er = er[mask]
            mv = mapped(er)
            keep = domset[mv]
            s.dom.append(np.bincount(mv[keep], weights=node_counts[er[keep]], minlength=nv + 1))
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> np.ndarray:
        s = read_state(state, PRE_SCORE_STATE_KEY, PreScoreState)
        rows = np.asarray(rows, np.int64)
        total = np.zeros(len(rows), np.float64)
        for i, c in enumerate(s.constraints):
            vals = _column(nodes, c.topology_key)[rows]
            has = vals >= 0
            dom = s.dom[i]
            if dom is None:
                cnt = s.node_counts[i][rows].astype(np.float64)
            else:
                cnt = dom[np.where(has & (vals < len(dom)), vals, len(dom) - 1)]
            contrib = cnt * s.weights[i] + float(c.max_skew - 1)
            if has.all():
                total += contrib
            else:
                total = np.where(has, total + contrib, total)
        if s.require_all:
            ignored = ~_has_all(nodes, s.constraints)[rows]
        else:
            ignored = np.zeros(len(rows), bool)
        s.ignored = ignored
        raw = go_round(total)
        raw[ignored] = 0
        return raw

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = read_state(state, PRE_SCORE_STATE_KEY, PreScoreState)
        keep = s.ignored
        raw = self.score_nodes(state, pod, node_info.table, np.asarray([node_info.row], np.int64))
        s.ignored = keep  # normalize_score needs the mask of the whole PreScore row set
        return int(raw[0]), None

    def normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> Status | None:
        s = read_state(state, PRE_SCORE_STATE_KEY, PreScoreState)
        ignored = s.ignored if s.ignored is not None and len(s.ignored) == len(scores) else None
        if ignored is None or not ignored.any():
            if len(scores):
                lo, hi = int(scores.min()), max(int(scores.max()), 0)
                if hi == 0:
                    scores[:] = MAX_NODE_SCORE
                else:
                    scores[:] = MAX_NODE_SCORE * (hi + lo - scores) // hi
            return None
        ok = ~ignored
        if ok.any():
            lo = int(scores[ok].min())
            hi = max(int(scores[ok].max()), 0)
            if hi == 0:
                scores[ok] = MAX_NODE_SCORE
            else:
                scores[ok] = MAX_NODE_SCORE * (hi + lo - scores[ok]) // hi
        scores[ignored] = 0
        return None

    # ───────────────────────────── queueing hints ─────────────────────────────

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Pod Add|UpdatePodLabel|UpdatePodToleration|Delete and Node Add|Delete|UpdateNodeLabel|
        UpdateNodeTaint. 1.37 (plugin.go L139-158): ``AssignedPod`` Add|UpdatePodLabel|Delete and
        ``TargetPod`` UpdatePodToleration|UpdatePodLabel (:meth:`is_schedulable_after_target_pod_change`)."""
        node_actions = ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
        node = ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions),
                                    self.is_schedulable_after_node_change)
        if not features_of(self.handle).at_least(1, 37):
            pod_actions = (ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATION
                           | ActionType.DELETE)
            return [ClusterEventWithHint(ClusterEvent(EventResource.POD, pod_actions),
                                         self.is_schedulable_after_pod_change), node]
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD,
                                              ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
                                 self.is_schedulable_after_pod_change),
            ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD,
                                              ActionType.UPDATE_POD_TOLERATION | ActionType.UPDATE_POD_LABEL),
                                 self.is_schedulable_after_target_pod_change),
            node,
        ]

    @pod_info_hint
    def is_schedulable_after_target_pod_change(self, pod: Pod | PodInfo, old: Pod, new: Pod) -> QueueingHint:
        """1.37 ``isSchedulableAfterTargetPodChange``: Queue on a toleration change when some
        constraint honours taints, else when a label change flips a constraint's selector."""
        pi: PodInfo | None = None
        if isinstance(pod, PodInfo):
            pi, pod = pod, pod.pod
        try:
            constraints = self.get_constraints(pod, DO_NOT_SCHEDULE, pod_info=pi)
        except SelectorError:
            return QueueingHint.QUEUE
        if new.spec.tolerations != old.spec.tolerations and any(c.node_taints_policy == HONOR for c in constraints):
            return QueueingHint.QUEUE
        if (new.metadata.labels or {}) == (old.metadata.labels or {}):
            return QueueingHint.SKIP
        for c in constraints:
            if c.selector.matches(old.metadata.labels) != c.selector.matches(new.metadata.labels):
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @pod_info_hint
    def is_schedulable_after_pod_change(self, pod: Pod | PodInfo, old: Pod | None, new: Pod | None) -> QueueingHint:
        """Upstream ``isSchedulableAfterPodChange`` (1.37 ``isSchedulableAfterAssignedPodChange``);
        since 1.36 a pod with a nominated node counts as scheduled. The hints take the pod or its
        queued PodInfo (constraints parsed once per pod version, as in the cycle)."""
        pi: PodInfo | None = None
        if isinstance(pod, PodInfo):
            pi, pod = pod, pod.pod
        nominated = features_of(self.handle).at_least(1, 36)
        if ((new is not None and not _involved(new, pod, nominated))
                or (old is not None and not _involved(old, pod, nominated))):
            return QueueingHint.SKIP
        try:
            constraints = self.get_constraints(pod, DO_NOT_SCHEDULE, pod_info=pi)
        except SelectorError:
            return QueueingHint.QUEUE
        if new is not None and old is not None:
            if (pod.metadata.uid == new.metadata.uid and new.spec.tolerations != old.spec.tolerations
                    and any(c.node_taints_policy == HONOR for c in constraints)):
                return QueueingHint.QUEUE
            if new.metadata.labels == old.metadata.labels:
                return QueueingHint.SKIP
            for c in constraints:
                if c.selector.matches(old.metadata.labels) != c.selector.matches(new.metadata.labels):
                    return QueueingHint.QUEUE
            return QueueingHint.SKIP
        changed = new if new is not None else old
        if changed is not None and pod_labels_match(constraints, changed.metadata.labels):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @pod_info_hint
    def is_schedulable_after_node_change(self, pod: Pod | PodInfo, old: Node | None, new: Node | None) -> QueueingHint:
        """Upstream ``isSchedulableAfterNodeChange``."""
        pi: PodInfo | None = None
        if isinstance(pod, PodInfo):
            pi, pod = pod, pod.pod
        try:
            constraints = self.get_constraints(pod, DO_NOT_SCHEDULE, pod_info=pi)
        except SelectorError:
            return QueueingHint.QUEUE
        old_ok = old is not None and node_labels_match(old.metadata.labels, constraints)
        new_ok = new is not None and node_labels_match(new.metadata.labels, constraints)
        if old is not None and new is not None:
            if old_ok != new_ok:
                return QueueingHint.QUEUE
            old_l, new_l = old.metadata.labels, new.metadata.labels
            if new_ok and (any(old_l.get(c.topology_key, "") != new_l.get(c.topology_key, "") for c in constraints)
                           or old.spec.taints != new.spec.taints):
                return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if new is not None:
            return QueueingHint.QUEUE if new_ok else QueueingHint.SKIP
        return QueueingHint.QUEUE if old_ok else QueueingHint.SKIP


def _involved(incoming: Pod, pod_with_spreading: Pod, nominated: bool = False) -> bool:
    """Upstream ``involvedInTopologySpreading`` (``nominated``: 1.36+, a pod with a nominated
    node counts as scheduled; 1.37 also drops the UID clause, which only served the target pod's
    own updates, now TargetPod events that do not reach this hint)."""
    scheduled = incoming.spec.node_name != "" or (nominated and bool(incoming.status.nominated_node_name))
    return (incoming.metadata.uid == pod_with_spreading.metadata.uid
            or (scheduled and incoming.metadata.namespace == pod_with_spreading.metadata.namespace))


def _node_included(c: Constraint, terms: PodTerms, node: Node) -> bool:
    """Upstream ``matchNodeInclusionPolicies`` for one node."""
    if c.node_affinity_policy == HONOR and terms.affinity is not None:
        if not terms.affinity.match(node.metadata.labels, node.metadata.name):
            return False
    if c.node_taints_policy == HONOR:
        if find_matching_untolerated_taint(node.spec.taints, terms.tolerations,
                                           lambda t: t.effect in _NO_EFFECTS, terms.comparison_operators) is not None:
            return False
    return True


def new(args: PodTopologySpreadArgs | None, handle: Handle) -> PodTopologySpread:
    """Factory registered as ``kubesched.plugins.podtopologyspread:new``."""
    return with_deferred_resize(PodTopologySpread(args, handle), handle)
