"""Constraints, default selectors and node-inclusion masks of PodTopologySpread.

Ports ``pkg/scheduler/framework/plugins/podtopologyspread/common.go`` and
``pkg/scheduler/framework/plugins/helper/spread.go`` (v1.34):

* :func:`filter_constraints` — the internal constraint (parsed selector, ``minDomains``
  defaulting to 1, ``nodeAffinityPolicy`` defaulting to Honor, ``nodeTaintsPolicy`` to
  Ignore) of each constraint with the wanted ``whenUnsatisfiable``. ``matchLabelKeys`` are
  merged into the selector by the scheduler too (v1.34 keeps this even though the apiserver
  now merges them at pod creation, gate ``MatchLabelKeysInPodTopologySpreadSelectorMerge``;
  merging twice is harmless);
* :func:`default_selector` — upstream ``helper.DefaultSelector``: the selectors of the
  Services, ReplicationController, ReplicaSet or StatefulSet selecting the pod;
* :func:`inclusion_masks` — which nodes count for a constraint under its
  ``nodeAffinityPolicy`` / ``nodeTaintsPolicy``, vectorised over the NodeTable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.labels import EQUALS, Selector, selector_from_label_selector, selector_from_set
from kubesched.api.nodeselector import RequiredNodeAffinity
from kubesched.api.taints import TAINT_EFFECT_NO_EXECUTE, TAINT_EFFECT_NO_SCHEDULE
from kubesched.errors import SelectorError
from kubesched.plugins.helper.nodeselector import required_affinity_mask
from kubesched.plugins.tainttoleration import untolerated_mask

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.handle import ClusterLister
    from kubesched.framework.node_table import NodeTable

__all__ = [
    "DO_NOT_SCHEDULE",
    "HONOR",
    "HOSTNAME",
    "IGNORE",
    "SCHEDULE_ANYWAY",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "ZONE",
    "Constraint",
    "PodTerms",
    "default_selector",
    "filter_constraints",
    "inclusion_masks",
    "node_labels_match",
    "pod_labels_match",
]

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
_DO_NOT_SCHEDULE_EFFECTS = (TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_NO_EXECUTE)


@dataclass(frozen=True, slots=True)
class _RawConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: Any = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()


SYSTEM_DEFAULT_CONSTRAINTS: tuple[_RawConstraint, ...] = (
    _RawConstraint(3, HOSTNAME, SCHEDULE_ANYWAY),
    _RawConstraint(5, ZONE, SCHEDULE_ANYWAY),
)
"""Upstream ``systemDefaultConstraints`` (used with ``defaultingType: System``)."""


@dataclass(frozen=True, slots=True)
class Constraint:
    """Upstream's internal ``topologySpreadConstraint``: the selector is parsed (and merged
    with ``matchLabelKeys``), ``min_domains`` defaults to 1 and the policies to Honor/Ignore."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


def _merge_label_set(match_labels: Mapping[str, str], s: Selector) -> Selector:
    """Upstream ``mergeLabelSetWithSelector``: the set's ``=`` requirements plus ``s``'s own
    (a Nothing selector has no requirements, so the result is just the set)."""
    reqs = [(k, EQUALS, frozenset((v,))) for k, v in match_labels.items()]
    if not s.is_nothing:
        reqs.extend(s.requirements)
    return Selector(reqs)


def _label_selector(raw: Any) -> Selector:
    if raw is None or hasattr(raw, "match_labels"):
        return selector_from_label_selector(raw)
    # plugin-args constraints carry a raw dict (validation forbids it for defaults anyway)
    from kubesched.api.objects import LabelSelector, decode

    return selector_from_label_selector(decode(LabelSelector, raw))


def filter_constraints(constraints: Sequence[Any], pod_labels: Mapping[str, str],
                       action: str) -> list[Constraint]:
    """Upstream ``filterTopologySpreadConstraints``: the constraints whose
    ``whenUnsatisfiable`` is ``action``, parsed. Raises :class:`SelectorError`."""
    out: list[Constraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = _label_selector(c.label_selector)
        if c.match_label_keys:
            ml = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
            if ml:
                selector = _merge_label_set(ml, selector)
        out.append(Constraint(
            max_skew=c.max_skew,
            topology_key=c.topology_key,
            selector=selector,
            min_domains=1 if c.min_domains is None else c.min_domains,
            node_affinity_policy=c.node_affinity_policy or HONOR,
            node_taints_policy=c.node_taints_policy or IGNORE,
        ))
    return out


_RC = ("", "v1", "ReplicationController")
_RS = ("apps", "v1", "ReplicaSet")
_SS = ("apps", "v1", "StatefulSet")


def _parse_group_version(api_version: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``: "" → ("", ""), "v1" → ("", "v1"), "apps/v1" → ("apps", "v1"),
    more than one slash → None (error)."""
    if not api_version:
        return ("", "")
    if api_version == "v1":
        return ("", "v1")
    parts = api_version.split("/")
    if len(parts) == 1:
        return ("", parts[0])
    if len(parts) == 2:
        return (parts[0], parts[1])
    return None


def default_selector(pod: Pod, lister: ClusterLister) -> Selector:
    """Upstream ``helper.DefaultSelector``: the union of the selectors of the pod's namespace's
    Services selecting it, plus its controller's selector when the controller is a
    ReplicationController (v1), ReplicaSet or StatefulSet (apps/v1)."""
    ns = pod.metadata.namespace
    pod_labels = pod.metadata.labels
    label_set: dict[str, str] = {}
    for svc in lister.list("Service", ns) or ():
        sel = svc.spec.selector
        if not sel:
            continue  # nil matches nothing; {} matches everything but adds no label
        if sel.items() <= pod_labels.items():  # every selector label on the pod
            label_set.update(sel)
    selector = selector_from_set(label_set)
    owner = next((o for o in pod.metadata.owner_references if o.controller), None)
    if owner is None:
        return selector
    gv = _parse_group_version(owner.api_version)
    if gv is None:
        return selector
    gvk = (gv[0], gv[1], owner.kind)
    if gvk == _RC:
        rc = lister.get("ReplicationController", ns, owner.name)
        if rc is not None:
            label_set.update(rc.spec.selector or {})
            selector = selector_from_set(label_set)
    elif gvk in (_RS, _SS):
        obj = lister.get(owner.kind, ns, owner.name)
        if obj is not None:
            try:
                other = selector_from_label_selector(obj.spec.selector)
            except SelectorError:
                return selector
            if not other.is_nothing:
                selector = Selector(selector.requirements + other.requirements)
    return selector


def node_labels_match(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    """Upstream ``nodeLabelsMatchSpreadConstraints``: the node has every topology key."""
    return all(c.topology_key in labels for c in constraints)


def pod_labels_match(constraints: Sequence[Constraint], labels: Mapping[str, str]) -> bool:
    """Upstream ``podLabelsMatchSpreadConstraints``: any constraint's selector matches."""
    return any(c.selector.matches(labels) for c in constraints)


class PodTerms:
    """What the inclusion policies need from the incoming pod, parsed once per pod:
    its required node affinity (``None`` when it has neither nodeSelector nor required
    affinity, i.e. every node matches) and its tolerations; ``comparison_operators``: the gate
    TaintTolerationComparisonOperators (Lt/Gt tolerations honoured by ``nodeTaintsPolicy: Honor``,
    v1.37.2 podtopologyspread/common.go ``matchNodeInclusionPolicies``)."""

    __slots__ = ("affinity", "comparison_operators", "tolerations")

    def __init__(self, pod: Pod, comparison_operators: bool = False) -> None:
        req = RequiredNodeAffinity(pod)
        self.affinity = req if (req.label_selector is not None or req.node_selector is not None) else None
        self.tolerations = tuple(pod.spec.tolerations)
        self.comparison_operators = comparison_operators


def _affinity_mask(table: NodeTable, rows: np.ndarray, required: RequiredNodeAffinity) -> np.ndarray:
    return required_affinity_mask(table, rows, required)


def _untolerated_mask(table: NodeTable, rows: np.ndarray, tolerations: Sequence[Any],
                      comparison_operators: bool = False) -> np.ndarray:
    """``bool[M]``: the node has a NoSchedule/NoExecute taint the pod doesn't tolerate
    (upstream ``helper.DoNotScheduleTaintsFilterFunc``)."""
    return np.asarray(untolerated_mask(table, rows, tolerations, _DO_NOT_SCHEDULE_EFFECTS, comparison_operators),
                      bool)


def inclusion_masks(table: NodeTable, rows: np.ndarray, constraints: Sequence[Constraint],
                    terms: PodTerms) -> list[np.ndarray | None]:
    """Per constraint, ``bool[M]`` over ``rows`` of the nodes passing its inclusion policies
    (upstream ``matchNodeInclusionPolicies``), or ``None`` when every node passes."""
    affinity = terms.affinity
    need_aff = affinity is not None and any(c.node_affinity_policy == HONOR for c in constraints)
    need_taint = any(c.node_taints_policy == HONOR for c in constraints)
    aff = _affinity_mask(table, rows, affinity) if affinity is not None and need_aff else None
    tol = ~_untolerated_mask(table, rows, terms.tolerations, terms.comparison_operators) if need_taint else None
    out: list[np.ndarray | None] = []
    for c in constraints:
        a = aff if c.node_affinity_policy == HONOR else None
        t = tol if c.node_taints_policy == HONOR else None
        if a is None:
            out.append(t)
        elif t is None:
            out.append(a)
        else:
            out.append(a & t)
    return out
