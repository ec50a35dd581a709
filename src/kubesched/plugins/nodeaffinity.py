"""NodeAffinity (upstream ``pkg/scheduler/framework/plugins/nodeaffinity``, v1.34).

* PreFilter: Skip when the pod has no ``spec.nodeSelector``, no required node affinity and the
  plugin has no ``addedAffinity``. Otherwise the required constraints
  (:class:`~kubesched.api.nodeselector.RequiredNodeAffinity`: nodeSelector AND required terms)
  are stored for Filter, and when *every* required term pins ``metadata.name`` with a
  ``matchFields`` ``In`` requirement the union of those names is returned as a
  :class:`PreFilterResult` (within a term, several such requirements intersect). If that union
  is empty the pod can match no node: UnschedulableAndUnresolvable
  ``"pod affinity terms conflict"``.
* Filter: ``addedAffinity.required`` not matched → UU
  ``"node(s) didn't match scheduler-enforced node affinity"``; the pod's constraints not
  matched → UU ``"node(s) didn't match Pod's node affinity/selector"`` (parse errors in a term
  make that term match nothing; they are not reported, as upstream).
* PreScore: Skip when the pod has no preferred terms and ``addedAffinity`` has none; a parse
  error in the pod's preferred terms is an Error.
* Score: Σ weights of the matching preferred terms (the pod's and ``addedAffinity``'s);
  NormalizeScore is ``DefaultNormalizeScore(100, reverse=False)``.
* Queueing hint (QueueingHints on, the v1.34 default): Node Add/UpdateNodeLabel → queue when
  the node matches ``addedAffinity`` and the pod's required affinity, and (on update) did not
  match before.

Parsed selectors are cached per pod in ``state.pod_info.extra[NAME]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api import objects as o
from kubesched.api.nodeselector import NodeSelectorMatcher, PreferredSchedulingTerms, RequiredNodeAffinity
from kubesched.errors import InputError, SelectorError
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    pod_info_hint,
)
from kubesched.framework.interface import SKIP_STATUS, Code, FilterResult, PreFilterResult, Status, as_status
from kubesched.framework.node_info import PodInfo
from kubesched.framework.signers import NODE_AFFINITY_SIGNER_NAME, NODE_SELECTOR_SIGNER_NAME, node_affinity_signer
from kubesched.plugins.helper.nodeselector import node_selector_mask, preferred_score, required_affinity_mask
from kubesched.plugins.helper.normalize import default_normalize_score
from kubesched.plugins.helper.resize import is_pod_resize_deferred, with_deferred_resize

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NAME",
    "NodeAffinity",
    "get_pod_preferred_node_affinity",
    "new",
    "pre_filter_node_names",
]

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
_OBJECT_NAME_FIELD = "metadata.name"


def _required_selector(pod: Pod) -> o.NodeSelector | None:
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None:
        return None
    return aff.node_affinity.required_during_scheduling_ignored_during_execution


def pre_filter_node_names(pod: Pod) -> frozenset[str] | None:
    """Upstream ``PreFilter``'s node-name narrowing: None when some required term does not pin
    ``metadata.name`` (or there are no required terms); else the union over terms of the
    intersection of their ``matchFields metadata.name In`` values (possibly empty)."""
    required = _required_selector(pod)
    if required is None or not required.node_selector_terms:
        return None
    names: set[str] = set()
    for term in required.node_selector_terms:
        term_names: set[str] | None = None
        for r in term.match_fields:
            if r.key == _OBJECT_NAME_FIELD and r.operator == "In":
                s = set(r.values)
                term_names = s if term_names is None else term_names & s
        if term_names is None:
            return None
        names |= term_names
    return frozenset(names)


def get_pod_preferred_node_affinity(pod: Pod) -> PreferredSchedulingTerms | None:
    """The pod's parsed preferred terms, None when it has none; raises :class:`SelectorError`."""
    aff = pod.spec.affinity
    if aff is not None and aff.node_affinity is not None and \
            aff.node_affinity.preferred_during_scheduling_ignored_during_execution:
        return PreferredSchedulingTerms(aff.node_affinity.preferred_during_scheduling_ignored_during_execution)
    return None


class _PodCache:
    """Pod-derived data that never changes for a pod version (kept in ``pod_info.extra``)."""

    __slots__ = ("required", "preferred", "preferred_error", "_preferred_done")

    def __init__(self, pod: Pod) -> None:
        self.required = RequiredNodeAffinity(pod)
        self.preferred: PreferredSchedulingTerms | None = None
        self.preferred_error: SelectorError | None = None
        self._preferred_done = False

    def get_preferred(self, pod: Pod) -> PreferredSchedulingTerms | None:
        if not self._preferred_done:
            try:
                self.preferred = get_pod_preferred_node_affinity(pod)
            except SelectorError as e:
                self.preferred_error = e
            self._preferred_done = True
        if self.preferred_error is not None:
            raise self.preferred_error
        return self.preferred


class _PreFilterState:
    __slots__ = ("required",)

    def __init__(self, required: RequiredNodeAffinity) -> None:
        self.required = required

    def clone(self) -> _PreFilterState:
        return self


class _PreScoreState:
    __slots__ = ("preferred",)

    def __init__(self, preferred: PreferredSchedulingTerms | None) -> None:
        self.preferred = preferred

    def clone(self) -> _PreScoreState:
        return self


class NodeAffinity:
    """PreFilter + Filter + PreScore + Score (+ NormalizeScore). See the module docstring."""

    name = NAME
    pure_filter_nodes = True
    """``filter_nodes`` judges each row on its own, without effects (``Framework.run_filter_plugins``)."""
    deferred_resize = False
    """InPlacePodVerticalScalingSchedulerPreemption (alpha, 1.37; set by the factory): a pod whose
    resize the kubelet deferred is skipped (node_affinity.go L150-153, L212-215)."""

    def sign_pod(self, pod: Pod) -> tuple[list[tuple[str, Any]], None]:
        """Batching signature (v1.37.2 node_affinity.go ``SignPod``): the normalised node
        affinity and the nodeSelector (``null`` when empty)."""
        return [(NODE_AFFINITY_SIGNER_NAME, node_affinity_signer(pod)),
                (NODE_SELECTOR_SIGNER_NAME, pod.spec.node_selector or None)], None

    def __init__(self, added_node_selector: NodeSelectorMatcher | None = None,
                 added_pref_sched_terms: PreferredSchedulingTerms | None = None, handle: Any = None) -> None:
        self.added_node_selector = added_node_selector
        self.added_pref_sched_terms = added_pref_sched_terms
        self.handle = handle

    # ── per-pod cache ──

    @staticmethod
    def _pod_cache(state: CycleState | None, pod: Pod) -> _PodCache:
        pi = state.pod_info if state is not None else None
        if pi is not None and pi.pod is pod:
            c = pi.extra.get(NAME)
            if c is None:
                c = pi.extra[NAME] = _PodCache(pod)
            return c  # type: ignore[return-value]
        return _PodCache(pod)

    # ── events ──

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(
            ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
            self.is_schedulable_after_node_change)]

    @pod_info_hint
    def is_schedulable_after_node_change(self, pod: Pod | PodInfo, old: Any, new: Any) -> QueueingHint:
        """Upstream ``isSchedulableAfterNodeChange`` (node_affinity.go). ``pod``: the pod, or the
        queued pod's PodInfo, whose parsed required affinity is then the one cached for the
        scheduling cycle (upstream builds it per event)."""
        if self.added_node_selector is not None and \
                not self.added_node_selector.match(new.metadata.labels, new.metadata.name):
            return QueueingHint.SKIP
        if isinstance(pod, PodInfo):
            c = pod.extra.get(NAME)
            if c is None:
                c = pod.extra[NAME] = _PodCache(pod.pod)
            required = c.required  # type: ignore[attr-defined]
        else:
            required = RequiredNodeAffinity(pod)
        if not required.match(new.metadata.labels, new.metadata.name):
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        if required.match(old.metadata.labels, old.metadata.name):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    # ── PreFilter ──

    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[PreFilterResult | None, Status | None]:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None, SKIP_STATUS
        required = _required_selector(pod)
        if required is None and self.added_node_selector is None and not pod.spec.node_selector:
            return None, SKIP_STATUS
        cache = self._pod_cache(state, pod)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(cache.required))
        names = pre_filter_node_names(pod)
        if names is None:
            return None, None
        if not names:
            return None, Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return PreFilterResult(names), None

    def pre_filter_extensions(self) -> None:
        return None

    def _required(self, state: CycleState, pod: Pod) -> RequiredNodeAffinity:
        s = state.get(PRE_FILTER_STATE_KEY)
        if isinstance(s, _PreFilterState):
            return s.required
        # PreFilter disabled: compute here, as upstream's fallback.
        return self._pod_cache(state, pod).required

    # ── Filter ──

    def filter_is_node_local(self, state: CycleState) -> bool:
        """Filter depends only on the pod and the one node's state (the scheduler's equivalence
        cache, :mod:`kubesched.framework.equivalence`, may reuse its passes)."""
        return True

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        node = node_info.node
        labels, name = node.metadata.labels, node.metadata.name
        if self.added_node_selector is not None and not self.added_node_selector.match(labels, name):
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
        if not self._required(state, pod).match(labels, name):
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> FilterResult | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        required = self._required(state, pod)
        if self.added_node_selector is None:
            ok = required_affinity_mask(nodes, rows, required)
            if ok.all():
                return None
            return FilterResult.single(~ok, ERR_REASON_POD, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        added_ok = node_selector_mask(nodes, rows, self.added_node_selector)
        failed = np.where(added_ok, 0, 1).astype(np.int64)
        if added_ok.any():
            pod_ok = required_affinity_mask(nodes, rows[added_ok], required)
            failed[added_ok] = np.where(pod_ok, 0, 2)
        if not failed.any():
            return None
        return FilterResult(failed, (ERR_REASON_ENFORCED, ERR_REASON_POD),
                            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE))

    # ── PreScore / Score ──

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> Status | None:
        try:
            preferred = self._pod_cache(state, pod).get_preferred(pod)
        except SelectorError as e:
            return as_status(e)
        if preferred is None and self.added_pref_sched_terms is None:
            return SKIP_STATUS
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(preferred))
        return None

    def _preferred(self, state: CycleState, pod: Pod) -> PreferredSchedulingTerms | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(s, _PreScoreState):
            return s.preferred
        # PreScore disabled: compute here (a parse error raises → Error status).
        return self._pod_cache(state, pod).get_preferred(pod)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        node = node_info.node
        labels, name = node.metadata.labels, node.metadata.name
        count = 0
        if self.added_pref_sched_terms is not None:
            count += self.added_pref_sched_terms.score(labels, name)
        try:
            preferred = self._preferred(state, pod)
        except SelectorError as e:
            return 0, as_status(e)
        if preferred is not None:
            count += preferred.score(labels, name)
        return count, None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> np.ndarray:
        out = preferred_score(nodes, rows, self.added_pref_sched_terms)
        preferred = self._preferred(state, pod)
        if preferred is not None:
            out += preferred_score(nodes, rows, preferred)
        return out

    def normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> Status | None:
        default_normalize_score(100, False, scores)
        return None


def _as_node_affinity(value: Any) -> o.NodeAffinity | None:
    if value is None or isinstance(value, o.NodeAffinity):
        return value
    if isinstance(value, dict):  # tolerate an untyped args value
        return o.decode(o.NodeAffinity, value)
    raise InputError(f"addedAffinity: expected a NodeAffinity, got {type(value).__name__}")


def new(args: Any, handle: Any) -> NodeAffinity:
    """Factory (upstream ``nodeaffinity.New``): parses ``args.added_affinity`` strictly.

    Raises :class:`InputError` (path ``addedAffinity...``) when its selectors do not parse.
    """
    added = _as_node_affinity(getattr(args, "added_affinity", None)) if args is not None else None
    added_ns: NodeSelectorMatcher | None = None
    added_pref: PreferredSchedulingTerms | None = None
    if added is not None:
        req = added.required_during_scheduling_ignored_during_execution
        if req is not None:
            added_ns = NodeSelectorMatcher(req)
            if added_ns.errors:
                raise InputError("; ".join(added_ns.errors),
                                 "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution")
        terms = added.preferred_during_scheduling_ignored_during_execution
        if terms:
            try:
                added_pref = PreferredSchedulingTerms(terms)
            except SelectorError as e:
                raise InputError(e.message, "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution") from None
    return with_deferred_resize(NodeAffinity(added_ns, added_pref, handle), handle)
