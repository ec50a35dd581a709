"""InterPodAffinity (upstream ``pkg/scheduler/framework/plugins/interpodaffinity``, v1.34).

PreFilter reads the :class:`~kubesched.plugins.interpodaffinity.index.AffinityIndex` and writes,
per topology key, ``int64`` arrays of counts indexed by the key's label value id (the upstream
``topologyToMatchedTermCount`` maps, as arrays): ``aff`` (existing pods matching all the incoming
pod's required affinity terms), ``anti`` (existing pods matching its required anti-affinity
terms), ``existing`` (existing pods whose required anti-affinity terms match the incoming pod).
Filter is then three gathers over the label columns. AddPod/RemovePod update a cycle state's
arrays copy-on-write, so clones (preemption) and the index stay untouched. PreScore builds the
``topologyScore`` arrays the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.config.args import InterPodAffinityArgs
from kubesched.framework.cycle_state import read_state
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interface import SKIP_STATUS, Code, FilterResult, Status, as_status
from kubesched.framework.signers import LABELS_SIGNER_NAME
from kubesched.plugins.helper.gates import features_of
from kubesched.plugins.helper.resize import is_pod_resize_deferred, with_deferred_resize
from kubesched.plugins.interpodaffinity.hints import (
    is_schedulable_after_node_change,
    is_schedulable_after_pod_change,
    pod_change_hint,
)
from kubesched.plugins.interpodaffinity.index import (
    PREF_AFF,
    PREF_ANTI,
    REQ_AFF,
    REQ_ANTI,
    AffinityIndex,
    get_index,
    grow_domain,
    pod_terms,
)
from kubesched.plugins.interpodaffinity.terms import (
    AffinityTerm,
    PodTerms,
    Target,
    merge_namespaces,
    pod_matches_all,
    shared_pod_terms,
    target_matches,
)

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_info import PodInfo
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "InterPodAffinity",
    "PreFilterState",
    "PreScoreState",
    "is_schedulable_after_node_change",
    "is_schedulable_after_pod_change",
    "new",
    "normalize_min_max",
]

NAME = "InterPodAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

_REASONS = (ERR_REASON_AFFINITY_RULES_NOT_MATCH, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
            ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
_CODES = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE)
_EMPTY: Mapping[str, str] = {}


class _Namespaces:
    """Lazy, per-cycle view of the Namespace objects (only listed when a selector needs them)."""

    __slots__ = ("lister", "_items", "_labels")

    def __init__(self, lister: Any) -> None:
        self.lister = lister
        self._items: list | None = None
        self._labels: dict[str, Mapping[str, str]] | None = None

    def list(self) -> list:
        if self._items is None:
            self._items = list(self.lister.list("Namespace")) if self.lister is not None else []
        return self._items

    def labels(self, ns: str) -> Mapping[str, str]:
        """Upstream ``GetNamespaceLabelsSnapshot``: the empty set when the namespace is unknown."""
        if self._labels is None:
            self._labels = {n.metadata.name: n.metadata.labels for n in self.list()}
        return self._labels.get(ns, _EMPTY)


def existing_term_matches(term: AffinityTerm, ns: str, labels: Mapping[str, str], nss: _Namespaces) -> bool:
    """``term.Matches(incoming pod, incoming pod's namespace labels)``, listing namespaces only
    when the term's namespaceSelector needs labels."""
    if ns not in term.namespaces:
        sel = term.ns_selector
        if sel.is_nothing:
            return False
        if not sel.is_empty and not sel.matches(nss.labels(ns)):
            return False
    return term.selector.matches(labels)


HOSTNAME = "kubernetes.io/hostname"
ROW = "\x00row"
"""InterPodAffinityHostnameFastPath (α 1.37): the pseudo topology key of hostname-scoped terms
evaluated node-locally (filtering.go L47-90): its domain is indexed by node row, and a node
without the ``kubernetes.io/hostname`` label has none (``_row_vid``)."""


def _row_vid(table: NodeTable, row: int, labels: Mapping[str, str], tk: str) -> int:
    """The domain index of a node for ``tk``: its row for :data:`ROW` (if it has the hostname
    label), else the id of its label value (-1 when absent)."""
    if tk == ROW:
        return row if HOSTNAME in labels else -1
    return _value_ids(table, labels, tk)


def _vids(nodes: NodeTable, rows: np.ndarray, tk: str) -> np.ndarray | None:
    """:func:`_row_vid` for many rows (None when no node has the key)."""
    if tk == ROW:
        col = nodes.labels.get(HOSTNAME)
        return None if col is None else np.where(col[rows] >= 0, rows, -1)
    col = nodes.labels.get(tk)
    return None if col is None else col[rows]


def _value_ids(table: NodeTable, labels: Mapping[str, str], tk: str) -> int:
    v = labels.get(tk)
    if v is None:
        return -1
    vid = table.label_value_id(tk, v)
    return vid if vid >= 0 else -1


def _at(dom: np.ndarray, vid: int) -> int:
    return int(dom[vid]) if 0 <= vid < len(dom) - 1 else 0


class PreFilterState:
    """Upstream ``preFilterState`` as per-topology-key arrays (see the module docstring)."""

    __slots__ = ("pod_ns", "pod_labels", "aff_targets", "aff_keys", "anti_targets", "namespaces",
                 "aff", "anti", "existing", "self_match", "_owned", "fast_path", "host_aff_total")

    def __init__(self, pod: Pod, aff_targets: tuple[tuple[Target, str], ...],
                 anti_targets: tuple[tuple[Target, str], ...], namespaces: _Namespaces,
                 fast_path: bool = False) -> None:
        self.pod_ns = pod.metadata.namespace
        self.pod_labels = pod.metadata.labels
        self.aff_targets = aff_targets
        self.aff_keys = tuple(dict.fromkeys(tk for _, tk in aff_targets))
        self.anti_targets = anti_targets
        self.namespaces = namespaces
        self.aff: dict[str, np.ndarray] = {}
        self.anti: dict[str, np.ndarray] = {}
        self.existing: dict[str, np.ndarray] = {}
        self.self_match = pod_matches_all(tuple(t for t, _ in aff_targets), self.pod_ns, self.pod_labels)
        self._owned: set[tuple[str, str]] = set()
        self.fast_path = fast_path
        self.host_aff_total: int | None = None
        """Fast path with only hostname-scoped affinity terms: upstream
        ``matchingHostScopedAffinityPodsCount`` (pods matching all of them on any node)."""

    def clone(self) -> PreFilterState:
        c = object.__new__(PreFilterState)
        for s in ("pod_ns", "pod_labels", "aff_targets", "aff_keys", "anti_targets", "namespaces", "self_match",
                  "fast_path", "host_aff_total"):
            setattr(c, s, getattr(self, s))
        c.aff, c.anti, c.existing = dict(self.aff), dict(self.anti), dict(self.existing)
        c._owned = set()
        self._owned = set()  # the arrays are shared from now on: both sides copy before writing
        return c

    def accumulate(self, which: str, tk: str, dom: np.ndarray) -> None:
        """Add the per-domain array ``dom`` (read-only, may be shared) into ``which[tk]``."""
        d = getattr(self, which)
        cur = d.get(tk)
        if cur is None:
            # a copy: the index updates its arrays in place when pods come and go (e.g. a
            # preemption dry run removing victims), and the cycle's state must not move with it
            d[tk] = dom.copy()
            self._owned.add((which, tk))
            return
        if (which, tk) not in self._owned:
            cur = cur.copy()
            self._owned.add((which, tk))
        if len(cur) < len(dom):
            cur = grow_domain(cur, len(dom) - 1)
        cur[:len(dom) - 1] += dom[:-1]
        d[tk] = cur

    def _add(self, which: str, tk: str, vid: int, n_values: int, delta: int) -> None:
        d = getattr(self, which)
        cur = d.get(tk)
        if cur is None:
            cur = np.zeros(n_values + 1, np.int64)
            self._owned.add((which, tk))
        elif (which, tk) not in self._owned:
            cur = cur.copy()
            self._owned.add((which, tk))
        if len(cur) < n_values + 1:
            cur = grow_domain(cur, n_values)
        cur[vid] += delta
        d[tk] = cur

    def update_with_pod(self, pod_info: PodInfo, node_labels: Mapping[str, str], table: NodeTable,
                        delta: int, row: int = -1) -> None:
        """Upstream ``preFilterState.updateWithPod`` (filtering.go L158-200); with the fast path,
        hostname-scoped terms count the pod on its node's row (the node-local checks read the
        simulated node's pods) and ``matchingHostScopedAffinityPodsCount`` follows it."""
        terms = pod_terms(pod_info)
        p = pod_info.pod
        ns, labels = p.metadata.namespace, p.metadata.labels

        def bump(which: str, tk: str) -> None:
            if tk == ROW:
                if row >= 0:
                    self._add(which, tk, row, table.capacity, delta)
                return
            vid = _value_ids(table, node_labels, tk)
            if vid >= 0:
                self._add(which, tk, vid, len(table.label_values[tk]), delta)

        for t in terms.required_anti_affinity:
            if existing_term_matches(t, self.pod_ns, self.pod_labels, self.namespaces):
                bump("existing", ROW if self.fast_path and t.topology_key == HOSTNAME else t.topology_key)
        if pod_matches_all(tuple(t for t, _ in self.aff_targets), ns, labels):
            if self.host_aff_total is not None:
                self.host_aff_total += delta
            for tk in self.aff_keys:
                bump("aff", tk)
        for target, tk in self.anti_targets:
            if target_matches(target, ns, labels):
                bump("anti", tk)

    def affinity_empty(self) -> bool:
        """No existing pod matches the affinity terms (self-affinity may apply): upstream
        ``len(clusterWideAffinityCounts) == 0``, or with the fast path and hostname-only terms
        ``matchingHostScopedAffinityPodsCount <= 0`` (counted on every node, labelled or not)."""
        if self.host_aff_total is not None:
            return self.host_aff_total <= 0
        return not any(a.any() for a in self.aff.values())


class PreScoreState:
    """Upstream ``preScoreState.topologyScore``: per topology key, ``int64[#values + 1]``."""

    __slots__ = ("scores",)

    def __init__(self, scores: dict[str, np.ndarray]) -> None:
        self.scores = scores

    def clone(self) -> PreScoreState:
        return self


class InterPodAffinity:
    """The plugin. ``index`` is the shared incremental :class:`AffinityIndex` of the table."""

    name = NAME
    deferred_resize = False
    """InPlacePodVerticalScalingSchedulerPreemption (alpha, 1.37; set by the factory): a pod whose
    resize the kubelet deferred is skipped (interpodaffinity/filtering.go L505-508, L822-825)."""

    def sign_pod(self, pod: Pod) -> tuple[list[tuple[str, Any]] | None, Status | None]:
        """Batching signature (v1.37.2 interpodaffinity/plugin.go ``SignPod``): a pod with
        (anti-)affinity is refused; else its labels, unless ``ignorePreferredTermsOfExistingPods``."""
        aff = pod.spec.affinity
        if aff is not None and (aff.pod_affinity is not None or aff.pod_anti_affinity is not None):
            return None, Status(Code.UNSCHEDULABLE, ("pods with InterPodAffinity are not signable",))
        if self.ignore_preferred_terms_of_existing_pods:
            return [], None
        return [(LABELS_SIGNER_NAME, dict(pod.metadata.labels) or None)], None

    def __init__(self, args: InterPodAffinityArgs, handle: Handle) -> None:
        self.args = args
        w = args.hard_pod_affinity_weight
        self.hard_pod_affinity_weight = 1 if w is None else int(w)
        self.ignore_preferred_terms_of_existing_pods = bool(args.ignore_preferred_terms_of_existing_pods)
        self.handle = handle
        # the incoming pod's namespaceSelector is really replaced by the namespaces it selects since 1.37
        self.replace_ns_selector = features_of(handle).at_least(1, 37)
        # InterPodAffinityHostnameFastPath (α 1.37): hostname-scoped required terms are checked
        # against the candidate node's own pods (filtering.go L47-90); same decisions as the
        # topology-pair path unless two nodes share a hostname label value, or a pod matching
        # hostname-only affinity terms runs on a node without the hostname label
        self.fast_path = features_of(handle).enabled("InterPodAffinityHostnameFastPath")
        self.index: AffinityIndex = get_index(handle.nodes)

    # ───────────────────────────── helpers ─────────────────────────────

    @staticmethod
    def _terms(state: CycleState, pod: Pod) -> PodTerms:
        pi = getattr(state, "pod_info", None)
        if pi is not None and pi.pod is pod:
            return pod_terms(pi)
        return shared_pod_terms(pod)

    # ───────────────────────────── PreFilter ─────────────────────────────

    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[None, Status | None]:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None, SKIP_STATUS
        terms = self._terms(state, pod)
        if terms.errors:
            return None, Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"parsing pod: {'; '.join(terms.errors)}")
        idx = self.index
        idx.tick += 1
        nss = _Namespaces(self.handle.lister)
        rep = self.replace_ns_selector
        fast = self.fast_path
        # fast path (classifyTermsBasedOnScope, filtering.go L227-251): affinity terms are
        # node-local only when all are hostname-scoped; anti-affinity terms one by one
        host_only = fast and bool(terms.required_affinity) and all(
            t.topology_key == HOSTNAME for t in terms.required_affinity)
        aff_t = tuple((merge_namespaces(t, nss.list, rep), ROW if host_only else t.topology_key)
                      for t in terms.required_affinity)
        anti_t = tuple((merge_namespaces(t, nss.list, rep),
                        ROW if fast and t.topology_key == HOSTNAME else t.topology_key)
                       for t in terms.required_anti_affinity)
        s = PreFilterState(pod, aff_t, anti_t, nss, fast)
        ns, labels = s.pod_ns, s.pod_labels

        def domain(c: Any, tk: str) -> np.ndarray:
            return np.append(c.per_node, 0) if tk == ROW else idx.domain(c, tk)

        for term, c in idx.existing[REQ_ANTI].items():
            if existing_term_matches(term, ns, labels, nss):
                tk = ROW if fast and term.topology_key == HOSTNAME else term.topology_key
                dom = domain(c, tk)
                if dom.any():
                    s.accumulate("existing", tk, dom)
        if not s.existing and not aff_t and not anti_t:
            return None, SKIP_STATUS
        if aff_t:
            c = idx.target(tuple(t for t, _ in aff_t))
            for tk in s.aff_keys:
                s.accumulate("aff", tk, domain(c, tk))
            if host_only:
                s.host_aff_total = int(c.total)
        for target, tk in anti_t:
            s.accumulate("anti", tk, domain(idx.target((target,)), tk))
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> InterPodAffinity:
        return self

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None:
        try:
            s = read_state(state, PRE_FILTER_STATE_KEY, PreFilterState)
        except Exception as e:  # noqa: BLE001
            return as_status(e)
        s.update_with_pod(pod_info_to_add, node_info.node.metadata.labels, node_info.table, 1, node_info.row)
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None:
        try:
            s = read_state(state, PRE_FILTER_STATE_KEY, PreFilterState)
        except Exception as e:  # noqa: BLE001
            return as_status(e)
        s.update_with_pod(pod_info_to_remove, node_info.node.metadata.labels, node_info.table, -1,
                          node_info.row)
        return None

    # ───────────────────────────── Filter ─────────────────────────────

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> FilterResult | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        s = read_state(state, PRE_FILTER_STATE_KEY, PreFilterState)
        n = len(rows)
        failed = np.zeros(n, np.int64)
        if s.aff_keys:
            missing = np.zeros(n, bool)
            exist = np.ones(n, bool)
            for tk in s.aff_keys:
                vids = _vids(nodes, rows, tk)
                if vids is None:
                    missing[:] = True
                    continue
                missing |= vids < 0
                exist &= _gather(s.aff.get(tk), vids) > 0
            bad = missing if (s.self_match and s.affinity_empty()) else (missing | ~exist)
            failed[bad] = 1
        for bit, d in ((2, s.anti), (4, s.existing)):
            if not d:
                continue
            bad = np.zeros(n, bool)
            for tk, dom in d.items():
                vids = _vids(nodes, rows, tk)
                if vids is not None:
                    bad |= _gather(dom, vids) > 0
            failed[bad & (failed == 0)] = bit
        if not failed.any():
            return None
        return FilterResult(failed, _REASONS, _CODES)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        try:
            s = read_state(state, PRE_FILTER_STATE_KEY, PreFilterState)
        except Exception as e:  # noqa: BLE001
            return as_status(e)
        table = node_info.table
        node_labels = node_info.node.metadata.labels
        # satisfyPodAffinity
        pods_exist = True
        row = node_info.row
        for tk in s.aff_keys:
            if (HOSTNAME if tk == ROW else tk) not in node_labels:
                return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
            if _at(s.aff.get(tk, _ZERO), _row_vid(table, row, node_labels, tk)) <= 0:
                pods_exist = False
        if not pods_exist and not (s.affinity_empty() and s.self_match):
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        # satisfyPodAntiAffinity
        for tk, dom in s.anti.items():
            if _at(dom, _row_vid(table, row, node_labels, tk)) > 0:
                return Status.of(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        # satisfyExistingPodsAntiAffinity
        for tk, dom in s.existing.items():
            if _at(dom, _row_vid(table, row, node_labels, tk)) > 0:
                return Status.of(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return None

    # ───────────────────────────── Score ─────────────────────────────

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> Status | None:
        aff = pod.spec.affinity
        has_constraints = aff is not None and bool(
            (aff.pod_affinity is not None and aff.pod_affinity.preferred_during_scheduling_ignored_during_execution)
            or (aff.pod_anti_affinity is not None
                and aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution))
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return SKIP_STATUS
        terms = self._terms(state, pod)
        if terms.errors:
            return Status.of(Code.ERROR, f"failed to parse pod: {'; '.join(terms.errors)}")
        idx = self.index
        idx.tick += 1
        nss = _Namespaces(self.handle.lister)
        scores: dict[str, np.ndarray] = {}

        def add(tk: str, dom: np.ndarray, factor: int) -> None:
            if not dom.any():
                return
            cur = scores.get(tk)
            if cur is None:
                scores[tk] = dom * factor
            else:
                if len(cur) < len(dom):
                    cur = scores[tk] = grow_domain(cur, len(dom) - 1)
                cur[:len(dom) - 1] += dom[:-1] * factor

        for wts, sign in ((terms.preferred_affinity, 1), (terms.preferred_anti_affinity, -1)):
            for wt in wts:
                target = merge_namespaces(wt.term, nss.list, self.replace_ns_selector)
                tk = wt.term.topology_key
                add(tk, idx.domain(idx.target((target,)), tk), sign * wt.weight)
        ns, labels = pod.metadata.namespace, pod.metadata.labels
        kinds: tuple[tuple[int, int], ...] = ((PREF_AFF, 1), (PREF_ANTI, -1))
        if self.hard_pod_affinity_weight > 0:
            kinds = ((REQ_AFF, self.hard_pod_affinity_weight),) + kinds
        for kind, factor in kinds:
            for term, c in idx.existing[kind].items():
                if existing_term_matches(term, ns, labels, nss):
                    add(term.topology_key, idx.domain(c, term.topology_key), factor)
        if not scores:
            return SKIP_STATUS
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(scores))
        return None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> np.ndarray:
        s = read_state(state, PRE_SCORE_STATE_KEY, PreScoreState)
        total = np.zeros(len(rows), np.int64)
        for tk, arr in s.scores.items():
            col = nodes.labels.get(tk)
            if col is not None:
                total += _gather(arr, col[rows])
        return total

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        try:
            s = read_state(state, PRE_SCORE_STATE_KEY, PreScoreState)
        except Exception as e:  # noqa: BLE001
            return 0, as_status(e)
        node_labels = node_info.node.metadata.labels
        total = 0
        for tk, arr in s.scores.items():
            total += _at(arr, _value_ids(node_info.table, node_labels, tk))
        return total, None

    def normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> Status | None:
        try:
            s = read_state(state, PRE_SCORE_STATE_KEY, PreScoreState)
        except Exception as e:  # noqa: BLE001
            return as_status(e)
        if not s.scores or len(scores) == 0:
            return None
        normalize_min_max(scores)
        return None

    # ───────────────────────────── events ─────────────────────────────

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Pod Add|UpdatePodLabel|Delete and Node Add|UpdateNodeLabel. 1.37 (plugin.go L97-112):
        ``AssignedPod`` for the pod events plus ``TargetPod/UpdatePodLabel`` (always Queue).
        Before, ``Pod`` (the 1.34/1.35 hint skips unscheduled pods; 1.36's queues the target's
        own label update by UID)."""
        f = features_of(self.handle)
        hint = pod_change_hint(f.emulated_version)
        pod_acts = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
        node = ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                                    is_schedulable_after_node_change)
        if not f.at_least(1, 37):
            return [ClusterEventWithHint(ClusterEvent(EventResource.POD, pod_acts), hint), node]
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, pod_acts), hint),
            ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_LABEL),
                                 self.is_schedulable_after_target_pod_update_label),
            node,
        ]

    @staticmethod
    def is_schedulable_after_target_pod_update_label(pod: Pod, old: Any, new: Any) -> QueueingHint:
        """1.37 ``isSchedulableAfterTargetPodUpdateLabel``: always Queue (another pod's
        anti-affinity may have matched the old labels only)."""
        return QueueingHint.QUEUE


_ZERO = np.zeros(1, np.int64)


def _gather(dom: np.ndarray | None, vids: np.ndarray) -> np.ndarray:
    """``dom[vids]`` with 0 for vid -1 (the sentinel slot) and for ids beyond ``dom``."""
    if dom is None:
        return np.zeros(len(vids), np.int64)
    if len(vids) and int(vids.max()) >= len(dom) - 1:
        dom = grow_domain(dom, int(vids.max()) + 1)
    return dom[vids]


def normalize_min_max(scores: np.ndarray) -> None:
    """Upstream NormalizeScore: ``int64(100 * (float64(s-min) / float64(max-min)))``, all 0
    when max == min. In place."""
    mn = int(scores.min())
    diff = int(scores.max()) - mn
    if diff > 0:
        scores[:] = (100.0 * ((scores - mn).astype(np.float64) / float(diff))).astype(np.int64)
    else:
        scores[:] = 0


def new(args: InterPodAffinityArgs | None, handle: Handle) -> InterPodAffinity:
    """Factory registered as ``kubesched.plugins.interpodaffinity:new``."""
    return with_deferred_resize(InterPodAffinity(args if args is not None else InterPodAffinityArgs(), handle), handle)
