"""Parsed pod (anti-)affinity terms (upstream ``framework.AffinityTerm``, ``WeightedAffinityTerm``,
``getNamespacesFromPodAffinityTerm``, ``newAffinityTerm``; ``interpodaffinity/plugin.go``
``mergeAffinityTermNamespacesIfNotEmpty``).

A term of a pod is matched against *another* pod by namespace and labels:
``Matches(pod, nsLabels) = (pod.ns in term.namespaces or term.nsSelector.Matches(nsLabels)) and
term.selector.Matches(pod.labels)``. ``namespaces`` is the term's list, or the owning pod's own
namespace when both ``namespaces`` and ``namespaceSelector`` are unset; a nil selector (label or
namespace) selects nothing and an empty one (``{}``) everything.

``matchLabelKeys`` / ``mismatchLabelKeys``: in v1.34 the kube-apiserver merges them into
``labelSelector`` when the pod is created (KEP-3633) and the scheduler never reads them. Pods
that reach kubesched without passing through an API server (manifests, traces) have not been
merged, so :func:`parse_pod_terms` applies the apiserver's merge itself — *unless* the selector
already has an ``In`` (resp. ``NotIn``) expression on that key, which is what an apiserver-merged
pod looks like; the merge is therefore idempotent on pods read from a live cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kubesched.api.labels import Selector, selector_from_label_selector
from kubesched.api.objects import Affinity, LabelSelector, LabelSelectorRequirement, Pod, PodAffinityTerm
from kubesched.errors import SelectorError

__all__ = [
    "AffinityTerm",
    "PodTerms",
    "Target",
    "WeightedTerm",
    "apply_match_label_keys",
    "merge_namespaces",
    "parse_pod_terms",
    "pod_matches_all",
    "shared_pod_terms",
    "target_matches",
]

_EMPTY: Mapping[str, str] = {}


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """One parsed ``PodAffinityTerm`` of a pod (hashable: used as an index key)."""

    namespaces: frozenset[str]
    ns_selector: Selector
    selector: Selector
    topology_key: str

    def matches(self, ns: str, labels: Mapping[str, str], ns_labels: Mapping[str, str] | None) -> bool:
        """Upstream ``AffinityTerm.Matches``: ``ns``/``labels`` are the other pod's, ``ns_labels``
        the labels of its namespace (``None`` = unknown, i.e. the empty set)."""
        if ns in self.namespaces or self.ns_selector.matches(ns_labels or _EMPTY):
            return self.selector.matches(labels)
        return False


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    term: AffinityTerm
    weight: int


@dataclass(frozen=True, slots=True)
class PodTerms:
    """The four term lists of a pod. A list whose terms do not parse is empty (as upstream's
    ``PodInfo.Update``) and its error text is in ``errors``."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedTerm, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def has_any(self) -> bool:
        return bool(self.required_affinity or self.required_anti_affinity or self.preferred_affinity
                    or self.preferred_anti_affinity)


# An incoming pod's term once its namespaceSelector is resolved: (namespaces or None = all, selector).
Target = tuple[frozenset[str] | None, Selector]


def apply_match_label_keys(term: PodAffinityTerm, pod_labels: Mapping[str, str]) -> PodAffinityTerm:
    """The kube-apiserver's create-time merge of ``matchLabelKeys`` (``key In [value]``) and
    ``mismatchLabelKeys`` (``key NotIn [value]``) into ``labelSelector``; keys the pod lacks are
    skipped, a nil selector stays nil. Keys already constrained that way are left alone (the
    pod was merged by an API server)."""
    if (not term.match_label_keys and not term.mismatch_label_keys) or term.label_selector is None:
        return term
    exprs = list(term.label_selector.match_expressions)
    have = {(e.key, e.operator) for e in exprs}
    added = False
    for keys, op in ((term.match_label_keys, "In"), (term.mismatch_label_keys, "NotIn")):
        for key in keys:
            value = pod_labels.get(key)
            if value is None or (key, op) in have:
                continue
            exprs.append(LabelSelectorRequirement(key=key, operator=op, values=[value]))
            added = True
    if not added:
        return term
    sel = LabelSelector(match_labels=term.label_selector.match_labels, match_expressions=exprs)
    return PodAffinityTerm(label_selector=sel, namespaces=term.namespaces, topology_key=term.topology_key,
                           namespace_selector=term.namespace_selector)


def _term(pod: Pod, t: PodAffinityTerm) -> AffinityTerm:
    t = apply_match_label_keys(t, pod.metadata.labels)
    selector = selector_from_label_selector(t.label_selector)
    if not t.namespaces and t.namespace_selector is None:
        namespaces = frozenset((pod.metadata.namespace,))
    else:
        namespaces = frozenset(t.namespaces)
    ns_selector = selector_from_label_selector(t.namespace_selector)
    return AffinityTerm(namespaces, ns_selector, selector, t.topology_key)


def parse_pod_terms(pod: Pod) -> PodTerms:
    """Parse a pod's affinity terms (upstream ``GetAffinityTerms`` / ``GetWeightedAffinityTerms``)."""
    aff = pod.spec.affinity
    if aff is None or (aff.pod_affinity is None and aff.pod_anti_affinity is None):
        return _NO_TERMS
    errors: list[str] = []

    def plain(terms: list[PodAffinityTerm]) -> tuple[AffinityTerm, ...]:
        try:
            return tuple(_term(pod, t) for t in terms)
        except SelectorError as e:
            errors.append(str(e))
            return ()

    def weighted(terms) -> tuple[WeightedTerm, ...]:
        try:
            return tuple(WeightedTerm(_term(pod, w.pod_affinity_term), w.weight) for w in terms)
        except SelectorError as e:
            errors.append(str(e))
            return ()

    pa, paa = aff.pod_affinity, aff.pod_anti_affinity
    return PodTerms(
        plain(pa.required_during_scheduling_ignored_during_execution) if pa else (),
        plain(paa.required_during_scheduling_ignored_during_execution) if paa else (),
        weighted(pa.preferred_during_scheduling_ignored_during_execution) if pa else (),
        weighted(paa.preferred_during_scheduling_ignored_during_execution) if paa else (),
        tuple(errors),
    )


_NO_TERMS = PodTerms()

# shared_pod_terms' memo: id(affinity) -> (affinity, namespace, labels or None, terms); the entry
# keeps the affinity object alive, so its id is not reused while the entry stands
_SHARED: dict[int, tuple[Affinity, str, dict[str, str] | None, PodTerms]] = {}
_SHARED_MAX = 4096


def _uses_label_keys(aff: Affinity) -> bool:
    """Whether any pod (anti-)affinity term of ``aff`` has ``matchLabelKeys`` or
    ``mismatchLabelKeys`` (then the parsed terms depend on the pod's labels)."""
    for group in (aff.pod_affinity, aff.pod_anti_affinity):
        if group is None:
            continue
        for t in group.required_during_scheduling_ignored_during_execution:
            if t.match_label_keys or t.mismatch_label_keys:
                return True
        for w in group.preferred_during_scheduling_ignored_during_execution:
            if w.pod_affinity_term.match_label_keys or w.pod_affinity_term.mismatch_label_keys:
                return True
    return False


def shared_pod_terms(pod: Pod) -> PodTerms:
    """:func:`parse_pod_terms`, shared by the pod objects that carry the same ``spec.affinity``
    object in the same namespace (and the same labels when a term has ``matchLabelKeys`` /
    ``mismatchLabelKeys``): replicas of one template decoded once, and a pod's successive
    objects on binding (``nodeName`` set, then PodTopologyLabels' zone/region labels), which
    keep the spec's affinity object. The result is the same as parsing (it is a function of
    the affinity, the namespace and those labels; objects are never mutated in place)."""
    aff = pod.spec.affinity
    if aff is None or (aff.pod_affinity is None and aff.pod_anti_affinity is None):
        return _NO_TERMS
    meta = pod.metadata
    hit = _SHARED.get(id(aff))
    if hit is not None and hit[0] is aff and hit[1] == meta.namespace and (hit[2] is None or hit[2] == meta.labels):
        return hit[3]
    terms = parse_pod_terms(pod)
    if len(_SHARED) >= _SHARED_MAX:
        _SHARED.clear()
    _SHARED[id(aff)] = (aff, meta.namespace, dict(meta.labels) if _uses_label_keys(aff) else None, terms)
    return terms


def merge_namespaces(term: AffinityTerm, list_namespaces: Callable[[], list],
                     replace_selector: bool = True) -> Target:
    """An incoming pod's term with its namespaceSelector resolved (upstream
    ``mergeAffinityTermNamespacesIfNotEmpty``): an empty selector (``{}``) keeps matching every
    namespace (``None``); otherwise the names of the Namespace objects it selects now are added to
    ``namespaces`` and the selector becomes Nothing.

    ``replace_selector=False`` is v1.34–1.36: there the function took the term by value
    (plugin.go L144 in v1.34.12/v1.35.4/v1.36.3), so the names were added (a shared set) but the
    selector stayed, and the incoming pod's terms are matched with *nil* namespace labels
    (filtering.go L192-196, scoring.go L98/L105). A selector that matches the empty label set
    (``NotIn``, ``DoesNotExist``) therefore matched pods of every namespace. v1.37.2 takes a
    pointer (plugin.go L138) and the selector is really replaced."""
    if term.ns_selector.is_empty:
        return (None, term.selector)
    if term.ns_selector.is_nothing:
        return (term.namespaces, term.selector)
    if not replace_selector and term.ns_selector.matches(_EMPTY):
        return (None, term.selector)
    names = {n.metadata.name for n in list_namespaces() if term.ns_selector.matches(n.metadata.labels)}
    return (term.namespaces | names, term.selector)


def target_matches(target: Target, ns: str, labels: Mapping[str, str]) -> bool:
    namespaces, selector = target
    return (namespaces is None or ns in namespaces) and selector.matches(labels)


def pod_matches_all(targets: tuple[Target, ...], ns: str, labels: Mapping[str, str]) -> bool:
    """Upstream ``podMatchesAllAffinityTerms``: False for no terms."""
    if not targets:
        return False
    for t in targets:
        if not target_matches(t, ns, labels):
            return False
    return True
